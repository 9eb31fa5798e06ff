"""Blind question sets: questions a user would ask about a log, with the truth computed from PyDarshan by someone
who never saw iodiag's code or answers, sealed (``SEAL``: sha256 of ``questions.yaml``) and scored once.

Per question the answer is scored on what a user relies on:

* **first sentence**: the key facts (``first: true``) are in it, and a yes/no question starts with its answer;
* **facts right**: every fact of the truth is stated somewhere (numbers within their tolerance, or as rounded);
* **wrong**: a string the truth calls a wrong claim appears;
* **action**: where a fix is due, one of the accepted keywords is in the answer.

The first scoring of a sealed set is kept in ``FIRST_SIGHT.<route>.json`` and never overwritten.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from iodiag.evals.triggers import CorpusError


class QFact(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: Literal["bytes", "seconds", "count", "ratio", "rate", "text", "rank", "ost"]
    value: float | None = None
    tol: float = 0.05
    any_of: list[str] = Field(default_factory=list)
    first: bool = False


class QCase(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    log: str
    question: str
    kind: Literal["fact", "yes_no", "why", "fix"] = "fact"
    yes: bool | None = None
    facts: list[QFact] = Field(default_factory=list)
    wrong: list[str] = Field(default_factory=list)
    action_due: bool = False
    action_any_of: list[str] = Field(default_factory=list)
    truth: str = ""


class QScore(BaseModel):
    id: str
    question: str
    answer: str = ""
    first_ok: bool = False
    facts_ok: bool = False
    wrong: list[str] = Field(default_factory=list)
    action_ok: bool | None = None
    seconds: float = 0.0
    missing: list[str] = Field(default_factory=list, description="facts not found (first-sentence ones marked *)")
    error: str | None = None


class QuestionScore(BaseModel):
    set: str
    route: str
    seal: str
    scored_at: str
    first_sight: bool
    questions: int
    first_sentence: float
    facts_right: float
    wrong_answers: int
    actions_right: float | None
    actions_due: int
    median_s: float
    cases: list[QScore]


_UNIT = {"bytes": "bytes", "seconds": "seconds", "rate": "rate", "ratio": "percent"}


def fact_found(fact: QFact, text: str) -> bool:
    """Whether ``text`` states ``fact``: a spelling of a text fact, or a number within tolerance (a rounded number
    counts when its rounding interval reaches the truth)."""
    from iodiag.narration.checking.quantities import parse_quantities

    low = text.lower()
    if fact.type == "text" or fact.value is None:
        return any(s.lower() in low for s in fact.any_of)
    want = fact.value * 100 if fact.type == "ratio" else fact.value
    dim = _UNIT.get(fact.type, "bare")
    slack = max(abs(want) * fact.tol, 0.5 if fact.type == "ratio" else 0.0)
    for q in parse_quantities(text):
        if fact.type in ("count", "rank", "ost"):
            if q.dim == "bare" and abs(q.value - want) <= max(slack, q.tolerance):
                return True
            continue
        if q.dim == dim and abs(q.value - want) <= slack + q.tolerance:
            return True
        if q.dim == dim and q.alt is not None and abs(q.alt - want) <= slack + q.tolerance:
            return True
    return False


def first_sentence(text: str) -> str:
    from iodiag.narration.checking.verifier import split_sentences

    for _, sentences in split_sentences(text):
        if sentences:
            return sentences[0]
    return ""


def score_case(case: QCase, answer: str, seconds: float) -> QScore:
    first = first_sentence(answer)
    missing = [
        ("*" if f.first else "") + (f"{f.value:g} {f.type}" if f.value is not None else "|".join(f.any_of))
        for f in case.facts
        if not fact_found(f, answer) or (f.first and not fact_found(f, first))
    ]
    first_ok = all(fact_found(f, first) for f in case.facts if f.first)
    if case.yes is not None:
        first_ok = first_ok and first.lower().startswith("yes" if case.yes else "no")
    facts_ok = all(fact_found(f, answer) for f in case.facts)
    wrong = [w for w in case.wrong if w.lower() in answer.lower()]
    action_ok = any(k.lower() in answer.lower() for k in case.action_any_of) if case.action_due else None
    return QScore(
        id=case.id,
        question=case.question,
        answer=answer,
        first_ok=first_ok,
        facts_ok=facts_ok,
        wrong=wrong,
        action_ok=action_ok,
        seconds=seconds,
        missing=missing,
    )


def _yes_key(entry: object) -> object:
    if isinstance(entry, dict) and True in entry and "yes" not in entry:
        return {("yes" if k is True else k): v for k, v in entry.items()}
    return entry


def read_cases(folder: Path) -> list[QCase]:
    path = folder / "questions.yaml"
    try:
        raw = yaml.safe_load(path.read_text())
        # YAML 1.1 reads a bare `yes:` key as the boolean True; without this the yes/no check was silently skipped.
        cases = [QCase.model_validate(_yes_key(x)) for x in raw or []]
    except (OSError, yaml.YAMLError, ValidationError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CorpusError(f"{path}: {first}") from None
    if not cases:
        raise CorpusError(f"{path}: no questions")
    return cases


def check_seal(folder: Path) -> str:
    seal = folder / "SEAL"
    if not seal.is_file():
        raise CorpusError(f"{folder}: no SEAL (sha256 of questions.yaml, written before the first scoring)")
    digest = hashlib.sha256((folder / "questions.yaml").read_bytes()).hexdigest()
    if digest not in seal.read_text():
        raise CorpusError(f"{folder / 'questions.yaml'}: does not match its seal: changed after sealing")
    return digest


def run_questions(
    folder: Path,
    route: str = "default",
    progress: Callable[[str], None] | None = None,
    development: bool = False,
    record: bool = True,
) -> QuestionScore:
    """Ask every question of the set (``route``: ``template`` or ``default``, the service's own) and score it."""
    from iodiag.evals.answers import report_for
    from iodiag.narration.service import Narrator

    seal = "development (unsealed)" if development else check_seal(folder)
    cases = read_cases(folder)
    narrator = Narrator()
    out: list[QScore] = []
    for case in cases:
        if progress:
            progress(case.id)
        try:
            report = report_for(case.log, dxt=True)  # as the service reads a log
            t0 = time.monotonic()
            if route == "template":
                text = narrator.template_answer(report, case.question).text
            else:
                final = [c.answer for c in narrator.answer(report, case.question) if c.final and c.answer]
                text = final[-1].text if final else ""
            out.append(score_case(case, text, time.monotonic() - t0))
        except Exception as exc:  # one bad case is a scored error, not a lost run
            out.append(QScore(id=case.id, question=case.question, error=f"{type(exc).__name__}: {exc}"))
    n = len(out)
    due = [c for c in out if c.action_ok is not None]
    first_path = folder / f"FIRST_SIGHT.{route}.json"
    result = QuestionScore(
        set=folder.name,
        route=route,
        seal=seal,
        scored_at=datetime.now(UTC).isoformat(timespec="seconds"),
        # The set's first scoring on any route is its first sight: a later route scores a set already seen.
        first_sight=not development and not any(folder.glob("FIRST_SIGHT.*.json")),
        questions=n,
        first_sentence=sum(c.first_ok for c in out) / n,
        facts_right=sum(c.facts_ok for c in out) / n,
        wrong_answers=sum(bool(c.wrong) for c in out),
        actions_right=sum(bool(c.action_ok) for c in due) / len(due) if due else None,
        actions_due=len(due),
        median_s=statistics.median(c.seconds for c in out),
        cases=out,
    )
    if record and result.first_sight:
        first_path.write_text(result.model_dump_json(indent=1) + "\n")
    return result
