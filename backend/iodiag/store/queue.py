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


@dataclass(frozen=True)
class _Waiting:
    """An owner with queued jobs, and what decides whose turn it is."""

    owner: str
    job_ids: list[int]  # queued, oldest first
    running: int
    last_started: float  # epoch seconds of their newest start; -inf when never served

    def key(self, user_concurrency: int) -> tuple[bool, float, int]:
        return (self.running >= user_concurrency, self.last_started, self.job_ids[0])


def _waiting(session: Session) -> list[_Waiting]:
    queued = session.execute(
        select(Job.id, Analysis.owner)
        .join(Analysis, Analysis.id == Job.analysis_id)
        .where(Job.lease_owner.is_(None))
        .order_by(Job.id)
    ).all()
    if not queued:
        return []
    jobs_of: dict[str, list[int]] = {}
    for job_id, who in queued:
        jobs_of.setdefault(who, []).append(job_id)
    running = dict(
        session.execute(
            select(Analysis.owner, func.count())
            .join(Job, Job.analysis_id == Analysis.id)
            .where(Job.lease_owner.is_not(None))
            .group_by(Analysis.owner)
        ).all()
    )
    last = dict(
        session.execute(
            select(Analysis.owner, func.max(Analysis.started_at))
            .where(Analysis.owner.in_(list(jobs_of)))
            .group_by(Analysis.owner)
        ).all()
    )
    waiting = []
    for who, ids in jobs_of.items():
        started = last.get(who)
        waiting.append(_Waiting(who, ids, int(running.get(who, 0)), started.timestamp() if started else float("-inf")))
    return waiting


def fair_order(waiting: list[_Waiting], user_concurrency: int) -> list[int]:
    """Every queued job id in the order they would start if no more arrived: owners take turns.

    An owner below ``user_concurrency`` running jobs goes before one at it, and among those alike the
    owner served longest ago goes first (never served: first of all); each owner's own jobs keep their
    order. So a burst from one owner delays another owner's log by at most the one job already running,
    and workers never idle while anyone waits (an owner alone may use them all)."""
    heads = {w.owner: 0 for w in waiting}
    state = {w.owner: [w.running, w.last_started] for w in waiting}
    by_owner = {w.owner: w for w in waiting}
    order: list[int] = []
    tick = max([w.last_started for w in waiting if w.last_started > float("-inf")], default=0.0)
    while True:
        live = [w for w in waiting if heads[w.owner] < len(w.job_ids)]
        if not live:
            return order
        who = min(
            live,
            key=lambda w: (
                state[w.owner][0] >= user_concurrency,
                state[w.owner][1],
                w.job_ids[heads[w.owner]],
            ),
        ).owner
        order.append(by_owner[who].job_ids[heads[who]])
        heads[who] += 1
        tick += 1.0  # served now: to the back of the line (running counts are assumed to stay)
        state[who][1] = tick


def claim(session: Session, owner: str, lease_s: float, user_concurrency: int = 1) -> Claimed | None:
    """Take the job whose owner's turn it is (``fair_order``). Row-level: concurrent claimers never get the
    same job."""
    waiting = _waiting(session)
    if not waiting:
        return None
    now = time.time()
    values = {"lease_owner": owner, "lease_expires": now + lease_s, "attempts": Job.attempts + 1}
    postgres = session.get_bind().dialect.name == "postgresql"
    # One candidate per owner, best first: another claimer may hold the best (PostgreSQL) or have taken it.
    for w in sorted(waiting, key=lambda w: w.key(user_concurrency)):
        candidate = w.job_ids[0]
        if postgres:
            # This owner's oldest job that no concurrent claimer has locked (it may hold the one we read).
            job_id = session.scalar(
                select(Job.id)
                .join(Analysis, Analysis.id == Job.analysis_id)
                .where(Analysis.owner == w.owner, Job.lease_owner.is_(None))
                .order_by(Job.id)
                .limit(1)
                .with_for_update(of=Job, skip_locked=True)
            )
            if job_id is None:
                continue
            session.execute(update(Job).where(Job.id == job_id).values(**values))
        else:
            # The write transaction (BEGIN IMMEDIATE) makes the read above and this update atomic among processes.
            job_id = session.scalar(
                update(Job).where(Job.id == candidate, Job.lease_owner.is_(None)).values(**values).returning(Job.id)
            )
            if job_id is None:
                continue
        break
    else:
        return None
    job = session.get(Job, job_id, populate_existing=True)
    assert job is not None
    row = session.get(Analysis, job.analysis_id)
    assert row is not None
    row.status, row.stage, row.progress, row.error = "running", "reading", 0.05, None
    row.started_at, row.attempts = utcnow(), job.attempts
    return Claimed(job.id, row.id, row.sha256, row.filename, job.attempts, row.nodes, row.cb_nodes)


def queue_positions(session: Session, user_concurrency: int = 1) -> dict[str, int]:
    """Analysis id -> its place in the queue (1: starts next), for every queued analysis."""
    waiting = _waiting(session)
    if not waiting:
        return {}
    order = fair_order(waiting, user_concurrency)
    place = {job_id: i + 1 for i, job_id in enumerate(order)}
    rows = session.execute(select(Job.id, Job.analysis_id).where(Job.id.in_(order))).all()
    return {analysis_id: place[job_id] for job_id, analysis_id in rows}


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
