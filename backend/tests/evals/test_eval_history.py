"""The regression flag: the rule on its own, and the history eval on labelled series of real built logs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from iodiag.comparison.history import regression
from iodiag.evals.history import run_history_eval
from iodiag.evals.triggers import CorpusError
from tests.conftest import REPO


def test_flags_far_above_a_steady_usual_and_explains_why() -> None:
    flag = regression(30.0, [10.0, 10.5, 9.8, 10.2, 10.1])
    assert flag is not None and flag.baseline_s == 10.1 and flag.baseline_runs == 5
    assert flag.ratio == pytest.approx(30 / 10.1) and flag.robust_z > 3.5
    assert "median of 10 s over its 5 earlier runs" in flag.explanation


def test_silent_within_a_noisy_applications_spread() -> None:
    assert regression(16.5, [10, 16, 7, 14, 8, 15, 7.5]) is None
    assert regression(40.0, [10, 16, 7, 14, 8, 15, 7.5]) is not None


def test_silent_without_enough_history_or_seconds() -> None:
    assert regression(100.0, [1.0, 1.0]) is None  # two earlier runs are no usual
    assert regression(0.6, [0.2, 0.21, 0.19, 0.2]) is None  # 3x, but 0.4 s is not worth a flag
    assert regression(None, [1.0, 1.0, 1.0]) is None
    assert regression(3.0, [None, None, None, 1.0]) is None


def test_identical_runs_do_not_make_jitter_a_regression() -> None:
    assert regression(10.5, [10.0] * 10) is None  # MAD 0: the spread is floored at 10 % of the median
    assert regression(20.0, [10.0] * 10) is not None


def test_the_shipped_series_are_all_right(tmp_path: Path) -> None:
    r = run_history_eval(cache_dir=tmp_path)
    assert r.perfect and r.fp == 0 and r.fn == 0 and r.tp >= 5, [
        (s.name, [(x.io_time_s, x.flagged, x.expected) for x in s.runs], s.error) for s in r.series if not s.ok
    ]
    assert {s.name for s in r.series} >= {"stable-application", "file-system-trouble"}
    stable = next(s for s in r.series if s.name == "stable-application")
    assert not any(x.flagged for x in stable.runs)


def test_a_wrong_label_is_scored_wrong(tmp_path: Path) -> None:
    d = tmp_path / "series"
    d.mkdir()
    (d / "s.yaml").write_text(
        "name: wrong\ndescription: the last run is labelled a regression but is not one\n"
        f"scenario: {REPO / 'evals/compare/scenarios/small-requests-before.yaml'}\n"
        "runs:\n" + "".join(f"  - {{scale: 1.0, regression: {'true' if i == 4 else 'false'}}}\n" for i in range(5))
    )
    r = run_history_eval(d, cache_dir=tmp_path / "cache")
    assert not r.perfect and r.fn == 1 and r.series_right == 0


def test_cli_exit_codes(tmp_path: Path) -> None:
    bad = tmp_path / "empty"
    bad.mkdir()
    p = subprocess.run(
        [sys.executable, "-m", "iodiag", "eval", "history", "--series", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 2 and "no series files" in p.stderr and "Traceback" not in p.stderr
    with pytest.raises(CorpusError):
        run_history_eval(tmp_path / "missing")
