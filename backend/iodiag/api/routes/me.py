"""Who am I: the caller's user name and role, and how many replies wait for them."""

from __future__ import annotations

from typing import cast

from fastapi import APIRouter

from iodiag.api import rows, schemas
from iodiag.api.deps import Caller, Ctx
from iodiag.store import replies as reply_repo

router = APIRouter(prefix=rows.API, tags=["auth"])


@router.get(
    "/me", response_model=schemas.MeOut, summary="The caller's identity", responses={401: {"model": schemas.ErrorOut}}
)
def me(ctx: Ctx, who: Caller) -> schemas.MeOut:
    with ctx.db.read() as s:
        replies, threads = reply_repo.unread_total(s, who)
    return schemas.MeOut(
        user=who.user,
        role=cast(schemas.Role, who.role),
        via="token" if who.token_id is not None else "proxy",
        unread_replies=replies,
        unread_threads=threads,
    )
