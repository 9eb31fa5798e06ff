"""Fuzzed records: real logs rewritten with some records damaged the way broken logs are.

Each fuzzed log keeps a real log's job record, names and modules, and corrupts a few records of its counter
modules: an id missing from the name table, a rank far outside the job, a counter negative or near 2**63,
a timer that is NaN, infinite, negative or centuries long, a whole row of garbage. The log is written by
libdarshan-util itself (``writer.write_log``), so the reader sees exactly what such a log holds.
Used by the invariant tests and ``bench/fuzz_records.py`` (10,000 logs).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from iodiag.ingest import JobProfile
from iodiag.ingest.table import Table
from iodiag.synth.writer import GENERIC, JobInfo, write_log

_INT_POISON = np.array([-1 << 62, -(10**15), -2, 1 << 62, (1 << 63) - 1, 4601963788722241536], dtype=np.int64)
_FLOAT_POISON = np.array([np.nan, np.inf, -np.inf, -1e9, -2.0, 1e300, 3.2e9], dtype=np.float64)
_DAMAGE = ("id", "rank", "counter", "fcounter", "row")


@dataclass(frozen=True)
class Fuzzed:
    """What a fuzzed log was made from and what was done to it."""

    base: str
    damaged: dict[str, int]
    """records damaged, per module"""
    kinds: tuple[str, ...]


def job_info(profile: JobProfile) -> JobInfo:
    m = profile.meta
    start = int(m.start.timestamp())
    return JobInfo(
        jobid=m.jobid,
        uid=m.uid,
        nprocs=max(m.nprocs, 1),
        start_sec=start,
        end_sec=start + max(round(m.runtime_s), 1),
        exe=m.exe,
        darshan_version="3.5.0",
        mounts=tuple((x.path, x.fs_type) for x in m.mounts),
    )


def fuzz_tables(profile: JobProfile, rng: np.random.Generator, share: float) -> tuple[dict[str, Table], Fuzzed]:
    """The profile's writable tables with about ``share`` of each counter module's records damaged."""
    tables: dict[str, Table] = {}
    damaged: dict[str, int] = {}
    kinds: set[str] = set()
    for name, table in profile.tables.items():
        if name not in GENERIC and name != "LUSTRE":
            continue
        if name not in GENERIC or not len(table):
            tables[name] = table
            continue
        cols = {c: np.array(table[c], copy=True) for c in table.columns}
        n = len(table)
        hit = np.flatnonzero(rng.random(n) < share)
        if not len(hit):
            hit = np.array([int(rng.integers(n))])
        ints = [c for c in cols if c not in ("id", "rank", "file_rec_id") and np.issubdtype(cols[c].dtype, np.integer)]
        floats = [c for c in cols if np.issubdtype(cols[c].dtype, np.floating)]
        for i in hit.tolist():
            kind = _DAMAGE[int(rng.integers(len(_DAMAGE)))]
            kinds.add(kind)
            if kind == "id":
                cols["id"][i] = np.uint64(rng.integers(1, 1 << 62))
            elif kind == "rank":
                cols["rank"][i] = int(rng.choice([-(1 << 40), -7, profile.meta.nprocs + 3, 4601963788722241536]))
            elif kind == "counter" and ints:
                cols[ints[int(rng.integers(len(ints)))]][i] = rng.choice(_INT_POISON)
            elif kind == "fcounter" and floats:
                cols[floats[int(rng.integers(len(floats)))]][i] = rng.choice(_FLOAT_POISON)
            else:
                for c in ints:
                    cols[c][i] = rng.integers(-(1 << 62), 1 << 62)
                for c in floats:
                    cols[c][i] = rng.choice(_FLOAT_POISON)
        tables[name] = Table(cols, n)
        damaged[name] = len(hit)
    return tables, Fuzzed(base=profile.path, damaged=damaged, kinds=tuple(sorted(kinds)))


def write_fuzzed(profile: JobProfile, out: str | os.PathLike[str], seed: int, share: float = 0.3) -> Fuzzed:
    """Write a fuzzed copy of ``profile`` to ``out``; the same seed gives the same log."""
    rng = np.random.default_rng(seed)
    tables, what = fuzz_tables(profile, rng, share)
    partial = [n for n, i in profile.modules.items() if i.partial and n in tables]
    write_log(out, job_info(profile), dict(profile.names), tables, partial=partial)
    return what


__all__ = ["Fuzzed", "fuzz_tables", "job_info", "write_fuzzed"]
