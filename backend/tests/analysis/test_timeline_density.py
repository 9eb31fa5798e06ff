"""The timeline's density grid and windows on the 384-rank log, against counts made here from the trace."""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np

from iodiag.analysis.plots.data import TIMELINE_SEGMENT_BUDGET, TimelineColumns, timeline, timeline_columns
from iodiag.analysis.plots.timeline_window import timeline_source, timeline_window
from iodiag.ingest import JobProfile, load_profile
from tests.conftest import shared_log

DRISHTI = shared_log("drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan")
DXT = shared_log(
    "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
)


@cache
def _profile(path: str) -> JobProfile:
    return load_profile(path, include=("DXT",))


def _cols() -> TimelineColumns:
    cols = timeline_columns(_profile(str(DRISHTI)))
    assert cols is not None
    return cols


def test_segments_in_flight_and_bytes_per_cell_match_the_trace() -> None:
    tl = timeline(_profile(str(DRISHTI)))
    assert tl is not None and tl.density is not None
    g, cols = tl.density, _cols()
    assert g.budget == TIMELINE_SEGMENT_BUDGET and g.ranks_per_row == 1 and g.rows == 384 and g.t0 == 0.0
    rng = np.random.default_rng(3)
    for s in g.series:
        li, oi = cols.names.index(s.layer), ("write", "read").index(s.op)
        mine = (cols.layer == li) & (cols.op == oi)
        cell = np.asarray(s.cell)
        for k in rng.choice(len(cell), 40, replace=False).tolist():
            row, b = divmod(int(cell[k]), g.bins)
            lo, hi = g.t0 + b * g.bin_width, g.t0 + (b + 1) * g.bin_width
            # In flight during [lo, hi): started before its end, ended after its start (or a point inside it).
            here = mine & (cols.rank == row) & (cols.start < hi) & ((cols.end > lo) | (cols.start >= lo))
            assert s.segments[k] == int(here.sum()), (s.layer, s.op, row, b)
        # Each rank's bytes add up over its cells (whole bytes per cell: off by at most half a byte a cell).
        rows = cell // g.bins
        per_rank = np.bincount(rows, weights=np.asarray(s.bytes, dtype=np.float64), minlength=g.rows)
        truth = np.bincount(cols.rank[mine], weights=cols.length[mine].astype(np.float64), minlength=g.rows)
        assert np.all(np.abs(per_rank - truth) <= np.bincount(rows, minlength=g.rows) / 2 + 1)
    assert g.peak_bytes == max(max(s.bytes) for s in g.series) and g.peak_segments >= 1


def test_a_small_trace_has_no_density_and_its_bars_are_unchanged() -> None:
    tl = timeline(_profile(str(DXT)))
    assert tl is not None and tl.density is None and tl.points_total == tl.points_shown == 576 and tl.quantum == 0
    forced = timeline(_profile(str(DXT)), budget=100)
    assert forced is not None and forced.density is not None and forced.density.budget == 100
    assert forced.rank == tl.rank and forced.start == tl.start  # the bars do not depend on the budget


def test_windows_cover_every_segment_once_and_ranks_past_the_last_are_empty() -> None:
    src = timeline_source(_profile(str(DRISHTI)))
    assert src is not None
    # Back-to-back windows: every segment is in at least one, and a segment in two straddles their edge.
    edges = np.linspace(0.0, 12.0, 9)
    seen = sum(timeline_window(src, a, b, 0, 383, limit=20_000).points_total for a, b in itertools.pairwise(edges))
    c = src.cols
    straddle = sum(int(((c.start <= e) & (c.end >= e)).sum()) for e in edges[1:-1])
    assert seen == len(c) + straddle
    assert timeline_window(src, 0.0, 12.0, 400, 500).points_total == 0
    r = int(c.rank[c.layer == c.names.index("POSIX")][0])  # only the aggregators' ranks reach POSIX
    one = timeline_window(src, 0.0, 12.0, r, r, layer="POSIX")
    assert set(one.rank) == {r} and one.points_total == int(((c.rank == r) & (c.layer == 1)).sum()) > 0
