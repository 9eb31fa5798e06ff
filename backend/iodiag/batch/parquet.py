"""Batch results as Parquet: ``OUT/jobs/`` (one row per log) and ``OUT/findings/`` (one row per finding).

Each run appends files (``part-RUN-SEQ.parquet``) and never rewrites one: a file is written under a
hidden name and renamed when complete, so an interrupted batch leaves only whole files, and the
next run resumes from what they hold. A log analyzed again (it had failed) gets a new row; readers
keep each content's latest successful row (``read_frames``). ``OUT/runs/RUN.json`` is each run's
summary with its failures.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from iodiag.batch.engine import BatchSummary
from iodiag.batch.frames import FINDING_COLUMNS, JOB_COLUMNS, Frames, user_name
from iodiag.batch.inputs import LogItem
from iodiag.jobs.models import TaskResult

_FLUSH_EVERY = 500

JOBS_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("sha256", pa.string()),
        ("path", pa.string()),
        ("filename", pa.string()),
        ("size_bytes", pa.int64()),
        ("status", pa.string()),
        ("error", pa.string()),
        ("user", pa.string()),
        ("uid", pa.int64()),
        ("exe", pa.string()),
        ("app", pa.string()),
        ("jobid", pa.string()),
        ("nprocs", pa.int64()),
        ("nodes", pa.int64()),
        ("start", pa.timestamp("us", tz="UTC")),
        ("end", pa.timestamp("us", tz="UTC")),
        ("runtime_s", pa.float64()),
        ("io_time_s", pa.float64()),
        ("bytes_read", pa.int64()),
        ("bytes_written", pa.int64()),
        ("io_share", pa.float64()),
        ("interfaces", pa.list_(pa.string())),
        ("n_critical", pa.int32()),
        ("n_warning", pa.int32()),
        ("n_info", pa.int32()),
        ("n_ok", pa.int32()),
        ("max_severity", pa.string()),
        ("analysis_s", pa.float64()),
        ("analyzed_at", pa.timestamp("us", tz="UTC")),
        ("tool_version", pa.string()),
    ]
)

FINDINGS_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("sha256", pa.string()),
        ("position", pa.int32()),
        ("code", pa.string()),
        ("severity", pa.string()),
        ("layer", pa.string()),
        ("title", pa.string()),
        ("evidence", pa.string()),  # JSON object: metric name -> value
        ("files_total", pa.int64()),
        ("seconds", pa.float64()),  # run time the finding costs; null: unpriced (schema 2.0 reports)
    ]
)


class ParquetSink:
    def __init__(self, out: Path, run_id: str, *, uid_names: bool = True, flush_every: int = _FLUSH_EVERY) -> None:
        self.out = out
        self.run_id = run_id
        self.uid_names = uid_names
        self.flush_every = flush_every
        for sub in ("jobs", "findings", "runs"):
            (out / sub).mkdir(parents=True, exist_ok=True)
        self._jobs: list[dict[str, object]] = []
        self._findings: list[dict[str, object]] = []
        self._seq = 0

    def done(self, shas: list[str]) -> set[str]:
        jobs = _read(self.out / "jobs", JOBS_SCHEMA, ["sha256", "status"])
        return set(jobs.loc[jobs["status"] == "done", "sha256"]) & set(shas)

    def add(self, item: LogItem, result: TaskResult) -> None:
        now = datetime.now(UTC)
        row: dict[str, object] = {
            "run_id": self.run_id,
            "sha256": item.sha256,
            "path": str(item.path),
            "filename": item.path.name,
            "size_bytes": item.size,
            "status": "done" if result.ok else "failed",
            "error": result.error,
            "analysis_s": result.seconds,
            "analyzed_at": now,
        }
        f = result.facts
        if result.ok and f is not None:
            row.update(f.model_dump())
            row["user"] = user_name(f.uid, self.uid_names)
            self._findings.extend(
                {
                    "run_id": self.run_id,
                    "sha256": item.sha256,
                    "position": i,
                    "code": x.code,
                    "severity": x.severity,
                    "layer": x.layer,
                    "title": x.title,
                    "evidence": json.dumps(x.evidence),
                    "files_total": x.files_total,
                    "seconds": x.seconds,
                }
                for i, x in enumerate(result.findings)
            )
        self._jobs.append(row)
        if len(self._jobs) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        if not self._jobs:
            return
        self._seq += 1
        name = f"part-{self.run_id}-{self._seq:05d}.parquet"
        # Findings first: a jobs file is what marks a log done, so it must never exist without its findings.
        _write(self.out / "findings" / name, pa.Table.from_pylist(self._findings, schema=FINDINGS_SCHEMA))
        _write(self.out / "jobs" / name, pa.Table.from_pylist(self._jobs, schema=JOBS_SCHEMA))
        self._jobs, self._findings = [], []

    def close(self, summary: BatchSummary) -> None:
        self.flush()
        path = self.out / "runs" / f"{self.run_id}.json"
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)


def _write(path: Path, table: pa.Table) -> None:
    tmp = path.with_name(f".{path.name}.tmp")  # hidden: dataset readers skip names starting with "."
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, path)


def _read(directory: Path, schema: pa.Schema, columns: list[str] | None = None) -> pd.DataFrame:
    files = sorted(p for p in directory.glob("part-*.parquet")) if directory.is_dir() else []
    if not files:
        frame: pd.DataFrame = schema.empty_table().select(columns or schema.names).to_pandas()
        return frame
    tables = [pq.read_table(p, columns=columns, schema=schema) for p in files]
    frame = pa.concat_tables(tables).to_pandas()
    return frame


def read_frames(out: Path) -> Frames:
    """The latest successful row of each log, with its findings; and how many logs only ever failed."""
    jobs = _read(out / "jobs", JOBS_SCHEMA)
    findings = _read(out / "findings", FINDINGS_SCHEMA)
    ok = jobs[jobs["status"] == "done"].sort_values("analyzed_at").drop_duplicates("sha256", keep="last")
    failed = jobs[(jobs["status"] == "failed")]
    failed_only = failed[~failed["sha256"].isin(ok["sha256"]) | failed["sha256"].isna()]
    n_failed = int(failed_only["sha256"].nunique()) + int(failed_only["sha256"].isna().sum())
    keys = ok[["sha256", "run_id"]]
    kept = findings.merge(keys, on=["sha256", "run_id"], how="inner")
    return Frames(
        jobs=ok[JOB_COLUMNS].reset_index(drop=True),
        findings=kept[FINDING_COLUMNS].reset_index(drop=True),
        failed_logs=n_failed,
    )
