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

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from iodiag.ingest.trace import READ, SEGMENT_DTYPE, WRITE, Trace

FLAGS = ("small", "misaligned", "random", "repeat")
"""Per-segment tests whose segments are accumulated apart (T06, T07, T08 on DXT_POSIX; T05 on both)."""
GROUPS = ("mpiio", "posix_below", "posix_only")
"""Busy-interval unions: DXT_MPIIO; DXT_POSIX records of files with MPI-IO counters (the requests ROMIO
issues for MPI-IO calls); the other DXT_POSIX records."""
SMALL_BYTES = 1 << 20
"""Requests below this are small (the default of ``trace_small_bytes``)."""
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
        file_ids = np.fromiter(self._file_index, dtype=np.uint64, count=len(self._file_index))
        if self._posix:
            below = np.isin(file_ids[files], self._mpiio_files)
            group = np.where(below, 1, 2).astype(np.int8)
        else:
            group = np.zeros(nrec, dtype=np.int8)
        self._rec["file"].append(files)
        self._rec["rank"].append(ranks)
        self._rec["group"].append(group)

        start = np.ascontiguousarray(raw["start"])
        end = np.ascontiguousarray(raw["end"])
        off = np.ascontiguousarray(raw["offset"])
        ln = np.ascontiguousarray(raw["length"])
        ng = 2 * nrec
        gid = np.repeat(np.arange(ng, dtype=np.int64), counts)
        nonempty = np.flatnonzero(counts)
        gstart = np.r_[0, np.cumsum(counts)[:-1]][nonempty]
        same = gid[1:] == gid[:-1]
        dur = end - start
        if k:
            self._max_end = max(self._max_end, float(end.max()))

        self._acc["ops"].append(counts)
        self._acc["bytes"].append(self._exact(gid, ln, ng))
        self._acc["time"].append(np.bincount(gid, weights=dur, minlength=ng))
        self._acc["first"].append(self._reduce(np.minimum, start, gstart, nonempty, ng, np.inf))
        self._acc["last"].append(self._reduce(np.maximum, end, gstart, nonempty, ng, -np.inf))

        masks: dict[str, np.ndarray | None] = dict.fromkeys(FLAGS)
        if self._posix:
            masks["small"] = (ln < SMALL_BYTES) & (ln > 0)
            seg_align = np.repeat(np.asarray(self._file_align, dtype=np.int64)[files], counts[0::2] + counts[1::2])
            known = seg_align > 1
            mis = np.zeros(k, dtype=bool)
            if known.any():
                mis[known] = (off[known] % seg_align[known]) != 0
            masks["misaligned"] = mis & (ln > 0)
            rnd = np.zeros(k, dtype=bool)
            if k > 1:
                rnd[1:] = same & (off[1:] < (off + ln)[:-1])
            masks["random"] = rnd
        seg_file = np.repeat(files.astype(np.int64), counts[0::2] + counts[1::2])
        masks["repeat"] = self._repeats(seg_file * 2 + (gid & 1), gid, same, off, ln)
        for name, mask in masks.items():
            store = self._flag[name]
            if mask is None or not mask.any():
                for key in ("ops", "bytes", "time"):
                    store[key].append(np.zeros(ng))
                store["first"].append(np.full(ng, np.inf))
                store["last"].append(np.full(ng, -np.inf))
                continue
            store["ops"].append(np.bincount(gid[mask], minlength=ng).astype(np.float64))
            store["bytes"].append(self._exact(gid[mask], ln[mask], ng))
            store["time"].append(np.bincount(gid[mask], weights=dur[mask], minlength=ng))
            store["first"].append(self._reduce(np.minimum, np.where(mask, start, np.inf), gstart, nonempty, ng, np.inf))
            store["last"].append(self._reduce(np.maximum, np.where(mask, end, -np.inf), gstart, nonempty, ng, -np.inf))

        # Runs: consecutive requests of one (record, op) that touch or overlap. A chain of overlapping
        # intervals is connected, so each run's [min start, max end] is exactly the union of its requests,
        # in whatever order they come; the chunk's union is the union of its runs.
        cont = np.zeros(k, dtype=bool)
        if k > 1:
            gap = start[1:] - end[:-1]
            cont[1:] = same & (gap <= 0)
        run_first = np.flatnonzero(~cont)
        run_lo = np.minimum.reduceat(start, run_first)
        run_hi = np.maximum.reduceat(end, run_first)
        run_group = group[gid[run_first] // 2]
        for g in np.unique(run_group).tolist():
            sel = run_group == g
            self._add_busy(int(g), run_lo[sel], run_hi[sel])

        # Spans: the same with gaps below span_gap allowed inside.
        if self._span_gap > 0 and k > 1:
            cont[1:] = same & (gap < self._span_gap)
            span_first = np.flatnonzero(~cont)
        else:
            span_first = run_first
        sg = gid[span_first]
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

        self._add_sample(files, ranks, counts, gid, off, ln, start, end)
        self._n += k
        self._nrec += nrec

    @staticmethod
    def _exact(key: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
        # bincount adds in float64: split into low and high bits so sums of large byte counts stay exact.
        lo = np.bincount(key, weights=values & 0xFFFFF, minlength=n)
        hi = np.bincount(key, weights=values >> 20, minlength=n)
        out: np.ndarray = np.rint(hi).astype(np.int64) * (1 << 20) + np.rint(lo).astype(np.int64)
        return out

    @staticmethod
    def _reduce(
        fn: np.ufunc, x: np.ndarray, gstart: np.ndarray, nonempty: np.ndarray, n: int, fill: float
    ) -> np.ndarray:
        out = np.full(n, fill)
        if len(gstart):
            out[nonempty] = fn.reduceat(x, gstart)
        return out

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
        first = np.flatnonzero(~(gaps < self._span_gap))
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
        self, key: np.ndarray, gid: np.ndarray, same: np.ndarray, off: np.ndarray, ln: np.ndarray
    ) -> np.ndarray:
        """Segments whose bytes were already moved in the same direction on the same file: inside their
        (record, op) in offset order (as the in-memory view), or by any earlier run of the (file, op)."""
        k = len(off)
        if k == 0:
            return np.zeros(0, dtype=bool)
        order: np.ndarray | None = None
        if k > 1 and not bool(np.all(~same | (off[1:] >= off[:-1]))):
            order = np.lexsort((off, gid))
            key, gid, off, ln = key[order], gid[order], off[order], ln[order]
            same = gid[1:] == gid[:-1]
        end = off + ln
        new_group = np.r_[True, ~same]
        run = _grouped_cummax(end, new_group)
        prev = np.empty_like(run)
        prev[0] = np.iinfo(np.int64).min
        prev[1:] = run[:-1]
        prev[new_group] = np.iinfo(np.int64).min
        flag = off < prev
        # Runs of the union inside each group, then against earlier runs of the same (file, op).
        run_start = np.flatnonzero(new_group | (off > prev))
        r_lo = off[run_start]
        r_hi = np.maximum.reduceat(run, run_start)
        r_key = key[run_start]
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
        overl = slo < pv
        run_flag = np.zeros(len(all_key), dtype=bool)
        run_flag[o] = overl
        run_flag = run_flag[n_old:]
        start_new = knew | (slo > pv)
        first = np.flatnonzero(start_new)
        self._ranges = (sk[first], slo[first], np.maximum.reduceat(cm, first))
        marker = np.zeros(k, dtype=bool)
        marker[run_start] = True
        run_id = np.cumsum(marker) - 1
        flag |= run_flag[run_id]
        if order is None:
            return flag
        out = np.zeros(k, dtype=bool)
        out[order] = flag
        return out

    def _add_sample(
        self,
        files: np.ndarray,
        ranks: np.ndarray,
        counts: np.ndarray,
        gid: np.ndarray,
        off: np.ndarray,
        ln: np.ndarray,
        start: np.ndarray,
        end: np.ndarray,
    ) -> None:
        k = len(off)
        # Every stride-th segment of the stream, the stride doubling (and the sample thinning to match)
        # whenever the sample would outgrow its cap: deterministic, and no work per segment.
        while self._sample_n // 2 + k // self._stride > self._sample_cap and self._stride < (1 << 40):
            self._stride *= 2
            if not self._sample_n:
                continue
            joined = {c: np.concatenate(v) for c, v in self._sample.items()}
            keep = joined["idx"] % self._stride == 0
            self._sample = {c: [v[keep]] for c, v in joined.items()}
            self._sample_n = int(keep.sum())
        pick = np.arange((-self._n) % self._stride, k, self._stride, dtype=np.int64)
        rec = np.searchsorted(np.cumsum(counts[0::2] + counts[1::2]), pick, side="right")
        cols = {
            "rank": ranks[rec],
            "file": files[rec],
            "op": (gid[pick] & 1).astype(np.int8),
            "offset": off[pick],
            "length": ln[pick],
            "start": start[pick],
            "end": end[pick],
            "idx": pick + self._n,
        }
        for c, v in cols.items():
            self._sample[c].append(v)
        self._sample_n += len(pick)

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
        )


__all__ = ["FLAGS", "GROUPS", "READ", "WRITE", "FlagStats", "Spans", "TraceStream", "TraceSummary", "union"]
