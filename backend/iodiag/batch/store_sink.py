"""Batch results in the service's store: each log becomes the Analysis row (with its findings and
outputs, and its log in the blob store) that the service's worker would have written for it.

The rows go through the service's own functions: ``analyses.create`` queues the analysis as an
upload would, and ``queue.complete`` / ``queue.fail`` finish it as the worker pool does. The job
row is taken under a batch lease inside the same transaction that creates it, so no service worker
ever sees it queued. Only this process writes (the Dask workers return their results here), which
is what SQLite wants; on PostgreSQL the content lock orders us with the service's intake.
"""

from __future__ import annotations

import json
import os
import socket
import time
import zlib
from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from iodiag.batch.engine import BatchSummary
from iodiag.batch.frames import Frames, user_name
from iodiag.batch.inputs import LogItem
from iodiag.core.settings import Settings
from iodiag.jobs.models import TaskResult
from iodiag.jobs.report_facts import from_report
from iodiag.store import BlobStore, BlobTooLarge, Database, migrate
from iodiag.store import analyses as repo
from iodiag.store import queue as jobs
from iodiag.store.models import Analysis, AnalysisOutput, Job, utcnow

SUBMITTED_BY = "batch"
_IN_CHUNK = 500
_LEASE_S = 300.0


def open_store(settings: Settings) -> tuple[Database, BlobStore]:
    db = Database(settings.effective_database_url)
    migrate.upgrade(db)
    return db, BlobStore(settings.data_dir)


class StoreSink:
    def __init__(self, settings: Settings, run_id: str, *, owner: str | None = None, uid_names: bool = True) -> None:
        self.settings = settings
        self.db, self.blobs = open_store(settings)
        self.run_id = run_id
        self.owner = owner
        self.uid_names = uid_names
        self.lease_owner = f"batch:{socket.gethostname()}:{os.getpid()}:{run_id}"
        self.busy = 0  # logs the service was analyzing at the same time: left to it

    def done(self, shas: list[str]) -> set[str]:
        found: set[str] = set()
        with self.db.read() as s:
            for i in range(0, len(shas), _IN_CHUNK):
                q = select(Analysis.sha256).where(
                    Analysis.status == "done", Analysis.sha256.in_(shas[i : i + _IN_CHUNK])
                )
                if self.owner is not None:
                    q = q.where(Analysis.owner == self.owner)
                found.update(s.scalars(q))
        return found

    def _owner_for(self, result: TaskResult) -> str:
        if self.owner is not None:
            return self.owner
        if result.ok and result.facts is not None:
            return user_name(result.facts.uid, self.uid_names)
        return SUBMITTED_BY

    def _store_log(self, item: LogItem) -> str | None:
        """Copy the log into the blob store; a one-line reason when that fails."""
        assert item.sha256 is not None
        if self.blobs.exists(item.sha256):
            return None
        try:
            with self.blobs.writer(self.settings.max_upload_bytes) as w, open(item.path, "rb") as fh:
                w.copy_from(fh)
                if w.finish() != item.sha256:
                    return "the log changed while it was being analyzed"
                self.blobs.commit(w, item.sha256)
        except BlobTooLarge as exc:
            return f"log too large: over the limit of {exc.limit} bytes (IODIAG_MAX_UPLOAD_BYTES)"
        except OSError as exc:
            return f"cannot copy the log into the store ({exc.strerror or exc})"
        return None

    def add(self, item: LogItem, result: TaskResult) -> None:
        if item.sha256 is None:
            return  # no content to key a row on: the run summary lists it
        problem = self._store_log(item)
        if problem is not None and result.ok:
            result = TaskResult.failure(result.path, result.sha256, problem, seconds=result.seconds)
        owner = self._owner_for(result)
        with self.db.write() as s:
            repo.lock_content(s, item.sha256)
            row = repo.find_by_content(s, owner, item.sha256)
            if row is None:
                row = repo.create(
                    s,
                    repo.NewAnalysis(
                        owner=owner,
                        submitted_by=SUBMITTED_BY,
                        sha256=item.sha256,
                        size_bytes=item.size,
                        filename=item.path.name[:255],
                        source="path",
                        source_path=str(item.path.resolve()),
                    ),
                )
            elif row.status == "done":
                return  # finished meanwhile (the service, or another batch)
            elif row.status == "failed":
                repo.retry(s, row)
            claimed = self._take(s, row)
            if claimed is None:
                self.busy += 1  # a service worker holds it: its result will be the one kept
                return
            row.started_at = utcnow() - timedelta(seconds=result.seconds)
            if result.ok:
                assert result.pipeline is not None, "store output needs the pipeline task kind"
                p = result.pipeline
                outcome = jobs.Outcome(
                    exe=p.exe, job_id=p.jobid, counts=p.counts, findings=p.findings, outputs=result.outputs
                )
                jobs.complete(s, self.lease_owner, claimed, outcome, result.seconds)
            else:
                jobs.fail(s, self.lease_owner, claimed, result.error or "analysis failed", result.seconds)

    def _take(self, s: Session, row: Analysis) -> jobs.Claimed | None:
        """Lease the analysis's queued job to this batch, as the pool's ``claim`` would (but this job, not
        the oldest); None when a service worker already holds it."""
        job = s.scalar(select(Job).where(Job.analysis_id == row.id))
        if job is None or job.lease_owner is not None:
            return None
        job.lease_owner, job.lease_expires, job.attempts = self.lease_owner, time.time() + _LEASE_S, job.attempts + 1
        row.status, row.stage, row.attempts = "running", "storing", job.attempts
        s.flush()
        return jobs.Claimed(job.id, row.id, row.sha256, row.filename, job.attempts, row.nodes, row.cb_nodes)

    def close(self, summary: BatchSummary) -> None:
        out = self.settings.data_dir / "batch-runs"
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{summary.run_id}.json"
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)
        self.db.dispose()


def frames_from_store(session: Session) -> Frames:
    """Every finished analysis in the store, one row per log content (the oldest analysis of it), with the
    per-job numbers taken from its stored JSON report."""
    q = (
        select(Analysis.sha256, Analysis.owner, AnalysisOutput.content)
        .join(AnalysisOutput, (AnalysisOutput.analysis_id == Analysis.id) & (AnalysisOutput.kind == "json"))
        .where(Analysis.status == "done")
        .order_by(Analysis.created_at, Analysis.id)
        .execution_options(yield_per=256)
    )
    job_rows: list[dict[str, object]] = []
    finding_rows: list[dict[str, object]] = []
    seen: set[str] = set()
    for sha, owner, content in session.execute(q):
        if sha in seen:
            continue
        seen.add(sha)
        facts, findings = from_report(json.loads(zlib.decompress(content)))
        job_rows.append({"sha256": sha, "user": owner, **facts.model_dump()})
        finding_rows.extend(
            {"sha256": sha, **f.model_dump(include={"code", "severity", "layer", "title", "seconds"})} for f in findings
        )
    done = select(Analysis.sha256).where(Analysis.status == "done")
    failed = (
        session.scalar(
            select(func.count(func.distinct(Analysis.sha256))).where(
                Analysis.status == "failed", Analysis.sha256.not_in(done)
            )
        )
        or 0
    )
    return Frames.from_records(job_rows, finding_rows, failed_logs=int(failed))
