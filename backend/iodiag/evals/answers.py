"""The answer eval: questions about real and scenario logs, with what a right answer must and must not say.

A case (``evals/answers/cases.yaml``) names a log (``shared:REL``, ``wheel:NAME``, ``scenario:PATH``, or
a path), a question (and optional earlier turns), the finding codes and document ids the answer must
cite, strings (numbers, file names) it must contain, and claims it must not make. ``score_route`` runs
every case through the template route or the model route and reports citation accuracy, verifier pass
rate, how many hallucinations the verifier caught (and that none leaked), fallback rate and latency. With a
model that rewords the template's sentences (the bundled one, ``narration/rephrase.py``) it also reports how many
rewordings passed the verifier and kept every fact, and how long the first verified sentence took.

Run it: ``iodiag eval answers [--route template|model|both] [--cases FILE]``.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from iodiag.analysis.models import Report
from iodiag.core.settings import REPO_ROOT, Settings
from iodiag.narration.checking.untrusted import strip_quoted
from iodiag.narration.checking.verifier import HARD_KINDS
from iodiag.narration.models import Answer, ChatTurn

DEFAULT_CASES = REPO_ROOT / "evals" / "answers"
Route = Literal["template", "model"]


class EvalError(ValueError):
    """A cases file or a log it names that cannot be used."""


class Case(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    log: str
    question: str = ""
    history: tuple[ChatTurn, ...] = ()
    intent: str
    must_cite: tuple[str, ...] = ()
    must_include: tuple[str, ...] = ()
    must_not: tuple[str, ...] = ()
    note: str = ""


class CaseResult(BaseModel):
    id: str
    route: Route
    intent: str
    intent_ok: bool
    cited: list[str]
    must_cite_hit: int
    must_cite_total: int
    must_include_missing: list[str]
    must_not_found: list[str]
    provenance: str
    passed_first: bool  # the first thing produced passed the verifier (a model draft, or the template)
    drafts_hallucinated: bool  # a model draft had a hard violation (an invented number, code, file, ...)
    caught: int  # violations the verifier caught in the model's drafts before the answer went out
    hard_caught: int  # of those, invented numbers, codes, files, ranks, documents and absent problems
    leaked: int  # hard violations in the final answer, re-checked against the whole plan
    elapsed_s: float
    first_s: float = 0.0  # to the first streamed (verified) sentence; the whole answer for the template route
    rephrase: dict[str, int] = Field(default_factory=dict)  # model rewording: outcome -> sentences
    text: str

    @property
    def answered(self) -> bool:
        """Answered the question: the right kind, every fact and citation it must hold, no claim it must not."""
        return (
            self.intent_ok
            and not self.must_include_missing
            and not self.must_not_found
            and self.must_cite_hit == self.must_cite_total
        )


class RouteScore(BaseModel):
    route: Route
    cases: int
    intent_accuracy: float
    citation_accuracy: float  # must-cite items cited, over all must-cite items
    must_cite_complete: float  # cases citing everything they must
    must_include_rate: float
    must_not_clean: float  # cases without any forbidden claim
    verifier_pass_rate: float  # first draft (model) or answer (template) passed
    hallucination_rate: float  # cases where a model draft invented something
    hallucinations_caught: float  # of the hard violations in drafts, the share kept out of final answers
    leaked: int
    fallback_rate: float  # model route: answers that fell back to the template
    latency_median_s: float
    latency_p90_s: float
    answered_rate: float = 0.0  # cases that answered the question (see CaseResult.answered)
    first_median_s: float = 0.0
    first_p90_s: float = 0.0
    rephrase_tried: int = 0  # sentences the model tried to reword
    rephrase_pass_rate: float = 0.0  # of those, the share that passed the verifier and kept every fact
    rephrase_changed_rate: float = 0.0  # of those, the share shown reworded (passed, and not a copy)
    rephrase_outcomes: dict[str, int] = Field(default_factory=dict)
    results: list[CaseResult]


def load_cases(path: Path = DEFAULT_CASES) -> list[Case]:
    """The cases of one file, or of every ``cases*.yaml`` in a folder (so case sets can grow side by side)."""
    if path.is_dir():
        files = sorted(path.glob("cases*.yaml"))
        if not files:
            raise EvalError(f"{path}: no cases*.yaml files")
        cases = [c for f in files for c in _load_file(f)]
        ids = [c.id for c in cases]
        dupes = sorted({x for x in ids if ids.count(x) > 1})
        if dupes:
            raise EvalError(f"{path}: duplicate case ids across files {dupes}")
        return cases
    return _load_file(path)


def _load_file(path: Path) -> list[Case]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvalError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise EvalError(f"{path}: invalid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise EvalError(f"{path}: expected a mapping with a 'cases' list")
    cases = []
    for i, raw in enumerate(data["cases"]):
        try:
            cases.append(Case.model_validate(raw))
        except ValidationError as exc:
            what = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise EvalError(f"{path}: case {i + 1}: {what}") from None
    ids = [c.id for c in cases]
    dupes = sorted({x for x in ids if ids.count(x) > 1})
    if dupes:
        raise EvalError(f"{path}: duplicate case ids {dupes}")
    return cases


# --- logs ---------------------------------------------------------------------------------------------


def _shared_logs() -> Path:
    return Path(os.environ.get("IODIAG_SHARED", REPO_ROOT.parent / "shared")) / "logs"


def resolve_log(ref: str, cases_dir: Path = DEFAULT_CASES) -> Path:
    """The log a case names, building scenario logs once (cached by spec hash, like the trigger eval)."""
    kind, _, rest = ref.partition(":")
    if kind == "shared":
        return _shared_logs() / rest
    if kind == "wheel":
        spec = importlib.util.find_spec("darshan")
        if spec is None or not spec.submodule_search_locations:
            raise EvalError("the darshan package is not installed")
        return Path(next(iter(spec.submodule_search_locations))) / "tests" / "input" / rest
    if kind == "blind":  # blind:<set>/<case>: a blind set's log, rebuilt from its scenarios (evals/blind/README.md)
        bset, _, case = rest.partition("/")
        return REPO_ROOT / "evals" / "blind" / bset / "logs" / f"{case.removesuffix('.darshan')}.darshan"
    if kind == "scenario":
        from iodiag.evals.triggers import build_entry, default_cache_dir, load_entry

        spec_path = Path(rest)
        if not spec_path.is_absolute():
            spec_path = (REPO_ROOT / spec_path) if (REPO_ROOT / spec_path).exists() else cases_dir / spec_path
        return build_entry(load_entry(spec_path), default_cache_dir())
    return Path(ref)


@lru_cache(maxsize=64)
def report_for(ref: str, dxt: bool = False) -> Report:
    """The report of a log the eval names. ``dxt``: read the DXT traces too, as the service does by default
    (settings.job_read_dxt), so host names and trace findings are there as a user sees them. The answer cases
    were labelled from reports without DXT and keep that."""
    from iodiag.analysis import analyze
    from iodiag.ingest import load_profile

    path = resolve_log(ref)
    if not path.is_file():
        raise EvalError(f"{ref}: log not found at {path}")
    return analyze(load_profile(str(path), include=("HEATMAP", "DXT") if dxt else ("HEATMAP",)))


# --- scoring ------------------------------------------------------------------------------------------


def _contains(text: str, needle: str) -> bool:
    return " ".join(needle.lower().split()) in " ".join(text.lower().split())


def run_case(narrator: object, case: Case, route: Route) -> CaseResult:
    from iodiag.narration.checking.verifier import verify
    from iodiag.narration.composer import Conversation
    from iodiag.narration.rephrase import Rephrasing
    from iodiag.narration.service import Narrator

    assert isinstance(narrator, Narrator)
    report = report_for(case.log)
    t0 = time.monotonic()
    first: float | None = None
    seen: list[Rephrasing] = []
    if route == "template":
        answer = narrator.template_answer(report, case.question, case.history)
    else:
        final: Answer | None = None
        for chunk in narrator.answer(report, case.question, case.history, observe=seen.append):
            if first is None and chunk.delta.strip():
                first = time.monotonic() - t0
            if chunk.final:
                final = chunk.answer
        assert final is not None
        answer = final
    elapsed = time.monotonic() - t0
    outcomes = Counter(r.outcome for r in seen if r.attempted)
    # Re-check the final text against everything the plan held: nothing invented may remain.
    plan = Conversation(report, narrator.composer(), case.history).plan(case.question)
    recheck = verify(answer.text, narrator.grounding(plan, plan.facts, plan.passages))
    leaked = sum(1 for v in recheck.violations if v.kind in HARD_KINDS)
    cited = [c.id for c in answer.citations]
    hard_caught = [v for v in answer.verifier.violations if v.kind in HARD_KINDS]
    return CaseResult(
        id=case.id,
        route=route,
        intent=answer.intent,
        intent_ok=answer.intent == case.intent,
        cited=cited,
        must_cite_hit=sum(1 for c in case.must_cite if c in cited),
        must_cite_total=len(case.must_cite),
        must_include_missing=[s for s in case.must_include if not _contains(answer.text, s)],
        must_not_found=[s for s in case.must_not if _contains(strip_quoted(answer.text), s)],
        provenance=answer.provenance,
        passed_first=(answer.provenance == "model") if route == "model" else answer.verifier.passed,
        drafts_hallucinated=bool(hard_caught) and route == "model",
        caught=len(answer.verifier.violations) if route == "model" else 0,
        hard_caught=len(hard_caught) if route == "model" else 0,
        leaked=leaked,
        elapsed_s=elapsed,
        first_s=first if first is not None else elapsed,
        rephrase=dict(outcomes),
        text=answer.text,
    )


def _ratio(num: float, den: float) -> float:
    return num / den if den else 1.0


def _p90(values: Sequence[float]) -> float:
    s = sorted(values)
    return s[min(round(0.9 * (len(s) - 1)), len(s) - 1)] if s else 0.0


def score(results: Sequence[CaseResult], route: Route) -> RouteScore:
    n = len(results)
    times = sorted(r.elapsed_s for r in results)
    firsts = [r.first_s for r in results]
    hard = sum(r.hard_caught for r in results)
    leaked = sum(r.leaked for r in results)
    outcomes: Counter[str] = Counter()
    for r in results:
        outcomes.update(r.rephrase)
    tried = sum(outcomes.values())
    return RouteScore(
        route=route,
        cases=n,
        intent_accuracy=_ratio(sum(r.intent_ok for r in results), n),
        citation_accuracy=_ratio(sum(r.must_cite_hit for r in results), sum(r.must_cite_total for r in results)),
        must_cite_complete=_ratio(sum(r.must_cite_hit == r.must_cite_total for r in results), n),
        must_include_rate=_ratio(sum(1 for r in results if not r.must_include_missing), n),
        must_not_clean=_ratio(sum(1 for r in results if not r.must_not_found), n),
        verifier_pass_rate=_ratio(sum(r.passed_first for r in results), n),
        hallucination_rate=_ratio(sum(r.drafts_hallucinated for r in results), n) if route == "model" else 0.0,
        hallucinations_caught=_ratio(hard, hard + leaked),
        leaked=leaked,
        fallback_rate=_ratio(sum(r.provenance == "template" for r in results), n) if route == "model" else 0.0,
        latency_median_s=statistics.median(times) if times else 0.0,
        latency_p90_s=_p90(times),
        answered_rate=_ratio(sum(r.answered for r in results), n),
        first_median_s=statistics.median(firsts) if firsts else 0.0,
        first_p90_s=_p90(firsts),
        rephrase_tried=tried,
        rephrase_pass_rate=_ratio(outcomes["rephrased"] + outcomes["unchanged"], tried) if tried else 0.0,
        rephrase_changed_rate=_ratio(outcomes["rephrased"], tried) if tried else 0.0,
        rephrase_outcomes=dict(outcomes.most_common()),
        results=list(results),
    )


def score_route(
    cases: Sequence[Case],
    route: Route,
    settings: Settings | None = None,
    progress: Callable[[str], None] | None = None,
) -> RouteScore:
    from iodiag.narration.service import Narrator

    base = settings or Settings()
    if route == "template":
        base = base.model_copy(update={"llm_provider": "none"})
    elif base.llm_provider == "none":  # the model route of a default install: the bundled model, opt-in
        base = base.model_copy(update={"llm_provider": "llamacpp"})
    narrator = Narrator(base)
    results = []
    for case in cases:
        if progress:
            progress(case.id)
        results.append(run_case(narrator, case, route))
    return score(results, route)


def _model_only(s: RouteScore, text: str) -> str:
    return text if s.route == "model" else "n/a"


def _rate(value: float, s: RouteScore) -> str:
    return f"{value:.0%}" if s.rephrase_tried else "n/a"


def format_table(scores: Sequence[RouteScore]) -> str:
    rows: list[tuple[str, Callable[[RouteScore], str]]] = [
        ("cases", lambda s: f"{s.cases}"),
        ("intent accuracy", lambda s: f"{s.intent_accuracy:.0%}"),
        ("citation accuracy (must-cite)", lambda s: f"{s.citation_accuracy:.0%}"),
        ("cases citing all they must", lambda s: f"{s.must_cite_complete:.0%}"),
        ("cases with every must-include", lambda s: f"{s.must_include_rate:.0%}"),
        ("cases free of must-not claims", lambda s: f"{s.must_not_clean:.0%}"),
        ("verifier pass rate (first draft)", lambda s: f"{s.verifier_pass_rate:.0%}"),
        ("drafts with a hallucination", lambda s: _model_only(s, f"{s.hallucination_rate:.0%}")),
        ("hallucinations caught", lambda s: _model_only(s, f"{s.hallucinations_caught:.0%}")),
        ("violations leaked to answers", lambda s: f"{s.leaked}"),
        ("fallback to template", lambda s: _model_only(s, f"{s.fallback_rate:.0%}")),
        ("answered the question (every label)", lambda s: f"{s.answered_rate:.0%}"),
        ("sentences the model tried to reword", lambda s: _model_only(s, f"{s.rephrase_tried}")),
        ("rewordings verified, every fact kept", lambda s: _model_only(s, _rate(s.rephrase_pass_rate, s))),
        ("rewordings shown (passed, not a copy)", lambda s: _model_only(s, _rate(s.rephrase_changed_rate, s))),
        ("first verified sentence median", lambda s: f"{s.first_median_s:.2f} s"),
        ("first verified sentence p90", lambda s: f"{s.first_p90_s:.2f} s"),
        ("latency median", lambda s: f"{s.latency_median_s:.2f} s"),
        ("latency p90", lambda s: f"{s.latency_p90_s:.2f} s"),
    ]
    width = max(len(name) for name, _ in rows)
    head = f"{'':<{width}}  " + "  ".join(f"{s.route:>10}" for s in scores)
    lines = [head, "-" * len(head)]
    lines += [f"{name:<{width}}  " + "  ".join(f"{fmt(s):>10}" for s in scores) for name, fmt in rows]
    for s in scores:
        if s.rephrase_outcomes:
            lines.append(
                f"{s.route} rewording outcomes: " + ", ".join(f"{k} {v}" for k, v in s.rephrase_outcomes.items())
            )
    return "\n".join(lines)


def run_answers_eval(
    cases_path: Path = DEFAULT_CASES,
    route: Route | Literal["both"] = "both",
    json_out: Path | None = None,
    show: bool = False,
) -> int:
    """``iodiag eval answers``: score the routes, print the table and each case's problems; raises ``EvalError``
    for a bad cases file. Returns the exit status (0: the eval ran; its numbers are the result)."""
    cases = load_cases(cases_path)
    routes: list[Route] = ["template", "model"] if route == "both" else [route]
    scores = []
    for one in routes:

        def progress(cid: str, one: Route = one) -> None:
            print(f"  {one}: {cid}", file=sys.stderr)

        scores.append(score_route(cases, one, progress=progress))
    if show:
        for s in scores:
            for r in s.results:
                print(f"\n=== {r.route} · {r.id} · {r.provenance} · cited {r.cited}\n{r.text}")
    print(format_table(scores))
    for s in scores:
        for r in s.results:
            problems = []
            if r.must_cite_hit < r.must_cite_total:
                problems.append(f"cited {r.cited}")
            if r.must_include_missing:
                problems.append(f"missing {r.must_include_missing}")
            if r.must_not_found:
                problems.append(f"says {r.must_not_found}")
            if r.leaked:
                problems.append(f"{r.leaked} leaked violation(s)")
            if not r.intent_ok:
                problems.append(f"intent {r.intent}")
            if problems and (s.route == "template" or r.leaked):
                print(f"  {s.route} {r.id}: " + "; ".join(problems))
    if json_out is not None:
        json_out.write_text("[" + ",".join(s.model_dump_json(indent=2) for s in scores) + "]\n", encoding="utf-8")
    return 0
