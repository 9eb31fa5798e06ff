"""Analyses: creation (idempotent per owner and content), lookup with visibility, listing, triage."""

from __future__ import annotations

import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    and_,
    bindparam,
    delete,
    exists,
    func,
    insert,
    select,
    text,
    true,
    update,
)
from sqlalchemy.orm import Session

from iodiag.store.models import Analysis, AnalysisFinding, AnalysisOutput, Job, utcnow
from iodiag.store.tokens import Principal

SEES_ALL = ("helpdesk", "admin")


@dataclass(frozen=True)
class NewAnalysis:
    owner: str
    submitted_by: str
    sha256: str
    size_bytes: int
    filename: str
    source: str
    source_path: str | None = None
    job_id: str | None = None
    nodes: int | None = None
    cb_nodes: int | None = None


@dataclass(frozen=True)
class ListFilters:
    owner: str | None = None
    status: str | None = None
    severity: str | None = None
    code: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    job_id: str | None = None
    exe: str | None = None
    triage: str | None = None
    min_time_lost_s: float | None = None
    min_io_share: float | None = None


# The triage list's sort keys: a column (or an expression over columns) each. Rows without the number
# (not done, or analyzed before it was kept) sort last either way.
def _node_hours() -> ColumnElement[float | None]:
    return Analysis.runtime_s * Analysis.run_nodes / 3600.0


def _node_hours_lost() -> ColumnElement[float | None]:
    return Analysis.time_lost_s * Analysis.run_nodes / 3600.0


SORT_KEYS: dict[str, Callable[[], Any]] = {
    "created": lambda: Analysis.created_at,
    "time_lost": lambda: Analysis.time_lost_s,
    "node_hours_lost": _node_hours_lost,
    "node_hours": _node_hours,
    "runtime": lambda: Analysis.runtime_s,
    "io_share": lambda: Analysis.io_share,
    "nprocs": lambda: Analysis.nprocs,
    "nodes": lambda: Analysis.run_nodes,
}


def lock_content(db: Session | Connection, sha256: str) -> None:
    """Serialise writers of one log's rows and blob (SQLite's write transaction already does)."""
    bind = db.get_bind() if isinstance(db, Session) else db
    if bind.dialect.name == "postgresql":
        db.execute(_ADVISORY_LOCK, {"k": int(sha256[:15], 16)})


def find_by_content(session: Session, owner: str, sha256: str) -> Analysis | None:
    return session.scalar(select(Analysis).where(Analysis.owner == owner, Analysis.sha256 == sha256))


@dataclass(frozen=True)
class Found:
    id: str
    status: str


# Built once: the submission path runs them on a bare connection (Database.write_connection).
_ADVISORY_LOCK = text("SELECT pg_advisory_xact_lock(:k)")
_FIND = select(Analysis.id, Analysis.status).where(
    Analysis.owner == bindparam("owner"), Analysis.sha256 == bindparam("sha256")
)
_INSERT_ANALYSIS = insert(Analysis)
_INSERT_JOB = insert(Job)
_REQUEUED: dict[str, object] = {
    "status": "queued",
    "stage": "queued",
    "progress": 0.0,
    "error": None,
    "attempts": 0,
    "started_at": None,
    "finished_at": None,
}
_REQUEUE = update(Analysis).where(Analysis.id == bindparam("analysis_id")).values(**_REQUEUED)


def find_content(conn: Connection, owner: str, sha256: str) -> Found | None:
    row = conn.execute(_FIND, {"owner": owner, "sha256": sha256}).first()
    return None if row is None else Found(row.id, row.status)


def insert_queued(conn: Connection, new: NewAnalysis) -> str:
    """Add the analysis and its queue entry; returns its id."""
    values = _new_row(new)
    conn.execute(_INSERT_ANALYSIS, values)
    conn.execute(_INSERT_JOB, _new_job(values["id"]))
    return str(values["id"])


def requeue_failed(conn: Connection, analysis_id: str) -> None:
    """Queue a failed analysis again (its log was submitted again)."""
    conn.execute(_REQUEUE.where(Analysis.status == "failed"), {"analysis_id": analysis_id})
    conn.execute(_INSERT_JOB, _new_job(analysis_id))


def _new_row(new: NewAnalysis) -> dict[str, object]:
    return {
        "id": str(uuid.uuid4()),
        "owner": new.owner,
        "submitted_by": new.submitted_by,
        "sha256": new.sha256,
        "size_bytes": new.size_bytes,
        "filename": new.filename,
        "source": new.source,
        "source_path": new.source_path,
        "job_id": new.job_id,
        "nodes": new.nodes,
        "cb_nodes": new.cb_nodes,
        "status": "queued",
        "stage": "queued",
        "progress": 0.0,
        "attempts": 0,
        "created_at": utcnow(),
        "n_critical": 0,
        "n_warning": 0,
        "n_info": 0,
        "n_ok": 0,
        "triage_status": "open",
    }


def _new_job(analysis_id: object) -> dict[str, object]:
    return {"analysis_id": analysis_id, "attempts": 0, "enqueued_at": time.time()}


def create(session: Session, new: NewAnalysis) -> Analysis:
    row = Analysis(**_new_row(new))
    session.add(row)
    session.flush()
    session.add(Job(**_new_job(row.id)))
    session.flush()
    return row


def retry(session: Session, row: Analysis) -> None:
    """Queue a failed analysis again (its log was submitted again)."""
    for column, value in _REQUEUED.items():
        setattr(row, column, value)
    session.add(Job(**_new_job(row.id)))
    session.flush()


def visible(principal: Principal) -> ColumnElement[bool]:
    if principal.role in SEES_ALL:
        return true()
    if principal.role == "hook":
        return Analysis.submitted_by == principal.user
    return Analysis.owner == principal.user


def get_visible(session: Session, analysis_id: str, principal: Principal) -> Analysis | None:
    return session.scalar(select(Analysis).where(Analysis.id == analysis_id, visible(principal)))


def _filtered(q: Select[Analysis], f: ListFilters) -> Select[Analysis]:
    conds: list[ColumnElement[bool]] = []
    if f.owner is not None:
        conds.append(Analysis.owner == f.owner)
    if f.status is not None:
        conds.append(Analysis.status == f.status)
    if f.severity is not None:
        conds.append(getattr(Analysis, f"n_{f.severity}") > 0)
    if f.code is not None:
        conds.append(exists().where(AnalysisFinding.analysis_id == Analysis.id, AnalysisFinding.code == f.code))
    if f.since is not None:
        conds.append(Analysis.created_at >= f.since)
    if f.until is not None:
        conds.append(Analysis.created_at < f.until)
    if f.job_id is not None:
        conds.append(Analysis.job_id == f.job_id)
    if f.exe is not None:
        conds.append(Analysis.exe.contains(f.exe, autoescape=True))
    if f.triage is not None:
        conds.append(Analysis.triage_status == f.triage)
    if f.min_time_lost_s is not None:
        conds.append(Analysis.time_lost_s >= f.min_time_lost_s)
    if f.min_io_share is not None:
        conds.append(Analysis.io_share >= f.min_io_share)
    return q.where(and_(true(), *conds))


def list_visible(
    session: Session, principal: Principal, f: ListFilters, limit: int, offset: int, sort: str = "-created"
) -> tuple[int, list[Analysis]]:
    """One page of the analyses the principal may see; ``sort`` is a key of ``SORT_KEYS``, ``-`` for descending."""
    base = _filtered(select(Analysis).where(visible(principal)), f)
    total = session.scalar(select(func.count()).select_from(base.subquery())) or 0
    key = SORT_KEYS[sort.lstrip("-")]()
    primary = (key.desc() if sort.startswith("-") else key.asc()).nulls_last()
    page = base.order_by(primary, Analysis.created_at.desc(), Analysis.id.desc()).limit(limit).offset(offset)
    return total, list(session.scalars(page))


def run_time() -> ColumnElement[datetime]:
    """When a run happened: its log's start time, or its upload time for rows analyzed before that was kept."""
    return func.coalesce(Analysis.run_start, Analysis.created_at)


def application_runs(session: Session, owner: str, executable: str, limit: int = 200) -> list[Analysis]:
    """The owner's finished runs of one executable, oldest first (the latest ``limit``)."""
    q = (
        select(Analysis)
        .where(Analysis.owner == owner, Analysis.executable == executable, Analysis.status == "done")
        .order_by(run_time().desc(), Analysis.id.desc())
        .limit(limit)
    )
    return list(reversed(list(session.scalars(q))))


def previous_run(session: Session, row: Analysis) -> Analysis | None:
    """The owner's latest finished run of the same executable that started before this one."""
    if not row.executable:
        return None
    at = row.run_start or row.created_at
    q = (
        select(Analysis)
        .where(
            Analysis.owner == row.owner,
            Analysis.executable == row.executable,
            Analysis.status == "done",
            Analysis.id != row.id,
            run_time() <= at,
        )
        .order_by(run_time().desc(), Analysis.id.desc())
        .limit(1)
    )
    return session.scalar(q)


def output(session: Session, analysis_id: str, kind: str) -> bytes | None:
    blob = session.scalar(
        select(AnalysisOutput.content).where(AnalysisOutput.analysis_id == analysis_id, AnalysisOutput.kind == kind)
    )
    return None if blob is None else zlib.decompress(blob)


def set_triage(
    session: Session,
    row: Analysis,
    by: str,
    status: str | None,
    assignee: str | None,
    note: str | None,
    clear_assignee: bool = False,
) -> None:
    if status is not None:
        row.triage_status = status
    if assignee is not None or clear_assignee:
        row.triage_assignee = assignee
    if note is not None:
        row.triage_note = note
    row.triage_updated_at, row.triage_updated_by = utcnow(), by


def remove(session: Session, row: Analysis) -> str | None:
    """Delete an analysis (its findings, outputs, chat and job go with it); returns its log's hash
    when no other analysis refers to that log any more, so the caller can delete the blob."""
    sha = row.sha256
    session.execute(delete(Analysis).where(Analysis.id == row.id))
    others = session.scalar(select(func.count()).select_from(Analysis).where(Analysis.sha256 == sha)) or 0
    return sha if others == 0 else None


def counts_by_status(session: Session) -> dict[str, int]:
    rows = session.execute(select(Analysis.status, func.count()).group_by(Analysis.status)).all()
    return {status: int(n) for status, n in rows}
