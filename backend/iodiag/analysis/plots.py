"""Plot-ready data: column arrays the UI draws as interactive plots.

Every plot is bounded (at most ``MAX_POINTS`` points, whatever the trace size), deterministic (same
log, same JSON: samples use a fixed seed and ties break by position) and carries the exact totals
of what it summarises beside the sample. All work is columnar numpy: traces reach ten million
segments. Times are seconds since job start, sizes and offsets bytes.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from iodiag.analysis.context import Context
from iodiag.analysis.trace_views import TRACE_MODULES, phase_stragglers, phases, top_trace, traces
from iodiag.core.thresholds import Thresholds
from iodiag.ingest import JobProfile
from iodiag.ingest.trace import Trace

MAX_POINTS = 20_000
SEED = 20_240_601
"""Fixed seed of every sample: the same log gives the same points."""
TOP_FILES = 8
"""Files shown in the spatiality plot (the busiest by bytes moved)."""

SIZE_BIN_NAMES = (
    "0_100",
    "100_1K",
    "1K_10K",
    "10K_100K",
    "100K_1M",
    "1M_4M",
    "4M_10M",
    "10M_100M",
    "100M_1G",
    "1G_PLUS",
)
SIZE_BIN_UPPER = np.array([100, 1024, 10240, 102400, 1 << 20, 4 << 20, 10 << 20, 100 << 20, 1 << 30], dtype=np.int64)
"""Inclusive upper bound of each of Darshan's access-size bins but the last (``size <= bound``)."""

Op = Literal["write", "read"]
Layer = Literal["POSIX", "MPIIO", "DXT"]
OPS: tuple[Op, Op] = ("write", "read")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Axis(_Model):
    label: str
    unit: str
    """``s`` seconds since job start, ``B`` bytes, ``rank``, ``OST``, ``file`` (index into ``files``)."""


class Totals(_Model):
    """Exact totals of everything the plot summarises (not only of the points shown)."""

    bytes: int
    ops: int
    time: float
    """Sum of the segments' durations (seconds)."""


class _Plot(_Model):
    points_total: int
    """Exact count of the underlying items (segments, phases, OSTs)."""
    points_shown: int = Field(le=MAX_POINTS)
    x: Axis
    y: Axis
    totals: Totals


class TimelinePlot(_Plot):
    """Per-rank timeline: bars of merged segments, one colour per operation, grouped by layer.

    Consecutive segments of one (layer, rank, op) are merged into one bar when the idle time
    between them is at most ``quantum`` seconds, ``quantum`` being the smallest gap that makes the
    bars fit (0 when nothing had to be merged). Each bar keeps the exact bytes and count of the
    segments it holds.
    """

    quantum: float
    rank: list[int]
    start: list[float]
    end: list[float]
    op: list[Op]
    layer: list[Layer]
    bytes: list[int]
    ops: list[int]
    layer_totals: dict[str, Totals]


class SizeHistogram(_Model):
    """Exact count and bytes of segments per Darshan access-size bin, per layer and operation."""

    bins: list[str]
    upper: list[int | None]
    """Inclusive upper bound of each bin (bytes); None for the last."""
    layer: list[Layer]
    op: list[Op]
    counts: list[list[int]]
    """``counts[i][b]``: segments of (``layer[i]``, ``op[i]``) in bin ``b``."""
    bytes: list[list[int]]


class TransferSizePlot(_Plot):
    """Transfer size over time: a uniform sample of segments per (layer, op), plus the exact histogram."""

    time: list[float]
    """Segment start."""
    size: list[int]
    op: list[Op]
    layer: list[Layer]
    histogram: SizeHistogram


class SpatialFile(_Model):
    record_id: str
    path: str
    bytes: int
    ops: int
    segments_shown: int


class SpatialityPlot(_Plot):
    """Offset against time for the busiest files (each file at its top traced layer)."""

    offset: list[int]
    length: list[int]
    time: list[float]
    file: list[int]
    """Index into ``files``."""
    op: list[Op]
    files: list[SpatialFile]
    files_total: int
    """Files with traced segments (``files`` holds the busiest)."""


class PhasesPlot(_Plot):
    """I/O phases (each file at its top traced layer) and the rank that finished each last."""

    threshold: float
    """Gaps shorter than this (seconds) lie inside a phase."""
    start: list[float]
    end: list[float]
    bytes: list[int]
    ops: list[int]
    ranks: list[int]
    last_rank: list[int]
    last_end: list[float]
    second_end: list[float]
    alone: list[float]
    """Seconds the last rank spent in its own I/O after all others finished."""
    slowest_rank: list[int]
    slowest_busy: list[float]
    fastest_rank: list[int]
    fastest_busy: list[float]


class OstPlot(_Plot):
    """Bytes and I/O time per Lustre OST (each file spread evenly over the OSTs its data reached)."""

    ost: list[int]
    bytes: list[float]
    time: list[float]
    files: list[int]


class PlotData(_Model):
    timeline: TimelinePlot | None = None
    transfer_sizes: TransferSizePlot | None = None
    spatiality: SpatialityPlot | None = None
    phases: PhasesPlot | None = None
    osts: OstPlot | None = None


# --- helpers ------------------------------------------------------------------------------------------


def _totals(tr: Trace, mask: np.ndarray | None = None) -> Totals:
    if mask is None:
        return Totals(bytes=int(tr.length.sum()), ops=len(tr), time=float((tr.end - tr.start).sum()))
    return Totals(
        bytes=int(tr.length[mask].sum()), ops=int(mask.sum()), time=float((tr.end[mask] - tr.start[mask]).sum())
    )


def _sum_totals(parts: list[Totals]) -> Totals:
    return Totals(
        bytes=sum(p.bytes for p in parts), ops=sum(p.ops for p in parts), time=float(sum(p.time for p in parts))
    )


def _op_names(op: np.ndarray) -> list[Op]:
    return [OPS[i] for i in op.tolist()]


def _layer_list(code: np.ndarray, names: list[Layer]) -> list[Layer]:
    return [names[i] for i in code.tolist()]


def _stratified(strata: np.ndarray, n_strata: int, budget: int, seed: int = SEED) -> np.ndarray:
    """Indices (ascending) of a deterministic sample of at most ``budget`` items.

    Each stratum gets a share proportional to its size (at least one item while the budget
    allows, so rare strata stay visible), drawn uniformly without replacement.
    """
    n = len(strata)
    if n <= budget:
        return np.arange(n)
    counts = np.bincount(strata, minlength=n_strata)
    quota = np.floor(counts * (budget / n)).astype(np.int64)
    quota = np.maximum(quota, np.minimum(counts, 1))
    while quota.sum() > budget:  # the minimum of one per stratum overshot: trim the largest
        quota[int(np.argmax(quota))] -= 1
    rng = np.random.default_rng(seed)
    order = np.argsort(strata, kind="stable")
    lo = np.r_[0, np.cumsum(counts)[:-1]]
    picks = []
    for s in range(n_strata):
        q = int(quota[s])
        if q <= 0:
            continue
        sel = rng.choice(int(counts[s]), size=q, replace=False)
        picks.append(order[lo[s] + sel])
    out = np.sort(np.concatenate(picks)) if picks else np.empty(0, dtype=np.int64)
    return out


def _layered(profile: JobProfile) -> tuple[list[Layer], list[Trace]]:
    ts = traces(profile)
    names: list[Layer] = []
    parts: list[Trace] = []
    for m in TRACE_MODULES:
        if m in ts:
            names.append("POSIX" if m == "DXT_POSIX" else "MPIIO")
            parts.append(ts[m])
    return names, parts


def _runtime(profile: JobProfile, tr: Trace) -> float:
    return max(float(profile.meta.runtime_s), float(tr.end.max()) if len(tr) else 0.0, 1e-9)


# --- timeline -----------------------------------------------------------------------------------------


def timeline(profile: JobProfile, max_points: int = MAX_POINTS) -> TimelinePlot | None:
    names, parts = _layered(profile)
    if not parts:
        return None
    n = sum(len(p) for p in parts)
    layer = np.concatenate([np.full(len(p), i, dtype=np.int64) for i, p in enumerate(parts)])
    rank = np.concatenate([p.rank for p in parts]).astype(np.int64)
    op = np.concatenate([p.op for p in parts]).astype(np.int64)
    start = np.concatenate([p.start for p in parts])
    end = np.concatenate([p.end for p in parts])
    length = np.concatenate([p.length for p in parts])
    width = int(rank.max()) + 1
    key = (layer * width + rank) * 2 + op
    order = np.lexsort((start, key))
    k, s, e = key[order], start[order], end[order]
    new_group = np.empty(n, dtype=bool)
    new_group[0] = True
    new_group[1:] = k[1:] != k[:-1]
    gstart = np.flatnonzero(new_group)
    # Idle time before each segment: its start minus the latest end so far in its group.
    # (Running maximum restarted per group: shift each group above the previous one. The shift
    # costs float precision, which only the choice of breaks sees, never the bars' own values.)
    gid = np.cumsum(new_group) - 1
    lo_t = float(min(s.min(), e.min()))
    span = float(max(s.max(), e.max())) - lo_t + 1.0
    run_end = np.maximum.accumulate((e - lo_t) + gid * span) - gid * span + lo_t
    gap = np.full(n, np.inf)
    gap[1:] = s[1:] - run_end[:-1]
    gap[gstart] = np.inf
    budget = max_points - len(gstart)
    quantum = 0.0
    if n <= max_points:
        cut = np.ones(n, dtype=bool)
    elif budget >= 0:
        inner = np.where(new_group, -np.inf, gap)
        # Keep the ``budget`` largest gaps as breaks, ties broken by position (deterministic).
        thr = float(np.partition(inner, n - budget - 1)[n - budget - 1])
        cut = inner > thr
        ties = np.flatnonzero(inner == thr)[: budget - int(cut.sum())]
        cut[ties] = True
        cut |= new_group
        quantum = max(thr, 0.0)
    else:
        cut = new_group.copy()
        quantum = float("inf")
    first = np.flatnonzero(cut)
    bar_rank = rank[order][first]
    bar_op = op[order][first]
    bar_layer = layer[order][first]
    bar_start = s[first]
    bar_end = np.maximum.reduceat(e, first)
    bar_bytes = np.add.reduceat(length[order], first)
    bar_ops = np.diff(np.r_[first, n])
    if len(first) > max_points:  # more (layer, rank, op) groups than points: keep the busiest
        keep = np.sort(np.lexsort((np.arange(len(first)), -bar_bytes))[:max_points])
        bar_rank, bar_op, bar_layer = bar_rank[keep], bar_op[keep], bar_layer[keep]
        bar_start, bar_end, bar_bytes, bar_ops = bar_start[keep], bar_end[keep], bar_bytes[keep], bar_ops[keep]
    layer_totals: dict[str, Totals] = {nm: _totals(p) for nm, p in zip(names, parts, strict=True)}
    return TimelinePlot(
        points_total=n,
        points_shown=len(bar_rank),
        x=Axis(label="time", unit="s"),
        y=Axis(label="rank", unit="rank"),
        totals=_sum_totals(list(layer_totals.values())),
        quantum=quantum,
        rank=bar_rank.tolist(),
        start=bar_start.tolist(),
        end=bar_end.tolist(),
        op=_op_names(bar_op),
        layer=_layer_list(bar_layer, names),
        bytes=bar_bytes.tolist(),
        ops=bar_ops.tolist(),
        layer_totals=layer_totals,
    )


# --- transfer sizes -----------------------------------------------------------------------------------


def size_bin(length: np.ndarray) -> np.ndarray:
    """Darshan's access-size bin (0..9) of each size."""
    b: np.ndarray = np.searchsorted(SIZE_BIN_UPPER, length, side="left")
    return b


def transfer_sizes(profile: JobProfile, max_points: int = MAX_POINTS) -> TransferSizePlot | None:
    names, parts = _layered(profile)
    if not parts:
        return None
    nb = len(SIZE_BIN_NAMES)
    h_layer: list[Layer] = []
    h_op: list[Op] = []
    h_counts: list[list[int]] = []
    h_bytes: list[list[int]] = []
    strata = []
    for li, p in enumerate(parts):
        bins = size_bin(p.length)
        for o in (0, 1):
            m = p.op == o
            if not m.any():
                continue
            h_layer.append(names[li])
            h_op.append(OPS[o])
            h_counts.append(np.bincount(bins[m], minlength=nb).tolist())
            h_bytes.append(np.rint(np.bincount(bins[m], weights=p.length[m], minlength=nb)).astype(np.int64).tolist())
        strata.append(li * 2 + p.op.astype(np.int64))
    stratum = np.concatenate(strata)
    idx = _stratified(stratum, 2 * len(parts), max_points)
    bounds = np.cumsum([0] + [len(p) for p in parts])
    which = np.searchsorted(bounds, idx, side="right") - 1
    local = idx - bounds[which]
    time = np.empty(len(idx))
    size = np.empty(len(idx), dtype=np.int64)
    for li, p in enumerate(parts):
        m = which == li
        time[m] = p.start[local[m]]
        size[m] = p.length[local[m]]
    return TransferSizePlot(
        points_total=int(bounds[-1]),
        points_shown=len(idx),
        x=Axis(label="time", unit="s"),
        y=Axis(label="transfer size", unit="B"),
        totals=_sum_totals([_totals(p) for p in parts]),
        time=time.tolist(),
        size=size.tolist(),
        op=_op_names(stratum[idx] % 2),
        layer=_layer_list(which, names),
        histogram=SizeHistogram(
            bins=list(SIZE_BIN_NAMES),
            upper=[*SIZE_BIN_UPPER.tolist(), None],
            layer=h_layer,
            op=h_op,
            counts=h_counts,
            bytes=h_bytes,
        ),
    )


# --- spatiality ---------------------------------------------------------------------------------------


def spatiality(
    profile: JobProfile, max_points: int = MAX_POINTS, top_files: int = TOP_FILES, tr: Trace | None = None
) -> SpatialityPlot | None:
    tr = tr if tr is not None else top_trace(profile)
    if tr is None or len(tr) == 0:
        return None
    nfiles = len(tr.file_ids)
    fbytes = np.bincount(tr.file, weights=tr.length, minlength=nfiles)
    fops = np.bincount(tr.file, minlength=nfiles)
    present = np.flatnonzero(fops > 0)
    # Busiest first; ties by record id so the choice does not depend on the order files were read.
    busiest = present[np.lexsort((tr.file_ids[present], -fbytes[present]))][:top_files]
    slot = np.full(nfiles, -1, dtype=np.int64)
    slot[busiest] = np.arange(len(busiest))
    seg_slot = slot[tr.file]
    chosen = np.flatnonzero(seg_slot >= 0)
    pick = chosen[_stratified(seg_slot[chosen], len(busiest), max_points)]
    shown = np.bincount(seg_slot[pick], minlength=len(busiest))
    files = [
        SpatialFile(
            record_id=str(int(tr.file_ids[f])),
            path=profile.name(int(tr.file_ids[f])),
            bytes=round(float(fbytes[f])),
            ops=int(fops[f]),
            segments_shown=int(shown[i]),
        )
        for i, f in enumerate(busiest.tolist())
    ]
    return SpatialityPlot(
        points_total=len(chosen),
        points_shown=len(pick),
        x=Axis(label="time", unit="s"),
        y=Axis(label="file offset", unit="B"),
        totals=_totals(tr, seg_slot >= 0),
        offset=tr.offset[pick].tolist(),
        length=tr.length[pick].tolist(),
        time=tr.start[pick].tolist(),
        file=seg_slot[pick].tolist(),
        op=_op_names(tr.op[pick]),
        files=files,
        files_total=len(present),
    )


# --- phases -------------------------------------------------------------------------------------------


def phases_plot(profile: JobProfile, max_points: int = MAX_POINTS, tr: Trace | None = None) -> PhasesPlot | None:
    tr = tr if tr is not None else top_trace(profile)
    if tr is None or len(tr) == 0:
        return None
    ph = phases(tr, Thresholds().trace_phase_min_gap * _runtime(profile, tr))
    st = phase_stragglers(tr, ph)
    n = len(ph)
    keep = np.arange(n)
    if n > max_points:  # keep the longest phases, in time order
        keep = np.sort(np.lexsort((np.arange(n), -ph.duration))[:max_points])
    return PhasesPlot(
        points_total=n,
        points_shown=len(keep),
        x=Axis(label="time", unit="s"),
        y=Axis(label="rank", unit="rank"),
        totals=_totals(tr),
        threshold=float(ph.threshold),
        start=ph.start[keep].tolist(),
        end=ph.end[keep].tolist(),
        bytes=ph.bytes[keep].tolist(),
        ops=ph.ops[keep].tolist(),
        ranks=ph.ranks[keep].tolist(),
        last_rank=st.last_rank[keep].tolist(),
        last_end=st.last_end[keep].tolist(),
        second_end=st.second_end[keep].tolist(),
        alone=st.alone[keep].tolist(),
        slowest_rank=st.slowest_rank[keep].tolist(),
        slowest_busy=st.slowest_busy[keep].tolist(),
        fastest_rank=st.fastest_rank[keep].tolist(),
        fastest_busy=st.fastest_busy[keep].tolist(),
    )


# --- OSTs ---------------------------------------------------------------------------------------------


def ost_plot(profile: JobProfile, ctx: Context | None = None) -> OstPlot | None:
    from iodiag.analysis.checks.lustre import ost_load

    load = ost_load(ctx or Context(profile))
    if load.empty:
        return None
    load = load.sort_index()
    return OstPlot(
        points_total=len(load),
        points_shown=len(load),
        x=Axis(label="OST", unit="OST"),
        y=Axis(label="bytes", unit="B"),
        totals=Totals(bytes=round(float(load["bytes"].sum())), ops=0, time=float(load["time"].sum())),
        ost=[int(i) for i in load.index],
        bytes=[float(v) for v in load["bytes"]],
        time=[float(v) for v in load["time"]],
        files=[int(v) for v in load["files"]],
    )


# --- all ----------------------------------------------------------------------------------------------


def plot_data(profile: JobProfile, ctx: Context | None = None) -> PlotData:
    top = top_trace(profile)
    return PlotData(
        timeline=timeline(profile),
        transfer_sizes=transfer_sizes(profile),
        spatiality=spatiality(profile, tr=top) if top is not None else None,
        phases=phases_plot(profile, tr=top) if top is not None else None,
        osts=ost_plot(profile, ctx),
    )
