"""The finding → document map, checked both ways.

Every registered finding code needs a document that explains it, every recommendation id needs
a document, and a document may only name codes and recommendation ids that exist. A finding the
narrator cannot ground in a document, or a document pointing at a renamed code, is caught here
(``iodiag knowledge check``, and the tests) rather than in front of a user.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from iodiag.knowledge.loader import Doc, scan_docs


def registered_codes() -> set[str]:
    import iodiag.analysis.checks  # noqa: F401  (importing the checks registers them)
    from iodiag.analysis.registry import CHECKS

    return set(CHECKS)


def recommendation_ids() -> set[str]:
    from iodiag.analysis.recommendations import RECOMMENDATIONS

    return set(RECOMMENDATIONS)


def map_problems(docs: Iterable[Doc], codes: set[str], recommendations: set[str]) -> list[str]:
    """One line per broken link between documents, finding codes and recommendation ids."""
    docs = list(docs)
    problems: list[str] = []
    for d in docs:
        for c in d.meta.codes:
            if c not in codes:
                problems.append(f"{d.path}: field 'codes': {c} is not a registered finding code")
        for r in d.meta.recommendations:
            if r not in recommendations:
                problems.append(f"{d.path}: field 'recommendations': {r} is not a recommendation id")
    covered_codes = {c for d in docs for c in d.meta.codes}
    covered_recs = {r for d in docs for r in d.meta.recommendations}
    problems += [f"finding {c}: no document lists it in 'codes'" for c in sorted(codes - covered_codes)]
    problems += [
        f"recommendation {r}: no document lists it in 'recommendations'" for r in sorted(recommendations - covered_recs)
    ]
    return problems


def check_knowledge(directory: Path) -> list[str]:
    """Every problem with the documents of ``directory``, one line each (empty: all good)."""
    docs, problems = scan_docs(directory)
    return problems + map_problems(docs, registered_codes(), recommendation_ids())
