"""Chat admission: one user's burst of questions queues behind itself, tells the client it waits, and the wait
does not count against the answer's time limit. The narrator here is a stand-in that takes a fixed time per
answer (the real narrator is exercised by tests/api/test_api_chat.py and the answer eval); what is tested is
the service's queueing around it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

from iodiag.analysis.models import Report
from iodiag.core.settings import Settings
from iodiag.narration.models import Answer, AnswerChunk, ChatTurn, VerifierReport
from iodiag.services.chat import ChatService, Waiting

ANSWER_S = 0.3


class _TimedNarrator:
    def answer(self, report: Report, question: str, history: list[ChatTurn]) -> Iterator[AnswerChunk]:
        time.sleep(ANSWER_S)  # the work of an answer, in the service's worker thread
        yield AnswerChunk(delta=question)
        final = Answer(text=question, intent="explain-job", provenance="template", verifier=VerifierReport(passed=True))
        yield AnswerChunk(final=True, answer=final)


def _service(tmp_path: Path, timeout_s: float) -> ChatService:
    settings = Settings(data_dir=tmp_path, chat_concurrency=2, chat_per_user=1, chat_timeout_s=timeout_s)
    svc = ChatService(settings)
    svc._narrator = _TimedNarrator()
    return svc


async def _ask(svc: ChatService, user: str, q: str) -> tuple[list[Waiting], str, float]:
    t0 = time.monotonic()
    waits: list[Waiting] = []
    text = ""
    async for chunk in svc.stream(None, q, [], user):  # type: ignore[arg-type]
        if isinstance(chunk, Waiting):
            waits.append(chunk)
        elif chunk.final and chunk.answer is not None:
            text = chunk.answer.text
    return waits, text, time.monotonic() - t0


def test_a_users_burst_queues_behind_itself_not_in_front_of_others(tmp_path: Path) -> None:
    # Three questions from alice at once, then one from bob: bob's starts at once on the second slot.
    svc = _service(tmp_path, timeout_s=30)

    async def run() -> list[tuple[list[Waiting], str, float]]:
        alice = [asyncio.create_task(_ask(svc, "alice", f"a{i}")) for i in range(3)]
        await asyncio.sleep(0.05)
        bob = asyncio.create_task(_ask(svc, "bob", "b0"))
        return [*(await asyncio.gather(*alice)), await bob]

    try:
        results = asyncio.run(run())
    finally:
        svc.shutdown()
    (w0, t0, _), (w1, t1, _), (w2, t2, d2), (wb, tb, db) = results
    assert [t0, t1, t2, tb] == ["a0", "a1", "a2", "b0"]
    assert not w0 and w1 and w2 and not wb  # only alice's later questions waited, and were told so
    assert w2[0].own >= 1  # "one of yours is ahead"
    assert db < 2 * ANSWER_S and d2 >= 3 * ANSWER_S * 0.9  # bob did not wait behind alice's burst


def test_waiting_does_not_count_against_the_time_limit(tmp_path: Path) -> None:
    # Each answer takes 0.3 s, the limit is 0.5 s: the third queued question waits 0.6 s and still gets its answer.
    svc = _service(tmp_path, timeout_s=0.5)

    async def run() -> list[tuple[list[Waiting], str, float]]:
        return list(await asyncio.gather(*(_ask(svc, "carol", f"c{i}") for i in range(3))))

    try:
        results = asyncio.run(run())
    finally:
        svc.shutdown()
    assert [r[1] for r in results] == ["c0", "c1", "c2"]
    assert results[2][2] > 0.5  # it waited longer than the limit, and was not timed out
