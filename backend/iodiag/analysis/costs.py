"""What a finding costs, in seconds of run time: the helpers every check uses to price its finding.

Attribution (documented in docs/costs.md):

* The unit is the critical path: the busiest rank's I/O time (``IOShare.slowest_rank_io_s``), the time
  the job would get back. A finding costs at most that.
* Darshan's timers on shared records (and the ones a check adds up over ranks) are *summed over ranks*.
  A summed cost becomes critical-path seconds in proportion to the job's summed I/O time:
  ``critical = summed / summed_io * busiest_rank_io``. That assumes the problem is spread over the ranks
  like the rest of the I/O; costs that are about one rank (imbalance, a straggler, a lone aggregator) are
  measured on that rank directly and are critical-path seconds already.
* "measured" means the seconds come from the log's own timers (a rank's time minus the mean rank's, MPI-IO
  time minus the POSIX time beneath it); "modelled" means an estimate: the same bytes at this job's own
  large-request rate, or an upper bound. Where the log cannot support a number, ``seconds`` is None.
* Several findings can describe the same lost time (small requests seen by P05, P15 and T06). The verdict
  attributes time greedily, largest cost first, each cause capped at the I/O time not yet attributed, and
  names each family of findings once, so its causes never add up past the I/O time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from iodiag.analysis.models import Confidence
from iodiag.ingest.table import Groups, Table

if TYPE_CHECKING:
    from iodiag.analysis.views.context import Context
    from iodiag.core.thresholds import Thresholds

BIN_MEAN_BYTES = {"0_100": 50, "100_1K": 562, "1K_10K": 5632, "10K_100K": 56320, "100K_1M": 576512}
"""A request's mean size in each of Darshan's bins below 1 MiB (bin midpoints), to estimate bytes from counts."""


@dataclass(frozen=True)
class Cost:
    """A check's price for its finding. ``seconds`` are critical-path seconds unless ``summed``."""

    seconds: float | None
    basis: str
    confidence: Confidence = Confidence.MEDIUM
    summed: bool = False
    ops: int | None = None
    """Operations the finding is about (the grading's operation minimum), when it is about operations."""
    nbytes: int | None = None
    """Bytes the finding is about (the grading's volume minimum), when it is about data."""


def measured(
    seconds: float, basis: str, *, summed: bool = False, ops: int | None = None, nbytes: int | None = None
) -> Cost:
    return Cost(max(float(seconds), 0.0), f"measured: {basis}", Confidence.HIGH, summed, ops, nbytes)


def modelled(
    seconds: float,
    basis: str,
    *,
    confidence: Confidence = Confidence.MEDIUM,
    summed: bool = False,
    ops: int | None = None,
    nbytes: int | None = None,
) -> Cost:
    return Cost(max(float(seconds), 0.0), f"modelled: {basis}", confidence, summed, ops, nbytes)


def unknown(reason: str, *, ops: int | None = None, nbytes: int | None = None) -> Cost:
    return Cost(None, reason, Confidence.LOW, False, ops, nbytes)


def critical(ctx: Context, summed_seconds: float) -> float:
    """Seconds summed over ranks -> critical-path seconds (see the module doc)."""
    total = ctx.summed_io_s
    s = ctx.io_share
    if s is None or total <= 0:
        return 0.0
    return min(max(summed_seconds, 0.0) / total, 1.0) * s.slowest_rank_io_s


def large_request_rate(ctx: Context, op: str, t: Thresholds) -> tuple[float, bool]:
    """Bytes per (summed) second of this job's own POSIX ``op`` (READ/WRITE) requests of 1 MiB or more.

    Returns (rate, measured). Records whose requests are mostly large tell what the storage gave this job
    for large requests; without any, the rate is the site's reference (``reference_rank_bandwidth``).
    """
    return ctx.memo(f"large_rate_{op}", lambda: _large_rate(ctx, op, t))


def _large_rate(ctx: Context, op: str, t: Thresholds) -> tuple[float, bool]:
    p = ctx.posix_records
    if not p.empty:
        # A file every rank shares on one OST runs at that OST's rate split among them all: a rate set by the
        # contention a layout finding (L01) prices, no yardstick for what this job's large requests get.
        crowded = _one_ost_shared_ids(ctx)
        if crowded:
            p = p.where(~p.isin("id", sorted(crowded)))
        other = "WRITE" if op == "READ" else "READ"
        # This direction's large, mostly sequential requests (random large requests are what is being priced,
        # not the yardstick); else the other direction's large sequential requests still say what the storage
        # gave. Random large requests are never the yardstick: 1 MiB reads at random offsets run at a tenth of
        # the streaming rate, and measuring other patterns against them prices them at nothing.
        for direction, sequential_only in ((op, True), (other, True)):
            rate = _rate_of_large_requests(p, direction, sequential_only, t.impact_min_bytes)
            if rate is not None:
                return rate, True
    return t.reference_rank_bandwidth, False


REFERENCE_RATE_SLACK = 10.0
"""How far below the reference rate a job without large requests may run: a cost priced against the reference
that still holds half its size at a tenth of that rate is no mere upper bound (medium confidence, not low)."""


def holds_below_reference(
    ctx: Context, frame: Table, time_rows: np.ndarray, bytes_rows: np.ndarray, rate: float, seconds: float, prefix: str
) -> float | None:
    """The cost at a tenth of ``rate`` on the busiest rank, where it is at least half of ``seconds``; else None.

    64 KiB reads at 11 MiB/s cost nearly the same against 1 GiB/s or a tenth of it: the guess of the rate
    hardly matters there."""
    if seconds <= 0 or rate <= 0:
        return None
    floor = on_critical_path(
        ctx, frame, np.clip(time_rows - bytes_rows * REFERENCE_RATE_SLACK / rate, 0, None), prefix=prefix
    )
    return floor if floor >= 0.5 * seconds else None


def _one_ost_shared_ids(ctx: Context) -> set[int]:
    """Files with a shared (rank -1) POSIX record and a Lustre stripe count of 1."""
    if not ctx.profile.has("LUSTRE"):
        return set()
    lus = ctx.records("LUSTRE")
    if not len(lus) or "stripe_count" not in lus:
        return set()
    single = set(np.asarray(lus["id"])[np.asarray(lus["stripe_count"]) == 1].astype(np.uint64).tolist())
    p = ctx.posix_records
    shared = set(np.asarray(p["id"])[np.asarray(p["rank"]) < 0].astype(np.uint64).tolist()) if len(p) else set()
    return {int(i) for i in single & shared}


def _rate_of_large_requests(p: Table, op: str, sequential_only: bool, min_bytes: int) -> float | None:
    verb = "READ" if op == "READ" else "WRITTEN"
    nbytes = _f(p, f"POSIX_BYTES_{verb}")
    ops = _f(p, f"POSIX_{op}S")
    time = _f(p, f"POSIX_F_{op}_TIME")
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(ops > 0, nbytes / np.maximum(ops, 1), 0)
    large = (mean >= 1 << 20) & (time > 0)
    if sequential_only:
        large &= _f(p, f"POSIX_SEQ_{op}S") >= 0.8 * ops - 1
    if large.any() and nbytes[large].sum() >= min_bytes:
        return float(nbytes[large].sum() / time[large].sum())
    return None


def small_bytes(frame: Table, prefix: str, op: str) -> np.ndarray:
    """Estimated bytes in the requests below 1 MiB, per row (bin counts times bin midpoints)."""
    out = np.zeros(len(frame))
    for b, mean in BIN_MEAN_BYTES.items():
        out += _f(frame, f"{prefix}_SIZE_{op}_{b}") * mean
    return out


def exact_mib(frame: Table, prefix: str) -> np.ndarray:
    """Per row, requests of exactly 1 MiB, from the four most common access sizes.

    Darshan's 100K_1M bin includes 1 MiB itself (its upper bounds are inclusive), so the bin alone would call
    1 MiB requests small. The ACCESS1-4 counters (per direction in none of the modules: they mix reads and
    writes) settle it for the common sizes.
    """
    out = np.zeros(len(frame), dtype=np.int64)
    for i in range(1, 5):
        acc = f"{prefix}_ACCESS{i}_ACCESS"
        cnt = f"{prefix}_ACCESS{i}_COUNT"
        if acc in frame.columns:
            out += np.where(np.asarray(frame[acc]) == 1 << 20, np.asarray(frame[cnt], dtype=np.int64), 0)
    return out


def size_column(prefix: str, op: str, b: str) -> str:
    """The request-size histogram column of bin ``b``: ``POSIX_SIZE_WRITE_1K_10K``, ``MPIIO_SIZE_WRITE_AGG_1K_10K``."""
    return f"{prefix}_SIZE_{op}_AGG_{b}" if prefix == "MPIIO" else f"{prefix}_SIZE_{op}_{b}"


def below_mib_counts(frame: Table, prefix: str, op: str) -> np.ndarray:
    """Per row, ``op`` requests strictly under 1 MiB: the five bins up to 1 MiB less the requests of exactly 1 MiB
    that Darshan's 100K_1M bin also holds (from the ACCESS1-4 counters, which mix reads and writes: shared
    between the directions by their 100K_1M counts).

    Integers, unless some row has requests of exactly 1 MiB (then floats).
    """
    per_row: np.ndarray = sum(
        (np.asarray(frame[size_column(prefix, op, b)]) for b in BIN_MEAN_BYTES), np.zeros(len(frame), np.int64)
    )
    mib = exact_mib(frame, prefix)
    if mib.any():
        this = _f(frame, size_column(prefix, op, "100K_1M"))
        other = _f(frame, size_column(prefix, "WRITE" if op == "READ" else "READ", "100K_1M"))
        both = this + other
        mine = np.where(both > 0, np.rint(mib * this / np.maximum(both, 1)), 0)
        per_row = per_row - np.minimum(mine, this)
    out: np.ndarray = np.maximum(per_row, 0)
    return out


def excess_over_rate(time_s: float, nbytes: float, rate: float) -> float:
    """Seconds spent beyond what ``nbytes`` take at ``rate`` bytes per second."""
    if rate <= 0:
        return 0.0
    return max(time_s - nbytes / rate, 0.0)


def rate_text(rate: float) -> str:
    from iodiag.core.units import human_bytes

    return f"{human_bytes(rate)}/s"


def on_critical_path(ctx: Context, frame: Table, per_row: np.ndarray, prefix: str = "POSIX", of: str = "data") -> float:
    """Critical-path seconds of a cost given per record of ``frame`` (seconds summed over the record's ranks).

    Records of one rank add up per rank and the busiest rank counts: ranks that do the work alone (the
    aggregators under collective I/O, rank 0 writing for everyone) are the critical path, and a proportional
    share would hide them. A shared record (rank -1, summed over every rank) counts with the slowest rank's
    share of the time the cost is part of (``of``: "data", read and write time, or "meta"), from what Darshan
    keeps of that rank (``*_F_SLOWEST_RANK_TIME``): see ``_slowest_rank_share``.
    """
    if len(frame) == 0:
        return 0.0
    cost = np.asarray(per_row, dtype=float)
    ranks = np.asarray(frame["rank"])
    own = ranks >= 0
    busiest = 0.0
    if own.any():
        _, inv = np.unique(ranks[own], return_inverse=True)
        busiest = float(np.bincount(inv, weights=cost[own]).max())
    shared = 0.0
    if (~own).any():
        frac = _slowest_rank_share(ctx, frame, ~own, prefix, of)
        shared = float((cost[~own] * frac).sum())
    s = ctx.io_share
    out = busiest + shared
    return min(out, s.slowest_rank_io_s) if s is not None else out


@dataclass(frozen=True)
class RankMetadata:
    """The metadata time on the critical path: the rank with the most metadata time at the top layer."""

    rank: int | None
    """That rank (None when every record is shared)."""
    meta_s: float
    """Its metadata time: its own records' plus its share of the shared records' (the slowest rank's)."""
    data_s: float
    """Its read and write time, counted the same way."""


def busiest_rank_metadata(ctx: Context) -> RankMetadata:
    """Metadata seconds of the rank with the most of them, each file at its top layer (``counted_layers``).

    Per rank, the ``*_F_META_TIME`` of its own records; a shared (rank -1) record adds the slowest rank's share
    of its metadata time, and its read and write time by the slowest rank's share of those
    (``_slowest_rank_share``), as ``on_critical_path`` counts them.
    """
    return ctx.memo("busiest_rank_metadata", lambda: _busiest_rank_metadata(ctx))


def _busiest_rank_metadata(ctx: Context) -> RankMetadata:
    from iodiag.analysis.views.context import TOP_LAYER_TIME

    own_meta: dict[int, float] = {}
    own_data: dict[int, float] = {}
    shared_meta = shared_data = 0.0
    for layer, records in ctx.counted_layers:
        if not len(records):
            continue
        rd, wr, md, _ = TOP_LAYER_TIME[layer]
        prefix = md.removesuffix("_F_META_TIME")
        meta, data = _f(records, md), _f(records, rd) + _f(records, wr)
        ranks = np.asarray(records["rank"])
        own = ranks >= 0
        if own.any():
            keys, inv = np.unique(ranks[own], return_inverse=True)
            per_meta = np.bincount(inv, weights=meta[own])
            per_data = np.bincount(inv, weights=data[own])
            for k, mv, dv in zip(keys.tolist(), per_meta.tolist(), per_data.tolist(), strict=True):
                own_meta[k] = own_meta.get(k, 0.0) + mv
                own_data[k] = own_data.get(k, 0.0) + dv
        if (~own).any():
            shared_meta += float((meta[~own] * _slowest_rank_share(ctx, records, ~own, prefix, "meta")).sum())
            shared_data += float((data[~own] * _slowest_rank_share(ctx, records, ~own, prefix, "data")).sum())
    rank = max(own_meta, key=lambda r: (own_meta[r], -r)) if own_meta else None
    meta_s = shared_meta + (own_meta[rank] if rank is not None else 0.0)
    data_s = shared_data + (own_data[rank] if rank is not None else 0.0)
    s = ctx.io_share
    if s is not None:
        meta_s = min(meta_s, s.slowest_rank_io_s)
    return RankMetadata(rank, meta_s, data_s)


def trace_segments_cost(
    ctx: Context, tr: object, mask: np.ndarray, t: Thresholds, *, subtract_rate: bool = True
) -> tuple[float, bool]:
    """Critical-path seconds of some traced segments: per rank, their durations less their bytes at this job's
    large-request rate; the busiest rank counts. Returns (seconds, rate measured)."""
    from iodiag.ingest.trace import Trace

    assert isinstance(tr, Trace)
    if not mask.any():
        return 0.0, True
    dur = (tr.end[mask] - tr.start[mask]).astype(float)
    ranks = tr.rank[mask]
    rate, own = large_request_rate(ctx, "WRITE", t)
    excess = dur - (tr.length[mask].astype(float) / rate if subtract_rate else 0.0)
    excess = np.clip(excess, 0, None)
    _, inv = np.unique(ranks, return_inverse=True)
    busiest = float(np.bincount(inv, weights=excess).max()) if len(inv) else 0.0
    s = ctx.io_share
    return (min(busiest, s.slowest_rank_io_s) if s is not None else busiest), own


def files_time_cost(ctx: Context, fractions: dict[int, float], ops: tuple[str, ...] = ("READ", "WRITE")) -> float:
    """Critical-path seconds of a fraction of some files' POSIX ``ops`` time (record id -> fraction)."""
    p = ctx.posix_records
    frac = np.array([fractions.get(int(i), 0.0) for i in p["id"].tolist()], dtype=float)
    time = sum((p.num(f"POSIX_F_{op}_TIME") for op in ops), np.zeros(len(p)))
    return on_critical_path(ctx, p, time * np.clip(frac, 0, 1))


def _slowest_rank_share(ctx: Context, frame: Table, rows: np.ndarray, prefix: str, of: str = "data") -> np.ndarray:
    """Per shared (rank -1) record among ``rows`` (a mask), the slowest rank's share of its summed ``of`` time
    (at least 1/nprocs, at most all of it).

    Darshan keeps the slowest rank's total (read + write + metadata) time, not its parts. For data costs the
    slowest rank's read and write time is that total less the mean rank's metadata time, as a share of the
    record's summed read and write time: a lone aggregator that did every write of a file all ranks opened
    gets all of the write time, however long the other ranks' opens took (a share of the total would let
    their summed opens dilute its writes). For metadata costs it is the slowest rank's share of the total.
    """
    read = _f(frame, f"{prefix}_F_READ_TIME")[rows]
    write = _f(frame, f"{prefix}_F_WRITE_TIME")[rows]
    meta = _f(frame, f"{prefix}_F_META_TIME")[rows]
    slow_col = f"{prefix}_F_SLOWEST_RANK_TIME"
    slowest = _f(frame, slow_col)[rows] if slow_col in frame.columns else np.zeros(len(read))
    nprocs = max(ctx.meta.nprocs, 1)
    floor = 1.0 / nprocs
    if of == "meta":
        part, total = slowest, read + write + meta
    else:
        part, total = np.maximum(slowest - meta / nprocs, 0.0), read + write
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, np.clip(part / np.where(total > 0, total, 1), floor, 1.0), floor)


def per_file_on_critical_path(
    ctx: Context, frame: Table, per_row: np.ndarray, prefix: str = "POSIX", of: str = "data"
) -> dict[int, float]:
    """``on_critical_path`` for each file of ``frame`` at once (record id -> seconds), without a pass per file."""
    if len(frame) == 0:
        return {}
    cost = np.asarray(per_row, dtype=float)
    ids = np.asarray(frame["id"], dtype=np.uint64)
    ranks = np.asarray(frame["rank"])
    own = ranks >= 0
    out: dict[int, float] = {}
    if own.any():
        # Sum per (file, rank), then take each file's busiest rank.
        pairs, inv = np.unique(np.stack([ids[own], ranks[own].astype(np.uint64)]), axis=1, return_inverse=True)
        per_pair = np.bincount(inv.reshape(-1), weights=cost[own], minlength=pairs.shape[1])
        by_file = Groups(pairs[0])
        out.update(
            {int(k): float(v) for k, v in zip(by_file.keys.tolist(), by_file.max(per_pair).tolist(), strict=True)}
        )
    if (~own).any():
        frac = _slowest_rank_share(ctx, frame, ~own, prefix, of)
        shared = Groups(ids[~own])
        for k, v in zip(shared.keys.tolist(), shared.sum(cost[~own] * frac).tolist(), strict=True):
            out[int(k)] = out.get(int(k), 0.0) + float(v)
    return out


def _f(frame: Table, col: str) -> np.ndarray:
    return np.asarray(frame[col], dtype=float)
