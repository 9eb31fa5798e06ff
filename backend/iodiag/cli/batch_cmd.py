"""``iodiag batch`` (many logs on Dask, into the store or Parquet) and ``iodiag report-system``.

Registered on the main app by ``register(app)``; dask, pandas and the store are imported inside the
commands so ``iodiag --help`` stays fast.

Exit codes of ``batch``: 0 every log analyzed (or already analyzed), 1 some logs failed (each is
listed, one line), 2 a bad argument or an unreachable cluster. ``report-system``: 0, or 2.
"""

from __future__ import annotations

import json
import os
import re
import sys
from datetime import date, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from iodiag.cli.store_options import DatabaseUrl, DataDir, settings_for
from iodiag.core.users import USER_NAME

if TYPE_CHECKING:
    from rich.console import Console

    from iodiag.batch.engine import BatchSummary
    from iodiag.jobs.models import TaskResult

from iodiag.cli.common import EXIT_FAILED, EXIT_OK

_USER = re.compile(USER_NAME)
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_MAX_LISTED = 50


class BadArgument(ValueError):
    pass


class ReportFormat(StrEnum):
    html = "html"
    json = "json"


def parse_size(text: str) -> int:
    """``4GiB``, ``512M``, ``1073741824``: bytes (binary units)."""
    m = _SIZE.match(text)
    if not m:
        raise BadArgument(f"--memory-limit {text!r}: not a size (e.g. 4GiB, 512MiB)")
    unit = (m.group(2) or "").upper()[:1]
    return int(float(m.group(1)) * _UNITS[unit])


def parse_when(text: str, option: str) -> date | datetime:
    try:
        return date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)
    except ValueError:
        raise BadArgument(f"{option} {text!r}: not a date (YYYY-MM-DD) or an ISO date and time") from None


class _Progress:
    """A rich progress bar on a terminal; on anything else, nothing until the summary."""

    def __init__(self, console: Console) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.enabled = console.is_terminal
        self.failed = 0
        self._progress = Progress(
            TextColumn("[bold]{task.fields[stage]}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("[red]{task.fields[failed]}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=not self.enabled,
        )
        self._task = self._progress.add_task("", total=0, stage="", rate="", failed="")

    def __enter__(self) -> _Progress:
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(None, None, None)

    def stage(self, name: str, total: int) -> None:
        self._progress.reset(self._task, total=total or None, stage=name, rate="", failed="")

    def advance(self, result: TaskResult | None = None) -> None:
        if result is not None and not result.ok:
            self.failed += 1
        if result is None:
            self._progress.update(self._task, advance=1)
            return
        task = self._progress.tasks[0]
        speed = task.completed / task.elapsed if task.elapsed else 0.0
        failed = f"{self.failed} failed" if self.failed else ""
        self._progress.update(self._task, advance=1, rate=f"{speed:.1f} logs/s", failed=failed)


def register(app: typer.Typer) -> None:
    @app.command()
    def batch(
        inputs: Annotated[
            list[str],
            typer.Argument(
                help="Directories (searched for *.darshan), glob patterns or log files.",
                metavar="DIR|GLOB|LOG",
                show_default=False,
            ),
        ],
        out: Annotated[
            Path | None,
            typer.Option(
                "--out",
                help="Write Parquet here (jobs/, findings/, runs/) instead of the service's store.",
                show_default=False,
                metavar="DIR",
            ),
        ] = None,
        workers: Annotated[
            int | None,
            typer.Option(
                "--workers",
                min=1,
                help="Local Dask worker processes, one thread each (default: CPUs).",
                show_default=False,
                metavar="N",
            ),
        ] = None,
        scheduler: Annotated[
            str | None,
            typer.Option(
                "--scheduler",
                help="Use this Dask cluster (tcp://HOST:PORT) instead of a local one.",
                show_default=False,
                metavar="ADDRESS",
            ),
        ] = None,
        owner: Annotated[
            str | None,
            typer.Option(
                "--owner",
                help="Store: the user every analysis belongs to (default: the log's user, from "
                "its uid; 'batch' when unreadable).",
                show_default=False,
            ),
        ] = None,
        uid_names: Annotated[
            bool,
            typer.Option(
                "--uid-names/--no-uid-names",
                help="Name users by this host's account for the log's uid (else the number).",
            ),
        ] = True,
        dxt: Annotated[
            bool | None,
            typer.Option(
                "--dxt/--no-dxt", help="Read DXT traces (default: IODIAG_JOB_READ_DXT, on).", show_default=False
            ),
        ] = None,
        timeout: Annotated[
            float | None,
            typer.Option(
                "--timeout",
                min=0.001,
                help="Seconds one log may take (default: IODIAG_JOB_TIMEOUT_S, 600).",
                show_default=False,
                metavar="S",
            ),
        ] = None,
        memory_limit: Annotated[
            str | None,
            typer.Option(
                "--memory-limit",
                help="Memory one analysis may use, e.g. 4GiB (default: IODIAG_JOB_MEMORY_LIMIT_BYTES).",
                show_default=False,
                metavar="SIZE",
            ),
        ] = None,
        thresholds: Annotated[
            Path | None,
            typer.Option(
                "--thresholds",
                "-t",
                help="TOML thresholds (default: IODIAG_THRESHOLDS_FILE).",
                show_default=False,
                metavar="FILE",
            ),
        ] = None,
        combine_jobs: Annotated[
            bool,
            typer.Option(
                "--combine-jobs",
                help="Parquet: analyze the logs of one job (same user and job id in "
                "Darshan's log names: one log per process, or per workflow step) as one report.",
            ),
        ] = False,
        data_dir: DataDir = None,
        database_url: DatabaseUrl = None,
    ) -> None:
        """Analyze many Darshan logs in parallel on Dask, into the service's store or Parquet.

        Resumable: a log whose content was already analyzed (in the store, or in the Parquet output) is skipped;
        logs that failed are tried again. A log that fails is listed with its reason, never stops the batch.
        Exit status 0: all done; 1: some logs failed; 2: bad arguments.
        """
        from iodiag.cli.common import CliError, fail

        try:
            code = _batch(
                inputs,
                out,
                workers,
                scheduler,
                owner,
                uid_names,
                dxt,
                timeout,
                memory_limit,
                thresholds,
                data_dir,
                database_url,
                combine_jobs,
            )
        except typer.Exit:
            raise
        except Exception as exc:
            fail(_user_error(exc, CliError))
        raise typer.Exit(code)

    @app.command("report-system")
    def report_system(
        output: Annotated[
            str,
            typer.Option("--output", "-o", help="report.html, report.json, or - (JSON on stdout).", metavar="PATH"),
        ],
        from_store: Annotated[
            bool, typer.Option("--from-store", help="Read the service's store (IODIAG_DATA_DIR / IODIAG_DATABASE_URL).")
        ] = False,
        parquet: Annotated[
            Path | None,
            typer.Option(
                "--parquet",
                help="Read the Parquet output of `iodiag batch --out DIR`.",
                show_default=False,
                metavar="DIR",
            ),
        ] = None,
        since: Annotated[
            str | None,
            typer.Option("--since", help="Jobs started on or after (YYYY-MM-DD or ISO time, UTC).", show_default=False),
        ] = None,
        until: Annotated[
            str | None,
            typer.Option("--until", help="Jobs started up to (a date: that day included).", show_default=False),
        ] = None,
        fmt: Annotated[
            ReportFormat | None,
            typer.Option("--format", "-f", help="Default: from the output's extension.", show_default=False),
        ] = None,
        top: Annotated[int, typer.Option("--top", min=1, help="Applications and users listed per finding.")] = 5,
        data_dir: DataDir = None,
        database_url: DatabaseUrl = None,
    ) -> None:
        """Facility-wide report: per finding code, the jobs, node-hours, bytes and I/O time at stake, top
        applications and users, trend by day. HTML (self-contained) or JSON."""
        from iodiag.cli.common import CliError, fail

        try:
            _report_system(output, from_store, parquet, since, until, fmt, top, data_dir, database_url)
        except typer.Exit:
            raise
        except Exception as exc:
            fail(_user_error(exc, CliError))


def _user_error(exc: Exception, cli_error: type[Exception]) -> Exception:
    from pydantic import ValidationError

    from iodiag.batch.inputs import InputError
    from iodiag.core.thresholds import ThresholdError
    from iodiag.jobs.cluster import ClusterError

    if isinstance(exc, InputError | ClusterError | ThresholdError | BadArgument):
        return cli_error(str(exc))
    if isinstance(exc, ValidationError):  # a bad IODIAG_* setting
        return cli_error(" ".join(str(exc).split()))
    return exc


def _batch(
    inputs: list[str],
    out: Path | None,
    workers: int | None,
    scheduler: str | None,
    owner: str | None,
    uid_names: bool,
    dxt: bool | None,
    timeout: float | None,
    memory_limit: str | None,
    thresholds: Path | None,
    data_dir: Path | None,
    database_url: str | None,
    combine_jobs: bool = False,
) -> int:
    from rich.console import Console

    from iodiag.batch import engine
    from iodiag.batch.inputs import expand
    from iodiag.cli.common import CliError, error_line
    from iodiag.core.thresholds import load_thresholds
    from iodiag.jobs.cluster import connect

    if scheduler and workers is not None:
        raise CliError("--workers sizes the local cluster; with --scheduler the cluster's own workers are used")
    if scheduler and not re.match(r"^(tcp|tls|inproc|ucx|ws|wss)://\S+$", scheduler):
        raise CliError(f"--scheduler {scheduler!r}: expected an address like tcp://HOST:8786")
    if owner is not None and not _USER.match(owner):
        raise CliError(f"--owner {owner!r}: not a valid user name")
    if out is not None and owner is not None:
        raise CliError("--owner applies to the store; Parquet rows keep each log's user")
    if combine_jobs and out is None:
        # The store keeps each analysis's log to serve and re-run it; a combined job has no one log.
        raise CliError("--combine-jobs writes Parquet (--out DIR); the service's store holds one log per analysis")
    if out is not None and out.exists() and not out.is_dir():
        raise CliError(f"--out {out}: exists and is not a directory")
    st = settings_for(data_dir, database_url)
    thresholds_path = thresholds or st.thresholds_file
    load_thresholds(thresholds_path)  # a bad file is a bad argument, not a failure of every log
    opts = engine.Options(
        kind="facts" if out is not None else "pipeline",
        read_dxt=st.job_read_dxt if dxt is None else dxt,
        timeout_s=timeout if timeout is not None else st.job_timeout_s,
        memory_limit_bytes=parse_size(memory_limit) if memory_limit is not None else st.job_memory_limit_bytes,
        thresholds_path=str(thresholds_path.resolve()) if thresholds_path else None,
        combine_jobs=combine_jobs,
    )
    if opts.memory_limit_bytes < 64 << 20:
        raise CliError("--memory-limit must be at least 64MiB")
    paths = expand(inputs)
    if not paths:
        raise CliError("no Darshan logs found (directories are searched for *.darshan)")

    run_id = engine.new_run_id()
    sink: engine.Sink
    if out is not None:
        from iodiag.batch.parquet import ParquetSink

        sink = ParquetSink(out, run_id, uid_names=uid_names)
        where = f"Parquet in {out}"
    else:
        from iodiag.batch.store_sink import StoreSink

        sink = StoreSink(st, run_id, owner=owner, uid_names=uid_names)
        where = f"the store ({sink.db.redacted_url()})"

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    with connect(scheduler, workers or os.cpu_count() or 1) as client, _Progress(err) as progress:
        summary = engine.run(paths, client, opts, sink, progress, output=where, run_id=run_id)
    for f in summary.failures[:_MAX_LISTED]:
        error_line(f"{f.path}: {f.error}", err)
    if len(summary.failures) > _MAX_LISTED:
        error_line(f"... and {len(summary.failures) - _MAX_LISTED} more failures (all in the run summary)", err)
    _print_summary(summary, err)
    return EXIT_FAILED if summary.failed else EXIT_OK


def _print_summary(s: BatchSummary, console: Console) -> None:
    parts = [f"{s.done} analyzed", f"{s.failed} failed", f"{s.skipped} already analyzed"]
    if s.duplicates:
        parts.append(f"{s.duplicates} duplicate copies")
    if s.combined_jobs:
        parts.append(f"{s.combined_jobs} multi-log jobs combined")
    rate = f", {s.logs_per_s:.2f} logs/s on {s.worker_threads} worker threads" if s.done + s.failed else ""
    console.print(
        f"iodiag: {s.logs_listed} logs: {', '.join(parts)}; {s.analysis_seconds:.1f} s{rate}; into {s.output} "
        f"(run {s.run_id})",
        soft_wrap=True,
        markup=False,
        highlight=False,
    )


def _report_system(
    output: str,
    from_store: bool,
    parquet: Path | None,
    since: str | None,
    until: str | None,
    fmt: ReportFormat | None,
    top: int,
    data_dir: Path | None,
    database_url: str | None,
) -> None:
    from iodiag.cli.common import CliError, write_file, write_stdout

    if from_store == (parquet is not None):
        raise CliError("give exactly one source: --from-store or --parquet DIR")
    if parquet is not None and not (parquet / "jobs").is_dir():
        raise CliError(f"--parquet {parquet}: no jobs/ directory (write one with `iodiag batch --out DIR`)")
    lo = parse_when(since, "--since") if since else None
    hi = parse_when(until, "--until") if until else None
    if fmt is None:
        if output == "-" or output.lower().endswith(".json"):
            fmt = ReportFormat.json
        elif output.lower().endswith((".html", ".htm")):
            fmt = ReportFormat.html
        else:
            raise CliError(f"-o {output}: cannot tell the format; end it in .html or .json, or give --format")
    target = None if output == "-" else Path(output)
    if target is not None and not target.parent.is_dir():
        raise CliError(f"cannot write {output}: directory {target.parent} does not exist")

    from iodiag.batch import system_report

    if parquet is not None:
        from iodiag.batch.parquet import read_frames

        report = system_report.build(
            read_frames(parquet), since=lo, until=hi, top_n=top, source_label=f"parquet:{parquet}"
        )
    else:
        from iodiag.batch.store_sink import open_store

        db, _ = open_store(settings_for(data_dir, database_url))
        try:
            with db.read() as s:
                report = system_report.build(s, since=lo, until=hi, top_n=top, source_label="store")
        finally:
            db.dispose()
    if fmt is ReportFormat.html:
        from iodiag.batch.system_html import render

        text = render(report)
    else:
        text = json.dumps(report.model_dump(mode="json"), indent=2) + "\n"
    if target is None:
        write_stdout(text)
    else:
        write_file(target, text)
        sys.stderr.write(f"iodiag: system report over {report.jobs} jobs written to {target}\n")
