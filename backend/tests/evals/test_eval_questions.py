"""The question scorer: what counts as a fact stated, an answer in the first sentence, a wrong claim."""

from __future__ import annotations

from pathlib import Path

import pytest

from iodiag.evals.questions import QCase, QFact, check_seal, fact_found, run_questions, score_case
from iodiag.evals.triggers import CorpusError


def test_numbers_match_within_rounding_and_tolerance() -> None:
    assert fact_found(QFact(type="bytes", value=256 * 2**20, tol=0.02), "Rank 3 wrote 256 MiB.")
    assert not fact_found(QFact(type="bytes", value=300 * 2**20, tol=0.02), "Rank 3 wrote 256 MiB.")
    assert fact_found(QFact(type="seconds", value=780.0, tol=0.05), "The job ran for 13.0 min.")
    assert fact_found(QFact(type="ratio", value=0.42), "I/O took 42% of the run.")
    assert fact_found(QFact(type="count", value=2048, tol=0), "The job ran 2,048 rank(s).")
    assert not fact_found(QFact(type="count", value=2048, tol=0), "256 MiB in 2,049 writes")
    assert fact_found(QFact(type="text", any_of=["NFS", "nfs"]), "The output file was on NFS.")


def test_the_key_fact_must_be_in_the_first_sentence() -> None:
    case = QCase(
        id="x",
        log="wheel:sample.darshan",
        question="did it use HDF5?",
        kind="yes_no",
        yes=False,
        facts=[QFact(type="text", any_of=["POSIX"], first=True)],
        wrong=["Yes"],
    )
    good = score_case(case, "No: the log has no HDF5 records; the job's I/O went through POSIX.", 0.1)
    assert good.first_ok and good.facts_ok and not good.wrong
    late = score_case(case, "No HDF5 here.\n\nThe I/O went through POSIX.", 0.1)
    assert not late.first_ok and late.facts_ok
    wrong = score_case(case, "Yes: POSIX.", 0.1)
    assert not wrong.first_ok and wrong.wrong == ["Yes"]


def test_a_set_must_match_its_seal(tmp_path: Path) -> None:
    (tmp_path / "questions.yaml").write_text("- {id: a, log: 'wheel:sample.darshan', question: 'how many ranks?'}\n")
    with pytest.raises(CorpusError, match="no SEAL"):
        check_seal(tmp_path)
    (tmp_path / "SEAL").write_text("0" * 64 + "  questions.yaml\n")
    with pytest.raises(CorpusError, match="changed after sealing"):
        run_questions(tmp_path)


def test_a_development_set_is_scored_from_real_answers(tmp_path: Path) -> None:
    (tmp_path / "questions.yaml").write_text(
        "- id: d1\n  log: 'wheel:sample-badost.darshan'\n  question: 'how many ranks did the job have?'\n"
        "  facts: [{type: count, value: 2048, tol: 0, first: true}]\n"
    )
    result = run_questions(tmp_path, route="template", development=True)
    assert result.questions == 1 and result.first_sentence == 1.0 and result.facts_right == 1.0
    assert not (tmp_path / "FIRST_SIGHT.template.json").exists()


def test_a_bare_yes_key_is_read_as_the_expected_answer(tmp_path: Path) -> None:
    # YAML 1.1 reads `yes:` as the boolean True; the writers' sets use it bare, and the yes/no check must hold.
    from iodiag.evals.questions import read_cases

    (tmp_path / "questions.yaml").write_text(
        "- id: a\n  log: 'wheel:sample.darshan'\n  question: 'did it use HDF5?'\n  kind: yes_no\n  yes: false\n"
        "- id: b\n  log: 'wheel:sample.darshan'\n  question: 'did it use MPI-IO?'\n  kind: yes_no\n  'yes': true\n"
    )
    a, b = read_cases(tmp_path)
    assert a.yes is False and b.yes is True
    assert not score_case(a, "Yes: it did.", 0.1).first_ok
