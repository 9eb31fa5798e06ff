"""Checks on DXT traces: when the I/O happened, which rank did it, and what waited for whom.

They run only on profiles read with their traces (``load_profile(path, include=("DXT",))``): a
profile without DXT never builds any of these views. Each finding names its time window with the
metrics ``window_start`` and ``window_end`` (seconds since job start).

Unless said otherwise the checks look at each file at its top traced layer (``top_trace``):
DXT_MPIIO for files traced there, DXT_POSIX for the rest.

A trace too large to hold (above the loader's segment budget) arrives summarised while streaming;
each check then hands over to its twin in ``trace_streamed``, same rule and same metrics from the
summary's accumulators.
"""

from __future__ import annotations

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.checks import trace_streamed
from iodiag.analysis.context import Context, pct
from iodiag.analysis.models import FileEvidence, Layer, Metric, Severity, Unit, window_metrics
from iodiag.analysis.registry import Hit, Kind, check
from iodiag.analysis.trace_views import (
    Phases,
    RankStats,
    Repeats,
    all_segments,
    phase_stragglers,
    phases,
    rank_stats,
    repeats,
    top_trace,
)
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes, human_seconds
from iodiag.ingest.trace import READ, Trace

_MISSING = object()


def _cached(ctx: Context, key: str, make: object) -> object:
    v = ctx.cache.get(key, _MISSING)
    if v is _MISSING:
        v = ctx.cache[key] = make() if callable(make) else make
    return v


def _top(ctx: Context) -> Trace | None:
    v = _cached(ctx, "trace.top", lambda: top_trace(ctx.profile))
    return v if isinstance(v, Trace) else None


def _runtime(ctx: Context, tr: Trace) -> float:
    return max(float(ctx.meta.runtime_s), float(tr.end.max()) if len(tr) else 0.0, 1e-9)


def _phases(ctx: Context, t: Thresholds, key: str, tr: Trace) -> Phases:
    v = _cached(ctx, f"trace.phases.{key}", lambda: phases(tr, t.trace_phase_min_gap * _runtime(ctx, tr)))
    assert isinstance(v, Phases)
    return v


def _rank_stats(ctx: Context, tr: Trace) -> RankStats:
    v = _cached(ctx, "trace.ranks", lambda: rank_stats(tr))
    assert isinstance(v, RankStats)
    return v


def _layer_metric(tr: Trace) -> Metric:
    return Metric(name="trace", value=tr.module, unit=Unit.TEXT, description="DXT module(s) the finding reads")


def _files_by_bytes(ctx: Context, tr: Trace, mask: np.ndarray, name: str) -> tuple[list[FileEvidence], int]:
    """Top files (by bytes) among the segments in ``mask``, with bytes and operation counts."""
    f = tr.file[mask]
    if len(f) == 0:
        return [], 0
    nb = np.bincount(f, weights=tr.length[mask], minlength=len(tr.file_ids))
    ops = np.bincount(f, minlength=len(tr.file_ids))
    touched = np.flatnonzero(ops)
    order = touched[np.lexsort((-ops[touched], -nb[touched]))][: ctx.top_n]
    out = [
        ctx.file(
            int(tr.file_ids[i]),
            Metric(name=name, value=round(float(nb[i])), unit=Unit.BYTES),
            Metric(name="operations", value=int(ops[i]), unit=Unit.COUNT),
        )
        for i in order
    ]
    return out, len(touched)


def _top_ranks(tr: Trace, mask: np.ndarray, limit: int) -> list[int]:
    """Ranks of the segments in ``mask``, most bytes first."""
    r = tr.rank[mask]
    if len(r) == 0:
        return []
    nb = np.bincount(r, weights=tr.length[mask].astype(np.float64) + 1.0)  # +1: zero-byte ops still count
    ranks = np.flatnonzero(nb)
    return [int(x) for x in ranks[np.argsort(-nb[ranks], kind="stable")][:limit]]


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
    st = phase_stragglers(tr, ph)
    dur = ph.duration
    share = np.divide(st.alone, dur, out=np.zeros_like(dur), where=dur > 0)
    fire = (ph.ranks >= 2) & (share > t.trace_straggler_share) & (st.alone >= t.trace_min_window * runtime)
    idx = np.flatnonzero(fire)
    if len(idx) == 0:
        return None
    w = int(idx[np.argmax(st.alone[idx])])
    rank = int(st.last_rank[w])
    ws, we = float(st.alone_start[w]), float(st.last_end[w])
    in_window = (ph.seg_phase == w) & (tr.rank == rank) & (tr.end > float(st.second_end[w]))
    files, nfiles = _files_by_bytes(ctx, tr, in_window, "bytes_in_window")
    order = idx[np.argsort(-st.alone[idx], kind="stable")]
    stragglers = list(dict.fromkeys(int(r) for r in st.last_rank[order]))
    total_alone = float(st.alone[idx].sum())
    message = (
        f"In {len(idx):,} of {len(ph):,} I/O phases one rank was still doing I/O after all others had "
        f"finished ({human_seconds(total_alone)} in all, {pct(total_alone / runtime)} of the run time). "
        f"Worst: the phase from {ph.start[w]:.3f} s to {ph.end[w]:.3f} s ({int(ph.ranks[w]):,} ranks): "
        f"rank {rank} was still doing I/O alone from {ws:.3f} s to {we:.3f} s, {human_seconds(float(st.alone[w]))} or "
        f"{pct(float(share[w]))} of the phase. Busiest rank in that phase: {int(st.slowest_rank[w])} "
        f"({human_seconds(float(st.slowest_busy[w]))} of I/O); least busy: {int(st.fastest_rank[w])} "
        f"({human_seconds(float(st.fastest_busy[w]))})."
    )
    return Hit(
        message=message,
        evidence=[
            Metric(name="straggler_phases", value=len(idx), unit=Unit.COUNT),
            Metric(name="phases", value=len(ph), unit=Unit.COUNT),
            Metric(name="straggler_alone_time_total", value=total_alone, unit=Unit.SECONDS),
            Metric(name="phase_start", value=float(ph.start[w]), unit=Unit.SECONDS),
            Metric(name="phase_end", value=float(ph.end[w]), unit=Unit.SECONDS),
            Metric(name="phase_ranks", value=int(ph.ranks[w]), unit=Unit.COUNT),
            Metric(
                name="straggler_alone_time",
                value=float(st.alone[w]),
                unit=Unit.SECONDS,
                description="I/O time of the last rank after every other rank of the worst phase had finished",
            ),
            Metric(name="straggler_alone_share", value=float(share[w]), unit=Unit.RATIO),
            Metric(name="slowest_rank_busy_time", value=float(st.slowest_busy[w]), unit=Unit.SECONDS),
            Metric(name="fastest_rank_busy_time", value=float(st.fastest_busy[w]), unit=Unit.SECONDS),
            *window_metrics(ws, we),
            _layer_metric(tr),
        ],
        files=files,
        files_total=nfiles,
        ranks=stragglers[: max(ctx.top_n, 1)],
        trace=tr,
        segments=in_window,
        cost=costs.measured(total_alone, "time one rank was still doing I/O alone after every other rank of the phase"),
    )


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
    rs = _rank_stats(ctx, tr)
    if len(rs.rank) == 0 or rs.rank[0] != 0:
        return None
    others = slice(1, None)
    reasons: list[str] = []
    evidence: list[Metric] = []
    for label, values, floor, unit in (
        ("bytes", rs.bytes, t.trace_rank0_min_bytes, Unit.BYTES),
        ("operations", rs.ops, t.trace_rank0_min_ops, Unit.COUNT),
    ):
        mine = int(values[0])
        total = int(values.sum())
        share = mine / total if total else 0.0
        median = float(np.median(values[others])) if len(rs.rank) > 1 else 0.0
        factor = mine / median if median > 0 else float("inf")
        evidence += [
            Metric(name=f"rank0_{label}", value=mine, unit=unit),
            Metric(name=f"rank0_{label}_share", value=share, unit=Unit.RATIO),
            Metric(
                name=f"median_rank_{label}",
                value=median,
                unit=unit,
                description="median over the other ranks with traced I/O",
            ),
        ]
        if mine < floor:
            continue
        if share > t.trace_rank0_share:
            reasons.append(f"{pct(share)} of the {label} ({_amount(mine, unit)} of {_amount(total, unit)})")
        elif factor > t.trace_rank0_factor:
            reasons.append(f"{factor:,.1f}x the {label} of the median rank ({_amount(mine, unit)})")
    if not reasons:
        return None
    mine0 = tr.rank == 0
    files, nfiles = _files_by_bytes(ctx, tr, mine0, "rank0_bytes")
    message = (
        f"Rank 0 does {' and '.join(reasons)} of the traced I/O of {len(rs.rank):,} ranks doing I/O "
        f"({ctx.meta.nprocs:,} in the job), between {rs.first[0]:.3f} s and {rs.last[0]:.3f} s "
        f"({human_seconds(float(rs.time[0]))} in I/O calls): the other ranks wait while one rank serializes "
        f"the I/O."
    )
    return Hit(
        message=message,
        evidence=[
            *evidence,
            Metric(name="traced_ranks", value=len(rs.rank), unit=Unit.COUNT),
            Metric(name="rank0_io_time", value=float(rs.time[0]), unit=Unit.SECONDS),
            *window_metrics(float(rs.first[0]), float(rs.last[0])),
            _layer_metric(tr),
        ],
        files=files,
        files_total=nfiles,
        ranks=[0],
        trace=tr,
        segments=mine0,
        cost=costs.measured(
            max(float(rs.time[0]) - (float(rs.time[1:].mean()) if len(rs.rank) > 1 else 0.0), 0.0),
            "rank 0's traced I/O time less the mean of the other ranks'",
        ),
    )


def _amount(v: float, unit: Unit) -> str:
    return human_bytes(v) if unit == Unit.BYTES else f"{int(v):,}"


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
    rs = _rank_stats(ctx, tr)
    if len(rs.rank) < 3:
        return None
    over = np.ones(len(rs.rank), dtype=bool)
    stats: list[Metric] = []
    for label, v, unit in (
        ("operations", rs.ops.astype(np.float64), Unit.COUNT),
        ("bytes", rs.bytes.astype(np.float64), Unit.BYTES),
        ("time", rs.time, Unit.SECONDS),
    ):
        mean, std = float(v.mean()), float(v.std())
        over &= (v > mean + std) & (v > (1 + t.trace_unbalanced_margin) * mean)
        stats += [
            Metric(name=f"mean_rank_{label}", value=mean, unit=unit),
            Metric(name=f"std_rank_{label}", value=std, unit=unit),
            Metric(name=f"max_rank_{label}", value=float(v.max()), unit=unit),
        ]
    idx = np.flatnonzero(over)
    if len(idx) == 0:
        return None
    idx = idx[np.argsort(-rs.bytes[idx], kind="stable")]
    ranks = [int(r) for r in rs.rank[idx]]
    mask = np.isin(tr.rank, rs.rank[idx])
    files, nfiles = _files_by_bytes(ctx, tr, mask, "bytes_by_unbalanced_ranks")
    w = int(idx[0])
    mean_b, mean_o, mean_t = float(rs.bytes.mean()), float(rs.ops.mean()), float(rs.time.mean())
    message = (
        f"{len(idx):,} of {len(rs.rank):,} ranks doing I/O each issue more operations, move more bytes and "
        f"spend more time in I/O than the rank mean plus one standard deviation. Heaviest: rank {ranks[0]} "
        f"with {int(rs.ops[w]):,} operations, {human_bytes(int(rs.bytes[w]))} and "
        f"{human_seconds(float(rs.time[w]))} (rank mean: {mean_o:,.0f}, {human_bytes(mean_b)}, "
        f"{human_seconds(mean_t)})."
    )
    return Hit(
        message=message,
        evidence=[
            Metric(name="unbalanced_ranks", value=len(idx), unit=Unit.COUNT),
            Metric(name="traced_ranks", value=len(rs.rank), unit=Unit.COUNT),
            Metric(name="unbalanced_bytes", value=int(rs.bytes[idx].sum()), unit=Unit.BYTES),
            Metric(
                name="unbalanced_bytes_share",
                value=float(rs.bytes[idx].sum() / max(int(rs.bytes.sum()), 1)),
                unit=Unit.RATIO,
            ),
            *stats,
            *window_metrics(float(rs.first[idx].min()), float(rs.last[idx].max())),
            _layer_metric(tr),
        ],
        files=files,
        files_total=nfiles,
        ranks=ranks[: max(ctx.top_n, 1)],
        trace=tr,
        segments=mask,
        cost=costs.measured(
            max(float(rs.time.max()) - mean_t, 0.0), "the heaviest rank's traced I/O time less the rank mean"
        ),
    )


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
    everything = _cached(ctx, "trace.all", lambda: all_segments(ctx.profile))
    if not isinstance(everything, Trace):
        return None
    tr = everything
    runtime = _runtime(ctx, tr)
    ph = _phases(ctx, t, "all", tr)
    if len(ph) < 2:
        return None
    gaps = ph.gaps
    long = np.flatnonzero(gaps > t.trace_idle_gap_share * runtime)
    if len(long) == 0:
        return None
    read_bytes = np.bincount(ph.seg_phase, weights=np.where(tr.op == READ, tr.length, 0), minlength=len(ph))
    reads_mostly = read_bytes * 2 > ph.bytes
    dur = ph.duration
    # The phase hidden behind gap i: the one after it if it mostly reads (prefetch), else the one before.
    hidden = np.where(reads_mostly[long + 1], long + 1, long)
    hidden = np.unique(hidden)  # a phase is hidden once even if two gaps border it
    per_gap = np.minimum(gaps[long], np.maximum(dur[long], np.where(reads_mostly[long + 1], dur[long + 1], 0)))
    saving = float(min(per_gap.sum(), dur[hidden].sum()))
    if saving < max(t.trace_hideable_share, t.trace_min_window) * runtime:
        return None
    g = int(long[np.argmax(gaps[long])])
    mask = np.isin(ph.seg_phase, hidden)
    files, nfiles = _files_by_bytes(ctx, tr, mask, "bytes_in_hideable_phases")
    idle = float(gaps[long].sum())
    message = (
        f"{len(long):,} gap(s) without any I/O between I/O phases are longer than "
        f"{pct(t.trace_idle_gap_share)} of the run time ({human_seconds(idle)} in all, {pct(idle / runtime)}); "
        f"the longest runs from {ph.end[g]:.3f} s to {ph.start[g + 1]:.3f} s ({human_seconds(float(gaps[g]))}). "
        f"The {len(hidden):,} I/O phase(s) next to them take {human_seconds(float(dur[hidden].sum()))}: "
        f"non-blocking or asynchronous I/O could overlap up to {human_seconds(saving)} "
        f"({pct(saving / runtime)} of the run time) with the computation in the gaps."
    )
    return Hit(
        message=message,
        evidence=[
            Metric(name="long_gaps", value=len(long), unit=Unit.COUNT),
            Metric(name="phases", value=len(ph), unit=Unit.COUNT),
            Metric(name="idle_time", value=idle, unit=Unit.SECONDS),
            Metric(name="idle_share", value=idle / runtime, unit=Unit.RATIO),
            Metric(name="longest_gap", value=float(gaps[g]), unit=Unit.SECONDS),
            Metric(name="hideable_phase_time", value=float(dur[hidden].sum()), unit=Unit.SECONDS),
            Metric(
                name="hideable_time",
                value=saving,
                unit=Unit.SECONDS,
                description="I/O time that could overlap the gaps' computation",
            ),
            Metric(name="hideable_share", value=saving / runtime, unit=Unit.RATIO),
            *window_metrics(float(ph.end[g]), float(ph.start[g + 1])),
            _layer_metric(tr),
        ],
        files=files,
        files_total=nfiles,
        ranks=_top_ranks(tr, mask, ctx.top_n),
        extra_recommendations=("hdf5-async-vol",) if ctx.uses_hdf5 else ("mpiio-nonblocking",),
        trace=tr,
        segments=mask,
        cost=costs.modelled(saving, "phase time that overlapping with the idle gaps could hide"),
    )


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
    rep = _cached(ctx, "trace.repeats", lambda: repeats(tr))
    assert isinstance(rep, Repeats)
    hits: list[Hit] = []
    for op, verb in ((0, "written"), (READ, "read")):
        sel = (rep.op == op) & (rep.repeated >= t.redundant_min_bytes)
        if not sel.any():
            continue
        fidx, again, moved, uniq = rep.file[sel], rep.repeated[sel], rep.moved[sel], rep.unique[sel]
        order = np.argsort(-again, kind="stable")
        files = [
            ctx.file(
                int(tr.file_ids[fidx[i]]),
                Metric(name=f"bytes_{verb}_again", value=int(again[i]), unit=Unit.BYTES),
                Metric(name=f"bytes_{verb}", value=int(moved[i]), unit=Unit.BYTES),
                Metric(name="distinct_bytes", value=int(uniq[i]), unit=Unit.BYTES),
            )
            for i in order[: ctx.top_n]
        ]
        seg = rep.segment_mask & (tr.op == op) & np.isin(tr.file, fidx)
        total, moved_all = int(again.sum()), int(moved.sum())
        ws, we = float(tr.start[seg].min()), float(tr.end[seg].max())
        ranks = _top_ranks(tr, seg, ctx.top_n)
        worst = int(order[0])
        seconds, _ = costs.trace_segments_cost(ctx, tr, seg, t, subtract_rate=False)
        share = total / max(moved_all, 1)
        hits.append(
            Hit(
                cost=costs.modelled(
                    seconds * share,
                    "the repeating requests' traced time on the busiest rank times the share of their bytes "
                    "moved again",
                    nbytes=total,
                ),
                message=f"{len(fidx):,} file(s) have byte ranges {verb} more than once: "
                f"{human_bytes(total)} of the {human_bytes(moved_all)} {verb} in them repeat bytes already "
                f"{verb} ({int(seg.sum()):,} requests by {len(np.unique(tr.rank[seg])):,} rank(s), from "
                f"{ws:.3f} s to {we:.3f} s). Worst: {ctx.path(int(tr.file_ids[fidx[worst]]))} with "
                f"{human_bytes(int(again[worst]))} repeated over {human_bytes(int(uniq[worst]))} distinct bytes.",
                evidence=[
                    Metric(name="op", value="write" if op == 0 else "read", unit=Unit.TEXT),
                    Metric(name="files", value=len(fidx), unit=Unit.COUNT),
                    Metric(name=f"bytes_{verb}_again", value=total, unit=Unit.BYTES),
                    Metric(name=f"bytes_{verb}", value=moved_all, unit=Unit.BYTES),
                    Metric(name="repeating_requests", value=int(seg.sum()), unit=Unit.COUNT),
                    *window_metrics(ws, we),
                    _layer_metric(tr),
                ],
                files=files,
                files_total=len(fidx),
                ranks=ranks,
                trace=tr,
                segments=seg,
            )
        )
    return hits or None
