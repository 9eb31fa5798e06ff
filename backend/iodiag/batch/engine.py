"""A batch: hash the logs, skip those already analyzed, run the rest as Dask tasks, hand results to a sink.

The client keeps a bounded number of tasks in flight (a few per worker thread) rather than
submitting every log at once: a facility backfill is hundreds of thousands of logs, and the
scheduler's memory and the time to a first result should not grow with that number. The sink
runs in this process only, so the database has one writer however many workers there are.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from iodiag.batch.inputs import LogItem, group_jobs, hash_all, unique
from iodiag.jobs.dask_lib import distributed
from iodiag.jobs.models import Task, TaskKind, TaskResult
from iodiag.jobs.pipeline import PipelineInput

_IN_FLIGHT_PER_THREAD = 4
_MIN_IN_FLIGHT = 8


class Failure(BaseModel):
    path: str
    sha256: str | None
    error: str


class BatchSummary(BaseModel):
    run_id: str
    started_at: datetime
    finished_at: datetime | None = None
    output: str
    logs_listed: int = 0
    duplicates: int = Field(default=0, description="byte-identical copies of another listed log")
    combined_jobs: int = Field(default=0, description="jobs of several logs analyzed as one (--combine-jobs)")
    skipped: int = Field(default=0, description="already analyzed (resumed)")
    submitted: int = 0
    done: int = 0
    failed: int = 0
    failures: list[Failure] = Field(default_factory=list)
    worker_threads: int = 0
    analysis_seconds: float = Field(default=0.0, description="wall time of the analysis stage")
    logs_per_s: float = 0.0


class Sink(Protocol):
    def done(self, shas: list[str]) -> set[str]:
        """Of these contents, those already analyzed successfully (they are skipped)."""
        ...

    def add(self, item: LogItem, result: TaskResult) -> None: ...

    def close(self, summary: BatchSummary) -> None: ...


class Reporter(Protocol):
    def stage(self, name: str, total: int) -> None: ...

    def advance(self, result: TaskResult | None = None) -> None: ...


@dataclass(frozen=True)
class Options:
    kind: TaskKind
    read_dxt: bool
    timeout_s: float
    memory_limit_bytes: int
    thresholds_path: str | None = None
    combine_jobs: bool = False


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


def task_for(item: LogItem, opts: Options) -> Task:
    more = item.members[1:]
    spec = PipelineInput(
        job_id=0,
        log_path=str(item.path.resolve()),
        combine_with=[str(p.resolve()) for p in more],
        display_name=item.path.name + (f" + {len(more)} more logs" if more else ""),
        read_dxt=opts.read_dxt,
        read_timeout_s=opts.timeout_s,
        read_memory_limit_bytes=opts.memory_limit_bytes,
        thresholds_path=opts.thresholds_path,
        out_dir="",  # the worker's own temporary directory
    )
    # A combined job's key is not one file's hash: the worker cannot check it (each log was hashed here).
    return Task(kind=opts.kind, spec=spec, sha256=None if more else item.sha256)


def _future_error(exc: BaseException) -> str:
    name = type(exc).__name__
    detail = " ".join(str(exc).split())
    if name == "KilledWorker":
        return "the Dask workers running it kept dying (KilledWorker)"
    if name == "CancelledError":
        return "the Dask task was cancelled (the scheduler lost it)"
    return f"{name}: {detail}" if detail else name


def run(
    paths: list[Path],
    client: Any,
    opts: Options,
    sink: Sink,
    reporter: Reporter,
    *,
    output: str,
    run_id: str | None = None,
) -> BatchSummary:
    from iodiag.jobs import runner

    summary = BatchSummary(
        run_id=run_id or new_run_id(), started_at=datetime.now(UTC), output=output, logs_listed=len(paths)
    )
    reporter.stage("Hashing", len(paths))
    items, summary.duplicates = unique(hash_all(paths, lambda: reporter.advance()))
    if opts.combine_jobs:
        items, summary.combined_jobs = group_jobs(items)

    def record(item: LogItem, result: TaskResult) -> None:
        sink.add(item, result)
        if result.ok:
            summary.done += 1
        else:
            summary.failed += 1
            summary.failures.append(Failure(path=str(item.path), sha256=item.sha256, error=result.error or "failed"))
        reporter.advance(result)

    done = sink.done([it.sha256 for it in items if it.sha256 is not None])
    todo = [it for it in items if it.sha256 is None or it.sha256 not in done]
    summary.skipped = len(items) - len(todo)
    summary.submitted = len(todo)

    threads = sum(w.get("nthreads", 1) for w in client.scheduler_info(n_workers=-1)["workers"].values())
    summary.worker_threads = threads
    reporter.stage("Starting workers", 0)
    # Every worker's helper imports at once, before the clock starts. A worker that cannot start one
    # fails each of its logs with the reason, which says more than failing the batch here would.
    with contextlib.suppress(Exception):
        client.run(runner.warm)

    reporter.stage("Analyzing", len(todo))
    started = time.monotonic()
    queue = iter(todo)
    in_flight: dict[Any, LogItem] = {}
    # The loop given: our client is not the process's default one (a library must not set that).
    pending = distributed().as_completed(loop=client.loop)

    def submit_next() -> bool:
        for item in queue:
            if item.sha256 is None:  # unreadable here: nothing to send
                record(item, TaskResult.failure(str(item.path), None, item.error or "cannot read file"))
                continue
            fut = client.submit(runner.run_task, task_for(item, opts), key=f"iodiag-{uuid.uuid4().hex}", pure=False)
            in_flight[fut] = item
            pending.add(fut)
            return True
        return False

    for _ in range(max(_MIN_IN_FLIGHT, _IN_FLIGHT_PER_THREAD * max(threads, 1))):
        if not submit_next():
            break
    for fut in pending:
        item = in_flight.pop(fut)
        try:
            result: TaskResult = fut.result()
        except Exception as exc:
            result = TaskResult.failure(str(item.path), item.sha256, _future_error(exc), internal=True)
        fut.release()
        record(item, result)
        submit_next()

    summary.analysis_seconds = time.monotonic() - started
    analyzed = summary.done + summary.failed
    summary.logs_per_s = analyzed / summary.analysis_seconds if summary.analysis_seconds > 0 else 0.0
    summary.finished_at = datetime.now(UTC)
    sink.close(summary)
    return summary
