"""An analysis worker process: ``python -m iodiag.services.worker CMD_FD EVENT_FD PARENT_PID``.

It reads one ``JobSpec`` per line from CMD_FD and answers on EVENT_FD with JSON lines: ``stage``
events, then ``done`` (with the ``JobResult``) or ``error``. It is single-threaded on purpose: the
Darshan reader forks, which is only safe in a process without other threads. It dies with the
server (PR_SET_PDEATHSIG), so a killed server leaves no worker finishing a job it no longer owns.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import sys
from typing import Any

_PR_SET_PDEATHSIG = 1
_NICENESS = 5


def _die_with_parent(parent_pid: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the pool still kills its workers on shutdown
        pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def main(argv: list[str]) -> None:
    cmd_fd, evt_fd, parent = int(argv[1]), int(argv[2]), int(argv[3])
    _die_with_parent(parent)
    # Analyses are background work: when they saturate the CPUs, the API must still answer at once.
    with contextlib.suppress(OSError):
        os.nice(_NICENESS)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    events = os.fdopen(evt_fd, "w", buffering=1)

    def send(obj: dict[str, Any]) -> None:
        events.write(json.dumps(obj) + "\n")
        events.flush()

    # Import everything now so the first job costs what the others do.
    import iodiag.analysis.plots
    import iodiag.render.html
    import iodiag.render.markdown  # noqa: F401
    from iodiag.batch.dask_exec import run
    from iodiag.services.pipeline import JobError, JobSpec

    send({"event": "ready"})
    with os.fdopen(cmd_fd, "r") as commands:
        for line in commands:
            spec = JobSpec.model_validate_json(line)
            try:
                result = run(spec, lambda stage, p: send({"event": "stage", "stage": stage, "progress": p}))
            except JobError as exc:
                send({"event": "error", "message": _one_line(exc)})
            except MemoryError:
                send({"event": "error", "message": "out of memory while analyzing the log"})
            except Exception as exc:
                detail = _one_line(exc)
                send({"event": "error", "internal": True,
                      "message": f"internal error: {type(exc).__name__}" + (f": {detail}" if detail else "")})
            else:
                send({"event": "done", "result": result.model_dump()})


if __name__ == "__main__":
    main(sys.argv)
