"""A local model in a process of its own: the caller's side (the model's side is ``model/worker.py``).

Loading llama.cpp and a GGUF into the API server made it grow by the model's size (188 -> 731 MiB for the
135M model, once 1.4 GiB) and put a C library that can crash inside the process serving everyone. Here the
model lives in one long-lived child, started on first use, that streams tokens back over a pipe
(``core/childproc.py``). Generations take turns (one model, one lock); a caller that stops reading, or whose
deadline passes, stops the child's generation with SIGUSR1. A child that dies mid-answer raises
:class:`ModelCrashed` for that answer, and the next answer starts a fresh child.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future
from typing import Any

from iodiag.core.childproc import ChildGone, PipeChild
from iodiag.core.settings import Settings
from iodiag.narration.model.errors import LLMError, LLMTimeout, ModelCrashed, Role

log = logging.getLogger(__name__)

WORKER = "iodiag.narration.model.worker"
START_TIMEOUT_S = 120.0  # interpreter, llama.cpp and the GGUF; the bundled model takes 1-3 s
TOKENS_TIMEOUT_S = 30.0
_POLL_S = 0.5


class _Spawner:
    """Starts model processes from one thread that lives as long as this process.

    A child's parent-death signal (PR_SET_PDEATHSIG, set by ``childproc.serve``) fires when the *thread* that
    started it ends, and the threads that ask for a model (a server's thread pools) come and go.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], PipeChild], Future[PipeChild]]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def spawn(self, make: Callable[[], PipeChild]) -> PipeChild:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="iodiag-model-spawner", daemon=True)
                self._thread.start()
        done: Future[PipeChild] = Future()
        self._jobs.put((make, done))
        return done.result()

    def _run(self) -> None:
        while True:
            make, done = self._jobs.get()
            try:
                done.set_result(make())
            except BaseException as exc:
                done.set_exception(exc)


_SPAWNER = _Spawner()


class ModelProcess:
    """The model these settings name, in a child process; ``stream`` and ``count_tokens`` for ``ChatModel``."""

    def __init__(self, settings: Settings) -> None:
        self._fields = {k: v for k, v in settings.model_dump(mode="json").items() if k.startswith("llm_")}
        self._child: PipeChild | None = None
        self._loaded = False
        self._lock = threading.Lock()
        self._owed = 0  # commands sent whose done or error event has not been read yet
        self.name = ""
        self.starts = 0
        atexit.register(self.close)

    # --- lifecycle ------------------------------------------------------------------------------------

    def load(self) -> str:
        """Start the process and load the model now (within ``START_TIMEOUT_S``); :class:`LLMError` when either
        fails."""
        with self._lock:
            self._ensure(time.monotonic() + START_TIMEOUT_S)
        return self.name

    @property
    def pid(self) -> int | None:
        child = self._child
        return child.proc.pid if child is not None and child.alive() else None

    def rss(self) -> int:
        """Resident bytes of the model process (0 when none runs)."""
        child = self._child
        return child.rss() if child is not None else 0

    def close(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            child.kill()

    def _spawn(self) -> PipeChild:
        """A new model process, told to load the model; it loads while the caller does other things."""
        child = _SPAWNER.spawn(lambda: PipeChild(WORKER, "model process"))
        try:
            child.send_json({"op": "load", "settings": self._fields})
        except ChildGone:
            child.kill()
            raise LLMError(f"the model process {child.how_it_died(wait_s=1.0)} while starting") from None
        self._child, self._loaded, self._owed = child, False, 1
        return child

    def _ensure(self, deadline: float) -> PipeChild:
        """The running model process, started (or started again) when there is none.

        A process still loading when ``deadline`` passes raises :class:`LLMTimeout` and goes on loading: the next
        caller finds it further along instead of killing it and starting over.
        """
        child = self._child
        if child is None or not child.alive():
            if child is not None:
                child.kill()
            child = self._spawn()
        if self._loaded:
            return child
        try:
            result = self._result(child, deadline)
        except ChildGone:
            how = child.how_it_died(wait_s=1.0)
            child.kill()
            self._child = None
            raise LLMError(f"the model process {how} while starting") from None
        except LLMTimeout:
            raise
        except LLMError:
            child.kill()
            self._child = None
            raise
        self._loaded = True
        self.name = str(result.get("name", ""))
        self.starts += 1
        log.info("model process %d ready (%s)", child.proc.pid, self.name)
        return child

    def _events(self, child: PipeChild, deadline: float) -> Generator[dict[str, Any], None, dict[str, Any]]:
        """The last command's events until its end; returns its result, raises its error. The ends of earlier,
        abandoned commands are read and dropped on the way."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LLMTimeout("the model ran out of time")
            msg = child.recv(min(left, _POLL_S))
            if msg is None:
                continue
            event = msg.get("event")
            if event not in ("done", "error"):
                yield msg
                continue
            self._owed -= 1
            if self._owed > 0:
                continue
            if event == "error":
                raise LLMError(str(msg.get("message", "the model failed")))
            result: dict[str, Any] = msg.get("result") or {}
            return result

    def _result(self, child: PipeChild, deadline: float) -> dict[str, Any]:
        """The result of the last command sent, its other events dropped."""
        events = self._events(child, deadline)
        while True:
            try:
                next(events)
            except StopIteration as end:
                result: dict[str, Any] = end.value
                return result

    def _settle(self, child: PipeChild, deadline: float) -> None:
        """Read what earlier, abandoned commands still send, so this command's events are its own."""
        while self._owed > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LLMTimeout("the model is still finishing an earlier answer")
            msg = child.recv(min(left, _POLL_S))
            if msg is not None and msg.get("event") in ("done", "error"):
                self._owed -= 1

    def _crashed(self, child: PipeChild) -> ModelCrashed:
        how = child.how_it_died(wait_s=2.0)
        child.kill()
        self._child, self._owed = None, 0
        log.warning("model process %d %s; starting a new one", child.proc.pid, how)
        try:  # now, so that it is loaded by the time the asker asks again
            self._spawn()
        except LLMError as exc:
            log.warning("the model process did not start again: %s (the next answer tries again)", exc)
        return ModelCrashed(f"the model process {how} while answering; it is being started again: ask again")

    # --- work -----------------------------------------------------------------------------------------

    def stream(
        self,
        turns: Sequence[tuple[Role, str]],
        deadline: float,
        max_tokens: int,
        seed: int | None,
        grammar: str | None,
        temperature: float | None,
    ) -> Iterator[str]:
        if not self._lock.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
            raise LLMTimeout("the model is busy with another answer")
        child: PipeChild | None = None
        finished = False
        try:
            child = self._ensure(deadline)
            self._settle(child, deadline)
            child.send_json(
                {
                    "op": "stream",
                    "turns": [list(t) for t in turns],
                    "max_tokens": max_tokens,
                    "seed": seed,
                    "grammar": grammar,
                    "temperature": temperature,
                }
            )
            self._owed += 1
            try:
                for msg in self._events(child, deadline):
                    if msg.get("event") == "token":
                        yield str(msg.get("text", ""))
            except LLMTimeout:
                raise  # still generating: the finally below stops it
            except LLMError:
                finished = True  # the model ended this answer itself: nothing to stop
                raise
            finished = True
        except ChildGone:
            assert child is not None
            finished = True
            raise self._crashed(child) from None
        finally:
            if not finished and child is not None and child.alive():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(child.proc.pid, signal.SIGUSR1)  # stop generating for a reader who has gone
            self._lock.release()

    def count_tokens(self, text: str) -> int:
        deadline = time.monotonic() + TOKENS_TIMEOUT_S
        if not self._lock.acquire(timeout=TOKENS_TIMEOUT_S):
            raise LLMTimeout("the model is busy with another answer")
        try:
            child = self._ensure(deadline)
        except BaseException:
            self._lock.release()
            raise
        try:
            self._settle(child, deadline)
            child.send_json({"op": "tokens", "text": text})
            self._owed += 1
            return int(self._result(child, deadline)["count"])
        except ChildGone:
            raise LLMError(str(self._crashed(child))) from None
        finally:
            self._lock.release()
