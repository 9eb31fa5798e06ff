"""Comparing two stored analyses: their reports and run facts, read back from the store."""

from __future__ import annotations

from sqlalchemy.orm import Session

from iodiag.analysis.models import Report
from iodiag.comparison import Comparison, RunFacts, compare
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
