"""API tokens (admin): create (the token is shown once), list, revoke."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path

from iodiag.api import rows, schemas
from iodiag.api.deps import Admin, Ctx
from iodiag.store import tokens as token_repo

router = APIRouter(prefix=f"{rows.API}/tokens", tags=["admin"])
_ERR: dict[int | str, dict[str, Any]] = {401: {"model": schemas.ErrorOut}, 403: {"model": schemas.ErrorOut}}


@router.post("", status_code=201, response_model=schemas.TokenCreated, summary="Create a token", responses=_ERR)
def create_token(ctx: Ctx, who: Admin, body: schemas.TokenIn) -> schemas.TokenCreated:
    with ctx.db.write() as s:
        row, token = token_repo.create(s, body.user, body.role, body.note)
        out = rows.token(row)
    return schemas.TokenCreated(**out.model_dump(), token=token)


@router.get("", response_model=list[schemas.TokenOut], summary="List tokens", responses=_ERR)
def list_tokens(ctx: Ctx, who: Admin, include_revoked: bool = False) -> list[schemas.TokenOut]:
    with ctx.db.read() as s:
        return [rows.token(r) for r in token_repo.list_tokens(s, include_revoked)]


@router.delete(
    "/{token_id}",
    response_model=schemas.TokenOut,
    summary="Revoke a token",
    responses={
        **_ERR,
        404: {"model": schemas.ErrorOut},
        409: {"model": schemas.ErrorOut},
        422: {"model": schemas.ErrorOut},
    },
)
def revoke_token(ctx: Ctx, who: Admin, token_id: Annotated[int, Path(ge=1, le=2**31 - 1)]) -> schemas.TokenOut:
    if token_id == who.token_id:
        # An admin locking themselves out over the API is a mistake; `iodiag token revoke` can still do it.
        raise HTTPException(409, "this is the token of the request itself; revoke it with another admin token")
    with ctx.db.write() as s:
        row = token_repo.revoke(s, token_id)
        if row is None:
            raise HTTPException(404, f"no token {token_id}")
        out = rows.token(row)
    token_repo.announce_revocation(ctx.settings.data_dir)  # and on every server sharing the data directory
    ctx.tokens.clear()  # revocation bites at once on this server
    return out
