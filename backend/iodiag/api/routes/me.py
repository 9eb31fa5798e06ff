"""Who am I: the caller's user name and role."""

from __future__ import annotations

from typing import cast

from fastapi import APIRouter

from iodiag.api import schemas as S
from iodiag.api import views
from iodiag.api.deps import Caller

router = APIRouter(prefix=views.API, tags=["auth"])


@router.get("/me", response_model=S.MeOut, summary="The caller's identity", responses={401: {"model": S.ErrorOut}})
def me(who: Caller) -> S.MeOut:
    return S.MeOut(user=who.user, role=cast(S.Role, who.role), via="token" if who.token_id is not None else "proxy")
