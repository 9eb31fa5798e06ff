"""DXT traces summarised while streaming (``ingest.trace_stream``) against the same traces held whole.

Every log here is small; ``trace_budget=0`` forces the streaming path, and a small reader chunk makes the
stream arrive in many pieces, so merging across chunks is exercised.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iodiag.analysis.checks.trace_requests import random_mask
from iodiag.analysis.views.trace import busy_intervals, repeats
from iodiag.ingest import libreader, load_profile
from iodiag.ingest.trace import Trace
from iodiag.ingest.trace_stream import TraceStream, TraceSummary, union
from tests.analysis.test_trace_findings import DRISHTI, MPI_IO_TEST, NONMPI, PARTIAL, REAL_DXT

LOGS = [p for p in REAL_DXT if p.exists()]


def _both(path: Path, module: str, chunk: int | None = None) -> tuple[Trace, TraceSummary]:
    held = load_profile(str(path), include=("DXT",), trace_budget=None).traces[module]
    old = libreader.DXT_CHUNK_SEGMENTS
    try:
        if chunk is not None:
            libreader.DXT_CHUNK_SEGMENTS = chunk
        streamed = load_profile(str(path), include=("DXT",), trace_budget=0, isolate=chunk is None)
    finally:
        libreader.DXT_CHUNK_SEGMENTS = old
    assert not streamed.traces, "a streamed profile holds no trace"
    return held, streamed.trace_summaries[module]


def _per_record_op(tr: Trace, s: TraceSummary, values: np.ndarray) -> np.ndarray:
    """Sum ``values`` of the held trace per (record, op) in the summary's record order."""
    key = {(int(s.file_ids[f]), int(r)): i for i, (f, r) in enumerate(zip(s.rec_file, s.rec_rank, strict=True))}
    rec = np.array([key[(int(tr.file_ids[f]), int(r))] for f, r in zip(tr.file, tr.rank, strict=True)])
    return np.bincount(rec * 2 + tr.op, weights=values, minlength=2 * s.records)


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:40])
@pytest.mark.parametrize("chunk", [None, 64], ids=["one-chunk", "many-chunks"])
def test_accumulators_match_the_held_trace(path: Path, chunk: int | None) -> None:
    for module in ("DXT_POSIX", "DXT_MPIIO"):
        held = load_profile(str(path), include=("DXT",), trace_budget=None).traces.get(module)
        if held is None or len(held) == 0:
            continue
        tr, s = _both(path, module, chunk)
        assert s.segments == len(tr) and s.records == tr.records
        assert np.array_equal(s.ops, np.rint(_per_record_op(tr, s, np.ones(len(tr)))).astype(np.int64))
        assert np.array_equal(s.bytes, np.rint(_per_record_op(tr, s, tr.length.astype(float))).astype(np.int64))
        assert np.allclose(s.time, _per_record_op(tr, s, tr.end - tr.start))
        # The union of busy intervals is exact, however the chunks cut the records.
        bs, be = busy_intervals(tr.start, tr.end)
        us, ue = union(np.concatenate([v[0] for v in s.busy.values()]), np.concatenate([v[1] for v in s.busy.values()]))
        assert np.array_equal(us, bs) and np.array_equal(ue, be)
        # Per-request flags: the same segments as the in-memory tests.
        if module == "DXT_POSIX":
            small = (tr.length < s.small_bytes) & (tr.length > 0)
            assert s.flags["small"].ops.sum() == small.sum()
            assert s.flags["random"].ops.sum() == random_mask(tr).sum()
        # Spans add up to the trace, and none holds a gap as long as span_gap.
        assert s.spans.ops.sum() == len(tr)
        assert s.spans.bytes.sum() == tr.length.sum()
        # Distinct bytes per (file, op): the union of byte ranges, as the in-memory repeats view counts them.
        _, lo, hi = s.ranges
        assert int((hi - lo).sum()) == int(tr.length.sum()) - int(repeats(tr).repeated.sum())


def test_the_sample_is_every_kth_segment_and_bounded() -> None:
    s = TraceStream("DXT_POSIX", sample_cap=100)
    rng = np.random.default_rng(1)
    seg = np.zeros(1000, dtype=[("offset", "<i8"), ("length", "<i8"), ("start", "<f8"), ("end", "<f8")])
    seg["offset"] = np.arange(1000) * 10
    seg["length"] = 10
    seg["start"] = np.sort(rng.random(1000))
    seg["end"] = seg["start"] + 1e-4
    for i in range(10):  # ten records of 100 writes each, one chunk per record
        s.add([(1000 + i, i, "h", 100, 0)], seg[i * 100 : (i + 1) * 100].tobytes())
    out = s.build()
    assert len(out.sample) <= 100
    k = out.sample_stride
    assert k > 1
    assert np.array_equal(out.sample.offset, seg["offset"][::k])


def test_caps_bound_memory_and_keep_totals_exact() -> None:
    # 20,000 requests of one record with gaps: without caps, 20,000 spans and busy intervals.
    n = 20_000
    seg = np.zeros(n, dtype=[("offset", "<i8"), ("length", "<i8"), ("start", "<f8"), ("end", "<f8")])
    seg["offset"] = np.arange(n) * 4096
    seg["length"] = 4096
    seg["start"] = np.arange(n) * 1.0 + np.linspace(0, 0.5, n)
    seg["end"] = seg["start"] + 0.25
    s = TraceStream("DXT_POSIX", span_cap=1000, interval_cap=1000)
    for i in range(20):
        s.add([(7, 0, "h", 1000, 0)], seg[i * 1000 : (i + 1) * 1000].tobytes())
    out = s.build()
    assert len(out.spans) <= 1000
    ((bs, _be),) = out.busy.values()
    assert len(bs) <= 1000 and out.coarsened > 0
    assert out.ops.sum() == n and out.spans.ops.sum() == n and out.bytes.sum() == n * 4096


def test_budget_decides_and_small_logs_stay_held() -> None:
    p = load_profile(str(MPI_IO_TEST), include=("DXT",))
    assert p.traces and not p.trace_summaries  # the default budget is far above a small log
    total = sum(len(t) for t in p.traces.values())
    assert load_profile(str(MPI_IO_TEST), include=("DXT",), trace_budget=total).traces
    above = load_profile(str(MPI_IO_TEST), include=("DXT",), trace_budget=total - 1)
    assert above.trace_summaries and not above.traces
    assert above.has("DXT_POSIX") and above.modules["DXT_POSIX"].loaded
    assert above.meta.nodes == p.meta.nodes


def test_env_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IODIAG_TRACE_BUDGET", "0")
    assert load_profile(str(PARTIAL), include=("DXT",)).trace_summaries
    monkeypatch.setenv("IODIAG_TRACE_BUDGET", "not a number")
    assert load_profile(str(PARTIAL), include=("DXT",)).traces


@pytest.mark.parametrize("path", [DRISHTI, NONMPI], ids=lambda p: p.name[:30])
def test_same_log_same_summary(path: Path) -> None:
    if not path.exists():
        pytest.skip("shared log missing")
    a = load_profile(str(path), include=("DXT",), trace_budget=0).trace_summaries["DXT_POSIX"]
    b = load_profile(str(path), include=("DXT",), trace_budget=0).trace_summaries["DXT_POSIX"]
    for field in ("ops", "bytes", "time", "first", "last", "rec_file", "rec_rank"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    assert np.array_equal(a.spans.start, b.spans.start)
    assert np.array_equal(a.sample.start, b.sample.start)
