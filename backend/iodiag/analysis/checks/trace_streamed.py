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
"""

from __future__ import annotations

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.context import Context, pct
from iodiag.analysis.models import Confidence, FileEvidence, Metric, Unit, window_metrics
from iodiag.analysis.registry import Hit
from iodiag.analysis.trace_views import (
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
from iodiag.core.units import human_bytes, human_seconds
from iodiag.ingest.trace import READ
from iodiag.ingest.trace_stream import FlagStats

_MISSING = object()


def _cached(ctx: Context, key: str, make: object) -> object:
    v = ctx.cache.get(key, _MISSING)
    if v is _MISSING:
        v = ctx.cache[key] = make() if callable(make) else make
    return v


def streamed(ctx: Context) -> bool:
    return any(s.segments > 0 for s in ctx.profile.trace_summaries.values())


def _top(ctx: Context) -> StreamView | None:
    v = _cached(ctx, "stream.top", lambda: stream_top(ctx.profile))
    return v if isinstance(v, StreamView) else None


def _runtime(ctx: Context, v: StreamView) -> float:
    return max(float(ctx.meta.runtime_s), v.max_end, 1e-9)


def _phases(ctx: Context, t: Thresholds, key: str, v: StreamView) -> Phases:
    ph = _cached(ctx, f"stream.phases.{key}", lambda: stream_phases(v, t.trace_phase_min_gap * _runtime(ctx, v)))
    assert isinstance(ph, Phases)
    return ph


def _rank_stats(ctx: Context, v: StreamView) -> RankStats:
    rs = _cached(ctx, "stream.ranks", lambda: stream_rank_stats(v))
    assert isinstance(rs, RankStats)
    return rs


def _layer_metric(v: StreamView) -> Metric:
    return Metric(name="trace", value=v.module, unit=Unit.TEXT, description="DXT module(s) the finding reads")


def _files(
    ctx: Context, v: StreamView, file: np.ndarray, nbytes: np.ndarray, ops: np.ndarray, name: str
) -> tuple[list[FileEvidence], int]:
    """Top files by bytes (then operations) of per-item (file index, bytes, operations)."""
    nf = len(v.file_ids)
    nb = np.bincount(file, weights=nbytes, minlength=nf)
    no = np.bincount(file, weights=ops, minlength=nf)
    touched = np.flatnonzero(no > 0)
    order = touched[np.lexsort((-no[touched], -nb[touched]))][: ctx.top_n]
    out = [
        ctx.file(
            int(v.file_ids[i]),
            Metric(name=name, value=round(float(nb[i])), unit=Unit.BYTES),
            Metric(name="operations", value=round(float(no[i])), unit=Unit.COUNT),
        )
        for i in order
    ]
    return out, len(touched)


def _top_ranks(rank: np.ndarray, nbytes: np.ndarray, ops: np.ndarray, limit: int) -> list[int]:
    """Ranks by bytes, zero-byte requests still counting one each (as the in-memory ``_top_ranks``)."""
    sel = ops > 0
    if not sel.any():
        return []
    nb = np.bincount(rank[sel].astype(np.int64), weights=nbytes[sel].astype(np.float64) + ops[sel])
    ranks = np.flatnonzero(nb)
    return [int(x) for x in ranks[np.argsort(-nb[ranks], kind="stable")][:limit]]


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
    runtime = _runtime(ctx, v)
    ph = _phases(ctx, t, "top", v)
    st = stream_stragglers(v, ph)
    dur = ph.duration
    share = np.divide(st.alone, dur, out=np.zeros_like(dur), where=dur > 0)
    fire = (ph.ranks >= 2) & (share > t.trace_straggler_share) & (st.alone >= t.trace_min_window * runtime)
    idx = np.flatnonzero(fire)
    if len(idx) == 0:
        return None
    w = int(idx[np.argmax(st.alone[idx])])
    rank = int(st.last_rank[w])
    ws, we = float(st.alone_start[w]), float(st.last_end[w])
    sp = v.spans
    rec = sp.record.astype(np.int64)
    inw = (ph.seg_phase == w) & (v.rec_rank[rec] == rank) & (sp.end > float(st.second_end[w]))
    files, nfiles = _files(ctx, v, v.rec_file[rec[inw]], sp.bytes[inw], sp.ops[inw], "bytes_in_window")
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
            _layer_metric(v),
        ],
        files=files,
        files_total=nfiles,
        ranks=stragglers[: max(ctx.top_n, 1)],
        cost=costs.measured(total_alone, "time one rank was still doing I/O alone after every other rank of the phase"),
    )


# --- T02 ---------------------------------------------------------------------------------------------


def t02(ctx: Context, t: Thresholds) -> Hit | None:
    v = _top(ctx)
    if v is None or ctx.meta.nprocs <= 1:
        return None
    rs = _rank_stats(ctx, v)
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
        amount = human_bytes if unit == Unit.BYTES else (lambda x: f"{int(x):,}")
        if share > t.trace_rank0_share:
            reasons.append(f"{pct(share)} of the {label} ({amount(mine)} of {amount(total)})")
        elif factor > t.trace_rank0_factor:
            reasons.append(f"{factor:,.1f}x the {label} of the median rank ({amount(mine)})")
    if not reasons:
        return None
    mine0 = v.rec_op_rank == 0
    files, nfiles = _files(ctx, v, v.rec_op_file[mine0], v.bytes[mine0], v.ops[mine0], "rank0_bytes")
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
            _layer_metric(v),
        ],
        files=files,
        files_total=nfiles,
        ranks=[0],
        cost=costs.measured(
            max(float(rs.time[0]) - (float(rs.time[1:].mean()) if len(rs.rank) > 1 else 0.0), 0.0),
            "rank 0's traced I/O time less the mean of the other ranks'",
        ),
    )


# --- T03 ---------------------------------------------------------------------------------------------


def t03(ctx: Context, t: Thresholds) -> Hit | None:
    v = _top(ctx)
    if v is None:
        return None
    rs = _rank_stats(ctx, v)
    if len(rs.rank) < 3:
        return None
    over = np.ones(len(rs.rank), dtype=bool)
    stats: list[Metric] = []
    for label, x, unit in (
        ("operations", rs.ops.astype(np.float64), Unit.COUNT),
        ("bytes", rs.bytes.astype(np.float64), Unit.BYTES),
        ("time", rs.time, Unit.SECONDS),
    ):
        mean, std = float(x.mean()), float(x.std())
        over &= (x > mean + std) & (x > (1 + t.trace_unbalanced_margin) * mean)
        stats += [
            Metric(name=f"mean_rank_{label}", value=mean, unit=unit),
            Metric(name=f"std_rank_{label}", value=std, unit=unit),
            Metric(name=f"max_rank_{label}", value=float(x.max()), unit=unit),
        ]
    idx = np.flatnonzero(over)
    if len(idx) == 0:
        return None
    idx = idx[np.argsort(-rs.bytes[idx], kind="stable")]
    ranks = [int(r) for r in rs.rank[idx]]
    mask = np.isin(v.rec_op_rank, rs.rank[idx])
    files, nfiles = _files(ctx, v, v.rec_op_file[mask], v.bytes[mask], v.ops[mask], "bytes_by_unbalanced_ranks")
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
            _layer_metric(v),
        ],
        files=files,
        files_total=nfiles,
        ranks=ranks[: max(ctx.top_n, 1)],
        cost=costs.measured(
            max(float(rs.time.max()) - mean_t, 0.0), "the heaviest rank's traced I/O time less the rank mean"
        ),
    )


# --- T04 ---------------------------------------------------------------------------------------------


def t04(ctx: Context, t: Thresholds) -> Hit | None:
    everything = _cached(ctx, "stream.all", lambda: stream_all(ctx.profile))
    if not isinstance(everything, StreamView):
        return None
    v = everything
    runtime = _runtime(ctx, v)
    ph = _phases(ctx, t, "all", v)
    if len(ph) < 2:
        return None
    gaps = ph.gaps
    long = np.flatnonzero(gaps > t.trace_idle_gap_share * runtime)
    if len(long) == 0:
        return None
    sp = v.spans
    read_bytes = np.bincount(ph.seg_phase, weights=np.where(sp.op == READ, sp.bytes, 0), minlength=len(ph))
    reads_mostly = read_bytes * 2 > ph.bytes
    dur = ph.duration
    hidden = np.where(reads_mostly[long + 1], long + 1, long)
    hidden = np.unique(hidden)
    per_gap = np.minimum(gaps[long], np.maximum(dur[long], np.where(reads_mostly[long + 1], dur[long + 1], 0)))
    saving = float(min(per_gap.sum(), dur[hidden].sum()))
    if saving < max(t.trace_hideable_share, t.trace_min_window) * runtime:
        return None
    g = int(long[np.argmax(gaps[long])])
    mask = np.isin(ph.seg_phase, hidden)
    rec = sp.record.astype(np.int64)
    files, nfiles = _files(ctx, v, v.rec_file[rec[mask]], sp.bytes[mask], sp.ops[mask], "bytes_in_hideable_phases")
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
            _layer_metric(v),
        ],
        files=files,
        files_total=nfiles,
        ranks=_top_ranks(v.rec_rank[rec[mask]], sp.bytes[mask], sp.ops[mask], ctx.top_n),
        extra_recommendations=("hdf5-async-vol",) if ctx.uses_hdf5 else ("mpiio-nonblocking",),
        cost=costs.modelled(saving, "phase time that overlapping with the idle gaps could hide"),
    )


# --- T05 ---------------------------------------------------------------------------------------------


def t05(ctx: Context, t: Thresholds) -> list[Hit] | None:
    v = _top(ctx)
    if v is None:
        return None
    keys, moved_all_k, uniq_all, rep_all = stream_repeats(v)
    flag = v.flags["repeat"]
    ro_op = np.tile(np.array([0, 1]), len(v.rec_file))
    hits: list[Hit] = []
    for op, verb in ((0, "written"), (READ, "read")):
        sel = (keys % 2 == op) & (rep_all >= t.redundant_min_bytes)
        if not sel.any():
            continue
        fidx, again, moved, uniq = keys[sel] // 2, rep_all[sel], moved_all_k[sel], uniq_all[sel]
        order = np.argsort(-again, kind="stable")
        files = [
            ctx.file(
                int(v.file_ids[fidx[i]]),
                Metric(name=f"bytes_{verb}_again", value=int(again[i]), unit=Unit.BYTES),
                Metric(name=f"bytes_{verb}", value=int(moved[i]), unit=Unit.BYTES),
                Metric(name="distinct_bytes", value=int(uniq[i]), unit=Unit.BYTES),
            )
            for i in order[: ctx.top_n]
        ]
        seg = (ro_op == op) & np.isin(v.rec_op_file, fidx) & (flag.ops > 0)
        total, moved_all = int(again.sum()), int(moved.sum())
        n_rep = int(flag.ops[seg].sum())
        ws = float(flag.first[seg].min()) if seg.any() else 0.0
        we = float(flag.last[seg].max()) if seg.any() else 0.0
        ranks = _top_ranks(v.rec_op_rank[seg], flag.bytes[seg], flag.ops[seg], ctx.top_n)
        n_ranks = len(np.unique(v.rec_op_rank[seg]))
        worst = int(order[0])
        seconds, _ = _rank_cost(ctx, t, v.rec_op_rank[seg], flag.time[seg], flag.bytes[seg], rate=False)
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
                f"{verb} ({n_rep:,} requests by {n_ranks:,} rank(s), from "
                f"{ws:.3f} s to {we:.3f} s). Worst: {ctx.path(int(v.file_ids[fidx[worst]]))} with "
                f"{human_bytes(int(again[worst]))} repeated over {human_bytes(int(uniq[worst]))} distinct bytes.",
                evidence=[
                    Metric(name="op", value="write" if op == 0 else "read", unit=Unit.TEXT),
                    Metric(name="files", value=len(fidx), unit=Unit.COUNT),
                    Metric(name=f"bytes_{verb}_again", value=total, unit=Unit.BYTES),
                    Metric(name=f"bytes_{verb}", value=moved_all, unit=Unit.BYTES),
                    Metric(name="repeating_requests", value=n_rep, unit=Unit.COUNT),
                    *window_metrics(ws, we),
                    _layer_metric(v),
                ],
                files=files,
                files_total=len(fidx),
                ranks=ranks,
            )
        )
    return hits or None


# --- T06-T08 -----------------------------------------------------------------------------------------


def _posix(ctx: Context) -> StreamView | None:
    v = _cached(ctx, "stream.posix", lambda: stream_module(ctx.profile, "DXT_POSIX"))
    return v if isinstance(v, StreamView) else None


def _flagged_hit(
    ctx: Context, v: StreamView, f: FlagStats, sel: np.ndarray, what: str, why: str, extra: list[Metric]
) -> Hit:
    """``trace_requests._flagged_hit`` from per-(record, op) sums; ``sel`` picks the (record, op) entries."""
    nf = len(v.file_ids)
    n_all = v.segments
    bad = sel & (f.ops > 0)
    n_bad = int(f.ops[bad].sum())
    file = v.rec_op_file
    per_file = np.bincount(file[bad], weights=f.ops[bad], minlength=nf)
    all_file = np.bincount(file, weights=v.ops, minlength=nf)
    touched = np.flatnonzero(per_file)
    order = touched[np.argsort(-per_file[touched], kind="stable")]
    first = np.full(nf, np.inf)
    last = np.full(nf, -np.inf)
    np.minimum.at(first, file[bad], f.first[bad])
    np.maximum.at(last, file[bad], f.last[bad])
    nbytes = np.bincount(file[bad], weights=f.bytes[bad], minlength=nf)
    rank = v.rec_op_rank
    rmax = int(rank.max()) + 1 if len(rank) else 1
    pairs = np.unique(file[bad] * rmax + rank[bad])
    ranks_per_file = np.bincount(pairs // rmax, minlength=nf)
    files: list[FileEvidence] = []
    for i in order[: ctx.top_n]:
        files.append(
            ctx.file(
                int(v.file_ids[i]),
                Metric(name=f"{what}_requests", value=int(per_file[i]), unit=Unit.COUNT),
                Metric(name=f"{what}_share", value=float(per_file[i] / max(all_file[i], 1)), unit=Unit.RATIO),
                Metric(name=f"{what}_bytes", value=round(float(nbytes[i])), unit=Unit.BYTES),
                Metric(name="ranks", value=int(ranks_per_file[i]), unit=Unit.COUNT),
                *window_metrics(float(first[i]), float(last[i])),
            )
        )
    w = int(order[0])
    worst_ranks = np.unique(rank[bad & (file == w)])
    per_rank = np.bincount(rank[bad], weights=f.ops[bad])
    ranks = np.flatnonzero(per_rank)
    top_ranks = [int(x) for x in ranks[np.argsort(-per_rank[ranks], kind="stable")][: max(ctx.top_n, 1)]]
    ws, we = float(first[w]), float(last[w])
    message = (
        f"{n_bad:,} of {n_all:,} traced POSIX requests ({pct(n_bad / max(n_all, 1))}) are {why}, in "
        f"{len(touched):,} file(s) from {len(ranks):,} rank(s). Most: {ctx.path(int(v.file_ids[w]))} with "
        f"{int(per_file[w]):,} of its {int(all_file[w]):,} requests ({human_bytes(round(float(nbytes[w])))}) "
        f"from {len(worst_ranks):,} rank(s), between {ws:.3f} s and {we:.3f} s."
    )
    return Hit(
        message=message,
        evidence=[
            Metric(name=f"{what}_requests", value=n_bad, unit=Unit.COUNT),
            Metric(name="traced_requests", value=n_all, unit=Unit.COUNT),
            Metric(name=f"{what}_share", value=n_bad / max(n_all, 1), unit=Unit.RATIO),
            Metric(name="files", value=len(touched), unit=Unit.COUNT),
            Metric(name="ranks_involved", value=len(ranks), unit=Unit.COUNT),
            *extra,
            *window_metrics(ws, we),
            Metric(name="trace", value=v.module, unit=Unit.TEXT, description="DXT module(s) the finding reads"),
        ],
        files=files,
        files_total=len(touched),
        ranks=top_ranks,
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
        n_mine = int(v.ops[mine].sum())
        n_bad = int(f.ops[mine].sum())
        if n_mine == 0 or not (n_bad >= max(t.trace_requests_absolute, 1) and n_bad / n_mine > share):
            continue
        hit = _flagged_hit(ctx, v, f, mine, what, f"{why} {verb}", [Metric(name="op", value=verb, unit=Unit.TEXT)])
        sel = mine & (f.ops > 0)
        seconds, own = _rank_cost(ctx, t, v.rec_op_rank[sel], f.time[sel], f.bytes[sel], rate=True)
        upper = what == "misaligned"
        hit.cost = costs.modelled(
            seconds,
            f"{'upper bound: ' if upper else ''}the traced durations of these {what} {verb} on the busiest rank, "
            f"less their bytes at {'this job' if own else 'the reference'}'s large-request rate",
            confidence=Confidence.LOW if upper or not own else Confidence.MEDIUM,
            ops=n_bad,
        )
        hits.append(hit)
    return hits or None
