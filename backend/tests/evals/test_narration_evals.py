"""The answer eval (``evals/answers/cases.yaml``): the template route must be perfect, the model route safe.

Template route: every must-cite code and document cited, every must-include string present, no must-not
claim, the intent right, every answer verified. Model route (a few cases, the bundled model): whatever it
writes, no violation reaches a final answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from iodiag.evals.answers import DEFAULT_CASES, EvalError, format_table, load_cases, resolve_log, score_route
from tests.narration.test_narration_support import model_settings, template_settings

MODEL_CASES = ("badost-fix", "injection-why-slow")


def test_the_corpus_is_big_and_varied() -> None:
    cases = load_cases()
    assert len(cases) >= 25
    intents = {c.intent for c in cases}
    assert intents >= {
        "explain-job",
        "explain-finding",
        "file-or-rank",
        "how-to-fix",
        "concept",
        "facility",
        "off-topic",
    }
    assert sum(1 for c in cases if c.must_cite) >= 25 and sum(1 for c in cases if c.must_not) >= 5
    for ref in sorted({c.log for c in cases}):
        assert resolve_log(ref).is_file(), ref
    assert set(MODEL_CASES) <= {c.id for c in cases}


def test_template_route_scores_perfectly() -> None:
    result = score_route(load_cases(), "template", settings=template_settings())
    misses = [
        (r.id, r.cited, r.must_include_missing, r.must_not_found, r.intent)
        for r in result.results
        if r.must_cite_hit < r.must_cite_total or r.must_include_missing or r.must_not_found or not r.intent_ok
    ]
    assert misses == []
    assert result.citation_accuracy == 1.0 and result.must_cite_complete == 1.0
    assert result.must_include_rate == 1.0 and result.must_not_clean == 1.0 and result.intent_accuracy == 1.0
    assert result.verifier_pass_rate == 1.0 and result.leaked == 0
    assert "citation accuracy" in format_table([result])


def test_model_route_never_passes_a_violation() -> None:
    cases = [c for c in load_cases() if c.id in MODEL_CASES]
    result = score_route(cases, "model", settings=model_settings())
    assert result.leaked == 0, [(r.id, r.text) for r in result.results if r.leaked]
    assert result.must_not_clean == 1.0, [(r.id, r.must_not_found) for r in result.results]
    assert result.hallucinations_caught == 1.0
    assert all(r.provenance in ("model", "model-repaired", "template") for r in result.results)


def test_bad_cases_files_fail_clearly(tmp_path: Path) -> None:
    dup = tmp_path / "dup.yaml"
    text = (DEFAULT_CASES / "cases.yaml").read_text(encoding="utf-8")
    first = text.index("  - id: drishti-why-slow")
    block = text[first : text.index("  - id:", first + 5)]
    dup.write_text("cases:\n" + block + block, encoding="utf-8")
    with pytest.raises(EvalError, match="duplicate case ids"):
        load_cases(dup)
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases:\n  - {id: x, log: y, intent: explain-job, must_sight: [P08]}\n", encoding="utf-8")
    with pytest.raises(EvalError, match="must_sight"):
        load_cases(bad)
