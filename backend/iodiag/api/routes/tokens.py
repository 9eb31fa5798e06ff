"""API tokens (admin): create (the token is shown once), list, revoke."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path

from iodiag.api import schemas as S
from iodiag.api import views
from iodiag.api.deps import Admin, Ctx
from iodiag.store import tokens as token_repo

router = APIRouter(prefix=f"{views.API}/tokens", tags=["admin"])
_ERR: dict[int | str, dict[str, Any]] = {401: {"model": S.ErrorOut}, 403: {"model": S.ErrorOut}}


@router.post("", status_code=201, response_model=S.TokenCreated, summary="Create a token", responses=_ERR)
def create_token(ctx: Ctx, who: Admin, body: S.TokenIn) -> S.TokenCreated:
    with ctx.db.write() as s:
        row, token = token_repo.create(s, body.user, body.role, body.note)
        out = views.token(row)
    return S.TokenCreated(**out.model_dump(), token=token)


@router.get("", response_model=list[S.TokenOut], summary="List tokens", responses=_ERR)
def list_tokens(ctx: Ctx, who: Admin, include_revoked: bool = False) -> list[S.TokenOut]:
    with ctx.db.read() as s:
        return [views.token(r) for r in token_repo.list_tokens(s, include_revoked)]


@router.delete(
    "/{token_id}",
    response_model=S.TokenOut,
    summary="Revoke a token",
    responses={**_ERR, 404: {"model": S.ErrorOut}, 409: {"model": S.ErrorOut}, 422: {"model": S.ErrorOut}},
)
def revoke_token(ctx: Ctx, who: Admin, token_id: Annotated[int, Path(ge=1, le=2**31 - 1)]) -> S.TokenOut:
    if token_id == who.token_id:
        # An admin locking themselves out over the API is a mistake; `iodiag token revoke` can still do it.
        raise HTTPException(409, "this is the token of the request itself; revoke it with another admin token")
    with ctx.db.write() as s:
        row = token_repo.revoke(s, token_id)
        if row is None:
            raise HTTPException(404, f"no token {token_id}")
        out = views.token(row)
    ctx.tokens.clear()  # revocation bites at once on this server
    return out
