"""Invariants every report must hold, whatever log it came from: checked over every log and fuzzed record
by the tests (tests/analysis/test_report_invariants.py) and the fuzzer (bench/fuzz_records.py).

* no NaN, infinity, negative size or time, or rank outside the job anywhere in the report;
* no "nan", "inf" or negative amount in any sentence a user reads;
* one number per fact: the verdict's causes carry their cards' seconds, the headline names the first
  cause with that number, and the causes are in the order the headline claims.
"""

from __future__ import annotations

import math
import re
from typing import Any

from iodiag.analysis.models import Confidence, Report
from iodiag.analysis.outcomes.verdict import ROOTS, SAME_COST, backs
from iodiag.core.units import human_seconds

# Fields that hold signed values by meaning (none today in the report): listed here, never silently.
SIGNED_FIELDS: frozenset[str] = frozenset()
RANK_IDS = frozenset({"slowest_rank", "ranks", "writer_rank_ids"})
"""Fields holding rank numbers (a list, or slowest_rank)."""
RANK_COUNTS = frozenset({"ranks", "writer_ranks", "reader_ranks", "writers"})
"""Fields holding a number of ranks (a scalar)."""
BAD_WORDS = re.compile(
    r"\b(nan|NaN|inf|infinity)\b|(?<![\w.])[-\u2212]\d[\d.,]*\s?(B|KiB|MiB|GiB|TiB|PiB|ms|µs|s|min|h)\b"
)


def _walk(obj: Any, path: str = "") -> list[tuple[str, Any]]:
    if isinstance(obj, dict):
        return [kv for k, v in obj.items() for kv in _walk(v, f"{path}.{k}")]
    if isinstance(obj, list):
        return [kv for i, v in enumerate(obj) for kv in _walk(v, f"{path}[{i}]")]
    return [(path, obj)]


def _field(path: str) -> str:
    return re.sub(r"\[\d+\]", "", path.rsplit(".", 1)[-1])


def number_problems(report: Report) -> list[str]:
    """Every number in the report that no valid job can have."""
    nprocs = max(report.job.nprocs, 1)
    bad = []
    for path, v in _walk(report.model_dump(mode="python")):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        name = _field(path)
        if isinstance(v, float) and not math.isfinite(v):
            bad.append(f"{path} = {v}")
        elif name in RANK_IDS and (path.endswith("]") or name == "slowest_rank"):
            if not -1 <= v < nprocs:
                bad.append(f"{path} = {v} (rank outside 0..{nprocs - 1})")
        elif name in RANK_COUNTS:
            if not 0 <= v <= nprocs:
                bad.append(f"{path} = {v} (more ranks than the job's {nprocs})")
        elif v < 0 and name not in SIGNED_FIELDS and name != "value":
            bad.append(f"{path} = {v}")
    for f in report.findings:
        for m in f.evidence:
            if isinstance(m.value, float) and not math.isfinite(m.value):
                bad.append(f"{f.code}.{m.name} = {m.value}")
    return bad


def text_problems(report: Report) -> list[str]:
    texts = [report.verdict.headline, report.verdict.where_time_went, *report.verdict.caveats]
    texts += [c.summary for c in report.verdict.causes]
    texts += [f.message for f in report.findings]
    return [t for t in texts if BAD_WORDS.search(t)]


def ranking_problems(report: Report) -> list[str]:
    """The headline, the causes and the finding cards must tell one story with one number per fact."""
    v = report.verdict
    out = []
    cards = {f.code: f for f in report.findings}
    io = report.io_share.slowest_rank_io_s if report.io_share else math.inf
    for c in v.causes:
        card = cards.get(c.code)
        if card is None or card.impact is None or card.impact.seconds is None:
            out.append(f"cause {c.code} has no priced card")
            continue
        if not math.isclose(c.seconds, min(card.impact.seconds, io), rel_tol=1e-9, abs_tol=1e-9):
            out.append(f"cause {c.code}: verdict {c.seconds} s, card {card.impact.seconds} s")
    # Largest first (upper bounds after measured costs); two costs within SAME_COST are the same time seen at
    # two layers, and the root cause may lead, as it may a lower-layer finding on its files that it backs.
    for a, b in zip(v.causes, v.causes[1:], strict=False):
        low_a, low_b = a.confidence is Confidence.LOW, b.confidence is Confidence.LOW
        root_leads = b.code in ROOTS.get(a.code, ()) and b.code in cards and backs(cards[b.code], cards[a.code])
        if (low_a and not low_b) or (low_a == low_b and b.seconds * SAME_COST > a.seconds + 1e-9 and not root_leads):
            out.append(f"causes out of order: {[(c.code, c.seconds) for c in v.causes]}")
            break
    if v.causes:
        top = v.causes[0]
        if f"({top.code})" not in v.headline and f"({top.code}: {top.subject})" not in v.headline:
            out.append(f"headline does not name the first cause {top.code}: {v.headline}")
        if human_seconds(top.seconds) not in v.headline:
            out.append(f"headline lacks the first cause's {human_seconds(top.seconds)}: {v.headline}")
        bigger = [c.code for c in v.causes if c.seconds * SAME_COST > top.seconds]
        if bigger and "the largest cost is" in v.headline:
            out.append(f"headline says largest while {bigger} cost more")
    elif v.io_matters and "no single cause stands out" in v.headline:
        out.append("bare 'no single cause stands out'")
    return out


def problems(report: Report) -> list[str]:
    """Every invariant the report breaks (empty: it holds them all)."""
    return number_problems(report) + text_problems(report) + ranking_problems(report)
