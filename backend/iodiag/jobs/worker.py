"""An analysis worker process: ``python -m iodiag.jobs.worker CMD_FD EVENT_FD PARENT_PID``.

It reads one ``PipelineInput`` per line from CMD_FD and answers on EVENT_FD with JSON lines: ``stage``
events, then ``done`` (with the ``JobResult``) or ``error``. It is single-threaded on purpose: the
Darshan reader forks, which is only safe in a process without other threads. It dies with the
server (PR_SET_PDEATHSIG), so a killed server leaves no worker finishing a job it no longer owns.
"""

from __future__ import annotations

import sys
from typing import Any

from iodiag.core.childproc import Send, serve

_NICENESS = 19  # analyses are background work: when they saturate the CPUs, the API must still answer at once


def _warm() -> None:
    import iodiag.analysis.plots.data
    import iodiag.jobs.executor
    import iodiag.render.html
    import iodiag.render.markdown  # noqa: F401


def _handle(line: str, send: Send) -> Any:
    from iodiag.jobs.executor import run
    from iodiag.jobs.pipeline import PipelineInput

    spec = PipelineInput.model_validate_json(line)
    result = run(spec, lambda stage, p: send({"event": "stage", "stage": stage, "progress": p}))
    return result.model_dump(mode="json")


def main(argv: list[str]) -> None:
    from iodiag.jobs.pipeline import JobError

    serve(argv, _handle, warm=_warm, expected=(JobError,), niceness=_NICENESS)


if __name__ == "__main__":
    main(sys.argv)
