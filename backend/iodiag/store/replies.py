"""The reply thread between the help desk and a job's owner."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from iodiag.store.models import Reply

MAX_REPLIES = 500


def thread(session: Session, analysis_id: str) -> list[Reply]:
    """The thread, oldest first (at most ``MAX_REPLIES``: the latest ones)."""
    q = select(Reply).where(Reply.analysis_id == analysis_id).order_by(Reply.id.desc()).limit(MAX_REPLIES)
    return list(reversed(list(session.scalars(q))))


def add(session: Session, analysis_id: str, author: str, role: str, text: str, drafted: bool) -> Reply:
    reply = Reply(analysis_id=analysis_id, author=author, role=role, text=text, drafted=drafted)
    session.add(reply)
    session.flush()
    return reply
