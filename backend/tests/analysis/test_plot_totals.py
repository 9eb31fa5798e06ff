"""Every plot's totals equal the numbers the report gives for the same thing, on every real log."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from iodiag.analysis.plots import data as plots
from iodiag.analysis.views.context import Context
from iodiag.analysis.views.heatmap import heatmaps
from iodiag.analysis.views.lustre import layouts
from iodiag.ingest import load_profile
from tests.conftest import all_logs, log_id

LOGS = all_logs()


@cache
def _data(path: Path) -> tuple[Context, plots.PlotData]:
    profile = load_profile(str(path), ("HEATMAP", "DXT"))
    ctx = Context(profile)
    return ctx, plots.plot_data(profile, ctx=ctx)


@pytest.mark.parametrize("log", LOGS, ids=log_id)
def test_ost_plot_adds_up_to_the_files_on_those_osts(log: Path) -> None:
    ctx, data = _data(log)
    p = data.osts
    if p is None:
        return
    files = [f for f in layouts(ctx) if f.osts and f.bytes_read + f.bytes_written > 0]
    assert p.totals.bytes == pytest.approx(sum(f.bytes_read + f.bytes_written for f in files), rel=1e-6, abs=2)
    assert sum(p.bytes) == pytest.approx(p.totals.bytes, rel=1e-9, abs=2)
    # Time is split over a file's OSTs like its bytes: the plot's hours are the files' hours, never more.
    assert sum(p.time) == pytest.approx(p.totals.time, rel=1e-9, abs=1e-9)
    assert p.totals.time == pytest.approx(sum(f.io_time for f in files), rel=1e-6, abs=1e-9)
    posix = ctx.posix_records
    posix_s = float(
        posix["POSIX_F_READ_TIME"].sum() + posix["POSIX_F_WRITE_TIME"].sum() + posix["POSIX_F_META_TIME"].sum()
    )
    assert p.totals.time <= posix_s * (1 + 1e-6) + 1e-9
    assert p.y.unit == "B" and p.x.unit == "OST"


@pytest.mark.parametrize("log", LOGS, ids=log_id)
def test_heatmap_bins_add_up_and_rows_cover_every_rank(log: Path) -> None:
    _, data = _data(log)
    h = data.heatmap
    if h is None:
        return
    assert int(np.sum(h.read)) == h.read_bytes and int(np.sum(h.write)) == h.write_bytes
    assert h.rank[0] == 0 and h.rank_last[-1] == h.ranks_total - 1
    assert all(b - a + 1 <= h.ranks_per_row for a, b in zip(h.rank, h.rank_last, strict=True))
    assert all(nxt == last + 1 for last, nxt in zip(h.rank_last, h.rank[1:], strict=False))
    if h.source == "HEATMAP":
        # Bytes the HEATMAP module itself holds for the layers the plot adds up.
        modules = heatmaps(load_profile(str(log), ("HEATMAP",)))
        held = sum(modules[m].bytes for m in h.module.split("+") if m in modules)
        assert h.read_bytes + h.write_bytes == pytest.approx(held, rel=1e-9, abs=len(h.rank) * len(h.time))
