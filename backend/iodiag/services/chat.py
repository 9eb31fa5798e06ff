"""Chat answers off the event loop: the narrator runs in a bounded thread pool, with a time limit.

The narrator (``iodiag.narration.service.Narrator``) is built lazily, once, in a thread: loading a
local model takes seconds and must not block the server's start or its event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from iodiag.analysis.models import Report
from iodiag.core.settings import Settings
from iodiag.narration.models import AnswerChunk, ChatTurn

_NARRATION_DEPENDENCIES = frozenset({"langchain_core", "langchain_community", "llama_cpp", "chromadb"})


class NarratorLike(Protocol):
    def answer(self, report: Report, question: str, history: list[ChatTurn]) -> Iterator[AnswerChunk]: ...


class ChatUnavailable(Exception):
    """This server cannot answer questions (no narrator); one line."""


class ChatTimeout(Exception):
    pass


class ChatService:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._executor = ThreadPoolExecutor(max_workers=settings.chat_concurrency, thread_name_prefix="iodiag-chat")
        self._narrator: NarratorLike | None = None
        self._lock = threading.Lock()

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

    async def stream(self, report: Report, question: str, history: list[ChatTurn]) -> AsyncIterator[AnswerChunk]:
        """The narrator's chunks as they come; ``ChatTimeout`` once ``chat_timeout_s`` has passed."""
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
