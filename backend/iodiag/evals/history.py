"""History eval: does the regression flag fire on the runs that regressed, and only on them?

Each series file (``evals/history/*.yaml``) names one scenario spec and a list of runs of it, one a day. Each run
scales every program step's ``seconds_per_op`` by its ``scale`` (the run time follows, so the computation stays
the same) and carries the label ``regression``: true when, by construction, its I/O time is far above the runs
before it (a shared file system in trouble, an undone fix), false for the day-to-day jitter of a healthy
application. The eval builds every run's log (cached by spec hash), analyzes it, takes its I/O time as the
service does (``iodiag.comparison.run_summary``), flags the series with ``iodiag.comparison.history.flag_series``
and scores each run's flag against its label: precision and recall over all runs; a series is right when every
run's flag matches.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from iodiag.evals.triggers import (
    DEFAULT_SCENARIOS,
    CorpusEntry,
    CorpusError,
    LogFaults,
    build_entry,
    builder_fingerprint,
    default_cache_dir,
)

DEFAULT_SERIES = DEFAULT_SCENARIOS.parent / "history"
DAY = 86_400


class RunLabel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    scale: float = Field(gt=0, description="factor on every step's seconds_per_op")
    regression: bool


class SeriesSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    description: str = Field(min_length=1, description="why the labels are true by construction")
    scenario: str = Field(min_length=1, description="scenario spec, relative to evals/ (or absolute)")
    runs: list[RunLabel] = Field(min_length=2)


class RunResult(BaseModel):
    day: int
    scale: float
    expected: bool
    flagged: bool
    io_time_s: float | None
    explanation: str | None = None


class SeriesResult(BaseModel):
    name: str
    path: str
    description: str
    runs: list[RunResult] = Field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and all(r.flagged == r.expected for r in self.runs)


class HistoryEval(BaseModel):
    series_dir: str
    series: list[SeriesResult]
    runs: int
    tp: int
    fp: int
    fn: int
    precision: float | None
    recall: float | None
    series_right: int
    perfect: bool


def _variant(data: dict[str, object], name: str, day: int, scale: float) -> dict[str, object]:
    d = copy.deepcopy(data)
    d.pop("expect", None)
    d["name"] = f"{name}-day{day}"
    d["description"] = f"{name}, day {day}: seconds_per_op x {scale:g}"
    job = dict(d.get("job") or {})  # type: ignore[call-overload]
    job["start"] = int(job.get("start", 1_700_000_000)) + day * DAY
    job.pop("runtime", None)  # the program's own time: I/O time added, computation kept
    d["job"] = job
    program = []
    for step in d.get("program") or []:  # type: ignore[attr-defined]
        step = dict(step)
        if "seconds_per_op" in step:
            step["seconds_per_op"] = float(step["seconds_per_op"]) * scale
        program.append(step)
    d["program"] = program
    return d


def _entry(data: dict[str, object], path: Path, fingerprint: str) -> CorpusEntry:
    from iodiag.synth.scenario import ScenarioError, parse_scenario

    try:
        scenario = parse_scenario(data, str(path))
    except ScenarioError as exc:
        raise CorpusError(str(exc)) from None
    spec = scenario.model_dump(mode="json", exclude={"expect", "description"})
    key = hashlib.sha256((json.dumps(spec, sort_keys=True) + fingerprint).encode()).hexdigest()
    return CorpusEntry(path=path, scenario=scenario, faults=LogFaults(), key=key)


def load_series(path: Path, root: Path) -> tuple[SeriesSpec, list[CorpusEntry]]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        spec = SeriesSpec.model_validate(raw)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CorpusError(f"{path}: cannot read series file ({' '.join(str(exc).split())})") from None
    except ValidationError as exc:
        msg = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'series'}: {e['msg']}" for e in exc.errors())
        raise CorpusError(f"{path}: {' '.join(msg.split())}") from None
    scen = Path(spec.scenario) if Path(spec.scenario).is_absolute() else root / spec.scenario
    try:
        data = yaml.safe_load(scen.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise CorpusError(f"{path}: scenario {scen}: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: scenario {scen} is not a YAML mapping")
    fp = builder_fingerprint()
    entries = [_entry(_variant(data, spec.name, day, r.scale), scen, fp) for day, r in enumerate(spec.runs)]
    return spec, entries


def evaluate_series(path: Path, root: Path, cache_dir: Path) -> SeriesResult:
    from iodiag.analysis import analyze
    from iodiag.comparison import run_summary
    from iodiag.comparison.history import RunPoint, flag_series
    from iodiag.ingest import load_profile

    t0 = time.perf_counter()
    spec, entries = load_series(path, root)
    res = SeriesResult(name=spec.name, path=str(path), description=" ".join(spec.description.split()))
    try:
        points = []
        for day, entry in enumerate(entries):
            s = run_summary(analyze(load_profile(str(build_entry(entry, cache_dir)), include=("HEATMAP",))))
            when = datetime.fromtimestamp(entry.scenario.job.start, UTC)
            points.append(
                RunPoint(
                    id=f"{spec.name}-{day}",
                    when=when,
                    jobid=str(s.jobid),
                    nprocs=s.nprocs,
                    runtime_s=s.runtime_s,
                    io_time_s=s.io_time_s,
                    io_share=s.io_share,
                    verdict_level=s.level.value,
                    headline=s.headline,
                )
            )
        for day, (p, label) in enumerate(zip(flag_series(points), spec.runs, strict=True)):
            res.runs.append(
                RunResult(
                    day=day,
                    scale=label.scale,
                    expected=label.regression,
                    flagged=p.regression is not None,
                    io_time_s=p.io_time_s,
                    explanation=p.regression.explanation if p.regression else None,
                )
            )
    except CorpusError:
        raise
    except Exception as exc:
        res.error = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    res.seconds = time.perf_counter() - t0
    return res


def run_history_eval(
    series_dir: Path | None = None, cache_dir: Path | None = None, progress: Callable[[str], None] | None = None
) -> HistoryEval:
    directory = series_dir or DEFAULT_SERIES
    if not directory.is_dir():
        raise CorpusError(f"{directory}: no such series directory")
    paths = sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])
    if not paths:
        raise CorpusError(f"{directory}: no series files (*.yaml)")
    root = directory.resolve().parent
    cache = cache_dir or default_cache_dir()
    results = []
    for p in paths:
        if progress:
            progress(p.stem)
        results.append(evaluate_series(p, root, cache))
    runs = [r for s in results for r in s.runs]
    tp = sum(r.flagged and r.expected for r in runs)
    fp = sum(r.flagged and not r.expected for r in runs)
    fn = sum(r.expected and not r.flagged for r in runs)
    right = sum(s.ok for s in results)
    return HistoryEval(
        series_dir=str(directory),
        series=results,
        runs=len(runs),
        tp=tp,
        fp=fp,
        fn=fn,
        precision=tp / (tp + fp) if tp + fp else None,
        recall=tp / (tp + fn) if tp + fn else None,
        series_right=right,
        perfect=right == len(results),
    )


def print_history_eval(result: HistoryEval, console: object) -> None:
    from rich.console import Console
    from rich.text import Text

    from iodiag.evals.tables import results_table

    assert isinstance(console, Console)
    cols = ("series", "runs", "I/O time per run (s; * flagged, ! wrong)", "right")
    table = results_table("Regression flag on labelled run series", cols, labels=len(cols))
    for s in result.series:
        if s.error:
            table.add_row(Text(s.name), "-", Text(s.error), "no")
            continue
        cells = []
        for r in s.runs:
            mark = ("*" if r.flagged else "") + ("!" if r.flagged != r.expected else "")
            cells.append(f"{r.io_time_s:.3g}{mark}" if r.io_time_s is not None else f"n/a{mark}")
        table.add_row(Text(s.name), str(len(s.runs)), Text(" ".join(cells)), "yes" if s.ok else "no")
    console.print(table)

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    console.print(
        f"runs {result.runs}  TP {result.tp}  FP {result.fp}  FN {result.fn}  precision {pct(result.precision)}  "
        f"recall {pct(result.recall)}  series right {result.series_right}/{len(result.series)}"
    )


def to_json(result: HistoryEval) -> str:
    return result.model_dump_json(indent=2) + "\n"
