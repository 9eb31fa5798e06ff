"""The local model runs in a process of its own (the real bundled model, no stand-ins): tokens stream back from
it, a reader who stops early does not leave stale tokens for the next one, and a killed process costs one answer
a clear error, never a hang, and is started again for the next."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from iodiag.narration.model.llm import ModelCrashed, get_model
from iodiag.narration.model.process import ModelProcess
from tests.narration.test_narration_support import model_settings

TURNS = [("system", "You are a helpful assistant."), ("user", "Count from one to fifty in words.")]
LONG = 'root ::= ([a-z]+ " "){300,}\n'  # a generation that cannot end early: 400 tokens, seconds on two cores


@pytest.fixture(scope="module")
def process() -> ModelProcess:
    model = get_model(model_settings())
    assert model is not None and isinstance(model.remote, ModelProcess)
    return model.remote


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def _maps(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


def test_tokens_stream_from_the_model_process(process: ModelProcess) -> None:
    pid = process.pid
    assert pid is not None and pid != os.getpid()
    assert "iodiag.narration.model.worker" in _cmdline(pid)
    assert "libllama" in _maps(pid)  # llama.cpp is loaded there
    pieces = list(process.stream(TURNS, time.monotonic() + 120, 24, 0, None, 0.0))
    assert len(pieces) > 1 and "".join(pieces).strip()
    assert process.rss() > 50 << 20
    assert process.count_tokens("small writes to a shared file") > 3


def test_a_reader_who_stops_early_leaves_nothing_for_the_next(process: ModelProcess) -> None:
    first = process.stream(TURNS, time.monotonic() + 120, 400, 0, LONG, 0.0)
    next(first)
    first.close()  # stops the generation in the child
    grammar = 'root ::= "yes" | "no"\n'
    said = "".join(process.stream(TURNS, time.monotonic() + 120, 8, 0, grammar, 0.0))
    assert said in ("yes", "no")  # this stream's own tokens, none of the abandoned one's


def test_a_deadline_stops_the_stream(process: ModelProcess) -> None:
    from iodiag.narration.model.llm import LLMTimeout

    t0 = time.monotonic()
    with pytest.raises(LLMTimeout):
        for _ in process.stream(TURNS, time.monotonic() + 0.3, 400, 0, LONG, 0.0):
            pass
    assert time.monotonic() - t0 < 2.0
    assert "".join(process.stream(TURNS, time.monotonic() + 120, 4, 0, None, 0.0))  # and the next one works


def test_a_killed_model_process_fails_one_answer_and_is_started_again(process: ModelProcess) -> None:
    old = process.pid
    assert old is not None
    stream = process.stream(TURNS, time.monotonic() + 120, 400, 0, LONG, 0.0)
    next(stream)
    os.kill(old, signal.SIGKILL)
    t0 = time.monotonic()
    with pytest.raises(ModelCrashed, match="killed by signal SIGKILL"):
        for _ in stream:
            pass
    assert time.monotonic() - t0 < 10  # a clear error, not a hang
    assert "".join(process.stream(TURNS, time.monotonic() + 120, 8, 0, None, 0.0))
    assert process.pid not in (None, old)


SERVICE_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, os, signal, sys
    from iodiag.analysis import analyze
    from iodiag.core.settings import Settings
    from iodiag.ingest import load_profile
    from iodiag.narration.models import AnswerChunk
    from iodiag.services.chat import ChatService

    settings = Settings(data_dir=sys.argv[2], llm_provider="llamacpp", llm_threads=2, chat_timeout_s=120,
                        _env_file=None)
    report = analyze(load_profile(sys.argv[1]))
    svc = ChatService(settings)

    async def ask(kill_after_first: bool) -> dict:
        out = {"deltas": 0, "final": None, "error": None}
        try:
            async for chunk in svc.stream(report, "Why is my job slow?", [], "u"):
                if isinstance(chunk, AnswerChunk) and chunk.delta.strip():
                    out["deltas"] += 1
                    if kill_after_first and out["deltas"] == 1:
                        model = svc.narrator().model()
                        out["killed"] = model.remote.pid
                        os.kill(model.remote.pid, signal.SIGKILL)
                if isinstance(chunk, AnswerChunk) and chunk.final:
                    out["final"] = chunk.answer.provenance
        except Exception as exc:
            out["error"] = f"{type(exc).__name__}: {exc}"
        return out

    first = asyncio.run(ask(False))
    model = svc.narrator().model()
    heavy = ("llama_cpp", "langchain_core", "langchain_community")
    result = {
        "first": first,
        "model_pid": model.remote.pid,
        "in_this_process": sorted(m for m in heavy if m in sys.modules),
        "libllama_mapped": "libllama" in open("/proc/self/maps").read(),
        "crashed": asyncio.run(ask(True)),
        "after": asyncio.run(ask(False)),
        "model_pid_after": model.remote.pid,
    }
    svc.shutdown()
    print(json.dumps(result))
    """
)


def test_the_chat_service_never_loads_the_model_into_its_own_process(tmp_path: Path) -> None:
    """The service's chat path in a fresh process (no test has imported anything into it): the answer streams
    from the model process, llama.cpp and langchain are never imported here, and killing the model process
    mid-answer ends that answer with an error, after which the next question is answered."""
    import json

    from tests.narration.test_narration_support import DRISHTI

    env = {k: v for k, v in os.environ.items() if not k.startswith("IODIAG_")}
    done = subprocess.run(
        [sys.executable, "-c", SERVICE_SCRIPT, str(DRISHTI), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["first"]["final"] in ("model", "template") and result["first"]["deltas"] > 1
    assert result["in_this_process"] == [] and result["libllama_mapped"] is False
    assert result["model_pid"] and result["model_pid"] != os.getpid()
    crashed = result["crashed"]
    assert crashed["final"] is None and crashed["killed"] == result["model_pid"]
    assert crashed["error"].startswith("ModelCrashed: the model process was killed by signal SIGKILL")
    assert result["after"]["final"] in ("model", "template") and result["after"]["error"] is None
    assert result["model_pid_after"] not in (None, result["model_pid"])


def test_a_gguf_the_site_names_drafts_its_answers_in_its_own_process() -> None:
    """IODIAG_LLM_MODEL_PATH (a larger instruct model at a site) drafts whole answers, through the sentence gate,
    as an endpoint does; it also runs in a model process. The bundled file stands in for it here."""
    from iodiag.narration.model.llm import bundled_model_path
    from iodiag.narration.service import Narrator
    from tests.narration.test_narration_support import DRISHTI, knowledge, report

    settings = model_settings(llm_model_path=str(bundled_model_path()))
    model = get_model(settings)
    assert model is not None and not model.rephrases and isinstance(model.remote, ModelProcess)
    assert model.remote.pid not in (None, os.getpid())
    chunks = list(Narrator(settings, knowledge=knowledge()).answer(report(DRISHTI), "Why is my job slow?"))
    answer = chunks[-1].answer
    assert answer is not None and answer.verifier.passed and answer.verifier.attempts >= 1
    assert "reworded" not in answer.note  # the draft route, not the rewording one
    assert "".join(c.delta for c in chunks[:-1]).strip() == answer.text.strip()
