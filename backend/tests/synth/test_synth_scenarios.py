"""Scenario specs -> Darshan logs: counters derived honestly and consistently across layers.

Every spec here is small and built in the test; the logs are written with the real library and
read back with the real reader, then checked against what the program in the spec does.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iodiag.analysis import analyze
from iodiag.ingest import JobProfile, load_profile
from iodiag.ingest.table import Table
from iodiag.synth.build import build_log
from iodiag.synth.collective import two_phase
from iodiag.synth.derive import BINS
from iodiag.synth.layout import parse_size, record_id
from iodiag.synth.program import ProgramError
from iodiag.synth.scenario import ScenarioError, load_scenario, parse_scenario

KiB, MiB = 1 << 10, 1 << 20


def spec(*program: dict[str, Any], **top: Any) -> dict[str, Any]:
    job = {"nprocs": 4, "nodes": 1, "mounts": [{"path": "/", "fs": "ext4"}]}
    job.update(top.pop("job", {}))
    return {"name": "t", "job": job, "program": list(program), **top}


def build(tmp_path: Path, data: dict[str, Any], name: str = "t.darshan") -> JobProfile:
    out = tmp_path / name
    build_log(parse_scenario(data), out)
    return load_profile(str(out), include=("DXT",))


def rec(p: JobProfile, module: str, path: str) -> Table:
    t = p.table(module)
    assert t is not None
    return t.where(t["id"] == record_id(path))


def total(p: JobProfile, module: str, col: str) -> int:
    t = p.table(module)
    assert t is not None
    return int(t[col].sum())


LUSTRE = {"nodes": 2, "mounts": [{"path": "/lus", "fs": "lustre", "ost_count": 8}, {"path": "/", "fs": "ext4"}]}


# --- cross-layer consistency -------------------------------------------------------------------


def test_independent_mpiio_moves_the_same_bytes_at_both_layers(tmp_path: Path) -> None:
    p = build(
        tmp_path,
        spec(
            {"file": "/data/out", "interface": "mpiio", "op": "write", "count": 10, "size": "256KiB"},
            {"file": "/data/out", "interface": "mpiio", "op": "read", "count": 5, "size": "64KiB", "nonblocking": True},
        ),
    )
    m, x = rec(p, "MPI-IO", "/data/out"), rec(p, "POSIX", "/data/out")
    assert len(m) == len(x) == 1 and int(m["rank"][0]) == -1  # all 4 ranks: reduced
    assert int(m["MPIIO_BYTES_WRITTEN"][0]) == int(x["POSIX_BYTES_WRITTEN"][0]) == 4 * 10 * 256 * KiB
    assert int(m["MPIIO_BYTES_READ"][0]) == int(x["POSIX_BYTES_READ"][0]) == 4 * 5 * 64 * KiB
    assert int(m["MPIIO_INDEP_WRITES"][0]) == int(x["POSIX_WRITES"][0]) == 40
    assert int(m["MPIIO_NB_READS"][0]) == int(x["POSIX_READS"][0]) == 20
    assert int(m["MPIIO_COLL_OPENS"][0]) == 8 and int(x["POSIX_OPENS"][0]) == 8
    assert int(x["POSIX_SEEKS"][0]) == 0  # ROMIO uses pwrite/pread
    assert float(m["MPIIO_F_WRITE_TIME"][0]) == pytest.approx(float(x["POSIX_F_WRITE_TIME"][0]))
    assert int(m["MPIIO_SIZE_WRITE_AGG_100K_1M"][0]) == 40


def test_collective_posix_requests_only_on_aggregators(tmp_path: Path) -> None:
    # 8 ranks on 2 nodes (0-3, 4-7); ranks 0-5 write collectively, so records stay per rank.
    prog = {
        "ranks": "0-5",
        "file": "/lus/out",
        "interface": "mpiio",
        "collective": True,
        "op": "write",
        "count": 8,
        "size": "3MiB",
        "layout": "interleaved",
        "cb_buffer_size": "4MiB",
    }
    p = build(tmp_path, spec(prog, job={"nprocs": 8, **LUSTRE}, dxt=True))
    m, x = rec(p, "MPI-IO", "/lus/out"), rec(p, "POSIX", "/lus/out")
    assert sorted(m["rank"]) == list(range(6)) and (m["MPIIO_COLL_WRITES"] == 8).all()
    assert int(m["MPIIO_BYTES_WRITTEN"].sum()) == 6 * 8 * 3 * MiB
    writers = sorted(x.where(x["POSIX_WRITES"] > 0)["rank"])
    assert writers == [0, 4]  # one aggregator per node
    assert sorted(x["rank"]) == list(range(6)) and (x["POSIX_OPENS"] == 1).all()
    assert int(x["POSIX_BYTES_WRITTEN"].sum()) == int(m["MPIIO_BYTES_WRITTEN"].sum())
    seg = p.table("DXT_POSIX")
    assert sorted(np.unique(seg["rank"])) == [0, 4] and int(seg["length"].max()) <= 4 * MiB
    # Every collective call lasts seconds_per_op (default) on every rank; POSIX time fits inside.
    mpiio_time = m.to_pandas().set_index("rank").loc[x["rank"], "MPIIO_F_WRITE_TIME"].to_numpy()
    assert (x["POSIX_F_WRITE_TIME"] <= mpiio_time + 1e-9).all()

    one = build(tmp_path, spec({**prog, "cb_nodes": 1}, job={"nprocs": 8, **LUSTRE}), "one.darshan")
    x1 = rec(one, "POSIX", "/lus/out")
    assert sorted(x1.where(x1["POSIX_WRITES"] > 0)["rank"]) == [0]
    assert int(x1["POSIX_BYTES_WRITTEN"].sum()) == 6 * 8 * 3 * MiB


def test_two_phase_conserves_bytes_and_respects_buffers() -> None:
    rng = np.random.default_rng(1)
    call = np.repeat(np.arange(5), 40)
    size = rng.integers(1, 3 * MiB, len(call))
    off = rng.integers(0, 200 * MiB, len(call))
    # Disjoint requests: bytes are conserved exactly.
    off = np.concatenate([np.cumsum(size[c * 40 : (c + 1) * 40]) - size[c * 40 : (c + 1) * 40] for c in range(5)])
    pc, pa, ps, pl = two_phase(call, off, size, 3, 4 * MiB)
    assert int(pl.sum()) == int(size.sum())
    assert int(pl.max()) <= 4 * MiB and set(np.unique(pa)) <= {0, 1, 2}
    assert int(ps.min()) >= 0 and int((ps + pl).max()) <= int((off + size).max())
    for c in range(5):
        assert int(pl[pc == c].sum()) == int(size[call == c].sum())


def test_hdf5_layers_and_metadata(tmp_path: Path) -> None:
    p = build(
        tmp_path,
        spec(
            {"file": "/d/f.h5", "interface": "hdf5", "op": "write", "count": 10, "size": "1MiB", "collective": True},
            {"file": "/d/f.h5", "interface": "hdf5", "op": "read", "count": 5, "size": "1MiB"},
        ),
    )
    h5d = p.tables["H5D"]
    assert len(h5d) == 1 and p.names[int(h5d["id"][0])] == "/d/f.h5:/data"
    assert int(h5d["file_rec_id"][0]) == record_id("/d/f.h5")
    assert int(h5d["H5D_WRITES"][0]) == 40 and int(h5d["H5D_USE_MPIIO_COLLECTIVE"][0]) == 1
    h5f = rec(p, "H5F", "/d/f.h5")
    assert int(h5f["H5F_OPENS"][0]) == 8 and int(h5f["H5F_USE_MPIIO"][0]) == 1
    m, x = rec(p, "MPI-IO", "/d/f.h5"), rec(p, "POSIX", "/d/f.h5")
    # Data plus the format metadata (superblock + header written once, read by every rank).
    assert int(m["MPIIO_BYTES_WRITTEN"][0]) == 40 * MiB + 2048 == int(x["POSIX_BYTES_WRITTEN"][0])
    assert int(m["MPIIO_BYTES_READ"][0]) == 20 * MiB + 4 * 2048 == int(x["POSIX_BYTES_READ"][0])
    assert int(m["MPIIO_COLL_WRITES"][0]) == 40 and int(m["MPIIO_INDEP_WRITES"][0]) == 2
    assert int(m["MPIIO_INDEP_READS"][0]) == 20 + 8


def test_pnetcdf_and_stdio(tmp_path: Path) -> None:
    p = build(
        tmp_path,
        spec(
            {
                "file": "/d/f.nc",
                "interface": "pnetcdf",
                "op": "write",
                "count": 6,
                "size": "64KiB",
                "nonblocking": True,
            },
            {"ranks": 0, "file": "/d/log.txt", "interface": "stdio", "op": "write", "count": 30, "size": 200},
        ),
    )
    var = rec(p, "PNETCDF_VAR", "/d/f.nc:var")
    assert int(var["PNETCDF_VAR_NB_WRITES"][0]) == 24 == int(var["PNETCDF_VAR_IPUT_VARA"][0])
    f = rec(p, "PNETCDF_FILE", "/d/f.nc")
    assert int(f["PNETCDF_FILE_CREATES"][0]) == 4 and int(f["PNETCDF_FILE_INDEP_WAITS"][0]) == 4
    assert int(f["PNETCDF_FILE_BYTES_WRITTEN"][0]) == 24 * 64 * KiB
    assert int(rec(p, "MPI-IO", "/d/f.nc")["MPIIO_BYTES_WRITTEN"][0]) == 24 * 64 * KiB + 1024  # + header
    s = rec(p, "STDIO", "/d/log.txt")
    assert list(s["rank"]) == [0] and int(s["STDIO_WRITES"][0]) == 30
    assert int(s["STDIO_BYTES_WRITTEN"][0]) == 6000 and int(s["STDIO_MAX_BYTE_WRITTEN"][0]) == 5999
    assert rec(p, "POSIX", "/d/log.txt").empty  # Darshan does not see libc's own write() calls


# --- counters --------------------------------------------------------------------------------------


def test_histograms_and_common_sizes_follow_the_requests(tmp_path: Path) -> None:
    sizes = [50, 100, 101, 4096, 1 << 20, (1 << 20) + 1]
    p = build(tmp_path, spec({"ranks": 0, "file": "/d/f", "op": "write", "count": 60, "size": sizes}))
    x = rec(p, "POSIX", "/d/f")
    hist = [int(x[f"POSIX_SIZE_WRITE_{b}"][0]) for b in BINS]
    assert sum(hist) == int(x["POSIX_WRITES"][0]) == 60
    # Darshan's bins have inclusive upper bounds: 100 -> 0_100, 1 MiB -> 100K_1M.
    assert hist[:6] == [20, 10, 10, 0, 10, 10]
    assert int(x["POSIX_ACCESS1_COUNT"][0]) == 10 and int(x["POSIX_ACCESS1_ACCESS"][0]) == (1 << 20) + 1
    assert int(x["POSIX_BYTES_WRITTEN"][0]) == 10 * sum(sizes)
    assert int(x["POSIX_MAX_BYTE_WRITTEN"][0]) == 10 * sum(sizes) - 1


@pytest.mark.parametrize(
    ("extra", "consec", "seq"),
    [
        ({}, 99, 99),  # the first request at offset 0 is neither (Darshan starts from byte 0)
        ({"gap": "4KiB"}, 0, 99),
        ({"offset": "1MiB"}, 99, 100),
        ({"passes": 2}, 198, 198),  # the second pass restarts at 0: one backwards jump
    ],
)
def test_consecutive_and_sequential(tmp_path: Path, extra: dict[str, Any], consec: int, seq: int) -> None:
    prog = {"ranks": 1, "file": "/d/f", "op": "write", "count": 100, "size": "8KiB", **extra}
    x = rec(build(tmp_path, spec(prog)), "POSIX", "/d/f")
    assert (int(x["POSIX_CONSEC_WRITES"][0]), int(x["POSIX_SEQ_WRITES"][0])) == (consec, seq)


def test_random_pattern_goes_backwards_and_seeks(tmp_path: Path) -> None:
    prog = {"ranks": 1, "file": "/d/f", "op": "read", "count": 2000, "size": "8KiB", "pattern": "random"}
    x = rec(build(tmp_path, spec(prog)), "POSIX", "/d/f")
    reads, seq, consec = (int(x[c][0]) for c in ("POSIX_READS", "POSIX_SEQ_READS", "POSIX_CONSEC_READS"))
    assert reads == 2000 and consec <= seq and 0.3 * reads < seq < 0.7 * reads
    assert int(x["POSIX_SEEKS"][0]) >= reads - consec - 1
    assert int(x["POSIX_BYTES_READ"][0]) == 2000 * 8 * KiB
    assert int(x["POSIX_MAX_BYTE_READ"][0]) == 2000 * 8 * KiB - 1


def test_rw_switches_alignment_and_memory(tmp_path: Path) -> None:
    p = build(
        tmp_path,
        spec(
            {"ranks": 0, "file": "/lus/f", "op": "write", "count": 4, "size": "1MiB"},
            {"ranks": 0, "file": "/lus/f", "op": "read", "count": 4, "size": "1MiB", "mem_aligned": False},
            {"ranks": 0, "file": "/lus/f", "op": "write", "count": 3, "size": "1000"},
            job=LUSTRE,
        ),
    )
    x = rec(p, "POSIX", "/lus/f")
    assert int(x["POSIX_RW_SWITCHES"][0]) == 2
    assert int(x["POSIX_FILE_ALIGNMENT"][0]) == MiB
    assert int(x["POSIX_FILE_NOT_ALIGNED"][0]) == 2  # appends at 4 MiB + 1000, + 2000
    assert int(x["POSIX_MEM_NOT_ALIGNED"][0]) == 4 and int(x["POSIX_MEM_ALIGNMENT"][0]) == 8


def test_timers_and_timestamps(tmp_path: Path) -> None:
    prog = {"file": "/d/f{rank}", "op": "write", "count": 50, "size": "4KiB", "seconds_per_op": 0.01}
    p = build(
        tmp_path,
        spec(
            prog,
            {
                "file": "/d/f{rank}",
                "op": "read",
                "count": 20,
                "compute": 5.0,
                "seconds_per_op": 0.02,
                "meta_seconds": 0.001,
            },
        ),
    )
    x = rec(p, "POSIX", "/d/f2")
    assert float(x["POSIX_F_WRITE_TIME"][0]) == pytest.approx(50 * 0.01)
    assert float(x["POSIX_F_READ_TIME"][0]) == pytest.approx(20 * 0.02)
    assert float(x["POSIX_F_MAX_WRITE_TIME"][0]) == pytest.approx(0.01)
    assert float(x["POSIX_F_META_TIME"][0]) == pytest.approx(2 * 1e-4 + 2 * 0.001)  # opens and closes
    assert int(x["POSIX_OPENS"][0]) == 2
    w0, w1 = float(x["POSIX_F_WRITE_START_TIMESTAMP"][0]), float(x["POSIX_F_WRITE_END_TIMESTAMP"][0])
    r0, r1 = float(x["POSIX_F_READ_START_TIMESTAMP"][0]), float(x["POSIX_F_READ_END_TIMESTAMP"][0])
    assert 0 < w0 < w1 <= r0 - 5.0 < r1 <= p.meta.runtime_s
    assert r1 - r0 == pytest.approx(20 * 0.02)
    assert float(x["POSIX_F_OPEN_START_TIMESTAMP"][0]) == 0.0  # the first open starts the program
    assert float(x["POSIX_F_CLOSE_END_TIMESTAMP"][0]) == pytest.approx(r1 + 0.001)


def test_runtime_shorter_than_program_is_an_error(tmp_path: Path) -> None:
    data = spec({"file": "/d/f", "count": 100, "seconds_per_op": 0.1}, job={"runtime": 5.0})
    with pytest.raises(ProgramError, match=r"takes 10\.0"):
        build_log(parse_scenario(data), tmp_path / "x.darshan")


# --- shared-file reduction -----------------------------------------------------------------------


def test_shared_file_reduction_like_darshan(tmp_path: Path) -> None:
    prog = {
        "file": "/d/shared",
        "op": "write",
        "count": 10,
        "size": "64KiB",
        "seconds_per_op": 0.01,
        "count_by_rank": {1: 20},
        "slow_ranks": {2: 3.0},
    }
    p = build(tmp_path, spec(prog, {"ranks": "0-1", "file": "/d/some", "op": "write", "count": 2}))
    x = rec(p, "POSIX", "/d/shared")
    assert list(x["rank"]) == [-1]
    r = x.to_pandas().iloc[0]
    # open + close, and ranks 1-3 seek to their block first (segmented layout).
    times = np.array([0.1 + 2e-4, 0.2 + 3e-4, 3 * (0.1 + 3e-4), 0.1 + 3e-4])
    moved = np.array([10, 20, 10, 10]) * 64 * KiB
    assert int(r["POSIX_WRITES"]) == 50 and int(r["POSIX_OPENS"]) == 4 and int(r["POSIX_SEEKS"]) == 3
    assert int(r["POSIX_SLOWEST_RANK"]) == 2 and int(r["POSIX_SLOWEST_RANK_BYTES"]) == moved[2]
    assert int(r["POSIX_FASTEST_RANK"]) == 0 and int(r["POSIX_FASTEST_RANK_BYTES"]) == moved[0]
    assert float(r["POSIX_F_SLOWEST_RANK_TIME"]) == pytest.approx(times[2])
    assert float(r["POSIX_F_FASTEST_RANK_TIME"]) == pytest.approx(times[0])
    assert float(r["POSIX_F_VARIANCE_RANK_TIME"]) == pytest.approx(times.var())
    assert float(r["POSIX_F_VARIANCE_RANK_BYTES"]) == pytest.approx(moved.var())
    assert float(r["POSIX_F_WRITE_TIME"]) == pytest.approx(10 * 0.01 * (1 + 2 + 3 + 1))
    assert float(r["POSIX_F_MAX_WRITE_TIME"]) == pytest.approx(0.03)
    assert int(r["POSIX_MAX_BYTE_WRITTEN"]) == 50 * 64 * KiB - 1  # segmented: rank blocks back to back
    # A file only some ranks use keeps one record per rank, without rank statistics.
    some = rec(p, "POSIX", "/d/some")
    assert sorted(some["rank"]) == [0, 1] and (some["POSIX_SLOWEST_RANK"] == 0).all()
    analyze(p)  # reads back and analyzes


def test_single_process_job_records_are_shared(tmp_path: Path) -> None:
    p = build(tmp_path, spec({"file": "/d/f", "count": 3}, job={"nprocs": 1}))
    assert list(rec(p, "POSIX", "/d/f")["rank"]) == [-1]


# --- Lustre and DXT --------------------------------------------------------------------------------


def test_lustre_records_and_slow_ost(tmp_path: Path) -> None:
    mounts = [{"path": "/lus", "fs": "lustre", "ost_count": 8, "slow_osts": {6: 10.0}}]
    data = spec(
        {"file": "/lus/striped", "op": "write", "count": 4, "size": "1MiB", "seconds_per_op": 0.01},
        {"ranks": 0, "file": "/lus/r{rank}", "op": "write", "count": 2, "size": "1MiB", "seconds_per_op": 0.01},
        {"ranks": "0-1", "file": "/lus/d{rank}", "op": "write", "count": 1},
        files=[{"path": "/lus/striped", "lustre": {"stripe_size": "1MiB", "osts": [5, 6]}}],
        job={"mounts": mounts},
    )
    p = build(tmp_path, data)
    lus = p.tables["LUSTRE"]
    row = lus.where(lus["id"] == record_id("/lus/striped"))
    assert list(row["rank"]) == [-1] and row["osts"][0] == (5, 6) and int(row["stripe_count"][0]) == 2
    # Undeclared files get round-robin single-stripe layouts, one record per opening rank.
    placed = {p.names[int(i)]: o for i, o in zip(lus["id"], lus["osts"], strict=True)}
    assert placed["/lus/r0"] == (0,) and placed["/lus/d0"] == (1,) and placed["/lus/d1"] == (2,)
    # Every other 1 MiB request of the striped file lands on OST 6: 10x slower.
    x = rec(p, "POSIX", "/lus/striped")
    assert float(x["POSIX_F_WRITE_TIME"][0]) == pytest.approx(4 * (2 * 0.01 + 2 * 0.1))


def test_dxt_segments_match_the_counters(tmp_path: Path) -> None:
    data = spec(
        {"file": "/d/f", "interface": "mpiio", "op": "write", "count": 25, "size": "16KiB", "pattern": "random"},
        {"ranks": "1-2", "file": "/d/g{rank}", "op": "read", "count": 7, "size": "1KiB"},
        dxt=True,
        job={"nodes": 2},
    )
    p = build(tmp_path, data)
    seg, mseg = p.table("DXT_POSIX"), p.table("DXT_MPIIO")
    px = p.tables["POSIX"]
    assert len(seg) == total(p, "POSIX", "POSIX_WRITES") + total(p, "POSIX", "POSIX_READS") == 4 * 25 + 2 * 7
    assert len(mseg) == total(p, "MPI-IO", "MPIIO_INDEP_WRITES") == 100
    for path in ("/d/f", "/d/g1"):
        s = seg.where(seg["id"] == record_id(path))
        x = px.where(px["id"] == record_id(path))
        busy = float((s["end"] - s["start"]).sum())
        assert busy == pytest.approx(float((x["POSIX_F_WRITE_TIME"] + x["POSIX_F_READ_TIME"]).sum()))
        assert int(s["length"].sum()) == int((x["POSIX_BYTES_WRITTEN"] + x["POSIX_BYTES_READ"]).sum())
    assert set(seg["hostname"]) == {"nid00000", "nid00001"} and p.meta.nodes == 2
    assert float(seg["end"].max()) <= p.meta.runtime_s


def test_dxt_benchmark_log(tmp_path: Path) -> None:
    from iodiag.synth.dxt import bench_tables
    from iodiag.synth.writer import write_log

    job, names, tables = bench_tables(100_001)
    write_log(tmp_path / "b.darshan", job, names, tables)
    p = load_profile(str(tmp_path / "b.darshan"), include=("DXT",))
    assert len(p.table("DXT_POSIX")) == 100_001
    assert total(p, "POSIX", "POSIX_READS") + total(p, "POSIX", "POSIX_WRITES") == 100_001
    seg = p.table("DXT_POSIX")
    assert seg is not None
    assert total(p, "POSIX", "POSIX_BYTES_WRITTEN") == int(seg["length"][seg["op"] == "write"].sum())


# --- findings fire for the intended reason, and not just below the threshold ---------------------


def _codes(tmp_path: Path, data: dict[str, Any], name: str) -> set[str]:
    return analyze(build(tmp_path, data, name)).codes()


FIRE_CASES: dict[str, tuple[dict[str, Any], tuple[str, Any, Any]]] = {
    # code: (spec, (dotted key in program[0] to vary, firing value, quiet value))
    "P06": (spec({"ranks": 0, "file": "/d/f", "count": 1001, "size": "4KiB"}), ("count", 1001, 999)),
    "P16": (spec({"file": "/d/f", "count": 251, "size": "4KiB"}), ("count", 251, 249)),
    "P05": (spec({"ranks": 0, "file": "/d/f", "op": "read", "count": 1001, "size": "4KiB"}), ("count", 1001, 999)),
    "M03": (
        # Small interleaved independent writes to a shared file: what collective buffering would merge.
        spec(
            {
                "file": "/d/f",
                "interface": "mpiio",
                "count": 251,
                "size": "256KiB",
                "layout": "interleaved",
                "seconds_per_op": 0.001,
            }
        ),
        ("count", 251, 249),
    ),
    "P13": (
        spec({"ranks": 0, "file": "/d/f", "count": 2200, "size": "2MiB", "pattern": "random", "seconds_per_op": 0.001}),
        ("pattern", "random", "sequential"),
    ),
    "S01": (
        spec(
            {"ranks": 0, "file": "/d/f", "interface": "stdio", "count": 12, "size": "2MiB"},
            {"ranks": 0, "file": "/d/g", "count": 100, "size": "2MiB"},
        ),
        ("count", 12, 10),
    ),
    "L01": (
        spec({"ranks": "0-7", "file": "/lus/f", "count": 4, "size": "2MiB"}, job={"nprocs": 16, **LUSTRE}),
        ("ranks", "0-7", "0-6"),
    ),
    "P17": (
        spec({"ranks": 0, "files": "/d/m{i}", "count_files": 1000, "op": "open_stat", "meta_seconds": 0.0101}),
        ("meta_seconds", 0.0101, 0.0099),
    ),
}


@pytest.mark.parametrize("code", sorted(FIRE_CASES))
def test_finding_fires_and_not_just_below(tmp_path: Path, code: str) -> None:
    data, (key, yes, no) = FIRE_CASES[code]
    assert data["program"][0][key] == yes
    assert code in _codes(tmp_path, data, "yes.darshan")
    quiet = copy.deepcopy(data)
    quiet["program"][0][key] = no
    assert code not in _codes(tmp_path, quiet, "no.darshan")


def test_slow_ost_is_found(tmp_path: Path) -> None:
    mounts = [{"path": "/lus", "fs": "lustre", "ost_count": 6, "slow_osts": {4: 5.0}}]
    prog = {"file": "/lus/ckpt{rank}", "count": 40, "size": "2MiB", "seconds_per_op": 0.01}
    fast = {**prog, "file": "/lus/other{rank}"}
    job = {"nprocs": 6, "mounts": mounts}
    p = build(tmp_path, spec(prog, job=job))
    f = analyze(p).finding("L04")
    assert f is not None and any(m.name == "slow_ost" and m.value == 4 for m in f.evidence)
    calm = spec(prog, fast, job={"nprocs": 6, "mounts": [{"path": "/lus", "fs": "lustre", "ost_count": 6}]})
    assert "L04" not in _codes(tmp_path, calm, "calm.darshan")


# --- invalid input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (spec({"file": "/d/f", "op": "wrte"}), "program.0.op"),
        (spec({"file": "/d/f", "cuont": 3}), "program.0.cuont: unknown key"),
        (spec({"file": "/d/f", "ranks": "0-9"}), "rank 9 is not in 0..3"),
        (spec({"file": "d/f"}), "absolute"),
        (spec({"files": "/d/f"}), "count_files"),
        (spec({"file": "/d/f", "size": "8 parsecs"}), "not a size"),
        (spec({"file": "/d/f", "interface": "posix", "collective": True}), "MPI interface"),
        (spec({"file": "/d/f", "interface": "pnetcdf", "via": "posix"}), "PnetCDF"),
        (spec({"file": "/x/f"}, job={"mounts": [{"path": "/lus", "fs": "lustre"}]}), "under no mount"),
        (spec(files=[{"path": "/d/f", "lustre": {}}], job={}), "lustre layout"),
        ({"job": {"nprocs": 2}, "program": [{"file": "/f"}]}, "name: Field required"),
        ([1, 2], "must be a YAML mapping"),
    ],
)
def test_invalid_specs_are_one_clear_line(data: Any, message: str) -> None:
    if isinstance(data, dict) and not data.get("program"):
        data["program"] = [{"file": "/d/f"}]
    with pytest.raises(ScenarioError) as err:
        parse_scenario(data, "s.yaml")
    text = str(err.value)
    assert message in text and "\n" not in text and text.startswith("s.yaml: ")


def test_sizes() -> None:
    assert parse_size("8KiB") == 8192 and parse_size("1.5MiB") == 3 << 19 and parse_size(4096) == 4096
    assert parse_size("4k") == 4096 and parse_size("2G") == 2 << 30
    with pytest.raises(ValueError):
        parse_size("1.5B")


def test_load_scenario_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load_scenario(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match="invalid YAML"):
        load_scenario(bad)


CLI = (
    "import sys\n"
    "from iodiag.cli.main import app\n"
    "from iodiag.cli import synth_cmd\n"
    "if not any((c.name or c.callback.__name__) == 'synth' for c in app.registered_commands):\n"
    "    synth_cmd.register(app)\n"
    "app(prog_name='iodiag', args=sys.argv[1:])\n"
)


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLI, "synth", *map(str, args)], capture_output=True, text=True, check=False, timeout=120
    )


def test_cli(tmp_path: Path) -> None:
    good = tmp_path / "s.yaml"
    good.write_text("name: s\njob: {nprocs: 2}\nprogram:\n  - {file: /d/f, count: 3, size: 1KiB}\n", encoding="utf-8")
    out = tmp_path / "s.darshan"
    r = _cli(good, "-o", out)
    assert r.returncode == 0, r.stderr
    assert total(load_profile(str(out)), "POSIX", "POSIX_WRITES") == 6
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: s\njob: {nprocs: 2}\nprogram: [{file: /d/f, op: nope}]\n", encoding="utf-8")
    for args, msg in (
        ((tmp_path / "missing.yaml", "-o", out), "no such scenario file"),
        ((bad, "-o", out), "invalid scenario: program.0.op"),
        ((good,), "missing -o"),
        ((good, "-o", tmp_path / "nodir" / "x.darshan"), "does not exist"),
    ):
        r = _cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.startswith("iodiag: error: ") and msg in r.stderr and r.stderr.count("\n") == 1
        assert "Traceback" not in r.stderr
    r = _cli("--dxt-segments", "5000", "-o", out)
    assert r.returncode == 0, r.stderr
    assert len(load_profile(str(out), include=("DXT",)).traces["DXT_POSIX"]) == 5000


def test_benchmark_dxt_log_is_cached(tmp_path: Path) -> None:
    from iodiag.ingest import load_profile
    from iodiag.synth.dxt import cached_bench_log

    first = cached_bench_log(20_000, tmp_path)
    stamp = first.stat().st_mtime_ns
    again = cached_bench_log(20_000, tmp_path)
    assert again == first and again.stat().st_mtime_ns == stamp  # reused, not rewritten
    profile = load_profile(str(first), include=("DXT_POSIX",))
    assert len(profile.table("DXT_POSIX")) == 20_000
    assert not list(tmp_path.glob("*.tmp*"))
