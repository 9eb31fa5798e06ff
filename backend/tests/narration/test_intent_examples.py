"""The classifier's nearest-example fallback: phrasings no rule was written for, typos, and nothing alike."""

from __future__ import annotations

from pathlib import Path

from iodiag.core.settings import REPO_ROOT
from iodiag.narration.intent.examples import build_index, load_index

EXAMPLES = REPO_ROOT / "prompts" / "intent-examples.v1.yaml"


def test_typos_and_new_wording_find_their_intent() -> None:
    index = build_index(
        [
            ("which file is the slowest?", "file-or-rank"),
            ("which rank spends the most time in I/O?", "file-or-rank"),
            ("what is collective buffering?", "concept"),
            ("how does Lustre striping work?", "concept"),
            ("how do I fix the small writes?", "how-to-fix"),
            ("what should I change to make it faster?", "how-to-fix"),
        ]
    )
    typo = index.nearest("wich file is teh slowest one")
    assert typo is not None and typo[0] == "file-or-rank"
    found = index.nearest("how would I fix these tiny writes")
    assert found is not None and found[0] == "how-to-fix"
    assert index.nearest("zzz qqq") is None  # nothing alike: the rules' own answer stands


def test_the_shipped_examples_load_and_are_deterministic() -> None:
    index = load_index(EXAMPLES)
    assert index is not None and len(index.intents) >= 500
    assert index.nearest("whats slowing down my jbo") == index.nearest("whats slowing down my jbo")
    assert load_index(Path("/nonexistent/examples.yaml")) is None
