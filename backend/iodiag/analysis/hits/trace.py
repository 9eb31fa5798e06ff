"""The findings T01-T08 as ``Hit``s, built alike from a trace held in memory (``trace``, ``trace_requests``)
and from one summarised while streaming (``trace_streamed``).

The two paths count differently (per-segment masks against per-record accumulators); what they count is
the same, and so are the rules on phases and rank statistics, the messages, the metrics, the files and
ranks listed and the cost wording. Those live here, once. Each check has a builder that takes the numbers
its path computed (``Straggler``, ``Rank0``, ``Unbalanced``, ``IdleGaps``, ``Repeated``, ``Flagged``)
and returns the ``Hit``; the held path adds the trace and its segment mask, so that the engine can group
the segments by source line.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.models import Confidence, FileEvidence, Metric, Unit, window_metrics
from iodiag.analysis.registry import Hit
from iodiag.analysis.views.context import Context, pct
from iodiag.analysis.views.trace import Phases, PhaseStragglers, RankStats
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes, human_seconds
from iodiag.ingest.trace import READ, Trace

Files = tuple[list[FileEvidence], int]
"""Top files with their metrics, and how many files there were in all."""


def run_time(ctx: Context, last_end: float) -> float:
    """The run time the shares are of: the job's, or the trace's last end if later (never zero)."""
    return max(float(ctx.meta.runtime_s), last_end, 1e-9)


def layer_metric(module: str) -> Metric:
    return Metric(name="trace", value=module, unit=Unit.TEXT, description="DXT module(s) the finding reads")


def files_by_bytes(
    ctx: Context, file_ids: np.ndarray, file: np.ndarray, nbytes: np.ndarray, name: str, ops: np.ndarray | None = None
) -> Files:
    """Top files by bytes (then operations) of per-item file indices (into ``file_ids``) and bytes; ``ops``
    is each item's operation count, one each if not given (items are segments)."""
    if len(file) == 0:
        return [], 0
    nf = len(file_ids)
    nb = np.bincount(file, weights=nbytes, minlength=nf)
    no = np.bincount(file, minlength=nf) if ops is None else np.bincount(file, weights=ops, minlength=nf)
    touched = np.flatnonzero(no > 0)
    order = touched[np.lexsort((-no[touched], -nb[touched]))][: ctx.top_n]
    out = [
        ctx.file(
            int(file_ids[i]),
            Metric(name=name, value=round(float(nb[i])), unit=Unit.BYTES),
            Metric(name="operations", value=round(float(no[i])), unit=Unit.COUNT),
        )
        for i in order
    ]
    return out, len(touched)


def top_ranks(rank: np.ndarray, nbytes: np.ndarray, limit: int, ops: np.ndarray | None = None) -> list[int]:
    """Ranks of per-item ranks and bytes, most bytes first; ``ops`` as in ``files_by_bytes``. Each operation
    adds one, so that zero-byte operations still count."""
    if ops is None:
        weights = nbytes.astype(np.float64) + 1.0
    else:
        sel = ops > 0
        rank, weights = rank[sel].astype(np.int64), nbytes[sel].astype(np.float64) + ops[sel]
    if len(rank) == 0:
        return []
    nb = np.bincount(rank, weights=weights)
    ranks = np.flatnonzero(nb)
    return [int(x) for x in ranks[np.argsort(-nb[ranks], kind="stable")][:limit]]


# --- T01 ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Straggler:
    """The I/O phases where one rank went on alone past the thresholds, and the worst of them."""

    ph: Phases
    st: PhaseStragglers
    runtime: float
    idx: np.ndarray
    """The phases that fire."""
    share: np.ndarray
    """Per phase, the time alone over the phase's duration."""
    w: int
    """The phase with the longest time alone."""

    @property
    def rank(self) -> int:
        return int(self.st.last_rank[self.w])

    @property
    def second_end(self) -> float:
        """When the worst phase's second-to-last rank finished: the straggler is alone after it."""
        return float(self.st.second_end[self.w])


def straggler(t: Thresholds, runtime: float, ph: Phases, st: PhaseStragglers) -> Straggler | None:
    dur = ph.duration
    share = np.divide(st.alone, dur, out=np.zeros_like(dur), where=dur > 0)
    fire = (ph.ranks >= 2) & (share > t.trace_straggler_share) & (st.alone >= t.trace_min_window * runtime)
    idx = np.flatnonzero(fire)
    if len(idx) == 0:
        return None
    return Straggler(ph, st, runtime, idx, share, int(idx[np.argmax(st.alone[idx])]))


def straggler_hit(
    ctx: Context,
    s: Straggler,
    files: Files,
    module: str,
    *,
    trace: Trace | None = None,
    segments: np.ndarray | None = None,
) -> Hit:
    ph, st, w, idx, share, runtime, rank = s.ph, s.st, s.w, s.idx, s.share, s.runtime, s.rank
    ws, we = float(st.alone_start[w]), float(st.last_end[w])
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
            layer_metric(module),
        ],
        files=files[0],
        files_total=files[1],
        ranks=stragglers[: max(ctx.top_n, 1)],
        trace=trace,
        segments=segments,
        cost=costs.measured(total_alone, "time one rank was still doing I/O alone after every other rank of the phase"),
    )


# --- T02 ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rank0:
    """Why rank 0 does most of the I/O, with the per-quantity metrics the decision read."""

    rs: RankStats
    reasons: tuple[str, ...]
    evidence: tuple[Metric, ...]


def _amount(v: float, unit: Unit) -> str:
    return human_bytes(v) if unit == Unit.BYTES else f"{int(v):,}"


def rank0_heavy(t: Thresholds, rs: RankStats) -> Rank0 | None:
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
    return Rank0(rs, tuple(reasons), tuple(evidence)) if reasons else None


def rank0_hit(
    ctx: Context, r: Rank0, files: Files, module: str, *, trace: Trace | None = None, segments: np.ndarray | None = None
) -> Hit:
    rs = r.rs
    message = (
        f"Rank 0 does {' and '.join(r.reasons)} of the traced I/O of {len(rs.rank):,} ranks doing I/O "
        f"({ctx.meta.nprocs:,} in the job), between {rs.first[0]:.3f} s and {rs.last[0]:.3f} s "
        f"({human_seconds(float(rs.time[0]))} in I/O calls): the other ranks wait while one rank serializes "
        f"the I/O."
    )
    return Hit(
        message=message,
        evidence=[
            *r.evidence,
            Metric(name="traced_ranks", value=len(rs.rank), unit=Unit.COUNT),
            Metric(name="rank0_io_time", value=float(rs.time[0]), unit=Unit.SECONDS),
            *window_metrics(float(rs.first[0]), float(rs.last[0])),
            layer_metric(module),
        ],
        files=files[0],
        files_total=files[1],
        ranks=[0],
        trace=trace,
        segments=segments,
        cost=costs.measured(
            max(float(rs.time[0]) - (float(rs.time[1:].mean()) if len(rs.rank) > 1 else 0.0), 0.0),
            "rank 0's traced I/O time less the mean of the other ranks'",
        ),
    )


# --- T03 ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unbalanced:
    """The ranks above mean + one standard deviation in operations, bytes and time."""

    rs: RankStats
    idx: np.ndarray
    """Their positions in ``rs``, most bytes first."""
    stats: tuple[Metric, ...]

    @property
    def ranks(self) -> np.ndarray:
        r: np.ndarray = self.rs.rank[self.idx]
        return r


def unbalanced(t: Thresholds, rs: RankStats) -> Unbalanced | None:
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
    return Unbalanced(rs, idx[np.argsort(-rs.bytes[idx], kind="stable")], tuple(stats))


def unbalanced_hit(
    ctx: Context,
    u: Unbalanced,
    files: Files,
    module: str,
    *,
    trace: Trace | None = None,
    segments: np.ndarray | None = None,
) -> Hit:
    rs, idx = u.rs, u.idx
    ranks = [int(r) for r in u.ranks]
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
            *u.stats,
            *window_metrics(float(rs.first[idx].min()), float(rs.last[idx].max())),
            layer_metric(module),
        ],
        files=files[0],
        files_total=files[1],
        ranks=ranks[: max(ctx.top_n, 1)],
        trace=trace,
        segments=segments,
        cost=costs.measured(
            max(float(rs.time.max()) - mean_t, 0.0), "the heaviest rank's traced I/O time less the rank mean"
        ),
    )


# --- T04 ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IdleGaps:
    """The long gaps between I/O phases and the phases that could hide behind them."""

    ph: Phases
    runtime: float
    gaps: np.ndarray
    long: np.ndarray
    """The gaps longer than the threshold."""
    hidden: np.ndarray
    """The phases next to them that asynchronous I/O could hide, each once."""
    saving: float


def idle_gaps(t: Thresholds, runtime: float, ph: Phases, op: np.ndarray, nbytes: np.ndarray) -> IdleGaps | None:
    """``op`` and ``nbytes`` per item of ``ph.seg_phase`` (segments, or the stream's spans)."""
    if len(ph) < 2:
        return None
    gaps = ph.gaps
    long = np.flatnonzero(gaps > t.trace_idle_gap_share * runtime)
    if len(long) == 0:
        return None
    read_bytes = np.bincount(ph.seg_phase, weights=np.where(op == READ, nbytes, 0), minlength=len(ph))
    reads_mostly = read_bytes * 2 > ph.bytes
    dur = ph.duration
    # The phase hidden behind gap i: the one after it if it mostly reads (prefetch), else the one before.
    hidden = np.where(reads_mostly[long + 1], long + 1, long)
    hidden = np.unique(hidden)  # a phase is hidden once even if two gaps border it
    per_gap = np.minimum(gaps[long], np.maximum(dur[long], np.where(reads_mostly[long + 1], dur[long + 1], 0)))
    saving = float(min(per_gap.sum(), dur[hidden].sum()))
    if saving < max(t.trace_hideable_share, t.trace_min_window) * runtime:
        return None
    return IdleGaps(ph, runtime, gaps, long, hidden, saving)


def idle_gaps_hit(
    ctx: Context,
    t: Thresholds,
    ig: IdleGaps,
    files: Files,
    ranks: list[int],
    module: str,
    *,
    trace: Trace | None = None,
    segments: np.ndarray | None = None,
) -> Hit:
    ph, runtime, gaps, long, hidden, saving = ig.ph, ig.runtime, ig.gaps, ig.long, ig.hidden, ig.saving
    dur = ph.duration
    g = int(long[np.argmax(gaps[long])])
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
            layer_metric(module),
        ],
        files=files[0],
        files_total=files[1],
        ranks=ranks,
        extra_recommendations=("hdf5-async-vol",) if ctx.uses_hdf5 else ("mpiio-nonblocking",),
        trace=trace,
        segments=segments,
        cost=costs.modelled(saving, "phase time that overlapping with the idle gaps could hide"),
    )


# --- T05 ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Repeated:
    """Byte ranges of one operation (0 for writes, ``READ``) moved more than once: per file that repeats
    (``fidx``, indices into ``file_ids``) the bytes moved again, moved and distinct; then the repeating
    requests' count, distinct ranks, window, top ranks and traced time on the busiest rank."""

    op: int
    file_ids: np.ndarray
    fidx: np.ndarray
    again: np.ndarray
    moved: np.ndarray
    uniq: np.ndarray
    requests: int
    ranks_involved: int
    start: float
    end: float
    ranks: list[int]
    seconds: float


def repeated_hit(
    ctx: Context, r: Repeated, module: str, *, trace: Trace | None = None, segments: np.ndarray | None = None
) -> Hit:
    op, verb = r.op, "written" if r.op == 0 else "read"
    fidx, again, moved, uniq = r.fidx, r.again, r.moved, r.uniq
    order = np.argsort(-again, kind="stable")
    files = [
        ctx.file(
            int(r.file_ids[fidx[i]]),
            Metric(name=f"bytes_{verb}_again", value=int(again[i]), unit=Unit.BYTES),
            Metric(name=f"bytes_{verb}", value=int(moved[i]), unit=Unit.BYTES),
            Metric(name="distinct_bytes", value=int(uniq[i]), unit=Unit.BYTES),
        )
        for i in order[: ctx.top_n]
    ]
    total, moved_all = int(again.sum()), int(moved.sum())
    ws, we = r.start, r.end
    worst = int(order[0])
    share = total / max(moved_all, 1)
    return Hit(
        cost=costs.modelled(
            r.seconds * share,
            "the repeating requests' traced time on the busiest rank times the share of their bytes moved again",
            nbytes=total,
        ),
        message=f"{len(fidx):,} file(s) have byte ranges {verb} more than once: "
        f"{human_bytes(total)} of the {human_bytes(moved_all)} {verb} in them repeat bytes already "
        f"{verb} ({r.requests:,} requests by {r.ranks_involved:,} rank(s), from "
        f"{ws:.3f} s to {we:.3f} s). Worst: {ctx.path(int(r.file_ids[fidx[worst]]))} with "
        f"{human_bytes(int(again[worst]))} repeated over {human_bytes(int(uniq[worst]))} distinct bytes.",
        evidence=[
            Metric(name="op", value="write" if op == 0 else "read", unit=Unit.TEXT),
            Metric(name="files", value=len(fidx), unit=Unit.COUNT),
            Metric(name=f"bytes_{verb}_again", value=total, unit=Unit.BYTES),
            Metric(name=f"bytes_{verb}", value=moved_all, unit=Unit.BYTES),
            Metric(name="repeating_requests", value=r.requests, unit=Unit.COUNT),
            *window_metrics(ws, we),
            layer_metric(module),
        ],
        files=files,
        files_total=len(fidx),
        ranks=r.ranks,
        trace=trace,
        segments=segments,
    )


# --- T06-T08 -----------------------------------------------------------------------------------------


def fires(n_bad: int, n_mine: int, share: float, t: Thresholds) -> bool:
    """Whether ``n_bad`` flagged requests of the ``n_mine`` of one operation make a finding."""
    return n_mine > 0 and n_bad >= max(t.trace_requests_absolute, 1) and n_bad / n_mine > share


@dataclass(frozen=True)
class Flagged:
    """The flagged requests (small, misaligned or random) of one operation: how many of how many traced;
    per file index (into ``file_ids``) the flagged requests, all requests, the flagged ones' window
    (``first`` start, ``last`` end), bytes and distinct ranks; per rank the flagged requests."""

    module: str
    file_ids: np.ndarray
    requests: int
    traced: int
    per_file: np.ndarray
    all_file: np.ndarray
    first: np.ndarray
    last: np.ndarray
    nbytes: np.ndarray
    ranks_per_file: np.ndarray
    per_rank: np.ndarray


def flagged_hit(
    ctx: Context,
    f: Flagged,
    what: str,
    why: str,
    extra: list[Metric],
    *,
    trace: Trace | None = None,
    segments: np.ndarray | None = None,
) -> Hit:
    """A finding for flagged requests: files with their own windows and ranks, worst first."""
    n_bad, n_all, per_file, all_file, nbytes = f.requests, f.traced, f.per_file, f.all_file, f.nbytes
    touched = np.flatnonzero(per_file)
    order = touched[np.argsort(-per_file[touched], kind="stable")]
    files: list[FileEvidence] = []
    for i in order[: ctx.top_n]:
        files.append(
            ctx.file(
                int(f.file_ids[i]),
                Metric(name=f"{what}_requests", value=int(per_file[i]), unit=Unit.COUNT),
                Metric(name=f"{what}_share", value=float(per_file[i] / max(all_file[i], 1)), unit=Unit.RATIO),
                Metric(name=f"{what}_bytes", value=round(float(nbytes[i])), unit=Unit.BYTES),
                Metric(name="ranks", value=int(f.ranks_per_file[i]), unit=Unit.COUNT),
                *window_metrics(float(f.first[i]), float(f.last[i])),
            )
        )
    w = int(order[0])  # the worst file; its rank count below is its distinct ranks among the flagged requests
    ranks = np.flatnonzero(f.per_rank)
    top = [int(x) for x in ranks[np.argsort(-f.per_rank[ranks], kind="stable")][: max(ctx.top_n, 1)]]
    ws, we = float(f.first[w]), float(f.last[w])
    message = (
        f"{n_bad:,} of {n_all:,} traced POSIX requests ({pct(n_bad / max(n_all, 1))}) are {why}, in "
        f"{len(touched):,} file(s) from {len(ranks):,} rank(s). Most: {ctx.path(int(f.file_ids[w]))} with "
        f"{int(per_file[w]):,} of its {int(all_file[w]):,} requests ({human_bytes(round(float(nbytes[w])))}) "
        f"from {int(f.ranks_per_file[w]):,} rank(s), between {ws:.3f} s and {we:.3f} s."
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
            layer_metric(f.module),
        ],
        files=files,
        files_total=len(touched),
        ranks=top,
        trace=trace,
        segments=segments,
    )


def request_cost(seconds: float, own: bool, what: str, verb: str, n_bad: int) -> costs.Cost:
    """What flagged requests cost: their traced time on the busiest rank less their bytes at the large-request
    rate (``own``: this job's rate, else the reference's). Misaligned requests are only an upper bound."""
    upper = what == "misaligned"
    return costs.modelled(
        seconds,
        f"{'upper bound: ' if upper else ''}the traced durations of these {what} {verb} on the busiest rank, "
        f"less their bytes at {'this job' if own else 'the reference'}'s large-request rate",
        confidence=Confidence.LOW if upper or not own else Confidence.MEDIUM,
        ops=n_bad,
    )
