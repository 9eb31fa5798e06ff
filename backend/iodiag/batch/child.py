"""The analysis helper of a Dask worker: ``python -m iodiag.batch.child CMD_FD EVENT_FD PARENT_PID``.

It reads one request per line on CMD_FD (``{"task": Task, "out_dir": DIR}``) and answers on
EVENT_FD with JSON lines: ``ready`` once its imports are done, then per task ``done`` (a
``ChildReply``) or ``error`` (one line). It is a separate, single-threaded process because a Dask
worker runs tasks on threads next to its event loop, and the Darshan reader forks: forking is only
safe without other threads. Being a process also lets the worker kill an analysis that runs past
its time or memory limit without losing itself. It dies with the worker (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
import zlib
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the worker still kills its helper when it stops
        pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _reader_peak() -> int:
    # ru_maxrss of waited-for children: the forked Darshan readers (KiB on Linux).
    return int(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024


def handle(task_json: str, out_dir: str) -> dict[str, Any]:
    from iodiag.analysis import JobFacts, analyze
    from iodiag.batch.facts import from_report
    from iodiag.batch.models import ChildReply, Task
    from iodiag.core.thresholds import ThresholdError, load_thresholds
    from iodiag.ingest import LogReadError, load_profile
    from iodiag.services.pipeline import JobError, run

    task = Task.model_validate_json(task_json)
    spec = task.spec.model_copy(update={"out_dir": out_dir})
    if task.kind == "pipeline":
        result = run(spec, lambda _stage, _p: None)
        report = json.loads(zlib.decompress(Path(result.outputs["json"]).read_bytes()))
        facts, findings = from_report(report)
        reply = ChildReply(facts=facts, findings=findings, pipeline=result, reader_peak_bytes=_reader_peak())
        return reply.model_dump(mode="json")
    try:
        thresholds = load_thresholds(spec.thresholds_path)
    except ThresholdError as exc:
        raise JobError(f"thresholds file: {exc}") from None
    try:
        profile = load_profile(
            spec.log_path,
            # HEATMAP is small (ranks x bins) and gives a timeline when there is no trace.
            include=("HEATMAP", "DXT") if spec.read_dxt else ("HEATMAP",),
            timeout_s=spec.read_timeout_s,
            memory_limit_bytes=spec.read_memory_limit_bytes,
        )
    except LogReadError as exc:
        raise JobError(exc.reason) from None
    report_model = analyze(profile, thresholds, top_n=10, facts=JobFacts(nodes=spec.nodes, cb_nodes=spec.cb_nodes))
    facts, findings = from_report(report_model.model_dump(mode="json"))
    return ChildReply(facts=facts, findings=findings, reader_peak_bytes=_reader_peak()).model_dump(mode="json")


def main(argv: list[str]) -> None:
    cmd_fd, evt_fd, parent = int(argv[1]), int(argv[2]), int(argv[3])
    _die_with_parent(parent)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    events = os.fdopen(evt_fd, "w", buffering=1)

    def send(obj: dict[str, Any]) -> None:
        events.write(json.dumps(obj) + "\n")
        events.flush()

    # Import everything now, so the first task's time limit counts only its own work.
    import iodiag.analysis.plots
    import iodiag.batch.facts
    import iodiag.render.html
    import iodiag.render.markdown  # noqa: F401
    from iodiag.services.pipeline import JobError

    send({"event": "ready"})
    with os.fdopen(cmd_fd, "r") as commands:
        for line in commands:
            request = json.loads(line)
            try:
                reply = handle(request["task"], request["out_dir"])
            except JobError as exc:
                send({"event": "error", "message": _one_line(exc)})
            except MemoryError:
                send({"event": "error", "message": "out of memory while analyzing the log"})
            except Exception as exc:
                detail = _one_line(exc)
                send({"event": "error", "internal": True,
                      "message": f"internal error: {type(exc).__name__}" + (f": {detail}" if detail else "")})
            else:
                send({"event": "done", "result": reply})


if __name__ == "__main__":
    main(sys.argv)
