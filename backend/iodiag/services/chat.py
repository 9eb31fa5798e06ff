"""Chat answers off the event loop: the narrator runs in a bounded thread pool, with a time limit.

The narrator (``iodiag.narration.service.Narrator``) is built lazily, once, in a thread. A local model
(``IODIAG_LLM_PROVIDER=llamacpp``) is not loaded into this process: it runs in a model process of its own,
started on the first question (``narration/model/process.py``), so the server stays the size of a web server.
Questions wait for an answer slot (at most ``chat_per_user`` at once per user, ``chat_concurrency`` in all)
and are told how many are ahead; the wait does not count against ``chat_timeout_s``. A model process that
dies mid-answer ends that answer with ``ModelCrashed`` (the chat route sends it as an ``error`` event) and is
started again for the next question.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from iodiag.analysis.models import Report
from iodiag.core.settings import Settings
from iodiag.narration.models import Answer, AnswerChunk, ChatTurn

_NARRATION_DEPENDENCIES = frozenset({"langchain_core", "langchain_community", "llama_cpp", "chromadb"})


class NarratorLike(Protocol):
    def answer(self, report: Report, question: str, history: list[ChatTurn]) -> Iterator[AnswerChunk]: ...

    def draft_reply(self, report: Report) -> Answer: ...


class ChatUnavailable(Exception):
    """This server cannot answer questions (no narrator); one line."""


class ChatTimeout(Exception):
    pass


@dataclass(frozen=True)
class Waiting:
    """The question waits for an answer slot: ``ahead`` questions (``own`` of them the same user's) go first.
    Waiting does not count against the answer's time limit."""

    ahead: int
    own: int


class ChatService:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._executor = ThreadPoolExecutor(max_workers=settings.chat_concurrency, thread_name_prefix="iodiag-chat")
        self._narrator: NarratorLike | None = None
        self._lock = threading.Lock()
        # Admission in the event loop: one semaphore for the service's answer slots, one per user, so one user's
        # burst of questions queues behind itself instead of taking every slot from everyone else.
        self._slots: asyncio.Semaphore | None = None
        self._users: dict[str, asyncio.Semaphore] = {}
        self._waiting: dict[str, int] = {}

    def narrator(self) -> NarratorLike:
        """The narrator, built on first use; ``ChatUnavailable`` when this install has none."""
        with self._lock:
            if self._narrator is None:
                try:
                    from iodiag.narration.service import Narrator
                except ModuleNotFoundError as exc:
                    # An install without the narration extras (langchain, llama.cpp) serves everything else.
                    if exc.name is None or exc.name.split(".")[0] not in _NARRATION_DEPENDENCIES:
                        raise
                    raise ChatUnavailable("chat is not available on this server (no narrator installed)") from None
                narrator: NarratorLike = Narrator(self.settings)
                self._narrator = narrator
            return self._narrator

    def _admission(self, user: str) -> tuple[asyncio.Semaphore, asyncio.Semaphore]:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.settings.chat_concurrency)
        mine = self._users.get(user)
        if mine is None:
            mine = self._users[user] = asyncio.Semaphore(self.settings.chat_per_user)
        return self._slots, mine

    async def stream(
        self, report: Report, question: str, history: list[ChatTurn], user: str = ""
    ) -> AsyncIterator[AnswerChunk | Waiting]:
        """The narrator's chunks as they come, after a ``Waiting`` when the question must wait for a slot;
        ``ChatTimeout`` once ``chat_timeout_s`` has passed since its answer started."""
        slots, mine = self._admission(user)
        if mine.locked() or slots.locked():
            yield Waiting(ahead=sum(self._waiting.values()), own=self._waiting.get(user, 0))
        self._waiting[user] = self._waiting.get(user, 0) + 1
        try:
            await mine.acquire()
            try:
                await slots.acquire()
            except BaseException:
                mine.release()
                raise
        finally:
            self._waiting[user] -= 1
            if not self._waiting[user]:
                del self._waiting[user]
        try:
            async for chunk in self._answer(report, question, history):
                yield chunk
        finally:
            slots.release()
            mine.release()

    async def _answer(self, report: Report, question: str, history: list[ChatTurn]) -> AsyncIterator[AnswerChunk]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        stop = threading.Event()

        def put(item: tuple[str, Any]) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop has closed (server shutting down)
                stop.set()

        def produce() -> None:
            try:
                narrator = self.narrator()
                for chunk in narrator.answer(report, question, history):
                    if stop.is_set():
                        return
                    put(("chunk", chunk))
                put(("end", None))
            except BaseException as exc:
                put(("error", exc))

        deadline = loop.time() + self.settings.chat_timeout_s
        self._executor.submit(produce)
        try:
            while True:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise ChatTimeout
                try:
                    kind, value = await asyncio.wait_for(queue.get(), remaining)
                except TimeoutError:
                    raise ChatTimeout from None
                if kind == "end":
                    return
                if kind == "error":
                    raise value
                yield value
        finally:
            stop.set()  # the thread stops at its next chunk

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
