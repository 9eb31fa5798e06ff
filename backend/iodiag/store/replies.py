"""The reply thread between the help desk and a job's owner, and how far each person has read it."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import ColumnElement, and_, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from iodiag.store.analyses import visible
from iodiag.store.models import Analysis, Reply, ReplyRead
from iodiag.store.tokens import Principal

MAX_REPLIES = 500


def thread(session: Session, analysis_id: str) -> list[Reply]:
    """The thread, oldest first (at most ``MAX_REPLIES``: the latest ones)."""
    q = select(Reply).where(Reply.analysis_id == analysis_id).order_by(Reply.id.desc()).limit(MAX_REPLIES)
    return list(reversed(list(session.scalars(q))))


def add(session: Session, analysis_id: str, author: str, role: str, text: str, drafted: bool) -> Reply:
    reply = Reply(analysis_id=analysis_id, author=author, role=role, text=text, drafted=drafted)
    session.add(reply)
    session.flush()
    # What one writes, one has read: the thread up to one's own reply is no longer unread.
    mark_read(session, analysis_id, author)
    return reply


def mark_read(session: Session, analysis_id: str, user: str) -> int:
    """Everything in the thread so far counts as read by ``user``; returns the newest reply id (0: none)."""
    newest = int(session.scalar(select(func.max(Reply.id)).where(Reply.analysis_id == analysis_id)) or 0)
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert(ReplyRead).values(analysis_id=analysis_id, user=user, last_seen_id=newest)
    session.execute(
        stmt.on_conflict_do_update(
            index_elements=[ReplyRead.analysis_id, ReplyRead.user],
            set_={"last_seen_id": func.max(ReplyRead.last_seen_id, stmt.excluded.last_seen_id)}
            if dialect != "postgresql"
            else {"last_seen_id": func.greatest(ReplyRead.last_seen_id, stmt.excluded.last_seen_id)},
        )
    )
    return newest


def _unread(who: Principal) -> ColumnElement[bool]:
    """A reply someone else wrote after the last one ``who`` read in that thread."""
    return and_(
        Reply.author != who.user,
        Reply.id > func.coalesce(ReplyRead.last_seen_id, 0),
    )


def _unread_query(who: Principal):  # type: ignore[no-untyped-def]
    return (
        select(Reply.analysis_id, func.count())
        .join(Analysis, Analysis.id == Reply.analysis_id)
        .outerjoin(ReplyRead, and_(ReplyRead.analysis_id == Reply.analysis_id, ReplyRead.user == who.user))
        .where(visible(who), _unread(who))
        .group_by(Reply.analysis_id)
    )


def unread_counts(session: Session, who: Principal, analysis_ids: Iterable[str]) -> dict[str, int]:
    """Unread replies per analysis, for those of ``analysis_ids`` that have any."""
    ids = list(analysis_ids)
    if not ids:
        return {}
    rows = session.execute(_unread_query(who).where(Reply.analysis_id.in_(ids))).all()
    return {str(a): int(n) for a, n in rows}


def unread_total(session: Session, who: Principal) -> tuple[int, int]:
    """(unread replies, threads with any) over every analysis ``who`` may see."""
    rows = session.execute(_unread_query(who)).all()
    return sum(int(n) for _, n in rows), len(rows)
