"""An application's runs over time (the same owner's runs of the same executable) with regression flags."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.orm import Session

from iodiag.comparison.history import Regression, RunPoint, flag_series
from iodiag.store import analyses
from iodiag.store.models import Analysis


def point(row: Analysis) -> RunPoint:
    return RunPoint(
        id=row.id,
        when=row.run_start or row.created_at,
        jobid=row.job_id,
        nprocs=row.nprocs,
        runtime_s=row.runtime_s,
        io_time_s=row.io_time_s,
        io_share=row.io_share,
        verdict_level=row.verdict_level,
        headline=row.headline,
    )


def runs(session: Session, row: Analysis, limit: int = 200) -> list[RunPoint]:
    """The application's runs, oldest first, each flagged against the runs before it; [] when the run's
    executable is unknown (not analyzed yet, or analyzed before run stats were kept)."""
    if not row.executable:
        return []
    return flag_series([point(r) for r in analyses.application_runs(session, row.owner, row.executable, limit)])


def flags(session: Session, rows: Iterable[Analysis]) -> dict[str, Regression]:
    """Regression flags of the given rows, one history query per application among them."""
    out: dict[str, Regression] = {}
    seen: set[tuple[str, str]] = set()
    for row in rows:
        if not row.executable or (row.owner, row.executable) in seen:
            continue
        seen.add((row.owner, row.executable))
        for p in runs(session, row):
            if p.regression is not None:
                out[p.id] = p.regression
    return out
