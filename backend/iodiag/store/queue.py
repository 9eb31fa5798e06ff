"""The analysis job queue: claim with a lease, renew it, finish, and re-queue what a dead worker held.

Every change a worker makes is conditional on still holding the job's lease, so a worker that lost
its lease (it stalled, its server was restarted, the job was deleted) can no longer touch the
analysis: the worker that claimed the job after it is the only writer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Exists, delete, exists, func, insert, select, update
from sqlalchemy.orm import Session

from iodiag.store.models import Analysis, AnalysisFinding, AnalysisOutput, Job, utcnow


@dataclass(frozen=True)
class Claimed:
    job_id: int
    analysis_id: str
    sha256: str
    filename: str
    attempts: int
    nodes: int | None
    cb_nodes: int | None


@dataclass(frozen=True)
class Outcome:
    """What a finished analysis adds to its row."""

    exe: str | None
    job_id: str | None
    counts: dict[str, int]
    findings: list[tuple[str, str]]  # (code, severity), in report order
    outputs: dict[str, bytes] = field(default_factory=dict)  # kind -> zlib-compressed content
    stats: dict[str, object] = field(default_factory=dict)  # Analysis column -> value (the run's stats)


_SEVERITIES = ("critical", "warning", "info", "ok")
_STAT_COLUMNS = frozenset(
    {
        "executable",
        "run_start",
        "nprocs",
        "runtime_s",
        "io_time_s",
        "io_share",
        "verdict_level",
        "headline",
        "run_nodes",
        "time_lost_s",
    }
)


def claim(session: Session, owner: str, lease_s: float) -> Claimed | None:
    """Take the oldest unclaimed job. Row-level: concurrent claimers never get the same job."""
    now = time.time()
    values = {"lease_owner": owner, "lease_expires": now + lease_s, "attempts": Job.attempts + 1}
    oldest = select(Job.id).where(Job.lease_owner.is_(None)).order_by(Job.id).limit(1)
    if session.get_bind().dialect.name == "postgresql":
        job_id = session.scalar(oldest.with_for_update(skip_locked=True))
        if job_id is None:
            return None
        session.execute(update(Job).where(Job.id == job_id).values(**values))
    else:
        # The write transaction (BEGIN IMMEDIATE) makes this one statement atomic among processes.
        job_id = session.scalar(
            update(Job)
            .where(Job.id == oldest.scalar_subquery(), Job.lease_owner.is_(None))
            .values(**values)
            .returning(Job.id)
        )
        if job_id is None:
            return None
    job = session.get(Job, job_id, populate_existing=True)
    assert job is not None
    row = session.get(Analysis, job.analysis_id)
    assert row is not None
    row.status, row.stage, row.progress, row.error = "running", "reading", 0.05, None
    row.started_at, row.attempts = utcnow(), job.attempts
    return Claimed(job.id, row.id, row.sha256, row.filename, job.attempts, row.nodes, row.cb_nodes)


def renew(session: Session, owner: str, lease_s: float) -> int:
    result = session.execute(update(Job).where(Job.lease_owner == owner).values(lease_expires=time.time() + lease_s))
    return int(result.rowcount)  # type: ignore[attr-defined]


def _held(job_id: int, owner: str) -> Exists:
    return exists().where(Job.id == job_id, Job.lease_owner == owner)


def set_progress(session: Session, owner: str, job: Claimed, stage: str, progress: float) -> bool:
    result = session.execute(
        update(Analysis)
        .where(Analysis.id == job.analysis_id, _held(job.job_id, owner))
        .values(stage=stage, progress=progress)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def _take(session: Session, owner: str, job: Claimed) -> Analysis | None:
    """Remove the job row if we still hold it; the analysis row it was for, else None."""
    result = session.execute(delete(Job).where(Job.id == job.job_id, Job.lease_owner == owner))
    if not result.rowcount:  # type: ignore[attr-defined]
        return None
    return session.get(Analysis, job.analysis_id)


def complete(session: Session, owner: str, job: Claimed, outcome: Outcome, seconds: float) -> bool:
    row = _take(session, owner, job)
    if row is None:
        return False
    session.execute(delete(AnalysisOutput).where(AnalysisOutput.analysis_id == row.id))
    session.execute(delete(AnalysisFinding).where(AnalysisFinding.analysis_id == row.id))
    # Bulk inserts: the unit of work would cost a millisecond or more per analysis in the server process.
    if outcome.outputs:
        session.execute(
            insert(AnalysisOutput),
            [{"analysis_id": row.id, "kind": k, "content": v} for k, v in outcome.outputs.items()],
        )
    if outcome.findings:
        session.execute(
            insert(AnalysisFinding),
            [
                {"analysis_id": row.id, "position": i, "code": c, "severity": sev}
                for i, (c, sev) in enumerate(outcome.findings)
            ],
        )
    row.status, row.stage, row.progress, row.error = "done", "done", 1.0, None
    row.finished_at, row.analysis_s = utcnow(), seconds
    row.exe = outcome.exe
    if row.job_id is None and outcome.job_id is not None:
        row.job_id = outcome.job_id
    row.n_critical, row.n_warning, row.n_info, row.n_ok = (outcome.counts.get(s, 0) for s in _SEVERITIES)
    row.max_severity = next((s for s in _SEVERITIES if outcome.counts.get(s, 0) > 0), None)
    for column, value in outcome.stats.items():
        if column in _STAT_COLUMNS:
            setattr(row, column, value)
    return True


def fail(session: Session, owner: str, job: Claimed, error: str, seconds: float | None = None) -> bool:
    row = _take(session, owner, job)
    if row is None:
        return False
    _mark_failed(row, error, seconds)
    return True


def _mark_failed(row: Analysis, error: str, seconds: float | None) -> None:
    row.status, row.stage, row.error = "failed", "failed", error
    row.finished_at, row.analysis_s = utcnow(), seconds


def release(session: Session, owner: str, job: Claimed, *, count_attempt: bool) -> bool:
    """Put a held job back in the queue (shutdown, or a worker that died)."""
    values: dict[str, object] = {"lease_owner": None, "lease_expires": None}
    if not count_attempt:
        values["attempts"] = Job.attempts - 1
    result = session.execute(update(Job).where(Job.id == job.job_id, Job.lease_owner == owner).values(**values))
    if not result.rowcount:  # type: ignore[attr-defined]
        return False
    _requeued(session, job.analysis_id)
    return True


def _requeued(session: Session, analysis_id: str) -> None:
    session.execute(
        update(Analysis).where(Analysis.id == analysis_id).values(status="queued", stage="queued", progress=0.0)
    )


def expire_leases(session: Session, owner_prefix: str, is_dead: Callable[[str], bool]) -> int:
    """End at once the leases of owners (named ``owner_prefix...``) that ``is_dead`` says are gone, so the next
    ``reap`` re-queues their jobs instead of waiting for the leases to run out. Returns how many were ended."""
    owners = session.scalars(
        select(Job.lease_owner).where(Job.lease_owner.startswith(owner_prefix, autoescape=True)).distinct()
    ).all()
    dead = [o for o in owners if o is not None and is_dead(o)]
    if not dead:
        return 0
    result = session.execute(update(Job).where(Job.lease_owner.in_(dead)).values(lease_expires=0.0))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def reap(session: Session, max_attempts: int) -> int:
    """Re-queue jobs whose lease ran out; fail those already tried ``max_attempts`` times."""
    q = select(Job).where(Job.lease_owner.is_not(None), Job.lease_expires < time.time())
    if session.get_bind().dialect.name == "postgresql":
        q = q.with_for_update(skip_locked=True)
    n = 0
    for job in session.scalars(q).all():
        n += 1
        if job.attempts >= max_attempts:
            row = session.get(Analysis, job.analysis_id)
            session.delete(job)
            if row is not None:
                _mark_failed(row, f"the analysis was interrupted {job.attempts} times (worker or server died)", None)
        else:
            job.lease_owner, job.lease_expires = None, None
            _requeued(session, job.analysis_id)
    return n


def depth(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Job).where(Job.lease_owner.is_(None))) or 0
