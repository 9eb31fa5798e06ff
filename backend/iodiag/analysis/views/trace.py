"""Derived views of DXT traces, all in numpy: I/O phases, per-rank and per-phase statistics, gaps,
repeated byte ranges. No Python object per segment (traces reach ten million segments).

Conventions: a *busy interval* is a maximal stretch of time during which at least one segment of
the trace is in flight (the union of the segments' ``[start, end]``). A *phase* is a run of busy
intervals separated by gaps shorter than the gap threshold, DXT Explorer's rule: the mean plus one
standard deviation of all gaps between busy intervals (gaps below it are jitter inside a phase,
gaps above it separate phases).

Traces too large to hold come as ``TraceSummary`` objects (``ingest.trace_stream``); the ``stream_*``
views at the end answer the same questions from them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iodiag.ingest import JobProfile
from iodiag.ingest.trace import Trace
from iodiag.ingest.trace_stream import GROUPS, FlagStats, Spans, TraceSummary, union

TRACE_MODULES = ("DXT_MPIIO", "DXT_POSIX")


# --- choosing the segments --------------------------------------------------------------------------


def traces(profile: JobProfile) -> dict[str, Trace]:
    """The loaded, non-empty traces of a profile (none unless it was read with DXT)."""
    out: dict[str, Trace] = {}
    for m in TRACE_MODULES:
        t = profile.trace(m)
        if t is not None and len(t) > 0:
            out[m] = t
    return out


def concat(parts: list[Trace], module: str, keep: list[np.ndarray | None] | None = None) -> Trace:
    """One trace from several (optionally keeping a boolean mask of segments of each)."""
    if keep is None:
        keep = [None] * len(parts)
    ids, inverse = np.unique(np.concatenate([p.file_ids for p in parts]), return_inverse=True)
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("rank", "file", "op", "offset", "length", "start", "end")}
    base = 0
    hosts: dict[int, str] = {}
    stacks: list[np.ndarray] = []
    with_stacks = any(p.stack is not None for p in parts)
    for p, mask in zip(parts, keep, strict=True):
        remap = inverse[base : base + len(p.file_ids)].astype(np.int32)
        base += len(p.file_ids)
        sel = slice(None) if mask is None else mask
        cols["rank"].append(p.rank[sel])
        cols["file"].append(remap[p.file[sel]])
        for k in ("op", "offset", "length", "start", "end"):
            cols[k].append(getattr(p, k)[sel])
        for r, h in p.hostnames.items():
            hosts.setdefault(r, h)
        if with_stacks:
            own = p.stack if p.stack is not None else np.full(len(p), -1, dtype=np.int32)
            stacks.append(own[sel])
    j = {k: np.concatenate(v) for k, v in cols.items()}
    return Trace(
        module=module,
        rank=j["rank"],
        file=j["file"],
        op=j["op"],
        offset=j["offset"],
        length=j["length"],
        start=j["start"],
        end=j["end"],
        file_ids=ids.astype(np.uint64),
        hostnames=hosts,
        records=sum(p.records for p in parts),
        stack=np.concatenate(stacks) if with_stacks else None,
    )


def top_trace(profile: JobProfile) -> Trace | None:
    """Each file's segments at its top traced layer: DXT_MPIIO for files traced there, else DXT_POSIX.

    MPI-IO calls contain the POSIX requests ROMIO issues for them (and with collective buffering
    only aggregators issue them), so counting both layers would count the same I/O twice.
    """
    ts = traces(profile)
    mpi, posix = ts.get("DXT_MPIIO"), ts.get("DXT_POSIX")
    if mpi is None or posix is None:
        return mpi or posix
    below = np.isin(posix.file_ids, mpi.file_ids)
    if not below.any():
        return concat([mpi, posix], "DXT")
    keep = ~below[posix.file]
    if not keep.any():
        return mpi
    return concat([mpi, posix], "DXT", [None, keep])


def all_segments(profile: JobProfile) -> Trace | None:
    """Every traced segment of both layers (for questions about when *any* I/O happens)."""
    ts = list(traces(profile).values())
    if len(ts) <= 1:
        return ts[0] if ts else None
    return concat(ts, "DXT")


# --- phases -------------------------------------------------------------------------------------------


def busy_intervals(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of the segments' ``[start, end]`` as sorted disjoint intervals (an end before its start, which
    a damaged trace can hold, counts as a point)."""
    return union(start, np.maximum(end, start))


def gap_threshold(gaps: np.ndarray, min_gap: float = 0.0) -> float:
    """DXT Explorer's rule: gaps below mean + one standard deviation lie inside a phase.

    ``min_gap`` is a floor: without it, a trace that is one phase of jittery back-to-back requests
    would be cut at every gap that is a little longer than the jitter's mean.
    """
    if len(gaps) == 0:
        return min_gap
    return max(float(gaps.mean() + gaps.std()), min_gap)


@dataclass(frozen=True)
class Phases:
    start: np.ndarray
    end: np.ndarray
    bytes: np.ndarray
    ops: np.ndarray
    ranks: np.ndarray
    """Distinct ranks with a segment in the phase."""
    seg_phase: np.ndarray
    """Phase index of every segment."""
    threshold: float
    """Gaps shorter than this many seconds were merged into phases."""

    def __len__(self) -> int:
        return len(self.start)

    @property
    def duration(self) -> np.ndarray:
        d: np.ndarray = self.end - self.start
        return d

    @property
    def gaps(self) -> np.ndarray:
        """Idle time between consecutive phases."""
        g: np.ndarray = self.start[1:] - self.end[:-1]
        return g


def phases(trace: Trace, min_gap: float = 0.0) -> Phases:
    istart, iend = busy_intervals(trace.start, trace.end)
    if len(istart) == 0:
        z = np.empty(0)
        return Phases(z, z, z.astype(np.int64), z.astype(np.int64), z.astype(np.int64), z.astype(np.int64), 0.0)
    gaps = istart[1:] - iend[:-1]
    thr = gap_threshold(gaps, min_gap)
    cut = np.r_[True, gaps >= thr]
    first = np.flatnonzero(cut)
    last = np.r_[first[1:] - 1, len(istart) - 1]
    pstart, pend = istart[first], iend[last]
    seg_phase = np.searchsorted(pstart, trace.start, side="right") - 1
    seg_phase = np.clip(seg_phase, 0, len(pstart) - 1)
    n = len(pstart)
    nbytes = np.bincount(seg_phase, weights=trace.length, minlength=n)
    ops = np.bincount(seg_phase, minlength=n)
    key = np.unique(seg_phase.astype(np.int64) * (int(trace.rank.max()) + 1) + trace.rank)
    ranks = np.bincount(key // (int(trace.rank.max()) + 1), minlength=n)
    return Phases(pstart, pend, np.rint(nbytes).astype(np.int64), ops.astype(np.int64), ranks, seg_phase, thr)


# --- per rank -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RankStats:
    rank: np.ndarray
    """Ranks with at least one segment, ascending."""
    ops: np.ndarray
    bytes: np.ndarray
    time: np.ndarray
    """Sum of the rank's segment durations (seconds)."""
    first: np.ndarray
    last: np.ndarray


def rank_stats(trace: Trace) -> RankStats:
    ranks, inv = np.unique(trace.rank, return_inverse=True)
    n = len(ranks)
    ops = np.bincount(inv, minlength=n).astype(np.int64)
    nbytes = np.rint(np.bincount(inv, weights=trace.length, minlength=n)).astype(np.int64)
    time = np.bincount(inv, weights=trace.end - trace.start, minlength=n)
    first = np.full(n, np.inf)
    np.minimum.at(first, inv, trace.start)
    last = np.full(n, -np.inf)
    np.maximum.at(last, inv, trace.end)
    return RankStats(ranks.astype(np.int64), ops, nbytes, time, first, last)


@dataclass(frozen=True)
class PhaseStragglers:
    """Per phase (same order as ``Phases``): who finished last, and how long it was alone."""

    last_rank: np.ndarray
    last_end: np.ndarray
    second_end: np.ndarray
    """When the second-to-last rank finished its I/O in the phase (phase start with one rank)."""
    alone: np.ndarray
    """Seconds the last rank spent in its own I/O after every other rank of the phase had finished
    (its segments clipped to ``[second_end, last_end]``)."""
    alone_start: np.ndarray
    """Start of the last rank's first I/O after ``second_end``."""
    slowest_rank: np.ndarray
    slowest_busy: np.ndarray
    fastest_rank: np.ndarray
    fastest_busy: np.ndarray
    """Busy time = sum of the rank's segment durations within the phase."""


def phase_stragglers(trace: Trace, ph: Phases) -> PhaseStragglers:
    def alone_of(last_rank: np.ndarray, second_end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # The last rank's own I/O after the others finished: the window alone is not enough (a rank
        # that starts late and does one quick request after a long pause is not slow).
        sp = ph.seg_phase
        late = (trace.rank == last_rank[sp]) & (trace.end > second_end[sp])
        clipped_start = np.maximum(trace.start[late], second_end[sp[late]])
        alone = np.bincount(sp[late], weights=trace.end[late] - clipped_start, minlength=len(ph))
        return alone, _first_by_phase(sp[late], clipped_start, len(ph))

    return _stragglers(ph, trace.rank, trace.end - trace.start, trace.end, alone_of)


def _first_by_phase(phase: np.ndarray, start: np.ndarray, n: int) -> np.ndarray:
    first = np.full(n, np.inf)
    np.minimum.at(first, phase, start)
    return first


def _stragglers(
    ph: Phases,
    rank: np.ndarray,
    busy_time: np.ndarray,
    end: np.ndarray,
    alone_of: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
) -> PhaseStragglers:
    """``PhaseStragglers`` from per-item (segment or span) ranks, busy times and ends in ``ph``'s phases.

    ``alone_of(last_rank, second_end)`` gives per phase the last rank's time alone and when it began: the one
    part that segments and prorated spans compute differently.
    """
    n = len(ph)
    width = int(rank.max()) + 1 if len(rank) else 1
    key = ph.seg_phase.astype(np.int64) * width + rank
    groups, inv = np.unique(key, return_inverse=True)
    g_phase = groups // width
    g_rank = groups % width
    busy = np.bincount(inv, weights=busy_time, minlength=len(groups))
    g_end = np.full(len(groups), -np.inf)
    np.maximum.at(g_end, inv, end)
    # Groups are sorted by phase; within each phase order by end, then by busy time.
    by_end = np.lexsort((g_end, g_phase))
    by_busy = np.lexsort((busy, g_phase))
    counts = np.bincount(g_phase, minlength=n)
    lo = np.r_[0, np.cumsum(counts)[:-1]]
    hi = lo + counts - 1
    last_g = by_end[hi]
    second_g = by_end[np.maximum(hi - 1, lo)]
    last_end = g_end[last_g]
    last_rank = g_rank[last_g]
    second_end = np.where(counts > 1, g_end[second_g], ph.start)
    alone, alone_start = alone_of(last_rank, second_end)
    return PhaseStragglers(
        last_rank=last_rank,
        last_end=last_end,
        second_end=second_end,
        alone=np.minimum(alone, np.maximum(last_end - second_end, 0.0)),
        alone_start=np.minimum(alone_start, last_end),
        slowest_rank=g_rank[by_busy[hi]],
        slowest_busy=busy[by_busy[hi]],
        fastest_rank=g_rank[by_busy[lo]],
        fastest_busy=busy[by_busy[lo]],
    )


# --- repeated byte ranges ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Repeats:
    """Bytes of a file moved more than once in one direction (written twice, or read twice)."""

    file: np.ndarray
    """File index (into the trace's ``file_ids``) of each (file, op) with repeats."""
    op: np.ndarray
    moved: np.ndarray
    unique: np.ndarray
    """Bytes of the union of the accessed ranges."""
    repeated: np.ndarray
    """``moved - unique``."""
    segment_mask: np.ndarray
    """Per segment of the trace: it starts before the end of an earlier-offset range of its (file, op)."""


def repeats(trace: Trace) -> Repeats:
    n = len(trace)
    key = trace.file.astype(np.int64) * 2 + trace.op
    order = np.lexsort((trace.offset, key))
    k = key[order]
    off = trace.offset[order]
    end = off + trace.length[order]
    new_group = np.r_[True, k[1:] != k[:-1]] if n else np.empty(0, dtype=bool)
    gstart = np.flatnonzero(new_group)
    gid = np.cumsum(new_group) - 1
    # Running maximum of the range end, restarted per group: shift each group above the previous
    # one so one accumulate does all groups (exact in int64 while the shifted values fit).
    span = int(end.max()) + 1 if n else 1
    if n and span * len(gstart) < (1 << 62):
        shifted = end + gid * span
        run = np.maximum.accumulate(shifted) - gid * span
    else:
        run = np.empty_like(end)
        for a, b in zip(gstart, np.r_[gstart[1:], n], strict=True):
            run[a:b] = np.maximum.accumulate(end[a:b])
    prev = np.empty_like(run)
    if n:
        prev[0] = 0
        prev[1:] = run[:-1]
    prev[gstart] = np.iinfo(np.int64).min  # first range of a group repeats nothing
    # New bytes each range adds to the union: the part beyond the running end of earlier ranges.
    added = np.clip(end - np.maximum(off, prev), 0, None)
    moved = np.add.reduceat(end - off, gstart) if n else np.empty(0, np.int64)
    unique = np.add.reduceat(added, gstart) if n else np.empty(0, np.int64)
    mask_sorted = off < prev
    mask = np.empty(n, dtype=bool)
    mask[order] = mask_sorted
    rep = moved - unique
    sel = rep > 0
    gk = k[gstart]
    return Repeats(
        file=(gk // 2)[sel].astype(np.int64),
        op=(gk % 2)[sel].astype(np.int8),
        moved=moved[sel],
        unique=unique[sel],
        repeated=rep[sel],
        segment_mask=mask,
    )


# --- streamed traces ----------------------------------------------------------------------------------
#
# A trace above the loader's budget arrives as a ``TraceSummary`` per module (see ``ingest.trace_stream``).
# The views below give the same answers from it: per-rank statistics are sums over (record, operation)
# accumulators (exact); phases come from the exact busy intervals with the same gap rule; per-phase and
# straggler statistics are sums over spans, which never cross a phase boundary (exact but for the time
# a span straddles the moment the second-to-last rank finished, prorated).


@dataclass(frozen=True)
class StreamView:
    """One or both summarised DXT modules as one trace: records concatenated, files on one index."""

    module: str
    file_ids: np.ndarray
    rec_file: np.ndarray
    rec_rank: np.ndarray
    ops: np.ndarray
    """Per (record, op), index ``2 * record + op`` (likewise ``bytes``, ``time``, ``first``, ``last``)."""
    bytes: np.ndarray
    time: np.ndarray
    first: np.ndarray
    last: np.ndarray
    flags: dict[str, FlagStats]
    spans: Spans
    busy_start: np.ndarray
    busy_end: np.ndarray
    ranges: tuple[np.ndarray, np.ndarray, np.ndarray]
    """Union of accessed byte ranges: (file * 2 + op, start, end) with files on this view's index."""
    max_end: float
    sample: Trace
    coarsened: float = 0.0

    @property
    def segments(self) -> int:
        return int(self.ops.sum())

    @property
    def rec_op_file(self) -> np.ndarray:
        out: np.ndarray = np.repeat(self.rec_file.astype(np.int64), 2)
        return out

    @property
    def rec_op_rank(self) -> np.ndarray:
        out: np.ndarray = np.repeat(self.rec_rank.astype(np.int64), 2)
        return out


def summaries(profile: JobProfile) -> dict[str, TraceSummary]:
    out: dict[str, TraceSummary] = {}
    for m in TRACE_MODULES:
        s = profile.trace_summaries.get(m)
        if s is not None and s.segments > 0:
            out[m] = s
    return out


def _view(parts: list[tuple[TraceSummary, np.ndarray, tuple[str, ...]]], module: str) -> StreamView:
    """``parts``: (summary, records kept, busy groups kept)."""
    if len(parts) == 1:  # files keep the reader's order, as the in-memory trace does (ties break alike)
        ids, inverse = parts[0][0].file_ids, np.arange(len(parts[0][0].file_ids))
    else:
        ids, inverse = np.unique(np.concatenate([p.file_ids for p, _, _ in parts]), return_inverse=True)
    cols: dict[str, list[np.ndarray]] = {
        k: [] for k in ("rec_file", "rec_rank", "ops", "bytes", "time", "first", "last")
    }
    flags: dict[str, dict[str, list[np.ndarray]]] = {}
    spans: list[Spans] = []
    busy_s: list[np.ndarray] = []
    busy_e: list[np.ndarray] = []
    rk: list[np.ndarray] = []
    rlo: list[np.ndarray] = []
    rhi: list[np.ndarray] = []
    samples: list[Trace] = []
    keeps: list[np.ndarray | None] = []
    base_file = 0
    base_rec = 0
    for s, keep, groups in parts:
        remap = inverse[base_file : base_file + len(s.file_ids)].astype(np.int64)
        base_file += len(s.file_ids)
        rec_keep = np.flatnonzero(keep)
        new_index = np.full(s.records, -1, dtype=np.int64)
        new_index[rec_keep] = base_rec + np.arange(len(rec_keep))
        base_rec += len(rec_keep)
        ro = np.repeat(rec_keep * 2, 2) + np.tile([0, 1], len(rec_keep))
        cols["rec_file"].append(remap[s.rec_file[rec_keep]])
        cols["rec_rank"].append(s.rec_rank[rec_keep].astype(np.int64))
        for k in ("ops", "bytes", "time", "first", "last"):
            cols[k].append(getattr(s, k)[ro])
        for name, fs in s.flags.items():
            d = flags.setdefault(name, {k: [] for k in ("ops", "bytes", "time", "first", "last")})
            for k in d:
                d[k].append(getattr(fs, k)[ro])
        sp = s.spans.take(keep[s.spans.record.astype(np.int64)]) if len(s.spans) else s.spans
        spans.append(Spans(new_index[sp.record.astype(np.int64)], sp.op, sp.start, sp.end, sp.ops, sp.bytes, sp.busy))
        for g in groups:
            if g in s.busy:
                busy_s.append(s.busy[g][0])
                busy_e.append(s.busy[g][1])
        key, lo, hi = s.ranges
        f = key // 2
        kept_files = np.zeros(len(s.file_ids), dtype=bool)
        kept_files[s.rec_file[rec_keep]] = True
        sel = kept_files[f] if len(f) else np.zeros(0, dtype=bool)
        rk.append(remap[f[sel]] * 2 + key[sel] % 2)
        rlo.append(lo[sel])
        rhi.append(hi[sel])
        samples.append(s.sample)
        keeps.append(kept_files[s.sample.file] if len(s.sample) else None)
    j = {k: np.concatenate(v) for k, v in cols.items()}
    all_spans = Spans(*(np.concatenate([getattr(x, k) for x in spans]) for k in Spans.__dataclass_fields__))
    bs, be = union(np.concatenate(busy_s), np.concatenate(busy_e)) if busy_s else (np.empty(0), np.empty(0))
    key = np.concatenate(rk)
    order = np.lexsort((np.concatenate(rlo), key))
    sample = concat(samples, module, keeps) if len(samples) > 1 else samples[0]
    if len(samples) == 1 and keeps[0] is not None and not bool(np.all(keeps[0])):
        sample = concat(samples, module, keeps)
    return StreamView(
        module=module,
        file_ids=ids.astype(np.uint64),
        rec_file=j["rec_file"],
        rec_rank=j["rec_rank"],
        ops=j["ops"].astype(np.int64),
        bytes=j["bytes"].astype(np.int64),
        time=j["time"],
        first=j["first"],
        last=j["last"],
        flags={
            n: FlagStats(*(np.concatenate(d[k]) for k in ("ops", "bytes", "time", "first", "last")))
            for n, d in flags.items()
        },
        spans=all_spans,
        busy_start=bs,
        busy_end=be,
        ranges=(key[order], np.concatenate(rlo)[order], np.concatenate(rhi)[order]),
        max_end=max(p.max_end for p, _, _ in parts),
        sample=sample,
        coarsened=max(p.coarsened for p, _, _ in parts),
    )


def _all_records(s: TraceSummary) -> np.ndarray:
    return np.ones(s.records, dtype=bool)


def stream_top(profile: JobProfile) -> StreamView | None:
    """``top_trace`` of a streamed profile: DXT_MPIIO's records, and DXT_POSIX's for files MPI-IO did not trace.

    Busy intervals of DXT_POSIX are kept apart for files that have MPI-IO counters; with a DXT_MPIIO trace
    those are left out (ROMIO's requests for MPI-IO calls), the rest join MPI-IO's.
    """
    ss = summaries(profile)
    mpi, posix = ss.get("DXT_MPIIO"), ss.get("DXT_POSIX")
    if mpi is None and posix is None:
        return None
    if mpi is None:
        assert posix is not None
        return _view([(posix, _all_records(posix), ("posix_below", "posix_only"))], "DXT_POSIX")
    if posix is None:
        return _view([(mpi, _all_records(mpi), ("mpiio",))], "DXT_MPIIO")
    keep = ~np.isin(posix.file_ids[posix.rec_file], mpi.file_ids)
    if not keep.any():
        return _view([(mpi, _all_records(mpi), ("mpiio",))], "DXT_MPIIO")
    return _view([(mpi, _all_records(mpi), ("mpiio",)), (posix, keep, ("posix_only",))], "DXT")


def stream_all(profile: JobProfile) -> StreamView | None:
    ss = list(summaries(profile).values())
    if not ss:
        return None
    return _view([(s, _all_records(s), GROUPS) for s in ss], ss[0].module if len(ss) == 1 else "DXT")


def stream_module(profile: JobProfile, module: str) -> StreamView | None:
    s = summaries(profile).get(module)
    return None if s is None else _view([(s, _all_records(s), GROUPS)], module)


def stream_rank_stats(v: StreamView) -> RankStats:
    r = v.rec_op_rank
    has = v.ops > 0
    ranks, inv = np.unique(r[has], return_inverse=True)
    n = len(ranks)
    first = np.full(n, np.inf)
    np.minimum.at(first, inv, v.first[has])
    last = np.full(n, -np.inf)
    np.maximum.at(last, inv, v.last[has])
    return RankStats(
        rank=ranks.astype(np.int64),
        ops=np.bincount(inv, weights=v.ops[has], minlength=n).astype(np.int64),
        bytes=np.rint(np.bincount(inv, weights=v.bytes[has], minlength=n)).astype(np.int64),
        time=np.bincount(inv, weights=v.time[has], minlength=n),
        first=first,
        last=last,
    )


def stream_phases(v: StreamView, min_gap: float = 0.0) -> Phases:
    """``phases`` from the exact busy intervals; ``seg_phase`` holds the phase of each *span* of ``v.spans``."""
    istart, iend = v.busy_start, v.busy_end
    if len(istart) == 0:
        z = np.empty(0)
        return Phases(z, z, z.astype(np.int64), z.astype(np.int64), z.astype(np.int64), z.astype(np.int64), 0.0)
    gaps = istart[1:] - iend[:-1]
    thr = gap_threshold(gaps, min_gap)
    cut = np.r_[True, gaps >= thr]
    first = np.flatnonzero(cut)
    last = np.r_[first[1:] - 1, len(istart) - 1]
    pstart, pend = istart[first], iend[last]
    sp = v.spans
    span_phase = np.clip(np.searchsorted(pstart, sp.start, side="right") - 1, 0, len(pstart) - 1)
    n = len(pstart)
    nbytes = np.bincount(span_phase, weights=sp.bytes, minlength=n)
    ops = np.bincount(span_phase, weights=sp.ops, minlength=n)
    rank = v.rec_rank[sp.record.astype(np.int64)]
    width = int(rank.max()) + 1 if len(rank) else 1
    key = np.unique(span_phase.astype(np.int64) * width + rank)
    ranks = np.bincount(key // width, minlength=n)
    return Phases(pstart, pend, np.rint(nbytes).astype(np.int64), np.rint(ops).astype(np.int64), ranks, span_phase, thr)


def stream_alone_fraction(v: StreamView, ph: Phases, last_rank: np.ndarray, second_end: np.ndarray) -> np.ndarray:
    """Per span: the share of it (prorated by time) that the phase's last rank did after ``second_end``."""
    sp = v.spans
    p = ph.seg_phase
    rank = v.rec_rank[sp.record.astype(np.int64)]
    mine = rank == last_rank[p]
    cut = second_end[p]
    length = sp.end - sp.start
    after = np.clip(sp.end - np.maximum(sp.start, cut), 0.0, None)
    frac = np.where(length > 0, after / np.where(length > 0, length, 1.0), (sp.end > cut).astype(np.float64))
    out: np.ndarray = np.where(mine & (sp.end > cut), np.clip(frac, 0.0, 1.0), 0.0)
    return out


def stream_stragglers(v: StreamView, ph: Phases) -> PhaseStragglers:
    """``phase_stragglers`` over spans."""
    sp = v.spans
    rank = v.rec_rank[sp.record.astype(np.int64)]

    def alone_of(last_rank: np.ndarray, second_end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        frac = stream_alone_fraction(v, ph, last_rank, second_end)
        late = frac > 0
        p = ph.seg_phase[late]
        alone = np.bincount(p, weights=sp.busy[late] * frac[late], minlength=len(ph))
        return alone, _first_by_phase(p, np.maximum(sp.start[late], second_end[p]), len(ph))

    return _stragglers(ph, rank, sp.busy, sp.end, alone_of)


def stream_repeats(v: StreamView) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per (file, op) with bytes moved more than once: (file * 2 + op, moved, distinct, repeated)."""
    key = v.rec_op_file * 2 + np.tile([0, 1], len(v.rec_file))
    n = 2 * len(v.file_ids)
    moved = np.bincount(key, weights=v.bytes, minlength=n)
    rk, lo, hi = v.ranges
    unique = np.bincount(rk, weights=(hi - lo).astype(np.float64), minlength=n)
    rep = np.rint(moved - unique).astype(np.int64)
    sel = np.flatnonzero(rep > 0)
    return sel, np.rint(moved[sel]).astype(np.int64), np.rint(unique[sel]).astype(np.int64), rep[sel]


def sample_traces(profile: JobProfile) -> dict[str, Trace]:
    """What the plots draw: the traces when held, else each streamed module's sample (see ``sample_stride``)."""
    held = traces(profile)
    if held:
        return held
    return {m: s.sample for m, s in summaries(profile).items() if len(s.sample)}


def sample_stride(profile: JobProfile, module: str) -> int:
    """1 for a held trace; k for a streamed one, whose sample holds every k-th segment."""
    s = profile.trace_summaries.get(module)
    return s.sample_stride if s is not None and module not in profile.traces else 1


def plot_top(profile: JobProfile) -> Trace | None:
    """``top_trace``, or for a streamed profile the same selection of its samples."""
    top = top_trace(profile)
    if top is not None or not summaries(profile):
        return top
    ss = sample_traces(profile)
    mpi, posix = ss.get("DXT_MPIIO"), ss.get("DXT_POSIX")
    if mpi is None or posix is None:
        return mpi or posix
    keep = ~np.isin(posix.file_ids, mpi.file_ids)[posix.file]
    return concat([mpi, posix], "DXT", [None, keep]) if keep.any() else mpi


def stream_file_totals(v: StreamView, file_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact bytes, operations and time per file of ``file_ids`` (another index of the same files)."""
    f = v.rec_op_file
    nb = np.bincount(f, weights=v.bytes, minlength=len(v.file_ids))
    no = np.bincount(f, weights=v.ops, minlength=len(v.file_ids))
    nt = np.bincount(f, weights=v.time, minlength=len(v.file_ids))
    sorter = np.argsort(v.file_ids, kind="stable")
    at = sorter[np.minimum(np.searchsorted(v.file_ids, file_ids, sorter=sorter), len(v.file_ids) - 1)]
    found = v.file_ids[at] == file_ids
    return (
        np.where(found, nb[at], 0.0),
        np.where(found, np.rint(no[at]), 0).astype(np.int64),
        np.where(found, nt[at], 0.0),
    )
