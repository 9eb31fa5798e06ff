"""Reports on the command line: one outcome per log, and where the reports go (stdout, a file, a directory)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from iodiag.cli.common import (
    PROG,
    CliError,
    Target,
    stderr_console,
    stdout_console,
    write_file,
    write_stdout,
)

if TYPE_CHECKING:
    from iodiag.analysis.models import Report
    from iodiag.analysis.plots.data import PlotData
    from iodiag.core.thresholds import Thresholds
    from iodiag.ingest import JobProfile


@dataclass
class Outcome:
    log: Path
    report: Report | None = None
    error: str | None = None
    internal: bool = False
    plots: PlotData | None = None
    """The plots of the HTML report (computed for ``--format html`` only)."""


def plots_for(profile: JobProfile, fmt: str) -> PlotData | None:
    """The plot data the HTML report draws; None for the other formats, which have no use for it."""
    if fmt != "html":
        return None
    from iodiag.analysis.plots.data import plot_data

    return plot_data(profile)


def load_thresholds_or_fail(path: Path | None) -> Thresholds:
    from iodiag.core.thresholds import ThresholdError, load_thresholds

    try:
        return load_thresholds(path)
    except ThresholdError as exc:
        raise CliError(str(exc)) from None


def emit_reports(target: Target, fmt: str, *, single: bool, outcomes: list[Outcome]) -> None:
    from iodiag.render import render, render_many
    from iodiag.render.text import print_text

    reports = [o.report for o in outcomes if o.report is not None]
    names = [o.log.name for o in outcomes if o.report is not None]
    plots = [o.plots for o in outcomes if o.report is not None]
    if target.kind == "dir":
        if not single:
            print_summary_table(outcomes)
        if reports:
            n = len(reports)
            note = f"{PROG}: wrote {n} report{'s' if n != 1 else ''} to {target.path}"
            stderr_console().print(note, soft_wrap=True, markup=False, highlight=False)
        return
    if not reports:
        return  # nothing was readable: the errors are already on stderr
    if target.kind == "file":
        assert target.path is not None
        write_file(
            target.path,
            render(reports[0], fmt, plots=plots[0]) if single else render_many(reports, fmt, names, plots=plots),
        )
    elif single and fmt == "text":
        print_text(reports[0], stdout_console())
    elif single:
        write_stdout(render(reports[0], fmt, plots=plots[0]))
    elif fmt == "text":
        print_summary_table(outcomes)
    else:
        write_stdout(render_many(reports, fmt, names, plots=plots))


def print_summary_table(outcomes: list[Outcome]) -> None:
    from iodiag.render.text import summary_table
    from iodiag.render.wording import summary_row

    rows = [summary_row(o.report, o.log.name) for o in outcomes if o.report is not None]
    failures = [(str(o.log), failure_reason(o)) for o in outcomes if o.error is not None]
    stdout_console().print(summary_table(rows, failures))


def failure_reason(o: Outcome) -> str:
    err = o.error or ""
    prefix = f"{o.log}: "
    return err[len(prefix) :] if err.startswith(prefix) else err


def each_log(logs: list[Path], label: str, err: Console) -> Iterator[tuple[Path, Console]]:
    """The logs one by one, with the console to report on; a progress bar on a terminal for several logs."""
    if len(logs) < 2 or not err.is_terminal:
        for log in logs:
            yield log, err
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    # No refresh thread: the reader forks, and forking next to a running thread is unsafe.
    with Progress(
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", markup=False),
        console=err,
        auto_refresh=False,
        transient=True,
    ) as progress:
        task = progress.add_task("", total=len(logs))
        for log in logs:
            progress.update(task, description=log.name)
            progress.refresh()
            yield log, progress.console
            progress.advance(task)
            progress.refresh()
