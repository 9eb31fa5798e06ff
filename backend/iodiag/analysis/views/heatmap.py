"""Derived views of Darshan's HEATMAP module, all in numpy: per-module job timelines, I/O phases,
bytes per rank and phase.

The HEATMAP module records, per rank and per instrumented module (POSIX, MPI-IO, STDIO), the bytes
read and written in fixed time bins since the job's start (``bin_width`` seconds each). It is all
that many production logs carry about *when* I/O happened: no request sizes, offsets or files, and
no timing finer than a bin. DXT traces (``trace_views``) answer the same questions exactly.

Conventions mirror ``trace_views``: a *busy interval* is a maximal run of consecutive bins in which
some rank moved bytes; a *phase* is a run of busy intervals separated by gaps shorter than the gap
threshold (DXT Explorer's rule: mean plus one standard deviation of all gaps, with a floor).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iodiag.analysis.views.trace import gap_threshold
from iodiag.ingest import JobProfile

HEATMAP = "HEATMAP"


@dataclass(frozen=True)
class Heatmap:
    """Bytes per rank and time bin of one module (or of several modules added together)."""

    module: str
    """``POSIX``, ``MPIIO``, ``STDIO``, or a sum such as ``POSIX+STDIO``."""
    bin_width: float
    ranks: np.ndarray
    """Ranks with a heatmap record, ascending (int64)."""
    write: np.ndarray
    """Bytes written, shape (len(ranks), n_bins), int64; bin ``i`` covers ``[i, i+1) * bin_width``."""
    read: np.ndarray

    @property
    def n_bins(self) -> int:
        return int(self.write.shape[1])

    @property
    def total(self) -> np.ndarray:
        t: np.ndarray = self.write + self.read
        return t

    def timeline(self) -> np.ndarray:
        """Bytes (read + written) per bin, summed over ranks."""
        t: np.ndarray = self.total.sum(axis=0)
        return t

    @property
    def bytes(self) -> int:
        return int(self.write.sum() + self.read.sum())


def _rebin(bins: np.ndarray, width: float, to_width: float, n: int) -> np.ndarray:
    """Bins of ``width`` added into ``n`` bins of ``to_width`` (a multiple of ``width`` in Darshan)."""
    out = np.zeros(n, dtype=np.int64)
    if len(bins) == 0:
        return out
    if width == to_width:
        out[: len(bins)] = bins[:n]
        return out
    idx = np.floor(np.arange(len(bins)) * (width / to_width) + 1e-9).astype(np.int64)
    np.add.at(out, np.minimum(idx, n - 1), bins.astype(np.int64))
    return out


def heatmaps(profile: JobProfile) -> dict[str, Heatmap]:
    """One ``Heatmap`` per module found in the profile's HEATMAP table (empty without one).

    Ranks normally share one bin width; should a record carry a narrower one, its bins are added
    into the module's widest bins.
    """
    table = profile.table(HEATMAP)
    if table is None or len(table) == 0:
        return {}
    ids = table["id"].astype(np.uint64)
    ranks = table["rank"].astype(np.int64)
    widths = table["bin_width"].astype(np.float64)
    wbins = table["write_bins"]
    rbins = table["read_bins"]
    out: dict[str, Heatmap] = {}
    for hid in np.unique(ids):
        rows = np.flatnonzero(ids == hid)
        name = profile.names.get(int(hid), f"heatmap:{int(hid):#x}").removeprefix("heatmap:")
        valid = rows[widths[rows] > 0]
        if len(valid) == 0:
            continue
        width = float(widths[valid].max())
        n = max(int(np.ceil(len(wbins[i]) * widths[i] / width - 1e-9)) for i in valid)
        n = max(n, 1)
        uranks, inv = np.unique(ranks[valid], return_inverse=True)
        write = np.zeros((len(uranks), n), dtype=np.int64)
        read = np.zeros((len(uranks), n), dtype=np.int64)
        for row, r in zip(valid, inv, strict=True):
            write[r] += _rebin(np.asarray(wbins[row], dtype=np.int64), float(widths[row]), width, n)
            read[r] += _rebin(np.asarray(rbins[row], dtype=np.int64), float(widths[row]), width, n)
        out[name] = Heatmap(name, width, uranks.astype(np.int64), write, read)
    return out


def combine(parts: list[Heatmap]) -> Heatmap | None:
    """The sum of several modules' heatmaps on a common grid (the widest bin width)."""
    parts = [p for p in parts if p.n_bins > 0]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    width = max(p.bin_width for p in parts)
    n = max(int(np.ceil(p.n_bins * p.bin_width / width - 1e-9)) for p in parts)
    ranks = np.unique(np.concatenate([p.ranks for p in parts]))
    write = np.zeros((len(ranks), n), dtype=np.int64)
    read = np.zeros((len(ranks), n), dtype=np.int64)
    for p in parts:
        rows = np.searchsorted(ranks, p.ranks)
        for i, r in enumerate(rows):
            write[r] += _rebin(p.write[i], p.bin_width, width, n)
            read[r] += _rebin(p.read[i], p.bin_width, width, n)
    return Heatmap("+".join(p.module for p in parts), width, ranks, write, read)


def job_heatmap(maps: dict[str, Heatmap]) -> Heatmap | None:
    """The job's file I/O over time: POSIX (which holds the I/O MPI-IO issues under it) plus STDIO;
    MPI-IO plus STDIO when there is no POSIX heatmap. Never MPI-IO and POSIX together (double count)."""
    base = maps.get("POSIX") or maps.get("MPIIO")
    return combine([m for m in (base, maps.get("STDIO")) if m is not None])


def top_heatmap(maps: dict[str, Heatmap]) -> Heatmap | None:
    """Bytes per rank as the application moved them: MPI-IO plus STDIO when MPI-IO moved bytes, else
    POSIX plus STDIO. With collective buffering only aggregators issue POSIX I/O, so comparing
    ranks at the POSIX layer would blame the aggregators for the library's work."""
    mpi = maps.get("MPIIO")
    base = mpi if mpi is not None and mpi.bytes > 0 else maps.get("POSIX") or mpi
    return combine([m for m in (base, maps.get("STDIO")) if m is not None])


# --- phases -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeatmapPhases:
    first_bin: np.ndarray
    last_bin: np.ndarray
    """Inclusive bin range of each phase."""
    start: np.ndarray
    end: np.ndarray
    """Seconds since job start (bin edges; ``end`` clipped to the run time when given)."""
    read: np.ndarray
    write: np.ndarray
    rank_bytes: np.ndarray
    """Bytes (read + written) per rank (rows in ``Heatmap.ranks`` order) and phase: (n_ranks, n_phases)."""
    threshold: float
    """Gaps (seconds) shorter than this were merged into phases."""

    def __len__(self) -> int:
        return len(self.start)

    @property
    def bytes(self) -> np.ndarray:
        b: np.ndarray = self.read + self.write
        return b

    @property
    def duration(self) -> np.ndarray:
        d: np.ndarray = self.end - self.start
        return d


def busy_runs(active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and last (inclusive) index of each run of consecutive True values."""
    a = np.r_[False, active.astype(bool), False].astype(np.int8)
    d = np.diff(a)
    return np.flatnonzero(d == 1), np.flatnonzero(d == -1) - 1


def phases(hm: Heatmap, min_gap: float = 0.0, runtime: float | None = None) -> HeatmapPhases:
    """I/O phases of a heatmap: busy bins, merged across gaps below mean + one std (and ``min_gap`` s)."""
    first, last = busy_runs(hm.timeline() > 0)
    w = hm.bin_width
    if len(first) == 0:
        z = np.empty(0, dtype=np.int64)
        return HeatmapPhases(z, z, z.astype(float), z.astype(float), z, z, np.zeros((len(hm.ranks), 0), np.int64), 0.0)
    gaps = (first[1:] - last[:-1] - 1) * w
    thr = gap_threshold(gaps, min_gap)
    cut = np.r_[True, gaps >= thr]
    pf = first[cut]
    pl = np.r_[last[np.flatnonzero(cut)[1:] - 1], last[-1]]
    start = pf * w
    end = (pl + 1) * w
    if runtime is not None and runtime > 0:
        end = np.where(end > runtime, np.maximum(runtime, start), end)
    # Bytes per phase: cumulative sums over bins, differenced at the phase edges.
    cw = np.concatenate([np.zeros((len(hm.ranks), 1), np.int64), np.cumsum(hm.write, axis=1)], axis=1)
    cr = np.concatenate([np.zeros((len(hm.ranks), 1), np.int64), np.cumsum(hm.read, axis=1)], axis=1)
    rw = cw[:, pl + 1] - cw[:, pf]
    rr = cr[:, pl + 1] - cr[:, pf]
    return HeatmapPhases(
        first_bin=pf.astype(np.int64),
        last_bin=pl.astype(np.int64),
        start=start.astype(np.float64),
        end=end.astype(np.float64),
        read=rr.sum(axis=0).astype(np.int64),
        write=rw.sum(axis=0).astype(np.int64),
        rank_bytes=(rw + rr).astype(np.int64),
        threshold=float(thr),
    )


# --- per rank -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PhaseImbalance:
    """Ranks above mean + one std of the bytes moved in one phase (ranks with bytes in it only)."""

    phase: int
    ranks: np.ndarray
    """Ranks that moved bytes in the phase."""
    bytes: np.ndarray
    mean: float
    std: float
    over: np.ndarray
    """Indices into ``ranks`` of the heavy ranks, most bytes first."""


def phase_imbalance(hm: Heatmap, ph: HeatmapPhases, phase: int, margin: float) -> PhaseImbalance:
    """Ranks whose bytes in ``phase`` exceed both the mean + one standard deviation and
    ``(1 + margin)`` times the mean (T03's rule; the margin keeps jitter out)."""
    col = ph.rank_bytes[:, phase]
    active = col > 0
    ranks, v = hm.ranks[active], col[active]
    if len(v) == 0:
        return PhaseImbalance(phase, ranks, v, 0.0, 0.0, np.empty(0, np.int64))
    f = v.astype(np.float64)
    mean, std = float(f.mean()), float(f.std())
    over = np.flatnonzero((f > mean + std) & (f > (1 + margin) * mean))
    over = over[np.argsort(-v[over], kind="stable")]
    return PhaseImbalance(phase, ranks, v, mean, std, over)


def rank_bytes(hm: Heatmap) -> np.ndarray:
    """Bytes (read + written) per rank over the whole run, in ``hm.ranks`` order."""
    b: np.ndarray = hm.total.sum(axis=1)
    return b
