"""``iodiag hook flush``: send the logs that the scheduler hooks spooled while the server was down.

The Slurm epilog and PBS epilogue (hooks/, docs/hooks.md) write one record per log they could not deliver
into their spool directory; the next epilog on the node resends them, and this command does it on demand
(after an outage, or from a timer). Registered on the main app by ``hook_cmd.register(app)``.

A record is a small text file ``*.rec``: the line ``iodiag-hook-spool 1``, then ``key=value`` lines (path,
user, job_id, mode, ...). In the path and job_output values a backslash, line feed and carriage return are
written ``\\\\``, ``\\n`` and ``\\r``, so any file name fits on one line.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from iodiag.cli.common import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, command_group

DEFAULT_CONF = Path("/etc/iodiag/hook.env")
DEFAULT_SPOOL = Path("/var/spool/iodiag-hook")
RECORD_MAGIC = b"iodiag-hook-spool 1"
_CONF_KEYS = ("IODIAG_URL", "IODIAG_TOKEN", "IODIAG_HOOK_SPOOL")
_NAME = re.compile(r"[A-Za-z0-9._@-]+")
# Answers about the request rather than the log (a redirect, the token, a wrong URL): every other log would
# get the same, and none of them is at fault, so all stay spooled until the setting is fixed.
_MISCONFIGURED = frozenset({401, 404, 405})


@dataclass(frozen=True)
class Record:
    file: Path
    log: Path
    user: str
    job_id: str
    mode: str


def register(app: typer.Typer) -> None:
    hook_app = command_group(app, "hook", "The scheduler hooks' spool: logs waiting for the server.")

    @hook_app.command("flush")
    def flush(
        spool: Annotated[
            Path | None,
            typer.Option(
                "--spool",
                help=f"Spool directory (default: IODIAG_HOOK_SPOOL, from the environment or the hook's settings "
                f"file, else {DEFAULT_SPOOL}).",
                show_default=False,
            ),
        ] = None,
        url: Annotated[
            str | None, typer.Option("--url", help="Server URL (default: IODIAG_URL).", show_default=False)
        ] = None,
        token: Annotated[
            str | None,
            typer.Option("--token", help="A token with role hook (default: IODIAG_TOKEN).", show_default=False),
        ] = None,
        conf: Annotated[
            Path | None,
            typer.Option(
                "--conf",
                help=f"The hook's settings file, for what neither an option nor the environment gives "
                f"(default: IODIAG_HOOK_CONF, else {DEFAULT_CONF} when readable).",
                show_default=False,
            ),
        ] = None,
        tries: Annotated[
            int, typer.Option("--tries", help="Tries per log on no answer, 408, 429 or 5xx (with backoff).", min=1)
        ] = 6,
        timeout: Annotated[float, typer.Option(help="Seconds per HTTP request.", min=0.1)] = 30.0,
    ) -> None:
        """Send the logs the hooks spooled; prints one line per log sent: LOG, id, new|existing.

        Sent: the record goes. Refused (4xx): the log is lost, a line with the reason, exit 2. No server: exit 1.
        """
        from iodiag.cli.common import CliError, fail

        try:
            settings = _settings(conf)
            base = (url or settings.get("IODIAG_URL") or "").rstrip("/")
            tok = token or settings.get("IODIAG_TOKEN") or ""
            where = spool or Path(settings.get("IODIAG_HOOK_SPOOL") or DEFAULT_SPOOL)
            if not base:
                raise CliError("no server: give --url, set IODIAG_URL, or put it in the hook's settings (--conf)")
            if not tok:
                raise CliError("no token: give --token, set IODIAG_TOKEN, or put it in the hook's settings (--conf)")
            code = _flush(where, base, tok, tries, timeout)
        except typer.Exit:
            raise
        except Exception as exc:
            fail(CliError(_os_error(exc)) if isinstance(exc, OSError) else exc)
        if code:
            raise typer.Exit(code)


def _os_error(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


# --- settings -----------------------------------------------------------------------------------------


def _settings(conf: Path | None) -> dict[str, str]:
    """IODIAG_URL, IODIAG_TOKEN and IODIAG_HOOK_SPOOL: from the environment, else the hook's settings file."""
    from iodiag.cli.common import CliError

    explicit = conf is not None or bool(os.environ.get("IODIAG_HOOK_CONF"))
    path = conf or Path(os.environ.get("IODIAG_HOOK_CONF") or DEFAULT_CONF)
    values: dict[str, str] = {}
    try:
        values = read_conf(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        # The default file is root's; a user flushing a spool of their own does without it.
        if explicit:
            raise CliError(f"cannot read the hook's settings {path}: {exc.strerror or exc}") from None
    return {k: os.environ.get(k) or values.get(k, "") for k in _CONF_KEYS}


def read_conf(text: str) -> dict[str, str]:
    """The ``KEY=value`` lines of a settings file that the hook sources with bash (quotes, comments, export)."""
    import shlex

    values: dict[str, str] = {}
    for line in text.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue  # an unbalanced quote: not a line this command needs
        for word in words:
            key, sep, value = word.partition("=")
            if sep and key in _CONF_KEYS:
                values[key] = value
    return values


# --- records ------------------------------------------------------------------------------------------


def _unescape(raw: bytes) -> bytes:
    return re.sub(rb"\\(.)", lambda m: {b"n": b"\n", b"r": b"\r"}.get(m[1], m[1]), raw)


def read_record(file: Path) -> Record:
    """A spool record; ValueError (one line) when it is not one."""
    lines = file.read_bytes().split(b"\n")
    if lines[0] != RECORD_MAGIC:
        raise ValueError("not a spool record")
    fields = dict(line.split(b"=", 1) for line in lines[1:] if b"=" in line)
    log = os.fsdecode(_unescape(fields.get(b"path", b"")))
    user = fields.get(b"user", b"").decode("ascii", "replace")
    job_id = fields.get(b"job_id", b"").decode("ascii", "replace")
    mode = fields.get(b"mode", b"upload").decode("ascii", "replace")
    if not log.startswith("/"):
        raise ValueError("spool record without an absolute path")
    if not _NAME.fullmatch(user) or not _NAME.fullmatch(job_id):
        raise ValueError("spool record without a valid user and job id")
    if mode not in ("upload", "path"):
        raise ValueError(f"spool record with an unknown mode {mode!r}")
    return Record(file, Path(log), user, job_id, mode)


def spooled(spool: Path) -> list[Path]:
    """The records in ``spool``, oldest first (their names start with the time they were written)."""
    if not spool.is_dir():
        return []
    # os.scandir, not glob: a spool this user may not read must say so, not look empty.
    with os.scandir(spool) as entries:
        return sorted(Path(e.path) for e in entries if e.name.endswith(".rec") and e.is_file())


@contextmanager
def _locked(spool: Path) -> Iterator[None]:
    """The lock the hooks take before resending: one sender at a time, so no log goes twice."""
    import fcntl

    with open(spool / ".lock", "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.stderr.write(f"iodiag: waiting for the hook that is resending from {spool}\n")
            fcntl.flock(fh, fcntl.LOCK_EX)
        yield


# --- sending ------------------------------------------------------------------------------------------


def _flush(spool: Path, base: str, token: str, tries: int, timeout: float) -> int:
    import httpx

    from iodiag.cli.common import CliError, stderr_console

    if spool.exists() and not spool.is_dir():
        raise CliError(f"{spool} is not a directory")
    if not spooled(spool):
        sys.stderr.write(f"iodiag: nothing spooled in {spool}\n")
        return EXIT_OK
    console = stderr_console()
    with (
        _locked(spool),
        httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as client,
        _progress(console) as advance,
    ):
        records = spooled(spool)  # again: the hook may have sent some while this waited for the lock
        return _send(client, records, tries, advance)


def _send(client: Any, records: list[Path], tries: int, advance: Any) -> int:
    from iodiag.cli.common import error_line
    from iodiag.cli.serve_cmd import Refused, Unreachable, submit_one

    advance(0, len(records))
    refused = kept = 0
    for i, file in enumerate(records):
        try:
            rec = read_record(file)
        except (ValueError, OSError) as exc:
            error_line(f"{file}: {getattr(exc, 'strerror', None) or exc}; left in place")
            refused += 1
            advance(i + 1, len(records))
            continue
        try:
            resp = submit_one(client, rec.log, rec.user, rec.job_id, rec.mode == "path", retries=tries)
            if not 200 <= resp.status_code < 300:
                raise Refused(f"{resp.status_code} unexpected answer (a redirect? check the URL)", resp.status_code)
            body = resp.json()
        except Refused as exc:
            if exc.status in _MISCONFIGURED or 300 <= exc.status < 400:
                left = _logs(len(records) - i)
                error_line(f"the server refused the request ({exc}): check the URL and token; {left} stay spooled")
                return EXIT_USAGE
            _remove(file)
            error_line(f"{rec.log}: log lost: {exc}")
            refused += 1
        except Unreachable as exc:
            error_line(f"{exc}; {_logs(len(records) - i)} stay spooled")
            return EXIT_USAGE if refused else EXIT_INTERNAL
        except RuntimeError as exc:
            error_line(f"{rec.log}: still spooled: {exc}")
            kept += 1
        else:
            _remove(file)
            typer.echo(f"{rec.log}\t{body['id']}\t{'new' if body.get('created') else 'existing'}")
        advance(i + 1, len(records))
    return EXIT_USAGE if refused else EXIT_INTERNAL if kept else EXIT_OK


def _logs(n: int) -> str:
    return f"{n} log" if n == 1 else f"{n} logs"


def _remove(file: Path) -> None:
    file.unlink(missing_ok=True)


@contextmanager
def _progress(console: Any) -> Iterator[Any]:
    """A rich progress bar on a terminal (the lines of the logs sent print above it); elsewhere nothing."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[bold]flush"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task("", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield advance
