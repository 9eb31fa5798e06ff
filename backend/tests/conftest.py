"""Shared test fixtures: the real Darshan logs this project is tested on."""

from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
"""This folder: test data (data/) and tools (tools/) are found from here, wherever a test module lives."""
BACKEND = TESTS.parent
REPO = BACKEND.parent
SHARED = Path(os.environ.get("IODIAG_SHARED", REPO.parent / "shared"))
SHARED_LOGS = SHARED / "logs"
DRISHTI_REF = SHARED / "reference" / "drishti-0.8"


def wheel_logs() -> list[Path]:
    """Real logs shipped inside the darshan (PyDarshan) wheel."""
    root = Path(str(importlib.resources.files("darshan")))
    return sorted(root.rglob("*.darshan"))


def shared_logs() -> list[Path]:
    return sorted(SHARED_LOGS.rglob("*.darshan"))


def all_logs() -> list[Path]:
    return shared_logs() + wheel_logs()


def log_id(p: Path) -> str:
    return p.name


def wheel_log(name: str) -> Path:
    """A log from the darshan wheel's test inputs, by file name."""
    return Path(str(importlib.resources.files("darshan"))) / "tests" / "input" / name


def shared_log(rel: str) -> Path:
    return SHARED_LOGS / rel


@pytest.fixture(scope="session", autouse=True)
def _require_shared() -> None:
    if not SHARED_LOGS.is_dir():
        pytest.exit(f"shared logs not found at {SHARED_LOGS} (set IODIAG_SHARED)", returncode=2)


@pytest.fixture(scope="session", autouse=True)
def _require_postgres_in_ci() -> None:
    # In CI (.ci/run sets IODIAG_CI) the PostgreSQL store tests must run, not skip.
    if os.environ.get("IODIAG_CI") and not os.environ.get("IODIAG_TEST_POSTGRES_URL"):
        pytest.exit("IODIAG_CI is set but IODIAG_TEST_POSTGRES_URL is not: start one with tests/pg_start.sh", 2)
