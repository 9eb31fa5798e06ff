"""Analysis: deterministic findings from a job profile, in floors that import only downwards.

- ``models.py`` (the report schema), ``registry.py`` (``@check`` and each finding's metadata),
  ``costs.py`` (how a finding's time is priced) and ``recommendations.py`` (the fix catalogue).
- ``views/``: data derived from the profile (``views/context.py`` holds it and memoises the rest).
- ``hits/``: hit builders that several checks share.
- ``checks/``: one function per finding, registered with ``@check``; a check reads views and hits.
- ``outcomes/``: severity, the verdict and ranking, actions and their safety, advice, invariants.
- ``plots/``: plot series for the UI and exports.
- ``engine.analyze`` runs it all.
"""

from iodiag.analysis.engine import analyze
from iodiag.analysis.models import Finding, JobFacts, Report, Severity

__all__ = ["Finding", "JobFacts", "Report", "Severity", "analyze"]
