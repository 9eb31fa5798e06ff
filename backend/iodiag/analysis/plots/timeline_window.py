"""One zoomed window of the per-rank timeline, at full resolution where it fits.

The report's timeline is bounded (``MAX_POINTS`` bars, a density grid past ``TIMELINE_SEGMENT_BUDGET``
segments), so zooming into it only magnifies what was merged. A window (a time range, a run of ranks,
optionally one layer) is small enough to show every segment it holds: this module answers with those
segments, one bar each, up to a limit; past the limit, with merged bars and a finer density grid of the
window, flagged as sampled. Totals are always exact.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iodiag.analysis.plots.data import (
    MAX_POINTS,
    TIMELINE_SEGMENT_BUDGET,
    Axis,
    Layer,
    TimelineColumns,
    TimelinePlot,
    Totals,
    layer_list,
    op_names,
    timeline_bars,
    timeline_columns,
    timeline_density,
)
from iodiag.ingest import JobProfile

WINDOW_LIMIT = TIMELINE_SEGMENT_BUDGET
"""Segments a window answers one by one unless the caller asks for another limit."""
MAX_WINDOW_LIMIT = MAX_POINTS


class TimelineWindow(TimelinePlot):
    """The segments of the timeline inside ``[t0, t1]`` (seconds) on ranks ``rank0..rank1``.

    A segment belongs to the window when it overlaps it (``start <= t1`` and ``end >= t0``), and is
    shown whole. ``points_total`` counts them exactly; with at most ``limit`` of them every one is its
    own bar (``sampled`` false, ``quantum`` 0), else bars merge as in the report's timeline and
    ``density`` grids the window.
    """

    t0: float
    t1: float
    rank0: int
    rank1: int
    only_layer: Layer | None
    """The one layer asked for, or None for every traced layer."""
    limit: int
    sampled: bool
    """True when the window holds more than ``limit`` segments: bars are merged, ``density`` is set."""


@dataclass(frozen=True, eq=False)
class TimelineSource:
    """A job's traced segments sorted by start, ready for window queries (kept in the service's cache)."""

    cols: TimelineColumns
    max_duration: float
    runtime: float
    n_ranks: int

    @property
    def nbytes(self) -> int:
        c = self.cols
        return sum(a.nbytes for a in (c.layer, c.rank, c.op, c.start, c.end, c.length))


def timeline_source(profile: JobProfile) -> TimelineSource | None:
    cols = timeline_columns(profile)
    if cols is None:
        return None
    cols = cols.take(np.argsort(cols.start, kind="stable"))
    dur = cols.end - cols.start
    return TimelineSource(
        cols=cols,
        max_duration=float(max(dur.max(), 0.0)),
        runtime=max(float(profile.meta.runtime_s), float(cols.end.max()), 1e-9),
        n_ranks=max(int(profile.meta.nprocs), int(cols.rank.max()) + 1),
    )


def timeline_window(
    src: TimelineSource,
    t0: float,
    t1: float,
    rank0: int,
    rank1: int,
    layer: Layer | None = None,
    limit: int = WINDOW_LIMIT,
) -> TimelineWindow:
    """The window's segments; ``t1 > t0``, ``rank1 >= rank0`` and ``1 <= limit <= MAX_WINDOW_LIMIT``."""
    if not (t1 > t0) or rank1 < rank0 or not (1 <= limit <= MAX_WINDOW_LIMIT):
        raise ValueError("need t1 > t0, rank1 >= rank0 and 1 <= limit <= MAX_WINDOW_LIMIT")
    c = src.cols
    # Sorted by start: only segments starting after t0 - (longest duration) can still be in flight at t0.
    lo = int(np.searchsorted(c.start, t0 - src.max_duration, side="left"))
    hi = int(np.searchsorted(c.start, t1, side="right"))
    sl = slice(lo, hi)
    keep = (c.end[sl] >= t0) & (c.rank[sl] >= rank0) & (c.rank[sl] <= rank1)
    if layer is not None:
        keep &= c.layer[sl] == (c.names.index(layer) if layer in c.names else -1)
    sub = c.take(np.flatnonzero(keep) + lo)
    bars = timeline_bars(sub, limit)
    sampled = len(sub) > limit
    density = None
    if sampled:
        last = min(rank1, src.n_ranks - 1)
        density = timeline_density(sub, t0, t1, rank0, max(rank0, last), limit)
    layer_totals = sub.layer_totals()
    return TimelineWindow(
        points_total=len(sub),
        points_shown=len(bars.rank),
        x=Axis(label="time", unit="s"),
        y=Axis(label="rank", unit="rank"),
        totals=Totals(
            bytes=int(sub.length.sum()), ops=len(sub), time=float((sub.end - sub.start).sum()) if len(sub) else 0.0
        ),
        quantum=bars.quantum,
        rank=bars.rank.tolist(),
        start=bars.start.tolist(),
        end=bars.end.tolist(),
        op=op_names(bars.op),
        layer=layer_list(bars.layer, c.names),
        bytes=bars.bytes.tolist(),
        ops=bars.ops.tolist(),
        layer_totals=layer_totals,
        density=density,
        t0=t0,
        t1=t1,
        rank0=rank0,
        rank1=rank1,
        only_layer=layer,
        limit=limit,
        sampled=sampled,
    )
