"""T01-T08 on traces summarised while streaming (``JobProfile.trace_summaries``, see ``ingest.trace_stream``).

Same rules, same metrics and messages as ``trace`` and ``trace_requests``, computed from the summary's
accumulators instead of per-segment masks. What differs, and by how much at most:

- per-rank, per-file and per-request numbers (T02, T03, T06-T08) are exact;
- phases (T01, T04) are exact while the busy intervals stay under their cap; T01's time alone and its
  window's bytes prorate the one span that straddles the moment the second-to-last rank finished;
- T05's repeated bytes are exact; which *requests* repeat is decided against the byte ranges of earlier
  chunks at run granularity, so ``repeating_requests`` and its window can differ from the in-memory count;
- costs that the in-memory path clips per segment (a request faster than the reference rate counts 0)
  are clipped per rank here;
- findings carry no source lines (the summary keeps no per-segment call stacks).

The findings themselves (messages, metrics, files, ranks, costs' wording) are built by ``trace_hits``, as for
the in-memory path.
"""

from __future__ import annotations

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.hits import trace as trace_hits
from iodiag.analysis.hits.trace import Files
from iodiag.analysis.models import Metric, Unit
from iodiag.analysis.registry import Hit
from iodiag.analysis.views.context import Context
from iodiag.analysis.views.trace import (
    Phases,
    RankStats,
    StreamView,
    stream_all,
    stream_module,
    stream_phases,
    stream_rank_stats,
    stream_repeats,
    stream_stragglers,
    stream_top,
)
from iodiag.core.thresholds import Thresholds
from iodiag.ingest.trace import READ
from iodiag.ingest.trace_stream import FlagStats


def streamed(ctx: Context) -> bool:
    return any(s.segments > 0 for s in ctx.profile.trace_summaries.values())


def _top(ctx: Context) -> StreamView | None:
    return ctx.memo("stream.top", lambda: stream_top(ctx.profile))


def _runtime(ctx: Context, v: StreamView) -> float:
    return trace_hits.run_time(ctx, v.max_end)


def _phases(ctx: Context, t: Thresholds, key: str, v: StreamView) -> Phases:
    return ctx.memo(f"stream.phases.{key}", lambda: stream_phases(v, t.trace_phase_min_gap * _runtime(ctx, v)))


def _rank_stats(ctx: Context, v: StreamView) -> RankStats:
    return ctx.memo("stream.ranks", lambda: stream_rank_stats(v))


def _files(ctx: Context, v: StreamView, file: np.ndarray, nbytes: np.ndarray, ops: np.ndarray, name: str) -> Files:
    """Top files by bytes (then operations) of per-item (file index, bytes, operations)."""
    return trace_hits.files_by_bytes(ctx, v.file_ids, file, nbytes, name, ops)


def _rank_cost(
    ctx: Context, t: Thresholds, rank: np.ndarray, time: np.ndarray, nbytes: np.ndarray, rate: bool
) -> tuple[float, bool]:
    """``costs.trace_segments_cost`` from per-(record, op) sums: the busiest rank's time less its bytes at the
    large-request rate (clipped per rank, not per request)."""
    sel = time > 0
    if not sel.any():
        return 0.0, True
    r, own = costs.large_request_rate(ctx, "WRITE", t)
    _, inv = np.unique(rank[sel], return_inverse=True)
    per_time = np.bincount(inv, weights=time[sel])
    per_bytes = np.bincount(inv, weights=nbytes[sel].astype(np.float64))
    excess = np.clip(per_time - (per_bytes / r if rate else 0.0), 0, None)
    busiest = float(excess.max())
    s = ctx.io_share
    return (min(busiest, s.slowest_rank_io_s) if s is not None else busiest), own


# --- T01 ---------------------------------------------------------------------------------------------


def t01(ctx: Context, t: Thresholds) -> Hit | None:
    v = _top(ctx)
    if v is None:
        return None
    ph = _phases(ctx, t, "top", v)
    s = trace_hits.straggler(t, _runtime(ctx, v), ph, stream_stragglers(v, ph))
    if s is None:
        return None
    sp = v.spans
    rec = sp.record.astype(np.int64)
    inw = (ph.seg_phase == s.w) & (v.rec_rank[rec] == s.rank) & (sp.end > s.second_end)
    files = _files(ctx, v, v.rec_file[rec[inw]], sp.bytes[inw], sp.ops[inw], "bytes_in_window")
    return trace_hits.straggler_hit(ctx, s, files, v.module)


# --- T02 ---------------------------------------------------------------------------------------------


def t02(ctx: Context, t: Thresholds) -> Hit | None:
    v = _top(ctx)
    if v is None or ctx.meta.nprocs <= 1:
        return None
    r = trace_hits.rank0_heavy(t, _rank_stats(ctx, v))
    if r is None:
        return None
    mine0 = v.rec_op_rank == 0
    files = _files(ctx, v, v.rec_op_file[mine0], v.bytes[mine0], v.ops[mine0], "rank0_bytes")
    return trace_hits.rank0_hit(ctx, r, files, v.module)


# --- T03 ---------------------------------------------------------------------------------------------


def t03(ctx: Context, t: Thresholds) -> Hit | None:
    v = _top(ctx)
    if v is None:
        return None
    u = trace_hits.unbalanced(t, _rank_stats(ctx, v))
    if u is None:
        return None
    mask = np.isin(v.rec_op_rank, u.ranks)
    files = _files(ctx, v, v.rec_op_file[mask], v.bytes[mask], v.ops[mask], "bytes_by_unbalanced_ranks")
    return trace_hits.unbalanced_hit(ctx, u, files, v.module)


# --- T04 ---------------------------------------------------------------------------------------------


def t04(ctx: Context, t: Thresholds) -> Hit | None:
    v = ctx.memo("stream.all", lambda: stream_all(ctx.profile))
    if v is None:
        return None
    ph = _phases(ctx, t, "all", v)
    sp = v.spans
    ig = trace_hits.idle_gaps(t, _runtime(ctx, v), ph, sp.op, sp.bytes)
    if ig is None:
        return None
    mask = np.isin(ph.seg_phase, ig.hidden)
    rec = sp.record.astype(np.int64)
    files = _files(ctx, v, v.rec_file[rec[mask]], sp.bytes[mask], sp.ops[mask], "bytes_in_hideable_phases")
    ranks = trace_hits.top_ranks(v.rec_rank[rec[mask]], sp.bytes[mask], ctx.top_n, sp.ops[mask])
    return trace_hits.idle_gaps_hit(ctx, t, ig, files, ranks, v.module)


# --- T05 ---------------------------------------------------------------------------------------------


def t05(ctx: Context, t: Thresholds) -> list[Hit] | None:
    v = _top(ctx)
    if v is None:
        return None
    keys, moved_all_k, uniq_all, rep_all = stream_repeats(v)
    flag = v.flags["repeat"]
    ro_op = np.tile(np.array([0, 1]), len(v.rec_file))
    hits: list[Hit] = []
    for op in (0, READ):
        sel = (keys % 2 == op) & (rep_all >= t.redundant_min_bytes)
        if not sel.any():
            continue
        fidx = keys[sel] // 2
        seg = (ro_op == op) & np.isin(v.rec_op_file, fidx) & (flag.ops > 0)
        rank = v.rec_op_rank[seg]
        seconds, _ = _rank_cost(ctx, t, rank, flag.time[seg], flag.bytes[seg], rate=False)
        r = trace_hits.Repeated(
            op=op,
            file_ids=v.file_ids,
            fidx=fidx,
            again=rep_all[sel],
            moved=moved_all_k[sel],
            uniq=uniq_all[sel],
            requests=int(flag.ops[seg].sum()),
            ranks_involved=len(np.unique(rank)),
            start=float(flag.first[seg].min()) if seg.any() else 0.0,
            end=float(flag.last[seg].max()) if seg.any() else 0.0,
            ranks=trace_hits.top_ranks(rank, flag.bytes[seg], ctx.top_n, flag.ops[seg]),
            seconds=seconds,
        )
        hits.append(trace_hits.repeated_hit(ctx, r, v.module))
    return hits or None


# --- T06-T08 -----------------------------------------------------------------------------------------


def _posix(ctx: Context) -> StreamView | None:
    return ctx.memo("stream.posix", lambda: stream_module(ctx.profile, "DXT_POSIX"))


def _flagged(v: StreamView, f: FlagStats, sel: np.ndarray) -> trace_hits.Flagged:
    """``trace_requests._flagged`` from per-(record, op) sums; ``sel`` picks the (record, op) entries."""
    nf = len(v.file_ids)
    bad = sel & (f.ops > 0)
    file = v.rec_op_file
    first = np.full(nf, np.inf)
    last = np.full(nf, -np.inf)
    np.minimum.at(first, file[bad], f.first[bad])
    np.maximum.at(last, file[bad], f.last[bad])
    rank = v.rec_op_rank
    rmax = int(rank.max()) + 1 if len(rank) else 1
    pairs = np.unique(file[bad] * rmax + rank[bad])
    return trace_hits.Flagged(
        module=v.module,
        file_ids=v.file_ids,
        requests=int(f.ops[bad].sum()),
        traced=v.segments,
        per_file=np.bincount(file[bad], weights=f.ops[bad], minlength=nf),
        all_file=np.bincount(file, weights=v.ops, minlength=nf),
        first=first,
        last=last,
        nbytes=np.bincount(file[bad], weights=f.bytes[bad], minlength=nf),
        ranks_per_file=np.bincount(pairs // rmax, minlength=nf),
        per_rank=np.bincount(rank[bad], weights=f.ops[bad]),
    )


def by_op(ctx: Context, t: Thresholds, share: float, flag: str, what: str, why: str) -> list[Hit] | None:
    v = _posix(ctx)
    if v is None:
        return None
    f = v.flags[flag]
    ro_op = np.tile(np.array([0, 1]), len(v.rec_file))
    hits = []
    for op, verb in ((0, "writes"), (READ, "reads")):
        mine = ro_op == op
        n_bad = int(f.ops[mine].sum())
        if not trace_hits.fires(n_bad, int(v.ops[mine].sum()), share, t):
            continue
        extra = [Metric(name="op", value=verb, unit=Unit.TEXT)]
        hit = trace_hits.flagged_hit(ctx, _flagged(v, f, mine), what, f"{why} {verb}", extra)
        sel = mine & (f.ops > 0)
        seconds, own = _rank_cost(ctx, t, v.rec_op_rank[sel], f.time[sel], f.bytes[sel], rate=True)
        hit.cost = trace_hits.request_cost(seconds, own, what, verb, n_bad)
        hits.append(hit)
    return hits or None
