"""``iodiag analyze LOG...`` (one report per log, or one over all with ``--combine``) and ``iodiag schema``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from iodiag.cli.common import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    OutputFormat,
    SeverityMode,
    debug_enabled,
    error_line,
    fail,
    internal_message,
    output_target,
    quiet_broken_pipe,
    stderr_console,
    write_file,
    write_stdout,
)
from iodiag.cli.reports import Outcome, each_log, emit_reports, load_thresholds_or_fail, plots_for


def analyze(
    logs: Annotated[
        list[Path], typer.Argument(help="Darshan log files (.darshan).", show_default=False, metavar="LOG")
    ],
    fmt: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="Output format.", case_sensitive=False)
    ] = OutputFormat.text,
    thresholds: Annotated[
        Path | None,
        typer.Option(
            "--thresholds", "-t", help="TOML file overriding trigger thresholds.", show_default=False, metavar="FILE"
        ),
    ] = None,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            help="Write here instead of stdout. An existing directory, or a path ending in '/', gets one file per log.",
            show_default=False,
            metavar="PATH",
        ),
    ] = None,
    top: Annotated[int, typer.Option("--top", "-n", min=1, help="Files listed per finding.", metavar="N")] = 10,
    dxt: Annotated[
        bool,
        typer.Option("--dxt", help="Also read the DXT traces (phases, stragglers, rank imbalance: the T findings)."),
    ] = False,
    nodes: Annotated[
        int | None,
        typer.Option("--nodes", min=1, help="Compute nodes the job ran on (the log does not always say).", metavar="N"),
    ] = None,
    cb_nodes: Annotated[
        int | None,
        typer.Option(
            "--cb-nodes",
            min=1,
            help="MPI-IO aggregators (ROMIO cb_nodes) the application used; enables the aggregator checks M08-M10.",
            metavar="N",
        ),
    ] = None,
    binary: Annotated[
        Path | None,
        typer.Option(
            "--binary",
            help="The job's executable (built with -g): maps the call-stack addresses a log carries without their "
            "source lines, with addr2line. Implies --dxt.",
            show_default=False,
            metavar="PATH",
        ),
    ] = None,
    severity: Annotated[
        SeverityMode,
        typer.Option(
            "--severity",
            help="cost: severity from the run time a finding costs (default); drishti: the detection rules' own "
            "severity, as Drishti shows it.",
            case_sensitive=False,
        ),
    ] = SeverityMode.cost,
    combine: Annotated[
        bool,
        typer.Option(
            "--combine",
            help="The logs are one job or workflow (one log per step or per process): one report over all of them, "
            "their ranks renumbered and their times on one timeline.",
        ),
    ] = False,
) -> None:
    """Analyze Darshan logs and report what slows their I/O down.

    With several logs: a summary table (text), a JSON array (json), or one document holding every report (markdown, html); with [bold]--output DIR[/] one file per log. With [bold]--combine[/]: one report over all the logs.

    A log that cannot be read is reported on stderr, the others are still analyzed, and the exit status is 2.
    """  # noqa: E501  (typer keeps the line breaks of a paragraph)
    try:
        if binary is not None and not binary.is_file():
            raise CliError(f"--binary {binary}: no such file")
        run = analyze_logs
        if combine:
            from iodiag.cli.combine_cmd import analyze_combined

            run = analyze_combined
        code = run(
            logs,
            fmt.value,
            thresholds,
            output,
            top,
            (nodes, cb_nodes),
            dxt or binary is not None,
            binary,
            detected=severity is SeverityMode.drishti,
        )
    except typer.Exit:
        raise
    except BrokenPipeError:
        quiet_broken_pipe()
        raise typer.Exit(EXIT_OK) from None
    except Exception as exc:
        fail(exc)
    if code:
        raise typer.Exit(code)


def schema(
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the schema here instead of stdout.", show_default=False, metavar="PATH"
        ),
    ] = None,
) -> None:
    """Print the JSON Schema of the report (what --format json writes)."""
    try:
        from iodiag.render import report_schema

        text = json.dumps(report_schema(), indent=2) + "\n"
        if output is None:
            write_stdout(text)
        else:
            if not output.parent.is_dir():
                raise CliError(f"cannot write {output}: directory {output.parent} does not exist")
            write_file(output, text)
    except typer.Exit:
        raise
    except BrokenPipeError:
        quiet_broken_pipe()
    except Exception as exc:
        fail(exc)


def register(app: typer.Typer) -> None:
    """Add ``analyze`` and ``schema`` to ``app``."""
    app.command()(analyze)
    app.command()(schema)


def analyze_logs(
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
    thresholds = load_thresholds_or_fail(thresholds_path)
    target = output_target(output)

    from iodiag.analysis import JobFacts
    from iodiag.analysis import analyze as run_analysis

    facts = JobFacts(nodes=job_facts[0], cb_nodes=job_facts[1])
    from iodiag.analysis.views.source_lines import BinaryError
    from iodiag.ingest import LogReadError, load_profile
    from iodiag.render import EXTENSIONS, render

    err = stderr_console()
    outcomes: list[Outcome] = []

    def one(log: Path) -> Outcome:
        try:
            # HEATMAP is small (ranks x bins) and gives a timeline when there is no trace.
            profile = load_profile(str(log), include=("HEATMAP", "DXT") if dxt else ("HEATMAP",))
            report = run_analysis(profile, thresholds, top_n=top, facts=facts, binary=binary)
            if detected:
                from iodiag.analysis.engine import with_detected_severity

                report = with_detected_severity(report)
            plots = plots_for(profile, fmt)
        except LogReadError as exc:
            return Outcome(log, error=str(exc))
        except BinaryError as exc:
            return Outcome(log, error=f"{log}: {exc}")
        except Exception as exc:
            if debug_enabled():
                raise
            return Outcome(log, error=f"{log}: {internal_message(exc)}", internal=True)
        return Outcome(log, report=report, plots=plots)

    def finish(o: Outcome, console: Console) -> None:
        if o.error is not None:
            error_line(o.error, console, internal=o.internal)
        elif target.kind == "dir" and o.report is not None:
            write_file(target.file_for(o.log, EXTENSIONS[fmt]), render(o.report, fmt, plots=o.plots))
            o.plots = None  # written: no need to hold every log's plots until the end
        outcomes.append(o)

    for log, console in each_log(logs, "Analyzing", err):
        finish(one(log), console)

    emit_reports(target, fmt, single=len(logs) == 1, outcomes=outcomes)

    if any(o.internal for o in outcomes):
        return EXIT_INTERNAL
    if any(o.error is not None for o in outcomes):
        return EXIT_USAGE
    return EXIT_OK
