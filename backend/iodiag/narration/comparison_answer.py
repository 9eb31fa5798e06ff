"""Answers to "is this run better than my last one?" and "what changed?", written from a ``Comparison``.

The service finds the user's previous run of the same executable and compares it (run A) with this one (run
B); this module turns that comparison into facts and an answer made of them, verified like every answer.
Without an earlier run the answer says so and how to compare by hand. No model writes these: the answer is
numbers and finding names, which a template states exactly.
"""

from __future__ import annotations

import time
from datetime import datetime

from iodiag.analysis.models import Severity
from iodiag.comparison.models import Comparison, FindingChange, FindingSide
from iodiag.core.units import human_seconds
from iodiag.narration.checking.facts import Fact
from iodiag.narration.checking.grounding import Grounding
from iodiag.narration.checking.untrusted import quote
from iodiag.narration.checking.verifier import verify
from iodiag.narration.intent.classify import Intent
from iodiag.narration.models import Answer, Citation

INTENT = Intent.COMPARE_RUNS.value
LISTED = 4  # findings named per group; the compare view has the rest


def _cost(x: FindingSide | None) -> str:
    if x is None or x.seconds is None:
        return "cost unknown"
    return f"{x.severity.value}, ≈ {human_seconds(x.seconds)}"


def _when(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC") if at is not None else "an earlier date"


def _finding_line(kind: str, f: FindingChange) -> str:
    if kind == "resolved":
        return f"Resolved: {f.code} {f.title} ({_cost(f.a)} in the previous run) is gone from this run."
    if kind == "new":
        return f"New: {f.code} {f.title} ({_cost(f.b)} in this run) was not in the previous run."
    return f"Changed: {f.code} {f.title} went from {_cost(f.a)} to {_cost(f.b)}."


def comparison_facts(cmp: Comparison, previous_start: datetime | None) -> list[Fact]:
    """One fact per line the answer may say: which run was compared, the verdict, times, findings."""
    facts = [
        Fact(
            "cmp:runs",
            "job",
            f"Compared with your previous run of {quote(cmp.a.executable or cmp.a.exe, 80)} "
            f"(job {cmp.a.jobid}, {cmp.a.nprocs} processes, started {_when(previous_start)}).",
        ),
        Fact("cmp:verdict", "verdict", cmp.verdict),
        Fact(
            "cmp:runtime",
            "data",
            f"Run time went from {human_seconds(cmp.a.runtime_s)} to {human_seconds(cmp.b.runtime_s)}.",
        ),
    ]
    groups = (
        ("resolved", cmp.findings_resolved),
        ("new", cmp.findings_new),
        ("changed", cmp.findings_changed),
    )
    for kind, changes in groups:
        for i, f in enumerate(changes[:LISTED]):
            facts.append(Fact(f"cmp:{kind}:{i}", "finding", _finding_line(kind, f), code=f.code))
        if len(changes) > LISTED:
            more = f"{len(changes) - LISTED} more {kind} findings are in the compare view."
            facts.append(Fact(f"cmp:{kind}:more", "finding", more))
    if not cmp.changed:
        facts.append(Fact("cmp:same", "summary", "Nothing changed: every number and finding is the same in both runs."))
    for i, note in enumerate(cmp.notes[:2]):
        facts.append(Fact(f"cmp:note:{i}", "summary", note))
    return facts


NO_EARLIER = (
    "There is no earlier finished run of {exe} to compare with: upload the earlier run's log (on the command "
    "line, pass it with `--previous EARLIER.darshan`), or compare two logs with "
    "`iodiag compare EARLIER.darshan THIS.darshan`."
)


def answer_comparison(
    cmp: Comparison | None, exe: str, previous_start: datetime | None = None, t0: float | None = None
) -> Answer:
    """The checked answer: the comparison's facts, in order; or why there is nothing to compare with."""
    t0 = time.monotonic() if t0 is None else t0
    if cmp is None:
        text = NO_EARLIER.format(exe=quote(exe or "this program", 80))
        facts = [Fact("cmp:none", "summary", text)]
    else:
        facts = comparison_facts(cmp, previous_start)
        text = "\n".join(f.text if f.kind in ("job", "verdict") else f"- {f.text}" for f in facts)
    codes = frozenset(f.code for f in facts if f.code)
    problems = frozenset(
        f.code
        for f in (cmp.findings_new + cmp.findings_changed if cmp else [])
        if f.b is not None and f.b.severity in (Severity.CRITICAL, Severity.WARNING)
    )
    check = verify(text, Grounding(facts, [], codes, problems))
    titles = {f.code: f.title for f in (cmp.findings_resolved + cmp.findings_new + cmp.findings_changed)} if cmp else {}
    return Answer(
        text=check.kept_text() if not check.passed else text,
        intent=INTENT,
        citations=[Citation(kind="finding", id=c, title=titles.get(c, "")) for c in sorted(codes)],
        provenance="template",
        verifier=check.report(0),
        elapsed_s=time.monotonic() - t0,
    )
