"""One analysis, as the CLI's ``analyze`` chains it: read, analyze, render every format and the plots.

Runs inside a worker process; reports its stage through ``progress`` and writes nothing to the
database (the pool does, while it holds the job's lease).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from iodiag.analysis.models import Report
    from iodiag.ingest import JobProfile

OUTPUT_KINDS = ("json", "markdown", "html", "plots", "facts")
STAGES = {"reading": 0.05, "analyzing": 0.5, "rendering": 0.75, "storing": 0.95}
Progress = Callable[[str, float], None]


class PipelineInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    job_id: int
    log_path: str
    display_name: str
    nodes: int | None = None
    cb_nodes: int | None = None
    read_dxt: bool = True
    read_timeout_s: float = 600.0
    read_memory_limit_bytes: int = 4 << 30
    thresholds_path: str | None = None
    out_dir: str
    combine_with: list[str] = []
    """More logs of the same job (``iodiag batch --combine-jobs``): one report over all of them."""


class RunStats(BaseModel):
    """What the analyses table keeps of a run for its history, regression flag and triage list."""

    model_config = ConfigDict(frozen=True)

    executable: str | None
    run_start: datetime | None
    nprocs: int
    runtime_s: float
    io_time_s: float | None
    io_share: float | None
    verdict_level: str
    headline: str
    run_nodes: int | None = None
    time_lost_s: float | None = None


class JobResult(BaseModel):
    exe: str | None
    jobid: str | None
    stats: RunStats | None = None
    counts: dict[str, int]
    findings: list[tuple[str, str]]
    outputs: dict[str, str]  # kind -> file under out_dir holding the zlib-compressed content


class JobError(Exception):
    """The log could not be analyzed for a reason worth showing the user (one line)."""


def read_and_analyze(
    spec: PipelineInput, progress: Progress, thresholds_label: str = "server thresholds file"
) -> tuple[JobProfile, Report]:
    """Read the log and analyze it; shared by the service's pipeline and the batch helper's facts-only task."""
    from iodiag.analysis import JobFacts, analyze
    from iodiag.core.thresholds import ThresholdError, load_thresholds
    from iodiag.ingest import LogReadError, load_profile

    try:
        thresholds = load_thresholds(spec.thresholds_path)
    except ThresholdError as exc:
        raise JobError(f"{thresholds_label}: {exc}") from None
    progress("reading", STAGES["reading"])
    try:
        # HEATMAP is small (ranks x bins) and gives a timeline when there is no trace.
        profiles = [
            load_profile(
                path,
                include=("HEATMAP", "DXT") if spec.read_dxt else ("HEATMAP",),
                timeout_s=spec.read_timeout_s,
                memory_limit_bytes=spec.read_memory_limit_bytes,
            )
            for path in (spec.log_path, *spec.combine_with)
        ]
    except LogReadError as exc:
        raise JobError(f"{exc.path}: {exc.reason}" if spec.combine_with else exc.reason) from None
    profile = profiles[0]
    if spec.combine_with:
        from iodiag.ingest.combine import CombineError, combine_profiles

        try:
            profile = combine_profiles(profiles)
        except CombineError as exc:
            raise JobError(str(exc)) from None
    progress("analyzing", STAGES["analyzing"])
    report = analyze(profile, thresholds, top_n=10, facts=JobFacts(nodes=spec.nodes, cb_nodes=spec.cb_nodes))
    return profile, report


def run_stats(report: Report) -> RunStats:
    from iodiag.comparison import run_summary

    s = run_summary(report)
    return RunStats(
        executable=s.executable or None,
        run_start=report.job.start,
        nprocs=s.nprocs,
        runtime_s=s.runtime_s,
        io_time_s=s.io_time_s,
        io_share=s.io_share,
        verdict_level=s.level.value,
        headline=s.headline,
        run_nodes=s.nodes,
        # Causes may overlap in time (each carries its own cost): together they explain at most the I/O time.
        time_lost_s=min(sum(c.seconds for c in s.causes), s.io_time_s) if s.io_time_s is not None else None,
    )


def run(spec: PipelineInput, progress: Progress) -> JobResult:
    from iodiag.analysis.plots.data import plot_data
    from iodiag.comparison import run_facts
    from iodiag.render import render

    profile, report = read_and_analyze(spec, progress)
    # The stored log has a content-addressed name; the report shows the name it was submitted as.
    report = report.model_copy(update={"log_path": spec.display_name})
    progress("rendering", STAGES["rendering"])
    plots = plot_data(profile)
    texts = {
        "json": render(report, "json"),
        "markdown": render(report, "markdown"),
        "html": render(report, "html", plots=plots),
        "plots": plots.model_dump_json(),
        # What a later comparison needs that the report does not carry (size histograms, OSTs).
        "facts": run_facts(profile).model_dump_json(),
    }
    out = Path(spec.out_dir)
    files: dict[str, str] = {}
    for kind, content in texts.items():
        p = out / f"{kind}.z"
        p.write_bytes(zlib.compress(content.encode("utf-8"), 6))
        files[kind] = str(p)
    return JobResult(
        exe=report.job.exe or None,
        jobid=str(report.job.jobid),
        stats=run_stats(report),
        counts=report.counts.model_dump(),
        findings=[(f.code, f.severity.value) for f in report.findings],
        outputs=files,
    )
