"""Analysis: deterministic findings from a job profile.

Where things are: each check is a function in ``checks/`` registered with
``@check`` (``registry.py``); shared derived data lives in ``context.py``;
the findings schema is ``models.py``; ``engine.analyze`` runs them all.
"""

from iodiag.analysis.engine import analyze
from iodiag.analysis.models import Finding, JobFacts, Report, Severity

__all__ = ["Finding", "JobFacts", "Report", "Severity", "analyze"]
