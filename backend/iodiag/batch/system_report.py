"""The system report: which I/O problems cost a facility most, over every analyzed job.

Per finding code: the jobs it affects, as a share of all jobs and of the jobs that use the
interface it is about (the modules its check requires: MPI-IO codes over jobs with MPI-IO
records), what is at stake on those jobs (bytes moved, I/O time of the slowest rank, node-hours),
the applications and users it affects most, and its trend by day (job start, UTC).

``build`` takes the store (a SQLAlchemy session: what the API calls) or ``Frames`` (Parquet).
A job is one log (one content hash); a log analyzed twice counts once.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from iodiag.batch.frames import Frames

SCHEMA_VERSION = "1.0"
_SEVERITY_RANK = {"critical": 0, "warning": 1, "info": 2, "ok": 3}
_TOP_N = 5
_MAX_AXIS_DAYS = 1830


class TopEntry(BaseModel):
    name: str
    jobs: int
    node_hours: float


class DayPoint(BaseModel):
    day: date
    jobs: int = Field(description="jobs started that day that have the finding")
    all_jobs: int = Field(description="jobs started that day")


class CodeStats(BaseModel):
    code: str
    title: str
    layer: str
    severity: str = Field(description="the worst severity the finding had on any job")
    requires: list[str] = Field(description="modules the check needs: the jobs that use its interface")
    jobs: int
    jobs_critical: int
    jobs_warning: int
    pct_all_jobs: float = Field(description="percent of all jobs in the window")
    interface_jobs: int = Field(description="jobs whose logs have records in every module of `requires`")
    pct_interface_jobs: float | None = Field(description="percent of interface_jobs; null when none")
    bytes_at_stake: int = Field(description="bytes read + written by the affected jobs")
    io_time_s_at_stake: float = Field(description="I/O time of the slowest rank, summed over the affected jobs")
    node_hours_at_stake: float = Field(description="nodes x run time of the affected jobs (unknown nodes: 1)")
    seconds_lost: float = Field(default=0.0, description="run time the finding cost, summed over the affected jobs")
    node_hours_lost: float = Field(
        default=0.0, description="nodes x the run time the finding cost, summed over the affected jobs: the ranking key"
    )
    top_apps: list[TopEntry]
    top_users: list[TopEntry]
    trend: list[DayPoint]


class DayTotal(BaseModel):
    day: date
    jobs: int
    jobs_with_critical: int
    node_hours: float


class RegressionEntry(BaseModel):
    """A job whose I/O time is far above its application's usual (iodiag.comparison.history explains the rule)."""

    user: str
    app: str
    jobid: str
    start: datetime
    io_time_s: float
    baseline_s: float = Field(description="median I/O time of the user's earlier runs of the application")
    baseline_runs: int
    ratio: float
    robust_z: float
    explanation: str
    new_findings: list[str] = Field(
        description="warning or critical finding codes this job has that the application's previous run did not"
    )


class SystemReport(BaseModel):
    schema_version: str = SCHEMA_VERSION
    generated_at: datetime
    source: str
    since: datetime | None = Field(description="job start, inclusive")
    until: datetime | None = Field(description="job start, exclusive")
    jobs: int
    failed_logs: int = Field(description="logs that could not be analyzed (whole store or output, not windowed)")
    node_hours: float
    bytes: int
    io_time_s: float
    jobs_nodes_unknown: int = Field(description="jobs whose log does not record the node count (counted as 1)")
    interfaces: dict[str, int] = Field(description="jobs with records in each module")
    days: list[DayTotal]
    codes: list[CodeStats]
    regressions: list[RegressionEntry] = Field(
        default_factory=list,
        description="the window's jobs whose I/O time is far above their application's usual, largest excess first",
    )
    notes: list[str] = Field(default_factory=list)


def bound(value: date | datetime | None, *, end: bool = False) -> datetime | None:
    """A window bound as an aware UTC datetime. A date means its whole day: ``until`` = that day included."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    start = datetime.combine(value, time(0), tzinfo=UTC)
    return start + timedelta(days=1) if end else start


def _regressions(all_jobs: pd.DataFrame, findings: pd.DataFrame, in_window: set[str], n: int) -> list[RegressionEntry]:
    """Each application's runs (one user, one executable) in start order, each flagged against the runs
    before it, including runs before the window: a regression on its first day is still one."""
    from iodiag.comparison.history import regression

    problems = findings[findings["severity"].isin(("critical", "warning"))]
    codes_of: dict[str, set[str]] = {}
    for sha, code in zip(problems["sha256"], problems["code"], strict=True):
        codes_of.setdefault(str(sha), set()).add(str(code))
    out: list[RegressionEntry] = []
    jobs = all_jobs.drop_duplicates("sha256").sort_values(["start", "sha256"])
    for (user, app), g in jobs.groupby(["user", "app"], sort=False):
        times = [None if pd.isna(t) else float(t) for t in g["io_time_s"]]
        shas = list(g["sha256"])
        for i, sha in enumerate(shas):
            if sha not in in_window or i == 0:
                continue
            flag = regression(times[i], times[:i])
            if flag is None:
                continue
            row = g.iloc[i]
            appeared = sorted(codes_of.get(sha, set()) - codes_of.get(shas[i - 1], set()))
            out.append(
                RegressionEntry(
                    user=str(user),
                    app=str(app),
                    jobid=str(row["jobid"]),
                    start=row["start"].to_pydatetime(),
                    io_time_s=flag.io_time_s,
                    baseline_s=flag.baseline_s,
                    baseline_runs=flag.baseline_runs,
                    ratio=flag.ratio,
                    robust_z=flag.robust_z,
                    explanation=flag.explanation,
                    new_findings=appeared,
                )
            )
    out.sort(key=lambda r: (-(r.io_time_s - r.baseline_s), r.start))
    return out[:n]


def _any_of() -> set[str]:
    """Codes whose check needs any one of its modules, not all of them."""
    from iodiag.analysis.registry import CHECKS

    return {code for code, spec in CHECKS.items() if spec.requires_any}


def _requires() -> dict[str, tuple[str, ...]]:
    import iodiag.analysis.engine  # noqa: F401  (registers the checks)
    from iodiag.analysis.registry import CHECKS

    return {code: spec.requires or spec.requires_any for code, spec in CHECKS.items()}


def _titles() -> dict[str, tuple[str, str]]:
    from iodiag.analysis.registry import CHECKS

    return {code: (spec.title, spec.layer.value) for code, spec in CHECKS.items()}


def _top(affected: pd.DataFrame, column: str, n: int) -> list[TopEntry]:
    if affected.empty:
        return []
    g = affected.groupby(column, dropna=False).agg(jobs=("sha256", "size"), node_hours=("node_hours", "sum"))
    g = g.reset_index().sort_values(["jobs", "node_hours", column], ascending=[False, False, True]).head(n)
    return [
        TopEntry(name=str(r[column]), jobs=int(r["jobs"]), node_hours=float(r["node_hours"])) for _, r in g.iterrows()
    ]


def _day_axis(days: list[date]) -> list[date]:
    """Every day from the first to the last, so a trend's gaps are days without jobs, not skipped time
    (only days with jobs when that would be more than ``_MAX_AXIS_DAYS`` points)."""
    if not days or (days[-1] - days[0]).days >= _MAX_AXIS_DAYS:
        return days
    return [days[0] + timedelta(days=i) for i in range((days[-1] - days[0]).days + 1)]


def build(
    source: Session | Frames,
    *,
    since: date | datetime | None = None,
    until: date | datetime | None = None,
    top_n: int = _TOP_N,
    source_label: str | None = None,
) -> SystemReport:
    """The system report over ``source``: the store (a session) or frames read from Parquet."""
    if isinstance(source, Frames):
        frames, label = source, source_label or "frames"
    else:
        from iodiag.batch.store_sink import frames_from_store

        frames, label = frames_from_store(source), source_label or "store"
    lo, hi = bound(since), bound(until, end=True)
    all_jobs = frames.jobs
    jobs = frames.jobs.copy()
    if lo is not None:
        jobs = jobs[jobs["start"] >= pd.Timestamp(lo)]
    if hi is not None:
        jobs = jobs[jobs["start"] < pd.Timestamp(hi)]
    jobs = jobs.drop_duplicates("sha256").reset_index(drop=True)
    nodes_known = jobs["nodes"].notna()
    jobs["node_hours"] = jobs["nodes"].where(nodes_known, 1).astype(float) * jobs["runtime_s"].astype(float) / 3600.0
    jobs["bytes"] = jobs["bytes_read"].astype("int64") + jobs["bytes_written"].astype("int64")
    jobs["day"] = jobs["start"].dt.tz_convert("UTC").dt.date
    iface_sets = [frozenset(x) if x is not None else frozenset() for x in jobs["interfaces"]]
    n = len(jobs)

    findings = frames.findings[frames.findings["sha256"].isin(jobs["sha256"])].copy()
    findings["rank"] = findings["severity"].map(_SEVERITY_RANK).fillna(9)
    # A code counts once per job, at its worst severity on that job.
    worst = findings.sort_values("rank").drop_duplicates(["sha256", "code"])
    per_day_all = jobs.groupby("day").size()
    days_sorted = _day_axis(sorted(per_day_all.index))
    requires, titles = _requires(), _titles()
    iface_count: dict[tuple[str, ...], int] = {}

    codes: list[CodeStats] = []
    for code, g in worst.groupby("code"):
        code = str(code)
        affected = jobs[jobs["sha256"].isin(g["sha256"])]
        req = requires.get(code, ())
        if req not in iface_count:
            need = frozenset(req)
            either = code in _any_of()
            iface_count[req] = sum(1 for s in iface_sets if (need & s if either else need <= s))
        denom = iface_count[req]
        by_day = affected.groupby("day").size()
        title, layer = titles.get(code, (str(g["title"].iloc[0]), str(g["layer"].iloc[0])))
        sev = g.sort_values("rank")["severity"].iloc[0]
        codes.append(
            CodeStats(
                code=code,
                title=title,
                layer=layer,
                severity=str(sev),
                requires=list(req),
                jobs=len(affected),
                jobs_critical=int((g["severity"] == "critical").sum()),
                jobs_warning=int((g["severity"] == "warning").sum()),
                pct_all_jobs=100.0 * len(affected) / n if n else 0.0,
                interface_jobs=denom,
                pct_interface_jobs=100.0 * len(affected) / denom if denom else None,
                bytes_at_stake=int(affected["bytes"].sum()),
                io_time_s_at_stake=float(affected["io_time_s"].sum()),
                node_hours_at_stake=float(affected["node_hours"].sum()),
                seconds_lost=float(g["seconds"].fillna(0.0).sum()) if "seconds" in g else 0.0,
                node_hours_lost=_node_hours_lost(g, affected),
                top_apps=_top(affected, "app", top_n),
                top_users=_top(affected, "user", top_n),
                trend=[
                    DayPoint(day=d, jobs=int(by_day.get(d, 0)), all_jobs=int(per_day_all.get(d, 0)))
                    for d in days_sorted
                ],
            )
        )
    # Prevalence weighted by time lost: the finding that cost the facility most node-hours first.
    codes.sort(key=lambda c: (-c.node_hours_lost, _SEVERITY_RANK.get(c.severity, 9), -c.node_hours_at_stake, c.code))

    critical_jobs = set(worst.loc[worst["severity"] == "critical", "sha256"])
    per_day = (
        jobs.assign(critical=jobs["sha256"].isin(critical_jobs))
        .groupby("day")
        .agg(jobs=("sha256", "size"), critical=("critical", "sum"), node_hours=("node_hours", "sum"))
    )
    days = [
        DayTotal(
            day=d,
            jobs=int(per_day["jobs"].get(d, 0)),
            jobs_with_critical=int(per_day["critical"].get(d, 0)),
            node_hours=float(per_day["node_hours"].get(d, 0.0)),
        )
        for d in days_sorted
    ]
    interfaces: dict[str, int] = {}
    for s in iface_sets:
        for m in s:
            interfaces[m] = interfaces.get(m, 0) + 1
    notes: list[str] = []
    unknown = int((~nodes_known).sum())
    if unknown:
        notes.append(
            f"{unknown} of {n} jobs do not record their node count; each counts as 1 node, so "
            "node-hours are a lower bound"
        )
    if n == 0:
        notes.append("no analyzed jobs in this window")
    return SystemReport(
        generated_at=datetime.now(UTC),
        source=label,
        since=lo,
        until=hi,
        jobs=n,
        failed_logs=frames.failed_logs,
        node_hours=float(jobs["node_hours"].sum()),
        bytes=int(jobs["bytes"].sum()),
        io_time_s=float(jobs["io_time_s"].sum()),
        jobs_nodes_unknown=unknown,
        interfaces=dict(sorted(interfaces.items())),
        days=days,
        codes=codes,
        regressions=_regressions(all_jobs, frames.findings, set(jobs["sha256"]), top_n),
        notes=notes,
    )


def schema() -> dict[str, Any]:
    return SystemReport.model_json_schema()


def _node_hours_lost(g: pd.DataFrame, affected: pd.DataFrame) -> float:
    """Per job, the finding's cost in seconds times the job's nodes (unknown: 1), in hours."""
    if "seconds" not in g:
        return 0.0
    nodes = affected.set_index("sha256")["nodes"]
    per = g[["sha256", "seconds"]].dropna()
    if per.empty:
        return 0.0
    n = per["sha256"].map(nodes).fillna(1).astype(float).clip(lower=1)
    return float((per["seconds"].astype(float) * n).sum() / 3600.0)
