"""The HEATMAP records a simulated program leaves: bytes per rank per time bin, per instrumented layer.

Darshan's heatmap module (3.4+) keeps, for POSIX, MPI-IO and STDIO separately, one record per
rank with the bytes written and read in each time bin. Bins start 0.1 s wide; when the run
outgrows the bin array the module doubles the width and folds pairs of bins, so a log's width is
0.1 s times a power of two with at most ``MAX_BINS`` bins. A request's bytes are spread over the
bins its duration overlaps, in proportion to the overlap.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from iodiag.synth.trace import Trace, TraceLayer

BASE_WIDTH = 0.1
MAX_BINS = 200
LAYERS = {TraceLayer.POSIX: "heatmap:POSIX", TraceLayer.MPIIO: "heatmap:MPIIO", TraceLayer.STDIO: "heatmap:STDIO"}


def bin_width(runtime: float) -> float:
    width = BASE_WIDTH
    while runtime / width > MAX_BINS:
        width *= 2
    return width


def spread(start: np.ndarray, end: np.ndarray, nbytes: np.ndarray, width: float, nbins: int) -> np.ndarray:
    """Bytes per bin when each request's bytes are spread evenly over its duration (float, summed later)."""
    out = np.zeros(nbins, dtype=np.float64)
    first = np.clip((start // width).astype(np.int64), 0, nbins - 1)
    last = np.clip((np.maximum(end, start) // width).astype(np.int64), 0, nbins - 1)
    one = first == last
    np.add.at(out, first[one], nbytes[one])
    for s, e, b, lo, hi in zip(start[~one], end[~one], nbytes[~one], first[~one], last[~one], strict=True):
        edges = np.clip(np.arange(lo, hi + 2) * width, s, e)
        dur = max(e - s, 1e-12)
        out[lo : hi + 1] += b * np.diff(edges) / dur
    return out


def heatmap_table(t: Trace, io: dict[str, np.ndarray], runtime: float) -> tuple[pd.DataFrame | None, dict[int, str]]:
    """HEATMAP rows (the ingest's columns) and the names of their records."""
    from iodiag.synth.layout import record_id

    width = bin_width(runtime)
    nbins = max(int(np.ceil(runtime / width - 1e-9)), 1)
    rows: list[dict[str, object]] = []
    names: dict[int, str] = {}
    for layer, name in LAYERS.items():
        sel = io["layer"] == layer
        if not sel.any():
            continue
        rid = record_id(name)
        names[rid] = name
        ranks = io["rank"][sel]
        for r in np.unique(ranks).tolist():
            mine = np.flatnonzero(sel)[ranks == r]
            bins = {}
            for op, w in (("write_bins", True), ("read_bins", False)):
                m = mine[io["write"][mine] == w]
                b = spread(io["start"][m], io["end"][m], io["length"][m].astype(np.float64), width, nbins)
                bins[op] = _whole_bytes(b, int(io["length"][m].sum()))
            rows.append({"id": rid, "rank": int(r), "bin_width": width, **bins})
    if not rows:
        return None, {}
    return pd.DataFrame(rows), names


def _whole_bytes(b: np.ndarray, total: int) -> np.ndarray:
    """Round to whole bytes without losing or adding any (largest remainders get the leftovers)."""
    floor: np.ndarray = np.floor(b).astype(np.int64)
    short = total - int(floor.sum())
    if short > 0:
        floor[np.argsort(-(b - floor), kind="stable")[:short]] += 1
    return floor
