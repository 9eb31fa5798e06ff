"""The reply thread on a job: help-desk staff write to the job's owner (from a checked draft), the owner answers."""

from __future__ import annotations

import re
from typing import Any, cast

from fastapi import APIRouter, HTTPException
from starlette.concurrency import run_in_threadpool

from iodiag.analysis.models import Report
from iodiag.api import rows, schemas
from iodiag.api.deps import Caller, Ctx, Helpdesk
from iodiag.api.routes.analyses import AUTH, NOT_FOUND, NOT_READY, visible_or_404
from iodiag.api.state import AppContext
from iodiag.services.chat import ChatUnavailable
from iodiag.store import analyses as repo
from iodiag.store import replies as reply_repo
from iodiag.store.models import Reply
from iodiag.store.tokens import Principal

router = APIRouter(prefix=f"{rows.API}/analyses", tags=["replies"])

FORBIDDEN: dict[int | str, dict[str, Any]] = {
    403: {"model": schemas.ErrorOut, "description": "not the owner, help desk or admin"}
}


def _out(r: Reply) -> schemas.ReplyOut:
    return schemas.ReplyOut(
        id=r.id,
        author=r.author,
        role=cast(schemas.Role, r.role),
        text=r.text,
        drafted=r.drafted,
        created_at=r.created_at,
    )


def _may_write(who: Principal, owner: str) -> None:
    if who.role in ("helpdesk", "admin") or (who.role == "user" and who.user == owner):
        return
    raise HTTPException(403, "only the job's owner, the help desk or an admin may write in its thread")


@router.get(
    "/{analysis_id}/replies",
    response_model=schemas.ReplyThread,
    summary="The reply thread between the help desk and the job's owner",
    responses={**AUTH, **NOT_FOUND},
)
def get_thread(ctx: Ctx, who: Caller, analysis_id: str) -> schemas.ReplyThread:
    row = visible_or_404(ctx, who, analysis_id)
    with ctx.db.read() as s:
        replies = [_out(r) for r in reply_repo.thread(s, analysis_id)]
    return schemas.ReplyThread(analysis_id=analysis_id, owner=row.owner, replies=replies)


@router.post(
    "/{analysis_id}/replies",
    response_model=schemas.ReplyOut,
    status_code=201,
    summary="Add a reply (help desk to the owner, or the owner back)",
    responses={**AUTH, **FORBIDDEN, **NOT_FOUND, 422: {"model": schemas.ErrorOut}},
)
def add_reply(ctx: Ctx, who: Caller, analysis_id: str, body: schemas.ReplyIn) -> schemas.ReplyOut:
    text = body.text.strip()
    if not text:
        raise HTTPException(422, "text: the reply is empty")
    with ctx.db.write() as s:
        row = repo.get_visible(s, analysis_id, who)
        if row is None:
            raise HTTPException(404, f"no analysis {analysis_id!r}")
        _may_write(who, row.owner)
        return _out(reply_repo.add(s, analysis_id, who.user, who.role, text, body.drafted))


@router.post(
    "/{analysis_id}/replies/read",
    response_model=schemas.ThreadRead,
    summary="Count the thread as read by the caller (clears its unread marker)",
    responses={**AUTH, **NOT_FOUND},
)
def mark_thread_read(ctx: Ctx, who: Caller, analysis_id: str) -> schemas.ThreadRead:
    visible_or_404(ctx, who, analysis_id)
    with ctx.db.write() as s:
        newest = reply_repo.mark_read(s, analysis_id, who.user)
    return schemas.ThreadRead(analysis_id=analysis_id, last_seen_id=newest)


_FINDING_MARK = re.compile(r"\s?\[[A-Z]\d{2}\]")
_DOC_MARK = re.compile(r"“([^”]+)” \[doc:([a-z0-9-]+)\]")
_BARE_DOC_MARK = re.compile(r"\s?\[doc:([a-z0-9-]+)\]")


def for_a_person(text: str) -> str:
    """A checked answer as the job's owner should read it: the verifier's citation marks ("[J02]") go (the
    finding's name is in the sentence), and a guide named with its mark becomes a link to the guide page."""
    text = _DOC_MARK.sub(lambda m: f"[{m.group(1)}](/docs/{m.group(2)})", text)
    text = _BARE_DOC_MARK.sub("", text)
    return _FINDING_MARK.sub("", text)


def _draft(ctx: AppContext, who: Principal, analysis_id: str) -> schemas.ReplyDraft:
    row = visible_or_404(ctx, who, analysis_id)
    if row.status != "done":
        raise HTTPException(409, f"analysis is {row.status}; a reply can be drafted once it is done")
    with ctx.db.read() as s:
        raw = repo.output(s, analysis_id, "json")
    if raw is None:
        raise HTTPException(404, f"analysis {analysis_id!r} has no report")
    report = Report.model_validate_json(raw)
    try:
        narrator = ctx.chat.narrator()
    except ChatUnavailable as exc:
        raise HTTPException(503, str(exc)) from None
    body = narrator.draft_reply(report)
    job = f"job {report.job.jobid}" if report.job.jobid else "your job"
    text = (
        f"Hello {row.owner},\n\n"
        f"we looked at the I/O of {job} ({row.filename}). What the log shows:\n\n"
        f"{for_a_person(body.text)}\n\n"
        "Reply here if anything is unclear or once you have tried the change; we can look at the next run with you."
    )
    return schemas.ReplyDraft(
        analysis_id=analysis_id,
        owner=row.owner,
        text=text,
        verified=body.verifier.passed,
        citations=[c.id for c in body.citations],
    )


@router.post(
    "/{analysis_id}/replies/draft",
    response_model=schemas.ReplyDraft,
    summary="Draft a reply to the owner from the verdict and the recommendations (not saved)",
    responses={
        **AUTH,
        403: {"model": schemas.ErrorOut},
        **NOT_FOUND,
        **NOT_READY,
        503: {"model": schemas.ErrorOut, "description": "this server has no narrator"},
    },
)
async def draft_reply(ctx: Ctx, who: Helpdesk, analysis_id: str) -> schemas.ReplyDraft:
    return await run_in_threadpool(_draft, ctx, who, analysis_id)
