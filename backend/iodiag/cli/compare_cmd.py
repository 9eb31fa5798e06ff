"""``iodiag compare A.darshan B.darshan``: what changed from run A to run B ("did my change help?").

Registered on the main app by ``compare_cmd.register(app)``; heavy imports stay inside the command.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from iodiag.analysis.models import Report
    from iodiag.comparison.models import RunFacts


class CompareFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


def register(app: typer.Typer) -> None:
    @app.command()
    def compare(
        logs: Annotated[
            list[Path] | None,
            typer.Argument(
                help="Two Darshan logs: run A (before) and run B (after).", show_default=False, metavar="A B"
            ),
        ] = None,
        fmt: Annotated[
            CompareFormat, typer.Option("--format", "-f", help="Output format.", case_sensitive=False)
        ] = CompareFormat.text,
        output: Annotated[
            Path | None,
            typer.Option("--output", "-o", help="Write here instead of stdout.", show_default=False, metavar="FILE"),
        ] = None,
        force: Annotated[
            bool, typer.Option("--force", help="Compare even when the logs ran different executables.")
        ] = False,
        dxt: Annotated[
            bool,
            typer.Option(
                "--dxt", help="Also read the DXT traces (phases, stragglers, rank imbalance: the T findings)."
            ),
        ] = False,
        schema: Annotated[
            bool,
            typer.Option(
                "--schema", help="Print the JSON Schema of the comparison (what --format json writes) and exit."
            ),
        ] = False,
    ) -> None:
        """Compare two runs of one program: run time, I/O time and share, per-layer time and bytes, request sizes, Lustre layout, per-OST time, and the findings resolved, new or changed.

        Logs of different executables are refused (exit status 2) unless [bold]--force[/]; different process counts are allowed and stated.
        """  # noqa: E501  (typer keeps the line breaks of a paragraph)
        from iodiag.cli.common import CliError, fail, quiet_broken_pipe

        try:
            _compare(logs or [], fmt.value, output, force, dxt, schema)
        except typer.Exit:
            raise
        except BrokenPipeError:
            quiet_broken_pipe()
        except Exception as exc:
            from iodiag.comparison import NotComparable

            fail(CliError(str(exc)) if isinstance(exc, NotComparable) else exc)


def _compare(logs: list[Path], fmt: str, output: Path | None, force: bool, dxt: bool, schema: bool) -> None:
    from iodiag.cli.common import CliError, stdout_console, write_file, write_stdout

    if output is not None:
        if output.is_dir():
            raise CliError(f"cannot write {output}: it is a directory")
        if not output.parent.is_dir():
            raise CliError(f"cannot write {output}: directory {output.parent} does not exist")
    if schema:
        if logs:
            raise CliError("--schema takes no logs")
        from iodiag.comparison.render import schema_json

        text = schema_json()
        if output is None:
            write_stdout(text)
        else:
            write_file(output, text)
        return
    if len(logs) != 2:
        raise CliError(f"give two logs to compare, run A and run B (got {len(logs)})")

    from iodiag.comparison import compare
    from iodiag.comparison.render import print_text, render

    (ra, fa), (rb, fb) = (_analyzed(log, dxt) for log in logs)
    comparison = compare(ra, rb, force=force, facts_a=fa, facts_b=fb)
    if output is not None:
        write_file(output, render(comparison, fmt))
    elif fmt == "text":
        print_text(comparison, stdout_console())
    else:
        write_stdout(render(comparison, fmt))


def _analyzed(log: Path, dxt: bool) -> tuple[Report, RunFacts]:
    from iodiag.analysis import analyze
    from iodiag.cli.common import EXIT_INTERNAL, CliError, debug_enabled, error_line, internal_message
    from iodiag.comparison import run_facts
    from iodiag.ingest import LogReadError, load_profile

    try:
        profile = load_profile(str(log), include=("HEATMAP", "DXT") if dxt else ("HEATMAP",))
        return analyze(profile), run_facts(profile)
    except LogReadError as exc:
        raise CliError(str(exc)) from None
    except Exception as exc:
        if debug_enabled():
            raise
        error_line(f"{log}: {internal_message(exc)}", internal=True)
        raise typer.Exit(EXIT_INTERNAL) from None
