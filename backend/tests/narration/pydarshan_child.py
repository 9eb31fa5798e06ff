"""Expected numbers for the fact-query tests, read with PyDarshan in a child process.

PyDarshan's cffi reader and iodiag's ctypes reader load the same C library; reading a log with both in one
process lets one's state leak into the other's (APMPI counter names), so PyDarshan runs apart and prints JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from iodiag.analysis import analyze
from iodiag.analysis.models import Report
from iodiag.core.settings import REPO_ROOT
from iodiag.evals.answers import resolve_log
from iodiag.ingest import load_profile
from tests.conftest import shared_log, wheel_log

SCENARIOS = REPO_ROOT / "evals" / "scenarios"


def log_path(name: str) -> Path:
    """``darshan-logs/...`` under ../shared/logs, ``*.yaml`` a scenario built to a log, else a darshan wheel log."""
    if name.startswith("darshan-logs/"):
        return shared_log(name)
    return resolve_log(f"scenario:{SCENARIOS / name}") if name.endswith(".yaml") else wheel_log(name)


def pydarshan_json(script: str, name: str) -> dict[str, Any]:
    """What ``script`` prints (JSON) when run on the log in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(log_path(name))], capture_output=True, text=True, check=True, timeout=300
    )
    out: dict[str, Any] = json.loads(done.stdout)
    return out


@cache
def report(name: str) -> Report:
    return analyze(load_profile(str(log_path(name)), include=("HEATMAP",)))
