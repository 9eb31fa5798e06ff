"""Record integrity: corrupt records are left out and counted, never analysed as if valid.

The fuzzed logs are real logs rewritten by libdarshan-util with damaged records (``iodiag.synth.fuzz``):
ids missing from the name table, ranks far outside the job, negative or near-2**63 counters, NaN,
infinite, negative or centuries-long timers. ``bench/fuzz_records.py`` runs the same loop over 10,000.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from iodiag.analysis import analyze
from iodiag.analysis.outcomes.invariants import problems
from iodiag.ingest import JobProfile, load_profile
from iodiag.ingest.integrity import screen
from iodiag.ingest.table import Table
from iodiag.synth.fuzz import write_fuzzed
from tests.conftest import all_logs, log_id, shared_log, wheel_log

BASES = [
    wheel_log("sample-badost.darshan"),
    shared_log(
        "darshan-logs/ior_pnetcdf_hdf5/shane_ior-HDF5_id438090-438090_11-9-41522-17417065676046418211_1.darshan"
    ),
    shared_log(
        "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
    ),
    wheel_log("noposix.darshan"),
]


@cache
def _base(path: Path) -> JobProfile:
    return load_profile(str(path))


# Stray values real Darshan releases wrote (set to 0 and reported, the records kept): 3.1.x's negative mmap
# count, 3.2.0's garbage second access size, negative STDIO write and POSIX metadata timers.
KNOWN_RUNTIME_BUGS = {
    "mpi-io-test-x86_64-3.1.3.darshan": {"POSIX"},
    "mpi-io-test-x86_64-3.1.4.darshan": {"POSIX"},
    "mpi-io-test-x86_64-3.1.5.darshan": {"POSIX"},
    "mpi-io-test-x86_64-3.2.0.darshan": {"POSIX", "MPI-IO"},
    "dxt.darshan": {"POSIX"},
    "example.darshan": {"STDIO"},
    "sample.darshan": {"STDIO"},
}


@pytest.mark.parametrize("path", all_logs(), ids=log_id)
def test_no_record_of_a_real_log_is_left_out(path: Path) -> None:
    profile = load_profile(str(path))
    dropped = {n: i.corrupt_note for n, i in profile.modules.items() if i.corrupt_records}
    assert not dropped
    report = analyze(profile)
    assert "D04" not in report.codes()
    reset = {n for n, i in profile.modules.items() if i.reset_note}
    assert reset == KNOWN_RUNTIME_BUGS.get(path.name, set())
    for n in reset:
        assert any(c.startswith(f"Darshan wrote impossible values into {n} fields") for c in report.verdict.caveats)


def test_each_rule_leaves_out_what_no_run_can_write() -> None:
    names = {1: "/a", 2: "/b"}
    n = 6
    t = Table(
        {
            "id": np.array([1, 2, 99, 1, 2, 1], dtype=np.uint64),
            "rank": np.array([0, -1, 0, 9, 1, 0], dtype=np.int64),
            "POSIX_BYTES_READ": np.array([10, -1, 30, 40, -5, 7], dtype=np.int64),
            "POSIX_MMAPS": np.array([-4, 0, 0, 0, 0, 0], dtype=np.int64),
            "POSIX_F_READ_TIME": np.array([0.5, 1.0, 0.1, 0.1, 0.1, np.nan]),
            "POSIX_F_META_TIME": np.array([0.5, -0.2, 0.1, 0.1, 0.1, 0.0]),
        },
        n,
    )
    kept, out = screen(
        "POSIX",
        t,
        names=names,
        nprocs=4,
        runtime_s=10.0,
        counter_names=["POSIX_BYTES_READ", "POSIX_MMAPS"],
        fcounter_names=["POSIX_F_READ_TIME", "POSIX_F_META_TIME"],
    )
    # -1 is Darshan's "not set" and stays; -5 bytes, a foreign id, rank 9 and a NaN timer cannot be.
    assert kept["POSIX_BYTES_READ"].tolist() == [10, -1]
    assert out.dropped == 4 and out.records == 6
    assert out.reasons == {
        "with a rank out of range (9; outside -1..3)": 1,
        "with an id missing from the name table": 1,
        "with a negative byte or operation count": 1,
        "with a timer that is not a number": 1,
    }
    assert out.line().startswith("4 of 6 POSIX records are corrupt and were left out (")
    # Stray values in kept records are set to 0 and named, not dropped.
    assert kept["POSIX_MMAPS"].tolist() == [0, 0] and kept["POSIX_F_META_TIME"].tolist() == [0.5, 0.0]
    assert out.reset == {"POSIX_MMAPS": 1, "POSIX_F_META_TIME": 1}


@pytest.mark.parametrize("seed", range(40))
def test_fuzzed_records_are_left_out_and_reported(seed: int, tmp_path: Path) -> None:
    base = _base(BASES[seed % len(BASES)])
    out = tmp_path / "fuzzed.darshan"
    what = write_fuzzed(base, out, seed)
    profile = load_profile(str(out))
    report = analyze(profile)
    assert not problems(report), problems(report)[:5]
    dropped = sum(i.corrupt_records for i in profile.modules.values())
    reset = [i.reset_note for i in profile.modules.values() if i.reset_note]
    assert dropped <= sum(what.damaged.values())
    assert dropped or reset  # every kind of damage is either left out or set to 0, and said
    d04 = report.finding("D04")
    assert (d04 is not None and "corrupt and were left out" in d04.message) == bool(dropped)
    assert all(n in report.verdict.caveats for n in (f"{r}." for r in reset))
    for name, info in profile.modules.items():
        t = profile.tables.get(name)
        if t is not None and "rank" in t and len(t) and name in what.damaged:
            ranks = np.asarray(t["rank"])
            assert ranks.min() >= -1 and ranks.max() < max(profile.meta.nprocs, 1)
            assert info.records + info.corrupt_records == len(base.tables[name])


def test_batch_survives_corrupt_logs(tmp_path: Path) -> None:
    """`iodiag batch` reports every log, however damaged, and never dies on one."""
    import subprocess
    import sys

    logs = tmp_path / "logs"
    logs.mkdir()
    for seed in range(3):
        write_fuzzed(_base(BASES[seed]), logs / f"fuzzed-{seed}.darshan", seed, share=0.9)
    proc = subprocess.run(
        [sys.executable, "-m", "iodiag", "batch", str(logs), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


def _pad_job_region(valid: bytes, zeros: int) -> bytes:
    """The log as a block-aligned copy leaves it: zeros after the header, every region map shifted past them."""
    import struct

    from iodiag.ingest.recover import header_size

    version = valid[:8].split(b"\0")[0].decode()
    fixed, modules = (32, 64) if version == "3.41" else (24, 16)
    header = header_size(version)
    assert valid[header] == 0x78  # the job record's zlib stream starts right after the header
    name_off, name_len = struct.unpack("<QQ", valid[fixed : fixed + 16])
    maps = [struct.unpack("<QQ", valid[fixed + 16 * (i + 1) : fixed + 16 * (i + 2)]) for i in range(modules)]
    head = bytearray(valid[:header])
    head[fixed : fixed + 16] = struct.pack("<QQ", name_off + zeros, name_len)
    for i, (off, length) in enumerate(maps):
        if length:
            head[fixed + 16 * (i + 1) : fixed + 16 * (i + 2)] = struct.pack("<QQ", off + zeros, length)
    return bytes(head) + b"\0" * zeros + valid[header:]


@pytest.mark.parametrize("src", [BASES[0], BASES[2]], ids=["format-3.10", "format-3.41"])
def test_zero_padding_before_the_job_record_is_recovered_with_a_caveat(src: Path, tmp_path: Path) -> None:
    from iodiag.ingest import LogReadError
    from iodiag.ingest.recover import header_size

    padded = tmp_path / "padded.darshan"
    padded.write_bytes(_pad_job_region(src.read_bytes(), 4096))
    profile = load_profile(str(padded))
    original = _base(src)
    assert profile.meta.jobid == original.meta.jobid and profile.path == str(padded)
    assert {n: len(t) for n, t in profile.tables.items()} == {n: len(t) for n, t in original.tables.items()}
    assert profile.problems[0].startswith("recovered: the log has 4,096 zero bytes between its header")
    report = analyze(profile)
    assert not problems(report)
    assert any("4,096 zero bytes" in f.message for f in report.findings)
    # Damage that is not padding stays a one-line refusal.
    broken = tmp_path / "broken.darshan"
    data = bytearray(src.read_bytes())
    start = header_size(data[:8].split(b"\0")[0].decode())
    data[start : start + 80] = b"\xff" * 80
    broken.write_bytes(bytes(data))
    with pytest.raises(LogReadError):
        load_profile(str(broken))
