"""``iodiag synth``: write a Darshan log from a scenario spec, or a DXT benchmark log.

Registered on the main app by ``synth_cmd.register(app)``; heavy imports stay inside the command.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def synth(
        spec: Annotated[
            Path | None,
            typer.Argument(help="Scenario spec (YAML); see docs/scenario-spec.md.", show_default=False),
        ] = None,
        output: Annotated[
            Path | None,
            typer.Option("--output", "-o", help="The Darshan log to write.", show_default=False, metavar="PATH"),
        ] = None,
        dxt_segments: Annotated[
            int | None,
            typer.Option(
                "--dxt-segments",
                help="Without a spec: write a benchmark log with this many DXT segments.",
                show_default=False,
                metavar="N",
            ),
        ] = None,
    ) -> None:
        """Write a Darshan log whose contents are known: derived from a scenario spec."""
        from iodiag.cli.common import CliError, fail

        try:
            _synth(spec, output, dxt_segments)
        except typer.Exit:
            raise
        except Exception as exc:
            fail(_as_cli_error(exc, CliError))


def _as_cli_error(exc: Exception, cli_error: type[Exception]) -> Exception:
    from iodiag.synth.program import ProgramError
    from iodiag.synth.scenario import ScenarioError
    from iodiag.synth.writer import WriteError

    if isinstance(exc, ScenarioError | ProgramError | WriteError):
        return cli_error(str(exc))
    return exc


def _synth(spec: Path | None, output: Path | None, dxt_segments: int | None) -> None:
    from iodiag.cli.common import CliError

    if output is None:
        raise CliError("missing -o/--output: the log to write")
    if not output.parent.is_dir():
        raise CliError(f"cannot write {output}: directory {output.parent} does not exist")
    if output.is_dir():
        raise CliError(f"cannot write {output}: it is a directory")
    if (spec is None) == (dxt_segments is None):
        raise CliError("give a scenario spec or --dxt-segments N (not both)")
    t0 = time.perf_counter()
    if dxt_segments is not None:
        if dxt_segments < 1:
            raise CliError("--dxt-segments must be at least 1")
        from iodiag.synth.dxt import bench_tables
        from iodiag.synth.writer import write_log

        job, names, tables = bench_tables(dxt_segments)
        write_log(output, job, names, tables)
        what = f"{dxt_segments:,} DXT segments"
    else:
        assert spec is not None
        from iodiag.synth.build import build_log
        from iodiag.synth.scenario import load_scenario

        scenario = load_scenario(spec)
        build_log(scenario, output)
        what = f"scenario {scenario.name}"
    typer.echo(f"wrote {output} ({what}, {time.perf_counter() - t0:.1f} s)", err=True)
