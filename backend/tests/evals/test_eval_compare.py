"""The compare eval: iodiag compare on before/after scenario pairs with labels true by construction."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from iodiag.evals.compare import DEFAULT_PAIRS, direction, load_pairs, run_compare_eval
from iodiag.evals.triggers import CorpusError

EVALS = DEFAULT_PAIRS.parent


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("scenario-cache")


def test_the_shipped_pairs_are_all_right(cache: Path) -> None:
    r = run_compare_eval(cache_dir=cache)
    bad = [
        (p.name, p.resolved, p.new, p.io_time_got, p.io_matters_got, p.top_a, p.top_b, p.error)
        for p in r.pairs
        if not p.ok
    ]
    assert not bad, bad
    assert len(r.pairs) >= 6 and r.errors == 0
    assert r.perfect and r.accuracy == 1.0 and r.precision == 1.0 and r.recall == 1.0
    assert {p.io_time_expected for p in r.pairs} == {"fell", "rose", "same"}
    assert all(len(p.description.split()) >= 20 for p in r.pairs)


def test_shipped_scenarios_stay_out_of_the_trigger_corpus() -> None:
    pairs = load_pairs(DEFAULT_PAIRS)
    for p in pairs:
        for entry in (p.before, p.after):
            assert entry.path.resolve().is_relative_to((EVALS / "compare" / "scenarios").resolve())


def _pair(tmp_path: Path, body: str, name: str = "p.yaml") -> Path:
    d = tmp_path / "pairs"
    d.mkdir(exist_ok=True)
    (d / name).write_text(body)
    return d


def test_a_wrong_label_is_scored_wrong(tmp_path: Path, cache: Path) -> None:
    # The slow OST healed: L04 is resolved and I/O time fell. Labelled the other way round, the eval must fail.
    s = EVALS / "compare" / "scenarios"
    d = _pair(
        tmp_path,
        f"name: wrong\ndescription: deliberately wrong labels, to see the eval fail\n"
        f"before: {s / 'slow-ost-before.yaml'}\nafter: {s / 'slow-ost-gone-after.yaml'}\n"
        "expect: {resolved: [P06], new: [L04], unchanged_top: true, io_time: rose, io_matters_after: true}\n",
    )
    r = run_compare_eval(d, cache)
    assert not r.perfect and r.right == 0 and r.accuracy == 0.0
    p = r.pairs[0]
    assert p.resolved.missed == ["P06"] and p.new.missed == ["L04"]
    assert "L04" in p.resolved.false_alarms  # labelled new, reported resolved
    assert p.io_time_got == "fell" and not p.io_time_ok
    assert p.io_matters_ok is False and p.top_ok is False
    assert r.fn == 2 and r.fp >= 1 and r.precision == 0.0


def test_direction() -> None:
    assert direction(10.0, 2.0) == "fell" and direction(2.0, 10.0) == "rose"
    assert direction(10.0, 10.5) == "same" and direction(None, 1.0) is None


@pytest.mark.parametrize(
    "body",
    [
        "name: x\ndescription: y\nbefore: a.yaml\nafter: b.yaml\nexpect: {io_time: fell, surprise: 1}\n",
        "name: x\ndescription: y\nbefore: a.yaml\nafter: b.yaml\nexpect: {io_time: sideways}\n",
        "name: x\ndescription: y\nbefore: nowhere.yaml\nafter: nowhere.yaml\nexpect: {io_time: fell}\n",
        "name: x\ndescription: y\nbefore: a.yaml\nafter: b.yaml\nexpect: {io_time: fell, new: [Z99]}\n",
        "name: [unclosed\n",
        "- a list\n",
    ],
)
def test_a_malformed_pair_file_is_one_line_and_exit_2(tmp_path: Path, body: str) -> None:
    d = _pair(tmp_path, body)
    with pytest.raises(CorpusError):
        load_pairs(d)
    proc = subprocess.run(
        [sys.executable, "-m", "iodiag", "eval", "compare", "--pairs", str(d), "--cache-dir", str(tmp_path / "c")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_an_empty_or_missing_pairs_directory_is_exit_2(tmp_path: Path) -> None:
    for d in (tmp_path / "missing", tmp_path):
        proc = subprocess.run(
            [sys.executable, "-m", "iodiag", "eval", "compare", "--pairs", str(d)], capture_output=True, text=True
        )
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_json_output(tmp_path: Path, cache: Path) -> None:
    import json

    proc = subprocess.run(
        [sys.executable, "-m", "iodiag", "eval", "compare", "-f", "json", "--cache-dir", str(cache)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["right"] == len(data["pairs"]) >= 6 and data["accuracy"] == 1.0
