"""The ``iodiag`` command: assembles the command modules on the shared app (``common.py``).

Each ``*_cmd.py`` registers its commands and keeps its heavy imports inside them, so ``iodiag --help`` stays fast.
"""

from __future__ import annotations

import os
import sys

from iodiag.cli import (
    analyze_cmd,
    ask_cmd,
    batch_cmd,
    compare_cmd,
    eval_cmd,
    knowledge_cmd,
    serve_cmd,
    synth_cmd,
)
from iodiag.cli.common import PROG, app

for module in (analyze_cmd, ask_cmd, compare_cmd, synth_cmd, eval_cmd, serve_cmd, knowledge_cmd, batch_cmd):
    module.register(app)


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
