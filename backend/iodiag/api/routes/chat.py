"""Questions about an analysis, answered by the narrator and streamed as Server-Sent Events.

Events: ``queued`` ({"ahead", "detail"}) while the question waits for an answer slot, ``token``
({"delta": ...}) while the answer is written (every streamed sentence has already passed the verifier:
nothing is withdrawn), then ``final`` (the checked ``Answer``: text, citations, provenance), or ``error``
({"detail": ...}).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator

from fastapi import APIRouter, HTTPException
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from iodiag.analysis.models import Report
from iodiag.api import rows, schemas
from iodiag.api.deps import Caller, Ctx
from iodiag.api.errors import one_line
from iodiag.api.routes.analyses import AUTH, NOT_FOUND, NOT_READY, visible_or_404
from iodiag.api.state import AppContext
from iodiag.narration.comparison_answer import answer_comparison
from iodiag.narration.intent.classify import is_compare_question
from iodiag.narration.models import Answer, ChatTurn
from iodiag.services import comparing
from iodiag.services.chat import ChatTimeout, ChatUnavailable, Waiting
from iodiag.store import analyses as repo
from iodiag.store import chat as chat_repo
from iodiag.store.models import Analysis
from iodiag.store.tokens import Principal

router = APIRouter(prefix=f"{rows.API}/analyses", tags=["chat"])
log = logging.getLogger("iodiag.chat")
_HISTORY_TURNS = 20


@router.get(
    "/{analysis_id}/chat",
    response_model=schemas.ChatHistory,
    summary="Your conversation about this analysis",
    responses={**AUTH, **NOT_FOUND},
)
def history(ctx: Ctx, who: Caller, analysis_id: str) -> schemas.ChatHistory:
    visible_or_404(ctx, who, analysis_id)
    with ctx.db.read() as s:
        past = chat_repo.history(s, analysis_id, who.user)
    return schemas.ChatHistory(
        analysis_id=analysis_id,
        user=who.user,
        messages=[
            schemas.ChatMessageOut(
                id=r.id,
                role="assistant" if r.role == "assistant" else "user",
                text=r.text,
                answer=Answer.model_validate_json(r.answer_json) if r.answer_json else None,
                created_at=r.created_at,
            )
            for r in past
        ],
    )


def _prepare(ctx: AppContext, who: Principal, analysis_id: str) -> tuple[Report, list[ChatTurn]]:
    row = visible_or_404(ctx, who, analysis_id)
    if row.status != "done":
        raise HTTPException(409, f"analysis is {row.status}; questions can be asked once it is done")
    with ctx.db.read() as s:
        raw = repo.output(s, analysis_id, "json")
        past = chat_repo.history(s, analysis_id, who.user, limit=_HISTORY_TURNS)
    if raw is None:
        raise HTTPException(404, f"analysis {analysis_id!r} has no report")
    turns = [ChatTurn(role="assistant" if m.role == "assistant" else "user", text=m.text) for m in past]
    return Report.model_validate_json(raw), turns


@router.post(
    "/{analysis_id}/chat",
    summary="Ask about this analysis (Server-Sent Events)",
    response_class=EventSourceResponse,
    responses={
        200: {
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
            "description": "events: queued {ahead, detail}, token {delta} (verified sentences), then final (Answer) "
            "or error {detail}",
        },
        **AUTH,
        **NOT_FOUND,
        **NOT_READY,
        503: {"model": schemas.ErrorOut, "description": "this server has no narrator"},
    },
)
async def ask(ctx: Ctx, who: Caller, analysis_id: str, body: schemas.ChatIn) -> EventSourceResponse:
    report, turns = await run_in_threadpool(_prepare, ctx, who, analysis_id)
    if is_compare_question(body.question):  # answered from the comparison with the previous run: no model needed
        answer = await run_in_threadpool(_against_previous, ctx, who, analysis_id)
        return EventSourceResponse(_replay(ctx, analysis_id, who.user, body.question, answer), ping=15)
    try:
        await run_in_threadpool(ctx.chat.narrator)  # fail fast, as a 503, when there is no narrator
    except ChatUnavailable as exc:
        raise HTTPException(503, str(exc)) from None

    async def events() -> AsyncIterator[dict[str, str]]:
        answer: Answer | None = None
        try:
            async for chunk in ctx.chat.stream(report, body.question, turns, who.user):
                if isinstance(chunk, Waiting):
                    detail = f"waiting for an answer slot: {chunk.ahead} question(s) ahead, {chunk.own} of them yours"
                    yield {"event": "queued", "data": json.dumps({"ahead": chunk.ahead, "detail": detail})}
                    continue
                if chunk.delta:
                    yield {"event": "token", "data": json.dumps({"delta": chunk.delta})}
                if chunk.final and chunk.answer is not None:
                    answer = chunk.answer
        except ChatTimeout:
            yield {"event": "error", "data": json.dumps({"detail": "the answer took too long; try again"})}
            return
        except Exception as exc:
            log.exception("chat failed for analysis %s", analysis_id)
            yield {"event": "error", "data": json.dumps({"detail": f"the answer failed: {one_line(exc, 200)}"})}
            return
        if answer is None:
            yield {"event": "error", "data": json.dumps({"detail": "the narrator gave no final answer"})}
            return
        await run_in_threadpool(_save, ctx, analysis_id, who.user, body.question, answer)
        yield {"event": "final", "data": answer.model_dump_json()}

    return EventSourceResponse(events(), ping=15)


def _against_previous(ctx: AppContext, who: Principal, analysis_id: str) -> Answer:
    t0 = time.monotonic()
    row = visible_or_404(ctx, who, analysis_id)
    with ctx.db.read() as s:
        before = repo.previous_run(s, row)
        if before is None:
            return answer_comparison(None, row.executable or "", t0=t0)
        try:
            cmp = comparing.compare_rows(s, before, row, force=True)
        except comparing.NotReady:
            return answer_comparison(None, row.executable or "", t0=t0)
    return answer_comparison(cmp, row.executable or "", before.run_start or before.created_at, t0=t0)


async def _replay(
    ctx: AppContext, analysis_id: str, user: str, question: str, answer: Answer
) -> AsyncIterator[dict[str, str]]:
    for line in answer.text.splitlines():
        yield {"event": "token", "data": json.dumps({"delta": line + "\n"})}
    await run_in_threadpool(_save, ctx, analysis_id, user, question, answer)
    yield {"event": "final", "data": answer.model_dump_json()}


def _save(ctx: AppContext, analysis_id: str, user: str, question: str, answer: Answer) -> None:
    with ctx.db.write() as s:
        if s.get(Analysis, analysis_id) is None:
            return  # deleted while the answer was written
        chat_repo.append(s, analysis_id, user, "user", question)
        chat_repo.append(s, analysis_id, user, "assistant", answer.text, answer.model_dump_json())
