"""DXT traces summarised while they stream in: bounded memory whatever the trace size.

A trace above the loader's segment budget is never held whole. Each chunk the reader sends
(whole records, about a million segments) is folded into accumulators and dropped:

- **per record and operation** (a record is one (file, rank) pair, far fewer than segments):
  operations, bytes, time in calls, first start, last end; the same for the segments each
  request check flags (small, misaligned, random, repeating), so per-rank and per-file views are
  sums over records, exact;
- **busy intervals**: the exact union of the segments' ``[start, end]``, kept as sorted disjoint
  intervals and merged chunk by chunk (the input of the phase rule); one union per group of
  records (see ``GROUPS``) so the analysis can take each file at its top traced layer;
- **spans**: a record's consecutive requests of one kind with gaps shorter than ``span_gap``
  (by default the phase rule's floor, so a span never crosses a phase boundary), each with its
  exact operations, bytes and busy time: phase and straggler statistics are sums over spans;
- **byte ranges** per (file, operation): the union of the accessed offsets, for bytes moved
  more than once (moved - distinct, exact);
- **a sample** of at most ``sample_cap`` segments (every k-th segment of the stream, k doubling
  as it fills: deterministic) for plots, which carry the exact totals beside it.

Memory is O(records + busy intervals + spans + sample), not O(segments); spans and intervals are
capped (above the cap, the smallest gaps are merged and ``coarsened`` says by how much), so
a pathological trace degrades in resolution, not in memory. Time is a few numpy passes per chunk
with no sort in the common case (each record's requests arrive in time order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from iodiag.ingest.trace import SEGMENT_DTYPE, Trace

FLAGS = ("small", "misaligned", "random", "repeat")
"""Per-segment tests whose segments are accumulated apart (T06, T07, T08 on DXT_POSIX; T05 on both)."""
GROUPS = ("mpiio", "posix_below", "posix_only")
"""Busy-interval unions: DXT_MPIIO; DXT_POSIX records of files with MPI-IO counters (the requests ROMIO
issues for MPI-IO calls); the other DXT_POSIX records."""
SMALL_BYTES = 1 << 20
"""Requests below this are small (the default of ``trace_small_bytes``)."""
SIZE_BIN_UPPER = np.array([100, 1024, 10240, 102400, 1 << 20, 4 << 20, 10 << 20, 100 << 20, 1 << 30], dtype=np.int64)
"""Darshan's access-size bins (inclusive upper bounds, the last bin open): the plots' exact size histogram."""
SPAN_CAP = 4_000_000
INTERVAL_CAP = 2_000_000
SAMPLE_CAP = 1 << 17


@dataclass(frozen=True)
class FlagStats:
    """Per record and operation (index ``2 * record + op``): the flagged segments' totals."""

    ops: np.ndarray
    bytes: np.ndarray
    time: np.ndarray
    first: np.ndarray
    last: np.ndarray


@dataclass(frozen=True)
class Spans:
    record: np.ndarray
    op: np.ndarray
    start: np.ndarray
    end: np.ndarray
    ops: np.ndarray
    bytes: np.ndarray
    busy: np.ndarray
    """Sum of the durations of the span's requests."""

    def __len__(self) -> int:
        return len(self.start)

    def take(self, sel: np.ndarray) -> Spans:
        return Spans(*(getattr(self, k)[sel] for k in Spans.__dataclass_fields__))


@dataclass(frozen=True)
class TraceSummary:
    """One DXT module, summarised (see the module docstring). Record arrays are indexed by record;
    per-(record, operation) arrays by ``2 * record + op``."""

    module: str
    segments: int
    records: int
    file_ids: np.ndarray
    """Darshan record id of each file index."""
    rec_file: np.ndarray
    rec_rank: np.ndarray
    rec_group: np.ndarray
    """Index into ``GROUPS`` per record."""
    ops: np.ndarray
    bytes: np.ndarray
    time: np.ndarray
    first: np.ndarray
    last: np.ndarray
    flags: Mapping[str, FlagStats]
    busy: Mapping[str, tuple[np.ndarray, np.ndarray]]
    """Busy intervals (start, end) per group in ``GROUPS`` that has records."""
    spans: Spans
    span_gap: float
    ranges: tuple[np.ndarray, np.ndarray, np.ndarray]
    """Union of accessed byte ranges: (file * 2 + op, start, end), sorted."""
    sample: Trace
    sample_stride: int
    """The sample holds every ``sample_stride``-th segment of the stream."""
    hostnames: Mapping[int, str] = field(default_factory=dict)
    small_bytes: int = SMALL_BYTES
    coarsened: float = 0.0
    """0, or the gap (seconds) under which busy intervals were merged to stay under the cap."""
    max_end: float = 0.0
    size_counts: np.ndarray = field(default_factory=lambda: np.zeros((2, len(SIZE_BIN_UPPER) + 1), np.int64))
    """Segments per (op, Darshan access-size bin), exact."""
    size_bytes: np.ndarray = field(default_factory=lambda: np.zeros((2, len(SIZE_BIN_UPPER) + 1), np.int64))

    def __len__(self) -> int:
        return self.segments


def union(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted disjoint intervals covering the given ones (touching intervals merge)."""
    if len(start) == 0:
        return np.empty(0), np.empty(0)
    order = np.argsort(start, kind="stable")
    s = start[order]
    e = np.maximum.accumulate(end[order])
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > e[:-1]
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, len(s) - 1]
    return s[first], e[last]


def _merge_small_gaps(s: np.ndarray, e: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Merge the smallest gaps until at most ``cap // 2`` intervals are left; returns the gap merged under."""
    gaps = s[1:] - e[:-1]
    keep = cap // 2
    thr = float(np.partition(gaps, len(gaps) - keep)[len(gaps) - keep])
    cut = np.r_[True, gaps > thr]
    first = np.flatnonzero(cut)
    last = np.r_[first[1:] - 1, len(s) - 1]
    return s[first], e[last], thr


def _grouped_cummax(values: np.ndarray, new_group: np.ndarray) -> np.ndarray:
    """Running maximum of int64 ``values``, restarted where ``new_group`` is True."""
    gid = np.cumsum(new_group) - 1
    ngroups = int(gid[-1]) + 1 if len(gid) else 0
    lo = int(values.min()) if len(values) else 0
    span = (int(values.max()) - lo + 1) if len(values) else 1
    if span * max(ngroups, 1) < (1 << 62):
        shifted = (values - lo) + gid * span
        out: np.ndarray = np.maximum.accumulate(shifted) - gid * span + lo
        return out
    out = np.empty_like(values)
    starts = np.flatnonzero(new_group)
    for a, b in zip(starts, np.r_[starts[1:], len(values)], strict=True):
        out[a:b] = np.maximum.accumulate(values[a:b])
    return out


class TraceStream:
    """Folds the reader's DXT chunks into a ``TraceSummary`` (same ``add`` as ``TraceBuilder``)."""

    def __init__(
        self,
        module: str,
        *,
        alignment: Mapping[int, int] | None = None,
        mpiio_files: np.ndarray | None = None,
        span_gap: float = 0.0,
        sample_cap: int = SAMPLE_CAP,
        span_cap: int = SPAN_CAP,
        interval_cap: int = INTERVAL_CAP,
    ) -> None:
        self.module = module
        self._posix = module == "DXT_POSIX"
        self._align = dict(alignment or {})
        self._mpiio_files = np.unique(np.asarray(mpiio_files if mpiio_files is not None else [], dtype=np.uint64))
        self._span_gap = max(float(span_gap), 0.0)
        self._sample_cap, self._span_cap, self._interval_cap = sample_cap, span_cap, interval_cap
        self._file_index: dict[int, int] = {}
        self._file_align: list[int] = []
        self._hosts: dict[int, str] = {}
        self._n = 0
        self._nrec = 0
        self._rec: dict[str, list[np.ndarray]] = {k: [] for k in ("file", "rank", "group")}
        self._acc: dict[str, list[np.ndarray]] = {k: [] for k in ("ops", "bytes", "time", "first", "last")}
        self._flag: dict[str, dict[str, list[np.ndarray]]] = {
            f: {k: [] for k in ("ops", "bytes", "time", "first", "last")} for f in FLAGS
        }
        self._busy: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._coarsened = 0.0
        self._spans: list[Spans] = []
        self._span_count = 0
        self._ranges = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64))
        self._stride = 1
        self._sample: dict[str, list[np.ndarray]] = {
            k: [] for k in ("rank", "file", "op", "offset", "length", "start", "end", "idx")
        }
        self._sample_n = 0
        self._max_end = -np.inf
        self._size_counts = np.zeros((2, len(SIZE_BIN_UPPER) + 1), dtype=np.int64)
        self._size_bytes = np.zeros((2, len(SIZE_BIN_UPPER) + 1), dtype=np.int64)

    # --- one chunk ------------------------------------------------------------------------------------

    def add(self, records: list[tuple[int, int, str, int, int]], segments: bytes | bytearray | memoryview) -> None:
        if not records:
            return
        raw = np.frombuffer(segments, dtype=SEGMENT_DTYPE)
        nrec = len(records)
        counts = np.fromiter((c for r in records for c in (r[3], r[4])), dtype=np.int64, count=2 * nrec)
        k = len(raw)
        if int(counts.sum()) != k:
            raise ValueError("DXT chunk: segment count does not match the records")
        files = np.empty(nrec, dtype=np.int32)
        ranks = np.empty(nrec, dtype=np.int32)
        for i, (rid, rank, host, _, _) in enumerate(records):
            rid = int(rid)
            fi = self._file_index.get(rid)
            if fi is None:
                fi = self._file_index[rid] = len(self._file_index)
                self._file_align.append(int(self._align.get(rid, 0)))
            files[i] = fi
            ranks[i] = rank
            self._hosts.setdefault(int(rank), host)
        if self._posix:
            file_ids = np.fromiter(self._file_index, dtype=np.uint64, count=len(self._file_index))
            below = np.isin(file_ids[files], self._mpiio_files)
            group = np.where(below, 1, 2).astype(np.int8)
        else:
            group = np.zeros(nrec, dtype=np.int8)
        self._rec["file"].append(files)
        self._rec["rank"].append(ranks)
        self._rec["group"].append(group)
        ng = 2 * nrec
        if k == 0:
            self._empty_chunk(counts, ng)
            self._nrec += nrec
            return

        start = np.ascontiguousarray(raw["start"])
        end = np.ascontiguousarray(raw["end"])
        off = np.ascontiguousarray(raw["offset"])
        ln = np.ascontiguousarray(raw["length"])
        # Each (record, op) group is a contiguous run of the chunk: sums are reduceat over the groups'
        # first positions (exact in int64, and no per-segment group column).
        ne = np.flatnonzero(counts)
        bounds = np.cumsum(counts)
        gstart = (bounds - counts)[ne]
        same = np.ones(k - 1, dtype=bool)
        same[gstart[1:] - 1] = False
        dur = end - start
        self._max_end = max(self._max_end, float(end.max()))

        def gsum(x: np.ndarray, dtype: type = np.float64) -> np.ndarray:
            out: np.ndarray = np.zeros(ng, dtype=dtype)
            out[ne] = np.add.reduceat(x, gstart)
            return out

        def gext(fn: np.ufunc, x: np.ndarray, fill: float) -> np.ndarray:
            out = np.full(ng, fill)
            out[ne] = fn.reduceat(x, gstart)
            return out

        def group_of(pos: np.ndarray) -> np.ndarray:
            g: np.ndarray = np.searchsorted(bounds, pos, side="right")
            return g

        self._acc["ops"].append(counts)
        self._acc["bytes"].append(gsum(ln, np.int64))
        self._acc["time"].append(gsum(dur))
        self._acc["first"].append(gext(np.minimum, start, np.inf))
        self._acc["last"].append(gext(np.maximum, end, -np.inf))

        masks: dict[str, np.ndarray | None] = dict.fromkeys(FLAGS)
        per_rec = counts[0::2] + counts[1::2]
        if self._posix:
            masks["small"] = (ln < SMALL_BYTES) & (ln > 0)
            masks["misaligned"] = self._misaligned(files, per_rec, off, ln)
            rnd = np.zeros(k, dtype=bool)
            rnd[1:] = same & (off[1:] < (off + ln)[:-1])
            masks["random"] = rnd
        masks["repeat"] = self._repeats(files, per_rec, group_of, same, off, ln)
        for name, mask in masks.items():
            store = self._flag[name]
            if mask is None or not mask.any():
                for key in ("ops", "bytes", "time"):
                    store[key].append(np.zeros(ng))
                store["first"].append(np.full(ng, np.inf))
                store["last"].append(np.full(ng, -np.inf))
                continue
            store["ops"].append(gsum(mask.astype(np.int64), np.int64))
            store["bytes"].append(gsum(np.where(mask, ln, 0), np.int64))
            store["time"].append(gsum(np.where(mask, dur, 0.0)))
            store["first"].append(gext(np.minimum, np.where(mask, start, np.inf), np.inf))
            store["last"].append(gext(np.maximum, np.where(mask, end, -np.inf), -np.inf))

        # Runs: consecutive requests of one (record, op) that touch or overlap. A chain of overlapping
        # intervals is connected, so each run's [min start, max end] is exactly the union of its requests,
        # in whatever order they come; the chunk's union is the union of its runs.
        gap = start[1:] - end[:-1]
        cont = np.zeros(k, dtype=bool)
        cont[1:] = same & (gap <= 0)
        run_first = np.flatnonzero(~cont)
        run_lo = np.minimum.reduceat(start, run_first)
        run_hi = np.maximum.reduceat(end, run_first)
        run_group = group[group_of(run_first) // 2]
        for g in np.unique(run_group).tolist():
            sel = run_group == g
            self._add_busy(int(g), run_lo[sel], run_hi[sel])

        # Spans: the same with gaps below span_gap allowed inside.
        if self._span_gap > 0:
            cont[1:] = same & (gap < self._span_gap)
            span_first = np.flatnonzero(~cont)
        else:
            span_first = run_first
        sg = group_of(span_first)
        spans = Spans(
            record=(self._nrec + sg // 2).astype(np.int64),
            op=(sg & 1).astype(np.int8),
            start=np.minimum.reduceat(start, span_first),
            end=np.maximum.reduceat(end, span_first),
            ops=np.diff(np.r_[span_first, k]).astype(np.int64),
            bytes=np.add.reduceat(ln, span_first),
            busy=np.add.reduceat(dur, span_first),
        )
        self._spans.append(spans)
        self._span_count += len(spans)
        if self._span_count > self._span_cap:
            self._coarsen_spans()

        nb = len(SIZE_BIN_UPPER) + 1
        seg_op = np.repeat(np.tile(np.array([0, nb], dtype=np.int64), nrec), counts)
        size_key = seg_op + np.searchsorted(SIZE_BIN_UPPER, ln, side="left")
        self._size_counts += np.bincount(size_key, minlength=2 * nb).reshape(2, nb)
        # float64 sums are exact while a chunk's bytes per bin stay under 2**53 (9 PB): always, in practice.
        self._size_bytes += np.rint(np.bincount(size_key, weights=ln, minlength=2 * nb)).astype(np.int64).reshape(2, nb)

        self._add_sample(files, ranks, per_rec, group_of, off, ln, start, end)
        self._n += k
        self._nrec += nrec

    def _empty_chunk(self, counts: np.ndarray, ng: int) -> None:
        self._acc["ops"].append(counts)
        for key in ("bytes", "time"):
            self._acc[key].append(np.zeros(ng))
        self._acc["first"].append(np.full(ng, np.inf))
        self._acc["last"].append(np.full(ng, -np.inf))
        for store in self._flag.values():
            for key in ("ops", "bytes", "time"):
                store[key].append(np.zeros(ng))
            store["first"].append(np.full(ng, np.inf))
            store["last"].append(np.full(ng, -np.inf))

    def _misaligned(self, files: np.ndarray, per_rec: np.ndarray, off: np.ndarray, ln: np.ndarray) -> np.ndarray:
        """Offsets that are not a multiple of their file's alignment (files of unknown alignment never are)."""
        rec_align = np.asarray(self._file_align, dtype=np.int64)[files]
        if not (rec_align > 1).any():
            return np.zeros(len(off), dtype=bool)
        values = np.unique(rec_align)
        if len(values) == 1 and int(values[0]) & (int(values[0]) - 1) == 0:
            # One power-of-two alignment for the whole chunk (the usual case): a mask, no per-segment column.
            single: np.ndarray = ((off & (int(values[0]) - 1)) != 0) & (ln > 0)
            return single
        a = np.repeat(rec_align, per_rec)
        known = a > 1
        if bool(np.all((rec_align <= 1) | ((rec_align & (rec_align - 1)) == 0))):
            # Powers of two (block and stripe sizes, nearly always): a mask instead of a division.
            out: np.ndarray = known & ((off & np.maximum(a - 1, 0)) != 0)
        else:
            out = np.zeros(len(off), dtype=bool)
            out[known] = (off[known] % a[known]) != 0
        return out & (ln > 0)

    def _add_busy(self, group: int, lo: np.ndarray, hi: np.ndarray) -> None:
        old = self._busy.get(group)
        if old is not None:
            lo, hi = np.concatenate([old[0], lo]), np.concatenate([old[1], hi])
        s, e = union(lo, hi)
        if len(s) > self._interval_cap:
            s, e, thr = _merge_small_gaps(s, e, self._interval_cap)
            self._coarsened = max(self._coarsened, thr)
        self._busy[group] = (s, e)

    def _coarsen_spans(self) -> None:
        """Too many spans: merge each record's adjacent spans across the smallest gaps (resolution, not memory)."""
        sp = self._all_spans()
        key = sp.record * 2 + sp.op
        gaps = np.r_[np.inf, sp.start[1:] - sp.end[:-1]]
        gaps[np.r_[True, key[1:] != key[:-1]]] = np.inf
        finite = gaps[np.isfinite(gaps)]
        keep = self._span_cap // 2
        if len(finite) > keep:
            thr = float(np.partition(finite, len(finite) - keep)[len(finite) - keep])
            self._span_gap = max(self._span_gap, thr)
        first = np.flatnonzero(~(gaps <= self._span_gap))  # <=: equal gaps must merge too, or nothing might
        merged = Spans(
            record=sp.record[first],
            op=sp.op[first],
            start=np.minimum.reduceat(sp.start, first),
            end=np.maximum.reduceat(sp.end, first),
            ops=np.add.reduceat(sp.ops, first),
            bytes=np.add.reduceat(sp.bytes, first),
            busy=np.add.reduceat(sp.busy, first),
        )
        self._spans = [merged]
        self._span_count = len(merged)

    def _all_spans(self) -> Spans:
        if len(self._spans) == 1:
            return self._spans[0]
        return Spans(*(np.concatenate([getattr(s, k) for s in self._spans]) for k in Spans.__dataclass_fields__))

    def _repeats(
        self,
        files: np.ndarray,
        per_rec: np.ndarray,
        group_of: Callable[[np.ndarray], np.ndarray],
        same: np.ndarray,
        off: np.ndarray,
        ln: np.ndarray,
    ) -> np.ndarray:
        """Segments whose bytes were already moved in the same direction on the same file: inside their
        (record, op) in offset order (as the in-memory view), or by any earlier run of the (file, op)."""
        k = len(off)
        end = off + ln
        order: np.ndarray | None = None
        if k > 1 and not bool(np.all(~same | (off[1:] >= end[:-1]))):
            # Overlaps or out-of-order offsets inside a group: the in-memory rule, in offset order.
            gid = group_of(np.arange(k))
            order = np.lexsort((off, gid))
            off, ln, end = off[order], ln[order], end[order]
            same = gid[order][1:] == gid[order][:-1]
            new_group = np.r_[True, ~same]
            run = _grouped_cummax(end, new_group)
            prev = np.empty_like(run)
            prev[0] = np.iinfo(np.int64).min
            prev[1:] = run[:-1]
            prev[new_group] = np.iinfo(np.int64).min
            flag = off < prev
            run_start = np.flatnonzero(new_group | (off > prev))
            r_hi = np.maximum.reduceat(run, run_start)
            r_group = gid[order][run_start]
        else:
            # The common case (each record's requests in offset order, none overlapping the one before):
            # nothing repeats inside a group, and a run ends at each hole.
            flag = np.zeros(k, dtype=bool)
            brk = np.ones(k, dtype=bool)
            brk[1:] = ~same | (off[1:] > end[:-1])
            run_start = np.flatnonzero(brk)
            r_hi = end[np.r_[run_start[1:] - 1, k - 1]]
            r_group = group_of(run_start)
        r_lo = off[run_start]
        r_key = files.astype(np.int64)[r_group // 2] * 2 + (r_group & 1)
        g_key, g_lo, g_hi = self._ranges
        n_old = len(g_key)
        all_key = np.concatenate([g_key, r_key])
        all_lo = np.concatenate([g_lo, r_lo])
        all_hi = np.concatenate([g_hi, r_hi])
        o = np.lexsort((np.arange(len(all_key)), all_lo, all_key))
        sk, slo, shi = all_key[o], all_lo[o], all_hi[o]
        knew = np.r_[True, sk[1:] != sk[:-1]]
        cm = _grouped_cummax(shi, knew)
        pv = np.empty_like(cm)
        pv[0] = np.iinfo(np.int64).min
        pv[1:] = cm[:-1]
        pv[knew] = np.iinfo(np.int64).min
        run_flag = np.zeros(len(all_key), dtype=bool)
        run_flag[o] = slo < pv
        run_flag = run_flag[n_old:]
        first = np.flatnonzero(knew | (slo > pv))
        self._ranges = (sk[first], slo[first], np.maximum.reduceat(cm, first))
        if run_flag.any():
            marker = np.zeros(k, dtype=bool)
            marker[run_start] = True
            flag |= run_flag[np.cumsum(marker) - 1]
        if order is None:
            return flag
        out = np.zeros(k, dtype=bool)
        out[order] = flag
        return out

    def _add_sample(
        self,
        files: np.ndarray,
        ranks: np.ndarray,
        per_rec: np.ndarray,
        group_of: Callable[[np.ndarray], np.ndarray],
        off: np.ndarray,
        ln: np.ndarray,
        start: np.ndarray,
        end: np.ndarray,
    ) -> None:
        k = len(off)
        # Every stride-th segment of the stream, the stride doubling (and the sample thinning to match)
        # whenever the sample outgrows its cap: deterministic, and no work per segment.
        while k // self._stride > self._sample_cap:
            self._thin()
        pick = np.arange((-self._n) % self._stride, k, self._stride, dtype=np.int64)
        rec = np.searchsorted(np.cumsum(per_rec), pick, side="right")
        cols = {
            "rank": ranks[rec],
            "file": files[rec],
            "op": (group_of(pick) & 1).astype(np.int8),
            "offset": off[pick],
            "length": ln[pick],
            "start": start[pick],
            "end": end[pick],
            "idx": pick + self._n,
        }
        for c, v in cols.items():
            self._sample[c].append(v)
        self._sample_n += len(pick)
        while self._sample_n > self._sample_cap:
            self._thin()

    def _thin(self) -> None:
        self._stride *= 2
        if not self._sample_n:
            return
        joined = {c: np.concatenate(v) for c, v in self._sample.items()}
        keep = joined["idx"] % self._stride == 0
        self._sample = {c: [v[keep]] for c, v in joined.items()}
        self._sample_n = int(keep.sum())

    # --- the summary --------------------------------------------------------------------------------

    def build(self) -> TraceSummary:
        file_ids = np.fromiter(self._file_index, dtype=np.uint64, count=len(self._file_index))

        def cat(parts: list[np.ndarray], dtype: type | None = None) -> np.ndarray:
            out = np.concatenate(parts) if parts else np.empty(0)
            return out.astype(dtype) if dtype is not None else out

        flags = {
            f: FlagStats(
                ops=np.rint(cat(s["ops"])).astype(np.int64),
                bytes=cat(s["bytes"], np.int64),
                time=cat(s["time"]),
                first=cat(s["first"]),
                last=cat(s["last"]),
            )
            for f, s in self._flag.items()
        }
        smp = {c: cat(v) for c, v in self._sample.items()}
        sample = Trace(
            module=self.module,
            rank=smp["rank"].astype(np.int32),
            file=smp["file"].astype(np.int32),
            op=smp["op"].astype(np.int8),
            offset=smp["offset"].astype(np.int64),
            length=smp["length"].astype(np.int64),
            start=smp["start"].astype(np.float64),
            end=smp["end"].astype(np.float64),
            file_ids=file_ids,
            hostnames=dict(self._hosts),
            records=self._nrec,
        )
        spans = self._all_spans() if self._spans else Spans(*(np.empty(0) for _ in Spans.__dataclass_fields__))
        return TraceSummary(
            module=self.module,
            segments=self._n,
            records=self._nrec,
            file_ids=file_ids,
            rec_file=cat(self._rec["file"], np.int32),
            rec_rank=cat(self._rec["rank"], np.int32),
            rec_group=cat(self._rec["group"], np.int8),
            ops=cat(self._acc["ops"], np.int64),
            bytes=cat(self._acc["bytes"], np.int64),
            time=cat(self._acc["time"]),
            first=cat(self._acc["first"]),
            last=cat(self._acc["last"]),
            flags=flags,
            busy={GROUPS[g]: v for g, v in sorted(self._busy.items())},
            spans=spans,
            span_gap=self._span_gap,
            ranges=self._ranges,
            sample=sample,
            sample_stride=self._stride,
            hostnames=dict(self._hosts),
            coarsened=self._coarsened,
            max_end=float(self._max_end) if self._n else 0.0,
            size_counts=self._size_counts.copy(),
            size_bytes=self._size_bytes.copy(),
        )


__all__ = ["FLAGS", "GROUPS", "SIZE_BIN_UPPER", "FlagStats", "Spans", "TraceStream", "TraceSummary", "union"]
