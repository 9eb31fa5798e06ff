"""Plot-ready data: bounded, exact totals, deterministic, and fine without DXT."""

from __future__ import annotations

import os
import time
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from iodiag.analysis.plots import data as plots
from iodiag.analysis.views.trace import top_trace, traces
from iodiag.ingest import JobProfile, load_profile
from tests.conftest import shared_log, wheel_log

DXT_LOGS = [
    shared_log(
        "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
    ),
    *sorted(shared_log("drishti").glob("*.darshan")),
    *sorted(shared_log("darshan-logs/hdf5_diagonal_write_only").glob("*dxt*.darshan")),
    shared_log("darshan-logs/nonmpi_dxt_anonymized/nonmpi_dxt_anonymized.darshan"),
    shared_log(
        "darshan-logs/runtime_and_dxt_heatmaps_diagonal_write_only/runtime_and_dxt_heatmaps_diagonal_write_only.darshan"
    ),
]
BADOST = wheel_log("sample-badost.darshan")


@cache
def _load(path: Path) -> JobProfile:
    return load_profile(str(path), include=("DXT",))


def _columns(plot: object, names: tuple[str, ...]) -> list[int]:
    return [len(getattr(plot, n)) for n in names]


def _trace_totals(profile: JobProfile) -> tuple[int, int, float]:
    ts = list(traces(profile).values())
    return (
        sum(int(t.length.sum()) for t in ts),
        sum(len(t) for t in ts),
        sum(float((t.end - t.start).sum()) for t in ts),
    )


def _check_timeline(tl: plots.TimelinePlot, profile: JobProfile, max_points: int) -> None:
    cols = ("rank", "start", "end", "op", "layer", "bytes", "ops")
    assert set(_columns(tl, cols)) == {tl.points_shown}
    assert tl.points_shown <= max_points
    nbytes, nops, ttime = _trace_totals(profile)
    assert (tl.totals.bytes, tl.totals.ops) == (nbytes, nops)
    assert tl.totals.time == pytest.approx(ttime)
    assert tl.points_total == nops
    assert sum(tl.ops) == nops and sum(tl.bytes) == nbytes  # every segment is in exactly one bar
    assert all(e >= s for s, e in zip(tl.start, tl.end, strict=True))
    if nops <= max_points:
        assert tl.points_shown == nops and tl.quantum == 0.0


@pytest.mark.parametrize("log", DXT_LOGS, ids=lambda p: p.name)
def test_real_dxt_logs(log: Path) -> None:
    profile = _load(log)
    data = plots.plot_data(profile)
    assert data.timeline and data.transfer_sizes and data.spatiality and data.phases
    _check_timeline(data.timeline, profile, plots.MAX_POINTS)
    nbytes, nops, _ = _trace_totals(profile)

    ts = data.transfer_sizes
    assert set(_columns(ts, ("time", "size", "op", "layer"))) == {ts.points_shown} and ts.points_shown <= 20_000
    assert (ts.points_total, ts.totals.bytes, ts.totals.ops) == (nops, nbytes, nops)
    h = ts.histogram
    assert sum(map(sum, h.counts)) == nops and sum(map(sum, h.bytes)) == nbytes
    assert all(len(c) == len(h.bins) == 10 for c in h.counts)

    top = top_trace(profile)
    assert top is not None
    sp = data.spatiality
    assert set(_columns(sp, ("offset", "length", "time", "file", "op"))) == {sp.points_shown}
    assert sp.points_shown <= 20_000
    assert sum(f.bytes for f in sp.files) == sp.totals.bytes and sum(f.ops for f in sp.files) == sp.points_total
    assert sum(f.segments_shown for f in sp.files) == sp.points_shown
    assert len(sp.files) <= plots.TOP_FILES and sp.files_total == len(np.unique(top.file))
    assert all(0 <= i < len(sp.files) for i in sp.file)

    ph = data.phases
    assert ph.points_total == ph.points_shown == len(ph.start)
    assert sum(ph.ops) == ph.totals.ops == len(top) and sum(ph.bytes) == ph.totals.bytes == int(top.length.sum())
    assert all(ph.ranks[i] >= 1 and ph.last_end[i] <= ph.end[i] + 1e-9 for i in range(len(ph.start)))


@pytest.mark.parametrize("max_points", [50, 400, 5_000])
@pytest.mark.parametrize("log", [DXT_LOGS[1], DXT_LOGS[-2]], ids=lambda p: p.name)
def test_downsampling_keeps_exact_totals(log: Path, max_points: int) -> None:
    profile = _load(log)
    tl = plots.timeline(profile, max_points=max_points)
    assert tl is not None
    groups = len({(la, r, o) for la, r, o in zip(tl.layer, tl.rank, tl.op, strict=True)})
    nbytes, nops, _ = _trace_totals(profile)
    if tl.quantum == float("inf"):  # more (layer, rank, op) groups than points: the busiest kept
        assert tl.points_shown == max_points and sum(tl.bytes) <= nbytes and tl.totals.bytes == nbytes
    else:
        _check_timeline(tl, profile, max_points)
        assert tl.quantum > 0 and groups <= max_points
    ts = plots.transfer_sizes(profile, max_points=max_points)
    assert ts is not None and ts.points_shown <= max_points and ts.totals.bytes == nbytes
    assert sum(map(sum, ts.histogram.counts)) == nops
    sp = plots.spatiality(profile, max_points=max_points)
    assert sp is not None and sp.points_shown <= max_points
    assert sum(f.bytes for f in sp.files) == sp.totals.bytes


def test_deterministic() -> None:
    for log in (DXT_LOGS[1], DXT_LOGS[-2]):
        a = plots.plot_data(load_profile(str(log), include=("DXT",))).model_dump_json()
        b = plots.plot_data(load_profile(str(log), include=("DXT",))).model_dump_json()
        assert a == b
        assert plots.PlotData.model_validate_json(a).model_dump_json() == a


def test_without_dxt_and_osts() -> None:
    profile = load_profile(str(DXT_LOGS[0]))  # a DXT log read without its traces
    data = plots.plot_data(profile)
    assert data.timeline is None and data.transfer_sizes is None and data.spatiality is None and data.phases is None

    bad = plots.plot_data(load_profile(str(BADOST)))
    assert bad.timeline is None and bad.osts is not None
    o = bad.osts
    assert o.points_total == o.points_shown == len(o.ost) == len(o.bytes) == len(o.time) == len(o.files) > 1
    assert o.ost == sorted(o.ost)
    assert o.totals.bytes == round(sum(o.bytes)) and o.totals.time == pytest.approx(sum(o.time))


def test_size_bins_follow_darshan() -> None:
    sizes = np.array([0, 100, 101, 1024, 1025, 1 << 20, (1 << 20) + 1, 1 << 30, (1 << 30) + 1])
    assert plots.size_bin(sizes).tolist() == [0, 0, 1, 1, 2, 4, 5, 8, 9]


@pytest.mark.skipif(os.environ.get("IODIAG_SLOW") != "1", reason="set IODIAG_SLOW=1 for the 1 M-segment case")
def test_million_segments_fast_and_bounded() -> None:
    from iodiag.synth.dxt import cached_bench_log

    profile = load_profile(str(cached_bench_log(1_000_000)), include=("DXT",))
    plots.plot_data(profile)  # warm-up (imports, first-call allocations)
    t0 = time.perf_counter()
    data = plots.plot_data(profile)
    elapsed = time.perf_counter() - t0
    assert elapsed < 1.5, f"plot_data took {elapsed:.2f} s on 1 M segments"
    assert data.timeline is not None and data.transfer_sizes is not None and data.spatiality is not None
    _check_timeline(data.timeline, profile, plots.MAX_POINTS)
    assert data.transfer_sizes.points_total == 1_000_000 and data.transfer_sizes.points_shown <= plots.MAX_POINTS
    assert data.spatiality.points_shown <= plots.MAX_POINTS
