"""What every ``iodiag`` command shares: the app, exit codes, errors and output helpers.

Command modules (``*_cmd.py``) import from here and register themselves on ``app``; ``main.py`` only
assembles them. Only typer and rich are imported at module level so ``iodiag --help`` stays fast; the
analysis (pandas, the Darshan library) is imported inside the commands.

Exit codes: 0 success; 2 a log could not be read, or a bad argument, thresholds file or output path;
1 an internal error (or, for evals and batches, a failed check). Every error is one line on stderr, never
a traceback (set ``IODIAG_DEBUG=1`` to get the traceback of an internal error).
"""

from __future__ import annotations

import os
import sys

# pydantic otherwise scans every installed distribution's entry points for plugins on first use;
# the command uses none, and the scan is a noticeable part of its start-up.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from iodiag import __version__

PROG = "iodiag"
EXIT_OK, EXIT_INTERNAL, EXIT_USAGE = 0, 1, 2
EXIT_FAILED = 1  # an eval or a batch ran, and something in it failed
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


def stderr_console() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def one_line(text: object) -> str:
    return " ".join(str(text).split())


def error_line(message: str, console: Console | None = None, *, internal: bool = False) -> None:
    """``iodiag: error: ...`` on stderr, on one line whatever the terminal width."""
    label = "internal error" if internal else "error"
    line = Text.assemble((f"{PROG}: {label}:", "bold red"), " ", one_line(message))
    (console or stderr_console()).print(line, soft_wrap=True, markup=False, highlight=False)


def internal_message(exc: BaseException) -> str:
    msg = one_line(exc)
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def debug_enabled() -> bool:
    return os.environ.get("IODIAG_DEBUG", "") not in ("", "0")


def fail(exc: BaseException) -> NoReturn:
    """Turn any exception escaping a command into one line and an exit code."""
    if isinstance(exc, CliError):
        error_line(str(exc))
        raise typer.Exit(exc.code)
    if debug_enabled():
        raise exc
    error_line(internal_message(exc), internal=True)
    raise typer.Exit(EXIT_INTERNAL)


def stdout_console() -> Console:
    tty = sys.stdout.isatty()
    width = None if tty or os.environ.get("COLUMNS") else NON_TTY_WIDTH
    return Console(highlight=False, width=width, emoji=False)


def write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def write_file(path: Path, text: str) -> None:
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


def output_target(output: str | None) -> Target:
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


def quiet_broken_pipe() -> None:
    """The reader of stdout went away (``| head``): stop quietly, without a second error at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def command_group(app: typer.Typer, name: str, help: str) -> typer.Typer:
    """A group added to ``app``: help without arguments, ``-h``, and no rich tracebacks for users."""
    group = typer.Typer(
        name=name,
        help=help,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.add_typer(group, name=name)
    return group


# --- the root command ---------------------------------------------------------------------------


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
