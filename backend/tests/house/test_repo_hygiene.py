"""What the repository holds: sources, not environments or large blobs (every clone and CI run pays for them)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import REPO

MAX_BYTES = 1 << 20
ALLOWED_LARGE = frozenset({"frontend/package-lock.json"})
"""Tracked files allowed above 1 MiB, each for a reason (the npm lock is generated and must be committed)."""


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [p.decode() for p in out.split(b"\0") if p]


def test_no_virtualenv_or_node_modules_is_tracked() -> None:
    bad = [p for p in _tracked() if "/.venv" in f"/{p}" or "node_modules/" in p or "/site-packages/" in p]
    assert not bad, bad[:10]


def test_no_large_file_is_tracked() -> None:
    big = [
        p
        for p in _tracked()
        if p not in ALLOWED_LARGE and (REPO / p).is_file() and (REPO / p).stat().st_size > MAX_BYTES
    ]
    assert not big, big


def test_no_control_characters_in_source() -> None:
    """A regex written as "\\b" inside a plain (non-raw) string is a backspace, which no text ever contains: the
    pattern silently never matches. Source files hold no control characters but tab and newline."""
    root = Path(__file__).resolve().parents[2]
    bad = [
        str(p.relative_to(root))
        for p in sorted((root / "iodiag").rglob("*.py")) + sorted((root / "tests").rglob("*.py"))
        if re.search(r"[\x00-\x08\x0b-\x0c\x0e-\x1f]", p.read_text(encoding="utf-8"))
    ]
    assert bad == [], bad
