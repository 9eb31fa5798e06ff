"""The analysis helper of a Dask worker: ``python -m iodiag.jobs.child CMD_FD EVENT_FD PARENT_PID``.

It reads one request per line on CMD_FD (``{"task": Task, "out_dir": DIR}``) and answers on
EVENT_FD with JSON lines: ``ready`` once its imports are done, then per task ``done`` (a
``ChildReply``) or ``error`` (one line). It is a separate, single-threaded process because a Dask
worker runs tasks on threads next to its event loop, and the Darshan reader forks: forking is only
safe without other threads. Being a process also lets the worker kill an analysis that runs past
its time or memory limit without losing itself. It dies with the worker (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import json
import resource
import sys
import zlib
from pathlib import Path
from typing import Any

from iodiag.core.childproc import Send, serve


def _reader_peak() -> int:
    # ru_maxrss of waited-for children: the forked Darshan readers (KiB on Linux).
    return int(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024


def handle(task_json: str, out_dir: str) -> dict[str, Any]:
    from iodiag.jobs.models import ChildReply, Task
    from iodiag.jobs.pipeline import read_and_analyze, run
    from iodiag.jobs.report_facts import from_report

    task = Task.model_validate_json(task_json)
    spec = task.spec.model_copy(update={"out_dir": out_dir})
    if task.kind == "pipeline":
        result = run(spec, lambda _stage, _p: None)
        report = json.loads(zlib.decompress(Path(result.outputs["json"]).read_bytes()))
        facts, findings = from_report(report)
        reply = ChildReply(facts=facts, findings=findings, pipeline=result, reader_peak_bytes=_reader_peak())
        return reply.model_dump(mode="json")
    _, report_model = read_and_analyze(spec, lambda _stage, _p: None, thresholds_label="thresholds file")
    facts, findings = from_report(report_model.model_dump(mode="json"))
    return ChildReply(facts=facts, findings=findings, reader_peak_bytes=_reader_peak()).model_dump(mode="json")


def _warm() -> None:
    import iodiag.analysis.plots.data
    import iodiag.jobs.report_facts
    import iodiag.render.html
    import iodiag.render.markdown  # noqa: F401


def main(argv: list[str]) -> None:
    from iodiag.jobs.pipeline import JobError

    def one(line: str, _send: Send) -> dict[str, Any]:
        request = json.loads(line)
        return handle(request["task"], request["out_dir"])

    serve(argv, one, warm=_warm, expected=(JobError,))


if __name__ == "__main__":
    main(sys.argv)
