"""Static SVG pictures of the plot data (``iodiag.analysis.plots.data``) for the self-contained HTML report.

Pure functions from a plot model to one ``<svg>`` string: no script, no external reference (the
page's CSS, ``PLOT_CSS``, colours them by class, light and dark). Each picture has axes with units, a
legend, ``role="img"`` with an ``aria-label`` that says in words what the data shows, and a
``<title>``. Every string goes through ``e()``: the HEATMAP module's name, like anything else read
from a log, could carry markup.

Sizes stay bounded whatever the log: marks are drawn at the picture's resolution (bars closer than
a pixel column merge, heatmap cells of equal colour merge along a row) and each picture has a budget
of marks beyond which it gets coarser, so even a 20,000-bar timeline is a few hundred kilobytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from iodiag.analysis.plots.data import (
    HeatmapPlot,
    OstPlot,
    PhasesPlot,
    PlotData,
    SizeHistogram,
    SpatialityPlot,
    TimelinePlot,
    TransferSizePlot,
)
from iodiag.core.markup import e
from iodiag.core.units import human_bytes, human_seconds

W = 760
"""viewBox width of every picture; the page scales it to the column."""
LEFT, RIGHT = 78, 14
PW = W - LEFT - RIGHT
"""Width of the plotting area."""
MARK_BUDGET = 6_000
"""Rectangles (path segments) per picture before its grid gets coarser: keeps a picture near 150 KB."""
TIMELINE_ROWS = 96
"""Display rows of a timeline layer: with more ranks, a row holds a run of consecutive ranks."""
HEATMAP_ROWS = 96
PHASES_SHOWN = 300
"""Phases drawn (the ones moving the most bytes) when there are more."""
HEAT_LEVELS = 6
SPATIAL_H = 200
"""Height of the spatiality plot's area: one display row per pixel of file offset."""
FILE_CLASSES = 8

# Okabe-Ito colours (distinguishable with the common colour-vision deficiencies); lighter variants
# for the dark scheme. Read and write keep the same colours in every picture of the report.
PLOT_CSS = """
:root { --plot-phase: #009e73; --plot-alone: #cc79a7; --plot-time: #e69f00; --plot-over: #cc79a7;
  --hm0: #c6dbef; --hm1: #9ecae1; --hm2: #6baed6; --hm3: #3182bd; --hm4: #08519c; --hm5: #08306b; }
@media (prefers-color-scheme: dark) {
  :root { --plot-phase: #3fc79a; --plot-alone: #e59cc7; --plot-time: #f0b840; --plot-over: #e59cc7;
    --hm0: #0b3a63; --hm1: #155d91; --hm2: #2b7fc0; --hm3: #4fa3e0; --hm4: #8cc8f5; --hm5: #d4ecff; }
}
figure.plot { margin: 0 0 16px; }
figure.plot h3 { margin: 0 0 8px; }
svg.plot text { font-size: 11px; }
svg.plot text.title { font-weight: 600; }
svg .axis { stroke: var(--muted); stroke-width: 1; fill: none; }
svg .grid { stroke: var(--border); stroke-width: 1; }
svg .frame { fill: none; stroke: var(--border); }
svg .phase { fill: var(--plot-phase); stroke: var(--card); stroke-width: 0.5; } svg .alone { fill: var(--plot-alone); }
svg .time { fill: var(--plot-time); } svg .over { fill: var(--plot-over); }
svg .hm0 { fill: var(--hm0); } svg .hm1 { fill: var(--hm1); } svg .hm2 { fill: var(--hm2); }
svg .hm3 { fill: var(--hm3); } svg .hm4 { fill: var(--hm4); } svg .hm5 { fill: var(--hm5); }
:root { --f0: #e69f00; --f1: #0072b2; --f2: #009e73; --f3: #cc79a7; --f4: #56b4e9; --f5: #d55e00; --f6: #8a7a00;
  --f7: #555555; }
@media (prefers-color-scheme: dark) {
  :root { --f0: #f0b840; --f1: #4fa3e0; --f2: #3fc79a; --f3: #e59cc7; --f4: #8fd0f5; --f5: #f08a4b; --f6: #e0d060;
    --f7: #bbbbbb; }
}
svg .f0 { fill: var(--f0); } svg .f1 { fill: var(--f1); } svg .f2 { fill: var(--f2); } svg .f3 { fill: var(--f3); }
svg .f4 { fill: var(--f4); } svg .f5 { fill: var(--f5); } svg .f6 { fill: var(--f6); } svg .f7 { fill: var(--f7); }
"""

OP_CLASS = {"write": "write", "read": "read"}
LAYER_NAME = {"MPIIO": "MPI-IO", "POSIX": "POSIX", "DXT": "DXT"}


CHAR_WIDTH = 0.6
"""Width of one character in ems, a conservative estimate: about a digit of a system-ui font and more than its
average lower-case letter, so labels laid out by it fit when drawn (the page has no script to measure them)."""


def text_width(text: str, size: float) -> float:
    """The width ``text`` takes at ``size`` px, by ``CHAR_WIDTH``: what a label needs to fit in a picture."""
    return len(text) * size * CHAR_WIDTH


@dataclass(frozen=True)
class Figure:
    """One picture for the report: a heading, the SVG, and a caption saying how to read it."""

    title: str
    svg: str
    caption: str


# --- numbers ------------------------------------------------------------------------------------


def _f(v: float) -> str:
    """A coordinate: one decimal at most, no trailing zeros (every byte counts in a 20,000-mark picture)."""
    text = f"{v:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _step(span: float, n: int) -> float:
    raw = max(span, 1e-12) / max(n, 1)
    base = 10.0 ** math.floor(math.log10(raw))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if m * base >= raw * (1 - 1e-9):
            return m * base
    return 10 * base


def nice_ticks(lo: float, hi: float, n: int = 5, integer: bool = False) -> list[float]:
    """Round tick values inside ``[lo, hi]``: steps of 1, 2, 2.5 or 5 times a power of ten, at most ``n`` of them
    between the first and the last tick."""
    if hi <= lo:
        return [lo]
    step = _step(hi - lo, n)
    if integer:
        step = max(1.0, math.ceil(step))
    first = math.ceil(lo / step - 1e-9) * step
    count = math.floor((hi - first) / step + 1e-9) + 1
    return [round(first + i * step, 10) for i in range(max(count, 0))]


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:g}"


_BIN_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def _byte_scale(top: float) -> tuple[float, str]:
    """(divisor, unit) so that ``top`` reads as a number below 1024 of that unit."""
    k = 0
    while top >= 1024 and k < len(_BIN_UNITS) - 1:
        top /= 1024
        k += 1
    return float(1024**k), _BIN_UNITS[k]


@dataclass(frozen=True)
class _Scale:
    """A value axis from 0: its top, its ticks (raw values), how a tick reads, and its title."""

    hi: float
    ticks: list[float]
    div: float
    title: str

    def fmt(self, v: float) -> str:
        return _num(v / self.div)


def _scale(peak: float, title: str, div: float = 1.0, n: int = 3, integer: bool = False) -> _Scale:
    """Round ticks in units of ``div`` from 0 to the first tick at or above ``peak``."""
    top = max(peak / div, 0.0)
    step = _step(top, n) if top > 0 else 1.0
    if integer:
        step = float(max(1, math.ceil(step)))
    k = max(1, math.ceil(top / step - 1e-9))
    return _Scale(k * step * div, [i * step * div for i in range(k + 1)], div, title)


def _bytes_scale(peak: float) -> _Scale:
    div, unit = _byte_scale(peak)
    return _scale(peak, f"bytes ({unit})", div)


def _pct(part: float, whole: float) -> str:
    if whole <= 0:
        return "0 %"
    p = 100 * part / whole
    if 0 < p < 0.1:
        return "<0.1 %"
    return f"{p:.1f} %" if p < 10 else f"{p:.0f} %"


def _secs(s: float) -> str:
    return human_seconds(max(s, 0.0)) if s > 0 else "0 s"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _ranks_word(first: int, last: int) -> str:
    return f"rank {first}" if first == last else f"ranks {first}–{last}"


# --- frame pieces ------------------------------------------------------------------------------------


def _svg(height: float, label: str, body: Sequence[str]) -> str:
    return (
        f'<svg class="plot" viewBox="0 0 {W} {_f(height)}" role="img" aria-label="{e(label)}">'
        f"<title>{e(label)}</title>{''.join(body)}</svg>"
    )


def _x_axis(
    y: float, lo: float, hi: float, title: str, fmt: Callable[[float], str], ticks: Sequence[float] | None = None
) -> list[str]:
    """Axis line at ``y`` under a plotting area spanning ``[lo, hi]``, with ticks, labels and a title."""
    out = [f'<path class="axis" d="M{LEFT} {_f(y)}h{PW}"/>']
    span = hi - lo if hi > lo else 1.0
    for t in ticks if ticks is not None else nice_ticks(lo, hi, 8):
        x = LEFT + (t - lo) / span * PW
        out.append(f'<path class="axis" d="M{_f(x)} {_f(y)}v4"/>')
        out.append(f'<text x="{_f(x)}" y="{_f(y + 15)}" text-anchor="middle">{e(fmt(t))}</text>')
    out.append(f'<text class="muted" x="{LEFT + PW / 2:.0f}" y="{_f(y + 31)}" text-anchor="middle">{e(title)}</text>')
    return out


def _y_axis(top: float, height: float, scale: _Scale) -> list[str]:
    """Value axis on the left of a plotting area ``height`` tall from ``top`` (0 at the bottom), grid lines across."""
    out = [f'<path class="axis" d="M{LEFT} {_f(top)}v{_f(height)}"/>']
    for t in scale.ticks:
        y = top + height - t / scale.hi * height
        out.append(f'<path class="grid" d="M{LEFT} {_f(y)}h{PW}"/>')
        out.append(f'<text x="{LEFT - 6}" y="{_f(y + 4)}" text-anchor="end">{e(scale.fmt(t))}</text>')
    cy = top + height / 2
    out.append(
        f'<text class="muted" x="12" y="{_f(cy)}" text-anchor="middle" transform="rotate(-90 12 {_f(cy)})">'
        f"{e(scale.title)}</text>"
    )
    return out


def _legend(y: float, items: Sequence[tuple[str, str]], x: float = LEFT) -> list[str]:
    """Swatch and label per (class, label), left to right from ``x``."""
    out = []
    for cls, label in items:
        out.append(f'<rect class="{e(cls)}" x="{_f(x)}" y="{_f(y - 9)}" width="10" height="10" rx="2"/>')
        out.append(f'<text x="{_f(x + 14)}" y="{_f(y)}">{e(label)}</text>')
        x += 14 + 6.2 * len(label) + 16
    return out


def _runs(occupied: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, first column, column count) of every run of True cells in a 2-D boolean grid, row-major."""
    padded = np.zeros((occupied.shape[0], occupied.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = occupied
    d = np.diff(padded, axis=1)
    rs, cs = np.nonzero(d == 1)
    _, ce = np.nonzero(d == -1)
    return rs, cs, ce - cs


def _rects(rows: np.ndarray, cols: np.ndarray, widths: np.ndarray, row_y: np.ndarray, h: float, cw: float) -> str:
    """One path of rectangles: run ``i`` at column ``cols[i]`` (``cw`` wide each) of display row ``rows[i]``."""
    return "".join(
        f"M{_f(LEFT + c * cw)} {_f(y)}h{_f(n * cw)}v{_f(h)}h-{_f(n * cw)}z"
        for c, y, n in zip(cols.tolist(), row_y[rows].tolist(), widths.tolist(), strict=True)
    )


def _display_rows(n_ranks: int, cap: int) -> tuple[int, int]:
    """(ranks per display row, display rows)."""
    per = max(1, -(-n_ranks // cap))
    return per, max(1, -(-n_ranks // per))


def _row_px(rows: int) -> float:
    """Height of a display row: 2 px at least (a write and a read half), 24 px at most (a lone rank)."""
    return float(max(2, min(24, 192 // rows)))


def _rank_ticks(top: float, row_h: float, rows: int, per: int, n_ranks: int) -> list[str]:
    """Rank labels on the left of a rank-per-row area (the first rank of the labelled rows)."""
    out = [f'<path class="axis" d="M{LEFT} {_f(top)}v{_f(rows * row_h)}"/>']
    for t in nice_ticks(0, n_ranks - 1, max(1, min(6, int(rows * row_h // 22))), integer=True):
        r = int(t) // per
        y = top + (r + 0.5) * row_h
        out.append(f'<text x="{LEFT - 6}" y="{_f(y + 4)}" text-anchor="end">{e(int(t))}</text>')
    return out


def _rank_title(top: float, height: float, per: int) -> str:
    cy = top + height / 2
    word = "rank" if per == 1 else f"rank ({per} per row)"
    return (
        f'<text class="muted" x="12" y="{_f(cy)}" text-anchor="middle" transform="rotate(-90 12 {_f(cy)})">'
        f"{e(word)}</text>"
    )


# --- timeline ----------------------------------------------------------------------------------------


def _op_sentence(verb: str, ranks: np.ndarray, nbytes: np.ndarray, start: float, end: float) -> str:
    """One operation of one layer in words: 32 ranks write 4.00 GiB between 0.20 s and 14.1 s; the busiest, ..."""
    if len(ranks) == 0:
        return ""
    uranks, inv = np.unique(ranks, return_inverse=True)
    per_rank = np.bincount(inv, weights=nbytes.astype(np.float64))
    total = float(per_rank.sum())
    when = f"between {_secs(start)} and {_secs(end)}"
    if len(uranks) == 1:
        return f"rank {int(uranks[0])} {verb}s {human_bytes(total)} {when}"
    top = int(np.argmax(per_rank))
    return (
        f"{len(uranks):,} ranks {verb} {human_bytes(total)} {when}; the busiest, rank {int(uranks[top])}, "
        f"{verb}s {_pct(float(per_rank[top]), total)} of it"
    )


def timeline_svg(plot: TimelinePlot) -> str | None:
    """Rank against time, one panel per traced layer: when each rank was writing (top half of its row)
    and reading (bottom half)."""
    if plot.points_shown == 0:
        return None
    rank = np.asarray(plot.rank, dtype=np.int64)
    start = np.asarray(plot.start, dtype=np.float64)
    end = np.asarray(plot.end, dtype=np.float64)
    op = np.array([o == "read" for o in plot.op], dtype=np.int64)
    layer = np.asarray(plot.layer)
    nbytes = np.asarray(plot.bytes, dtype=np.int64)
    t_hi = max(float(end.max()), float(start.max()), 1e-9)
    n_ranks = int(rank.max()) + 1
    per, rows = _display_rows(n_ranks, TIMELINE_ROWS)
    row_h = _row_px(rows)
    layers = [name for name in ("MPIIO", "POSIX") if (layer == name).any()]
    panel_h = rows * row_h
    # Columns: one per pixel, halved until the runs fit the mark budget.
    cols = PW
    while True:
        cw = PW / cols
        c0 = np.clip(np.floor(start / t_hi * cols), 0, cols - 1).astype(np.int64)
        c1 = np.clip(np.ceil(end / t_hi * cols), c0 + 1, cols).astype(np.int64)
        runs = []
        for name in layers:
            m = layer == name
            for o in (0, 1):
                sel = m & (op == o)
                diff = np.zeros((rows, cols + 1), dtype=np.int32)
                np.add.at(diff, (rank[sel] // per, c0[sel]), 1)
                np.add.at(diff, (rank[sel] // per, c1[sel]), -1)
                runs.append(_runs(np.cumsum(diff, axis=1)[:, :cols] > 0))
        if sum(len(r[0]) for r in runs) <= MARK_BUDGET or cols <= 64:
            break
        cols //= 2
    body: list[str] = []
    sentences: list[str] = []
    top = 38.0
    ops_present = [o for o in ("write", "read") if o in plot.op]
    body += _legend(14, [(OP_CLASS[o], o) for o in ops_present])
    for li, name in enumerate(layers):
        body.append(f'<text class="title" x="{LEFT}" y="{_f(top - 4)}">{e(LAYER_NAME[name])}</text>')
        body.append(f'<rect class="track" x="{LEFT}" y="{_f(top)}" width="{PW}" height="{_f(panel_h)}"/>')
        row_y = top + np.arange(rows) * row_h
        for o in (0, 1):
            rs, cs, ws = runs[li * 2 + o]
            if len(rs):
                y = row_y + (row_h / 2 if o == 1 else 0)
                cls = "read" if o == 1 else "write"
                body.append(f'<path class="{cls}" d="{_rects(rs, cs, ws, y, row_h / 2, cw)}"/>')
        body += _rank_ticks(top, row_h, rows, per, n_ranks)
        body.append(_rank_title(top, panel_h, per))
        m = layer == name
        parts = []
        for o, verb in ((0, "write"), (1, "read")):
            sel = m & (op == o)
            if sel.any():
                parts.append(_op_sentence(verb, rank[sel], nbytes[sel], float(start[sel].min()), float(end[sel].max())))
        sentences.append(f"{LAYER_NAME[name]}: " + ". ".join(parts))
        top += panel_h + 26
    top -= 26
    body += _x_axis(top, 0.0, t_hi, "time since job start (s)", _num)
    label = f"Timeline of the DXT trace over {_secs(t_hi)}. " + ". ".join(sentences) + "."
    if per > 1:
        label += f" Each row holds {per} consecutive ranks."
    return _svg(top + 40, label, body)


# --- heatmap ----------------------------------------------------------------------------------------


def _heat_levels(values: np.ndarray) -> np.ndarray:
    """Edges of ``HEAT_LEVELS`` colour classes, log-spaced from the smallest to the largest positive cell."""
    pos = values[values > 0]
    lo, hi = float(pos.min()), float(pos.max())
    if hi <= lo:
        return np.array([lo] * (HEAT_LEVELS + 1))
    edges: np.ndarray = np.geomspace(lo, hi, HEAT_LEVELS + 1)
    return edges


def _coarsen(m: np.ndarray, row_per: int, col_per: int) -> np.ndarray:
    """Sum blocks of ``row_per`` rows by ``col_per`` columns (the last block may be partial)."""
    r = -(-m.shape[0] // row_per)
    c = -(-m.shape[1] // col_per)
    padded = np.zeros((r * row_per, c * col_per), dtype=np.float64)
    padded[: m.shape[0], : m.shape[1]] = m
    out: np.ndarray = padded.reshape(r, row_per, c, col_per).sum(axis=(1, 3))
    return out


def heatmap_svg(plot: HeatmapPlot) -> str | None:
    """Bytes per rank and time bin, write and read in two panels on one time axis and one colour scale."""
    panels = [(op, np.asarray(getattr(plot, op), dtype=np.float64)) for op in ("write", "read")]
    panels = [(op, m) for op, m in panels if m.size and m.sum() > 0]
    if not panels:
        return None
    n_rows = len(plot.rank)
    n_bins = len(plot.time)
    row_per, rows = _display_rows(n_rows, HEATMAP_ROWS)
    col_per = 1
    while True:
        grids = [(op, _coarsen(m, row_per, col_per)) for op, m in panels]
        allv = np.concatenate([g.ravel() for _, g in grids])
        edges = _heat_levels(allv)
        classed = []
        for op, g in grids:
            level = np.where(g > 0, np.clip(np.searchsorted(edges[1:-1], g, side="right"), 0, HEAT_LEVELS - 1), -1)
            classed.append((op, level))
        marks = 0
        for _, level in classed:
            for k in range(HEAT_LEVELS):
                marks += len(_runs(level == k)[0])
        if marks <= MARK_BUDGET or n_bins // col_per <= 25:
            break
        col_per *= 2
    cols = -(-n_bins // col_per)
    cw = PW / cols
    row_h = _row_px(rows)
    panel_h = rows * row_h
    ranks_per_row = plot.ranks_per_row * row_per
    span = n_bins * plot.bin_width
    body: list[str] = []
    top = 22.0
    for op, level in classed:
        body.append(f'<text class="title" x="{LEFT}" y="{_f(top - 4)}">{e(op)}</text>')
        body.append(f'<rect class="track" x="{LEFT}" y="{_f(top)}" width="{PW}" height="{_f(panel_h)}"/>')
        row_y = top + np.arange(rows) * row_h
        for k in range(HEAT_LEVELS):
            rs, cs, ws = _runs(level == k)
            if len(rs):
                body.append(f'<path class="hm{k}" d="{_rects(rs, cs, ws, row_y, row_h, cw)}"/>')
        body += _rank_ticks(top, row_h, rows, ranks_per_row, plot.ranks_total)
        body.append(_rank_title(top, panel_h, ranks_per_row))
        top += panel_h + 26
    top -= 26
    body += _x_axis(top, 0.0, span, "time since job start (s)", _num)
    body += _heat_scale(top + 44, edges)
    cell = f"{_count(ranks_per_row, 'rank')} by {_secs(col_per * plot.bin_width)}"
    return _svg(top + 74, f"{_heatmap_label(plot, span)} Each cell drawn is {cell}.", body)


def _heat_scale(y: float, edges: np.ndarray) -> list[str]:
    """The colour scale under the heatmap: one swatch per class with the class edges under them, then "none"."""
    out = [f'<text class="title" x="{LEFT}" y="{_f(y + 9)}">bytes per cell</text>']
    x = LEFT + 120.0
    sw = 76.0
    for k in range(HEAT_LEVELS):
        out.append(f'<rect class="hm{k}" x="{_f(x + k * sw)}" y="{_f(y)}" width="{_f(sw)}" height="10"/>')
    for k in range(HEAT_LEVELS + 1) if edges[-1] > edges[0] else (0,):
        out.append(
            f'<text x="{_f(x + k * sw)}" y="{_f(y + 23)}" text-anchor="middle">{e(human_bytes(float(edges[k])))}</text>'
        )
    x += HEAT_LEVELS * sw + 12
    out.append(f'<rect class="track" x="{_f(x)}" y="{_f(y)}" width="16" height="10"/>')
    out.append(f'<text x="{_f(x + 20)}" y="{_f(y + 9)}">none</text>')
    return out


def _heatmap_label(plot: HeatmapPlot, span: float) -> str:
    src = (
        f"Darshan's HEATMAP module ({plot.module})"
        if plot.source == "HEATMAP"
        else f"the DXT trace ({plot.module.removeprefix('DXT_')})"
    )
    rows = "one row each" if plot.ranks_per_row == 1 else f"in rows of {plot.ranks_per_row} consecutive ranks"
    parts = [
        f"Heatmap of bytes per rank and time from {src}: {_count(plot.ranks_total, 'rank')}, {rows}, "
        f"{len(plot.time)} bins of {_secs(plot.bin_width)} over {_secs(span)}"
    ]
    total = plot.read_bytes + plot.write_bytes
    for op, nbytes in (("write", plot.write_bytes), ("read", plot.read_bytes)):
        if nbytes <= 0:
            parts.append(f"No rank {op}s")
            continue
        m = np.asarray(getattr(plot, op), dtype=np.int64)
        per_row = m.sum(axis=1)
        per_bin = m.sum(axis=0)
        active = np.flatnonzero(per_bin > 0)
        t0 = float(active[0]) * plot.bin_width
        t1 = float(active[-1] + 1) * plot.bin_width
        busy = int(np.argmax(per_row))
        peak = int(np.argmax(per_bin))
        n_active = int((per_row > 0).sum())
        when = f"{human_bytes(nbytes)} between {_secs(t0)} and {_secs(t1)}"
        peak_text = f"the busiest bin, from {_secs(peak * plot.bin_width)}, holds {_pct(float(per_bin[peak]), nbytes)}"
        share = _pct(float(per_row[busy]), nbytes)
        if plot.ranks_per_row == 1:
            who = f"rank {plot.rank[busy]}"
            lead = f"{who} {op}s {when}" if n_active == 1 else f"{n_active:,} ranks {op} {when}"
            parts.append(
                f"{lead}; {peak_text}" if n_active == 1 else f"{lead}; the busiest, {who}, {op}s {share}; {peak_text}"
            )
        else:
            parts.append(
                f"{op}s: {when} in {n_active:,} of the {len(plot.rank):,} rows; the busiest row, "
                f"{_ranks_word(plot.rank[busy], plot.rank_last[busy])}, {op}s {share}; {peak_text}"
            )
    label = ". ".join(parts) + f". {human_bytes(total)} in all."
    return label


# --- transfer sizes ----------------------------------------------------------------------------------


def _bin_label(name: str) -> str:
    return name.replace("_PLUS", "+").replace("_", "–")


def _histogram_sentence(h: SizeHistogram, layer: str) -> str:
    parts = []
    for i, (la, op) in enumerate(zip(h.layer, h.op, strict=True)):
        if la != layer:
            continue
        counts = h.counts[i]
        n = sum(counts)
        if n == 0:
            continue
        b = int(np.argmax(counts))
        parts.append(
            f"{n:,} {op}s ({human_bytes(sum(h.bytes[i]))}), most of them ({_pct(counts[b], n)}) "
            f"of {_bin_label(h.bins[b])} bytes"
        )
    return f"{LAYER_NAME.get(layer, layer)}: " + "; ".join(parts)


def transfer_size_svg(plot: TransferSizePlot) -> str | None:
    """Darshan's access-size bins: operations per bin, write and read side by side, one panel per layer."""
    h = plot.histogram
    layers = [la for la in ("MPIIO", "POSIX") if la in h.layer]
    if not layers:
        return None
    nb = len(h.bins)
    slot = PW / nb
    bw = min(26.0, slot * 0.4)
    panel_h = 110.0
    body: list[str] = []
    ops_present = [o for o in ("write", "read") if o in h.op]
    body += _legend(14, [(OP_CLASS[o], f"{o}s") for o in ops_present])
    top = 42.0
    sentences = []
    for layer in layers:
        rows = [i for i, la in enumerate(h.layer) if la == layer]
        peak = max((max(h.counts[i]) for i in rows), default=0) or 1
        sc = _scale(peak, "operations", integer=True)
        hi = sc.hi
        body.append(f'<text class="title" x="{LEFT}" y="{_f(top - 4)}">{e(LAYER_NAME.get(layer, layer))}</text>')
        body += _y_axis(top, panel_h, sc)
        for i in rows:
            k = 0 if h.op[i] == "write" else 1
            for b, c in enumerate(h.counts[i]):
                if c <= 0:
                    continue
                bh = max(c / hi * panel_h, 1.0)
                x = LEFT + b * slot + slot / 2 - bw + k * bw
                body.append(
                    f'<rect class="{OP_CLASS[h.op[i]]}" x="{_f(x)}" y="{_f(top + panel_h - bh)}" '
                    f'width="{_f(bw)}" height="{_f(bh)}"/>'
                )
        body.append(f'<path class="axis" d="M{LEFT} {_f(top + panel_h)}h{PW}"/>')
        sentences.append(_histogram_sentence(h, layer))
        top += panel_h + 30
    top -= 30
    body.append(f'<path class="axis" d="M{LEFT} {_f(top)}h{PW}"/>')
    for b, name in enumerate(h.bins):
        x = LEFT + (b + 0.5) * slot
        body.append(f'<text x="{_f(x)}" y="{_f(top + 15)}" text-anchor="middle">{e(_bin_label(name))}</text>')
    body.append(
        f'<text class="muted" x="{LEFT + PW / 2:.0f}" y="{_f(top + 31)}" text-anchor="middle">'
        "transfer size (bytes, Darshan's access-size bins)</text>"
    )
    label = (
        f"Transfer sizes of the {plot.points_total:,} DXT segments ({human_bytes(plot.totals.bytes)}). "
        + ". ".join(sentences)
        + "."
    )
    return _svg(top + 40, label, body)


# --- spatiality --------------------------------------------------------------------------------------


def _short_path(path: str, keep: int = 56) -> str:
    """The end of a long path (its file name and nearest directories are what tell files apart)."""
    return path if len(path) <= keep else "…" + path[-(keep - 1) :]


def spatiality_svg(plot: SpatialityPlot) -> str | None:
    """File offset against time for the busiest files: each request a vertical mark from its offset to its end,
    one colour per file."""
    if plot.points_shown == 0 or not plot.files:
        return None
    t = np.asarray(plot.time, dtype=np.float64)
    off = np.asarray(plot.offset, dtype=np.float64)
    end = off + np.asarray(plot.length, dtype=np.float64)
    fidx = np.asarray(plot.file, dtype=np.int64)
    t_hi = max(float(t.max()), 1e-9)
    sc = _bytes_scale(max(float(end.max()), 1.0))
    rows = SPATIAL_H
    r0 = np.clip(np.floor(off / sc.hi * rows), 0, rows - 1).astype(np.int64)
    r1 = np.clip(np.ceil(end / sc.hi * rows), r0 + 1, rows).astype(np.int64)
    n_files = len(plot.files)
    # Columns: one per pixel, halved until the marks (vertical runs per file and column) fit the budget.
    cols = PW
    while True:
        c = np.clip(np.floor(t / t_hi * cols), 0, cols - 1).astype(np.int64)
        runs = []
        for k in range(n_files):
            sel = fidx == k
            diff = np.zeros((cols, rows + 1), dtype=np.int32)
            np.add.at(diff, (c[sel], r0[sel]), 1)
            np.add.at(diff, (c[sel], r1[sel]), -1)
            runs.append(_runs(np.cumsum(diff, axis=1)[:, :rows] > 0))
        if sum(len(r[0]) for r in runs) <= MARK_BUDGET or cols <= 64:
            break
        cols //= 2
    cw = PW / cols
    top = 14.0
    body: list[str] = [f'<rect class="track" x="{LEFT}" y="{_f(top)}" width="{PW}" height="{rows}"/>']
    body += _y_axis(top, rows, _Scale(sc.hi, sc.ticks, sc.div, f"file offset ({sc.title.split('(')[1]}"))
    for k, (cs, rs, ns) in enumerate(runs):
        if len(cs):
            marks = "".join(
                f"M{_f(LEFT + col * cw)} {_f(top + rows - r - n)}h{_f(max(cw, 1.0))}v{n}h-{_f(max(cw, 1.0))}z"
                for col, r, n in zip(cs.tolist(), rs.tolist(), ns.tolist(), strict=True)
            )
            body.append(f'<path class="f{k % FILE_CLASSES}" d="{marks}"/>')
    body += _x_axis(top + rows, 0.0, t_hi, "time since job start (s)", _num)
    y = top + rows + 56
    for k, f in enumerate(plot.files):
        body.append(f'<rect class="f{k % FILE_CLASSES}" x="{LEFT}" y="{_f(y - 9)}" width="10" height="10" rx="2"/>')
        body.append(
            f'<text x="{LEFT + 14}" y="{_f(y)}">{e(_short_path(f.path))} · {e(human_bytes(f.bytes))} in '
            f"{e(_count(f.ops, 'request'))}</text>"
        )
        y += 16
    return _svg(y, _spatiality_label(plot, t, off, end, fidx), body)


def _spatiality_label(plot: SpatialityPlot, t: np.ndarray, off: np.ndarray, end: np.ndarray, fidx: np.ndarray) -> str:
    total = plot.totals.bytes
    shown = (
        "" if plot.points_shown == plot.points_total else f", {plot.points_shown:,} of them drawn (a uniform sample)"
    )
    parts = [
        f"File offset against time for the {_count(len(plot.files), 'busiest file')} of {plot.files_total:,} traced: "
        f"{plot.points_total:,} requests moving {human_bytes(total)}{shown}"
    ]
    for k, f in enumerate(plot.files[:3]):
        sel = fidx == k
        if not sel.any():
            continue
        ops = sorted({o for o, m in zip(plot.op, sel.tolist(), strict=True) if m})
        parts.append(
            f"{_short_path(f.path)} ({_pct(f.bytes, total)} of the bytes, {' and '.join(ops)}) is accessed from offset "
            f"{human_bytes(float(off[sel].min()))} to {human_bytes(float(end[sel].max()))} between "
            f"{_secs(float(t[sel].min()))} and {_secs(float(t[sel].max()))}"
        )
    if len(plot.files) > 3:
        parts.append(f"{len(plot.files) - 3} more file(s) in the legend")
    return "; ".join(parts) + "."


# --- OSTs --------------------------------------------------------------------------------------------


def ost_svg(plot: OstPlot) -> str | None:
    """Bytes and I/O time per Lustre OST, bars over twice the mean marked."""
    n = len(plot.ost)
    if n == 0:
        return None
    slot = PW / n
    bw = max(slot * 0.8, 0.6)
    panel_h = 100.0
    body: list[str] = _legend(
        14, [("write", "bytes"), ("time", "I/O time"), ("over", "more than twice the OSTs' mean")]
    )
    top = 30.0
    nbytes = np.asarray(plot.bytes, dtype=np.float64)
    times = np.asarray(plot.time, dtype=np.float64)
    panels: list[tuple[str, np.ndarray, str]] = []
    if nbytes.sum() > 0:
        panels.append(("write", nbytes, "bytes"))
    if times.sum() > 0:
        panels.append(("time", times, "time"))
    if not panels:
        return None
    for cls, values, kind in panels:
        peak = float(values.max())
        sc = _bytes_scale(peak) if kind == "bytes" else _scale(peak, "I/O time (s)")
        hi = sc.hi
        body += _y_axis(top, panel_h, sc)
        mean = float(values.mean())
        for i, v in enumerate(values.tolist()):
            if v <= 0:
                continue
            bh = max(v / hi * panel_h, 1.0)
            over = n > 1 and v > 2 * mean
            body.append(
                f'<rect class="{"over" if over else cls}" x="{_f(LEFT + i * slot + (slot - bw) / 2)}" '
                f'y="{_f(top + panel_h - bh)}" width="{_f(bw)}" height="{_f(bh)}"/>'
            )
        body.append(f'<path class="axis" d="M{LEFT} {_f(top + panel_h)}h{PW}"/>')
        top += panel_h + 14
    top -= 14
    step = max(1, math.ceil(n / 16))
    for i in range(0, n, step):
        x = LEFT + (i + 0.5) * slot
        body.append(f'<text x="{_f(x)}" y="{_f(top + 15)}" text-anchor="middle">{e(plot.ost[i])}</text>')
    body.append(f'<text class="muted" x="{LEFT + PW / 2:.0f}" y="{_f(top + 31)}" text-anchor="middle">OST index</text>')
    return _svg(top + 40, _ost_label(plot, nbytes, times), body)


def _ost_label(plot: OstPlot, nbytes: np.ndarray, times: np.ndarray) -> str:
    n = len(plot.ost)
    total = float(nbytes.sum())
    io_time = _secs(float(times.sum()))
    if n == 1:
        return f"One Lustre OST, OST {plot.ost[0]}, holds all {human_bytes(total)} and {io_time} of I/O time."
    parts = [f"{n:,} Lustre OSTs hold {human_bytes(total)} and {io_time} of I/O time"]
    if total > 0:
        b = int(np.argmax(nbytes))
        mean = total / n
        over = int((nbytes > 2 * mean).sum())
        parts.append(
            f"the busiest, OST {plot.ost[b]}, holds {_pct(float(nbytes[b]), total)} of the bytes "
            f"({float(nbytes[b]) / mean:.1f} times the mean)"
        )
        parts.append(f"{over:,} OST(s) hold more than twice the mean" if over else "none holds twice the mean")
    return "; ".join(parts) + "."


# --- phases ------------------------------------------------------------------------------------------


def phases_svg(plot: PhasesPlot) -> str | None:
    """I/O phases on the time axis, bar height the bytes each moved; the tail where the last rank worked
    alone after all the others had finished is marked."""
    n = len(plot.start)
    if n == 0:
        return None
    nbytes = np.asarray(plot.bytes, dtype=np.float64)
    keep = np.arange(n)
    if n > PHASES_SHOWN:  # the phases moving the most bytes, in time order (ties by position)
        keep = np.sort(np.lexsort((np.arange(n), -nbytes))[:PHASES_SHOWN])
    t_hi = max(max(plot.end), 1e-9)
    sc = _bytes_scale(float(nbytes.max()))
    hi = sc.hi
    panel_h = 120.0
    top = 30.0
    body: list[str] = _legend(14, [("phase", "I/O phase (height: bytes moved)"), ("alone", "last rank working alone")])
    body += _y_axis(top, panel_h, sc)
    for i in keep.tolist():
        x0 = LEFT + plot.start[i] / t_hi * PW
        w = max((plot.end[i] - plot.start[i]) / t_hi * PW, 1.0)
        bh = max(plot.bytes[i] / hi * panel_h, 3.0)  # a phase moving little still shows
        y = top + panel_h - bh
        body.append(f'<rect class="phase" x="{_f(x0)}" y="{_f(y)}" width="{_f(w)}" height="{_f(bh)}"/>')
        alone = plot.alone[i]
        if alone > 0:
            a1 = LEFT + plot.last_end[i] / t_hi * PW
            aw = max(alone / t_hi * PW, 1.0)
            body.append(f'<rect class="alone" x="{_f(a1 - aw)}" y="{_f(y)}" width="{_f(aw)}" height="{_f(bh)}"/>')
    body += _x_axis(top + panel_h, 0.0, t_hi, "time since job start (s)", _num)
    return _svg(top + panel_h + 40, _phases_label(plot, nbytes, len(keep)), body)


def _phases_label(plot: PhasesPlot, nbytes: np.ndarray, shown: int) -> str:
    n = len(plot.start)
    total = float(nbytes.sum())
    big = int(np.argmax(nbytes))
    where = f"{_secs(plot.start[big])} and {_secs(plot.end[big])} on {_count(plot.ranks[big], 'rank')}"
    if n == 1:
        parts = [f"One I/O phase moves {human_bytes(total)} between {where}"]
    else:
        parts = [
            f"{plot.points_total:,} I/O phases between {_secs(min(plot.start))} and {_secs(max(plot.end))} "
            f"move {human_bytes(total)}" + (f" ({shown} with the most bytes drawn)" if shown < n else ""),
            f"the largest, phase {big + 1}, moves {_pct(float(nbytes[big]), total)} of it between {where}",
        ]
    worst = int(np.argmax(plot.alone))
    if plot.alone[worst] > 0:
        parts.append(
            f"at worst the last rank, rank {plot.last_rank[worst]}, works alone for {_secs(plot.alone[worst])} "
            f"at the end of phase {worst + 1}"
        )
    return "; ".join(parts) + "."


# --- all ---------------------------------------------------------------------------------------------


def figures(data: PlotData) -> list[Figure]:
    """The pictures the plot data allows, in reading order, each with its caption."""
    out: list[Figure] = []
    if data.timeline is not None and (svg := timeline_svg(data.timeline)) is not None:
        tl = data.timeline
        merged = (
            f" The trace's {tl.points_total:,} segments were merged into {tl.points_shown:,} bars "
            f"(gaps up to {human_seconds(tl.quantum)} closed) before drawing."
            if tl.quantum > 0
            else ""
        )
        out.append(
            Figure(
                "Timeline",
                svg,
                "When each rank read and wrote, from the DXT trace: writes in the top half of a rank's row, reads "
                "in the bottom half; bars closer than the picture's resolution are drawn as one." + merged,
            )
        )
    if data.heatmap is not None and (svg := heatmap_svg(data.heatmap)) is not None:
        hm = data.heatmap
        src = "Darshan's HEATMAP module" if hm.source == "HEATMAP" else "the DXT trace"
        notes = "".join(f" Note: {n}." for n in hm.notes)
        out.append(
            Figure(
                "Heatmap",
                svg,
                f"Bytes written and read per rank and time bin, from {src} ({hm.module}), on one logarithmic "
                "colour scale for both panels (under the picture); grey cells saw no I/O. Where there are too many "
                "ranks or bins for the picture, a cell adds up several." + notes,
            )
        )
    if data.transfer_sizes is not None and (svg := transfer_size_svg(data.transfer_sizes)) is not None:
        out.append(
            Figure(
                "Transfer sizes",
                svg,
                "Operations per access-size bin, counted over every DXT segment (not a sample). Many small "
                "transfers are the usual sign of I/O that is slower than it needs to be.",
            )
        )
    if data.spatiality is not None and (svg := spatiality_svg(data.spatiality)) is not None:
        sp = data.spatiality
        sampled = (
            f" {sp.points_shown:,} of the {sp.points_total:,} requests are drawn, sampled evenly per file."
            if sp.points_shown < sp.points_total
            else ""
        )
        out.append(
            Figure(
                "Spatiality",
                svg,
                "Where in each file the requests went and when, for the files that moved the most bytes (each at its "
                "top traced layer): a mark spans a request's bytes, from its offset up; a rising line is sequential "
                "access, scattered marks are random access." + sampled,
            )
        )
    if data.phases is not None and (svg := phases_svg(data.phases)) is not None:
        out.append(
            Figure(
                "I/O phases",
                svg,
                "Runs of I/O separated by idle gaps longer than "
                f"{human_seconds(data.phases.threshold)}, each file at its top traced layer; the marked tail is "
                "the time the last rank still worked after all others had finished the phase.",
            )
        )
    if data.osts is not None and (svg := ost_svg(data.osts)) is not None:
        out.append(
            Figure(
                "Lustre OSTs",
                svg,
                "Bytes and I/O time per object storage target, each file's share spread evenly over the OSTs its "
                "data reached; an OST far above the others is a hot spot every rank waits on.",
            )
        )
    return out


__all__ = [
    "PLOT_CSS",
    "Figure",
    "figures",
    "heatmap_svg",
    "nice_ticks",
    "ost_svg",
    "phases_svg",
    "spatiality_svg",
    "timeline_svg",
    "transfer_size_svg",
]
