"""The sentence gate between a model's stream and the user: only verified sentences pass, none is taken back."""

from __future__ import annotations

import pytest

from iodiag.narration.checking.gate import SentenceGate
from iodiag.narration.checking.grounding import Grounding
from iodiag.narration.composer import Conversation
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import BADOST, knowledge, report, template_settings


@pytest.fixture(scope="module")
def grounding() -> Grounding:
    narrator = Narrator(template_settings(), knowledge=knowledge())
    plan = Conversation(report(BADOST), narrator.composer()).plan("Why is my job slow?")
    return narrator.grounding(plan, plan.facts, plan.passages)


def pieces(text: str, size: int = 3) -> list[str]:
    """A draft as a model streams it: a few characters at a time."""
    return [text[i : i + size] for i in range(0, len(text), size)]


def run(gate: SentenceGate, text: str) -> str:
    shown = ""
    for piece in pieces(text):
        shown += "".join(gate.feed(piece))
    return shown + "".join(gate.finish())


def test_only_verified_sentences_reach_the_user_and_none_is_withdrawn(grounding: Grounding) -> None:
    true = "The largest cost is the slow OST 14 (L04)."
    invented = "Rank 77 wrote 913 GiB to /tmp/other.dat in 4242 seconds."
    gate = SentenceGate(grounding)
    shown = run(gate, f"{true} {invented}\n\n- {true}\nAlso L04 matters.")
    assert true in shown
    assert "913 GiB" not in shown and "4242" not in shown
    assert shown.count(true) == 1  # a sentence said twice is shown once
    assert shown.strip() == gate.text()
    kinds = {v.kind for v in gate.dropped}
    assert kinds  # the invented sentence's violations are kept for the answer's report


def test_a_sentence_is_shown_as_soon_as_it_is_complete(grounding: Grounding) -> None:
    gate = SentenceGate(grounding)
    first = "The largest cost is the slow OST 14 (L04)."
    out = []
    for piece in pieces(first + " It"):
        out += gate.feed(piece)
    assert "".join(out) == first  # shown before the line ends, the next sentence still held back


def test_a_short_answer_stops_at_its_line_limit(grounding: Grounding) -> None:
    gate = SentenceGate(grounding, max_lines=1)
    shown = run(gate, "The largest cost is the slow OST 14 (L04).\nL04 is critical.\nL04 again.\n")
    assert gate.full
    assert shown.strip() == "The largest cost is the slow OST 14 (L04)."


def test_fragments_that_say_nothing_are_not_shown(grounding: Grounding) -> None:
    gate = SentenceGate(grounding)
    shown = run(gate, '"1.\n2. Slow OST\nThe largest cost is the slow OST 14 (L04).\n')
    assert shown.strip() == "The largest cost is the slow OST 14 (L04)."
