"""Decompression bombs are refused before the Darshan library inflates them; real logs never are."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from iodiag.ingest.errors import LogReadError
from iodiag.ingest.inflation import DEFAULT_LIMIT, InflationLimit, check_inflation
from iodiag.ingest.loader import load_profile
from iodiag.synth.hostile import decompression_bomb
from tests.conftest import all_logs, wheel_log

SOURCE = wheel_log("sample.darshan")


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1 MB log whose POSIX region inflates to 1 GiB of zeros."""
    path = tmp_path_factory.mktemp("bombs") / "bomb.darshan"
    decompression_bomb(SOURCE, path, 1 << 30)
    return path


def test_every_real_log_is_within_the_default_limit() -> None:
    for log in all_logs():
        inflated = check_inflation(str(log))
        assert inflated <= DEFAULT_LIMIT.budget(log.stat().st_size), log


def test_a_zlib_bomb_is_refused_without_holding_what_it_inflates_to(bomb: Path) -> None:
    assert bomb.stat().st_size < 2 << 20
    tracemalloc.start()
    try:
        with pytest.raises(LogReadError) as refused:
            check_inflation(str(bomb))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    reason = refused.value.reason
    assert "inflate to over" in reason and "IODIAG_MAX_INFLATION_RATIO" in reason and "\n" not in reason
    # The file is read once; what it inflates to is counted and dropped a chunk at a time.
    assert peak < bomb.stat().st_size + (8 << 20), peak


def test_a_bzip2_bomb_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "bz.darshan"
    decompression_bomb(SOURCE, path, 256 << 20, compression="bzip2")
    assert path.stat().st_size < 64 << 10  # bzip2 packs zeros far tighter than zlib's 1,032:1
    with pytest.raises(LogReadError, match="inflate to over"):
        check_inflation(str(path))


def test_the_reader_refuses_a_bomb_and_reads_what_fits_the_limit(bomb: Path, tmp_path: Path) -> None:
    with pytest.raises(LogReadError, match="crafted"):
        load_profile(str(bomb))
    # Under the limit the same shape is just a log of corrupt records, reported as such.
    small = tmp_path / "small.darshan"
    decompression_bomb(SOURCE, small, 1 << 20)
    profile = load_profile(str(small))
    assert profile.modules["POSIX"].corrupt_records > 0
    assert check_inflation(str(small), InflationLimit(ratio=1.0, floor_bytes=4 << 20)) > 1 << 20


def test_the_cli_says_why_in_one_line_and_exits_2(bomb: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "iodiag", "analyze", str(bomb)], capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "refused" in p.stderr and "Traceback" not in p.stderr
