"""A log cut short is read as far as it goes, says so, and never claims what the missing part would tell;
a cut inside the header, job record or record names is a one-line error that says how to get a whole log."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from iodiag.analysis import analyze
from iodiag.analysis.outcomes.invariants import problems
from iodiag.ingest import LogReadError, load_profile
from iodiag.ingest.recover import header_layout, header_size
from iodiag.ingest.truncation import CUT_READ_ERROR, cut_short
from tests.conftest import shared_log, wheel_log

LOGS = [
    shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.4.1.darshan"),
    wheel_log("sample-badost.darshan"),
    wheel_log("sample-dxt-simple.darshan"),
    wheel_log("sample.darshan"),
]


def regions(path: Path) -> list[tuple[int, int, int]]:
    """(module id, offset, length) of every module region; id -1 is the record names."""
    data = path.read_bytes()
    version = data[:8].split(b"\0", 1)[0].decode()
    fixed, modules = header_layout(version)
    endian = "<" if struct.unpack_from("<q", data, 8)[0] == 6567223 else ">"
    out = []
    for i in range(1 + modules):
        off, length = struct.unpack_from(endian + "QQ", data, fixed + 16 * i)
        if length:
            out.append((i - 1, off, length))
    return out


def cut(src: Path, at: int, tmp: Path) -> Path:
    out = tmp / f"{src.stem}-{at}.darshan"
    out.write_bytes(src.read_bytes()[:at])
    return out


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_cuts_in_the_core_are_one_line_errors_with_advice(log: Path, tmp_path: Path) -> None:
    version = log.read_bytes()[:8].split(b"\0", 1)[0].decode()
    names = next((off, length) for mid, off, length in regions(log) if mid == -1)
    for at, where in (
        (header_size(version) - 5, "its header"),
        (names[0] - 3, "its job record"),
        (names[0] + names[1] // 2, "its record names"),
    ):
        with pytest.raises(LogReadError) as refused:
            load_profile(str(cut(log, at, tmp_path)))
        reason = refused.value.reason
        assert f"inside {where}" in reason and "copy it again once the job has finished" in reason, reason
        assert "\n" not in reason


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_a_log_cut_in_its_modules_is_read_as_far_as_it_goes(log: Path, tmp_path: Path) -> None:
    mods = sorted((off, length, mid) for mid, off, length in regions(log) if mid >= 0)
    posix = next((off, length) for off, length, mid in mods if mid == 1)
    last = mods[-1]
    for at in (posix[0] + posix[1] // 2, last[0] + last[1] // 2):
        path = cut(log, at, tmp_path)
        found = cut_short(str(path))
        assert found is not None and found.unusable is None and found.cut
        profile = load_profile(str(path))
        assert any(p.startswith("cut short: ") for p in profile.problems)
        for name in found.cut:
            if name in profile.modules:
                assert profile.modules[name].read_error == CUT_READ_ERROR
        report = analyze(profile)
        assert problems(report) == []
        text = " ".join([report.verdict.headline, *report.verdict.caveats])
        assert "cut short" in text
        if "POSIX" in found.cut and report.verdict.io_matters is not True:
            # What was lost would have said: never "not I/O" or "no I/O" from the part that is left.
            assert report.verdict.io_matters is None and report.verdict.headline.startswith("Unknown"), text


def test_an_intact_log_is_not_cut() -> None:
    for log in LOGS:
        assert cut_short(str(log)) is None
