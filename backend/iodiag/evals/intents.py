"""Intent eval: does the narrator understand what kind of question it was asked?

``evals/intents/questions.yaml`` holds labelled questions, several phrasings of each idea, typos included, each
with the intent its asker means (labels by meaning, not by the rules). Every question is classified against one
real report (the Drishti sample log: HDF5 over MPI-IO on GPFS, many findings, named files); a follow-up
(``history: true``) is classified as the second turn after "Why is my job slow?". Scores: accuracy overall and
per intent, and every miss with what it got, so a rule change shows what it fixed and what it broke.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from iodiag.evals.triggers import DEFAULT_SCENARIOS, CorpusError

DEFAULT_QUESTIONS = DEFAULT_SCENARIOS.parent / "intents" / "questions.yaml"
DEFAULT_LOG = "drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan"
FIRST_TURN = "Why is my job slow?"
TARGET = 0.95


class LabelledQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    q: str
    intent: str
    history: bool = False


class QuestionSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    questions: list[LabelledQuestion] = Field(min_length=1)


class Miss(BaseModel):
    question: str
    history: bool
    expected: str
    got: str


class IntentScore(BaseModel):
    intent: str
    questions: int
    right: int

    @property
    def accuracy(self) -> float:
        return self.right / self.questions if self.questions else 0.0


class IntentEval(BaseModel):
    questions_file: str
    log: str
    questions: int
    right: int
    accuracy: float
    per_intent: list[IntentScore]
    misses: list[Miss]
    target: float = TARGET

    @property
    def passed(self) -> bool:
        return self.accuracy >= self.target


def load_questions(path: Path) -> list[LabelledQuestion]:
    from iodiag.narration.intent.classify import Intent

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        qs = QuestionSet.model_validate(data).questions
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CorpusError(f"{path}: cannot read the questions ({' '.join(str(exc).split())})") from None
    except ValidationError as exc:
        msg = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
        raise CorpusError(f"{path}: {msg}") from None
    known = {i.value for i in Intent} - {Intent.TRIAGE.value}
    bad = sorted({x.intent for x in qs} - known)
    if bad:
        raise CorpusError(f"{path}: unknown intents {bad} (known: {sorted(known)})")
    return qs


def run_intent_eval(questions_path: Path | None = None, log: Path | None = None) -> IntentEval:
    from iodiag.analysis import analyze
    from iodiag.core.settings import get_settings
    from iodiag.ingest import load_profile
    from iodiag.narration.composer import Composer
    from iodiag.narration.prompts import PromptLibrary

    path = questions_path or DEFAULT_QUESTIONS
    questions = load_questions(path)
    if log is None:
        from iodiag.evals.answers import resolve_log

        log = resolve_log(f"shared:{DEFAULT_LOG}")
    report = analyze(load_profile(str(log), include=("HEATMAP",)))
    composer = Composer(PromptLibrary(get_settings().prompts_dir).phrases(), None)
    # What a follow-up refers back to: the subject the first turn's plan settled on.
    focus = composer.plan(report, FIRST_TURN).focus_codes
    misses: list[Miss] = []
    totals: Counter[str] = Counter()
    rights: Counter[str] = Counter()
    for x in questions:
        plan = composer.plan(report, x.q, focus if x.history else ())
        got = plan.intent.value
        totals[x.intent] += 1
        if got == x.intent:
            rights[x.intent] += 1
        else:
            misses.append(Miss(question=x.q, history=x.history, expected=x.intent, got=got))
    right = sum(rights.values())
    return IntentEval(
        questions_file=str(path),
        log=str(log),
        questions=len(questions),
        right=right,
        accuracy=right / len(questions),
        per_intent=[IntentScore(intent=i, questions=totals[i], right=rights[i]) for i in sorted(totals)],
        misses=misses,
    )


def print_intent_eval(result: IntentEval, console: object) -> None:
    from rich.console import Console
    from rich.text import Text

    from iodiag.evals.tables import results_table

    assert isinstance(console, Console)
    table = results_table(
        f"Intent accuracy on {result.questions} labelled questions", ("intent", "questions", "right", "accuracy")
    )
    for s in result.per_intent:
        table.add_row(s.intent, str(s.questions), str(s.right), f"{s.accuracy:.3f}")
    table.add_row("all", str(result.questions), str(result.right), f"{result.accuracy:.3f}", style="bold")
    console.print(table)
    for m in result.misses:
        turn = " (follow-up)" if m.history else ""
        console.print(Text(f"  miss{turn}: {m.question!r}: expected {m.expected}, got {m.got}"))
    verdict = "meets" if result.passed else "is below"
    console.print(f"accuracy {result.accuracy:.3f} {verdict} the target {result.target:.2f}")


# --- leave one set out --------------------------------------------------------------------------------


class FoldScore(BaseModel):
    """One labelled set classified by methods trained on all the other sets (never on it)."""

    held_out: str
    questions: int
    rules: float  # the rules alone, their default where none applies
    rules_nearest: float  # the rules, then the nearest labelled questions where none applies (before the model)
    ngram_model: float  # the n-gram head alone
    embedding_model: float  # the MiniLM head alone
    model: float  # both heads, no rules
    combined: float  # what ships: rules weighed against both heads (intents._second_opinion)


def leave_one_set_out(paths: list[Path], log: Path | None = None) -> list[FoldScore]:
    """Train on every set but one, score that one; for each set in turn.

    The rules were written with every existing set in view, so for a set older than the rules their accuracy
    here is in-sample; the model's is not (it never saw the held-out set). The honest number for the rules is
    the first, blind score of each set (evals/intents/README.md).
    """
    import tempfile

    from iodiag.analysis import analyze
    from iodiag.core.settings import get_settings
    from iodiag.ingest import load_profile
    from iodiag.narration.intent import model as im
    from iodiag.narration.intent.classify import classify
    from iodiag.narration.prompts import PromptLibrary

    sets = {p.stem: load_questions(p) for p in paths}
    if log is None:
        from iodiag.evals.answers import resolve_log

        log = resolve_log(f"shared:{DEFAULT_LOG}")
    report = analyze(load_profile(str(log), include=("HEATMAP",)))
    phrases = PromptLibrary(get_settings().prompts_dir).phrases()
    embedder = im.minilm()
    texts = sorted({x.q for qs in sets.values() for x in qs})
    vectors = dict(zip(texts, embedder.embed(texts), strict=True)) if embedder is not None else {}

    class Cached:
        def embed(self, batch: Sequence[str]) -> im.Floats:
            return np.stack([vectors[t] for t in batch]).astype(np.float32)

    cached = Cached() if embedder is not None else None
    out: list[FoldScore] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, held in sets.items():
            rows = [(x.q, x.intent, x.history) for other, qs in sets.items() if other != name for x in qs]
            fold = Path(tmp) / name
            (fold / "nearest").mkdir(parents=True)
            examples = fold / f"intent-examples.v{phrases.version}.yaml"
            examples.write_text(
                yaml.safe_dump({"examples": [{"q": q, "intent": i, "history": h} for q, i, h in rows]}),
                encoding="utf-8",
            )
            nearest = fold / "nearest" / examples.name  # the examples without a model: the old fallback
            nearest.write_text(examples.read_text(encoding="utf-8"), encoding="utf-8")
            model = im.train(rows, cached, "leave-one-set-out")
            im.save(model, im.model_path(examples))
            books = {
                "rules": phrases.model_copy(update={"examples_path": None}),
                "rules_nearest": phrases.model_copy(update={"examples_path": nearest}),
                "combined": phrases.model_copy(update={"examples_path": examples}),
            }
            right: Counter[str] = Counter()
            for x in held:
                for key, book in books.items():
                    right[key] += classify(x.q, report, book, has_history=x.history).intent.value == x.intent
                ngram = model.ngram_probabilities([x.q], [x.history])[0]
                right["ngram_model"] += im.LABELS[int(np.argmax(ngram))] == x.intent
                if cached is not None and model.embed_w is not None:
                    emb = model.embedding_probabilities(im._embedding_rows(cached, [x.q], [x.history]))[0]
                    right["embedding_model"] += im.LABELS[int(np.argmax(emb))] == x.intent
                    both = (1 - im.EMBEDDING_WEIGHT) * ngram + im.EMBEDDING_WEIGHT * emb
                    right["model"] += im.LABELS[int(np.argmax(both))] == x.intent
            n = len(held)
            out.append(
                FoldScore(
                    held_out=name,
                    questions=n,
                    **{
                        k: right[k] / n
                        for k in ("rules", "rules_nearest", "ngram_model", "embedding_model", "model", "combined")
                    },
                )
            )
    return out


if __name__ == "__main__":  # python -m iodiag.evals.intents [SET.yaml ...]: leave-one-set-out scores
    chosen = [Path(a) for a in sys.argv[1:]] or sorted(DEFAULT_QUESTIONS.parent.glob("*.yaml"))
    cols = ("rules", "rules_nearest", "ngram_model", "embedding_model", "model", "combined")
    print(f"{'held out':<12} {'n':>4} " + " ".join(f"{c:>15}" for c in cols))
    folds = leave_one_set_out(chosen)
    for f in folds:
        print(f"{f.held_out:<12} {f.questions:>4} " + " ".join(f"{getattr(f, c):>15.3f}" for c in cols))
    print(f"{'mean':<12} {'':>4} " + " ".join(f"{sum(getattr(f, c) for f in folds) / len(folds):>15.3f}" for c in cols))
