"""Every real log we have: it loads, it analyzes cleanly, and the findings that real logs
can confirm are there (and absent where they must be).

The logs are the shared set (``/work/shared/logs``, see its README) and the ones shipped
inside the darshan wheel.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from iodiag.analysis import analyze
from iodiag.analysis.models import Layer, Report, Severity
from iodiag.core.thresholds import Thresholds
from iodiag.ingest import JobProfile, load_profile
from iodiag.ingest.libreader import OPTIONAL_MODULES
from tests.conftest import SHARED_LOGS, all_logs, log_id, shared_log, wheel_log

RELEASE_LOGS = sorted((SHARED_LOGS / "darshan-logs" / "release_logs").glob("*.darshan"))
EMPTY = shared_log("darshan-logs/empty_log/empty_log.darshan")
PARTIAL_DXT = shared_log("darshan-logs/partial_data_dxt/partial_data_dxt.darshan")
NONMPI = shared_log("darshan-logs/nonmpi_dxt_anonymized/nonmpi_dxt_anonymized.darshan")
MPI_IO_TEST = shared_log(
    "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
)
APMPI = shared_log("darshan-logs/apmpi/darshan-apmpi-2nodes-64mpi.darshan")
DRISHTI = shared_log("drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan")
E3SM = shared_log("darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan")
DIAGONAL = shared_log(
    "darshan-logs/runtime_and_dxt_heatmaps_diagonal_write_only/runtime_and_dxt_heatmaps_diagonal_write_only.darshan"
)
DLIO = SHARED_LOGS / "darshan-logs" / "dlio_logs"
DLIO_CHECKPOINT = DLIO / "snyder_python3_id3116902-2110365_12-19-66957-188958432683465822_1.darshan"
DLIO_STARTUP = DLIO / "snyder_python3_id3116902-2110367_12-19-66957-18280558790378981665_1.darshan"
BADOST = wheel_log("sample-badost.darshan")
GOODOST = wheel_log("sample-goodost.darshan")
VPIC = wheel_log("sample.darshan")  # the same log as example_logs/example.darshan
NOPOSIX = wheel_log("noposix.darshan")

LUSTRE_LOGS = [
    p
    for p in all_logs()
    if p.name.startswith(("snyder_python3", "e3sm", "sample", "example", "ior_hdf5", "noposix"))
    or p.name
    in {
        "mpi-io-test-x86_64-3.4.6.darshan",
        "mpi-io-test-x86_64-3.4.7.darshan",
        "mpi-io-test-x86_64-3.5.0.darshan",
        "darshan-apmpi-2nodes-64mpi.darshan",
    }
]


@cache
def _profile(path: Path) -> JobProfile:
    return load_profile(str(path))


@cache
def _report(path: Path) -> Report:
    return analyze(_profile(path))


def test_corpus_is_there() -> None:
    logs = all_logs()
    assert len(logs) >= 60, f"only {len(logs)} real logs found"
    for p in (EMPTY, PARTIAL_DXT, NONMPI, MPI_IO_TEST, APMPI, DRISHTI, BADOST, GOODOST, VPIC, NOPOSIX):
        assert p.is_file(), p
    assert any("LUSTRE" in _profile(p).modules for p in LUSTRE_LOGS)


# --------------------------------------------------------------------------- every log


@pytest.mark.parametrize("log", all_logs(), ids=log_id)
def test_every_real_log_loads_and_analyzes_cleanly(log: Path) -> None:
    profile = _profile(log)
    report = _report(log)
    assert report.problems == []
    assert "D02" not in report.codes()
    assert all(m.read_error is None for m in profile.modules.values())
    assert profile.meta.darshan_version.startswith("3.")
    assert profile.meta.nprocs >= 1
    # Every finding is well formed: severity from the scale, evidence where numbers were found.
    for f in report.findings:
        assert f.severity in set(Severity)
        assert f.message and "\n" not in f.title
    # The report survives a JSON round trip unchanged.
    assert Report.model_validate_json(report.model_dump_json()) == report


@pytest.mark.parametrize("log", RELEASE_LOGS, ids=log_id)
def test_release_logs_report_their_darshan_version(log: Path) -> None:
    m = re.fullmatch(r"mpi-io-test-x86_64-(.+)\.darshan", log.name)
    assert m is not None
    meta = _profile(log).meta
    assert meta.darshan_version == m.group(1)
    assert meta.log_format.startswith("3.")
    # The same 4-rank mpi-io-test run in every release: POSIX and MPI-IO records of one file.
    assert meta.nprocs == 4
    assert _profile(log).has("POSIX") and _profile(log).has("MPI-IO")


def test_release_logs_cover_every_darshan_3_series() -> None:
    versions = {log.name.removeprefix("mpi-io-test-x86_64-").removesuffix(".darshan") for log in RELEASE_LOGS}
    assert {"3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0"} <= versions
    assert len(versions) >= 24


def test_analysis_is_deterministic() -> None:
    for log in (DRISHTI, BADOST, E3SM, VPIC):
        first = analyze(load_profile(str(log))).model_dump_json()
        second = analyze(load_profile(str(log))).model_dump_json()
        assert first == second, log.name


# --------------------------------------------------------------------------- special logs


def test_empty_log_is_d03_only() -> None:
    report = _report(EMPTY)
    assert "D03" in report.codes()
    assert [f.code for f in report.findings if f.layer != Layer.JOB] == []
    assert report.finding("D03").severity == Severity.INFO  # type: ignore[union-attr]
    assert report.io_share is None
    assert {"J01", "J02", "D01", "D02"}.isdisjoint(report.codes())


def test_partial_dxt_log_is_d01_for_both_trace_modules() -> None:
    report = _report(PARTIAL_DXT)
    d01 = [f for f in report.findings if f.code == "D01"]
    assert sorted(f.metric("module") for f in d01) == ["DXT_MPIIO", "DXT_POSIX"]  # type: ignore[type-var]
    assert all(f.severity == Severity.WARNING for f in d01)
    assert "DXT_POSIX" in " ".join(f.message for f in d01) and "DXT_MPIIO" in " ".join(f.message for f in d01)
    assert "D02" not in report.codes()
    # The flag is read from the log header even when the traces themselves are not loaded.
    profile = _profile(PARTIAL_DXT)
    assert profile.modules["DXT_POSIX"].partial and not profile.modules["DXT_POSIX"].loaded


def test_log_without_posix() -> None:
    profile = _profile(NOPOSIX)
    assert "POSIX" not in profile.modules
    assert profile.has("LUSTRE") and profile.has("STDIO")
    report = _report(NOPOSIX)
    # Checks that need POSIX records do not run; Lustre checks need POSIX data to judge a layout. Small
    # requests are counted on STDIO too (by their mean size): those findings name STDIO calls.
    assert not {c for c in report.codes() if c[0] in "PL"} - {"P05", "P06"}
    for code in {"P05", "P06"} & report.codes():
        f = report.finding(code)
        assert f is not None and "STDIO" in f.message, f
    assert {"S01", "M01"} <= report.codes()


def test_non_mpi_log() -> None:
    profile = load_profile(str(NONMPI), include=("DXT",))
    assert profile.meta.nprocs == 1
    assert "MPI-IO" not in profile.modules
    assert profile.has("DXT_POSIX") and profile.meta.nodes == 1
    report = analyze(profile)
    assert report.problems == []
    assert "M01" in report.codes()
    assert not {c for c in report.codes() if c.startswith("M") and c != "M01"}


def test_dxt_traces_load_when_asked() -> None:
    plain = _profile(MPI_IO_TEST)
    assert not plain.has("DXT_POSIX") and plain.meta.nodes is None
    assert not plain.modules["DXT_POSIX"].loaded

    profile = load_profile(str(MPI_IO_TEST), include=("DXT",))
    assert profile.modules["DXT_POSIX"].records == 64  # 32 ranks x (data file + one more)
    assert profile.modules["DXT_MPIIO"].records == 32
    posix, mpiio = profile.table("DXT_POSIX"), profile.table("DXT_MPIIO")
    for t in (posix, mpiio):
        assert list(t.columns) == ["id", "rank", "hostname", "op", "offset", "length", "start", "end"]
        assert set(t["op"]) == {"read", "write"}
        assert (t["end"] >= t["start"]).all() and (t["length"] > 0).all()
        assert len(np.unique(t["rank"])) == 32
    # mpi-io-test: 16 MiB blocks, each rank writes then reads 4 of them.
    assert set(mpiio["length"]) == {16 << 20}
    assert Counter(mpiio["op"].tolist()) == {"write": 128, "read": 128}
    assert len(posix) == 320
    # Node count from the DXT host names (one host here).
    assert profile.meta.nodes == 1 and profile.meta.nodes_source == "DXT host names"
    # The traces change nothing in the findings.
    assert analyze(profile).codes() == _report(MPI_IO_TEST).codes()


def test_apmpi_gives_node_count() -> None:
    include = ("APMPI",) if "APMPI" in OPTIONAL_MODULES else ()
    profile = load_profile(str(APMPI), include=include)
    assert profile.meta.nprocs == 128
    assert profile.meta.nodes == 2 and profile.meta.nodes_source == "APMPI node names"


# --------------------------------------------------------------------------- iodiag's own checks


def test_l04_names_the_slow_ost() -> None:
    f = _report(BADOST).finding("L04")
    assert f is not None and f.severity == Severity.CRITICAL
    assert f.metric("slow_ost") == 14
    assert "OST 14" in f.message
    assert f.metric("osts_used") == 24 and f.metric("slow_osts") == 1
    assert f.metric("slow_ost_seconds_per_gib") > 10 * f.metric("median_seconds_per_gib")  # type: ignore[operator]
    assert f.files and f.ranks


def test_l04_silent_on_healthy_osts() -> None:
    report = _report(GOODOST)
    assert "L04" not in report.codes()
    assert _profile(GOODOST).has("LUSTRE")  # the check had data to look at


@pytest.mark.parametrize("log", LUSTRE_LOGS, ids=log_id)
def test_l04_fires_only_on_the_bad_ost_log(log: Path) -> None:
    assert ("L04" in _report(log).codes()) == (log.name == "sample-badost.darshan")


def test_j01_on_tiny_io_share() -> None:
    # 32 ranks write one byte each over a 4 s run: I/O is 0.04% of it.
    report = _report(DIAGONAL)
    f = report.finding("J01")
    assert f is not None and f.severity == Severity.OK
    assert f.metric("io_share_slowest_rank") < 0.001  # type: ignore[operator]
    assert "J02" not in report.codes()


@pytest.mark.parametrize("log", [BADOST, DRISHTI], ids=log_id)
def test_j02_when_io_dominates(log: Path) -> None:
    report = _report(log)
    f = report.finding("J02")
    assert f is not None and f.severity == Severity.CRITICAL  # over 60% of the run time
    assert f.metric("io_share_slowest_rank") > 0.9  # type: ignore[operator]
    assert "J01" not in report.codes()


@pytest.mark.parametrize("log", all_logs(), ids=log_id)
def test_j01_j02_are_exclusive_and_follow_the_share(log: Path) -> None:
    report = _report(log)
    assert not {"J01", "J02"} <= report.codes()
    s = report.io_share
    if s is None or s.runtime_s <= 0:
        assert not {"J01", "J02"} & report.codes()
        return
    t = Thresholds()
    # J01 must hold even for the shortest run time the log's timestamp resolution allows.
    shortest = s.runtime_s - s.runtime_resolution_s
    sure_low = s.slowest_rank_io_s == 0 or (shortest > 0 and s.slowest_rank_io_s / shortest < t.io_share_low)
    # Or too little I/O to tune at all, whatever its share (a 50 ms job).
    tiny = s.slowest_rank_io_s < t.io_matters_min_seconds
    assert ("J01" in report.codes()) == ((s.share_slowest < t.io_share_low and sure_low) or tiny)
    assert ("J02" in report.codes()) == (s.share_slowest >= t.io_share_high and not tiny)
    assert report.verdict.io_matters is ("J01" not in report.codes())


def test_j01_is_not_claimed_on_second_resolution_runtimes() -> None:
    # The 3.x release logs store whole seconds: their share alone could not justify J01. They get it only
    # because their busiest rank spent well under a second in I/O, which no resolution changes.
    t = Thresholds()
    for log in RELEASE_LOGS:
        r = _report(log)
        if "J01" in r.codes():
            assert r.io_share is not None and r.io_share.slowest_rank_io_s < t.io_matters_min_seconds, log.name


def test_l03_vpic_stripes_far_smaller_than_requests() -> None:
    # VPIC-IO on 2048 ranks writes 2 TiB in 128 MiB requests to a file striped 1 MiB over 24 OSTs:
    # every request is cut into 128 stripe pieces; a larger stripe size is the usual advice.
    # Informational: the layout is not wrong enough to be a warning (it still spreads over 24 OSTs).
    f = _report(VPIC).finding("L03")
    assert f is not None and f.severity == Severity.INFO
    assert f.metric("max_request_to_stripe") == 128
    assert f.files_total == 1 and f.files[0].path.endswith("vpicio.hdf5")


@pytest.mark.parametrize("log", LUSTRE_LOGS, ids=log_id)
def test_lustre_layout_checks_on_real_logs(log: Path) -> None:
    codes = _report(log).codes()
    # L01 (one OST under many writers): no real log qualifies. The 3.4.6+ release logs put a
    # 64 MiB shared file on one OST, but with 4 writers (< lustre_many_ranks = 8); the IOR and
    # DLIO logs with stripe count 1 are file-per-process or single-process. Correctly silent.
    assert "L01" not in codes
    # L02 (requests straddling stripes): DLIO reads 4 MiB on 1 MiB stripes and IOR-HDF5 uses
    # 256 KiB requests (a multiple / a divisor); E3SM's 800964-byte requests do straddle 1 MiB
    # stripes but are only 11% of that file's requests. Correctly silent.
    assert "L02" not in codes
    # L03 only on the VPIC-IO log (128 MiB requests on 1 MiB stripes).
    assert ("L03" in codes) == (log.name in {"sample.darshan", "example.darshan"})


def test_l01_fires_on_release_log_when_four_writers_count_as_many() -> None:
    # The 3.4.6 run: 4 ranks share one 64 MiB file with stripe count 1. With the bar at 4 writers,
    # the layout is exactly what L01 describes.
    log = shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.4.6.darshan")
    report = analyze(_profile(log), Thresholds().with_overrides({"lustre_many_ranks": 4}))
    f = report.finding("L01")
    assert f is not None and f.metric("max_writers") == 4
    assert f.files[0].path.endswith("mpi-io-test.tmp.dat")


@pytest.mark.parametrize("log", [DLIO_STARTUP, DLIO_CHECKPOINT], ids=log_id)
def test_l05_ignores_negligible_ost_traffic(log: Path) -> None:
    assert "L05" not in _report(log).codes()
