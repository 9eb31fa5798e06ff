"""Benchmark logs with many DXT segments, built with numpy (no Python object per segment).

``bench_tables(n)`` spreads ``n`` segments over ranks and files: each (file, rank) record is a
sequential stream of 1 MiB writes, then a read-back of the same bytes, with back-to-back
timestamps. The matching POSIX counters are derived from the same segments, so the log is
self-consistent (DXT segment count == POSIX reads + writes).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from iodiag.synth.layout import record_id
from iodiag.synth.writer import JobInfo

SEGMENT_BYTES = 1 << 20
SEGMENT_SECONDS = 1e-4


def bench_layout(n_segments: int) -> tuple[int, int]:
    """(ranks, files per rank) for a benchmark of ``n_segments`` segments."""
    if n_segments >= 1_000_000:
        return 64, 4
    if n_segments >= 10_000:
        return 16, 2
    return 1, 1


def bench_tables(
    n_segments: int, nprocs: int | None = None, files: int | None = None
) -> tuple[JobInfo, dict[int, str], dict[str, pd.DataFrame]]:
    if n_segments < 1:
        raise ValueError("--dxt-segments must be at least 1")
    r_default, f_default = bench_layout(n_segments)
    nprocs = nprocs or r_default
    files = files or f_default
    nrec = nprocs * files
    per = np.full(nrec, n_segments // nrec, dtype=np.int64)
    per[: n_segments % nrec] += 1
    rec = np.repeat(np.arange(nrec, dtype=np.int64), per)
    first = np.r_[0, np.cumsum(per)[:-1]]
    pos = np.arange(n_segments, dtype=np.int64) - np.repeat(first, per)
    half = np.repeat((per + 1) // 2, per)  # the first half writes, the rest reads back
    is_read = pos >= half
    block = np.where(is_read, pos - half, pos)
    rank = rec % nprocs
    paths = [f"/scratch/bench/rank{r}/file{f}.dat" for f in range(files) for r in range(nprocs)]
    ids = np.array([record_id(p) for p in paths], dtype=np.uint64)
    start = pos.astype(np.float64) * SEGMENT_SECONDS + 1.0
    dxt = pd.DataFrame(
        {
            "id": ids[rec],
            "rank": rank,
            "hostname": pd.Categorical.from_codes(np.zeros(n_segments, dtype=np.int8), pd.Index(["nid00000"])),
            "op": pd.Categorical.from_codes(is_read.astype(np.int8), pd.Index(["write", "read"])),
            "offset": block * SEGMENT_BYTES,
            "length": np.full(n_segments, SEGMENT_BYTES, dtype=np.int64),
            "start": start,
            "end": start + SEGMENT_SECONDS,
        },
        copy=False,
    )
    end = float(start.max() + SEGMENT_SECONDS) if n_segments else 1.0
    job = bench_job(nprocs, end)
    posix = _posix_from(ids, nprocs, files, per)
    names = {int(ids[i]): paths[i] for i in range(nrec)}
    return job, names, {"POSIX": posix, "DXT_POSIX": dxt}


def _posix_from(ids: np.ndarray, nprocs: int, files: int, per: np.ndarray) -> pd.DataFrame:
    """POSIX records matching the benchmark's segments (one per (file, rank))."""
    from iodiag.synth.derive import columns

    nrec = len(ids)
    writes = (per + 1) // 2
    reads = per - writes
    ints, floats = columns("POSIX")
    cols: dict[str, np.ndarray] = {"id": ids, "rank": np.arange(nrec, dtype=np.int64) % nprocs}
    cols.update({c: np.zeros(nrec, dtype=np.int64) for c in ints})
    cols.update({c: np.zeros(nrec, dtype=np.float64) for c in floats})
    cols["POSIX_OPENS"] = np.ones(nrec, dtype=np.int64)
    cols["POSIX_WRITES"], cols["POSIX_READS"] = writes, reads
    cols["POSIX_BYTES_WRITTEN"], cols["POSIX_BYTES_READ"] = writes * SEGMENT_BYTES, reads * SEGMENT_BYTES
    cols["POSIX_MAX_BYTE_WRITTEN"] = np.maximum(writes * SEGMENT_BYTES - 1, 0)
    cols["POSIX_MAX_BYTE_READ"] = np.maximum(reads * SEGMENT_BYTES - 1, 0)
    # Offsets 0, 1 MiB, 2 MiB ...: all but the first of each kind are consecutive and sequential.
    cols["POSIX_CONSEC_WRITES"] = cols["POSIX_SEQ_WRITES"] = np.maximum(writes - 1, 0)
    cols["POSIX_CONSEC_READS"] = cols["POSIX_SEQ_READS"] = np.maximum(reads - 1, 0)
    cols["POSIX_RW_SWITCHES"] = (reads > 0).astype(np.int64)
    cols["POSIX_SIZE_WRITE_100K_1M"], cols["POSIX_SIZE_READ_100K_1M"] = writes, reads
    cols["POSIX_ACCESS1_ACCESS"] = np.full(nrec, SEGMENT_BYTES, dtype=np.int64)
    cols["POSIX_ACCESS1_COUNT"] = per
    cols["POSIX_MEM_ALIGNMENT"] = np.full(nrec, 8, dtype=np.int64)
    cols["POSIX_FILE_ALIGNMENT"] = np.full(nrec, 1 << 20, dtype=np.int64)
    cols["POSIX_MODE"] = np.full(nrec, 0o664, dtype=np.int64)
    cols["POSIX_MAX_WRITE_TIME_SIZE"] = np.where(writes > 0, SEGMENT_BYTES, 0)
    cols["POSIX_MAX_READ_TIME_SIZE"] = np.where(reads > 0, SEGMENT_BYTES, 0)
    cols["POSIX_F_WRITE_TIME"] = writes * SEGMENT_SECONDS
    cols["POSIX_F_READ_TIME"] = reads * SEGMENT_SECONDS
    cols["POSIX_F_MAX_WRITE_TIME"] = np.where(writes > 0, SEGMENT_SECONDS, 0.0)
    cols["POSIX_F_MAX_READ_TIME"] = np.where(reads > 0, SEGMENT_SECONDS, 0.0)
    cols["POSIX_F_OPEN_START_TIMESTAMP"] = np.full(nrec, 0.999)
    cols["POSIX_F_OPEN_END_TIMESTAMP"] = np.full(nrec, 1.0)
    cols["POSIX_F_WRITE_START_TIMESTAMP"] = np.where(writes > 0, 1.0, 0.0)
    cols["POSIX_F_WRITE_END_TIMESTAMP"] = np.where(writes > 0, 1.0 + writes * SEGMENT_SECONDS, 0.0)
    cols["POSIX_F_READ_START_TIMESTAMP"] = np.where(reads > 0, 1.0 + writes * SEGMENT_SECONDS, 0.0)
    cols["POSIX_F_READ_END_TIMESTAMP"] = np.where(reads > 0, 1.0 + per * SEGMENT_SECONDS, 0.0)
    cols["POSIX_F_CLOSE_START_TIMESTAMP"] = 1.0 + per * SEGMENT_SECONDS
    cols["POSIX_F_CLOSE_END_TIMESTAMP"] = 1.0 + per * SEGMENT_SECONDS + 0.001
    cols["POSIX_F_META_TIME"] = np.full(nrec, 0.002)
    return pd.DataFrame(cols)


BENCH_LOG_VERSION = 1
"""Bump when bench_tables changes what it writes, so cached logs are rebuilt."""


def cache_dir() -> Path:
    return Path(os.environ.get("IODIAG_CACHE", Path.home() / ".cache" / "iodiag")) / "dxt"


def cached_bench_log(n_segments: int, directory: Path | None = None) -> Path:
    """The benchmark log with ``n_segments`` segments, written on first use and then reused.

    Large logs are generated on demand, never committed; the write goes to a temporary name and
    is renamed into place, so an interrupted run never leaves a truncated log in the cache.
    """
    from iodiag.synth.writer import write_log

    where = directory or cache_dir()
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"dxt-{n_segments}-v{BENCH_LOG_VERSION}.darshan"
    if path.is_file():
        return path
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    job, names, tables = bench_tables(n_segments)
    write_log(tmp, job, names, tables)
    os.replace(tmp, path)
    return path


def bench_job(nprocs: int, end: float) -> JobInfo:
    """The benchmark log's job record: a run ``end`` seconds of trace long, plus two."""
    return JobInfo(
        jobid=1,
        nprocs=nprocs,
        start_sec=1_700_000_000,
        end_sec=1_700_000_000 + int(end) + 2,
        exe="./dxt-bench",
        darshan_version="3.4.4",
        mounts=(("/scratch", "lustre"), ("/", "ext4")),
    )
