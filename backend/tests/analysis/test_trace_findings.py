"""The DXT trace views (phases, per-rank statistics, repeated ranges) and the T findings built on them.

Real logs: what is true of each is explained next to its assertions. Scenarios: every
``evals/scenarios/trace-*.yaml`` is built with its DXT traces and must fire exactly what it labels.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from iodiag.analysis import analyze
from iodiag.analysis.models import Finding, Report
from iodiag.analysis.registry import CHECKS
from iodiag.analysis.views.context import Context
from iodiag.analysis.views.trace import (
    busy_intervals,
    gap_threshold,
    phase_stragglers,
    phases,
    rank_stats,
    repeats,
    top_trace,
)
from iodiag.core.thresholds import Thresholds
from iodiag.ingest import load_profile
from iodiag.ingest.trace import Trace
from tests.conftest import REPO, shared_log, wheel_log

T_CODES = ("T01", "T02", "T03", "T04", "T05")
DRISHTI = shared_log("drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan")
MPI_IO_TEST = shared_log(
    "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
)
DIAGONAL = shared_log(
    "darshan-logs/runtime_and_dxt_heatmaps_diagonal_write_only/runtime_and_dxt_heatmaps_diagonal_write_only.darshan"
)
NONMPI = shared_log("darshan-logs/nonmpi_dxt_anonymized/nonmpi_dxt_anonymized.darshan")
PARTIAL = shared_log("darshan-logs/partial_data_dxt/partial_data_dxt.darshan")
HDF5_DIAG = shared_log("darshan-logs/hdf5_diagonal_write_only/hdf5_diagonal_write_1_byte_dxt.darshan")
REAL_DXT = [DRISHTI, MPI_IO_TEST, DIAGONAL, NONMPI, PARTIAL, HDF5_DIAG, wheel_log("sample-dxt-simple.darshan")]
SCENARIOS = sorted((REPO / "evals" / "scenarios").glob("trace-*.yaml"))


def _trace(rank: list[int], start: list[float], end: list[float], **kw: list[int]) -> Trace:
    n = len(rank)
    return Trace(
        module="DXT_POSIX",
        rank=np.array(rank, dtype=np.int32),
        file=np.array(kw.get("file", [0] * n), dtype=np.int32),
        op=np.array(kw.get("op", [0] * n), dtype=np.int8),
        offset=np.array(kw.get("offset", [0] * n), dtype=np.int64),
        length=np.array(kw.get("length", [1] * n), dtype=np.int64),
        start=np.array(start, dtype=np.float64),
        end=np.array(end, dtype=np.float64),
        file_ids=np.arange(1, max(kw.get("file", [0])) + 2, dtype=np.uint64),
    )


def _t(report: Report, code: str) -> Finding:
    f = report.finding(code)
    assert f is not None, f"{code} did not fire: {sorted(report.codes())}"
    return f


def _window(f: Finding) -> tuple[float, float]:
    ws, we = f.metric("window_start"), f.metric("window_end")
    assert isinstance(ws, float) and isinstance(we, float)
    return ws, we


# --- views ---------------------------------------------------------------------------------------------


def test_busy_intervals_merge_overlapping_and_touching_segments() -> None:
    s, e = busy_intervals(np.array([5.0, 0.0, 1.0, 2.0, 10.0]), np.array([6.0, 1.0, 1.5, 3.0, 11.0]))
    assert s.tolist() == [0.0, 2.0, 5.0, 10.0]
    assert e.tolist() == [1.5, 3.0, 6.0, 11.0]


def test_gap_threshold_is_mean_plus_std_with_a_floor() -> None:
    gaps = np.array([0.1, 0.1, 0.1, 5.0])
    assert gap_threshold(gaps) == pytest.approx(gaps.mean() + gaps.std())
    assert gap_threshold(gaps, min_gap=10.0) == 10.0
    assert gap_threshold(np.empty(0), 0.5) == 0.5


def test_phases_split_at_long_gaps_only() -> None:
    # Two bursts of jittery I/O (gaps of 0.1 s) separated by 5 s: two phases.
    start = [0.0, 0.6, 1.2, 6.7, 7.3]
    tr = _trace([0, 1, 0, 1, 2], start, [x + 0.5 for x in start], length=[10, 20, 30, 40, 50])
    ph = phases(tr)
    assert len(ph) == 2
    assert ph.start.tolist() == [0.0, 6.7]
    assert ph.end.tolist() == pytest.approx([1.7, 7.8])
    assert ph.bytes.tolist() == [60, 90]
    assert ph.ops.tolist() == [3, 2]
    assert ph.ranks.tolist() == [2, 2]
    assert ph.seg_phase.tolist() == [0, 0, 0, 1, 1]
    assert ph.gaps.tolist() == pytest.approx([5.0])


def test_equal_gaps_stay_separate_phases() -> None:
    # Periodic checkpoints: every gap equals the mean, std 0; "below mean + std" keeps them apart.
    start = [0.0, 10.0, 20.0]
    ph = phases(_trace([0, 0, 0], start, [x + 1 for x in start]))
    assert len(ph) == 3


def test_phase_stragglers_count_only_the_last_ranks_own_io() -> None:
    # Phase 0-10 s: rank 0 busy 0-2, rank 1 busy 0-4 and 8-10 (alone 2 s of its own I/O in 4-10).
    tr = _trace([0, 1, 1], [0.0, 0.0, 8.0], [2.0, 4.0, 10.0])
    ph = phases(tr, min_gap=100.0)
    st = phase_stragglers(tr, ph)
    assert st.last_rank.tolist() == [1]
    assert st.second_end.tolist() == [2.0]
    assert st.alone.tolist() == pytest.approx([4.0])  # 2-4 and 8-10
    assert st.alone_start.tolist() == [2.0]
    assert (st.slowest_rank.tolist(), st.fastest_rank.tolist()) == ([1], [0])
    assert st.slowest_busy.tolist() == pytest.approx([6.0])


def test_rank_stats() -> None:
    tr = _trace([3, 0, 3], [0.0, 1.0, 2.0], [1.0, 1.5, 4.0], length=[5, 7, 11])
    rs = rank_stats(tr)
    assert rs.rank.tolist() == [0, 3]
    assert rs.ops.tolist() == [1, 2]
    assert rs.bytes.tolist() == [7, 16]
    assert rs.time.tolist() == pytest.approx([0.5, 3.0])
    assert (rs.first.tolist(), rs.last.tolist()) == ([1.0, 0.0], [1.5, 4.0])


def test_repeats_match_a_brute_force_count() -> None:
    rng = np.random.default_rng(7)
    n = 400
    file = rng.integers(0, 3, n)
    op = rng.integers(0, 2, n)
    off = rng.integers(0, 5000, n)
    length = rng.integers(0, 300, n)
    tr = _trace(
        [0] * n,
        [0.0] * n,
        [1.0] * n,
        file=file.tolist(),
        op=op.tolist(),
        offset=off.tolist(),
        length=length.tolist(),
    )
    rep = repeats(tr)
    got = {(int(f), int(o)): int(r) for f, o, r in zip(rep.file, rep.op, rep.repeated, strict=True)}
    want = {}
    for f in range(3):
        for o in range(2):
            sel = (file == f) & (op == o)
            covered = np.zeros(6000, dtype=bool)
            for a, b in zip(off[sel], off[sel] + length[sel], strict=True):
                covered[a:b] = True
            extra = int(length[sel].sum()) - int(covered.sum())
            if extra:
                want[(f, o)] = extra
    assert got == want


def test_repeats_flag_the_second_pass() -> None:
    tr = _trace([0, 0, 1, 1], [0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0], offset=[0, 100, 0, 100], length=[100] * 4)
    rep = repeats(tr)
    assert rep.repeated.tolist() == [200]
    assert rep.unique.tolist() == [200]
    assert rep.segment_mask.tolist() == [False, False, True, True]


# --- real logs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", REAL_DXT, ids=lambda p: p.name[:40])
def test_phases_partition_every_real_trace(path: Path) -> None:
    profile = load_profile(str(path), include=("DXT",))
    for module in ("DXT_POSIX", "DXT_MPIIO"):
        tr = profile.trace(module)
        if tr is None or len(tr) == 0:
            continue
        ph = phases(tr, 0.001 * profile.meta.runtime_s)
        # Every segment lies in exactly one phase, and the phases add up to the trace.
        assert int(ph.ops.sum()) == len(tr)
        assert int(ph.bytes.sum()) == int(tr.length.sum())
        assert np.all(tr.start >= ph.start[ph.seg_phase]) and np.all(tr.end <= ph.end[ph.seg_phase] + 1e-12)
        assert np.all(np.diff(ph.start) > 0)
        assert np.all(ph.gaps >= ph.threshold)
        assert np.all(ph.ranks >= 1)


@pytest.mark.parametrize("path", REAL_DXT, ids=lambda p: p.name[:40])
def test_t_findings_on_real_logs_carry_windows_and_numbers(path: Path) -> None:
    profile = load_profile(str(path), include=("DXT",))
    report = analyze(profile)
    assert not [p for p in report.problems if p.startswith("check T")]
    for f in report.findings:
        if not f.code.startswith("T"):
            continue
        ws, we = _window(f)
        assert 0 <= ws <= we <= profile.meta.runtime_s + 1
        assert f.ranks and f.files and f.message
        assert any(ch.isdigit() for ch in f.message)


def test_drishti_sample_rewrites_half_of_its_bytes() -> None:
    # 384 ranks write one HDF5 file collectively. The counters already say 127.85 GiB of 247.85 GiB
    # POSIX writes went beyond the file's extent (P10); at the MPI-IO layer (the file's top traced
    # layer) the trace shows where: 120 GiB of the 240 GiB passed to MPI-IO land on byte ranges
    # already written, by all 384 ranks over the whole run.
    report = analyze(load_profile(str(DRISHTI), include=("DXT",)))
    assert "P10" in report.codes()
    t05 = _t(report, "T05")
    assert t05.metric("op") == "write"
    assert t05.files[0].path.endswith("8a_parallel_3Db_0000001.h5")
    again = t05.metric("bytes_written_again")
    assert isinstance(again, int) and 119 << 30 < again < 121 << 30
    assert t05.metric("trace") == "DXT"
    # Collective writes by every rank at the same pace: no straggler, no rank-0 or unbalanced ranks,
    # and the I/O fills 94 % of the run (J02), so no long idle gap.
    assert not {"T01", "T02", "T03", "T04"} & report.codes()


def test_diagonal_writes_are_not_stragglers() -> None:
    # 32 ranks each write 1 byte, one after the other (a diagonal in the heatmap). The last rank
    # finishes 100 ms after the others, but its own I/O lasts microseconds: it is late, not slow.
    report = analyze(load_profile(str(DIAGONAL), include=("DXT",)))
    assert not {c for c in report.codes() if c.startswith("T")}


def test_top_trace_counts_mpiio_files_once() -> None:
    profile = load_profile(str(MPI_IO_TEST), include=("DXT",))
    mpi, posix = profile.trace("DXT_MPIIO"), profile.trace("DXT_POSIX")
    assert mpi is not None and posix is not None
    top = top_trace(profile)
    assert top is not None
    # The shared test file is traced at MPI-IO; POSIX keeps only the files MPI-IO never touched.
    under = np.isin(posix.file_ids[posix.file], mpi.file_ids)
    assert len(top) == len(mpi) + int((~under).sum())
    assert int(top.length.sum()) == int(mpi.length.sum()) + int(posix.length[~under].sum())


def test_no_trace_no_t_checks_and_no_trace_work() -> None:
    # Read without DXT, the profile has no traces: the T checks find nothing and build nothing.
    profile = load_profile(str(DRISHTI))
    assert not profile.traces
    ctx = Context(profile)
    for code in T_CODES:
        assert CHECKS[code].fn(ctx, Thresholds()) is None
    assert all(v is None for k, v in ctx.cache.items() if k.startswith("trace"))
    assert not {c for c in analyze(profile).codes() if c.startswith("T")}


# --- scenarios -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", SCENARIOS, ids=lambda p: p.stem)
def test_trace_scenarios_fire_what_they_label(spec: Path, tmp_path: Path) -> None:
    from iodiag.synth.build import build_log
    from iodiag.synth.scenario import load_scenario

    s = load_scenario(spec)
    assert s.dxt, "trace scenarios must record DXT"
    out = tmp_path / "s.darshan"
    build_log(s, out)
    report = analyze(load_profile(str(out), include=("DXT",)))
    fired = report.codes()
    assert set(s.expect.findings) <= fired, f"missed {set(s.expect.findings) - fired}"
    assert not set(s.expect.absent) & fired, f"false alarms {set(s.expect.absent) & fired}"
    for f in report.findings:
        if f.code.startswith("T"):
            _window(f)
            assert f.ranks and f.files


def test_trace_scenarios_cover_every_t_code() -> None:
    import yaml

    pos: set[str] = set()
    neg: set[str] = set()
    for spec in SCENARIOS:
        expect = yaml.safe_load(spec.read_text())["expect"]
        pos |= set(expect.get("findings", []))
        neg |= set(expect.get("absent", []))
    assert set(T_CODES) <= pos and set(T_CODES) <= neg


def _build(name: str, tmp_path: Path) -> Report:
    from iodiag.synth.build import build_log
    from iodiag.synth.scenario import load_scenario

    out = tmp_path / f"{name}.darshan"
    build_log(load_scenario(REPO / "evals" / "scenarios" / f"{name}.yaml"), out)
    return analyze(load_profile(str(out), include=("DXT",)))


def test_straggler_evidence(tmp_path: Path) -> None:
    f = _t(_build("trace-straggler-rank", tmp_path), "T01")
    # 7 ranks finish 32 x 10 ms writes at 0.32 s; rank 5 (2x slower) writes alone until 0.64 s.
    assert f.ranks == [5]
    assert _window(f) == pytest.approx((0.32, 0.64), abs=1e-3)
    assert f.metric("straggler_alone_share") == pytest.approx(0.5, abs=1e-3)
    assert f.files[0].path == "/scratch/out.5.dat"
    # The 16 writes it does alone, plus the one running when the others finished (seek times
    # shift the streams by a few hundred microseconds).
    assert 16 << 20 <= f.files[0].metrics[0].value <= 17 << 20  # type: ignore[operator]


def test_rank0_and_unbalanced_evidence(tmp_path: Path) -> None:
    r = _build("trace-rank0-heavy", tmp_path)
    t02 = _t(r, "T02")
    assert t02.ranks == [0]
    assert t02.metric("rank0_bytes") == 44 << 20
    assert t02.metric("median_rank_bytes") == 4 << 20
    t03 = _t(_build("trace-unbalanced-ranks", tmp_path), "T03")
    assert sorted(t03.ranks) == [3, 7]
    assert t03.metric("unbalanced_ranks") == 2


def test_idle_gap_evidence(tmp_path: Path) -> None:
    r = _build("trace-idle-gaps-checkpoints", tmp_path)
    f = _t(r, "T04")
    assert f.metric("long_gaps") == 2
    assert f.metric("longest_gap") == pytest.approx(10.0, abs=1e-2)
    assert f.metric("hideable_time") == pytest.approx(4.0, abs=1e-2)
    assert _window(f) == pytest.approx((2.0, 12.0), abs=1e-2)
    assert "mpiio-nonblocking" in f.recommendations


def test_rewrite_evidence(tmp_path: Path) -> None:
    f = _t(_build("trace-rewrite-same-bytes", tmp_path), "T05")
    assert f.metric("files") == 4
    assert f.metric("bytes_written_again") == 16 << 20
    assert sorted(f.ranks) == [0, 1, 2, 3]
    assert _window(f) == pytest.approx((0.04, 0.08), abs=1e-3)  # the second pass (open/seek times shift it)


# --- thresholds and speed ------------------------------------------------------------------------------


def test_thresholds_move_the_t_checks(tmp_path: Path) -> None:
    from iodiag.synth.build import build_log
    from iodiag.synth.scenario import load_scenario

    out = tmp_path / "s.darshan"
    build_log(load_scenario(REPO / "evals" / "scenarios" / "trace-straggler-below-threshold.yaml"), out)
    profile = load_profile(str(out), include=("DXT",))
    assert "T01" not in analyze(profile).codes()
    assert "T01" in analyze(profile, Thresholds(trace_straggler_share=0.2)).codes()


@pytest.mark.skipif(os.environ.get("IODIAG_SLOW") != "1", reason="set IODIAG_SLOW=1 for the 1 M-segment timing")
def test_t_checks_on_a_million_segments_take_under_two_seconds() -> None:
    from iodiag.synth.dxt import cached_bench_log

    profile = load_profile(str(cached_bench_log(1_000_000)), include=("DXT",))
    ctx = Context(profile)
    t = Thresholds()
    t0 = time.perf_counter()
    for code in T_CODES:
        CHECKS[code].fn(ctx, t)
    assert time.perf_counter() - t0 < 2.0
