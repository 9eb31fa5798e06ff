"""Inputs that are not (whole) Darshan logs: never a traceback, never a hang.

Two kinds of input:

* files that are not Darshan logs at all (empty, a directory, text, gzip, random bytes, a
  header cut short, a file we may not read ...): ``load_profile`` raises ``LogReadError``
  with a one-line message naming the file, and the command exits with status 2 and one
  line on stderr;
* real logs damaged on purpose (truncated at many offsets, bits flipped, bodies replaced
  with random bytes): each case ends in ``LogReadError`` or in a report, and when the
  reader lost anything the report says so (D02). The library can crash or read garbage on
  such input; the outcome of one case may differ from run to run (it reads uninitialized
  memory), so the assertions hold for every outcome and only the mix is counted.
"""

from __future__ import annotations

import gzip
import os
import random
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from iodiag.analysis import analyze
from iodiag.ingest import JobProfile, LogReadError, load_profile
from iodiag.ingest.header import DARSHAN_MAGIC
from tests.conftest import shared_log, wheel_log

CASE_TIMEOUT_S = 20.0
"""Bound on one reading (the reader's own timeout); a case must finish within CASE_LIMIT_S."""
CASE_LIMIT_S = 30.0
MEMORY_LIMIT = 2 << 30

DRISHTI = shared_log("drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan")
RELEASE_346 = shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.4.6.darshan")
RELEASE_300 = shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.0.0.darshan")
MPI_IO_TEST = shared_log(
    "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
)
APMPI = shared_log("darshan-logs/apmpi/darshan-apmpi-2nodes-64mpi.darshan")
BADOST = wheel_log("sample-badost.darshan")

ALL_OPTIONAL = ("DXT", "HEATMAP")
"""Read every optional module, so that damage anywhere in the file is damage to something we read."""

KNOWN_SILENT_LOSS: set[str] = set()
"""Modules whose damage the reader cannot see yet (test_truncated_apmpi_region_is_reported, an xfail,
says why). Remove a module from here once that test passes."""


# --------------------------------------------------------------------------- not a Darshan log


def _zero(d: Path) -> Path:
    p = d / "zero.darshan"
    p.write_bytes(b"")
    return p


def _directory(d: Path) -> Path:
    p = d / "folder.darshan"
    p.mkdir()
    return p


def _missing(d: Path) -> Path:
    return d / "no-such-log.darshan"


def _random(d: Path) -> Path:
    p = d / "random.darshan"
    p.write_bytes(random.Random(7).randbytes(4096))
    return p


def _text(d: Path) -> Path:
    p = d / "notes.darshan"
    p.write_text("this is not a darshan log\n" * 50)
    return p


def _gzip(d: Path) -> Path:
    # What a Darshan 1.x/2.x log looks like: a gzip stream.
    p = d / "old.darshan.gz"
    p.write_bytes(gzip.compress(RELEASE_300.read_bytes()))
    return p


def _short_header(d: Path) -> Path:
    p = d / "short.darshan"
    p.write_bytes(RELEASE_346.read_bytes()[:23])
    return p


def _wrong_version(d: Path) -> Path:
    p = d / "version2.darshan"
    p.write_bytes(b"2.06\0\0\0\0" + struct.pack("<q", DARSHAN_MAGIC) + bytes(200))
    return p


def _header_only(d: Path) -> Path:
    # A valid 24-byte start, then the region map cut off: the library's own open fails.
    p = d / "header-only.darshan"
    p.write_bytes(RELEASE_346.read_bytes()[:100])
    return p


def _fifo(d: Path) -> Path:
    # Opening a FIFO for reading blocks until a writer comes: the reader must not open it.
    p = d / "pipe.darshan"
    os.mkfifo(p)
    return p


BAD_FILES: dict[str, Callable[[Path], Path]] = {
    "zero-bytes": _zero,
    "directory": _directory,
    "missing": _missing,
    "random-bytes": _random,
    "text": _text,
    "gzip": _gzip,
    "short-header": _short_header,
    "wrong-version": _wrong_version,
    "header-only": _header_only,
    "fifo": _fifo,
}


def assert_one_line_error(err: LogReadError, path: Path) -> None:
    msg = str(err)
    assert msg and "\n" not in msg and "\r" not in msg, repr(msg)
    assert str(path) in msg
    assert "Traceback" not in msg
    assert msg != f"{path}: " and err.reason.strip()


@pytest.mark.parametrize("make", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_not_a_log_raises_one_line_error(make: Callable[[Path], Path], tmp_path: Path) -> None:
    path = make(tmp_path)
    start = time.monotonic()
    with pytest.raises(LogReadError) as info:
        load_profile(str(path), timeout_s=CASE_TIMEOUT_S)
    assert time.monotonic() - start < 10
    assert_one_line_error(info.value, path)


def test_error_messages_say_what_is_wrong(tmp_path: Path) -> None:
    expect = {
        "zero-bytes": "empty",
        "directory": "directory",
        "missing": "no such file",
        "random-bytes": "not a Darshan log",
        "text": "not a Darshan log",
        "gzip": "gzip",
        "short-header": "too short",
        "wrong-version": "version",
        "fifo": "not a regular file",
    }
    for name, word in expect.items():
        path = BAD_FILES[name](tmp_path)
        with pytest.raises(LogReadError, match=word):
            load_profile(str(path))


def _iodiag(
    *args: str, preexec_fn: Callable[[], None] | None = None, cwd: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "IODIAG_DEBUG", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "iodiag", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
        preexec_fn=preexec_fn,
        cwd=cwd,
    )


def assert_cli_error(proc: subprocess.CompletedProcess[str], path: Path) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert str(path) in lines[0]
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


@pytest.mark.parametrize("make", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_cli_not_a_log_exits_2_with_one_line(make: Callable[[Path], Path], tmp_path: Path) -> None:
    path = make(tmp_path)
    assert_cli_error(_iodiag("analyze", str(path)), path)


# --------------------------------------------------------------------------- a file we may not read


@pytest.fixture()
def unreadable() -> Iterator[Path]:
    # A directory the unprivileged user may search (pytest's own tmp dirs are 0700), holding a
    # copy of a good log with mode 000.
    d = Path(tempfile.mkdtemp(prefix="iodiag-unreadable-"))
    d.chmod(0o711)
    p = d / "secret.darshan"
    p.write_bytes(RELEASE_346.read_bytes())
    p.chmod(0)
    yield p
    shutil.rmtree(d)


NOBODY = 65534


def _load_as_nobody(path: Path) -> str:
    """Run load_profile in a forked child that dropped to uid/gid 65534; return how it ended.

    root reads any file whatever its mode, so only a process without root's privileges can
    see the permission error. A fork (no exec) is used because the interpreter may live where
    an unprivileged user cannot run it.
    """
    from iodiag.ingest.libreader import warm

    warm()  # load the library before dropping privileges

    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(rfd)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            try:
                load_profile(str(path), timeout_s=CASE_TIMEOUT_S)
                out = "loaded"
            except LogReadError as exc:
                out = "LogReadError:" + str(exc)
            except BaseException as exc:
                out = "other:" + repr(exc)
            os.write(wfd, out.encode("utf-8", "replace"))
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    os.close(wfd)
    try:
        ready, _, _ = select.select([rfd], [], [], 30)
        data = os.read(rfd, 1 << 16) if ready else b""
    finally:
        os.close(rfd)
        if not data:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    assert data, f"privilege-dropped reader gave nothing (wait status {status})"
    return data.decode()


def test_unreadable_file(unreadable: Path) -> None:
    if os.geteuid() != 0:
        with pytest.raises(LogReadError) as info:
            load_profile(str(unreadable))
        assert_one_line_error(info.value, unreadable)
        assert "permission denied" in str(info.value)
        return
    start = time.monotonic()
    out = _load_as_nobody(unreadable)
    assert time.monotonic() - start < 30
    assert out.startswith("LogReadError:"), out
    msg = out.removeprefix("LogReadError:")
    assert "\n" not in msg and str(unreadable) in msg and "permission denied" in msg


def test_cli_unreadable_file(unreadable: Path) -> None:
    if os.geteuid() != 0:
        assert_cli_error(_iodiag("analyze", str(unreadable)), unreadable)
        return

    def drop() -> None:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    try:
        proc = _iodiag("analyze", str(unreadable), preexec_fn=drop, cwd="/")
    except PermissionError as exc:
        pytest.skip(
            f"uid {NOBODY} cannot execute {sys.executable} ({exc.strerror}); "
            "the unprivileged read is covered by test_unreadable_file"
        )
    if proc.returncode != 2 and ("No module named" in proc.stderr or "Permission denied" in proc.stderr):
        pytest.skip(f"uid {NOBODY} cannot import iodiag from {sys.executable}: {proc.stderr.strip()[-200:]}")
    assert_cli_error(proc, unreadable)


# --------------------------------------------------------------------------- damaged real logs


@dataclass
class Outcomes:
    counts: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    partial_reports: int = 0
    """Reports with D02 where some module still gave records: the partial-data path."""


def _records(profile: JobProfile) -> dict[str, int]:
    return {name: info.records for name, info in profile.modules.items()}


def _run_case(
    label: str, path: Path, include: tuple[str, ...], pristine: dict[str, int], out: Outcomes, data_lost: bool
) -> None:
    """One damaged file: classify the outcome and record any broken promise in ``out.failures``."""
    start = time.monotonic()
    try:
        profile = load_profile(str(path), include=include, timeout_s=CASE_TIMEOUT_S, memory_limit_bytes=MEMORY_LIMIT)
    except LogReadError as exc:
        out.counts["error"] += 1
        msg = str(exc)
        if "\n" in msg or str(path) not in msg or not exc.reason.strip():
            out.failures.append(f"{label}: bad error message {msg!r}")
        return
    except Exception as exc:  # the point is to catch anything else
        out.counts["uncaught"] += 1
        out.failures.append(f"{label}: load_profile raised {type(exc).__name__}: {exc}")
        return
    try:
        report = analyze(profile)
        report.model_dump_json()
    except Exception as exc:
        out.counts["uncaught"] += 1
        out.failures.append(f"{label}: analyze raised {type(exc).__name__}: {exc}")
        return
    elapsed = time.monotonic() - start
    if elapsed > CASE_LIMIT_S:
        out.failures.append(f"{label}: took {elapsed:.1f} s")

    damaged = [m.name for m in profile.modules.values() if m.read_error]
    d02 = [f for f in report.findings if f.code == "D02"]
    if damaged or profile.problems:
        out.counts["d02"] += 1
        if len(d02) != len(damaged) + len(profile.problems):
            out.failures.append(f"{label}: {len(d02)} D02 findings for damage {damaged} {profile.problems}")
        if any(m.records for m in profile.modules.values() if m.loaded):
            out.partial_reports += 1
    else:
        out.counts["clean"] += 1
        if d02:
            out.failures.append(f"{label}: D02 without damage")
        lost = {
            k: (v, pristine.get(k))
            for k, v in _records(profile).items()
            if k in pristine and profile.modules[k].loaded and v < pristine[k] and k not in KNOWN_SILENT_LOSS
        }
        if lost or data_lost:
            out.failures.append(f"{label}: data lost without D02 (records now/before: {lost})")
    crashed_checks = [p for p in report.problems if p not in profile.problems]
    if crashed_checks:
        out.failures.append(f"{label}: checks crashed on the damaged profile: {crashed_checks}")


def _cases_truncated(data: bytes, n_even: int = 40) -> Iterator[tuple[str, bytes]]:
    n = len(data)
    offsets = {n * i // n_even for i in range(1, n_even)} | {n - 1, n - 2, n - 8, n - 64}
    for o in sorted(x for x in offsets if 0 < x < n):
        yield f"truncated at {o}/{n}", data[:o]


def _cases_flipped(data: bytes, count: int, seed: int) -> Iterator[tuple[str, bytes]]:
    rng = random.Random(seed)
    for i in range(count):
        b = bytearray(data)
        flips = []
        for _ in range(rng.randint(1, 4)):
            j = rng.randrange(24, len(b))  # past the magic, which the header check would catch
            bit = rng.randrange(8)
            b[j] ^= 1 << bit
            flips.append(f"{j}.{bit}")
        yield f"flip #{i} ({','.join(flips)})", bytes(b)


def _run_cases(
    log: Path, cases: Iterator[tuple[str, bytes]], include: tuple[str, ...], tmp: Path, data_lost: bool
) -> Outcomes:
    pristine = _records(load_profile(str(log), include=include))
    out = Outcomes()
    for i, (label, blob) in enumerate(cases):
        path = tmp / f"{log.stem[:40]}-{i}.darshan"
        path.write_bytes(blob)
        _run_case(f"{log.name} {label}", path, include, pristine, out, data_lost)
        path.unlink()
    return out


TRUNCATED = [DRISHTI, BADOST, RELEASE_346, RELEASE_300, MPI_IO_TEST]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("log", TRUNCATED, ids=lambda p: p.name[:40])
def test_truncated_logs(log: Path, tmp_path: Path) -> None:
    # Every module is read, so a cut anywhere loses data that was asked for: each case must be
    # an error or a report that says what is missing.
    out = _run_cases(log, _cases_truncated(log.read_bytes()), ALL_OPTIONAL, tmp_path, data_lost=True)
    assert not out.failures, "\n".join(out.failures)
    assert out.counts["uncaught"] == 0
    assert out.counts["clean"] == 0
    assert sum(out.counts.values()) >= 40
    if log in (DRISHTI, BADOST, MPI_IO_TEST):
        # Large enough that many cuts land after some complete modules: partial reports.
        assert out.partial_reports >= 5, out
    if log in (RELEASE_346, RELEASE_300):
        # Small: a cut in the header or the job record leaves nothing to report.
        assert out.counts["error"] >= 5, out


def test_truncated_apmpi_region_is_reported(tmp_path: Path) -> None:
    data = APMPI.read_bytes()
    path = tmp_path / "apmpi-cut.darshan"
    path.write_bytes(data[: len(data) // 2])  # the APMPI region is most of this file
    report = analyze(load_profile(str(path), timeout_s=CASE_TIMEOUT_S))
    assert "D02" in report.codes()


FLIPPED = [
    (DRISHTI, 40, ()),
    (BADOST, 30, ()),
    (RELEASE_346, 30, ALL_OPTIONAL),
    (RELEASE_300, 20, ()),
    (MPI_IO_TEST, 30, ALL_OPTIONAL),
]


@pytest.mark.timeout(240)
@pytest.mark.parametrize(("log", "count", "include"), FLIPPED, ids=[p.name[:40] for p, _, _ in FLIPPED])
def test_flipped_bits(log: Path, count: int, include: tuple[str, ...], tmp_path: Path) -> None:
    data = log.read_bytes()
    out = _run_cases(log, _cases_flipped(data, count, seed=len(data)), include, tmp_path, data_lost=False)
    assert not out.failures, "\n".join(out.failures)
    assert sum(out.counts.values()) == count
    # Flips hit compressed data, which the library's checks notice: most cases are damage reports
    # or errors. (A flip in a region that is not read, or in padding, changes nothing.)
    assert out.counts["d02"] + out.counts["error"] >= count // 2, out


def test_flipped_bits_outcome_mix(tmp_path: Path) -> None:
    # Both ways of failing occur: flips in the header and job record give errors, flips in the
    # module data give damage reports. Counted on the two small release logs so it stays quick.
    total = Counter[str]()
    for log in (RELEASE_346, RELEASE_300):
        out = _run_cases(log, _cases_flipped(log.read_bytes(), 30, seed=99), (), tmp_path, data_lost=False)
        assert not out.failures, "\n".join(out.failures)
        total.update(out.counts)
    assert total["error"] >= 1 and total["d02"] >= 1 and total["uncaught"] == 0, total


@pytest.mark.parametrize("log", [DRISHTI, BADOST, RELEASE_346, RELEASE_300, MPI_IO_TEST], ids=lambda p: p.name[:40])
def test_random_bytes_of_the_same_size(log: Path, tmp_path: Path) -> None:
    n = len(log.read_bytes())
    rng = random.Random(n)
    # Entirely random: rejected by the header check.
    path = tmp_path / "random.darshan"
    path.write_bytes(rng.randbytes(n))
    with pytest.raises(LogReadError) as info:
        load_profile(str(path), timeout_s=CASE_TIMEOUT_S)
    assert_one_line_error(info.value, path)
    # A real 24-byte start (version and magic) and random bytes after it: past the header check,
    # into the library, which must be survived.
    head = log.read_bytes()[:24]
    out = Outcomes()
    for i in range(3):
        path = tmp_path / f"random-body-{i}.darshan"
        path.write_bytes(head + rng.randbytes(n - 24))
        _run_case(f"{log.name} random body #{i}", path, ALL_OPTIONAL, {}, out, data_lost=True)
    assert not out.failures, "\n".join(out.failures)
    assert out.counts["clean"] == 0


def test_cli_damaged_log_exits_cleanly(tmp_path: Path) -> None:
    # Cut inside the region map: the library refuses to open it.
    path = tmp_path / "cut.darshan"
    path.write_bytes(RELEASE_346.read_bytes()[:300])
    assert_cli_error(_iodiag("analyze", str(path)), path)
    # Cut in the middle of the module data: a report that says what is missing, no traceback.
    path = tmp_path / "half.darshan"
    data = DRISHTI.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    proc = _iodiag("analyze", "--format", "json", str(path))
    assert "Traceback" not in proc.stderr
    assert proc.returncode in (0, 1, 2), proc.returncode
    assert '"D02"' in proc.stdout
