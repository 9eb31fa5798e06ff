"""The zoomed timeline window (GET /analyses/{id}/plots/timeline) on a real server over the 384-rank log.

The expected segments are counted here from the log itself (read with DXT, filtered with numpy), not
from the code under test.
"""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import pytest

from iodiag.analysis.plots.data import TIMELINE_SEGMENT_BUDGET, PlotData
from iodiag.analysis.plots.timeline_window import TimelineWindow
from iodiag.ingest import load_profile
from tests.api.test_api_support import LOG_DRISHTI, LOG_DXT, Server, shared_server, upload, wait_done

URL = "/api/v1/analyses/{}/plots/timeline"


@pytest.fixture(scope="module")
def server() -> Server:
    return shared_server()


@pytest.fixture(scope="module")
def drishti(server: Server) -> str:
    with server.client("zoomer") as c:
        r = upload(c, LOG_DRISHTI)
        assert r.status_code in (200, 202), r.text
        aid = str(r.json()["id"])
        assert wait_done(c, aid)["status"] == "done"
    return aid


@pytest.fixture(scope="module")
def segments() -> dict[str, np.ndarray]:
    """Every traced segment of the 384-rank log, MPI-IO (layer 0) then POSIX (layer 1)."""
    p = load_profile(str(LOG_DRISHTI), include=("DXT",))
    parts = [t for t in (p.trace("DXT_MPIIO"), p.trace("DXT_POSIX")) if t is not None]
    assert len(parts) == 2
    return {
        "layer": np.concatenate([np.full(len(t), i) for i, t in enumerate(parts)]),
        "rank": np.concatenate([t.rank for t in parts]),
        "start": np.concatenate([t.start for t in parts]),
        "end": np.concatenate([t.end for t in parts]),
        "length": np.concatenate([t.length for t in parts]),
    }


def expected(seg: dict[str, np.ndarray], t0: float, t1: float, r0: int, r1: int, layer: int | None = None) -> Any:
    m = (seg["start"] <= t1) & (seg["end"] >= t0) & (seg["rank"] >= r0) & (seg["rank"] <= r1)
    if layer is not None:
        m &= seg["layer"] == layer
    return m


def window(c: httpx.Client, aid: str, **params: Any) -> TimelineWindow:
    r = c.get(URL.format(aid), params=params)
    assert r.status_code == 200, r.text
    return TimelineWindow.model_validate_json(r.content)


def test_overview_carries_a_density_grid_past_the_segment_budget(server: Server, drishti: str) -> None:
    with server.client("zoomer") as c:
        data = PlotData.model_validate_json(c.get(f"/api/v1/analyses/{drishti}/plots").content)
    tl = data.timeline
    assert tl is not None and tl.points_total == 25_973 > TIMELINE_SEGMENT_BUDGET
    d = tl.density
    assert d is not None and d.budget == TIMELINE_SEGMENT_BUDGET
    assert d.rows == 384 and d.ranks_per_row == 1 and d.bins * d.bin_width >= 11.5
    assert {(s.layer, s.op) for s in d.series} == {("MPIIO", "write"), ("POSIX", "write"), ("POSIX", "read")}
    for s in d.series:
        assert len(s.cell) == len(s.segments) == len(s.bytes) and s.cell == sorted(s.cell)
        assert all(0 <= cell < d.rows * d.bins for cell in s.cell)
        # Every byte is in some bin (whole bytes per cell, so off by at most half a byte a cell).
        layer_bytes = tl.layer_totals[s.layer].bytes
        assert s.layer != "MPIIO" or abs(sum(s.bytes) - layer_bytes) <= len(s.cell)
    assert d.peak_bytes == max(max(s.bytes) for s in d.series)
    # A small trace stays without a density grid: its segments are drawn one by one.
    with server.client("zoomer") as c:
        r = upload(c, LOG_DXT)
        aid = str(r.json()["id"])
        assert wait_done(c, aid)["status"] == "done"
        small = PlotData.model_validate_json(c.get(f"/api/v1/analyses/{aid}/plots").content).timeline
    assert small is not None and small.points_total == 576 and small.density is None


def test_a_zoomed_window_has_every_segment_the_overview_merged(
    server: Server, drishti: str, segments: dict[str, np.ndarray]
) -> None:
    t0, t1, r0, r1 = 5.0, 5.5, 0, 383
    with server.client("zoomer") as c:
        overview = PlotData.model_validate_json(c.get(f"/api/v1/analyses/{drishti}/plots").content).timeline
        w = window(c, drishti, t0=t0, t1=t1, rank0=r0, rank1=r1)
    assert overview is not None
    m = expected(segments, t0, t1, r0, r1)
    assert w.points_total == int(m.sum()) == 2_845
    assert not w.sampled and w.quantum == 0 and w.density is None
    assert w.points_shown == w.points_total and set(w.ops) == {1}
    assert w.totals.bytes == int(segments["length"][m].sum())
    assert sorted(w.start) == sorted(segments["start"][m].tolist())
    assert all(s <= t1 and e >= t0 and r0 <= r <= r1 for s, e, r in zip(w.start, w.end, w.rank, strict=True))
    # The overview merged this window's segments into fewer bars: the window brings them back.
    in_view = [i for i, (s, e) in enumerate(zip(overview.start, overview.end, strict=True)) if s <= t1 and e >= t0]
    assert len(in_view) < w.points_total
    assert any(overview.ops[i] > 1 for i in in_view)
    assert (w.t0, w.t1, w.rank0, w.rank1, w.limit, w.only_layer) == (t0, t1, r0, r1, 5_000, None)


def test_rank_and_layer_filters(server: Server, drishti: str, segments: dict[str, np.ndarray]) -> None:
    with server.client("zoomer") as c:
        some = window(c, drishti, t0=5.0, t1=5.2, rank0=10, rank1=73)
        mpi = window(c, drishti, t0=2.0, t1=3.0, layer="MPIIO")
    assert some.points_total == int(expected(segments, 5.0, 5.2, 10, 73).sum()) > 0
    assert set(some.rank) <= set(range(10, 74))
    assert mpi.points_total == int(expected(segments, 2.0, 3.0, 0, 383, layer=0).sum()) > 0
    assert set(mpi.layer) == {"MPIIO"} and mpi.only_layer == "MPIIO" and mpi.rank1 == 383
    assert set(mpi.layer_totals) == {"MPIIO"}


def test_a_window_over_the_budget_says_it_is_sampled_and_grids_the_window(
    server: Server, drishti: str, segments: dict[str, np.ndarray]
) -> None:
    with server.client("zoomer") as c:
        w = window(c, drishti, t0=0.0, t1=12.0, limit=1000)
        empty = window(c, drishti, t0=100.0, t1=200.0)
    assert w.sampled and w.points_total == len(segments["start"]) and w.points_shown <= 1000
    assert w.totals.bytes == int(segments["length"].sum())
    assert sum(w.ops) == w.points_total  # merged bars keep every segment's count
    assert w.density is not None and w.density.t0 == 0.0 and w.density.rows == 384
    assert empty.points_total == 0 and not empty.sampled and empty.rank == []


def assert_one_line(r: httpx.Response, status: int, words: str) -> None:
    assert r.status_code == status, (r.status_code, r.text)
    detail = r.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail and words in detail, detail


def test_bad_windows_are_a_one_line_422(server: Server, drishti: str) -> None:
    url = URL.format(drishti)
    with server.client("zoomer") as c:
        assert_one_line(c.get(url, params={"t0": 3, "t1": 2}), 422, "t1 (2 s) must be after t0 (3 s)")
        assert_one_line(c.get(url, params={"t0": 3, "t1": 3}), 422, "must be after t0")
        assert_one_line(c.get(url, params={"t0": 0, "t1": 1, "rank0": 9, "rank1": 2}), 422, "rank1 (2)")
        assert_one_line(c.get(url, params={"t0": -1, "t1": 1}), 422, "t0")
        assert_one_line(c.get(url, params={"t0": "nan", "t1": 1}), 422, "t0")
        assert_one_line(c.get(url, params={"t0": 0, "t1": "inf"}), 422, "t1")
        assert_one_line(c.get(url, params={"t1": 1}), 422, "t0")
        assert_one_line(c.get(url, params={"t0": 0, "t1": 1, "limit": 0}), 422, "limit")
        assert_one_line(c.get(url, params={"t0": 0, "t1": 1, "limit": 20_001}), 422, "limit")
        assert_one_line(c.get(url, params={"t0": 0, "t1": 1, "layer": "HDF5"}), 422, "layer")
        assert_one_line(c.get(url, params={"t0": 0, "t1": 1, "layer": "DXT"}), 422, "layer")
        assert_one_line(c.get(url, params={"t0": "soon", "t1": 1}), 422, "t0")


def test_another_users_analysis_is_not_found_and_the_help_desk_sees_it(server: Server, drishti: str) -> None:
    params = {"t0": 5.0, "t1": 5.5}
    with server.client("someone-else") as other, server.client("hd-zoom", "helpdesk") as hd:
        assert_one_line(other.get(URL.format(drishti), params=params), 404, "no analysis")
        assert_one_line(other.get(URL.format("nope"), params=params), 404, "no analysis")
        assert hd.get(URL.format(drishti), params=params).status_code == 200
    with httpx.Client(base_url=server.url) as anon:
        assert anon.get(URL.format(drishti), params=params).status_code == 401
