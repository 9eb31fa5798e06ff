"""Database tables. Changing one needs a new migration in ``migrations/versions``.

``test_store`` checks that the migrations and these models agree, on every backend.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Stable constraint names, so migrations can refer to them on every backend.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

ANALYSIS_STATUSES = ("queued", "running", "done", "failed")
TRIAGE_STATUSES = ("open", "in-progress", "resolved", "wontfix")


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every backend (SQLite has no time zones: store naive UTC there)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))  # shown in listings so a token can be recognised
    user: Mapped[str] = mapped_column(String(64), index=True)
    role: Mapped[str] = mapped_column(String(16))
    note: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class Analysis(Base):
    __tablename__ = "analyses"
    __table_args__ = (
        UniqueConstraint("owner", "sha256", name="uq_analyses_owner_sha256"),
        Index("ix_analyses_created_at_id", "created_at", "id"),
        Index("ix_analyses_owner_started_at", "owner", "started_at"),  # fair share: who was served last
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    owner: Mapped[str] = mapped_column(String(64), index=True)
    submitted_by: Mapped[str] = mapped_column(String(64))
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    filename: Mapped[str] = mapped_column(String(255), default="")
    source: Mapped[str] = mapped_column(String(8))  # upload | path
    source_path: Mapped[str | None] = mapped_column(Text, nullable=True)
    job_id: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    exe: Mapped[str | None] = mapped_column(Text, nullable=True)
    nodes: Mapped[int | None] = mapped_column(Integer, nullable=True)
    cb_nodes: Mapped[int | None] = mapped_column(Integer, nullable=True)

    status: Mapped[str] = mapped_column(String(16), index=True)
    stage: Mapped[str] = mapped_column(String(16))
    progress: Mapped[float] = mapped_column(Float, default=0.0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    analysis_s: Mapped[float | None] = mapped_column(Float, nullable=True)

    n_critical: Mapped[int] = mapped_column(Integer, default=0)
    n_warning: Mapped[int] = mapped_column(Integer, default=0)
    n_info: Mapped[int] = mapped_column(Integer, default=0)
    n_ok: Mapped[int] = mapped_column(Integer, default=0)
    max_severity: Mapped[str | None] = mapped_column(String(16), nullable=True)

    # The run itself, from its report's verdict: what the history, the regression flag and the triage
    # list read without opening the report. ``executable`` is what must match for two runs to compare.
    executable: Mapped[str | None] = mapped_column(String(255), nullable=True, index=True)
    run_start: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    nprocs: Mapped[int | None] = mapped_column(Integer, nullable=True)
    runtime_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    io_time_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    io_share: Mapped[float | None] = mapped_column(Float, nullable=True)
    verdict_level: Mapped[str | None] = mapped_column(String(16), nullable=True)
    headline: Mapped[str | None] = mapped_column(Text, nullable=True)
    run_nodes: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the report's, submitted or inferred
    # What the verdict's causes cost (seconds, never past the I/O time): the triage list sorts by it.
    time_lost_s: Mapped[float | None] = mapped_column(Float, nullable=True)

    triage_status: Mapped[str] = mapped_column(String(16), default="open", index=True)
    triage_assignee: Mapped[str | None] = mapped_column(String(64), nullable=True)
    triage_note: Mapped[str | None] = mapped_column(Text, nullable=True)
    triage_updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    triage_updated_by: Mapped[str | None] = mapped_column(String(64), nullable=True)


class AnalysisFinding(Base):
    """One row per finding of a finished analysis: what the list's code and severity filters search."""

    __tablename__ = "analysis_findings"

    analysis_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("analyses.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    code: Mapped[str] = mapped_column(String(8), index=True)
    severity: Mapped[str] = mapped_column(String(16))


class AnalysisOutput(Base):
    """The report in each format and the plot data, zlib-compressed (plots reach megabytes)."""

    __tablename__ = "analysis_outputs"

    analysis_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("analyses.id", ondelete="CASCADE"), primary_key=True
    )
    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    content: Mapped[bytes] = mapped_column(LargeBinary)


class Job(Base):
    """The work queue: a row per queued or running analysis, gone once it is done or failed.

    A claimed job carries a lease (owner and expiry, in epoch seconds); the owner renews it while it
    works. A lease that runs out means its worker or server died: the job is queued again.
    """

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_lease_owner_id", "lease_owner", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    analysis_id: Mapped[str] = mapped_column(String(36), ForeignKey("analyses.id", ondelete="CASCADE"), unique=True)
    lease_owner: Mapped[str | None] = mapped_column(String(128), nullable=True)
    lease_expires: Mapped[float | None] = mapped_column(Float, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    enqueued_at: Mapped[float] = mapped_column(Float)


class ChatMessage(Base):
    __tablename__ = "chat_messages"
    __table_args__ = (Index("ix_chat_messages_analysis_id_user", "analysis_id", "user", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    analysis_id: Mapped[str] = mapped_column(String(36), ForeignKey("analyses.id", ondelete="CASCADE"))
    user: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(16))  # user | assistant
    text: Mapped[str] = mapped_column(Text)
    answer_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Reply(Base):
    """One message of the thread between the help desk and a job's owner (staff replies, owner answers)."""

    __tablename__ = "replies"
    __table_args__ = (Index("ix_replies_analysis_id_id", "analysis_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    analysis_id: Mapped[str] = mapped_column(String(36), ForeignKey("analyses.id", ondelete="CASCADE"))
    author: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(16))  # the author's role when they wrote it: user | helpdesk | admin
    text: Mapped[str] = mapped_column(Text)
    drafted: Mapped[bool] = mapped_column(Boolean, default=False)  # started from the generated draft
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ReplyRead(Base):
    """How far each person has read a job's reply thread: what is newer and not theirs is unread."""

    __tablename__ = "reply_reads"

    analysis_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("analyses.id", ondelete="CASCADE"), primary_key=True
    )
    user: Mapped[str] = mapped_column(String(64), primary_key=True)
    last_seen_id: Mapped[int] = mapped_column(Integer, default=0)
