"""What a Dask task runs: one log through this worker's helper process, under a time and memory limit.

Each Dask worker process keeps one helper (``child``), started on first use and reused, since its
imports cost more than analyzing a small log. The task thread sends it the log, then watches the
clock and the helper's resident memory exactly as the service's worker pool watches its workers,
and kills the helper (its process group: the forked reader too) when either limit is passed; the
next task starts a new one. Errors come back as a failed ``TaskResult`` with one line, never as a
task exception, so one bad log never costs a Dask retry.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import tempfile
import threading
import time
from typing import Any

from iodiag.core.childproc import ChildGone, PipeChild, vm_hwm
from iodiag.jobs.models import ChildReply, MemoryUse, Task, TaskResult

_WATCH_S = 0.25
_READY_TIMEOUT_S = 180.0  # imports on a loaded node; not part of any log's time limit
_HASH_CHUNK = 1 << 20


HelperGone = ChildGone


class Helper(PipeChild):
    """The helper process (``iodiag.jobs.child``) and the two pipes to it."""

    def __init__(self) -> None:
        super().__init__("iodiag.jobs.child", "analysis helper")

    def send(self, obj: dict[str, Any]) -> None:
        self.send_json(obj)

    def how_it_died(self, wait_s: float = 5.0) -> str:
        return super().how_it_died(wait_s)


_vm_hwm = vm_hwm


# One helper per Dask worker process; the lock keeps a worker with several threads to one task at a time.
_lock = threading.Lock()
_helper: Helper | None = None
_helper_peak = 0
_reader_peak = 0


def _ready_helper() -> Helper:
    global _helper
    if _helper is None or not _helper.alive():
        if _helper is not None:
            _helper.kill()
        helper = Helper()
        try:
            helper.wait_ready(_READY_TIMEOUT_S)
        except (HelperGone, RuntimeError):
            helper.kill()
            raise
        _helper = helper
    return _helper


def _drop_helper() -> None:
    global _helper, _helper_peak
    if _helper is not None:
        _helper_peak = max(_helper_peak, _helper.peak())
        _helper.kill()
        _helper = None


def warm() -> str:
    """Start this worker's helper now (``client.run(warm)``), so no log pays for its imports."""
    with _lock:
        _ready_helper()
    return _worker_name()


def shutdown() -> None:
    with _lock:
        _drop_helper()


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def run_task(task: Task) -> TaskResult:
    """Analyze one log (the Dask task). Never raises for a problem with the log."""
    path, sha = task.spec.log_path, task.sha256
    if sha is not None:
        try:
            if _sha256(path) != sha:
                return TaskResult.failure(
                    path, sha, "the log changed after it was listed (its content hash differs)", worker=_worker_name()
                )
        except OSError as exc:
            return TaskResult.failure(
                path, sha, f"cannot read the log on the worker ({exc.strerror or exc})", worker=_worker_name()
            )
    with _lock:
        result = _run_locked(task)
    result.memory = MemoryUse(
        worker_bytes=_vm_hwm(),
        helper_bytes=max(_helper_peak, _helper.peak() if _helper is not None else 0),
        reader_bytes=_reader_peak,
    )
    result.worker = _worker_name()
    return result


def _run_locked(task: Task) -> TaskResult:
    global _reader_peak
    spec, path, sha = task.spec, task.spec.log_path, task.sha256
    limit_s, limit_b = spec.read_timeout_s, spec.read_memory_limit_bytes
    try:
        helper = _ready_helper()
    except (HelperGone, RuntimeError, OSError) as exc:
        return TaskResult.failure(path, sha, f"cannot start the analysis helper: {exc}", internal=True)
    out_dir = tempfile.mkdtemp(prefix="iodiag-batch-")
    started = time.monotonic()
    try:
        helper.send({"task": task.model_dump_json(), "out_dir": out_dir})
        while True:
            elapsed = time.monotonic() - started
            if helper.rss() > limit_b:
                _drop_helper()
                return TaskResult.failure(
                    path, sha, f"the analysis exceeded the memory limit of {limit_b >> 20} MiB", seconds=elapsed
                )
            msg = helper.recv(max(0.0, min(_WATCH_S, limit_s - elapsed)))
            seconds = time.monotonic() - started
            if seconds > limit_s:  # an answer that came too late is a time-out too: the limit is the limit
                _drop_helper()
                return TaskResult.failure(
                    path, sha, f"the analysis exceeded the time limit of {limit_s:g} s", seconds=seconds
                )
            if msg is None:
                continue
            if msg.get("event") == "error":
                return TaskResult.failure(
                    path,
                    sha,
                    str(msg.get("message", "analysis failed")),
                    internal=bool(msg.get("internal")),
                    seconds=seconds,
                )
            if msg.get("event") == "done":
                reply = ChildReply.model_validate(msg["result"])
                _reader_peak = max(_reader_peak, reply.reader_peak_bytes)
                outputs: dict[str, bytes] = {}
                if reply.pipeline is not None:
                    for kind, file in reply.pipeline.outputs.items():
                        with open(file, "rb") as fh:
                            outputs[kind] = fh.read()
                return TaskResult(
                    path=path,
                    sha256=sha,
                    ok=True,
                    seconds=seconds,
                    facts=reply.facts,
                    findings=reply.findings,
                    pipeline=reply.pipeline,
                    outputs=outputs,
                )
    except HelperGone:
        how = helper.how_it_died()
        _drop_helper()
        return TaskResult.failure(
            path, sha, f"the analysis process {how}", internal=True, seconds=time.monotonic() - started
        )
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
