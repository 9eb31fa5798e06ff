"""Checks on DXT traces: when the I/O happened, which rank did it, and what waited for whom.

They run only on profiles read with their traces (``load_profile(path, include=("DXT",))``): a
profile without DXT never builds any of these views. Each finding names its time window with the
metrics ``window_start`` and ``window_end`` (seconds since job start).

Unless said otherwise the checks look at each file at its top traced layer (``top_trace``):
DXT_MPIIO for files traced there, DXT_POSIX for the rest.

A trace too large to hold (above the loader's segment budget) arrives summarised while streaming;
each check then hands over to its twin in ``trace_streamed``, same rule and same metrics from the
summary's accumulators. Both build their findings with ``trace_hits``.
"""

from __future__ import annotations

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.hits import streamed as trace_streamed
from iodiag.analysis.hits import trace as trace_hits
from iodiag.analysis.hits.trace import Files
from iodiag.analysis.models import Layer, Severity
from iodiag.analysis.registry import Hit, Kind, check
from iodiag.analysis.views.context import Context
from iodiag.analysis.views.trace import (
    Phases,
    RankStats,
    all_segments,
    phase_stragglers,
    phases,
    rank_stats,
    repeats,
    top_trace,
)
from iodiag.core.thresholds import Thresholds
from iodiag.ingest.trace import READ, Trace


def _top(ctx: Context) -> Trace | None:
    return ctx.memo("trace.top", lambda: top_trace(ctx.profile))


def _runtime(ctx: Context, tr: Trace) -> float:
    return trace_hits.run_time(ctx, float(tr.end.max()) if len(tr) else 0.0)


def _phases(ctx: Context, t: Thresholds, key: str, tr: Trace) -> Phases:
    return ctx.memo(f"trace.phases.{key}", lambda: phases(tr, t.trace_phase_min_gap * _runtime(ctx, tr)))


def _rank_stats(ctx: Context, tr: Trace) -> RankStats:
    return ctx.memo("trace.ranks", lambda: rank_stats(tr))


def _files_by_bytes(ctx: Context, tr: Trace, mask: np.ndarray, name: str) -> Files:
    """Top files (by bytes) among the segments in ``mask``, with bytes and operation counts."""
    return trace_hits.files_by_bytes(ctx, tr.file_ids, tr.file[mask], tr.length[mask], name)


# --- T01 ---------------------------------------------------------------------------------------------


@check(
    "T01",
    title="One rank holds up an I/O phase (straggler)",
    layer=Layer.JOB,
    severity=Severity.WARNING,
    recommendations=("balance-rank-io",),
    family="imbalance",
)
def phase_stragglers_check(ctx: Context, t: Thresholds) -> Hit | None:
    """A rank still doing I/O alone after every other rank of the phase has finished.

    Default threshold 25 %: during that time every other rank of the phase waits (phases end at a
    synchronisation in bulk-synchronous codes), so the phase would be at least a quarter shorter
    without the straggler, which is more than run-to-run jitter on a shared file system and the
    same order as the 15 % P19 uses for time imbalance on one file.
    """
    if trace_streamed.streamed(ctx):
        return trace_streamed.t01(ctx, t)
    tr = _top(ctx)
    if tr is None:
        return None
    runtime = _runtime(ctx, tr)
    ph = _phases(ctx, t, "top", tr)
    s = trace_hits.straggler(t, runtime, ph, phase_stragglers(tr, ph))
    if s is None:
        return None
    in_window = (ph.seg_phase == s.w) & (tr.rank == s.rank) & (tr.end > s.second_end)
    files = _files_by_bytes(ctx, tr, in_window, "bytes_in_window")
    return trace_hits.straggler_hit(ctx, s, files, tr.module, trace=tr, segments=in_window)


# --- T02 ---------------------------------------------------------------------------------------------


@check(
    "T02",
    title="Rank 0 does most of the I/O",
    layer=Layer.JOB,
    severity=Severity.WARNING,
    recommendations=("use-parallel-io-library", "balance-rank-io"),
    family="rank0",
)
def rank0_heavy(ctx: Context, t: Thresholds) -> Hit | None:
    if trace_streamed.streamed(ctx):
        return trace_streamed.t02(ctx, t)
    tr = _top(ctx)
    if tr is None or ctx.meta.nprocs <= 1:
        return None
    r = trace_hits.rank0_heavy(t, _rank_stats(ctx, tr))
    if r is None:
        return None
    mine0 = tr.rank == 0
    files = _files_by_bytes(ctx, tr, mine0, "rank0_bytes")
    return trace_hits.rank0_hit(ctx, r, files, tr.module, trace=tr, segments=mine0)


# --- T03 ---------------------------------------------------------------------------------------------


@check(
    "T03",
    title="Unbalanced ranks: more operations, bytes and I/O time than the others",
    layer=Layer.JOB,
    severity=Severity.WARNING,
    recommendations=("balance-rank-io",),
    family="imbalance",
)
def unbalanced_ranks(ctx: Context, t: Thresholds) -> Hit | None:
    """DXT Explorer's definition: operations, bytes and time each above mean + one standard deviation.

    Ranks are those with traced I/O. The margin threshold keeps jitter out: with identical work
    per rank the standard deviation is tiny and a rank a few percent slower would pass the rule.
    """
    if trace_streamed.streamed(ctx):
        return trace_streamed.t03(ctx, t)
    tr = _top(ctx)
    if tr is None:
        return None
    u = trace_hits.unbalanced(t, _rank_stats(ctx, tr))
    if u is None:
        return None
    mask = np.isin(tr.rank, u.ranks)
    files = _files_by_bytes(ctx, tr, mask, "bytes_by_unbalanced_ranks")
    return trace_hits.unbalanced_hit(ctx, u, files, tr.module, trace=tr, segments=mask)


# --- T04 ---------------------------------------------------------------------------------------------


@check(
    "T04",
    title="Long idle gaps between I/O phases: I/O could overlap computation",
    layer=Layer.JOB,
    severity=Severity.INFO,
    kind=Kind.OPPORTUNITY,
)
def idle_gaps(ctx: Context, t: Thresholds) -> Hit | None:
    """Gaps with no traced I/O at any layer between phases, long against the run time.

    Asynchronous I/O can hide a phase behind the gap next to it: a write phase behind the
    computation after it (write-behind), a read phase behind the computation before it
    (prefetch). The time it could save is, per long gap, the shorter of the gap and that phase.
    """
    if trace_streamed.streamed(ctx):
        return trace_streamed.t04(ctx, t)
    tr = ctx.memo("trace.all", lambda: all_segments(ctx.profile))
    if tr is None:
        return None
    runtime = _runtime(ctx, tr)
    ph = _phases(ctx, t, "all", tr)
    ig = trace_hits.idle_gaps(t, runtime, ph, tr.op, tr.length)
    if ig is None:
        return None
    mask = np.isin(ph.seg_phase, ig.hidden)
    files = _files_by_bytes(ctx, tr, mask, "bytes_in_hideable_phases")
    ranks = trace_hits.top_ranks(tr.rank[mask], tr.length[mask], ctx.top_n)
    return trace_hits.idle_gaps_hit(ctx, t, ig, files, ranks, tr.module, trace=tr, segments=mask)


# --- T05 ---------------------------------------------------------------------------------------------


@check(
    "T05",
    title="The same bytes of a file are written or read more than once",
    layer=Layer.JOB,
    severity=Severity.WARNING,
    recommendations=("avoid-redundant-io",),
    family="redundant",
)
def repeated_ranges(ctx: Context, t: Thresholds) -> list[Hit] | None:
    if trace_streamed.streamed(ctx):
        return trace_streamed.t05(ctx, t)
    tr = _top(ctx)
    if tr is None:
        return None
    rep = ctx.memo("trace.repeats", lambda: repeats(tr))
    hits: list[Hit] = []
    for op in (0, READ):
        sel = (rep.op == op) & (rep.repeated >= t.redundant_min_bytes)
        if not sel.any():
            continue
        fidx = rep.file[sel]
        seg = rep.segment_mask & (tr.op == op) & np.isin(tr.file, fidx)
        seconds, _ = costs.trace_segments_cost(ctx, tr, seg, t, subtract_rate=False)
        r = trace_hits.Repeated(
            op=op,
            file_ids=tr.file_ids,
            fidx=fidx,
            again=rep.repeated[sel],
            moved=rep.moved[sel],
            uniq=rep.unique[sel],
            requests=int(seg.sum()),
            ranks_involved=len(np.unique(tr.rank[seg])),
            start=float(tr.start[seg].min()),
            end=float(tr.end[seg].max()),
            ranks=trace_hits.top_ranks(tr.rank[seg], tr.length[seg], ctx.top_n),
            seconds=seconds,
        )
        hits.append(trace_hits.repeated_hit(ctx, r, tr.module, trace=tr, segments=seg))
    return hits or None
