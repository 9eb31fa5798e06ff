"""The intent eval: questions users ask, labelled by what they mean, classified as the narrator will answer them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from iodiag.evals.intents import DEFAULT_QUESTIONS, run_intent_eval

SETS = sorted(DEFAULT_QUESTIONS.parent.glob("*.yaml"))


@pytest.mark.parametrize("path", SETS, ids=[p.stem for p in SETS])
def test_each_labelled_set_meets_the_target(path: Path) -> None:
    r = run_intent_eval(path)
    assert r.questions >= 100 and r.accuracy >= 0.95, [(m.question, m.expected, m.got) for m in r.misses]
    # Every intent a user can mean about one report is in every set, several times over (compare-runs, which
    # needs an earlier run, is in the sets written before history existed).
    seven = {"explain-job", "explain-finding", "file-or-rank", "how-to-fix", "concept", "facility", "off-topic"}
    assert seven <= {s.intent for s in r.per_intent}
    assert min(s.questions for s in r.per_intent) >= 10  # heldout5 has 10 off-topic questions, the others 15+


def test_a_wrong_label_is_a_miss(tmp_path: Path) -> None:
    f = tmp_path / "q.yaml"
    f.write_text(
        'questions:\n  - {q: "which file is worst?", intent: concept}\n  - {q: "why is my job slow?", '
        "intent: explain-job}\n"
    )
    r = run_intent_eval(f)
    assert r.right == 1 and r.misses[0].got == "file-or-rank" and not r.passed


def test_cli_exit_codes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("questions:\n  - {q: hi, intent: nonsense}\n")
    p = subprocess.run(
        [sys.executable, "-m", "iodiag", "eval", "intents", "--questions", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 2 and "unknown intents ['nonsense']" in p.stderr and "Traceback" not in p.stderr
