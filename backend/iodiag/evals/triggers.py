"""Trigger eval: does every finding fire exactly where the scenario corpus says it must?

Each scenario (``evals/scenarios/*.yaml``, format in ``docs/scenario-spec.md``) describes an I/O
program; ``iodiag.synth.build.build_log`` derives the Darshan log that program leaves, and the
scenario's ``expect`` block says which findings its program makes true (``findings``) and which it
makes false although it comes close (``absent``). The eval builds every log (cached by spec hash),
runs the engine on it and scores each finding code:

* TP: an expected code the engine reported; FN (miss): an expected code it did not report;
* FP (false alarm): a code labeled ``absent`` that the engine reported.

Codes a scenario labels neither way are not scored (they are listed as ``unlabeled``).

Besides the spec keys, a corpus file may carry ``log_faults`` (eval only, stripped before the spec
is validated): what happened to the log after the program ran, for the data-quality findings that
no program can cause. ``partial: [MODULE, ...]`` flags modules partial (Darshan ran out of record
memory), ``damage: KIND`` breaks the written file as ``iodiag.synth.broken`` does (e.g.
``corrupt-stream``), ``records: none`` drops every record (instrumentation recorded nothing).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

if TYPE_CHECKING:
    from rich.console import Console

    from iodiag.analysis.models import JobFacts
    from iodiag.synth.scenario import Scenario

FAULT_KEY = "log_faults"
DEFAULT_SCENARIOS = Path(__file__).resolve().parents[3] / "evals" / "scenarios"
"""The corpus in a source checkout (the package is installed editable from ``backend/``)."""


class CorpusError(ValueError):
    """The corpus cannot be evaluated as given (missing, invalid scenario, bad label); one line."""


class LogFaults(BaseModel):
    """What happened to the log after the program ran (eval-only ``log_faults`` key)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    partial: list[str] = Field(default_factory=list, description="modules Darshan flagged partial")
    damage: str | None = Field(default=None, description="a breakage of iodiag.synth.broken.BYTE_BREAKAGES")
    records: Literal["all", "none"] = Field(default="all", description="'none': the log holds no records")
    stray_records: int = Field(
        default=0,
        ge=0,
        le=100_000,
        description="records added to the POSIX module with ids missing from the name table and ranks outside "
        "the job (a damaged module region decodes into such records)",
    )

    @field_validator("damage")
    @classmethod
    def _known_damage(cls, v: str | None) -> str | None:
        from iodiag.synth.broken import BYTE_BREAKAGES

        if v is not None and v not in BYTE_BREAKAGES:
            raise ValueError(f"unknown damage {v!r}; known: {', '.join(sorted(BYTE_BREAKAGES))}")
        return v

    @field_validator("partial")
    @classmethod
    def _known_modules(cls, v: list[str]) -> list[str]:
        from iodiag.synth.writer import MODULE_ORDER

        bad = [m for m in v if m not in MODULE_ORDER]
        if bad:
            raise ValueError(f"unknown modules {bad}; known: {', '.join(MODULE_ORDER)}")
        return v

    @property
    def active(self) -> bool:
        return bool(self.partial or self.damage or self.records == "none" or self.stray_records)


@dataclass(frozen=True)
class CorpusEntry:
    path: Path
    scenario: Scenario
    faults: LogFaults
    key: str
    """Hash of everything that shapes the log: the spec (less its labels), the faults, the builder."""


# --- result model ---------------------------------------------------------------------------------


class ScenarioResult(BaseModel):
    name: str
    path: str
    description: str
    expected: list[str]
    absent: list[str]
    fired: list[str] = Field(default_factory=list)
    missed: list[str] = Field(default_factory=list, description="expected, not reported (FN)")
    false_alarms: list[str] = Field(default_factory=list, description="labeled absent, reported (FP)")
    unlabeled: list[str] = Field(default_factory=list, description="reported, labeled neither way")
    messages: dict[str, str] = Field(default_factory=dict, description="the engine's message per fired code")
    problems: list[str] = Field(default_factory=list, description="the report's reading/check problems")
    error: str | None = None
    log: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and not self.missed and not self.false_alarms


class CodeScore(BaseModel):
    code: str
    title: str
    positives: int = Field(description="scenarios that expect this code")
    negatives: int = Field(description="scenarios that label this code absent")
    tp: int = 0
    fp: int = 0
    fn: int = 0
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None


class TriggerEval(BaseModel):
    scenarios_dir: str
    scenarios: list[ScenarioResult]
    codes: list[CodeScore]
    tp: int
    fp: int
    fn: int
    precision: float | None
    recall: float | None
    f1: float
    """Micro-averaged over every labeled (scenario, code) pair; a scenario that failed to run misses all it expects."""
    uncovered: dict[str, list[str]] = Field(
        default_factory=dict,
        description="engine codes without a positive ('positive') or a negative ('negative') scenario",
    )
    errors: int = 0
    seconds: float = 0.0

    @property
    def perfect(self) -> bool:
        return self.f1 == 1.0 and self.errors == 0


# --- corpus ---------------------------------------------------------------------------------------


def builder_fingerprint() -> str:
    """Changes whenever the code that turns a scenario into a log changes (invalidates the cache)."""
    import darshan

    import iodiag.synth as synth

    h = hashlib.sha256(f"darshan={getattr(darshan, '__version__', '?')}".encode())
    root = Path(synth.__file__).parent
    for p in sorted(root.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def load_entry(path: Path, fingerprint: str | None = None) -> CorpusEntry:
    from iodiag.synth.scenario import ScenarioError, parse_scenario

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: cannot read scenario file ({exc})") from None
    except yaml.YAMLError as exc:
        raise CorpusError(f"{path}: invalid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: a scenario must be a YAML mapping")
    raw_faults = data.pop(FAULT_KEY, None) or {}
    try:
        faults = LogFaults.model_validate(raw_faults)
    except ValidationError as exc:
        msg = "; ".join(f"{'.'.join(map(str, e['loc'])) or FAULT_KEY}: {e['msg']}" for e in exc.errors())
        raise CorpusError(f"{path}: invalid {FAULT_KEY}: {' '.join(msg.split())}") from None
    try:
        scenario = parse_scenario(data, str(path))
    except ScenarioError as exc:
        raise CorpusError(str(exc)) from None
    spec = scenario.model_dump(mode="json", exclude={"expect", "description"})
    blob = json.dumps({"spec": spec, "faults": faults.model_dump(mode="json")}, sort_keys=True)
    key = hashlib.sha256((blob + (fingerprint or builder_fingerprint())).encode()).hexdigest()
    return CorpusEntry(path=path, scenario=scenario, faults=faults, key=key)


def load_corpus(directory: Path, known_codes: Iterable[str] | None = None) -> list[CorpusEntry]:
    """Every ``*.yaml`` / ``*.yml`` scenario of ``directory``, validated, with labels checked."""
    if not directory.exists():
        raise CorpusError(f"{directory}: no such scenarios directory")
    if not directory.is_dir():
        raise CorpusError(f"{directory}: not a directory")
    paths = sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])
    if not paths:
        raise CorpusError(f"{directory}: no scenario files (*.yaml)")
    fp = builder_fingerprint()
    entries = [load_entry(p, fp) for p in paths]
    known = set(known_codes) if known_codes is not None else None
    names: dict[str, Path] = {}
    for e in entries:
        s = e.scenario
        if s.name in names:
            raise CorpusError(f"{e.path}: scenario name {s.name!r} is also used by {names[s.name]}")
        names[s.name] = e.path
        both = sorted(set(s.expect.findings) & set(s.expect.absent))
        if both:
            raise CorpusError(f"{e.path}: codes {both} are both expected and absent")
        ranking = s.expect.top_cause is not None or s.expect.io_matters is not None or s.expect.no_warnings
        if not s.expect.findings and not s.expect.absent and not ranking:
            raise CorpusError(f"{e.path}: the scenario labels nothing (expect.findings and expect.absent are empty)")
        if known is not None:
            unknown = sorted((set(s.expect.findings) | set(s.expect.absent)) - known)
            if unknown:
                raise CorpusError(f"{e.path}: unknown finding codes {unknown}")
    return entries


def default_cache_dir() -> Path:
    env = os.environ.get("IODIAG_CACHE_DIR")
    if env:
        return Path(env) / "scenarios"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "iodiag" / "scenarios"


def facts_for(scenario: Scenario) -> JobFacts:
    """What a user would tell ``iodiag analyze`` about this job: its nodes and its cb_nodes hint."""
    from iodiag.analysis.models import JobFacts

    return JobFacts(nodes=scenario.job.nodes if scenario.job.nodes_known else None, cb_nodes=scenario.hints.cb_nodes)


def build_entry(entry: CorpusEntry, cache_dir: Path) -> Path:
    """The scenario's log, built once per key into ``cache_dir`` (atomically, so runs may overlap)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    out = cache_dir / f"{entry.scenario.name}-{entry.key[:16]}.darshan"
    if out.is_file():
        return out
    fd, tmp_name = tempfile.mkstemp(prefix=f".{entry.scenario.name}-", suffix=".darshan", dir=cache_dir)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        _write(entry, tmp)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def _write(entry: CorpusEntry, out: Path) -> None:
    from iodiag.synth.build import build_log

    f = entry.faults
    if not f.active:
        build_log(entry.scenario, out)
        return
    if f.partial or f.records == "none" or f.stray_records:
        from iodiag.synth.derive import derive_tables
        from iodiag.synth.program import simulate
        from iodiag.synth.writer import write_log

        job, names, tables = derive_tables(entry.scenario, simulate(entry.scenario))
        if f.records == "none":
            names, tables = {}, {}
        if f.stray_records and "POSIX" in tables:
            tables = {**tables, "POSIX": _with_strays(tables["POSIX"], f.stray_records, job.nprocs)}
        write_log(out, job, names, tables, partial=[m for m in f.partial if m in tables])
    else:
        build_log(entry.scenario, out)
    if f.damage:
        from iodiag.synth.broken import BYTE_BREAKAGES

        out.write_bytes(BYTE_BREAKAGES[f.damage](out.read_bytes()))


def _with_strays(frame: Any, n: int, nprocs: int) -> Any:
    """``frame`` plus ``n`` copies of its first record under ids no name has and ranks past the job's."""
    import numpy as np
    import pandas as pd

    strays = frame.iloc[[0] * n].copy()
    strays["id"] = np.arange(n, dtype=np.uint64) + np.uint64(1 << 62)
    strays["rank"] = np.arange(n, dtype=np.int64) + nprocs
    return pd.concat([frame, strays], ignore_index=True)


# --- running ------------------------------------------------------------------------------------


def evaluate_entry(entry: CorpusEntry, cache_dir: Path) -> ScenarioResult:
    from iodiag.analysis import analyze
    from iodiag.ingest import load_profile
    from iodiag.synth.program import ProgramError
    from iodiag.synth.scenario import ScenarioError

    s = entry.scenario
    res = ScenarioResult(
        name=s.name,
        path=str(entry.path),
        description=" ".join(s.description.split()),
        expected=sorted(set(s.expect.findings)),
        absent=sorted(set(s.expect.absent)),
    )
    t0 = time.perf_counter()
    try:
        log = build_entry(entry, cache_dir)
    except ScenarioError as exc:
        raise CorpusError(str(exc)) from None
    except ProgramError as exc:
        # The spec validates but cannot run (e.g. job.runtime shorter than the program): bad input.
        raise CorpusError(f"{entry.path}: {' '.join(str(exc).split())}") from None
    except Exception as exc:
        res.error = f"building the log failed: {type(exc).__name__}: {' '.join(str(exc).split())}"
        res.missed = list(res.expected)
        res.seconds = time.perf_counter() - t0
        return res
    res.log = str(log)
    try:
        include = ("HEATMAP", "DXT") if s.dxt else ("HEATMAP",)
        report = analyze(load_profile(str(log), include=include), facts=facts_for(s))
    except Exception as exc:
        res.error = f"analysis failed: {type(exc).__name__}: {' '.join(str(exc).split())}"
        res.missed = list(res.expected)
        res.seconds = time.perf_counter() - t0
        return res
    fired = sorted({f.code for f in report.findings})
    res.fired = fired
    for f in report.findings:
        res.messages.setdefault(f.code, f.message)
    res.problems = list(report.problems)
    res.missed = [c for c in res.expected if c not in fired]
    res.false_alarms = [c for c in res.absent if c in fired]
    res.unlabeled = [c for c in fired if c not in res.expected and c not in res.absent]
    res.seconds = time.perf_counter() - t0
    return res


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def score(results: list[ScenarioResult], titles: dict[str, str], scenarios_dir: str = "") -> TriggerEval:
    """Per-code and micro-averaged precision, recall and F1 over the scenario results."""
    codes = sorted(set(titles) | {c for r in results for c in (*r.expected, *r.absent)})
    rows = []
    for code in codes:
        tp = sum(code in r.expected and code not in r.missed for r in results)
        fn = sum(code in r.missed for r in results)
        fp = sum(code in r.false_alarms for r in results)
        rows.append(
            CodeScore(
                code=code,
                title=titles.get(code, "(not an engine code)"),
                positives=sum(code in r.expected for r in results),
                negatives=sum(code in r.absent for r in results),
                tp=tp,
                fp=fp,
                fn=fn,
                precision=_ratio(tp, tp + fp),
                recall=_ratio(tp, tp + fn),
                f1=_ratio(2 * tp, 2 * tp + fp + fn),
            )
        )
    tp = sum(r.tp for r in rows)
    fp = sum(r.fp for r in rows)
    fn = sum(r.fn for r in rows)
    errors = sum(r.error is not None for r in results)
    f1 = _ratio(2 * tp, 2 * tp + fp + fn)
    uncovered = {
        "positive": [r.code for r in rows if r.code in titles and r.positives == 0],
        "negative": [r.code for r in rows if r.code in titles and r.negatives == 0],
    }
    return TriggerEval(
        scenarios_dir=scenarios_dir,
        scenarios=results,
        codes=rows,
        tp=tp,
        fp=fp,
        fn=fn,
        precision=_ratio(tp, tp + fp),
        recall=_ratio(tp, tp + fn),
        f1=1.0 if f1 is None else f1,
        uncovered={k: v for k, v in uncovered.items() if v},
        errors=errors,
    )


def engine_titles() -> dict[str, str]:
    from iodiag.analysis import engine  # noqa: F401  (registers the checks)
    from iodiag.analysis.registry import CHECKS

    return {code: spec.title for code, spec in sorted(CHECKS.items())}


def run_triggers(
    scenarios_dir: Path | None = None,
    cache_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> TriggerEval:
    """Build, analyze and score the whole corpus. Raises ``CorpusError`` on bad input."""
    directory = scenarios_dir or DEFAULT_SCENARIOS
    titles = engine_titles()
    entries = load_corpus(directory, titles)
    cache = cache_dir or default_cache_dir()
    t0 = time.perf_counter()
    results = []
    for e in entries:
        if progress is not None:
            progress(e.scenario.name)
        results.append(evaluate_entry(e, cache))
    out = score(results, titles, str(directory))
    out.seconds = time.perf_counter() - t0
    return out


# --- printing -----------------------------------------------------------------------------------


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def print_triggers(result: TriggerEval, console: Console) -> None:
    from rich.text import Text

    from iodiag.evals.tables import results_table

    table = results_table(
        f"Trigger eval: {len(result.scenarios)} scenarios from {result.scenarios_dir}",
        ("Code", "Finding", "+scn", "-scn", "TP", "FP", "FN", "Prec", "Recall", "F1"),
        labels=2,
        simple=True,
    )
    for c in result.codes:
        bad = c.fp or c.fn
        style = "red" if bad else ("yellow" if not c.positives or not c.negatives else "")
        table.add_row(
            c.code,
            c.title,
            str(c.positives),
            str(c.negatives),
            str(c.tp),
            str(c.fp),
            str(c.fn),
            _fmt(c.precision),
            _fmt(c.recall),
            _fmt(c.f1),
            style=style or None,
        )
    console.print(table)
    verdict = "PASS" if result.perfect else "FAIL"
    console.print(
        Text.assemble(
            (f"{verdict} ", "bold green" if result.perfect else "bold red"),
            f"overall (micro) precision {_fmt(result.precision)}, recall {_fmt(result.recall)}, "
            f"F1 {result.f1:.3f}  [TP {result.tp}, FP {result.fp}, FN {result.fn}; "
            f"{len(result.scenarios)} scenarios in {result.seconds:.1f} s]",
        )
    )
    misses = [(r.name, c) for r in result.scenarios if r.error is None for c in r.missed]
    alarms = [(r, c) for r in result.scenarios for c in r.false_alarms]
    errors = [r for r in result.scenarios if r.error is not None]
    if misses:
        console.print(Text(f"\nMisses (expected, not reported): {len(misses)}", style="bold"))
        for name, code in misses:
            console.print(Text(f"  {code}  {name}"), soft_wrap=True)
    if alarms:
        console.print(Text(f"\nFalse alarms (labeled absent, reported): {len(alarms)}", style="bold"))
        for r, code in alarms:
            console.print(Text(f"  {code}  {r.name}: {r.messages.get(code, '')}"), soft_wrap=True)
    if errors:
        console.print(Text(f"\nScenarios that did not run: {len(errors)}", style="bold red"))
        for r in errors:
            console.print(Text(f"  {r.name}: {r.error}"), soft_wrap=True)
    problems = [(r.name, p) for r in result.scenarios for p in r.problems if p.startswith("check ")]
    if problems:
        console.print(Text(f"\nChecks that crashed: {len(problems)}", style="bold red"))
        for name, p in problems:
            console.print(Text(f"  {name}: {p}"), soft_wrap=True)
    for kind, codes in result.uncovered.items():
        console.print(Text(f"\nCodes without a {kind} scenario: {', '.join(codes)}", style="yellow"))


def to_json(result: TriggerEval) -> str:
    return result.model_dump_json(indent=2) + "\n"
