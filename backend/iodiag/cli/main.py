"""The ``iodiag`` command.

Only typer and rich are imported at module level so ``iodiag --help`` stays fast; the analysis
(pandas, the Darshan library) is imported inside the commands.

Exit codes: 0 success; 2 a log could not be read, or a bad argument, thresholds file or output
path; 1 an internal error. Every error is one line on stderr, never a traceback (set
``IODIAG_DEBUG=1`` to get the traceback of an internal error).
"""

from __future__ import annotations

import json
import os
import sys

# pydantic otherwise scans every installed distribution's entry points for plugins on first use;
# the command uses none, and the scan is a noticeable part of its start-up.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from iodiag import __version__

if TYPE_CHECKING:
    from iodiag.analysis.models import Report
    from iodiag.core.thresholds import Thresholds

PROG = "iodiag"
EXIT_OK, EXIT_INTERNAL, EXIT_USAGE = 0, 1, 2
NON_TTY_WIDTH = 100


class OutputFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


class SeverityMode(StrEnum):
    cost = "cost"
    drishti = "drishti"


app = typer.Typer(
    name=PROG,
    help="Diagnose HPC I/O performance from Darshan logs.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


class CliError(Exception):
    """A user-facing failure: printed as one line, exits with ``code``."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def error_line(message: str, console: Console | None = None, *, internal: bool = False) -> None:
    """``iodiag: error: ...`` on stderr, on one line whatever the terminal width."""
    label = "internal error" if internal else "error"
    line = Text.assemble((f"{PROG}: {label}:", "bold red"), " ", _one_line(message))
    (console or _stderr()).print(line, soft_wrap=True, markup=False, highlight=False)


def _internal(exc: BaseException) -> str:
    msg = _one_line(exc)
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _debug() -> bool:
    return os.environ.get("IODIAG_DEBUG", "") not in ("", "0")


def _fail(exc: BaseException) -> NoReturn:
    """Turn any exception escaping a command into one line and an exit code."""
    if isinstance(exc, CliError):
        error_line(str(exc))
        raise typer.Exit(exc.code)
    if _debug():
        raise exc
    error_line(_internal(exc), internal=True)
    raise typer.Exit(EXIT_INTERNAL)


def _stdout_console() -> Console:
    tty = sys.stdout.isatty()
    width = None if tty or os.environ.get("COLUMNS") else NON_TTY_WIDTH
    return Console(highlight=False, width=width, emoji=False)


def _write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _write_file(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None


# --- output target ------------------------------------------------------------------------------


@dataclass
class Target:
    """Where reports go: stdout, one file, or a directory (one file per log)."""

    kind: str  # "stdout" | "file" | "dir"
    path: Path | None = None
    used_names: set[str] = field(default_factory=set)

    def file_for(self, log: Path, ext: str) -> Path:
        assert self.path is not None
        stem = log.name.removesuffix(".darshan") if log.name.endswith(".darshan") else log.stem
        stem = stem or "report"
        name, n = f"{stem}{ext}", 1
        while name in self.used_names:
            n += 1
            name = f"{stem}-{n}{ext}"
        self.used_names.add(name)
        return self.path / name


def _target(output: str | None) -> Target:
    if output is None or output == "-":
        return Target("stdout")
    path = Path(output)
    if path.is_dir():
        return Target("dir", path)
    if output.endswith(("/", os.sep)):
        if not path.parent.is_dir():
            raise CliError(f"cannot write to {output}: directory {path.parent} does not exist")
        try:
            path.mkdir(exist_ok=True)
        except OSError as exc:
            raise CliError(f"cannot create directory {output}: {exc.strerror or exc}") from None
        return Target("dir", path)
    parent = path.parent
    if not parent.is_dir():
        raise CliError(f"cannot write {output}: directory {parent} does not exist")
    return Target("file", path)


# --- commands -----------------------------------------------------------------------------------


def _version(value: bool) -> None:
    if value:
        typer.echo(f"{PROG} {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", help="Show the version and exit.", callback=_version, is_eager=True),
    ] = False,
) -> None:
    """Diagnose HPC I/O performance from Darshan logs."""


@dataclass
class Outcome:
    log: Path
    report: Report | None = None
    error: str | None = None
    internal: bool = False


@app.command()
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
        run = _analyze
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
        _quiet_broken_pipe()
        raise typer.Exit(EXIT_OK) from None
    except Exception as exc:
        _fail(exc)
    if code:
        raise typer.Exit(code)


def _load_thresholds(path: Path | None) -> Thresholds:
    from iodiag.core.thresholds import ThresholdError, load_thresholds

    try:
        return load_thresholds(path)
    except ThresholdError as exc:
        raise CliError(str(exc)) from None


def _analyze(
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
    thresholds = _load_thresholds(thresholds_path)
    target = _target(output)

    from iodiag.analysis import JobFacts
    from iodiag.analysis import analyze as run_analysis

    facts = JobFacts(nodes=job_facts[0], cb_nodes=job_facts[1])
    from iodiag.analysis.source_lines import BinaryError
    from iodiag.ingest import LogReadError, load_profile
    from iodiag.render import EXTENSIONS, render

    err = _stderr()
    outcomes: list[Outcome] = []

    def one(log: Path) -> Outcome:
        try:
            # HEATMAP is small (ranks x bins) and gives a timeline when there is no trace.
            profile = load_profile(str(log), include=("HEATMAP", "DXT") if dxt else ("HEATMAP",))
            report = run_analysis(profile, thresholds, top_n=top, facts=facts, binary=binary)
            if detected:
                from iodiag.analysis.engine import with_detected_severity

                report = with_detected_severity(report)
        except LogReadError as exc:
            return Outcome(log, error=str(exc))
        except BinaryError as exc:
            return Outcome(log, error=f"{log}: {exc}")
        except Exception as exc:
            if _debug():
                raise
            return Outcome(log, error=f"{log}: {_internal(exc)}", internal=True)
        return Outcome(log, report=report)

    def finish(o: Outcome, console: Console) -> None:
        if o.error is not None:
            error_line(o.error, console, internal=o.internal)
        elif target.kind == "dir" and o.report is not None:
            _write_file(target.file_for(o.log, EXTENSIONS[fmt]), render(o.report, fmt))
        outcomes.append(o)

    if len(logs) > 1 and err.is_terminal:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        # No refresh thread: the reader forks, and forking next to a running thread is unsafe.
        with Progress(
            TextColumn("[bold]Analyzing"),
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
                finish(one(log), progress.console)
                progress.advance(task)
                progress.refresh()
    else:
        for log in logs:
            finish(one(log), err)

    _emit(target, fmt, single=len(logs) == 1, outcomes=outcomes)

    if any(o.internal for o in outcomes):
        return EXIT_INTERNAL
    if any(o.error is not None for o in outcomes):
        return EXIT_USAGE
    return EXIT_OK


def _emit(target: Target, fmt: str, *, single: bool, outcomes: list[Outcome]) -> None:
    from iodiag.render import render, render_many
    from iodiag.render.text import print_text

    reports = [o.report for o in outcomes if o.report is not None]
    names = [o.log.name for o in outcomes if o.report is not None]
    if target.kind == "dir":
        if not single:
            _print_summary(outcomes)
        if reports:
            n = len(reports)
            note = f"{PROG}: wrote {n} report{'s' if n != 1 else ''} to {target.path}"
            _stderr().print(note, soft_wrap=True, markup=False, highlight=False)
        return
    if not reports:
        return  # nothing was readable: the errors are already on stderr
    if target.kind == "file":
        assert target.path is not None
        _write_file(target.path, render(reports[0], fmt) if single else render_many(reports, fmt, names))
    elif single and fmt == "text":
        print_text(reports[0], _stdout_console())
    elif single:
        _write_stdout(render(reports[0], fmt))
    elif fmt == "text":
        _print_summary(outcomes)
    else:
        _write_stdout(render_many(reports, fmt, names))


def _print_summary(outcomes: list[Outcome]) -> None:
    from iodiag.render._common import summary_row
    from iodiag.render.text import summary_table

    rows = [summary_row(o.report, o.log.name) for o in outcomes if o.report is not None]
    failures = [(str(o.log), _reason(o)) for o in outcomes if o.error is not None]
    _stdout_console().print(summary_table(rows, failures))


def _reason(o: Outcome) -> str:
    err = o.error or ""
    prefix = f"{o.log}: "
    return err[len(prefix) :] if err.startswith(prefix) else err


def _quiet_broken_pipe() -> None:
    """The reader of stdout went away (``| head``): stop quietly, without a second error at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


@app.command()
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
            _write_stdout(text)
        else:
            if not output.parent.is_dir():
                raise CliError(f"cannot write {output}: directory {output.parent} does not exist")
            _write_file(output, text)
    except typer.Exit:
        raise
    except BrokenPipeError:
        _quiet_broken_pipe()
    except Exception as exc:
        _fail(exc)


# Subcommands that live in their own modules (each keeps its heavy imports inside the command).
import iodiag.cli.ask_cmd  # noqa: E402, F401  (registers `iodiag ask` on import)
from iodiag.cli import eval_cmd, knowledge_cmd, synth_cmd  # noqa: E402

synth_cmd.register(app)
eval_cmd.register(app)
from iodiag.cli import serve_cmd  # noqa: E402

serve_cmd.register(app)
knowledge_cmd.register(app)
from iodiag.cli import batch_cmd  # noqa: E402

batch_cmd.register(app)
from iodiag.cli import compare_cmd  # noqa: E402

compare_cmd.register(app)


def main() -> None:
    """Entry point of the ``iodiag`` command and ``python -m iodiag``.

    After the command has finished and its output is flushed, the process ends without the
    interpreter's teardown: freeing pandas, numpy and the Darshan library's state one object at a
    time costs a tenth of a second and does nothing a short-lived command needs.
    """
    code = 0
    try:
        app(prog_name=PROG, standalone_mode=True)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass
    os._exit(code)


if __name__ == "__main__":
    main()
