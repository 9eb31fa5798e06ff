"""The bundled model rewords verified sentences one at a time: the facts a sentence carries, the grammar that holds
the model to them, the checks a rewording must pass, and the route with the real model (SmolLM2-135M, on CPU).
"""

from __future__ import annotations

import pytest

from iodiag.narration.checking.verifier import HARD_KINDS, check_sentence, split_sentences, verify
from iodiag.narration.composer import Conversation
from iodiag.narration.model.llm import get_model
from iodiag.narration.models import AnswerChunk
from iodiag.narration.rephrase import Rephrasing, changed_claims, grammar_for, sentence_facts, worth_rephrasing
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import BADOST, DRISHTI, knowledge, model_settings, report

WHY = (
    "I/O takes 95% of this 12.00 s run (11.34 s on the busiest rank); the largest cost is bytes written grow "
    "between layers (X06), ≈ 5.61 s (47% of the run)."
)
FILE = (
    "The file with the most I/O time is `/tmp/test/mpi-io-test.tmp.dat`: 100.8 ms of I/O summed over its 4 ranks "
    "(99.9% of the job's I/O time), 64 MiB read and 64 MiB written, counted at the MPI-IO layer."
)
FIX = "Stop writing the same bytes twice: 'H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);'. [J02]"


def test_a_sentence_s_facts_are_its_numbers_with_units_codes_names_and_quoted_text() -> None:
    assert sentence_facts(WHY).literals == ["95%", "12.00 s", "11.34 s", "X06", "5.61 s", "47%"]
    assert sentence_facts(FILE).literals == [
        "`/tmp/test/mpi-io-test.tmp.dat`",
        "100.8 ms",
        "4 ranks",
        "99.9%",
        "64 MiB",
        "64 MiB",
    ]
    assert sentence_facts(FIX).literals == ["'H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);'", "[J02]"]
    # What a number counts stays with it: "Ranking 342" would be no rank at all.
    assert sentence_facts("Rank 342 appears in X05, P22.").literals == ["Rank 342", "X05", "P22"]
    assert sentence_facts("New files avoid OST 14 on 4 nodes.").literals == ["OST 14", "4 nodes"]
    # "I/O" and "MPI-IO" are words, not facts; a plain sentence has none.
    assert sentence_facts("Every rank that wrote there waited on it.").literals == []


def test_the_model_sees_placeholders_and_the_facts_come_back_verbatim() -> None:
    facts = sentence_facts(WHY)
    skeleton = facts.skeleton()
    assert skeleton.startswith("I/O takes {1} of this {2} run ({3} on the busiest rank)")
    assert not any(ch.isdigit() for ch in skeleton.replace("{", " ").replace("}", " ").split() if len(ch) > 1)
    assert facts.fill(skeleton) == WHY
    assert facts.missing_from(facts.fill(skeleton)) == []
    assert facts.missing_from(WHY.replace("11.34 s", "11.3 s")) == ["11.34 s"]
    # A fact taken away from the words it measured is caught, a reordering of the words around it is not.
    assert facts.moved_in(skeleton) == []
    moved = "I/O takes {1} of this {2} run ({3} on the busiest rank); the largest error is {4}, {5} at layer {6}."
    assert "47%" in facts.moved_in(moved)


def test_the_grammar_is_valid_gbnf_and_holds_every_fact_in_order() -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    gbnf = grammar_for(sentence_facts(WHY).tags)
    assert gbnf.index('"{1}"') < gbnf.index('"{2}"') < gbnf.index('"{6}"')
    assert "[0-9]" not in gbnf  # no digit outside the placeholders
    LlamaGrammar.from_string(gbnf, verbose=False)  # llama.cpp parses it
    LlamaGrammar.from_string(grammar_for([]), verbose=False)


def test_a_rewording_may_not_add_or_drop_counts_comparisons_or_negations() -> None:
    """The verifier checks digits; "twice", "smallest" and "not" change a claim without one."""
    assert changed_claims(WHY, "I/O takes {1} of this {2} run, {3} on the busiest rank; X06 costs most.") == [
        "largest",
        "most",
    ]
    assert changed_claims(WHY, WHY.replace("largest", "smallest")) == ["largest", "smallest"]
    assert changed_claims("Every rank waited on it.", "Not every rank waited on it, twice.") == ["not", "twice"]
    assert changed_claims("It is not slow.", "It is slow.") == ["not"]
    assert changed_claims("Each rank that wrote there waited on it.", "Each writer waited on it.") == []


def test_only_prose_is_reworded() -> None:
    assert worth_rephrasing(WHY) and worth_rephrasing(FILE)
    assert not worth_rephrasing("What to do: `lfs setstripe -c 1 -o 0 /scratch`; new files avoid OST 14 from now.")
    assert not worth_rephrasing("Where: the HDF5 code, on each dataset creation property list before H5Dcreate.")
    assert worth_rephrasing("Why it matters: Every byte a lower layer writes beyond what was asked takes time.")
    assert not worth_rephrasing("What slows the job's I/O down, the verdict's causes first, then by cost:")  # a heading
    assert not worth_rephrasing("**X06 · Bytes written grow between layers** (critical; costs ≈ 5.61 s): more.")
    assert not worth_rephrasing("[X06]")
    assert not worth_rephrasing("More in “Redundant reads and writes” [doc:redundant-io].")
    assert not worth_rephrasing("Other findings in the report: M07, P01, P03, P21, P22, M05, P14, P08, P09.")


# --- the route, with the real bundled model in its own process ---------------------------------------------


@pytest.fixture(scope="module")
def narrator() -> Narrator:
    return Narrator(model_settings(), knowledge=knowledge())


def _answer(narrator: Narrator, path: object, question: str) -> tuple[list[AnswerChunk], list[Rephrasing]]:
    seen: list[Rephrasing] = []
    chunks = list(narrator.answer(report(path), question, observe=seen.append))  # type: ignore[arg-type]
    return chunks, seen


@pytest.mark.parametrize(
    ("path", "question"),
    [(DRISHTI, "Why is my job slow?"), (BADOST, "What exact lfs command should I run?")],
    ids=["drishti-why", "badost-command"],
)
def test_each_sentence_is_the_template_s_or_a_checked_rewording_with_every_fact(
    narrator: Narrator, path: object, question: str
) -> None:
    model = get_model(model_settings())
    assert model is not None and model.rephrases
    chunks, seen = _answer(narrator, path, question)
    final = chunks[-1]
    assert final.final and final.answer is not None
    answer = final.answer
    # Streamed sentence by sentence, nothing withdrawn: what the user watched is the answer.
    assert "".join(c.delta for c in chunks[:-1]).strip() == answer.text
    assert sum(1 for c in chunks if c.delta.strip()) > 1

    rep = report(path)  # type: ignore[arg-type]
    plan = Conversation(rep, narrator.composer()).plan(question)
    g = narrator.grounding(plan, plan.facts, plan.passages)
    template = narrator.template_answer(rep, question).text
    # The template's sentences, in order, each either as written or reworded.
    originals = [s for _, sents in split_sentences(template) for s in sents]
    assert [r.original for r in seen] == originals
    assert any(r.attempted for r in seen)  # the model was asked
    for r in seen:
        if r.shown != r.original:
            assert r.outcome == "rephrased"
            assert check_sentence(r.shown, g).ok, r.shown
            assert sentence_facts(r.original).missing_from(r.shown) == [], r
    # Every fact of the template's answer is in the answer shown, and nothing invented is.
    assert sentence_facts(template).missing_from(answer.text) == []
    recheck = verify(answer.text, g)
    assert [v for v in recheck.violations if v.kind in HARD_KINDS] == []
    assert answer.verifier.passed
    reworded = sum(r.outcome == "rephrased" for r in seen)
    assert answer.provenance == ("model" if reworded else "template")
    assert answer.model == (model.name if reworded else None)
    assert f"reworded {reworded} of {sum(r.attempted for r in seen)}" in answer.note


def test_out_of_time_the_rest_is_shown_as_written() -> None:
    narrator = Narrator(model_settings(llm_timeout_s=0.05), knowledge=knowledge())
    question = "Why is my job slow?"
    chunks, seen = _answer(narrator, DRISHTI, question)
    answer = chunks[-1].answer
    assert answer is not None and answer.provenance == "template" and "out of time" in answer.note
    assert answer.text == narrator.template_answer(report(DRISHTI), question).text
    assert all(r.outcome in ("skipped", "timeout") for r in seen)
