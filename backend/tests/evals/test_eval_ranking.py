"""The ranking eval: the verdict's first cause, io_matters and quiet noise, on scenarios and expert-labelled logs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from iodiag.evals.ranking import RealLabel, load_real_labels, run_ranking
from iodiag.evals.triggers import CorpusError
from tests.conftest import REPO, SHARED_LOGS


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return run_ranking(cache_dir=tmp_path_factory.mktemp("scenario-cache"), shared=SHARED_LOGS)


def test_scenario_labels_are_met(result) -> None:  # type: ignore[no-untyped-def]
    s = next(x for x in result.sets if x.name == "scenarios")
    assert s.cases >= 25 and s.errors == 0
    bad = [r for r in s.results if r.top_ok is False or r.matters_ok is False or r.false_alarms]
    assert not bad, [(r.name, r.top_got, r.top_expected, r.io_matters_got, r.false_alarms) for r in bad]
    assert s.top1_accuracy == 1.0 and s.io_matters_accuracy == 1.0 and s.precision == 1.0


def test_real_log_labels_are_met(result) -> None:  # type: ignore[no-untyped-def]
    s = next(x for x in result.sets if x.name == "real logs")
    assert s.cases >= 30 and s.errors == 0
    bad = [r for r in s.results if r.top_ok is False or r.matters_ok is False or r.false_alarms]
    assert not bad, [(r.name, r.top_got, r.top_expected, r.io_matters_got, r.false_alarms) for r in bad]
    assert s.top1_accuracy == 1.0 and s.io_matters_accuracy == 1.0 and s.precision == 1.0


def test_every_real_label_is_reasoned() -> None:
    labels = load_real_labels(REPO / "evals" / "real" / "labels.yaml")
    assert len(labels) >= 30
    assert all(isinstance(x, RealLabel) and len(x.why.split()) >= 5 for x in labels)
    assert len({x.log for x in labels}) == len(labels)


def test_the_eval_scores_a_wrong_label_as_wrong(tmp_path: Path) -> None:
    # A label that names the wrong first cause must lower the score (the eval can fail).
    labels = tmp_path / "labels.yaml"
    labels.write_text(
        "- log: wheel:tests/input/sample-badost.darshan\n  io_matters: true\n  top_cause: P08\n"
        "  why: deliberately wrong, to see the eval fail\n"
    )
    r = run_ranking(labels=labels, which=("real",))
    assert r.sets[0].top1_accuracy == 0.0 and not r.sets[0].perfect


def test_bad_labels_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "labels.yaml"
    bad.write_text("- log: x\n  unknown_field: 1\n")
    with pytest.raises(CorpusError):
        load_real_labels(bad)
    proc = subprocess.run(
        [sys.executable, "-m", "iodiag", "eval", "ranking", "--only", "real", "--labels", str(bad)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
