"""The blind-set generator (evals/blind/generate.py) runs and is deterministic: a sealed set's logs are rebuilt
from its committed scenarios, so a generator that no longer runs, or writes other bytes, loses every sealed set."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from tests.conftest import BACKEND

GENERATOR = BACKEND.parent / "evals" / "blind" / "generate.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENERATOR), *args], capture_output=True, text=True, timeout=600, check=False
    )


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.darshan"))}


def test_the_generator_writes_a_set_and_rebuilds_the_same_bytes(tmp_path: Path) -> None:
    out = tmp_path / "set"
    made = _run("--seed", "7", "--count", "2", "--out", str(out), "--jobs", "1")
    assert made.returncode == 0, made.stderr[-2000:]
    first = _digests(out / "logs")
    assert len(first) == 2 and (out / "construction.yaml").is_file()
    for log in (out / "logs").glob("*.darshan"):
        log.unlink()
    again = _run("--rebuild", str(out), "--jobs", "1")
    assert again.returncode == 0, again.stderr[-2000:]
    assert _digests(out / "logs") == first
