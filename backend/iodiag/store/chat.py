"""Chat history: one thread per analysis and asking user."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from iodiag.store.models import ChatMessage


def history(session: Session, analysis_id: str, user: str, limit: int = 200) -> list[ChatMessage]:
    q = (
        select(ChatMessage)
        .where(ChatMessage.analysis_id == analysis_id, ChatMessage.user == user)
        .order_by(ChatMessage.id.desc())
        .limit(limit)
    )
    return list(reversed(list(session.scalars(q))))


def append(
    session: Session, analysis_id: str, user: str, role: str, text: str, answer_json: str | None = None
) -> ChatMessage:
    row = ChatMessage(analysis_id=analysis_id, user=user, role=role, text=text, answer_json=answer_json)
    session.add(row)
    session.flush()
    return row
