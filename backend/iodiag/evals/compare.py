"""Compare eval: does ``iodiag compare`` say rightly what a change did to a run?

Each pair file (``evals/compare/*.yaml``) names two scenario specs, run A (``before``) and run B (``after``),
that differ by one change made by construction (a file striped over 16 OSTs instead of 1, collective instead of
independent MPI-IO, large instead of small requests, a slow OST healed; or the reverse, a fix undone), and labels
what that change must do to the comparison, reasoned from the programs:

* ``resolved`` / ``new``: finding codes that must be in ``findings_resolved`` / ``findings_new``;
* ``unchanged_top``: whether the verdict's first cause is the same code in both runs (no cause in both: the same);
* ``io_time``: ``fell``, ``rose`` or ``same``: the busiest rank's I/O time, where a move under
  ``iodiag.comparison.compare.CHANGE_SHARE`` of the larger time is ``same``;
* ``io_matters_after``: run B's ``io_matters`` (``null`` or left out: not scored).

The eval builds both logs (cached by spec hash, in the trigger eval's cache), analyzes them and reads the
``RunFacts`` as ``iodiag compare`` does, runs ``compare`` and scores per pair:

* codes, micro-averaged over the pairs: TP, a labelled code in its list; FN (miss), a labelled code not in its list;
  FP (false alarm), a code the comparison lists as resolved (new) that the pair does not label so, where the pair
  labels it in the other list or it is above info (critical or warning) in the run it is in. Info-level findings the
  pair does not label are not scored (listed as ``unlabeled``);
* ``io_time``, ``io_matters_after`` and ``unchanged_top`` where labelled.

A pair is right when every one of its labels is met; ``accuracy`` is the share of right pairs, and the eval is
``perfect`` when every pair is right and every pair ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from iodiag.evals.triggers import (
    DEFAULT_SCENARIOS,
    CorpusEntry,
    CorpusError,
    build_entry,
    builder_fingerprint,
    default_cache_dir,
    engine_titles,
    load_entry,
)

if TYPE_CHECKING:
    from rich.console import Console

    from iodiag.analysis.models import Report
    from iodiag.comparison.models import Comparison, FindingChange, RunFacts

DEFAULT_PAIRS = DEFAULT_SCENARIOS.parent / "compare"
"""The pairs in a source checkout; their ``before``/``after`` paths are relative to ``evals/``."""

Direction = Literal["fell", "rose", "same"]


# --- pair files -----------------------------------------------------------------------------------


class PairExpect(BaseModel):
    """What the change must do to the comparison, true by construction."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    resolved: list[str] = Field(default_factory=list, description="codes in run A, gone from run B")
    new: list[str] = Field(default_factory=list, description="codes not in run A, in run B")
    unchanged_top: bool | None = Field(default=None, description="the verdict's first cause is the same in A and B")
    io_time: Direction = Field(description="the busiest rank's I/O time from A to B")
    io_matters_after: bool | None = Field(default=None, description="run B's io_matters; null: not scored")


class PairSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    description: str = Field(min_length=1, description="why the labels are true by construction")
    before: str = Field(min_length=1, description="scenario spec of run A, relative to evals/ (or absolute)")
    after: str = Field(min_length=1, description="scenario spec of run B, relative to evals/ (or absolute)")
    expect: PairExpect


@dataclass(frozen=True)
class Pair:
    path: Path
    spec: PairSpec
    before: CorpusEntry
    after: CorpusEntry


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _resolve(ref: str, root: Path, pair_path: Path, which: str) -> Path:
    p = Path(ref)
    path = p if p.is_absolute() else root / p
    if not path.is_file():
        raise CorpusError(f"{pair_path}: {which}: no such scenario file {path}")
    return path


def load_pair(path: Path, root: Path, known_codes: set[str], fingerprint: str | None = None) -> Pair:
    """One pair file, validated, with both scenarios loaded (``root``: what relative scenario paths start from)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: cannot read pair file ({exc})") from None
    except yaml.YAMLError as exc:
        raise CorpusError(f"{path}: invalid YAML ({_one_line(str(exc))})") from None
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: a pair must be a YAML mapping")
    try:
        spec = PairSpec.model_validate(data)
    except ValidationError as exc:
        msg = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'pair'}: {e['msg']}" for e in exc.errors())
        raise CorpusError(f"{path}: {_one_line(msg)}") from None
    x = spec.expect
    unknown = sorted((set(x.resolved) | set(x.new)) - known_codes)
    if unknown:
        raise CorpusError(f"{path}: unknown finding codes {unknown}")
    both = sorted(set(x.resolved) & set(x.new))
    if both:
        raise CorpusError(f"{path}: codes {both} are labelled both resolved and new")
    fp = fingerprint or builder_fingerprint()
    before = load_entry(_resolve(spec.before, root, path, "before"), fp)
    after = load_entry(_resolve(spec.after, root, path, "after"), fp)
    return Pair(path=path, spec=spec, before=before, after=after)


def load_pairs(directory: Path, root: Path | None = None) -> list[Pair]:
    """Every ``*.yaml`` / ``*.yml`` pair file of ``directory`` (not its sub-folders), validated."""
    if not directory.exists():
        raise CorpusError(f"{directory}: no such pairs directory")
    if not directory.is_dir():
        raise CorpusError(f"{directory}: not a directory")
    paths = sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])
    if not paths:
        raise CorpusError(f"{directory}: no pair files (*.yaml)")
    base = root or directory.resolve().parent
    known = set(engine_titles())
    fp = builder_fingerprint()
    pairs = [load_pair(p, base, known, fp) for p in paths]
    names: dict[str, Path] = {}
    for pair in pairs:
        if pair.spec.name in names:
            raise CorpusError(f"{pair.path}: pair name {pair.spec.name!r} is also used by {names[pair.spec.name]}")
        names[pair.spec.name] = pair.path
    return pairs


# --- result model ---------------------------------------------------------------------------------


class CodeLabels(BaseModel):
    """One list of the comparison (resolved or new) against its label."""

    expected: list[str] = Field(default_factory=list)
    got: list[str] = Field(default_factory=list, description="every code the comparison put in this list")
    missed: list[str] = Field(default_factory=list, description="labelled, not in the list (FN)")
    false_alarms: list[str] = Field(default_factory=list, description="in the list, labelled otherwise or above info")
    unlabeled: list[str] = Field(default_factory=list, description="in the list at info level, not labelled")

    @property
    def tp(self) -> int:
        return len(self.expected) - len(self.missed)


class PairResult(BaseModel):
    name: str
    path: str
    description: str
    resolved: CodeLabels = Field(default_factory=CodeLabels)
    new: CodeLabels = Field(default_factory=CodeLabels)
    io_time_expected: Direction
    io_time_got: Direction | None = None
    io_time_a: float | None = None
    io_time_b: float | None = None
    io_matters_expected: bool | None = None
    io_matters_got: bool | None = None
    unchanged_top_expected: bool | None = None
    top_a: str | None = None
    top_b: str | None = None
    verdict: str = ""
    error: str | None = None
    seconds: float = 0.0

    @property
    def io_time_ok(self) -> bool:
        return self.io_time_got == self.io_time_expected

    @property
    def io_matters_ok(self) -> bool | None:
        if self.io_matters_expected is None:
            return None
        return self.io_matters_got == self.io_matters_expected

    @property
    def top_ok(self) -> bool | None:
        if self.unchanged_top_expected is None:
            return None
        return (self.top_a == self.top_b) == self.unchanged_top_expected

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and not (self.resolved.missed or self.resolved.false_alarms)
            and not (self.new.missed or self.new.false_alarms)
            and self.io_time_ok
            and self.io_matters_ok is not False
            and self.top_ok is not False
        )


class CompareEval(BaseModel):
    pairs_dir: str
    pairs: list[PairResult]
    right: int = Field(description="pairs whose every label is met")
    accuracy: float | None = Field(description="right / pairs")
    tp: int
    fp: int
    fn: int
    precision: float | None = Field(description="over the resolved and new codes of every pair (micro)")
    recall: float | None
    io_time_accuracy: float | None
    io_matters_accuracy: float | None
    io_matters_labelled: int
    top_accuracy: float | None
    top_labelled: int
    errors: int = 0
    seconds: float = 0.0

    @property
    def perfect(self) -> bool:
        return self.errors == 0 and bool(self.pairs) and self.right == len(self.pairs)


# --- running ------------------------------------------------------------------------------------


def direction(a: float | None, b: float | None) -> Direction | None:
    """fell / rose / same for the busiest rank's I/O time (``None`` when either run has none)."""
    from iodiag.comparison.compare import CHANGE_SHARE

    if a is None or b is None:
        return None
    if abs(b - a) <= CHANGE_SHARE * max(abs(a), abs(b)):
        return "same"
    return "fell" if b < a else "rose"


def _analyzed(entry: CorpusEntry, cache_dir: Path) -> tuple[Report, RunFacts]:
    """The scenario's report and run facts, read as ``iodiag compare`` reads a log."""
    from iodiag.analysis import analyze
    from iodiag.comparison import run_facts
    from iodiag.ingest import load_profile
    from iodiag.synth.program import ProgramError
    from iodiag.synth.scenario import ScenarioError

    try:
        log = build_entry(entry, cache_dir)
    except ScenarioError as exc:
        raise CorpusError(str(exc)) from None
    except ProgramError as exc:
        raise CorpusError(f"{entry.path}: {_one_line(str(exc))}") from None
    include = ("HEATMAP", "DXT") if entry.scenario.dxt else ("HEATMAP",)
    profile = load_profile(str(log), include=include)
    return analyze(profile), run_facts(profile)


def _labels(expected: list[str], other: list[str], items: list[FindingChange], side: Literal["a", "b"]) -> CodeLabels:
    from iodiag.analysis.models import Severity

    got = [x.code for x in items]
    loud = set()
    for x in items:
        s = x.a if side == "a" else x.b
        if s is not None and s.severity in (Severity.CRITICAL, Severity.WARNING):
            loud.add(x.code)
    exp = sorted(set(expected))
    extra = [c for c in got if c not in exp]
    return CodeLabels(
        expected=exp,
        got=got,
        missed=[c for c in exp if c not in got],
        false_alarms=[c for c in extra if c in other or c in loud],
        unlabeled=[c for c in extra if c not in other and c not in loud],
    )


def judge(pair: Pair, comparison: Comparison) -> PairResult:
    """Score one comparison against its pair's labels."""
    x = pair.spec.expect
    res = PairResult(
        name=pair.spec.name,
        path=str(pair.path),
        description=_one_line(pair.spec.description),
        io_time_expected=x.io_time,
        io_matters_expected=x.io_matters_after,
        unchanged_top_expected=x.unchanged_top,
    )
    res.resolved = _labels(x.resolved, x.new, comparison.findings_resolved, "a")
    res.new = _labels(x.new, x.resolved, comparison.findings_new, "b")
    res.io_time_a, res.io_time_b = comparison.a.io_time_s, comparison.b.io_time_s
    res.io_time_got = direction(res.io_time_a, res.io_time_b)
    res.io_matters_got = comparison.b.io_matters
    res.top_a = comparison.a.causes[0].code if comparison.a.causes else None
    res.top_b = comparison.b.causes[0].code if comparison.b.causes else None
    res.verdict = comparison.verdict
    return res


def evaluate_pair(pair: Pair, cache_dir: Path) -> PairResult:
    from iodiag.comparison import NotComparable, compare

    t0 = time.perf_counter()
    try:
        (ra, fa), (rb, fb) = _analyzed(pair.before, cache_dir), _analyzed(pair.after, cache_dir)
    except CorpusError:
        raise
    except Exception as exc:
        x = pair.spec.expect
        res = PairResult(
            name=pair.spec.name,
            path=str(pair.path),
            description=_one_line(pair.spec.description),
            resolved=CodeLabels(expected=sorted(set(x.resolved)), missed=sorted(set(x.resolved))),
            new=CodeLabels(expected=sorted(set(x.new)), missed=sorted(set(x.new))),
            io_time_expected=x.io_time,
            io_matters_expected=x.io_matters_after,
            unchanged_top_expected=x.unchanged_top,
            error=f"building or analyzing a log failed: {type(exc).__name__}: {_one_line(str(exc))}",
        )
        res.seconds = time.perf_counter() - t0
        return res
    try:
        comparison = compare(ra, rb, facts_a=fa, facts_b=fb)
    except NotComparable as exc:
        raise CorpusError(f"{pair.path}: {_one_line(str(exc))}") from None
    res = judge(pair, comparison)
    res.seconds = time.perf_counter() - t0
    return res


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def score(results: list[PairResult], pairs_dir: str = "") -> CompareEval:
    lists = [lab for r in results for lab in (r.resolved, r.new)]
    tp = sum(lab.tp for lab in lists)
    fn = sum(len(lab.missed) for lab in lists)
    fp = sum(len(lab.false_alarms) for lab in lists)
    ran = [r for r in results if r.error is None]
    matters = [r.io_matters_ok for r in results if r.io_matters_ok is not None]
    top = [r.top_ok for r in results if r.top_ok is not None]
    right = sum(r.ok for r in results)
    return CompareEval(
        pairs_dir=pairs_dir,
        pairs=results,
        right=right,
        accuracy=_ratio(right, len(results)),
        tp=tp,
        fp=fp,
        fn=fn,
        precision=_ratio(tp, tp + fp),
        recall=_ratio(tp, tp + fn),
        io_time_accuracy=_ratio(sum(r.io_time_ok for r in results), len(results)),
        io_matters_accuracy=_ratio(sum(matters), len(matters)),
        io_matters_labelled=len(matters),
        top_accuracy=_ratio(sum(top), len(top)),
        top_labelled=len(top),
        errors=len(results) - len(ran),
    )


def run_compare_eval(
    pairs_dir: Path | None = None,
    cache_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    root: Path | None = None,
) -> CompareEval:
    """Build, analyze, compare and score every pair. Raises ``CorpusError`` on bad input."""
    directory = pairs_dir or DEFAULT_PAIRS
    pairs = load_pairs(directory, root)
    cache = cache_dir or default_cache_dir()
    t0 = time.perf_counter()
    results = []
    for p in pairs:
        if progress is not None:
            progress(p.spec.name)
        results.append(evaluate_pair(p, cache))
    out = score(results, str(directory))
    out.seconds = time.perf_counter() - t0
    return out


# --- printing -----------------------------------------------------------------------------------


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _codes(lab: CodeLabels) -> str:
    text = f"{lab.tp}/{len(lab.expected)}" if lab.expected else "none"
    return f"{text} +{len(lab.false_alarms)} FP" if lab.false_alarms else text


def _mark(ok: bool | None) -> str:
    return "" if ok is None else (" ✓" if ok else " ✗")


def _problems(r: PairResult) -> list[str]:
    out: list[str] = []
    if r.error:
        return [f"error: {r.error}"]
    for kind, lab in (("resolved", r.resolved), ("new", r.new)):
        if lab.missed:
            out.append(f"not {kind}: {', '.join(lab.missed)}")
        if lab.false_alarms:
            out.append(f"{kind} but not labelled so: {', '.join(lab.false_alarms)}")
    if not r.io_time_ok:
        got = r.io_time_got or "unknown"
        out.append(f"I/O time {got} ({r.io_time_a} s -> {r.io_time_b} s), expected {r.io_time_expected}")
    if r.io_matters_ok is False:
        out.append(f"io_matters after {r.io_matters_got}, expected {r.io_matters_expected}")
    if r.top_ok is False:
        same = "the same" if r.unchanged_top_expected else "a different"
        out.append(f"top cause {r.top_a or 'none'} -> {r.top_b or 'none'}, expected {same} top cause")
    return out


def print_compare_eval(result: CompareEval, console: Console) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title=f"Compare eval: {len(result.pairs)} before/after pairs from {result.pairs_dir}",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    for col, just in (
        ("Pair", "left"),
        ("Resolved", "right"),
        ("New", "right"),
        ("I/O time", "left"),
        ("io_matters after", "left"),
        ("Same top", "left"),
        ("OK", "left"),
    ):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in result.pairs:
        matters = "—" if r.io_matters_expected is None else f"{str(r.io_matters_got).lower()}{_mark(r.io_matters_ok)}"
        top = "—" if r.unchanged_top_expected is None else f"{str(r.top_a == r.top_b).lower()}{_mark(r.top_ok)}"
        table.add_row(
            r.name,
            _codes(r.resolved),
            _codes(r.new),
            f"{r.io_time_got or 'unknown'}{_mark(r.io_time_ok)}",
            matters,
            top,
            "error" if r.error else ("yes" if r.ok else "no"),
            style=None if r.ok else "red",
        )
    console.print(table)
    verdict = "PASS" if result.perfect else "FAIL"
    console.print(
        Text.assemble(
            (f"{verdict} ", "bold green" if result.perfect else "bold red"),
            f"{result.right}/{len(result.pairs)} pairs right (accuracy {_fmt(result.accuracy)}); codes precision "
            f"{_fmt(result.precision)}, recall {_fmt(result.recall)} [TP {result.tp}, FP {result.fp}, FN {result.fn}]; "
            f"I/O time {_fmt(result.io_time_accuracy)}, io_matters after {_fmt(result.io_matters_accuracy)} "
            f"({result.io_matters_labelled}), same top cause {_fmt(result.top_accuracy)} ({result.top_labelled}) "
            f"[{result.seconds:.1f} s]",
        )
    )
    wrong = [(r, _problems(r)) for r in result.pairs if not r.ok]
    if wrong:
        console.print(Text(f"\nPairs not right: {len(wrong)}", style="bold"))
        for r, problems in wrong:
            console.print(Text.assemble((f"  {r.name}: ", "bold"), "; ".join(problems)), soft_wrap=True)


def to_json(result: CompareEval) -> str:
    return result.model_dump_json(indent=2) + "\n"
