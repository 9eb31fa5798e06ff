"""The model process: llama.cpp runs here, not in the server (``model/process.py`` is the other side).

Started as ``python -m iodiag.narration.model.worker CMD_FD EVENT_FD PARENT_PID`` (``core/childproc.py``). One
JSON command per line, answered in order, each ending in exactly one ``done`` or ``error`` event:

* ``{"op": "load", "settings": {...}}``: load the GGUF the ``llm_*`` settings name; done: ``{"name": ...}``.
* ``{"op": "stream", "turns": [[role, text], ...], "max_tokens", "seed", "grammar", "temperature"}``:
  ``{"event": "token", "text": ...}`` per piece, then done.
* ``{"op": "tokens", "text": ...}``: done: ``{"count": n}`` (the model's own tokenizer).

SIGUSR1 stops the generation in progress at its next token (the asker stopped reading: its deadline passed,
or it had enough); the stream still ends with its done event, so the order of answers is kept.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

from iodiag.core.childproc import Send, serve

_NO_DEADLINE_S = 3600.0
_stop = False
_model: Any = None  # the loaded ChatModel (iodiag.narration.model.llm); Any so this module imports nothing heavy


def _on_stop(signum: int, frame: object) -> None:
    global _stop
    _stop = True


def _warm() -> None:
    # OpenMP's threads spin while they wait (see llm.load_llamacpp); read when llama.cpp loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import iodiag.narration.model.llm  # noqa: F401  (and langchain with it, when the model loads)


def _handle(line: str, send: Send) -> Any:
    global _model, _stop
    from iodiag.core.settings import Settings
    from iodiag.narration.model.llm import LLMError, load_llamacpp

    cmd = json.loads(line)
    op = cmd.get("op")
    if op == "load":
        settings = Settings(**cmd["settings"])
        _model = load_llamacpp(settings)
        return {"name": _model.name}
    if _model is None:
        raise LLMError("no model is loaded")
    if op == "tokens":
        return {"count": _model.count_tokens(str(cmd["text"]))}
    if op == "stream":
        _stop = False
        turns = [(str(role), str(text)) for role, text in cmd["turns"]]
        deadline = time.monotonic() + _NO_DEADLINE_S  # the asker keeps the deadline and stops this with SIGUSR1
        pieces = _model.stream(
            turns,
            deadline,
            max_tokens=int(cmd["max_tokens"]),
            seed=cmd.get("seed"),
            grammar=cmd.get("grammar"),
            temperature=cmd.get("temperature"),
        )
        stopped = False
        for piece in pieces:
            if _stop:
                stopped = True
                break
            send({"event": "token", "text": piece})
        pieces.close()
        return {"stopped": stopped}
    raise LLMError(f"unknown command {op!r}")


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGUSR1, _on_stop)  # before anything slow: the asker may stop a stream at any time
    from iodiag.narration.model.llm import LLMError

    serve(argv, _handle, warm=_warm, expected=(LLMError,))


if __name__ == "__main__":
    main(sys.argv)
