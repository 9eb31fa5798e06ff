"""Who am I: the caller's user name and role."""

from __future__ import annotations

from typing import cast

from fastapi import APIRouter

from iodiag.api import rows, schemas
from iodiag.api.deps import Caller

router = APIRouter(prefix=rows.API, tags=["auth"])


@router.get(
    "/me", response_model=schemas.MeOut, summary="The caller's identity", responses={401: {"model": schemas.ErrorOut}}
)
def me(who: Caller) -> schemas.MeOut:
    return schemas.MeOut(
        user=who.user, role=cast(schemas.Role, who.role), via="token" if who.token_id is not None else "proxy"
    )
