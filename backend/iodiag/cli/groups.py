"""Sub-command groups (``iodiag eval``, ``knowledge``, ``token``) that behave like the main app."""

from __future__ import annotations

import typer


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
