"""The T findings and trace plots of a streamed trace against the same log analysed with its trace held.

Each log is read twice: held (no budget) and streamed (a budget just below its segment count, so it is
"just above the budget"). The findings must have the same codes; their metrics must agree within the
tolerances ``trace_streamed`` states: exact for counts, bytes, ranks and files, 2 % for times and shares,
costs within 25 % (clipped per rank instead of per request), T05's count of repeating requests within
a factor of two (decided at run granularity across chunks).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from iodiag.analysis import analyze
from iodiag.analysis.models import Report
from iodiag.analysis.plots.data import plot_data
from iodiag.ingest import JobProfile, load_profile
from tests.analysis.test_trace_findings import REAL_DXT, SCENARIOS

SPECS = [
    s
    for s in SCENARIOS
    if s.stem
    in {
        "trace-straggler-rank",
        "trace-rank0-heavy",
        "trace-unbalanced-ranks",
        "trace-idle-gaps-checkpoints",
        "trace-rewrite-same-bytes",
        "trace-misaligned-writes",
        "trace-random-reads-resolved",
        "trace-small-writes-resolved",
        "trace-straggler-below-threshold",
    }
]
LOOSE = {"repeating_requests": 1.0}
"""Metrics allowed to differ by more than the default, relative."""


def _segments(p: JobProfile) -> int:
    return sum(len(t) for t in p.traces.values())


def _pair(path: Path) -> tuple[JobProfile, JobProfile]:
    held = load_profile(str(path), include=("DXT",), trace_budget=None)
    n = _segments(held)
    streamed = load_profile(str(path), include=("DXT",), trace_budget=max(n - 1, 0))
    assert streamed.trace_summaries and not streamed.traces
    return held, streamed


def _compare(a: Report, b: Report) -> None:
    ta = {f.code: f for f in a.findings if f.code[0] in "TH"}
    tb = {f.code: f for f in b.findings if f.code[0] in "TH"}
    assert set(ta) == set(tb)
    for code, fa in ta.items():
        fb = tb[code]
        mb = {m.name: m.value for m in fb.evidence}
        for m in fa.evidence:
            x, y = m.value, mb[m.name]
            if isinstance(x, str) or isinstance(y, str):
                assert x == y, (code, m.name)
                continue
            tol = LOOSE.get(m.name, 0.02)
            assert math.isclose(float(x), float(y), rel_tol=tol, abs_tol=1e-6), (code, m.name, x, y)
        assert [f.record_id for f in fa.files] == [f.record_id for f in fb.files], code
        assert fa.ranks == fb.ranks, code
        assert fa.files_total == fb.files_total, code
        if fa.impact is not None and fa.impact.seconds is not None:
            assert fb.impact is not None and fb.impact.seconds is not None
            assert math.isclose(fa.impact.seconds, fb.impact.seconds, rel_tol=0.25, abs_tol=1e-3), code
        assert fa.severity == fb.severity, code


@pytest.mark.parametrize("path", [p for p in REAL_DXT if p.exists()], ids=lambda p: p.name[:40])
def test_real_logs_same_findings_streamed(path: Path) -> None:
    held, streamed = _pair(path)
    _compare(analyze(held), analyze(streamed))


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_scenarios_same_findings_streamed(spec: Path, tmp_path: Path) -> None:
    from iodiag.synth.build import build_log
    from iodiag.synth.scenario import load_scenario

    s = load_scenario(spec)
    out = tmp_path / "s.darshan"
    build_log(s, out)
    held, streamed = _pair(out)
    report = analyze(streamed)
    fired = report.codes()
    assert set(s.expect.findings) <= fired and not set(s.expect.absent) & fired
    _compare(analyze(held), report)
    for f in report.findings:
        if f.code.startswith("T"):
            assert f.ranks and f.files and f.source_lines is None


def test_streamed_findings_are_deterministic() -> None:
    path = next(p for p in REAL_DXT if p.exists())
    _, a = _pair(path)
    _, b = _pair(path)
    ra, rb = analyze(a), analyze(b)
    assert [f.model_dump() for f in ra.findings] == [f.model_dump() for f in rb.findings]


@pytest.mark.parametrize("path", [p for p in REAL_DXT if p.exists()][:4], ids=lambda p: p.name[:40])
def test_plots_of_a_streamed_trace_keep_exact_totals(path: Path) -> None:
    held, streamed = _pair(path)
    a, b = plot_data(held), plot_data(streamed)
    assert a.timeline is not None and b.timeline is not None
    assert a.timeline.totals.ops == b.timeline.totals.ops and a.timeline.totals.bytes == b.timeline.totals.bytes
    assert a.timeline.layer_totals.keys() == b.timeline.layer_totals.keys()
    assert b.timeline.points_shown <= 20_000
    assert a.transfer_sizes is not None and b.transfer_sizes is not None
    assert a.transfer_sizes.histogram == b.transfer_sizes.histogram
    assert a.transfer_sizes.totals.ops == b.transfer_sizes.totals.ops
    assert a.phases is not None and b.phases is not None
    assert a.phases.start == b.phases.start and a.phases.end == b.phases.end
    assert a.phases.bytes == b.phases.bytes and a.phases.ops == b.phases.ops
    assert a.phases.last_rank == b.phases.last_rank
    if a.spatiality is not None:
        assert b.spatiality is not None
        assert [f.record_id for f in a.spatiality.files] == [f.record_id for f in b.spatiality.files]
        assert a.spatiality.totals.bytes == b.spatiality.totals.bytes
    if a.heatmap is not None:
        assert b.heatmap is not None
        total_a = a.heatmap.read_bytes + a.heatmap.write_bytes
        total_b = b.heatmap.read_bytes + b.heatmap.write_bytes
        assert math.isclose(total_a, total_b, rel_tol=0.5)
