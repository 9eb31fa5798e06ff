"""API tokens: random, shown once, stored only as their sha256."""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from iodiag.core.users import ROLES
from iodiag.store.models import ApiToken, utcnow

TOKEN_PREFIX = "iod_"
_LAST_USED_EVERY = timedelta(minutes=1)  # a write per request would serialise readers on SQLite


@dataclass(frozen=True)
class Principal:
    user: str
    role: str
    token_id: int | None  # None for a user vouched for by a trusted proxy


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create(session: Session, user: str, role: str, note: str = "") -> tuple[ApiToken, str]:
    """A new token row and the token itself (the only time it exists in clear)."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken(token_hash=hash_token(token), prefix=token[:10], user=user, role=role, note=note)
    session.add(row)
    session.flush()
    return row, token


def authenticate(session: Session, token: str) -> tuple[Principal, bool] | None:
    """The principal of a valid, unrevoked token, and whether its last-used time is stale."""
    row = session.scalar(select(ApiToken).where(ApiToken.token_hash == hash_token(token)))
    if row is None or row.revoked_at is not None:
        return None
    stale = row.last_used_at is None or utcnow() - row.last_used_at > _LAST_USED_EVERY
    return Principal(row.user, row.role, row.id), stale


def touch(session: Session, token_id: int) -> None:
    session.execute(update(ApiToken).where(ApiToken.id == token_id).values(last_used_at=utcnow()))


def list_tokens(session: Session, include_revoked: bool = False) -> list[ApiToken]:
    q = select(ApiToken).order_by(ApiToken.id)
    if not include_revoked:
        q = q.where(ApiToken.revoked_at.is_(None))
    return list(session.scalars(q))


REVOCATION_STAMP = "token-revocations"
"""A file in the data directory replaced on every revocation: each server checks it on every request
(one ``stat``), so a token revoked by any process that shares the data directory stops working at once."""


def announce_revocation(data_dir: Path) -> None:
    """Tell every server that shares ``data_dir`` to forget the tokens it has checked."""
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = data_dir / f".{REVOCATION_STAMP}.{os.getpid()}.{secrets.token_hex(4)}"
    tmp.write_text(f"{time.time_ns()}\n")
    os.replace(tmp, data_dir / REVOCATION_STAMP)  # a new inode: a change no clock resolution can hide


def revoke(session: Session, token_id: int) -> ApiToken | None:
    row = session.get(ApiToken, token_id)
    if row is None:
        return None
    if row.revoked_at is None:
        row.revoked_at = utcnow()
    return row
