"""Plot-ready data: column arrays the UI draws as interactive plots.

Every plot is bounded (at most ``MAX_POINTS`` points, whatever the trace size), deterministic (same
log, same JSON: samples use a fixed seed and ties break by position) and carries the exact totals
of what it summarises beside the sample. All work is columnar numpy: traces reach ten million
segments. Times are seconds since job start, sizes and offsets bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from iodiag.analysis.views.context import Context
from iodiag.analysis.views.heatmap import Heatmap, heatmaps, job_heatmap
from iodiag.analysis.views.trace import (
    TRACE_MODULES,
    phase_stragglers,
    phases,
    plot_top,
    sample_stride,
    sample_traces,
    stream_file_totals,
    stream_phases,
    stream_stragglers,
    stream_top,
    summaries,
    top_trace,
)
from iodiag.core.thresholds import Thresholds
from iodiag.ingest import JobProfile
from iodiag.ingest.trace import Trace

MAX_POINTS = 20_000
SEED = 20_240_601
"""Fixed seed of every sample: the same log gives the same points."""
TOP_FILES = 8
"""Files shown in the spatiality plot (the busiest by bytes moved)."""
HEATMAP_MAX_BINS = 200
"""Time bins per heatmap row: finer HEATMAP bins are added together, DXT bins are sized to fit."""
HEATMAP_MAX_ROWS = 256
"""Heatmap rows: with more ranks, each row adds up a run of consecutive ranks."""
TIMELINE_SEGMENT_BUDGET = 5_000
"""Segments the timeline draws one by one; past this it also carries a density grid, which the UI draws
instead (at 384 ranks, 20,000 bars on a few hundred pixels are one solid block), and a zoomed window
asks the API for its own segments (``timeline_window``)."""
DENSITY_MAX_BINS = 200
"""Time bins of a timeline density grid."""
DENSITY_MAX_ROWS = 512
"""Rank rows of a density grid: one rank per row up to this many ranks, then runs of consecutive ranks."""
DENSITY_MAX_CELLS = 50_000
"""Rows times bins of a density grid (per layer and operation): fewer bins when there are many rows, so
the grid stays a few hundred kilobytes of JSON even where every cell is busy."""

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


class DensitySeries(_Model):
    """The non-empty cells of one (layer, operation) of a timeline density grid."""

    layer: Layer
    op: Op
    cell: list[int]
    """``row * bins + bin`` of each non-empty cell, ascending."""
    segments: list[int]
    """Segments in flight during the cell's bin (a long segment counts in every bin it overlaps)."""
    bytes: list[int]
    """Bytes moved in the cell's bin."""


class TimelineDensity(_Model):
    """The timeline as a grid: per (layer, operation, rank row, time bin), the segments in flight during the
    bin and the bytes they moved in it (each segment's bytes spread over the bins it overlaps in proportion
    to its time in each, rounded to whole bytes). Only non-empty cells are listed.

    Carried once the timeline has more than ``budget`` segments: drawn as intensity, it shows where and
    when ranks did I/O where single bars would merge into one block.
    """

    budget: int
    """The segment count past which the density is drawn instead of single segments."""
    t0: float
    """Start of bin 0 (seconds since job start)."""
    bin_width: float
    """Seconds per bin; bin ``b`` covers ``[t0 + b * bin_width, t0 + (b + 1) * bin_width)``."""
    bins: int
    rank0: int
    """First rank of row 0."""
    ranks_per_row: int
    """1, or the size of the runs of consecutive ranks each row adds up."""
    rows: int
    series: list[DensitySeries]
    """One per (layer, operation) with segments, MPI-IO before POSIX, write before read."""
    peak_segments: int
    """The most segments in flight in one cell (of any series)."""
    peak_bytes: int
    """The most bytes moved in one cell (of any series)."""


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
    density: TimelineDensity | None = None
    """Present when there are more than ``TIMELINE_SEGMENT_BUDGET`` segments (see ``TimelineDensity``)."""


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
    """Bytes and I/O time per Lustre OST: each file's bytes and its I/O time (summed over ranks) split evenly
    over the OSTs its data reached, so both add up to those files' totals."""

    ost: list[int]
    bytes: list[float]
    time: list[float]
    files: list[int]


class HeatmapPlot(_Model):
    """Bytes read and written per rank (or run of consecutive ranks) and time bin.

    From Darshan's HEATMAP module when the log has one: POSIX plus STDIO, or MPI-IO plus STDIO where
    there is no POSIX heatmap (never both file layers: POSIX holds the I/O MPI-IO issues, so adding
    them would count it twice). Otherwise from the DXT trace (POSIX, else MPI-IO): each segment's
    bytes are spread over the bins it overlaps in proportion to its time in each, as Darshan's
    heatmap does, and rounded so that every row keeps its exact total.
    """

    source: Literal["HEATMAP", "DXT"]
    module: str
    """The HEATMAP module(s) added up (``POSIX+STDIO``), or the trace (``DXT_POSIX``)."""
    x: Axis
    y: Axis
    bin_width: float
    """Seconds per bin; bin ``i`` covers ``[time[i], time[i] + bin_width)``."""
    time: list[float]
    """Start of each bin, seconds since job start."""
    ranks_total: int
    """Ranks the rows cover: ``0 .. ranks_total - 1``."""
    ranks_per_row: int
    """1, or the size of the runs of consecutive ranks each row adds up (more ranks than rows)."""
    rank: list[int]
    """First rank of each row."""
    rank_last: list[int]
    """Last rank (inclusive) of each row."""
    read: list[list[int]]
    """``read[row][bin]``: bytes read."""
    write: list[list[int]]
    read_bytes: int
    write_bytes: int
    notes: list[str]
    """What was aggregated to keep the plot small (rank runs, added bins), in words."""


class PlotData(_Model):
    timeline: TimelinePlot | None = None
    transfer_sizes: TransferSizePlot | None = None
    spatiality: SpatialityPlot | None = None
    phases: PhasesPlot | None = None
    osts: OstPlot | None = None
    heatmap: HeatmapPlot | None = None


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


def op_names(op: np.ndarray) -> list[Op]:
    return [OPS[i] for i in op.tolist()]


def layer_list(code: np.ndarray, names: list[Layer]) -> list[Layer]:
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


_MODULE: dict[str, str] = {"POSIX": "DXT_POSIX", "MPIIO": "DXT_MPIIO"}


def _streamed_totals(profile: JobProfile) -> dict[str, Totals]:
    """Exact totals per layer of a streamed profile (empty when its traces are held): plots drawn from a
    streamed trace's sample carry these, not the sample's."""
    out: dict[str, Totals] = {}
    if profile.traces:
        return out
    for layer, module in _MODULE.items():
        sm = summaries(profile).get(module)
        if sm is not None:
            out[layer] = Totals(bytes=int(sm.bytes.sum()), ops=sm.segments, time=float(sm.time.sum()))
    return out


def _layered(profile: JobProfile) -> tuple[list[Layer], list[Trace]]:
    # A streamed trace is drawn from its sample (every k-th segment); held traces are drawn whole.
    ts = sample_traces(profile)
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


@dataclass(frozen=True, eq=False)
class TimelineColumns:
    """Every traced segment of a job as flat columns, the timeline's input (``layer`` indexes ``names``)."""

    names: list[Layer]
    layer: np.ndarray
    rank: np.ndarray
    op: np.ndarray
    start: np.ndarray
    end: np.ndarray
    length: np.ndarray

    def __len__(self) -> int:
        return len(self.start)

    def take(self, idx: np.ndarray) -> TimelineColumns:
        return TimelineColumns(
            self.names,
            self.layer[idx],
            self.rank[idx],
            self.op[idx],
            self.start[idx],
            self.end[idx],
            self.length[idx],
        )

    def layer_totals(self) -> dict[str, Totals]:
        out: dict[str, Totals] = {}
        for i, nm in enumerate(self.names):
            m = self.layer == i
            if m.any():
                out[nm] = Totals(
                    bytes=int(self.length[m].sum()), ops=int(m.sum()), time=float((self.end[m] - self.start[m]).sum())
                )
        return out


def timeline_columns(profile: JobProfile) -> TimelineColumns | None:
    """The profile's traced segments (MPI-IO then POSIX) as one set of columns; None without a trace."""
    names, parts = _layered(profile)
    if not parts:
        return None
    return TimelineColumns(
        names,
        np.concatenate([np.full(len(p), i, dtype=np.int64) for i, p in enumerate(parts)]),
        np.concatenate([p.rank for p in parts]).astype(np.int64),
        np.concatenate([p.op for p in parts]).astype(np.int64),
        np.concatenate([p.start for p in parts]),
        np.concatenate([p.end for p in parts]),
        np.concatenate([p.length for p in parts]),
    )


@dataclass(frozen=True, eq=False)
class TimelineBars:
    quantum: float
    rank: np.ndarray
    start: np.ndarray
    end: np.ndarray
    op: np.ndarray
    layer: np.ndarray
    bytes: np.ndarray
    ops: np.ndarray


def timeline_bars(cols: TimelineColumns, max_points: int = MAX_POINTS) -> TimelineBars:
    """At most ``max_points`` bars: every segment its own bar when they fit, else merged (see ``TimelinePlot``)."""
    n = len(cols)
    layer, rank, op, start, end, length = cols.layer, cols.rank, cols.op, cols.start, cols.end, cols.length
    if n == 0:
        empty_i, empty_f = np.empty(0, dtype=np.int64), np.empty(0)
        return TimelineBars(0.0, empty_i, empty_f, empty_f, empty_i, empty_i, empty_i, empty_i)
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
    return TimelineBars(quantum, bar_rank, bar_start, bar_end, bar_op, bar_layer, bar_bytes, bar_ops)


def timeline_density(
    cols: TimelineColumns,
    t0: float,
    t1: float,
    rank0: int,
    rank1: int,
    budget: int = TIMELINE_SEGMENT_BUDGET,
    max_bins: int = DENSITY_MAX_BINS,
    max_rows: int = DENSITY_MAX_ROWS,
    max_cells: int = DENSITY_MAX_CELLS,
) -> TimelineDensity:
    """Segments and bytes per (layer, op, rank row, time bin) over ``[t0, t1]`` and ranks ``rank0..rank1``.

    ``cols`` should hold only segments that overlap the window; the parts outside it are cut off.
    """
    n_ranks = max(1, rank1 - rank0 + 1)
    per, nrows = _rank_rows(n_ranks, max_rows)
    span = max(t1 - t0, 1e-9)
    width = _nice_width(span, max(1, min(max_bins, max_cells // nrows)))
    n = _n_bins(span, width)
    s = np.clip(cols.start, t0, t1)
    e = np.clip(cols.end, s, t1)
    b0 = np.clip(((s - t0) // width).astype(np.int64), 0, n - 1)
    # A segment ending exactly on a bin's edge is not in the next bin.
    b1 = np.clip(np.ceil((e - t0) / width - 1e-9).astype(np.int64) - 1, b0, n - 1)
    row = np.clip((cols.rank - rank0) // per, 0, nrows - 1)
    key = (cols.layer * 2 + cols.op) * nrows + row
    n_keys = 2 * len(cols.names) * nrows
    flat = key * (n + 1)
    size = n_keys * (n + 1)
    # Segments in flight: +1 from the first bin, -1 after the last (then a running sum along each row).
    inflight = np.bincount(flat + b0, minlength=size) - np.bincount(flat + b1 + 1, minlength=size)
    segs = np.cumsum(inflight.reshape(n_keys, n + 1), axis=1)[:, :n]
    # Bytes in proportion to the time in each bin; a segment of no duration puts all of its bytes in its bin.
    dur = cols.end - cols.start
    length = cols.length.astype(np.float64)
    rate = np.divide(length, dur, out=np.zeros_like(length), where=dur > 0)
    inside = np.where(dur > 0, rate * (e - s), length)
    one = b0 == b1
    cells = np.bincount(flat[one] + b0[one], weights=inside[one], minlength=size).astype(np.float64)
    many = ~one
    if many.any():
        r, lo, up, rt = flat[many], b0[many], b1[many], rate[many]
        cells += np.bincount(r + lo, weights=rt * (t0 + (lo + 1) * width - s[many]), minlength=size)
        cells += np.bincount(r + up, weights=rt * (e[many] - t0 - up * width), minlength=size)
        diff = np.bincount(r + lo + 1, weights=rt * width, minlength=size)
        diff -= np.bincount(r + up, weights=rt * width, minlength=size)
        cells += np.cumsum(diff.reshape(-1, n + 1), axis=1).reshape(-1)
    moved = np.rint(np.maximum(cells.reshape(n_keys, n + 1)[:, :n], 0.0)).astype(np.int64)
    series: list[DensitySeries] = []
    for k in range(2 * len(cols.names)):
        block = slice(k * nrows, (k + 1) * nrows)
        cs, cb = segs[block].reshape(-1), moved[block].reshape(-1)
        cell = np.flatnonzero(cs > 0)
        if len(cell) == 0:
            continue
        series.append(
            DensitySeries(
                layer=cols.names[k // 2],
                op=OPS[k % 2],
                cell=cell.tolist(),
                segments=cs[cell].tolist(),
                bytes=cb[cell].tolist(),
            )
        )
    return TimelineDensity(
        budget=budget,
        t0=float(t0),
        bin_width=width,
        bins=n,
        rank0=int(rank0),
        ranks_per_row=per,
        rows=nrows,
        series=series,
        peak_segments=int(segs.max()) if segs.size else 0,
        peak_bytes=int(moved.max()) if moved.size else 0,
    )


def timeline(
    profile: JobProfile, max_points: int = MAX_POINTS, budget: int = TIMELINE_SEGMENT_BUDGET
) -> TimelinePlot | None:
    cols = timeline_columns(profile)
    if cols is None:
        return None
    bars = timeline_bars(cols, max_points)
    density = None
    if len(cols) > budget:
        n_ranks = max(int(profile.meta.nprocs), int(cols.rank.max()) + 1)
        density = timeline_density(cols, 0.0, _runtime_of(profile, cols), 0, n_ranks - 1, budget)
    layer_totals = cols.layer_totals()
    points_total = len(cols)
    bar_bytes, bar_ops = bars.bytes, bars.ops
    exact = _streamed_totals(profile)
    if exact:  # bars of a 1-in-k sample stand for k segments each; the totals are the stream's own
        w = np.array([sample_stride(profile, _MODULE[nm]) for nm in cols.names], dtype=np.int64)[bars.layer]
        bar_bytes, bar_ops = bar_bytes * w, bar_ops * w
        layer_totals = {nm: exact[nm] for nm in cols.names if nm in exact}
        points_total = sum(t.ops for t in layer_totals.values())
    return TimelinePlot(
        points_total=points_total,
        points_shown=len(bars.rank),
        x=Axis(label="time", unit="s"),
        y=Axis(label="rank", unit="rank"),
        totals=_sum_totals(list(layer_totals.values())),
        quantum=bars.quantum,
        rank=bars.rank.tolist(),
        start=bars.start.tolist(),
        end=bars.end.tolist(),
        op=op_names(bars.op),
        layer=layer_list(bars.layer, cols.names),
        bytes=bar_bytes.tolist(),
        ops=bar_ops.tolist(),
        layer_totals=layer_totals,
        density=density,
    )


def _runtime_of(profile: JobProfile, cols: TimelineColumns) -> float:
    return max(float(profile.meta.runtime_s), float(cols.end.max()) if len(cols) else 0.0, 1e-9)


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
    exact = _streamed_totals(profile)
    for li, p in enumerate(parts):
        sm = summaries(profile).get(_MODULE[names[li]]) if exact else None
        bins = size_bin(p.length)
        for o in (0, 1):
            if sm is not None:  # the stream counted every segment into Darshan's bins as it went by
                if sm.size_counts[o].sum() == 0:
                    continue
                h_layer.append(names[li])
                h_op.append(OPS[o])
                h_counts.append(sm.size_counts[o].tolist())
                h_bytes.append(sm.size_bytes[o].tolist())
                continue
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
    totals = _sum_totals([exact[nm] for nm in names]) if exact else _sum_totals([_totals(p) for p in parts])
    return TransferSizePlot(
        points_total=totals.ops if exact else int(bounds[-1]),
        points_shown=len(idx),
        x=Axis(label="time", unit="s"),
        y=Axis(label="transfer size", unit="B"),
        totals=totals,
        time=time.tolist(),
        size=size.tolist(),
        op=op_names(stratum[idx] % 2),
        layer=layer_list(which, names),
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
    tr = tr if tr is not None else plot_top(profile)
    if tr is None or len(tr) == 0:
        return None
    nfiles = len(tr.file_ids)
    fbytes = np.bincount(tr.file, weights=tr.length, minlength=nfiles)
    fops = np.bincount(tr.file, minlength=nfiles)
    ftime = np.bincount(tr.file, weights=tr.end - tr.start, minlength=nfiles)
    view = stream_top(profile) if not profile.traces else None
    if view is not None:  # a streamed trace's sample: the files' own numbers come from the stream, exact
        fbytes, fops, ftime = stream_file_totals(view, tr.file_ids)
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
        points_total=int(fops[busiest].sum()) if view is not None else len(chosen),
        points_shown=len(pick),
        x=Axis(label="time", unit="s"),
        y=Axis(label="file offset", unit="B"),
        totals=Totals(
            bytes=round(float(fbytes[busiest].sum())),
            ops=int(fops[busiest].sum()),
            time=float(ftime[busiest].sum()),
        )
        if view is not None
        else _totals(tr, seg_slot >= 0),
        offset=tr.offset[pick].tolist(),
        length=tr.length[pick].tolist(),
        time=tr.start[pick].tolist(),
        file=seg_slot[pick].tolist(),
        op=op_names(tr.op[pick]),
        files=files,
        files_total=len(present),
    )


# --- phases -------------------------------------------------------------------------------------------


def phases_plot(profile: JobProfile, max_points: int = MAX_POINTS, tr: Trace | None = None) -> PhasesPlot | None:
    view = stream_top(profile) if not profile.traces else None
    if view is not None:  # streamed: phases from the exact busy intervals, stragglers from the spans
        runtime = max(float(profile.meta.runtime_s), view.max_end, 1e-9)
        ph = stream_phases(view, Thresholds().trace_phase_min_gap * runtime)
        st = stream_stragglers(view, ph)
        totals = Totals(bytes=int(view.bytes.sum()), ops=view.segments, time=float(view.time.sum()))
    else:
        tr = tr if tr is not None else top_trace(profile)
        if tr is None or len(tr) == 0:
            return None
        ph = phases(tr, Thresholds().trace_phase_min_gap * _runtime(profile, tr))
        st = phase_stragglers(tr, ph)
        totals = _totals(tr)
    n = len(ph)
    keep = np.arange(n)
    if n > max_points:  # keep the longest phases, in time order
        keep = np.sort(np.lexsort((np.arange(n), -ph.duration))[:max_points])
    return PhasesPlot(
        points_total=n,
        points_shown=len(keep),
        x=Axis(label="time", unit="s"),
        y=Axis(label="rank", unit="rank"),
        totals=totals,
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
    from iodiag.analysis.views.lustre import ost_load

    load = ost_load(ctx or Context(profile))
    if load.empty:
        return None
    return OstPlot(
        points_total=len(load),
        points_shown=len(load),
        x=Axis(label="OST", unit="OST"),
        y=Axis(label="bytes", unit="B"),
        totals=Totals(bytes=round(float(load["bytes"].sum())), ops=0, time=float(load["share"].sum())),
        ost=[int(i) for i in load["ost"]],
        bytes=[float(v) for v in load["bytes"]],
        time=[float(v) for v in load["share"]],
        files=[int(v) for v in load["files"]],
    )


# --- heatmap ------------------------------------------------------------------------------------------


def _nice_width(span: float, max_bins: int) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten that covers ``span`` in ``max_bins`` bins."""
    raw = max(span / max_bins, 1e-9)
    base = 10.0 ** np.floor(np.log10(raw))
    for step in (1.0, 2.0, 2.5, 5.0, 10.0):
        if step * base >= raw * (1 - 1e-12):
            return float(step * base)
    return float(10 * base)  # pragma: no cover  (the loop ends at 10)


def _n_bins(span: float, width: float) -> int:
    # The epsilon keeps 14.0 / 0.1 = 140.00000000000003 at 140 bins.
    return max(1, int(np.ceil(span / width - 1e-9)))


def _rank_rows(n_ranks: int, max_rows: int) -> tuple[int, int]:
    """(ranks per row, rows): one rank per row while they fit, else runs of consecutive ranks."""
    per = max(1, -(-n_ranks // max_rows))
    return per, max(1, -(-n_ranks // per))


def _round_rows(x: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Whole bytes per cell, each row adding up exactly to its total (largest remainders, ties by position)."""
    x = np.maximum(x, 0.0)
    floor = np.floor(x)
    out: np.ndarray = floor.astype(np.int64)
    nrows, ncols = out.shape
    if nrows == 0 or ncols == 0:
        return out
    short = totals.astype(np.int64) - out.sum(axis=1)
    order = np.argsort(-(x - floor), axis=1, kind="stable")
    place = np.empty_like(order)
    np.put_along_axis(place, order, np.broadcast_to(np.arange(ncols), (nrows, ncols)), axis=1)
    ok = (short >= 0) & (short <= ncols)
    out += (place < np.where(ok, short, 0)[:, None]).astype(np.int64)
    # Float error alone can leave a row off by more than one unit per cell (or above its total):
    # the difference is tiny beside the row's largest cell, which takes it.
    for i in np.flatnonzero(~ok).tolist():
        out[i, int(np.argmax(out[i]))] += int(totals[i]) - int(out[i].sum())
    return out


def _exact_sums(key: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Integer sums of ``values`` per ``key``, exact: bincount adds in float64, so the values are split
    into their low 20 bits and the rest, whose sums each stay far below 2**53."""
    v = values.astype(np.int64)
    lo = np.bincount(key, weights=v & 0xFFFFF, minlength=n)
    hi = np.bincount(key, weights=v >> 20, minlength=n)
    out: np.ndarray = np.rint(hi).astype(np.int64) * (1 << 20) + np.rint(lo).astype(np.int64)
    return out


def _group_rows(values: np.ndarray, ranks: np.ndarray, per: int, nrows: int) -> np.ndarray:
    out: np.ndarray = np.zeros((nrows, values.shape[1]), dtype=np.int64)
    np.add.at(out, np.minimum(ranks // per, nrows - 1), values)
    return out


def _heatmap_from_module(hm: Heatmap, nprocs: int, max_bins: int, max_rows: int) -> HeatmapPlot:
    notes: list[str] = []
    width, n = hm.bin_width, hm.n_bins
    write, read = hm.write, hm.read
    k = max(1, -(-n // max_bins))
    if k > 1:  # whole bins added together: exact, and the grid stays Darshan's
        m = -(-n // k)
        pad = ((0, 0), (0, m * k - n))
        write = np.pad(write, pad).reshape(len(hm.ranks), m, k).sum(axis=2)
        read = np.pad(read, pad).reshape(len(hm.ranks), m, k).sum(axis=2)
        notes.append(f"the HEATMAP's {n:,} bins of {width:g} s are added {k} at a time")
        width, n = width * k, m
    # A record of no rank of its own (rank -1) would have no row: it shares rank 0's, keeping the totals.
    ranks = np.maximum(hm.ranks, 0)
    n_ranks = max(nprocs, int(ranks.max()) + 1 if len(ranks) else 1)
    per, nrows = _rank_rows(n_ranks, max_rows)
    read, write = _group_rows(read, ranks, per, nrows), _group_rows(write, ranks, per, nrows)
    return _heatmap_plot("HEATMAP", hm.module, width, n, n_ranks, per, nrows, read, write, notes)


def _heatmap_from_trace(profile: JobProfile, module: str, tr: Trace, max_bins: int, max_rows: int) -> HeatmapPlot:
    span = _runtime(profile, tr)
    width = _nice_width(span, max_bins)
    n = _n_bins(span, width)
    n_ranks = max(int(profile.meta.nprocs), int(tr.rank.max()) + 1)
    per, nrows = _rank_rows(n_ranks, max_rows)
    hi = n * width
    s = np.clip(tr.start, 0.0, hi)
    e = np.clip(tr.end, s, hi)
    b0 = np.minimum((s // width).astype(np.int64), n - 1)
    b1 = np.minimum((e // width).astype(np.int64), n - 1)
    length = tr.length.astype(np.float64)
    key = tr.op.astype(np.int64) * nrows + np.minimum(tr.rank.astype(np.int64) // per, nrows - 1)
    # Flat cell index over (op, row, bin); one spare bin per row takes the difference array's end marks.
    row = key * (n + 1)
    size = 2 * nrows * (n + 1)
    one = b0 == b1
    cells = np.zeros(size)  # float64 even when no segment stays in one bin (bincount would give int64)
    cells += np.bincount(row[one] + b0[one], weights=length[one], minlength=size)
    many = ~one
    if many.any():  # spread over the bins it overlaps, in proportion to its time in each
        r, lo, up = row[many], b0[many], b1[many]
        rate = length[many] / (e[many] - s[many])
        cells += np.bincount(r + lo, weights=rate * ((lo + 1) * width - s[many]), minlength=size)
        cells += np.bincount(r + up, weights=rate * (e[many] - up * width), minlength=size)
        # Whole bins in between: +rate from the bin after the first, -rate from the last (then a running sum).
        diff = np.bincount(r + lo + 1, weights=rate * width, minlength=size)
        diff -= np.bincount(r + up, weights=rate * width, minlength=size)
        cells += np.cumsum(diff.reshape(-1, n + 1), axis=1).reshape(-1)
    grid = cells.reshape(2 * nrows, n + 1)[:, :n]
    counts = _round_rows(grid, _exact_sums(key, tr.length, 2 * nrows))
    write, read = counts[:nrows], counts[nrows:]
    return _heatmap_plot("DXT", module, width, n, n_ranks, per, nrows, read, write, [])


def _heatmap_plot(
    source: Literal["HEATMAP", "DXT"],
    module: str,
    width: float,
    n: int,
    n_ranks: int,
    per: int,
    nrows: int,
    read: np.ndarray,
    write: np.ndarray,
    notes: list[str],
) -> HeatmapPlot:
    first = np.arange(nrows, dtype=np.int64) * per
    if per > 1:
        notes = [
            f"{n_ranks:,} ranks in {nrows:,} rows of {per:,} consecutive ranks: each row adds up its ranks' bytes",
            *notes,
        ]
    return HeatmapPlot(
        source=source,
        module=module,
        x=Axis(label="time", unit="s"),
        y=Axis(label="rank", unit="rank"),
        bin_width=width,
        time=(np.arange(n) * width).tolist(),
        ranks_total=n_ranks,
        ranks_per_row=per,
        rank=first.tolist(),
        rank_last=np.minimum(first + per - 1, n_ranks - 1).tolist(),
        read=read.tolist(),
        write=write.tolist(),
        read_bytes=int(read.sum()),
        write_bytes=int(write.sum()),
        notes=notes,
    )


def heatmap_plot(
    profile: JobProfile, max_bins: int = HEATMAP_MAX_BINS, max_rows: int = HEATMAP_MAX_ROWS
) -> HeatmapPlot | None:
    """Rank by time bytes: the HEATMAP module when the log has one, else the DXT trace, else None."""
    hm = job_heatmap(heatmaps(profile))
    if hm is not None and len(hm.ranks) > 0:
        return _heatmap_from_module(hm, int(profile.meta.nprocs), max_bins, max_rows)
    ts = sample_traces(profile)
    for module in ("DXT_POSIX", "DXT_MPIIO"):  # POSIX holds what MPI-IO issued: never both (double count)
        if module in ts:
            k = sample_stride(profile, module)
            if k == 1:
                return _heatmap_from_trace(profile, module, ts[module], max_bins, max_rows)
            # A streamed trace: its 1-in-k sample, each segment standing for k.
            tr = replace(ts[module], length=ts[module].length * k)
            plot = _heatmap_from_trace(profile, module, tr, max_bins, max_rows)
            note = f"drawn from every {k:,}th segment of the trace (each standing for {k:,}): it was too large to hold"
            return plot.model_copy(update={"notes": [*plot.notes, note]})
    return None


# --- all ----------------------------------------------------------------------------------------------


def plot_data(profile: JobProfile, ctx: Context | None = None) -> PlotData:
    top = plot_top(profile)
    return PlotData(
        timeline=timeline(profile),
        transfer_sizes=transfer_sizes(profile),
        spatiality=spatiality(profile, tr=top) if top is not None else None,
        phases=phases_plot(profile, tr=top) if top is not None else None,
        osts=ost_plot(profile, ctx),
        heatmap=heatmap_plot(profile),
    )
