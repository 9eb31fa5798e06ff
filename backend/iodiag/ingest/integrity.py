"""Record integrity: a record the analysis may trust, or one it leaves out and counts.

libdarshan-util hands back whatever bytes a module region holds. A damaged or mis-written log can decode
into records whose ids are not in the name table, whose rank is far outside the job, or whose counters are
negative or larger than any run could produce; summed, they turn into "-5030 PiB written", NaN shares or a
busiest rank of 4.6e18. Every counter-module record is screened here as it is read: a record that fails is
left out of the tables (never repaired: any value we made up would be a guess) and counted per reason, so
the report can say "1,720 of 1,760 POSIX records are corrupt and were left out".

The rules only reject what no valid run can write: they were checked against every real log we have (none
of their records is rejected).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from iodiag.ingest.table import Table

MAX_COUNT = 1 << 56
"""Above this an integer counter (bytes, operations, offsets) is absurd: 64 PiB in one record."""
TIME_SLACK_S = 5.0
"""Timestamps may run a little past the recorded run time (clock skew between nodes, whole-second run
times before format 3.41): this much, plus 10 % of the run."""
MAX_RANKS = 1 << 24
THREADS_PER_RANK = 256
"""Threads of one rank whose calls a summed timer may overlap, at most (a generous node's core count)."""

# Modules whose records are files or objects named in the log's name table. APMPI and HEATMAP records are
# not (APMPI's ids are per rank, HEATMAP's name the instrumented module).
NAMED_MODULES = frozenset(
    {"POSIX", "MPI-IO", "STDIO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "DFS", "DAOS", "LUSTRE", "BG/Q"}
)
# Integer counters that hold a rank, checked against the job's ranks like the record's own rank.
_RANK_SUFFIXES = ("_FASTEST_RANK", "_SLOWEST_RANK")
# Integer counters that are not sizes or counts: identifiers, modes, layout values (not bounded above).
_UNBOUNDED_SUFFIXES = (
    "_MODE",
    "_OBJ_OTYPE",
    "_OBJ_CLASS",
    "_OBJ_CID",
    *(f"_CHUNK_SIZE_D{i}" for i in range(1, 6)),
)


@dataclass
class Screened:
    """What screening left out of one module, and which stray fields it set to zero."""

    module: str
    records: int
    dropped: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    reset: dict[str, int] = field(default_factory=dict)
    """Fields set to 0, per column: a stray value in a record whose identity and volume are sound."""
    unnamed: int = 0
    """Records left out because their id is missing from the name table (PyDarshan drops them too)."""
    unnamed_bytes_read: int = 0
    unnamed_bytes_written: int = 0
    """What those records count, where their byte counters are plausible: the I/O a reader of the named records
    does not see."""

    def line(self) -> str:
        why = "; ".join(f"{n:,} {r}" for r, n in sorted(self.reasons.items(), key=lambda kv: -kv[1]))
        return f"{self.dropped:,} of {self.records:,} {self.module} records are corrupt and were left out ({why})"

    def reset_line(self) -> str:
        cols = ", ".join(f"{c} in {n:,} record(s)" for c, n in sorted(self.reset.items(), key=lambda kv: -kv[1]))
        return (
            f"Darshan wrote impossible values into {self.module} fields that were set to 0 ({cols}): a known "
            "runtime bug in some Darshan versions; the records' bytes and operations are kept"
        )


_NAMELESS = "with an id missing from the name table"

CORE_COUNTERS = ("_BYTES_READ", "_BYTES_WRITTEN", "_READS", "_WRITES", "_OPENS")
"""A record's volume: a corrupt value here makes every total wrong, so the record is left out."""
_ID_SUFFIXES = ("_RENAMED_FROM", "_REC_ID")
"""Counters that hold another record's id (a 64-bit hash, any sign)."""
SCREENED_MODULES = frozenset({"POSIX", "MPI-IO", "STDIO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "DFS", "DAOS"})
"""Modules whose counters are screened; others (APMPI, APXC, HEATMAP) hold values of their own kind (bit
patterns, per-call histograms) and are screened by rank only."""


def screen(
    module: str,
    table: Table,
    *,
    names: Mapping[int, str],
    nprocs: int,
    runtime_s: float,
    counter_names: list[str],
    fcounter_names: list[str],
) -> tuple[Table, Screened]:
    """The module's records that pass every rule (stray fields set to 0), and what was left out, by the first
    rule each record failed.

    A record is left out when its identity (id, rank) or its volume (bytes, operations, opens, read/write/meta
    time) is impossible: those feed every total. A stray value elsewhere (a negative mmap count or timer, a
    garbage access size: bugs of real Darshan releases) is set to 0 and reported, and the record is kept.
    """
    n = len(table)
    out = Screened(module=module, records=n)
    if n == 0:
        return table, out
    bad = np.zeros(n, dtype=bool)
    fixed: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    # Records failing a rule other than the name table's: their counters are not trusted to say what I/O an
    # unnamed record did
    damaged = np.zeros(n, dtype=bool)
    nameless = np.zeros(n, dtype=bool)

    def fail(mask: np.ndarray, reason: str) -> None:
        if reason != _NAMELESS:
            damaged[mask] = True
        new = mask & ~bad
        if new.any():
            out.reasons[reason] = out.reasons.get(reason, 0) + int(new.sum())
            bad[new] = True

    def reset(col: str, v: np.ndarray, mask: np.ndarray) -> None:
        if mask.any():
            fixed[col] = (np.where(mask, 0, v).astype(v.dtype), mask)

    ranks_ok = max(1, min(int(nprocs), MAX_RANKS))
    if "rank" in table:
        rank = np.asarray(table["rank"]).astype(np.int64, copy=False)
        stray = (rank < -1) | (rank >= ranks_ok)
        if stray.any():
            # The stray ranks themselves (a few): "rank 1048576 in a 2,048-rank job" is what a reader checks
            seen = sorted({int(x) for x in rank[stray].tolist()})
            shown = ", ".join(str(x) for x in seen[:3]) + (f" and {len(seen) - 3:,} more" if len(seen) > 3 else "")
            fail(stray, f"with a rank out of range ({shown}; outside -1..{ranks_ok - 1})")
    if module in NAMED_MODULES and "id" in table and names:
        known = np.fromiter((int(k) for k in names), dtype=np.uint64, count=len(names))
        ids = np.asarray(table["id"]).astype(np.uint64, copy=False)
        nameless = ~np.isin(ids, known)
        fail(nameless, _NAMELESS)
        out.unnamed = int(nameless.sum())
    if module not in SCREENED_MODULES:
        return _result(table, bad, fixed, out)
    for col in counter_names:
        v = np.asarray(table[col])
        if not np.issubdtype(v.dtype, np.integer) or col.endswith(_ID_SUFFIXES):
            continue
        v = v.astype(np.int64, copy=False)
        if col.endswith(_RANK_SUFFIXES):
            fail((v < -1) | (v >= ranks_ok), "with a fastest/slowest rank outside the job")
        elif col.endswith(CORE_COUNTERS):
            fail(v < -1, "with a negative byte or operation count")  # -1: Darshan's "not set"
            fail(v > MAX_COUNT, "with a byte or operation count no run can reach")
        else:
            reset(col, v, (v < -1) | ((v > MAX_COUNT) & ~np.asarray(col.endswith(_UNBOUNDED_SUFFIXES))))
    if fcounter_names:
        shared = (np.asarray(table["rank"]) == -1) if "rank" in table else np.zeros(n, dtype=bool)
        limit = runtime_s * 1.1 + TIME_SLACK_S if runtime_s > 0 else None
        for col in fcounter_names:
            v = np.asarray(table[col], dtype=float)
            fail(~np.isfinite(v), "with a timer that is not a number")
            if limit is not None and "VARIANCE" not in col:
                if col.endswith("TIMESTAMP") or "RANK_TIME" in col or "_MAX_" in col:
                    fail(v > limit, "with a time beyond the end of the run")
                else:
                    # A shared record's timers add up every rank's time, and a rank's threads may overlap
                    # their calls: a duration is absurd only far past what all of them could spend.
                    per_rank = limit * THREADS_PER_RANK
                    fail(v > np.where(shared, per_rank * ranks_ok, per_rank), "with a time beyond the end of the run")
            # -1 is Darshan's "not set" for a timer as for a counter; any other negative time is a stray value.
            reset(col, v, np.isfinite(v) & (v < 0) & (v != -1.0))
    if out.unnamed:
        # What the unnamed records count, from those whose every other field is sound
        sound = nameless & ~damaged
        out.unnamed_bytes_read = _plausible_sum(table, module, "_BYTES_READ", sound)
        out.unnamed_bytes_written = _plausible_sum(table, module, "_BYTES_WRITTEN", sound)
    return _result(table, bad, fixed, out)


def _plausible_sum(table: Table, module: str, suffix: str, mask: np.ndarray) -> int:
    """The sum of a byte counter over the masked records, leaving out values no run can reach."""
    col = next((c for c in table.columns if c.endswith(suffix) and not c.startswith(("AGG_", "SIZE_"))), None)
    if col is None or module not in SCREENED_MODULES:
        return 0
    v = np.asarray(table[col])[mask]
    if not np.issubdtype(v.dtype, np.integer):
        return 0
    v = v.astype(np.int64, copy=False)
    return int(v[(v >= 0) & (v <= MAX_COUNT)].sum())


def _result(
    table: Table, bad: np.ndarray, fixed: dict[str, tuple[np.ndarray, np.ndarray]], out: Screened
) -> tuple[Table, Screened]:
    # Fields reset in records that are left out anyway are not worth a mention.
    out.reset = {col: k for col, (_, mask) in fixed.items() if (k := int((mask & ~bad).sum()))}
    if fixed:
        table = table.with_columns(**{col: values for col, (values, _) in fixed.items()})
    if not bad.any():
        return table, out
    out.dropped = int(bad.sum())
    return table.where(~bad), out


__all__ = ["CORE_COUNTERS", "MAX_COUNT", "NAMED_MODULES", "Screened", "screen"]
