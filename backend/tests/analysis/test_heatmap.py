"""The HEATMAP views (timelines, phases, bytes per rank and phase) and the H findings built on them.

Real logs: what is true of each is explained next to its assertions. Hand-built heatmaps: a
positive and a near-threshold negative per code.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iodiag.analysis import analyze
from iodiag.analysis.models import Finding, Report
from iodiag.analysis.registry import CHECKS, Hit
from iodiag.analysis.views.context import Context
from iodiag.analysis.views.heatmap import (
    busy_runs,
    combine,
    heatmaps,
    job_heatmap,
    phase_imbalance,
    phases,
    top_heatmap,
)
from iodiag.core.thresholds import Thresholds
from iodiag.ingest import JobProfile, load_profile
from tests.conftest import shared_log
from tests.profiles import MiB, make_profile

E3SM = shared_log("darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan")
DIAGONAL = shared_log(
    "darshan-logs/runtime_and_dxt_heatmaps_diagonal_write_only/runtime_and_dxt_heatmaps_diagonal_write_only.darshan"
)
IOR = [
    shared_log(
        "darshan-logs/ior_pnetcdf_hdf5/shane_ior-HDF5_id438090-438090_11-9-41522-17417065676046418211_1.darshan"
    ),
    shared_log(
        "darshan-logs/ior_pnetcdf_hdf5/shane_ior-PNETCDF_id438100-438100_11-9-41525-10280033558448664385_1.darshan"
    ),
]
RELEASE = [
    shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.4.7.darshan"),
    shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.5.0.darshan"),
]
DLIO = shared_log("darshan-logs/dlio_logs/snyder_python3_id3116902-2110365_12-19-66957-188958432683465822_1.darshan")

IDS = {"POSIX": 11, "MPIIO": 12, "STDIO": 13}


def _need(p: Path) -> Path:
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p


def _report(p: Path, *include: str) -> Report:
    return analyze(load_profile(str(_need(p)), include=("HEATMAP", *include)))


def _f(report: Report, code: str) -> Finding:
    f = report.finding(code)
    assert f is not None, f"{code} did not fire: {sorted(report.codes())}"
    return f


def _profile(
    rows: dict[str, list[list[int]]], *, width: float = 1.0, nprocs: int = 4, runtime: float = 20.0, read: bool = False
) -> JobProfile:
    """A profile whose HEATMAP has, per module, one row of bytes per bin for each rank 0, 1, ..."""
    recs = []
    for module, per_rank in rows.items():
        for rank, bins in enumerate(per_rank):
            b = np.array(bins, dtype=np.int64)
            z = np.zeros_like(b)
            recs.append(
                {
                    "id": IDS[module],
                    "rank": rank,
                    "bin_width": width,
                    "write_bins": z if read else b,
                    "read_bins": b if read else z,
                }
            )
    table = pd.DataFrame(recs).astype({"id": np.uint64, "rank": np.int64, "bin_width": np.float64})
    base = make_profile(nprocs=nprocs, runtime_s=runtime)
    names = {**base.names, **{v: f"heatmap:{k}" for k, v in IDS.items()}}
    return dataclasses.replace(base, tables={**base.tables, "HEATMAP": table}, names=names)


def _run(code: str, p: JobProfile, t: Thresholds | None = None) -> list[Hit]:
    out = CHECKS[code].fn(Context(p), t or Thresholds())
    return out if isinstance(out, list) else [] if out is None else [out]


def _metrics(h: Hit) -> dict[str, object]:
    return {m.name: m.value for m in h.evidence}


# --- views ---------------------------------------------------------------------------------------------


def test_busy_runs() -> None:
    first, last = busy_runs(np.array([1, 1, 0, 1, 0, 0, 1, 1, 1]) > 0)
    assert first.tolist() == [0, 3, 6] and last.tolist() == [1, 3, 8]
    assert busy_runs(np.zeros(3, dtype=bool))[0].size == 0


def test_phases_merge_gaps_below_mean_plus_std() -> None:
    # Busy bins 0-1, 3, 14-15: gaps of 1 and 10 bins -> threshold 5.5 + 4.5 = 10 s; only the long gap cuts.
    p = _profile({"POSIX": [[5, 5, 0, 5] + [0] * 10 + [7, 7], [0, 1] + [0] * 14]})
    hm = heatmaps(p)["POSIX"]
    ph = phases(hm, 0.0, 20.0)
    assert len(ph) == 2 and ph.threshold == pytest.approx(10.0)
    assert ph.start.tolist() == [0.0, 14.0] and ph.end.tolist() == [4.0, 16.0]
    assert ph.write.tolist() == [16, 14] and ph.read.tolist() == [0, 0]
    assert ph.rank_bytes.tolist() == [[15, 14], [1, 0]]


def test_phase_end_is_clipped_to_the_run_time() -> None:
    hm = heatmaps(_profile({"POSIX": [[5]]}, width=0.1, runtime=0.05))["POSIX"]
    ph = phases(hm, 0.0, 0.05)
    assert ph.end.tolist() == [0.05]


def test_combine_rebins_to_the_widest_bins() -> None:
    a = heatmaps(_profile({"POSIX": [[1, 2, 3, 4]]}, width=1.0))["POSIX"]
    b = dataclasses.replace(a, module="STDIO", bin_width=2.0, write=np.array([[10, 20]]))
    c = combine([a, b])
    assert c is not None and c.bin_width == 2.0 and c.module == "POSIX+STDIO"
    assert c.write.tolist() == [[13, 27]]


def test_top_heatmap_prefers_mpiio_job_heatmap_prefers_posix() -> None:
    maps = heatmaps(_profile({"POSIX": [[4], [0]], "MPIIO": [[2], [2]], "STDIO": [[1]]}))
    top, job = top_heatmap(maps), job_heatmap(maps)
    assert top is not None and top.module == "MPIIO+STDIO" and top.total[:, 0].tolist() == [3, 2]
    assert job is not None and job.module == "POSIX+STDIO" and job.total[:, 0].tolist() == [5, 0]


# --- H01 on hand-built heatmaps ---------------------------------------------------------------------------


def test_h01_lists_phases_and_marks_the_main_one() -> None:
    p = _profile({"POSIX": [[MiB, MiB] + [0] * 10 + [4 * MiB], [MiB, 0] + [0] * 10 + [4 * MiB]]})
    (h,) = _run("H01", p)
    m = _metrics(h)
    assert m["phases"] == 2 and m["write_phases"] == 2
    assert (m["window_start"], m["window_end"]) == (12.0, 13.0)  # the second phase moves the most
    assert m["main_phase_bytes"] == 8 * MiB
    assert "2 I/O phase(s)" in h.message and "need DXT" in h.message and "1.00 s bins" in h.message


def test_h01_silent_without_bytes_or_without_heatmap() -> None:
    assert _run("H01", _profile({"POSIX": [[0, 0, 0]]})) == []
    assert "H01" not in analyze(make_profile()).codes()


# --- H02 on hand-built heatmaps ---------------------------------------------------------------------------


def test_h02_flags_a_rank_above_mean_plus_std_and_margin() -> None:
    # 130 vs 100, 100, 100: mean 107.5, std 13.0 -> above 120.5 and above 1.2 x 107.5 = 129.
    p = _profile({"MPIIO": [[100 * MiB], [100 * MiB], [100 * MiB], [130 * MiB]]})
    (h,) = _run("H02", p)
    assert h.ranks == [3]
    m = _metrics(h)
    assert m["unbalanced_ranks"] == 1 and m["phase_ranks"] == 4 and m["max_rank_bytes"] == 130 * MiB
    assert "need DXT" in h.message and "straggler timing within a bin" in h.message


def test_h02_silent_just_below_the_margin() -> None:
    # 125 is above mean + std (106.25 + 10.8) but below 1.2 x 106.25 = 127.5: jitter, not imbalance.
    p = _profile({"MPIIO": [[100 * MiB], [100 * MiB], [100 * MiB], [125 * MiB]]})
    assert _run("H02", p) == []
    hm = top_heatmap(heatmaps(p))
    assert hm is not None
    imb = phase_imbalance(hm, phases(hm), 0, 0.0)
    assert imb.ranks[imb.over].tolist() == [3]  # without the margin it would fire


def test_h02_looks_at_the_busiest_phase_only() -> None:
    # Phase 1 (bin 0) is unbalanced but small; the busy phase (bin 10) is balanced.
    p = _profile({"MPIIO": [[9 * MiB] + [0] * 9 + [50 * MiB]] + [[MiB] + [0] * 9 + [50 * MiB]] * 3})
    assert _run("H02", p) == []


def test_h02_rank0_heavy() -> None:
    p = _profile({"MPIIO": [[55 * MiB], [15 * MiB], [15 * MiB], [15 * MiB]]})
    hits = _run("H02", p)
    assert len(hits) == 1  # the imbalance variant flags rank 0 alone too: said once
    m = _metrics(hits[0])
    assert hits[0].ranks == [0] and m["rank0_bytes_share"] == pytest.approx(0.55)
    assert "Rank 0 moves 55.00%" in hits[0].message and "need DXT" in hits[0].message


def test_h02_rank0_just_below_half_is_not_rank0_heavy() -> None:
    p = _profile({"MPIIO": [[49 * MiB], [17 * MiB], [17 * MiB], [17 * MiB]]})
    assert all("rank0_bytes_share" not in _metrics(h) for h in _run("H02", p))
    # One rank alone in the job: nothing to be heavier than.
    assert _run("H02", _profile({"MPIIO": [[49 * MiB]]}, nprocs=1)) == []


def test_h02_compares_ranks_at_the_mpiio_layer() -> None:
    # Collective buffering: rank 0 is the only POSIX aggregator, but every rank gave MPI-IO the same bytes.
    p = _profile({"POSIX": [[80 * MiB], [0], [0], [0]], "MPIIO": [[20 * MiB]] * 4})
    assert _run("H02", p) == []


# --- real logs -------------------------------------------------------------------------------------------


def test_e3sm_heatmap_only() -> None:
    r = _report(E3SM)
    h1 = _f(r, "H01")
    # 512 ranks writing for the whole 727 s run in 6.4 s bins: one long write phase (0-697.6 s) with
    # 99.5% of the POSIX bytes, then two small write phases (704-716.8 s, 723.2 s to the end).
    assert h1.metric("phases") == 3 and h1.metric("write_phases") == 3
    assert h1.metric("window_start") == 0.0 and h1.metric("window_end") == pytest.approx(697.6)
    assert h1.metric("bin_width") == pytest.approx(6.4) and h1.metric("heatmap") == "POSIX+STDIO"
    # At the MPI-IO layer the ranks are balanced (max 174 MB vs mean 151 MB, std 28 MB; rank 0 0.2%):
    # no H02. At the POSIX layer only the collective-buffering aggregators write, which is not an
    # application imbalance, hence H02 reads MPI-IO.
    assert "H02" not in r.codes()
    p = load_profile(str(E3SM), include=("HEATMAP",))
    maps = heatmaps(p)
    posix = phases(maps["POSIX"], 0.0, 727.0)
    assert len(phase_imbalance(maps["POSIX"], posix, 0, 0.2).over) > 0


def test_diagonal_heatmap_and_silence_with_dxt() -> None:
    # 32 ranks each write 1 byte, one after the other, in 0.1 s bins: one write phase of 32 B.
    h1 = _f(_report(DIAGONAL), "H01")
    assert h1.metric("phases") == 1 and h1.metric("bytes") == 32
    assert h1.metric("window_end") == pytest.approx(3.2)
    # The same log read with its DXT traces: the T checks speak, the H checks stay silent.
    codes = _report(DIAGONAL, "DXT").codes()
    assert not {"H01", "H02"} & set(codes)


@pytest.mark.parametrize("path", IOR + RELEASE, ids=lambda p: p.name)
def test_short_four_rank_runs(path: Path) -> None:
    # Runs shorter than one 0.1 s bin: one read/write phase covering the whole run (the window is
    # clipped to the run time), four ranks moving the same bytes through MPI-IO: no H02.
    r = _report(path)
    h1 = _f(r, "H01")
    assert h1.metric("phases") == 1 and h1.metric("read_write_phases") == 1
    assert h1.metric("window_end") == pytest.approx(r.job.runtime_s)
    assert "H02" not in r.codes()


def test_dlio_single_rank() -> None:
    r = _report(DLIO)
    h1 = _f(r, "H01")
    # A python job on one rank: a few KiB read at start-up, then 500 MiB written from 104 s to the end.
    assert h1.metric("phases") == 2
    assert h1.metric("window_start") == pytest.approx(104.0)
    written = h1.metric("main_phase_bytes_written")
    assert written == h1.metric("main_phase_bytes")
    assert isinstance(written, int) and written > 400 * MiB
    assert "H02" not in r.codes()  # one rank: no imbalance, no rank 0 heavier than others
