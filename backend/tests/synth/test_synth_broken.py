"""Near-valid broken logs from the writer: the reader answers LogReadError or a partial-data finding."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from iodiag.analysis import analyze
from iodiag.ingest import LogReadError, load_profile
from iodiag.synth import JobInfo
from iodiag.synth.broken import KINDS, write_broken
from tests.conftest import shared_log

SOURCE = shared_log(
    "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
)

# What a reader must say for each breakage: "error" = LogReadError, "partial" = a report with D02,
# "ok" = a report (the damage is not in anything the reader needs).
EXPECTED = {
    "bad-magic": {"error"},
    "unknown-version": {"error"},
    "region-past-end": {"error", "partial"},
    "region-offset-past-end": {"error", "partial"},
    "corrupt-stream": {"error", "partial"},
    "truncated-region": {"error", "partial"},
    "missing-names": {"ok"},
    "lying-dxt-count": {"error", "partial"},
}


@pytest.fixture(scope="module")
def source() -> tuple[JobInfo, dict[int, str], dict]:  # type: ignore[type-arg]
    p = load_profile(str(SOURCE))
    m = p.meta
    job = JobInfo(jobid=m.jobid, nprocs=m.nprocs, exe=m.exe, mounts=[(x.path, x.fs_type) for x in m.mounts])
    # write_broken takes DataFrames (it reads them with pandas), the profile holds Tables.
    return job, dict(p.names), {k: v.to_pandas() for k, v in p.tables.items() if k in ("POSIX", "MPI-IO", "STDIO")}


def test_every_breakage_has_an_expectation() -> None:
    assert set(KINDS) == set(EXPECTED)


@pytest.mark.parametrize("kind", KINDS)
def test_broken_log_is_answered_cleanly(kind: str, tmp_path: Path, source: tuple) -> None:  # type: ignore[type-arg]
    job, names, tables = source
    path = write_broken(kind, tmp_path / f"{kind}.darshan", job, names, tables)
    started = time.monotonic()
    try:
        profile = load_profile(str(path), include=("DXT",), timeout_s=30, memory_limit_bytes=2 << 30)
    except LogReadError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
        outcome = "error"
    else:
        report = analyze(profile)
        if "D02" in report.codes():
            outcome = "partial"
        else:
            outcome = "ok"
            if kind == "missing-names":
                # Records whose ids have no name are not the runtime's records as it wrote them: they are left
                # out and counted (D04), as PyDarshan's reader leaves them out; the named one is kept.
                d04 = report.finding("D04")
                assert d04 is not None and "id missing from the name table" in d04.message
                assert all(not profile.name(i).startswith("<unknown record") for i in profile.table("POSIX")["id"])
    assert outcome in EXPECTED[kind], f"{kind}: got {outcome}"
    assert time.monotonic() - started < 30
