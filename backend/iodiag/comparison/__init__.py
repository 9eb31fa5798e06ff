"""Comparing two runs: ``iodiag compare A.darshan B.darshan`` ("did my change help?").

``compare`` turns two reports into a ``Comparison`` (models.py); ``render`` shows it as text, Markdown, HTML or
JSON. Importing this package imports the analysis models (pydantic and numpy, not pandas): callers that must start
fast import it lazily.
"""

from iodiag.comparison.compare import NotComparable, compare, comparison_schema, executable, run_facts, run_summary
from iodiag.comparison.models import Comparison, FindingChange, FindingSide, MetricRow, RunFacts, RunSummary

__all__ = [
    "Comparison",
    "FindingChange",
    "FindingSide",
    "MetricRow",
    "NotComparable",
    "RunFacts",
    "RunSummary",
    "compare",
    "comparison_schema",
    "executable",
    "run_facts",
    "run_summary",
]
