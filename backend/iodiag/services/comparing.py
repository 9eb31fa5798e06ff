"""Comparing two stored analyses: their reports and run facts, read back from the store."""

from __future__ import annotations

from sqlalchemy.orm import Session

from iodiag.analysis.models import Report
from iodiag.comparison import Comparison, RunFacts, compare
from iodiag.services import history
from iodiag.store import analyses
from iodiag.store.models import Analysis


class NotReady(Exception):
    """One of the analyses has no report yet (queued, running or failed); the message is one line."""


def stored_report(session: Session, row: Analysis) -> Report:
    raw = analyses.output(session, row.id, "json") if row.status == "done" else None
    if raw is None:
        raise NotReady(f"analysis {row.id} is {row.status}: it has no report to compare yet")
    return Report.model_validate_json(raw)


def stored_facts(session: Session, row: Analysis) -> RunFacts | None:
    """None for analyses made before run facts were stored (their comparison leaves out sizes and OSTs)."""
    raw = analyses.output(session, row.id, "facts")
    return None if raw is None else RunFacts.model_validate_json(raw)


def compare_rows(session: Session, a: Analysis, b: Analysis, force: bool = False) -> Comparison:
    """Raises ``NotReady`` or ``iodiag.comparison.NotComparable`` (both one line)."""
    return compare(
        stored_report(session, a),
        stored_report(session, b),
        force,
        facts_a=stored_facts(session, a),
        facts_b=stored_facts(session, b),
    )


class NoHistory(Exception):
    """The application has no other finished run to compare with; the message is one line."""


def median_run(session: Session, row: Analysis) -> tuple[Analysis, int]:
    """The application's typical run: of its other finished runs with an I/O time, the one whose I/O time is
    the median (the lower one of an even count), and how many runs it was chosen from."""
    others = [p for p in history.runs(session, row) if p.id != row.id and p.io_time_s is not None]
    if not others:
        what = f"`{row.executable}`" if row.executable else "this job's executable"
        raise NoHistory(f"no other finished run of {what} by {row.owner} to compare with")
    ranked = sorted(others, key=lambda p: (p.io_time_s or 0.0, p.when))
    chosen = ranked[(len(ranked) - 1) // 2]
    baseline = session.get(Analysis, chosen.id)
    assert baseline is not None
    return baseline, len(ranked)


def compare_with_median(session: Session, row: Analysis) -> tuple[Comparison, Analysis, int]:
    """This run (B) against its application's median run (A): what is unusual about it."""
    baseline, n = median_run(session, row)
    return compare_rows(session, baseline, row), baseline, n
