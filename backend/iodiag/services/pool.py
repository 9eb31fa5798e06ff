"""The analysis worker pool: bounded concurrency, jobs claimed from the database queue, leases kept alive.

One thread per slot claims a job (``store.queue.claim``) and hands it to that slot's worker
process, watching its wall-clock time and resident memory; a heartbeat thread renews the leases of
every job this server holds and re-queues jobs whose lease ran out elsewhere. The threads only
wait on pipes and the database; the analysis itself runs in the worker processes.

A job is never lost and never stuck: a killed server's leases run out and another server (or this
one, restarted) re-queues it (until ``job_max_attempts``), and a clean shutdown hands it back at
once. A job whose worker dies under a living server, or passes its time or memory limit, is
"rejected" at once: the cause is in the log, and retrying it would only take slots from others.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from iodiag.core.childproc import ChildGone, PipeChild
from iodiag.core.host import hostname, is_gone, process_tag
from iodiag.core.settings import Settings
from iodiag.jobs.pipeline import JobResult, PipelineInput
from iodiag.store import BlobStore, Database
from iodiag.store import queue as jobs

log = logging.getLogger("iodiag.pool")
_WATCH_S = 0.25
_RESPAWN_BACKOFF_S = 1.0
_READY_TIMEOUT_S = 120.0
_QUIET_START_S = 0.5  # stages of an analysis younger than this are not written (see _watch)

OnFinished = Callable[[str, float], None]
"""Told each analysis that ends here: its outcome ("done" or "failed") and its seconds."""


_ChildGone = ChildGone


def owner_prefix() -> str:
    return f"{hostname()}:"


def owner_is_dead(owner: str) -> bool:
    """Whether a lease owner named by this host (``host:boot:pid:nonce``) is certainly gone: another boot, or
    no such process. An owner named the old way, or whose pid now runs something, is left to its lease."""
    parts = owner.split(":")
    if len(parts) != 4 or not parts[2].isdigit():
        return False
    return is_gone(*parts[:3])


class _Child(PipeChild):
    """A worker process (``iodiag.jobs.worker``) and the two pipes to it."""

    def __init__(self) -> None:
        super().__init__("iodiag.jobs.worker", "worker process")


class WorkerPool:
    def __init__(
        self, settings: Settings, db: Database, blobs: BlobStore, on_finished: OnFinished | None = None
    ) -> None:
        self.settings = settings
        self.db = db
        self.blobs = blobs
        self.on_finished = on_finished
        # host:boot:pid:nonce — a restarted server on this host can tell its dead predecessor's leases
        # (another boot, or a pid that is gone) and take their jobs back at once (``_take_back_dead``).
        self.owner = f"{process_tag()}:{secrets.token_hex(4)}"
        self.jobs_dir = settings.data_dir / "jobs"
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._slots = [_Slot(self, i) for i in range(settings.workers)]
        self._beat = threading.Thread(target=self._heartbeat, name="iodiag-heartbeat", daemon=True)

    # --- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> None:
        shutil.rmtree(self.jobs_dir, ignore_errors=True)
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        self._take_back_dead()
        self._reap()
        self._beat.start()
        for slot in self._slots:
            slot.thread.start()

    def stop(self, timeout: float = 15.0) -> None:
        """Kill the workers and hand every job this server holds back to the queue."""
        self._stop.set()
        self._wake.set()
        deadline = time.monotonic() + timeout
        for slot in self._slots:
            slot.thread.join(max(0.1, deadline - time.monotonic()))
        self._beat.join(max(0.1, deadline - time.monotonic()))

    def wake(self) -> None:
        """A job was queued here: an idle slot claims it now instead of at its next poll."""
        self._wake.set()

    def alive(self) -> bool:
        """Every slot's thread runs and has had a worker process ready (its imports done) at least once."""
        return self._beat.is_alive() and all(s.thread.is_alive() and s.started.is_set() for s in self._slots)

    @property
    def size(self) -> int:
        return len(self._slots)

    def busy(self) -> int:
        return sum(1 for s in self._slots if s.job is not None)

    # --- internals -----------------------------------------------------------------------------------

    def _wait_for_work(self) -> None:
        if self._wake.wait(self.settings.poll_s):
            self._wake.clear()

    def _take_back_dead(self) -> None:
        """Jobs that a server on this host held when it died: end their leases now (not in ``lease_s``)."""
        try:
            with self.db.write() as s:
                n = jobs.expire_leases(s, owner_prefix(), owner_is_dead)
            if n:
                log.info("took back %d job(s) held by a server on this host that is gone", n)
        except Exception:
            log.exception("taking back the jobs of a dead server failed")

    def _reap(self) -> None:
        try:
            with self.db.write() as s:
                n = jobs.reap(s, self.settings.job_max_attempts)
            if n:
                log.info("re-queued %d job(s) whose lease ran out", n)
                self._wake.set()
        except Exception:
            log.exception("reaping expired leases failed")

    def _heartbeat(self) -> None:
        # Several beats per lease, whatever the settings say: one late beat must not lose a job.
        every = min(self.settings.heartbeat_s, self.settings.lease_s / 3)
        while not self._stop.wait(every):
            try:
                with self.db.write() as s:
                    jobs.renew(s, self.owner, self.settings.lease_s)
            except Exception:
                log.exception("renewing leases failed")
            self._reap()

    def _finished(self, outcome: str, seconds: float) -> None:
        if self.on_finished is not None:
            self.on_finished(outcome, seconds)


class _Slot:
    """One unit of concurrency: a thread, the worker process it drives, the job it holds."""

    def __init__(self, pool: WorkerPool, index: int) -> None:
        self.pool = pool
        self.child: _Child | None = None
        self.job: jobs.Claimed | None = None
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"iodiag-slot-{index}", daemon=True)

    def _loop(self) -> None:
        pool = self.pool
        while not pool._stop.is_set():
            try:
                if self.child is None or not self.child.alive():
                    self._respawn()
                with pool.db.write() as s:
                    self.job = jobs.claim(s, pool.owner, pool.settings.lease_s, pool.settings.user_concurrency)
                if self.job is None:
                    pool._wait_for_work()
                    continue
                pool._wake.set()  # there may be more: let another idle slot look too
                self._run(self.job)
            except Exception:
                log.exception("worker slot error")
                self._release_quietly(count_attempt=False)
                pool._stop.wait(_RESPAWN_BACKOFF_S)
            finally:
                self.job = None
        if self.child is not None:
            self.child.kill()

    def _respawn(self) -> None:
        if self.child is not None:
            self.child.kill()
            self.child = None
        child = _Child()
        try:
            child.wait_ready(_READY_TIMEOUT_S)
        except (_ChildGone, RuntimeError):
            child.kill()
            raise
        self.child = child
        self.started.set()

    def _release_quietly(self, *, count_attempt: bool) -> None:
        if self.job is None:
            return
        with contextlib.suppress(Exception), self.pool.db.write() as s:
            jobs.release(s, self.pool.owner, self.job, count_attempt=count_attempt)

    def _fail(self, job: jobs.Claimed, error: str, seconds: float) -> None:
        with self.pool.db.write() as s:
            held = jobs.fail(s, self.pool.owner, job, error, seconds)
        if held:
            self.pool._finished("failed", seconds)

    def _run(self, job: jobs.Claimed) -> None:
        pool, st = self.pool, self.pool.settings
        log_path = pool.blobs.path(job.sha256)
        if not log_path.is_file():
            self._fail(job, "the stored log is missing", 0.0)
            return
        out_dir = pool.jobs_dir / f"{job.job_id}-{job.attempts}"
        out_dir.mkdir(parents=True, exist_ok=True)
        spec = PipelineInput(
            job_id=job.job_id,
            log_path=str(log_path),
            display_name=job.filename or log_path.name,
            nodes=job.nodes,
            cb_nodes=job.cb_nodes,
            read_dxt=st.job_read_dxt,
            read_timeout_s=st.job_timeout_s,
            read_memory_limit_bytes=st.job_memory_limit_bytes,
            thresholds_path=str(st.thresholds_file) if st.thresholds_file else None,
            out_dir=str(out_dir),
        )
        try:
            self._watch(job, spec)
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)

    def _watch(self, job: jobs.Claimed, spec: PipelineInput) -> None:
        pool, st = self.pool, self.pool.settings
        child = self.child
        assert child is not None
        started = time.monotonic()
        pending: tuple[str, float] | None = None  # the newest stage not yet written
        try:
            child.send_line(spec.model_dump_json())
            while True:
                elapsed = time.monotonic() - started
                if pool._stop.is_set():
                    child.kill()
                    self._release_quietly(count_attempt=False)
                    return
                if elapsed > st.job_timeout_s:
                    child.kill()
                    self._fail(
                        job, f"rejected: the analysis exceeded the time limit of {st.job_timeout_s:g} s", elapsed
                    )
                    return
                if child.rss() > st.job_memory_limit_bytes:
                    child.kill()
                    limit_mib = st.job_memory_limit_bytes >> 20
                    self._fail(job, f"rejected: the analysis exceeded the memory limit of {limit_mib} MiB", elapsed)
                    return
                msg = child.recv(_WATCH_S) or {}
                event = msg.get("event")
                if event == "stage":
                    pending = (str(msg["stage"]), float(msg["progress"]))
                elif event == "done":
                    self._complete(job, JobResult.model_validate(msg["result"]), time.monotonic() - started)
                    return
                elif event == "error":
                    if msg.get("internal"):
                        log.error("analysis %s: %s", job.analysis_id, msg.get("message"))
                    self._fail(job, str(msg.get("message", "analysis failed")), time.monotonic() - started)
                    return
                # Most analyses take a fraction of a second: their stages would only be database writes
                # competing with submissions. A stage is written once the analysis has run for a while.
                if pending is not None and time.monotonic() - started >= _QUIET_START_S:
                    with pool.db.write() as s:
                        held = jobs.set_progress(s, pool.owner, job, *pending)
                    pending = None
                    if not held:
                        child.kill()  # lost the lease (deleted, or taken over): stop working on it
                        return
        except _ChildGone:
            self._crashed(job, child)

    def _crashed(self, job: jobs.Claimed, child: _Child) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.proc.wait(timeout=5)
        how = child.how_it_died()
        log.warning("worker for analysis %s %s (attempt %d)", job.analysis_id, how, job.attempts)
        # The server is alive, so what killed its worker was in this log: another attempt would only
        # crash the next worker and hold a slot twice more. (A dead server's jobs come back by lease.)
        self._fail(job, f"rejected: the analysis worker {how} while analyzing this log; it is not retried", 0.0)

    def _complete(self, job: jobs.Claimed, result: JobResult, seconds: float) -> None:
        pool = self.pool
        outputs = {kind: Path(path).read_bytes() for kind, path in result.outputs.items()}
        outcome = jobs.Outcome(
            exe=result.exe,
            job_id=result.jobid,
            counts=result.counts,
            findings=result.findings,
            outputs=outputs,
            stats=result.stats.model_dump() if result.stats is not None else {},
        )
        with pool.db.write() as s:
            held = jobs.complete(s, pool.owner, job, outcome, seconds)
        if held:
            pool._finished("done", seconds)
        else:
            log.info("analysis %s finished after its lease was lost; result discarded", job.analysis_id)
