"""The service's cache of timeline sources, on real logs: one read per log however many zooms and threads,
bounded by entries and bytes, forgotten with the log, and a one-line reason where there is no trace."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from iodiag.analysis.plots.timeline_window import timeline_window
from iodiag.services.timeline import NoTrace, TimelineSources
from tests.conftest import shared_log

DRISHTI = shared_log("drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan")
DXT = shared_log(
    "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
)
NO_DXT = shared_log("darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan")
READ = (60.0, 4 << 30)


def test_one_read_per_log_even_from_many_threads() -> None:
    cache = TimelineSources()
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: cache.get("a", DRISHTI, *READ), range(8)))
    assert cache.loads == 1 and all(g is got[0] for g in got)
    src = got[0]
    assert len(src.cols) == 25_973 and src.n_ranks == 384 and src.runtime >= 11.5
    assert (src.cols.start[1:] >= src.cols.start[:-1]).all()  # sorted: windows are found by bisection
    w = timeline_window(src, 5.0, 5.5, 0, 383)
    assert w.points_total == 2_845 and not w.sampled


def test_bounded_by_entries_and_bytes_and_forgotten_with_the_log() -> None:
    cache = TimelineSources(max_entries=1)
    cache.get("a", DRISHTI, *READ)
    cache.get("b", DXT, *READ)  # evicts a
    cache.get("a", DRISHTI, *READ)
    assert cache.loads == 3
    cache.get("a", DRISHTI, *READ)
    assert cache.loads == 3
    cache.forget("a")
    cache.get("a", DRISHTI, *READ)
    assert cache.loads == 4
    tiny = TimelineSources(max_bytes=1000)  # larger than the budget: answered, never kept
    tiny.get("a", DRISHTI, *READ)
    tiny.get("a", DRISHTI, *READ)
    assert tiny.loads == 2


def test_no_trace_missing_or_unreadable_is_one_line(tmp_path: Path) -> None:
    cache = TimelineSources()
    with pytest.raises(NoTrace, match=r"^this log has no DXT trace, so there is no timeline to zoom into$"):
        cache.get("n", NO_DXT, *READ)
    with pytest.raises(NoTrace, match=r"^the stored log is missing$"):
        cache.get("m", tmp_path / "gone.darshan", *READ)
    broken = tmp_path / "broken.darshan"
    shutil.copyfile(DXT, broken)
    broken.write_bytes(broken.read_bytes()[:600])
    with pytest.raises(NoTrace, match=r"^the stored log cannot be read: ") as info:
        cache.get("b", broken, *READ)
    assert "\n" not in str(info.value)
    assert cache.loads == 0
    # A trace too large to hold for windows: summarised by the reader, and said so.
    small = TimelineSources(max_segments=10_000)
    with pytest.raises(NoTrace, match=r"^this trace has 25,973 segments, more than the 10,000 a zoomed window reads"):
        small.get("d", DRISHTI, *READ)
    assert small.get("x", DXT, *READ).cols.start.size == 576
