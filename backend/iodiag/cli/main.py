"""The ``iodiag`` command: assembles the command modules on the shared app (``common.py``).

Each ``*_cmd.py`` registers its commands and keeps its heavy imports inside them, so ``iodiag --help`` stays fast.
A run of one command registers only the module that owns it: typer builds every registered command's parameters
from its annotations before dispatching, about 0.1 s for all of them, which the plain ``analyze`` cannot afford.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from types import ModuleType

import typer

from iodiag.cli import (
    analyze_cmd,
    ask_cmd,
    batch_cmd,
    common,
    compare_cmd,
    eval_cmd,
    hook_cmd,
    knowledge_cmd,
    serve_cmd,
    synth_cmd,
)
from iodiag.cli.common import PROG

COMMAND_MODULES: dict[str, ModuleType] = {
    "analyze_cmd": analyze_cmd,
    "ask_cmd": ask_cmd,
    "compare_cmd": compare_cmd,
    "synth_cmd": synth_cmd,
    "eval_cmd": eval_cmd,
    "serve_cmd": serve_cmd,
    "hook_cmd": hook_cmd,
    "knowledge_cmd": knowledge_cmd,
    "batch_cmd": batch_cmd,
}
MODULES = tuple(COMMAND_MODULES)
"""Every command module, in the order their commands are listed in ``iodiag --help``. Importing them is cheap
(each keeps its heavy imports inside its commands); registering them is not."""
OWNERS = {
    "analyze": "analyze_cmd",
    "schema": "analyze_cmd",
    "ask": "ask_cmd",
    "compare": "compare_cmd",
    "synth": "synth_cmd",
    "eval": "eval_cmd",
    "serve": "serve_cmd",
    "token": "serve_cmd",
    "submit": "serve_cmd",
    "openapi": "serve_cmd",
    "hook": "hook_cmd",
    "knowledge": "knowledge_cmd",
    "batch": "batch_cmd",
    "report-system": "batch_cmd",
}
"""Command name -> the module that registers it (tests check this against what each module registers)."""


def modules_for(args: Sequence[str]) -> tuple[str, ...]:
    """The command modules a command line needs: the owner of its command, or all of them (help, a typo)."""
    # The root command's only option (--version) takes no value, so the first word is the command.
    word = next((a for a in args if not a.startswith("-")), None)
    owner = OWNERS.get(word or "")
    return (owner,) if owner else MODULES


_registered: set[str] = set()


def register(modules: Sequence[str]) -> typer.Typer:
    """The shared app with ``modules``' commands on it (each module once)."""
    for name in modules:
        if name not in _registered:
            COMMAND_MODULES[name].register(common.app)
            _registered.add(name)
    return common.app


def __getattr__(name: str) -> typer.Typer:
    # ``from iodiag.cli.main import app`` (tests, embedding) gets the app with every command on it.
    if name == "app":
        return register(MODULES)
    raise AttributeError(name)


def main() -> None:
    """Entry point of the ``iodiag`` command and ``python -m iodiag``.

    After the command has finished and its output is flushed, the process ends without the
    interpreter's teardown: freeing pandas, numpy and the Darshan library's state one object at a
    time costs a tenth of a second and does nothing a short-lived command needs.
    """
    code = 0
    app = register(modules_for(sys.argv[1:]))
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
