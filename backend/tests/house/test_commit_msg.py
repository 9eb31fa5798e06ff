"""The commit-message check run by pre-commit's commit-msg hook (.ci/check_commit_msg.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from iodiag.core.settings import REPO_ROOT

CHECK = REPO_ROOT / ".ci" / "check_commit_msg.py"


def _run(tmp_path: Path, message: str) -> subprocess.CompletedProcess[str]:
    f = tmp_path / "COMMIT_EDITMSG"
    f.write_text(message)
    return subprocess.run([sys.executable, str(CHECK), str(f)], capture_output=True, text=True, check=False)


def test_a_short_subject_with_a_body_after_a_blank_line_passes(tmp_path: Path) -> None:
    done = _run(tmp_path, "P23: GPFS token contention\n\nWhy: L06 named Lustre only.\n# git's template line\n")
    assert done.returncode == 0, done.stderr


def test_a_long_subject_a_period_and_a_missing_blank_line_are_each_named(tmp_path: Path) -> None:
    done = _run(tmp_path, "x" * 80 + ".\nbody straight after\n")
    assert done.returncode == 1
    assert "the subject is 81 characters; keep it to 72" in done.stderr
    assert "ends with a period" in done.stderr and "need a blank line" in done.stderr


def test_an_empty_message_fails_and_git_comments_do_not_count(tmp_path: Path) -> None:
    done = _run(tmp_path, "# Please enter the commit message\n\n")
    assert done.returncode == 1 and "the subject line is empty" in done.stderr
