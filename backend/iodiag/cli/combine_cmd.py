"""``iodiag analyze --combine LOG...``: one report over the logs of one job or workflow.

Every log is read first (a combined report that silently missed a step would mislead), then the
profiles are merged by ``iodiag.ingest.combine`` and analyzed once. Errors follow ``analyze``: one
line each on stderr, exit status 2, no report.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from iodiag.cli.common import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    CliError,
    debug_enabled,
    error_line,
    internal_message,
    output_target,
    stderr_console,
    write_file,
)
from iodiag.cli.reports import Outcome, each_log, emit_reports, load_thresholds_or_fail, plots_for

if TYPE_CHECKING:
    from iodiag.ingest import JobProfile

COMBINED_NAME = "combined.darshan"
"""What ``--output DIR`` names the one report (``combined.json``, ...)."""


def analyze_combined(
    logs: list[Path],
    fmt: str,
    thresholds_path: Path | None,
    output: str | None,
    top: int,
    job_facts: tuple[int | None, int | None] = (None, None),
    dxt: bool = False,
    binary: Path | None = None,
    detected: bool = False,
) -> int:
    """Read ``logs``, combine them, print one report; the exit status (same signature as ``_analyze``)."""
    if len(logs) < 2:
        raise CliError(f"--combine needs at least 2 logs, got {len(logs)}")
    seen: set[Path] = set()
    for log in logs:
        if log.resolve() in seen:
            raise CliError(f"{log} is given more than once: combining it twice would count its I/O twice")
        seen.add(log.resolve())
    thresholds = load_thresholds_or_fail(thresholds_path)
    target = output_target(output)

    err = stderr_console()
    profiles, failures = _read_all(logs, dxt, err)
    if failures:
        for o in failures:
            error_line(o.error or "", err, internal=o.internal)
        return EXIT_INTERNAL if any(o.internal for o in failures) else EXIT_USAGE

    from iodiag.analysis import JobFacts
    from iodiag.analysis import analyze as run_analysis
    from iodiag.analysis.views.source_lines import BinaryError
    from iodiag.ingest.combine import CombineError, combine_notes, combine_profiles
    from iodiag.render import EXTENSIONS, render

    try:
        profile = combine_profiles(profiles)
    except CombineError as exc:
        raise CliError(str(exc)) from None
    for note in combine_notes(profile):
        err.print(f"{PROG}: note: {note}", soft_wrap=True, markup=False, highlight=False)
    facts = JobFacts(nodes=job_facts[0], cb_nodes=job_facts[1])
    try:
        report = run_analysis(profile, thresholds, top_n=top, facts=facts, binary=binary)
    except BinaryError as exc:
        raise CliError(f"--binary {binary}: {exc}") from None
    if detected:
        from iodiag.analysis.engine import with_detected_severity

        report = with_detected_severity(report)

    name = Path(COMBINED_NAME)
    plots = plots_for(profile, fmt)
    if target.kind == "dir":
        write_file(target.file_for(name, EXTENSIONS[fmt]), render(report, fmt, plots=plots))
    emit_reports(target, fmt, single=True, outcomes=[Outcome(name, report=report, plots=plots)])
    return EXIT_OK


def _read_all(logs: list[Path], dxt: bool, err: Console) -> tuple[list[JobProfile], list[Outcome]]:
    """Every log's profile, and the logs that could not be read (as ``analyze`` reports them)."""
    from iodiag.ingest import LogReadError, load_profile

    # HEATMAP is small (ranks x bins) and gives a timeline when there is no trace.
    include = ("HEATMAP", "DXT") if dxt else ("HEATMAP",)
    profiles: list[JobProfile] = []
    failures: list[Outcome] = []

    def one(log: Path) -> None:
        try:
            profiles.append(load_profile(str(log), include=include))
        except LogReadError as exc:
            failures.append(Outcome(log, error=str(exc)))
        except Exception as exc:
            if debug_enabled():
                raise
            failures.append(Outcome(log, error=f"{log}: {internal_message(exc)}", internal=True))

    for log, _console in each_log(logs, "Reading", err):
        one(log)
    return profiles, failures
