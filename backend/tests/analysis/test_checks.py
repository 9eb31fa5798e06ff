"""Every check at its trigger boundary, on hand-built profiles.

For each code: a profile just on the quiet side of the threshold (code absent) and
one just past it (code present, with the detection rule's severity and evidence numbers expected; the
severity shown is graded from the finding's cost, tested in test_verdict.py and test_costs.py).
Thresholds and their semantics are those of ``iodiag/analysis/checks`` and, for the
Drishti-derived codes, of Drishti 0.8 (``includes/module.py``): Drishti compares
ratios with a strict ``>``, so a ratio exactly at the threshold does not trigger.
"""

from __future__ import annotations

from typing import Any

import pytest

from iodiag.analysis import analyze
from iodiag.analysis.models import Finding, JobFacts, Report, Severity
from iodiag.analysis.registry import CHECKS
from iodiag.core.thresholds import ThresholdError, Thresholds
from tests.profiles import GiB, MiB, make_profile

ALL_CODES = {
    "S01",
    *(f"P{i:02d}" for i in (*range(1, 20), 21, 22)),
    "P23",  # GPFS token contention: evals/scenarios/gpfs-*.yaml (eval triggers) and test_eval_blind
    *(f"M{i:02d}" for i in range(1, 11)),
    "J01",
    "J02",
    "D01",
    "D02",
    "D03",
    "D04",  # corrupt records: tests/ingest/test_integrity.py
    *(f"L{i:02d}" for i in range(1, 6)),
    "L06",  # extent-lock contention: tests/analysis/test_causes.py and the ior-hard scenarios
    # Trace (T) and cross-layer (X) codes are tested in test_trace_findings.py and test_crosslayer.py.
    *(f"T{i:02d}" for i in range(1, 9)),  # T06-T08: test_source_lines.py and the trace-* scenarios
    *(
        f"X{i:02d}" for i in range(1, 8)
    ),  # X04-X06: test_costs.py, the real logs in test_verdict.py; X07: test_crosslayer.py
    "J03",
    "J04",
    "H01",  # heatmap codes: tests/analysis/test_heatmap.py
    "H02",
}


def run(profile: Any, **overrides: Any) -> Report:
    t = Thresholds().with_overrides(overrides) if overrides else Thresholds()
    report = analyze(profile, t)
    assert report.problems == [], report.problems  # no check may crash on a well-formed profile
    return report


def hit(report: Report, code: str, severity: Severity | None = None) -> Finding:
    f = report.finding(code)
    assert f is not None, f"{code} expected, got {sorted(report.codes())}"
    if severity is not None:
        assert f.detected_severity == severity
    return f


def ev(f: Finding) -> dict[str, Any]:
    return {m.name: m.value for m in f.evidence}


def posix(**counters: Any) -> dict[str, Any]:
    return {"id": 1, "rank": 0, **counters}


def test_every_registered_code_is_covered_here() -> None:
    assert set(CHECKS) == ALL_CODES


# --------------------------------------------------------------------------- S01


def _stdio_profile(stdio_bytes: int, posix_bytes: int, mpiio_bytes: int = 0) -> Any:
    recs: dict[str, list[dict[str, Any]]] = {
        "STDIO": [{"id": 9, "rank": 0, "STDIO_BYTES_WRITTEN": stdio_bytes, "STDIO_WRITES": 1}],
        "POSIX": [posix(POSIX_BYTES_WRITTEN=posix_bytes, POSIX_WRITES=1)],
    }
    if mpiio_bytes:
        recs["MPI-IO"] = [{"id": 1, "rank": 0, "MPIIO_BYTES_WRITTEN": mpiio_bytes, "MPIIO_INDEP_WRITES": 1}]
    return make_profile(recs)


def test_s01_boundary() -> None:
    # share = stdio / (stdio + posix + mpiio) must be > interface_stdio (0.1)
    assert "S01" not in run(_stdio_profile(10, 90)).codes()  # exactly 10%
    f = hit(run(_stdio_profile(11, 89)), "S01", Severity.CRITICAL)
    assert ev(f) == {"stdio_bytes": 11, "total_bytes": 100, "stdio_share": pytest.approx(0.11), "mean_call_bytes": 11}
    assert f.files[0].path == "/scratch/job/file9.dat"


def test_s01_counts_mpiio_bytes_once() -> None:
    # The 89 POSIX bytes are the ones MPI-IO moved: total is 100, not 189 (5.8%, no finding).
    f = hit(run(_stdio_profile(11, 89, mpiio_bytes=89)), "S01")
    assert ev(f)["total_bytes"] == 100


# --------------------------------------------------------------------------- P01-P04


@pytest.mark.parametrize(
    ("code", "other", "col_hi", "col_lo", "ev_hi", "ev_lo", "share"),
    [
        ("P01", "P02", "POSIX_WRITES", "POSIX_READS", "writes", "reads", "write_share"),
        ("P02", "P01", "POSIX_READS", "POSIX_WRITES", "reads", "writes", "read_share"),
        ("P03", "P04", "POSIX_BYTES_WRITTEN", "POSIX_BYTES_READ", "bytes_written", "bytes_read", "write_share"),
        ("P04", "P03", "POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN", "bytes_read", "bytes_written", "read_share"),
    ],
)
def test_intensity_boundary(
    code: str, other: str, col_hi: str, col_lo: str, ev_hi: str, ev_lo: str, share: str
) -> None:
    # (hi - lo) / total must be > imbalance_operations (0.1): 55/45 is exactly 0.1.
    quiet = run(make_profile({"POSIX": [posix(**{col_hi: 55, col_lo: 45})]}))
    assert code not in quiet.codes() and other not in quiet.codes()
    report = run(make_profile({"POSIX": [posix(**{col_hi: 56, col_lo: 44})]}))
    f = hit(report, code, Severity.INFO)
    assert ev(f) == {ev_hi: 56, ev_lo: 44, share: pytest.approx(0.56)}
    assert other not in report.codes()


def test_intensity_override_moves_boundary() -> None:
    p = make_profile({"POSIX": [posix(POSIX_WRITES=56, POSIX_READS=44)]})
    assert "P01" in run(p).codes()
    assert "P01" not in run(p, imbalance_operations=0.15).codes()
    assert "P01" in run(p, imbalance_operations=0.119).codes()


# --------------------------------------------------------------------------- P05, P06, P15, P16


def _small(op: str, total: int, small: int, rank: int = 0, rid: int = 1) -> dict[str, Any]:
    # Spread the small requests over two sub-1 MiB bins; 1M_4M requests are not small.
    return {
        "id": rid,
        "rank": rank,
        f"POSIX_{op}S": total,
        f"POSIX_SIZE_{op}_0_100": small // 2,
        f"POSIX_SIZE_{op}_100K_1M": small - small // 2,
        f"POSIX_SIZE_{op}_1M_4M": total - small,
    }


@pytest.mark.parametrize(("code", "op", "verb"), [("P05", "READ", "read"), ("P06", "WRITE", "write")])
def test_small_requests_share_boundary(code: str, op: str, verb: str) -> None:
    # small / total > small_requests (0.1) and small > small_requests_absolute (1000)
    assert code not in run(make_profile({"POSIX": [_small(op, 20000, 2000)]})).codes()  # exactly 10%
    f = hit(run(make_profile({"POSIX": [_small(op, 20000, 2001)]})), code, Severity.CRITICAL)
    assert ev(f) == {
        f"small_{verb}s": 2001,
        f"total_{verb}s": 20000,
        f"small_{verb}_share": pytest.approx(2001 / 20000),
    }
    assert f.files_total == 1
    assert {m.name: m.value for m in f.files[0].metrics} == {
        f"small_{verb}s": 2001,
        f"share_of_{verb}s": pytest.approx(2001 / 20000),
    }


@pytest.mark.parametrize(("code", "op"), [("P05", "READ"), ("P06", "WRITE")])
def test_small_requests_absolute_boundary(code: str, op: str) -> None:
    # All requests small, but there must be more than 1000 of them.
    assert code not in run(make_profile({"POSIX": [_small(op, 1000, 1000)]})).codes()
    assert code in run(make_profile({"POSIX": [_small(op, 1001, 1001)]})).codes()
    # The override moves the absolute floor.
    assert code not in run(make_profile({"POSIX": [_small(op, 1001, 1001)]}), small_requests_absolute=1001).codes()


@pytest.mark.parametrize(("code", "op", "verb"), [("P15", "READ", "read"), ("P16", "WRITE", "write")])
def test_shared_small_requests_boundary(code: str, op: str, verb: str) -> None:
    # Only shared-file records (rank -1) count. A file-per-process file full of small
    # requests makes P05/P06 fire but must not push the shared-file check over.
    private = _small(op, 5000, 5000, rank=0, rid=2)
    below = run(make_profile({"POSIX": [_small(op, 20000, 2000, rank=-1), private]}))
    assert code not in below.codes()
    assert ("P05" if op == "READ" else "P06") in below.codes()
    f = hit(run(make_profile({"POSIX": [_small(op, 20000, 2001, rank=-1), private]})), code, Severity.CRITICAL)
    assert ev(f)[f"small_{verb}s"] == 2001
    assert ev(f)[f"total_{verb}s"] == 20000
    assert [x.path for x in f.files] == ["/scratch/job/file1.dat"]


# --------------------------------------------------------------------------- P07, P08


def test_p07_misaligned_memory_boundary() -> None:
    # mem_not_aligned / (reads + writes) > misaligned_requests (0.1)
    def p(bad: int) -> Any:
        return make_profile(
            {"POSIX": [posix(POSIX_READS=60, POSIX_WRITES=40, POSIX_MEM_NOT_ALIGNED=bad, POSIX_MEM_ALIGNMENT=8)]}
        )

    assert "P07" not in run(p(10)).codes()
    f = hit(run(p(11)), "P07", Severity.CRITICAL)
    assert ev(f) == {
        "mem_not_aligned": 11,
        "total_requests": 100,
        "mem_not_aligned_share": pytest.approx(0.11),
        "mem_alignment": 8,
    }


def test_p08_misaligned_file_boundary() -> None:
    def p(bad: int) -> Any:
        return make_profile(
            {"POSIX": [posix(POSIX_READS=60, POSIX_WRITES=40, POSIX_FILE_NOT_ALIGNED=bad, POSIX_FILE_ALIGNMENT=4096)]}
        )

    assert "P08" not in run(p(10)).codes()
    f = hit(run(p(11)), "P08", Severity.CRITICAL)
    assert ev(f) == {
        "file_not_aligned": 11,
        "total_requests": 100,
        "file_not_aligned_share": pytest.approx(0.11),
        "file_alignment": 4096,
    }
    assert f.files[0].metrics[0].value == 11
    assert "P08" not in run(p(11), misaligned_requests=0.11).codes()


# --------------------------------------------------------------------------- P09, P10


@pytest.mark.parametrize(
    ("code", "moved", "maxbyte", "verb"),
    [
        ("P09", "POSIX_BYTES_READ", "POSIX_MAX_BYTE_READ", "read"),
        ("P10", "POSIX_BYTES_WRITTEN", "POSIX_MAX_BYTE_WRITTEN", "written"),
    ],
)
def test_redundant_traffic_boundary(code: str, moved: str, maxbyte: str, verb: str) -> None:
    # iodiag's redundancy is per file: bytes moved beyond the file's extent (max byte + 1),
    # reported from redundant_min_bytes (1 MiB) of excess.
    extent = 10 * MiB

    def p(n: int) -> Any:
        return make_profile({"POSIX": [posix(**{moved: n, maxbyte: extent - 1})]})

    assert code not in run(p(extent + MiB - 1)).codes()
    f = hit(run(p(extent + MiB)), code, Severity.WARNING)
    assert ev(f) == {f"redundant_bytes_{verb}": MiB, f"bytes_{verb}_in_those_files": extent + MiB, "files": 1}
    assert code not in run(p(extent + MiB), redundant_min_bytes=MiB + 1).codes()


def test_redundant_reads_across_ranks() -> None:
    # Four ranks each read the same whole 8 MiB file: 24 MiB of it were read more than once.
    recs = [posix(rank=r, POSIX_BYTES_READ=8 * MiB, POSIX_MAX_BYTE_READ=8 * MiB - 1) for r in range(4)]
    f = hit(run(make_profile({"POSIX": recs})), "P09")
    assert ev(f)["redundant_bytes_read"] == 24 * MiB


# --------------------------------------------------------------------------- P11-P14


def _pattern(op: str, total: int, rand: int, consec: int = 0) -> dict[str, Any]:
    # Darshan's SEQ counter includes the consecutive ones and never the rank's first request, so
    # random = total - seq - 1 for a one-rank record.
    return posix(**{f"POSIX_{op}S": total, f"POSIX_SEQ_{op}S": total - rand - 1, f"POSIX_CONSEC_{op}S": consec})


@pytest.mark.parametrize(
    ("code", "ok_code", "op", "verb"), [("P11", "P12", "READ", "read"), ("P13", "P14", "WRITE", "write")]
)
def test_random_access_ratio_boundary(code: str, ok_code: str, op: str, verb: str) -> None:
    # random / total > random_operations (0.2) and random > random_operations_absolute (1000); fewer random
    # requests raise it only when they cost random_cost_share of the run (these records carry no time)
    below = run(make_profile({"POSIX": [_pattern(op, 10000, 2000, consec=5000)]}))
    assert code not in below.codes()
    f_ok = hit(below, ok_code, Severity.OK)
    assert ev(f_ok) == {f"consecutive_{verb}s": 5000, f"sequential_{verb}s": 2999, f"total_{verb}s": 10000}
    above = run(make_profile({"POSIX": [_pattern(op, 10000, 2001)]}))
    f = hit(above, code, Severity.CRITICAL)
    assert ev(f) == {f"random_{verb}s": 2001, f"total_{verb}s": 10000, f"random_{verb}_share": pytest.approx(0.2001)}
    assert ok_code not in above.codes()


@pytest.mark.parametrize(("code", "ok_code", "op"), [("P11", "P12", "READ"), ("P13", "P14", "WRITE")])
def test_random_access_absolute_boundary(code: str, ok_code: str, op: str) -> None:
    assert code not in run(make_profile({"POSIX": [_pattern(op, 2000, 1000)]})).codes()
    assert code in run(make_profile({"POSIX": [_pattern(op, 2000, 1001)]})).codes()


@pytest.mark.parametrize(("code", "ok_code", "op"), [("P11", "P12", "READ"), ("P13", "P14", "WRITE")])
def test_first_request_of_each_rank_is_not_random(code: str, ok_code: str, op: str) -> None:
    # Each of 2000 records (one file per rank) is accessed once from offset 0: Darshan counts none
    # of those requests as sequential, yet none goes backwards.
    recs = [posix(id=i + 1, rank=i, **{f"POSIX_{op}S": 1}) for i in range(2000)]
    report = run(make_profile({"POSIX": recs}, nprocs=2000))
    assert code not in report.codes() and ok_code in report.codes()


@pytest.mark.parametrize(("code", "ok_code", "op"), [("P11", "P12", "READ"), ("P13", "P14", "WRITE")])
def test_few_but_mostly_random_requests_are_not_called_sequential(code: str, ok_code: str, op: str) -> None:
    report = run(make_profile({"POSIX": [_pattern(op, 900, 500)]}))  # 56 % random, under 1000 in number
    assert code not in report.codes() and ok_code not in report.codes()


@pytest.mark.parametrize("code", ["P12", "P14"])
def test_sequential_needs_requests(code: str) -> None:
    assert code not in run(make_profile({"POSIX": [posix()]})).codes()


# --------------------------------------------------------------------------- P17


def test_p17_metadata_time_per_rank_boundary() -> None:
    # A rank's metadata time, summed over its files, must be > metadata_time_rank (30 s).
    def p(*times: float) -> Any:
        return make_profile({"POSIX": [posix(id=i + 1, rank=1, POSIX_F_META_TIME=t) for i, t in enumerate(times)]})

    assert "P17" not in run(p(30.0)).codes()
    assert "P17" not in run(p(15.0, 15.0)).codes()
    f = hit(run(p(15.25, 15.25)), "P17", Severity.CRITICAL)  # two files of one rank add up
    assert ev(f) == {"ranks_over_threshold": 1, "max_rank_meta_time": 30.5, "total_meta_time": 30.5}
    assert f.ranks == [1]
    assert "P17" not in run(p(30.5), metadata_time_rank=31).codes()


def test_p17_shared_file_time_is_spread_over_ranks() -> None:
    def p(total: float) -> Any:
        return make_profile({"POSIX": [posix(rank=-1, POSIX_F_META_TIME=total)]}, nprocs=4)

    assert "P17" not in run(p(120.0)).codes()  # 30 s per rank
    f = hit(run(p(121.0)), "P17")
    assert ev(f)["ranks_over_threshold"] == 4
    assert ev(f)["max_rank_meta_time"] == pytest.approx(30.25)


# --------------------------------------------------------------------------- P18, P19


def test_p18_shared_data_imbalance_boundary() -> None:
    # |slowest rank bytes - fastest rank bytes| / file bytes > imbalance_stragglers (0.15)
    def p(fastest: int) -> Any:
        return make_profile(
            {
                "POSIX": [
                    posix(
                        rank=-1,
                        POSIX_BYTES_WRITTEN=1000,
                        POSIX_SLOWEST_RANK_BYTES=400,
                        POSIX_FASTEST_RANK_BYTES=fastest,
                        POSIX_SLOWEST_RANK=3,
                    )
                ]
            }
        )

    assert "P18" not in run(p(250)).codes()
    f = hit(run(p(249)), "P18", Severity.CRITICAL)
    assert ev(f) == {"files": 1, "max_bytes_imbalance": pytest.approx(0.151)}
    assert f.ranks == [3]


def test_p19_shared_time_imbalance_boundary() -> None:
    def p(fastest: float) -> Any:
        return make_profile(
            {
                "POSIX": [
                    posix(
                        rank=-1,
                        POSIX_F_WRITE_TIME=6.0,
                        POSIX_F_READ_TIME=3.0,
                        POSIX_F_META_TIME=1.0,
                        POSIX_F_SLOWEST_RANK_TIME=4.0,
                        POSIX_F_FASTEST_RANK_TIME=fastest,
                        POSIX_SLOWEST_RANK=2,
                    )
                ]
            }
        )

    assert "P19" not in run(p(2.5)).codes()  # 1.5 s of 10 s
    f = hit(run(p(2.4)), "P19", Severity.CRITICAL)
    assert ev(f) == {"files": 1, "max_time_imbalance": pytest.approx(0.16)}
    assert f.ranks == [2]


def test_stragglers_ignore_private_files() -> None:
    p = make_profile({"POSIX": [posix(rank=0, POSIX_BYTES_WRITTEN=1000, POSIX_SLOWEST_RANK_BYTES=1000)]})
    assert "P18" not in run(p).codes()


# --------------------------------------------------------------------------- P21, P22


@pytest.mark.parametrize(("code", "col"), [("P21", "POSIX_BYTES_WRITTEN"), ("P22", "POSIX_BYTES_READ")])
def test_rank_size_imbalance_boundary(code: str, col: str) -> None:
    # Per file, over its per-rank records: (max - min) / max > imbalance_size (0.3)
    def p(light: int) -> Any:
        return make_profile({"POSIX": [posix(rank=0, **{col: 100}), posix(rank=1, **{col: light})]})

    assert code not in run(p(70)).codes()
    f = hit(run(p(69)), code, Severity.CRITICAL)
    assert ev(f) == {"files": 1, "max_imbalance": pytest.approx(0.31), "collective_share": 0.0}
    assert f.ranks == [0, 1]  # heavy, light
    assert code not in run(p(69), imbalance_size=0.31).codes()


@pytest.mark.parametrize(("code", "op"), [("P21", "WRITE"), ("P22", "READ")])
def test_rank_size_imbalance_under_collective_io_is_info(code: str, op: str) -> None:
    # With collective buffering only the aggregators touch the file through POSIX: the imbalance
    # is expected, so the finding drops to info from a collective share of 0.5.
    col = "POSIX_BYTES_WRITTEN" if op == "WRITE" else "POSIX_BYTES_READ"

    def p(coll: int, indep: int) -> Any:
        return make_profile(
            {
                "POSIX": [posix(rank=0, **{col: 100}), posix(rank=1, **{col: 10})],
                "MPI-IO": [{"id": 1, "rank": -1, f"MPIIO_COLL_{op}S": coll, f"MPIIO_INDEP_{op}S": indep}],
            }
        )

    assert hit(run(p(49, 51)), code).detected_severity == Severity.CRITICAL
    f = hit(run(p(50, 50)), code, Severity.INFO)
    assert ev(f)["collective_share"] == 0.5


# --------------------------------------------------------------------------- M01-M10


def test_m01_no_mpiio() -> None:
    f = hit(run(make_profile({"POSIX": [posix(POSIX_READS=1)]}, nprocs=16)), "M01", Severity.WARNING)
    assert ev(f) == {"nprocs": 16}
    with_mpiio = make_profile({"POSIX": [posix(POSIX_READS=1)]}, modules={"MPI-IO": {}})
    assert "M01" not in run(with_mpiio).codes()
    assert "M01" not in run(make_profile({})).codes()  # no I/O at all: nothing to move to MPI-IO


def _mpiio(**counters: Any) -> Any:
    return make_profile({"MPI-IO": [{"id": 1, "rank": -1, **counters}]})


def _small_calls(op: str, n: int, **more: Any) -> dict[str, Any]:
    """``n`` independent 256 KiB calls of ``op`` (no POSIX records beneath: contiguity cannot be judged)."""
    verb = "READ" if op == "READ" else "WRITTEN"
    return {f"MPIIO_INDEP_{op}S": n, f"MPIIO_SIZE_{op}_AGG_100K_1M": n, f"MPIIO_BYTES_{verb}": n << 18, **more}


@pytest.mark.parametrize(("code", "op", "verb"), [("M02", "READ", "read"), ("M03", "WRITE", "write")])
def test_no_collective_boundary(code: str, op: str, verb: str) -> None:
    # No collective call and more than collective_operations_absolute (1000) small calls to a shared file.
    assert code not in run(_mpiio(**_small_calls(op, 1000))).codes()
    f = hit(run(_mpiio(**_small_calls(op, 1001))), code, Severity.CRITICAL)
    assert ev(f) == {
        f"independent_{verb}s": 1001,
        f"collective_{verb}s": 0,
        f"independent_{verb}_share": 1.0,
        f"mergeable_{verb}s": 1001,
        "shared_files": 1,
    }
    assert f.files[0].metrics[0].value == 1001
    assert code not in run(_mpiio(**_small_calls(op, 5000, **{f"MPIIO_COLL_{op}S": 1}))).codes()


@pytest.mark.parametrize(("code", "op"), [("M02", "READ"), ("M03", "WRITE")])
def test_no_collective_needs_small_requests_not_exactly_1_mib(code: str, op: str) -> None:
    # 1 MiB calls sit in the 100K_1M bin; the ACCESS counters say they are exactly 1 MiB: not small.
    verb = "READ" if op == "READ" else "WRITTEN"
    mib = {
        f"MPIIO_INDEP_{op}S": 2000,
        f"MPIIO_SIZE_{op}_AGG_100K_1M": 2000,
        f"MPIIO_BYTES_{verb}": 2000 << 20,
        "MPIIO_ACCESS1_ACCESS": 1 << 20,
        "MPIIO_ACCESS1_COUNT": 2000,
    }
    assert code not in run(_mpiio(**mib)).codes()
    # Without the ACCESS counters, a mean of 1 MiB with nothing under 100 KiB is not small either.
    assert code not in run(_mpiio(**{**mib, "MPIIO_ACCESS1_ACCESS": 0, "MPIIO_ACCESS1_COUNT": 0})).codes()
    assert code in run(_mpiio(**_small_calls(op, 2000))).codes()


@pytest.mark.parametrize(("code", "op"), [("M02", "READ"), ("M03", "WRITE")])
def test_no_collective_not_for_a_file_per_process(code: str, op: str) -> None:
    # One record per rank and file: nothing for collective buffering to gather, however small the calls.
    recs = [{"id": 10 + r, "rank": r, **_small_calls(op, 500)} for r in range(4)]
    assert code not in run(make_profile({"MPI-IO": recs}, nprocs=4)).codes()
    shared = [{"id": 10, "rank": r, **_small_calls(op, 500)} for r in range(4)]
    assert code in run(make_profile({"MPI-IO": shared}, nprocs=5)).codes()


@pytest.mark.parametrize(("code", "op"), [("M02", "READ"), ("M03", "WRITE")])
def test_no_collective_not_for_ranks_writing_their_own_block(code: str, op: str) -> None:
    # Small calls, but each rank's follow one another (POSIX consecutive counters): collective buffering would
    # find the ranks' pieces of a call far apart and merge nothing.
    beneath = {f"POSIX_{op}S": 2000, f"POSIX_CONSEC_{op}S": 1996, "POSIX_OPENS": 4, f"POSIX_SIZE_{op}_100K_1M": 2000}
    p = make_profile(
        {"MPI-IO": [{"id": 1, "rank": -1, **_small_calls(op, 2000)}], "POSIX": [posix(rank=-1, **beneath)]}
    )
    assert code not in run(p).codes()
    strided = {**beneath, f"POSIX_CONSEC_{op}S": 0}
    p = make_profile(
        {"MPI-IO": [{"id": 1, "rank": -1, **_small_calls(op, 2000)}], "POSIX": [posix(rank=-1, **strided)]}
    )
    assert code in run(p).codes()


@pytest.mark.parametrize(("code", "op", "verb"), [("M04", "READ", "read"), ("M05", "WRITE", "write")])
def test_uses_collective(code: str, op: str, verb: str) -> None:
    assert code not in run(_mpiio(**{f"MPIIO_INDEP_{op}S": 10})).codes()
    f = hit(run(_mpiio(**{f"MPIIO_INDEP_{op}S": 3, f"MPIIO_COLL_{op}S": 1})), code, Severity.OK)
    assert ev(f) == {f"collective_{verb}s": 1, f"collective_{verb}_share": 0.25}


@pytest.mark.parametrize(("code", "op", "verb"), [("M06", "READ", "read"), ("M07", "WRITE", "write")])
def test_blocking(code: str, op: str, verb: str) -> None:
    f = hit(run(_mpiio(**{f"MPIIO_INDEP_{op}S": 5, f"MPIIO_COLL_{op}S": 2})), code, Severity.WARNING)
    assert ev(f) == {f"blocking_{verb}s": 7, f"nonblocking_{verb}s": 0}
    assert code not in run(_mpiio(**{f"MPIIO_INDEP_{op}S": 5, f"MPIIO_NB_{op}S": 1})).codes()
    # Unlike Drishti, no advice about reads (writes) the job never makes.
    assert code not in run(_mpiio()).codes()


def _aggr(cb_nodes: int | None, nodes: int | None, coll: int = 1, log_nodes: int | None = None) -> Report:
    # cb_nodes is not in a Darshan log (its "h" metadata are the hints Darshan used for its own
    # log file), so it comes from the user as a JobFacts; nodes come from the facts or the log.
    p = make_profile(
        {"MPI-IO": [{"id": 1, "rank": -1, "MPIIO_COLL_WRITES": coll}]}, hints={"cb_nodes": "4"}, nodes=log_nodes
    )
    report = analyze(p, facts=JobFacts(cb_nodes=cb_nodes, nodes=nodes))
    assert report.problems == []
    return report


def test_m08_m09_m10_aggregator_placement() -> None:
    codes = ("M08", "M09", "M10")
    assert [c for c in codes if c in _aggr(4, 5).codes()] == ["M08"]
    assert [c for c in codes if c in _aggr(4, 4).codes()] == ["M10"]
    assert [c for c in codes if c in _aggr(5, 4).codes()] == ["M09"]
    f = hit(_aggr(5, 4), "M09", Severity.CRITICAL)
    assert ev(f) == {"cb_nodes": 5, "nodes": 4}
    assert hit(_aggr(3, 4), "M08").severity == Severity.OK
    assert hit(_aggr(4, 4), "M10").severity == Severity.OK
    # The node count may come from the log (DXT host names, APMPI); the facts win over it.
    assert [c for c in codes if c in _aggr(5, None, log_nodes=4).codes()] == ["M09"]
    assert [c for c in codes if c in _aggr(5, 5, log_nodes=4).codes()] == ["M10"]
    # Unknown cb_nodes (the log's h=cb_nodes=4 hint is not the application's), unknown node
    # count, or no collective I/O: nothing to say.
    for report in (_aggr(None, 4), _aggr(5, None), _aggr(5, 4, coll=0)):
        assert not set(codes) & report.codes()


# --------------------------------------------------------------------------- J01, J02


def _io(seconds: float, runtime: float = 100.0, **extra: Any) -> Any:
    return make_profile({"POSIX": [posix(rank=0, POSIX_F_READ_TIME=seconds)]}, runtime_s=runtime, **extra)


def test_j01_boundary() -> None:
    # slowest rank's I/O time / run time < io_share_low (0.05)
    assert "J01" not in run(_io(5.0)).codes()
    f = hit(run(_io(4.9)), "J01", Severity.OK)
    e = ev(f)
    assert e["runtime"] == 100.0
    assert e["slowest_rank_io_time"] == pytest.approx(4.9)
    assert e["io_share_slowest_rank"] == pytest.approx(0.049)
    assert e["mean_rank_io_time"] == pytest.approx(4.9 / 4)
    assert f.ranks == [0]
    assert "J01" in run(_io(5.0), io_share_low=0.06).codes()
    assert "J01" not in run(make_profile({})).codes()  # nothing to measure


def test_j02_boundary_and_severity() -> None:
    # slowest rank's share >= io_share_high (0.3); critical from min(2 * high, 0.9)
    assert "J02" not in run(_io(29.9)).codes()
    f = hit(run(_io(30.0)), "J02", Severity.WARNING)
    assert ev(f)["io_share_slowest_rank"] == pytest.approx(0.3)
    assert hit(run(_io(59.9)), "J02").severity == Severity.WARNING
    assert hit(run(_io(60.0)), "J02").severity == Severity.CRITICAL
    assert "J02" not in run(_io(30.0), io_share_high=0.31).codes()
    assert {"J01", "J02"}.isdisjoint(run(_io(20.0)).codes())


def test_io_share_counts_mpiio_files_once() -> None:
    # MPI-IO time already includes the POSIX time underneath: 20 s, not 40 s (which would be J02).
    p = make_profile(
        {
            "MPI-IO": [{"id": 1, "rank": 0, "MPIIO_F_WRITE_TIME": 20.0, "MPIIO_INDEP_WRITES": 1}],
            "POSIX": [posix(rank=0, POSIX_F_WRITE_TIME=20.0, POSIX_WRITES=1)],
        }
    )
    report = run(p)
    assert report.io_share is not None and report.io_share.slowest_rank_io_s == pytest.approx(20.0)
    assert "J02" not in report.codes()


def test_io_share_shared_file_uses_slowest_rank_time() -> None:
    # A shared record's summed time (4 ranks x 30 s) is not one rank's time; the slowest rank's is.
    p = make_profile(
        {"POSIX": [posix(rank=-1, POSIX_F_WRITE_TIME=120.0, POSIX_F_SLOWEST_RANK_TIME=31.0, POSIX_SLOWEST_RANK=2)]}
    )
    f = hit(run(p), "J02", Severity.WARNING)
    assert ev(f)["slowest_rank_io_time"] == pytest.approx(31.0)
    assert ev(f)["mean_rank_io_time"] == pytest.approx(30.0)
    assert f.ranks == [2]


# --------------------------------------------------------------------------- D01-D03


def test_d01_partial_module() -> None:
    base = {"POSIX": [posix(POSIX_READS=1)]}
    assert "D01" not in run(make_profile(base, modules={"DXT_POSIX": {"partial": False}})).codes()
    report = run(make_profile(base, modules={"DXT_POSIX": {"partial": True}, "POSIX": {"partial": True}}))
    found = [f for f in report.findings if f.code == "D01"]
    assert {f.detected_severity for f in found} == {Severity.WARNING}
    assert sorted(ev(f)["module"] for f in found) == ["DXT_POSIX", "POSIX"]


def test_d02_unreadable_part() -> None:
    base = {"POSIX": [posix(POSIX_READS=1)]}
    assert "D02" not in run(make_profile(base)).codes()
    p = make_profile(base, modules={"POSIX": {"read_error": "corrupted record data after 1 records"}})
    f = hit(analyze(p), "D02", Severity.CRITICAL)
    assert ev(f) == {"module": "POSIX", "records_recovered": 1}
    assert "corrupted record data after 1 records" in f.message
    p = make_profile(base, problems=["the Darshan library crashed (SIGSEGV) after the last module"])
    report = analyze(p)
    assert "SIGSEGV" in hit(report, "D02").message
    assert report.problems == ["the Darshan library crashed (SIGSEGV) after the last module"]


def test_d03_empty_log() -> None:
    f = hit(run(make_profile({})), "D03", Severity.INFO)
    assert ev(f) == {"modules": 0}
    assert "D03" not in run(make_profile({"STDIO": [{"id": 1, "rank": 0}]})).codes()
    # A module that could not be read is damage (D02), not "no I/O".
    p = make_profile({}, modules={"POSIX": {"read_error": "not read"}})
    assert analyze(p).codes() >= {"D02"} and "D03" not in analyze(p).codes()


# --------------------------------------------------------------------------- L01-L05


def _lustre_file(
    rid: int, *, rank: int, writes: int, size: int, stripe_size: int = MiB, osts: tuple[int, ...] = (0,), **extra: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A POSIX record writing ``writes`` requests of ``size`` bytes, and its Lustre layout."""
    px = {
        "id": rid,
        "rank": rank,
        "POSIX_WRITES": writes,
        "POSIX_BYTES_WRITTEN": writes * size,
        "POSIX_MAX_BYTE_WRITTEN": writes * size - 1,
        "POSIX_ACCESS1_ACCESS": size,
        "POSIX_ACCESS1_COUNT": writes,
        **extra,
    }
    lu = {"id": rid, "rank": -1, "stripe_size": stripe_size, "stripe_count": len(osts), "osts": osts}
    return px, lu


def test_l01_single_ost_shared_file_boundary() -> None:
    # stripe count 1, >= lustre_many_ranks (8) writers, >= lustre_min_file_bytes (64 MiB) written
    px, lu = _lustre_file(1, rank=-1, writes=64, size=MiB)
    assert "L01" not in run(make_profile({"POSIX": [px], "LUSTRE": [lu]}, nprocs=7)).codes()
    f = hit(run(make_profile({"POSIX": [px], "LUSTRE": [lu]}, nprocs=8)), "L01", Severity.CRITICAL)
    assert ev(f) == {"files": 1, "max_writers": 8}
    assert {m.name: m.value for m in f.files[0].metrics}["stripe_count"] == 1
    # Just under 64 MiB written: too small to matter.
    small = dict(px, POSIX_BYTES_WRITTEN=64 * MiB - 1)
    assert "L01" not in run(make_profile({"POSIX": [small], "LUSTRE": [lu]}, nprocs=8)).codes()
    # Striped over two OSTs: no single-OST bottleneck.
    lu2 = dict(lu, stripe_count=2, osts=(0, 1))
    assert "L01" not in run(make_profile({"POSIX": [px], "LUSTRE": [lu2]}, nprocs=8)).codes()
    assert "L01" in run(make_profile({"POSIX": [px], "LUSTRE": [lu]}, nprocs=7), lustre_many_ranks=7).codes()


def test_l01_counts_distinct_writer_ranks_of_private_records() -> None:
    def p(ranks: int) -> Any:
        recs = [_lustre_file(1, rank=r, writes=10, size=MiB)[0] for r in range(ranks)]
        return make_profile({"POSIX": recs, "LUSTRE": [_lustre_file(1, rank=0, writes=10, size=MiB)[1]]}, nprocs=64)

    assert "L01" not in run(p(7)).codes()  # 70 MiB, but only 7 of the 64 ranks write it
    assert ev(hit(run(p(8)), "L01"))["max_writers"] == 8


def test_l02_straddling_requests_boundary() -> None:
    # The common request (1.5 MiB) is neither a multiple nor a divisor of the 1 MiB stripe, it is
    # >= 64 KiB, and it must make up >= lustre_straddle_share (0.5) of the file's requests.
    def p(common: int, other: int = 0, size: int = 3 * MiB // 2) -> Any:
        px, lu = _lustre_file(1, rank=-1, writes=common + other, size=size, osts=(0, 1, 2, 3))
        px["POSIX_ACCESS1_COUNT"] = common
        return make_profile({"POSIX": [px], "LUSTRE": [lu]})

    assert "L02" not in run(p(49, 51)).codes()
    f = hit(run(p(50, 50)), "L02", Severity.WARNING)
    assert ev(f) == {
        "files": 1,
        "example_request": 3 * MiB // 2,
        "example_stripe_size": MiB,
        "example_request_share": 0.5,
    }
    assert "L02" not in run(p(100, size=MiB // 2)).codes()  # divides the stripe
    assert "L02" not in run(p(100, size=2 * MiB)).codes()  # a multiple of it
    assert "L02" not in run(p(2000, size=64 * 1024 - 1)).codes()  # below lustre_min_straddle_request


def test_l03_stripes_too_small_boundary() -> None:
    # common request >= lustre_large_request_factor (8) x stripe size, on a striped file
    def p(size: int, osts: tuple[int, ...] = (0, 1, 2, 3)) -> Any:
        px, lu = _lustre_file(1, rank=-1, writes=16, size=size, osts=osts)
        return make_profile({"POSIX": [px], "LUSTRE": [lu]})

    assert "L03" not in run(p(8 * MiB - 1)).codes()
    f = hit(run(p(8 * MiB)), "L03", Severity.INFO)
    assert ev(f) == {"files": 1, "max_request_to_stripe": 8.0}
    assert "L03" not in run(p(8 * MiB, osts=(0,))).codes()  # stripe count 1: L01's business
    assert "L03" not in run(p(8 * MiB), lustre_large_request_factor=9).codes()


def _osts(bytes_per_file: list[int], seconds: list[float]) -> Any:
    """One file per rank, each on its own OST (file i on OST 10 + i)."""
    posix_recs, lustre_recs = [], []
    for i, (n, t) in enumerate(zip(bytes_per_file, seconds, strict=True)):
        px, lu = _lustre_file(i + 1, rank=i, writes=n // MiB, size=MiB, osts=(10 + i,))
        px["POSIX_F_WRITE_TIME"] = t
        posix_recs.append(px)
        lustre_recs.append(lu)
    return make_profile({"POSIX": posix_recs, "LUSTRE": lustre_recs}, nprocs=len(bytes_per_file))


def test_l04_slow_ost_boundary() -> None:
    # An OST at >= ost_slow_factor (2) x the median seconds per GiB, among >= ost_min_count (4) OSTs
    # that each carried >= 64 MiB.
    assert "L04" not in run(_osts([GiB] * 5, [1.0, 1.0, 1.0, 1.0, 1.99])).codes()
    report = run(_osts([GiB] * 5, [1.0, 1.0, 1.0, 1.0, 2.0]))
    f = hit(report, "L04", Severity.CRITICAL)
    assert ev(f) == {
        "slow_ost": 14,
        "slow_ost_seconds_per_gib": 2.0,
        "median_seconds_per_gib": 1.0,
        "slow_osts": 1,
        "osts_used": 5,
        "ranks_on_slow_ost": 1,  # rank 4's file alone sits on it
    }
    assert f.ranks == [4]
    assert [x.path for x in f.files] == ["/scratch/job/file5.dat"]
    assert "L05" not in report.codes()  # equal bytes everywhere
    assert "L04" not in run(_osts([GiB] * 5, [1.0, 1.0, 1.0, 1.0, 2.0]), ost_slow_factor=2.01).codes()


def test_l04_needs_enough_osts_with_enough_traffic() -> None:
    assert "L04" not in run(_osts([GiB] * 3, [1.0, 1.0, 5.0])).codes()  # 3 < ost_min_count
    assert "L04" in run(_osts([GiB] * 3, [1.0, 1.0, 5.0]), ost_min_count=3).codes()
    # The slow OST moved only 32 MiB: latency, not an OST problem.
    assert "L04" not in run(_osts([GiB] * 4 + [32 * MiB], [1.0] * 4 + [5.0])).codes()


def test_l05_overloaded_ost_boundary() -> None:
    # An OST with >= ost_busy_factor (3) x the median bytes. Time is proportional to bytes so no
    # OST is slow per byte.
    assert "L05" not in run(_osts([GiB] * 4 + [3 * GiB - MiB], [1.0] * 4 + [2.999])).codes()
    report = run(_osts([GiB] * 4 + [3 * GiB], [1.0] * 4 + [3.0]))
    f = hit(report, "L05", Severity.WARNING)
    assert ev(f) == {"busy_ost": 14, "busy_ost_bytes": 3 * GiB, "median_ost_bytes": GiB, "busy_osts": 1}
    assert "L04" not in report.codes()
    assert "L05" not in run(_osts([GiB] * 4 + [3 * GiB], [1.0] * 4 + [3.0]), ost_busy_factor=3.01).codes()


def test_lustre_checks_need_posix_data() -> None:
    _, lu = _lustre_file(1, rank=-1, writes=64, size=MiB)
    report = run(make_profile({"LUSTRE": [lu]}, nprocs=64))
    assert not {c for c in report.codes() if c.startswith("L")}


# --------------------------------------------------------------------------- thresholds


def test_overrides_are_validated() -> None:
    with pytest.raises(ThresholdError, match="unknown threshold"):
        Thresholds().with_overrides({"no_such_threshold": 1})
    with pytest.raises(ThresholdError, match="small_requests"):
        Thresholds().with_overrides({"small_requests": 2.0})


def test_report_records_the_thresholds_used() -> None:
    report = run(make_profile({"POSIX": [posix(POSIX_READS=1)]}), io_share_low=0.07)
    assert report.thresholds["io_share_low"] == 0.07
    assert report.thresholds["imbalance_operations"] == 0.1
