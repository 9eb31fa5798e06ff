"""Ranking eval: does the verdict name the right cause first, say rightly whether I/O matters, and stay quiet?

Two label sets, scored the same way:

* the scenario corpus (``evals/scenarios/*.yaml``): scenarios whose ``expect`` block carries ranking labels
  (``io_matters``, ``top_cause``, ``top_cause_any``, ``quiet``, ``no_warnings``), true by construction;
* expert labels for real logs (``evals/real/labels.yaml``): the same labels, reasoned from each log's counters.

Scores, per set:

* **top-1 cause accuracy**: the verdict's first cause is the labelled one (or one of ``top_cause_any``), or
  a finding of the same family (``CheckSpec.family``: findings that describe the same lost time, such as
  P19 and J04 for rank imbalance, which the verdict names once); ``top_cause: none`` expects no cause;
* **io_matters accuracy**: the verdict's ``io_matters`` equals the label;
* **precision of critical + warning**: of the findings shown above info (summaries J01/J02 and data-quality D
  codes aside), the share that are not false alarms. A false alarm is a code labelled ``quiet``, any finding
  above info where the label says ``no_warnings`` or ``io_matters: false``, or a scenario's ``absent`` code.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from iodiag.evals.triggers import DEFAULT_SCENARIOS, CorpusError, build_entry, default_cache_dir, facts_for, load_corpus

DEFAULT_REAL_LABELS = DEFAULT_SCENARIOS.parent / "real" / "labels.yaml"
DEFAULT_SHARED_LOGS = DEFAULT_SCENARIOS.parents[2] / "shared" / "logs"
NOT_SCORED = ("J01", "J02", "D01", "D02", "D03", "D04")


class RealLabel(BaseModel):
    model_config = ConfigDict(extra="forbid")

    log: str = Field(description="path under the shared logs, or wheel:PATH inside the darshan package")
    io_matters: bool | None = None
    top_cause: str | None = None
    top_cause_any: list[str] = Field(default_factory=list)
    quiet: list[str] = Field(default_factory=list)
    no_warnings: bool = False
    why: str = ""


class CaseResult(BaseModel):
    name: str
    io_matters_expected: bool | None = None
    io_matters_got: bool | None = None
    top_expected: list[str] = Field(default_factory=list, description="acceptable first causes; ['none']: no cause")
    top_got: str | None = None
    families: list[str] = Field(default_factory=list, description="families of the acceptable first causes")
    shown: list[str] = Field(default_factory=list, description="codes above info (scored ones)")
    false_alarms: list[str] = Field(default_factory=list)
    error: str | None = None

    @property
    def top_ok(self) -> bool | None:
        if not self.top_expected:
            return None
        got = self.top_got or "none"
        if got in self.top_expected:
            return True
        from iodiag.analysis.registry import CHECKS

        spec = CHECKS.get(got)
        return spec is not None and spec.family in self.families

    @property
    def matters_ok(self) -> bool | None:
        if self.io_matters_expected is None:
            return None
        return self.io_matters_got == self.io_matters_expected


class SetScore(BaseModel):
    name: str
    cases: int
    top1_accuracy: float | None
    top1_labelled: int
    io_matters_accuracy: float | None
    io_matters_labelled: int
    precision: float | None = Field(description="share of critical+warning findings that are not false alarms")
    shown: int
    false_alarms: int
    errors: int
    results: list[CaseResult]

    @property
    def perfect(self) -> bool:
        return (
            self.errors == 0
            and self.top1_accuracy in (None, 1.0)
            and self.io_matters_accuracy in (None, 1.0)
            and self.precision in (None, 1.0)
        )


class RankingEval(BaseModel):
    sets: list[SetScore]


def _score(name: str, results: list[CaseResult]) -> SetScore:
    top = [r.top_ok for r in results if r.top_ok is not None]
    matters = [r.matters_ok for r in results if r.matters_ok is not None]
    shown = sum(len(r.shown) for r in results)
    alarms = sum(len(r.false_alarms) for r in results)
    return SetScore(
        name=name,
        cases=len(results),
        top1_accuracy=sum(top) / len(top) if top else None,
        top1_labelled=len(top),
        io_matters_accuracy=sum(matters) / len(matters) if matters else None,
        io_matters_labelled=len(matters),
        precision=(shown - alarms) / shown if shown else None,
        shown=shown,
        false_alarms=alarms,
        errors=sum(r.error is not None for r in results),
        results=results,
    )


def judge(
    name: str,
    report: object,
    *,
    io_matters: bool | None,
    top_cause: str | None,
    top_cause_any: list[str],
    quiet: list[str],
    no_warnings: bool,
    absent: list[str] = (),  # type: ignore[assignment]
) -> CaseResult:
    from iodiag.analysis.models import Report, Severity

    assert isinstance(report, Report)
    v = report.verdict
    shown = sorted(
        {
            f.code
            for f in report.findings
            if f.severity in (Severity.CRITICAL, Severity.WARNING) and f.code not in NOT_SCORED
        }
    )
    loud = no_warnings or io_matters is False
    alarms = [c for c in shown if loud or c in quiet or c in absent]
    expected = [] if top_cause is None else [top_cause, *top_cause_any]
    from iodiag.analysis.registry import CHECKS

    families = sorted({CHECKS[c].family for c in expected if c in CHECKS})
    return CaseResult(
        families=families,
        name=name,
        io_matters_expected=io_matters,
        io_matters_got=v.io_matters,
        top_expected=expected,
        top_got=v.causes[0].code if v.causes else None,
        shown=shown,
        false_alarms=alarms,
    )


def scenario_results(
    directory: Path | None, cache_dir: Path | None, progress: Callable[[str], None] | None = None
) -> list[CaseResult]:
    from iodiag.analysis import analyze
    from iodiag.ingest import load_profile

    entries = load_corpus(directory or DEFAULT_SCENARIOS)
    cache = cache_dir or default_cache_dir()
    out: list[CaseResult] = []
    for e in entries:
        x = e.scenario.expect
        if x.top_cause is None and x.io_matters is None and not x.no_warnings and not x.quiet:
            continue
        if progress:
            progress(e.scenario.name)
        try:
            log = build_entry(e, cache)
            include = ("HEATMAP", "DXT") if e.scenario.dxt else ("HEATMAP",)
            report = analyze(load_profile(str(log), include=include), facts=facts_for(e.scenario))
        except Exception as exc:
            out.append(CaseResult(name=e.scenario.name, error=f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
            continue
        out.append(
            judge(
                e.scenario.name,
                report,
                io_matters=x.io_matters,
                top_cause=x.top_cause,
                top_cause_any=list(x.top_cause_any),
                quiet=list(x.quiet),
                no_warnings=x.no_warnings,
                absent=list(x.absent),
            )
        )
    return out


def load_real_labels(path: Path) -> list[RealLabel]:
    if not path.is_file():
        raise CorpusError(f"{path}: no such labels file")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise CorpusError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(data, list):
        raise CorpusError(f"{path}: the labels must be a YAML list")
    try:
        return [RealLabel.model_validate(item) for item in data]
    except ValidationError as exc:
        err = exc.errors()[0]
        raise CorpusError(f"{path}: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None


def resolve_log(log: str, shared: Path) -> Path:
    if log.startswith("wheel:"):
        import importlib.resources

        return Path(str(importlib.resources.files("darshan"))) / log.removeprefix("wheel:")
    return shared / log


def real_results(
    labels_path: Path | None, shared: Path | None, progress: Callable[[str], None] | None = None
) -> list[CaseResult]:
    from iodiag.analysis import analyze
    from iodiag.ingest import load_profile

    labels = load_real_labels(labels_path or DEFAULT_REAL_LABELS)
    root = shared or DEFAULT_SHARED_LOGS
    out: list[CaseResult] = []
    for lab in labels:
        path = resolve_log(lab.log, root)
        name = lab.log
        if progress:
            progress(Path(name).name)
        if not path.is_file():
            out.append(CaseResult(name=name, error=f"{path}: no such log"))
            continue
        try:
            report = analyze(load_profile(str(path), include=("HEATMAP",)))
        except Exception as exc:
            out.append(CaseResult(name=name, error=f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
            continue
        out.append(
            judge(
                name,
                report,
                io_matters=lab.io_matters,
                top_cause=lab.top_cause,
                top_cause_any=lab.top_cause_any,
                quiet=lab.quiet,
                no_warnings=lab.no_warnings,
            )
        )
    return out


def run_ranking(
    scenarios: Path | None = None,
    cache_dir: Path | None = None,
    labels: Path | None = None,
    shared: Path | None = None,
    progress: Callable[[str], None] | None = None,
    which: tuple[str, ...] = ("scenarios", "real"),
) -> RankingEval:
    sets: list[SetScore] = []
    if "scenarios" in which:
        sets.append(_score("scenarios", scenario_results(scenarios, cache_dir, progress)))
    if "real" in which:
        sets.append(_score("real logs", real_results(labels, shared, progress)))
    return RankingEval(sets=sets)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def ranking_line(results: list[CaseResult], name: str) -> str:
    s = _score(name, results)
    return (
        f"Ranking ({s.name}, {s.cases} labelled): top-1 cause {_fmt(s.top1_accuracy)}, io_matters "
        f"{_fmt(s.io_matters_accuracy)}, precision of critical+warning {_fmt(s.precision)} "
        f"({s.false_alarms} false alarms of {s.shown})"
    )


def print_ranking(result: RankingEval, console: object) -> None:
    from rich.console import Console
    from rich.text import Text

    from iodiag.evals.tables import results_table

    assert isinstance(console, Console)
    table = results_table(
        "Ranking eval", ("set", "cases", "top-1 cause", "io_matters", "precision (crit+warn)", "false alarms", "errors")
    )
    for s in result.sets:
        table.add_row(
            s.name,
            str(s.cases),
            f"{_fmt(s.top1_accuracy)} ({s.top1_labelled})",
            f"{_fmt(s.io_matters_accuracy)} ({s.io_matters_labelled})",
            f"{_fmt(s.precision)} ({s.shown})",
            str(s.false_alarms),
            str(s.errors),
        )
    console.print(table)
    for s in result.sets:
        for r in s.results:
            problems = []
            if r.error:
                problems.append(f"error: {r.error}")
            if r.top_ok is False:
                problems.append(f"top cause {r.top_got or 'none'}, expected {' or '.join(r.top_expected)}")
            if r.matters_ok is False:
                problems.append(f"io_matters {r.io_matters_got}, expected {r.io_matters_expected}")
            if r.false_alarms:
                problems.append(f"above info but should be quiet: {', '.join(r.false_alarms)}")
            if problems:
                console.print(Text.assemble((f"  {s.name}: {r.name}: ", "bold"), "; ".join(problems)))
