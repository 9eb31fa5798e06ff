"""Derived views of a profile that several checks share, computed once per analysis."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar, cast

import numpy as np

from iodiag.analysis.models import FileEvidence, InterfaceTotals, IOShare, JobFacts, Metric, Unit, Workload
from iodiag.analysis.views.calls import call_columns, module_calls
from iodiag.core.thresholds import Thresholds
from iodiag.ingest import JobProfile
from iodiag.ingest.table import Table
from iodiag.ingest.truncation import CUT_READ_ERROR

_DIGITS = re.compile(r"\d+")

T = TypeVar("T")

SIZE_BINS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M")
"""Darshan's access-size histogram bins below 1 MiB: what Drishti calls small."""

TOP_LAYER_TIME = {
    "DFS": ("DFS_F_READ_TIME", "DFS_F_WRITE_TIME", "DFS_F_META_TIME", "DFS_F_SLOWEST_RANK_TIME"),
    "DAOS": ("DAOS_F_READ_TIME", "DAOS_F_WRITE_TIME", "DAOS_F_META_TIME", "DAOS_F_SLOWEST_RANK_TIME"),
    "STDIO": ("STDIO_F_READ_TIME", "STDIO_F_WRITE_TIME", "STDIO_F_META_TIME", "STDIO_F_SLOWEST_RANK_TIME"),
    "MPI-IO": ("MPIIO_F_READ_TIME", "MPIIO_F_WRITE_TIME", "MPIIO_F_META_TIME", "MPIIO_F_SLOWEST_RANK_TIME"),
    "POSIX": ("POSIX_F_READ_TIME", "POSIX_F_WRITE_TIME", "POSIX_F_META_TIME", "POSIX_F_SLOWEST_RANK_TIME"),
}
TOP_LAYER_BYTES = {
    "DFS": ("DFS_BYTES_READ", "DFS_BYTES_WRITTEN"),
    "DAOS": ("DAOS_BYTES_READ", "DAOS_BYTES_WRITTEN"),
    "STDIO": ("STDIO_BYTES_READ", "STDIO_BYTES_WRITTEN"),
    "MPI-IO": ("MPIIO_BYTES_READ", "MPIIO_BYTES_WRITTEN"),
    "POSIX": ("POSIX_BYTES_READ", "POSIX_BYTES_WRITTEN"),
}


_FILE_SUMS = (
    "POSIX_BYTES_READ",
    "POSIX_BYTES_WRITTEN",
    "POSIX_READS",
    "POSIX_WRITES",
    "POSIX_F_READ_TIME",
    "POSIX_F_WRITE_TIME",
    "POSIX_FILE_NOT_ALIGNED",
)
_FILE_MAXES = ("POSIX_MAX_BYTE_READ", "POSIX_MAX_BYTE_WRITTEN")


class Context:
    def __init__(
        self,
        profile: JobProfile,
        top_n: int = 10,
        facts: JobFacts | None = None,
        thresholds: Thresholds | None = None,
    ) -> None:
        self.profile = profile
        self.thresholds = thresholds or Thresholds()
        self.meta = profile.meta
        self.facts = facts or JobFacts()
        self.top_n = top_n
        self.cache: dict[str, object] = {}
        """Per-analysis memo for derived tables that only some checks need (keyed by check family): ``memo``."""

    def memo(self, key: str, make: Callable[[], T]) -> T:
        """``make()``, computed once per analysis under ``key`` (None results included)."""
        if key not in self.cache:
            self.cache[key] = make()
        return cast(T, self.cache[key])

    def records(self, module: str) -> Table:
        """A module's records as numpy columns; an empty table when the log has none."""
        t = self.profile.table(module)
        return t if t is not None else _EMPTY

    @property
    def posix_records(self) -> Table:
        return self.records("POSIX")

    @property
    def mpiio_records(self) -> Table:
        return self.records("MPI-IO")

    @property
    def stdio_records(self) -> Table:
        return self.records("STDIO")

    def rank_files(
        self,
        ids: np.ndarray,
        values: np.ndarray,
        metric: str,
        unit: Unit,
        extra: np.ndarray | None = None,
        extra_name: str = "",
        extra_unit: Unit = Unit.RATIO,
    ) -> tuple[list[FileEvidence], int]:
        """The files (``ids``, one value each) with the largest positive ``values``, at most ``top_n`` of them,
        and how many files had a positive value. ``extra``, aligned with ``ids``, adds a second metric."""
        keep = np.flatnonzero(np.asarray(values) > 0)
        order = keep[np.argsort(-np.asarray(values, dtype=float)[keep], kind="stable")]
        out = []
        for i in order[: self.top_n].tolist():
            metrics = [Metric(name=metric, value=_num(values[i]), unit=unit)]
            if extra is not None:
                metrics.append(Metric(name=extra_name, value=_num(extra[i]), unit=extra_unit))
            out.append(self.file(int(ids[i]), *metrics))
        return out, len(keep)

    @cached_property
    def files(self) -> Table:
        """POSIX per file, one row per record id (column ``id``, ascending): sums over the file's records,
        extents maxed, ``shared`` when any record is shared (rank -1)."""
        p = self.posix_records
        if p.empty:
            return Table({"id": np.zeros(0, dtype=np.uint64)}, 0)
        g = p.group_by("id")
        out: dict[str, np.ndarray] = {"id": g.keys.astype(np.uint64)}
        for col in _FILE_SUMS:
            out[col] = g.sum(p[col])
        for col in _FILE_MAXES:
            out[col] = g.max(p[col].astype(np.int64))
        out["shared"] = g.any(p["rank"] < 0)
        return Table(out, len(g))

    @cached_property
    def waiting_rows(self) -> np.ndarray:
        """POSIX records that waited, not moved data (bool per row of ``posix_records``): minutes in
        open/close per open for under 1 MiB.

        A named pipe's open() blocks until the other end opens it; a device or a lock file can block the same
        way. Such a record can hold most of a run's "metadata time" (threads waiting in open for the whole
        run) while storage did nothing. No file system takes that long to open a file in normal operation,
        so these records are left out of the I/O time and named in the verdict's caveats.
        """
        p = self.posix_records
        if p.empty:
            return np.zeros(0, dtype=bool)
        runtime = max(self.meta.runtime_s, 0.0)
        opens = np.maximum(p["POSIX_OPENS"], 1).astype(float)
        meta = p["POSIX_F_META_TIME"].astype(float)
        moved = (p["POSIX_BYTES_READ"] + p["POSIX_BYTES_WRITTEN"]).astype(float)
        floor = max(10.0, 0.1 * runtime)
        mask: np.ndarray = (meta / opens >= floor) & (moved < (1 << 20))
        return mask

    @cached_property
    def counted_layers(self) -> list[tuple[str, Table]]:
        """Records that carry each file's time once: MPI-IO for files opened through it, else POSIX; plus STDIO.

        MPI-IO time already contains the POSIX time spent underneath it, so counting both would
        double the I/O time of MPI-IO files.
        """
        parts: list[tuple[str, Table]] = []
        dfs, daos = self.records("DFS"), self.records("DAOS")
        if len(dfs):
            parts.append(("DFS", dfs))
        elif len(daos):
            # DFS is built on DAOS arrays: with both, the DAOS records repeat the DFS traffic.
            parts.append(("DAOS", daos))
        if len(self.stdio_records):
            parts.append(("STDIO", self.stdio_records))
        if len(self.mpiio_records):
            parts.append(("MPI-IO", self.mpiio_records))
        p = self.posix_records
        if len(p):
            keep = ~self.waiting_rows
            if self.mpiio_ids:
                keep &= ~p.isin("id", self.mpiio_ids)
            parts.append(("POSIX", p if keep.all() else p.where(keep)))
        return parts

    def solo_work(self, rank: int) -> tuple[int, float, dict[int, float], int]:
        """I/O the rank did on files no other rank touched: (bytes, seconds, seconds per record id, the median
        rank's bytes of such solo work). Every rank of a file-per-process job has solo files, so the median tells
        extra work (rank 0 reading the input alone) from the same work done slower."""
        per_rank: dict[int, int] = {}
        own_bytes, own_s = 0, 0.0
        by_id: dict[int, float] = {}
        for layer, df in self.counted_layers:
            if not len(df):
                continue
            rd, wr, md, _ = TOP_LAYER_TIME[layer]
            br, bw = TOP_LAYER_BYTES[layer]
            ranks = np.asarray(df["rank"])
            ids = np.asarray(df["id"]).astype(np.uint64)
            uniq, counts = np.unique(ids, return_counts=True)
            shared_ids = set(ids[ranks < 0].tolist())
            solo = np.isin(ids, uniq[counts == 1]) & (ranks >= 0)
            solo &= ~np.isin(ids, np.fromiter(shared_ids, dtype=np.uint64, count=len(shared_ids)))
            # A file of a kind several ranks each have one of (snap.0.dat, snap.1.dat ...) is the rank's share of
            # the job's work, not work it did alone: only kinds no other rank has count as extra
            kinds = [_DIGITS.sub("#", self.path(int(i))) for i in ids]
            holders: dict[str, set[int]] = {}
            for k, r, is_solo in zip(kinds, ranks.tolist(), solo.tolist(), strict=True):
                if is_solo:
                    holders.setdefault(k, set()).add(int(r))
            solo &= np.array([len(holders.get(k, ())) <= 1 for k in kinds], dtype=bool)
            moved = (df.num(br) + df.num(bw))[solo]
            for r, b in zip(ranks[solo].tolist(), moved.tolist(), strict=True):
                per_rank[r] = per_rank.get(r, 0) + int(b)
            mine = solo & (ranks == rank)
            t = (df[rd] + df[wr] + df[md])[mine]
            own_bytes += int((df.num(br) + df.num(bw))[mine].sum())
            own_s += float(t.sum())
            for i, v in zip(ids[mine].tolist(), t.tolist(), strict=True):
                by_id[int(i)] = by_id.get(int(i), 0.0) + float(v)
        n = max(self.meta.nprocs, 1)
        values = sorted(per_rank.values()) + [0] * max(n - len(per_rank), 0)
        median = int(sorted(values)[len(values) // 2]) if values else 0
        return own_bytes, own_s, by_id, median

    @cached_property
    def collective_write_files(self) -> set[int]:
        """Files written mostly through collective MPI-IO calls: aggregators write whole stripes or blocks there,
        so the lock-contention checks (L06, P23) leave them to the collective-buffering ones (X01, X03)."""
        m = self.mpiio_records
        if m.empty:
            return set()
        g = m.group_by("id")
        coll = g.sum(m.num("MPIIO_COLL_WRITES") + m.num("MPIIO_SPLIT_WRITES"))
        indep = g.sum(m.num("MPIIO_INDEP_WRITES") + m.num("MPIIO_NB_WRITES"))
        total = coll + indep
        return {int(k) for k in g.keys[(total > 0) & (2 * coll >= total)].tolist()}

    def shared_heavy(self, rank: int) -> tuple[int, int, int] | None:
        """The shared file on which Darshan kept ``rank`` as the slowest with the most bytes: (record id, the
        rank's bytes on it, the file's bytes). A shared record keeps per-rank bytes only for its slowest and
        fastest rank, so this is the one way to see that one rank moved most of a shared file."""
        best: tuple[int, int, int] | None = None
        for layer, df in self.counted_layers:
            if not len(df):
                continue
            slow_t = TOP_LAYER_TIME[layer][3]
            who, moved = (
                slow_t.replace("_F_SLOWEST_RANK_TIME", "_SLOWEST_RANK"),
                slow_t.replace("_F_SLOWEST_RANK_TIME", "_SLOWEST_RANK_BYTES"),
            )
            if who not in df or moved not in df:
                continue
            br, bw = TOP_LAYER_BYTES[layer]
            mine = (np.asarray(df["rank"]) < 0) & (np.asarray(df[who]) == rank)
            for rid, b, total in zip(
                np.asarray(df["id"])[mine].tolist(),
                df.num(moved)[mine].tolist(),
                (df.num(br) + df.num(bw))[mine].tolist(),
                strict=True,
            ):
                if 0 < int(b) <= int(total) and (best is None or int(b) > best[1]):
                    best = (int(rid), int(b), int(total))
        return best

    def rank_work_ratio(self, rank: int) -> float | None:
        """Bytes the rank moved through its own records, over the mean rank's bytes (all records, each file once
        at its top layer). None when the job moved nothing or the rank's share cannot be told (shared records).
        A rank slow because it had more work shows a ratio well above 1; one slow at the same work, about 1."""
        own = total = 0
        for layer, records in self.counted_layers:
            if not len(records):
                continue
            rd, wr = TOP_LAYER_BYTES[layer]
            moved = records.num(rd) + records.num(wr)
            total += int(moved.sum())
            own += int(moved[np.asarray(records["rank"]) == rank].sum())
        n = self.meta.nprocs
        if total <= 0 or n <= 0:
            return None
        return own / (total / n)

    def path(self, record_id: int) -> str:
        return self.profile.name(record_id)

    def file(self, record_id: int, *metrics: Metric) -> FileEvidence:
        return FileEvidence(path=self.path(record_id), record_id=str(int(record_id)), metrics=list(metrics))

    @property
    def nodes(self) -> int | None:
        return self.facts.nodes or self.meta.nodes

    @cached_property
    def mpiio_ids(self) -> set[int]:
        m = self.mpiio_records
        return set(m["id"].astype(np.uint64).tolist()) if len(m) else set()

    def collective_share(self, op: str) -> float:
        """Share of MPI-IO ``op`` (READ or WRITE) calls that were collective; 0 without MPI-IO."""
        m = self.mpiio_records
        if m.empty:
            return 0.0
        coll = m.total(f"MPIIO_COLL_{op}S")
        total = coll + m.total(f"MPIIO_INDEP_{op}S")
        return coll / total if total else 0.0

    def collective_advice(self, op: str) -> tuple[str, ...]:
        """Recommend collective MPI-IO only to jobs that use MPI-IO without it; others get the library advice."""
        if not self.profile.has("MPI-IO"):
            return ("use-parallel-io-library",)
        return ("mpiio-collective-io",) if self.collective_share(op) < 0.5 else ("romio-hints",)

    @cached_property
    def uses_hdf5(self) -> bool:
        if self.profile.has("H5F") or self.profile.has("H5D"):
            return True
        return any(self.path(i).endswith((".h5", ".hdf5")) for i in self.mpiio_ids)

    @cached_property
    def unrequested_read_ids(self) -> set[int]:
        """Files whose POSIX reads the application mostly did not ask for: reads beneath MPI-IO writes
        (ROMIO's read-modify-write, X05). Aggregating or reordering the application's reads cannot remove them,
        so the read findings (P05, P11, P15) do not price them."""
        m, p = self.mpiio_records, self.posix_records
        if m.empty or p.empty:
            return set()
        mg, pg = m.group_by("id"), p.group_by("id")
        both, mi, pi = np.intersect1d(mg.keys, pg.keys, return_indices=True)
        m_read, m_written = mg.sum(m["MPIIO_BYTES_READ"])[mi], mg.sum(m["MPIIO_BYTES_WRITTEN"])[mi]
        asked_ops = (mg.sum(m["MPIIO_INDEP_READS"]) + mg.sum(m["MPIIO_COLL_READS"]))[mi]
        p_read, p_reads = pg.sum(p["POSIX_BYTES_READ"])[pi], pg.sum(p["POSIX_READS"])[pi]
        hit = (m_written > 0) & (p_reads > 0) & ((m_read < 0.5 * p_read) | (asked_ops < 0.5 * p_reads))
        return {int(i) for i in both[hit].tolist()}

    @cached_property
    def io_share(self) -> IOShare | None:
        if not self.counted_layers:
            return None
        nprocs = max(self.meta.nprocs, 1)
        unique: dict[int, float] = {}
        shared_total = shared_slowest = shared_spread = 0.0
        slowest_shared_rank: tuple[float, int] | None = None
        read_s = write_s = meta_s = 0.0
        bytes_read = bytes_written = 0
        for layer, df in self.counted_layers:
            rd, wr, md, slow = TOP_LAYER_TIME[layer]
            br, bw = TOP_LAYER_BYTES[layer]
            t = df[rd] + df[wr] + df[md]
            ranks = df["rank"]
            read_s += float(df[rd].sum())
            write_s += float(df[wr].sum())
            meta_s += float(df[md].sum())
            bytes_read += int(df[br].sum())
            bytes_written += int(df[bw].sum())
            shared = ranks < 0
            if (~shared).any():
                uniq, inv = np.unique(ranks[~shared], return_inverse=True)
                for rank, v in zip(uniq.tolist(), np.bincount(inv, weights=t[~shared]).tolist(), strict=True):
                    unique[rank] = unique.get(rank, 0.0) + v
            shared_total += float(t[shared].sum())
            if shared.any():
                slowest = np.clip(df[slow][shared], 0, None)
                shared_slowest += float(slowest.sum())
                fast = slow.replace("_SLOWEST_", "_FASTEST_")
                if fast in df.columns:
                    shared_spread += float(np.clip(slowest - np.clip(df[fast][shared], 0, None), 0, None).sum())
                rank_col = slow.replace("_F_SLOWEST_RANK_TIME", "_SLOWEST_RANK")
                i = int(np.argmax(slowest))
                cand = (float(slowest[i]), int(df[rank_col][shared][i]))
                if slowest_shared_rank is None or cand > slowest_shared_rank:
                    slowest_shared_rank = cand
        slowest_unique_rank, slowest_unique = (None, 0.0)
        if unique:
            slowest_unique_rank, slowest_unique = max(unique.items(), key=lambda kv: (kv[1], -kv[0]))
        slowest_io = slowest_unique + shared_slowest
        # Name the rank that sets the busiest time apart: where every rank shares the same files equally, the
        # shared records' "slowest rank" is a coin toss, and the rank with the most I/O of its own is the one
        # the others wait for (rank 0 reading the input alone before a shared phase).
        others = sorted(unique.values())[-2] if len(unique) > 1 else 0.0
        unique_lead = slowest_unique - others
        if slowest_unique_rank is not None and (slowest_unique >= shared_slowest or unique_lead > shared_spread):
            slowest_rank: int | None = slowest_unique_rank
        else:
            slowest_rank = slowest_shared_rank[1] if slowest_shared_rank else slowest_unique_rank
        mean_io = (sum(unique.values()) + shared_total) / nprocs
        runtime = self.meta.runtime_s
        return IOShare(
            runtime_s=runtime,
            runtime_resolution_s=1.0 if _format_version(self.meta.log_format) < (3, 41) else 0.0,
            slowest_rank_io_s=slowest_io,
            mean_rank_io_s=mean_io,
            slowest_rank=slowest_rank,
            share_slowest=min(slowest_io / runtime, 1.0) if runtime > 0 else 0.0,
            share_mean=min(mean_io / runtime, 1.0) if runtime > 0 else 0.0,
            read_s=read_s,
            write_s=write_s,
            meta_s=meta_s,
            bytes_read=bytes_read,
            bytes_written=bytes_written,
        )

    @cached_property
    def summed_io_s(self) -> float:
        """Read + write + metadata seconds of the top layer, summed over ranks (the costs' denominator)."""
        total = 0.0
        for layer, df in self.counted_layers:
            rd, wr, md, _ = TOP_LAYER_TIME[layer]
            total += float(df[rd].sum()) + float(df[wr].sum()) + float(df[md].sum())
        return total

    @cached_property
    def io_matters(self) -> bool | None:
        """Is I/O a reason for the run time? None when the log cannot tell: no I/O or timing, or a log too
        incomplete to bound the run's I/O (``incomplete``). The one place this is decided: J01, the verdict
        and every renderer follow it."""
        s = self.io_share
        if s is None or s.runtime_s <= 0:
            return None
        t = self.thresholds
        if s.share_slowest >= t.io_share_low and s.slowest_rank_io_s >= t.io_matters_min_seconds:
            return True  # what was recorded already matters; missing records only add to it
        if self.incomplete is not None:
            return None
        if s.slowest_rank_io_s < t.io_matters_min_seconds:
            return False
        # Old logs round times to whole seconds; say "not I/O" only if that holds for the shortest run
        # time the log allows.
        shortest = s.runtime_s - s.runtime_resolution_s
        return shortest > 0 and s.slowest_rank_io_s / shortest >= t.io_share_low

    @cached_property
    def incomplete(self) -> Incomplete | None:
        """Why the recorded I/O cannot bound the run's I/O, or None when the counters can be trusted to.

        A data module Darshan marked partial (it ran out of record memory), or one that could not be read,
        is missing the files opened after that point; a module whose records stop at a power-of-two count
        (Darshan's per-process record limits) while the recorded activity ends early in the run is the same
        thing in a log whose flag was not set. Either way "I/O is small" cannot be said from it.
        """
        runtime = self.meta.runtime_s
        window = self.activity_end_s
        for name in DATA_MODULES:
            info = self.profile.modules.get(name)
            if info is None:
                continue
            if info.partial or info.read_error:
                return Incomplete(
                    module=name,
                    records=info.records,
                    reason="ran out of record memory"
                    if info.partial
                    else "is cut short (the file ends before its data does)"
                    if info.read_error == CUT_READ_ERROR
                    else "could not be read completely",
                    activity_end_s=window,
                    runtime_s=runtime,
                )
            t = self.profile.tables.get(name)
            if t is None or not len(t) or "rank" not in t:
                continue
            per_rank = int(np.unique(np.asarray(t["rank"]), return_counts=True)[1].max())
            at_limit = per_rank >= 1024 and per_rank & (per_rank - 1) == 0
            if at_limit and window is not None and runtime > 0 and window < _EARLY_END * runtime:
                return Incomplete(
                    module=name,
                    records=per_rank,
                    reason=f"stops at {per_rank:,} records per process, a Darshan record limit",
                    activity_end_s=window,
                    runtime_s=runtime,
                )
        return self._heatmap_beyond_counters(window, runtime)

    def _heatmap_beyond_counters(self, window: float | None, runtime: float) -> Incomplete | None:
        """The heatmap (its own memory, its own limits) saw POSIX traffic well after the counters' last I/O,
        and more bytes than they hold: records are missing from the counters."""
        if window is None or runtime <= 0 or not self.profile.has("HEATMAP"):
            return None
        from iodiag.analysis.views.heatmap import heatmaps

        hm = heatmaps(self.profile).get("POSIX")
        if hm is None or hm.bytes <= 0:
            return None
        active = np.flatnonzero(hm.timeline())
        last = float(active[-1] + 1) * hm.bin_width if len(active) else 0.0
        p = self.posix_records
        counted = p.total("POSIX_BYTES_READ") + p.total("POSIX_BYTES_WRITTEN")
        if last > window + max(_HEATMAP_SLACK_S, 0.05 * runtime) and hm.bytes > 1.1 * counted:
            return Incomplete(
                module="POSIX",
                records=len(p),
                reason=f"stops recording at {window:.1f} s while the heatmap shows I/O until {last:.1f} s",
                activity_end_s=window,
                runtime_s=runtime,
            )
        return None

    @cached_property
    def activity_end_s(self) -> float | None:
        """When the last recorded I/O ended, seconds after the job started (None without timestamps)."""
        end: float | None = None
        for layer, df in self.counted_layers:
            prefix = _TIMESTAMP_PREFIX.get(layer)
            if prefix is None or df.empty:
                continue
            for col in (
                f"{prefix}_F_READ_END_TIMESTAMP",
                f"{prefix}_F_WRITE_END_TIMESTAMP",
                f"{prefix}_F_CLOSE_END_TIMESTAMP",
                f"{prefix}_F_META_END_TIMESTAMP",
            ):
                if col in df:
                    v = float(np.max(df[col]))
                    end = v if end is None else max(end, v)
        return end

    @cached_property
    def interfaces(self) -> list[InterfaceTotals]:
        counted_tables = dict(self.counted_layers)
        counted = set(counted_tables)
        out: list[InterfaceTotals] = []
        for module, shown, op_cols, note in _INTERFACES:
            df = self.records(module)
            info = self.profile.modules.get(module)
            if df.empty and not (info and info.records):
                continue
            rd_t: str | None
            wr_t: str | None
            md_t: str | None
            br: str | None
            bw: str | None
            if module in TOP_LAYER_TIME:
                rd_t, wr_t, md_t, _ = TOP_LAYER_TIME[module]
                br, bw = TOP_LAYER_BYTES[module]
            else:
                rd_t, wr_t, md_t = _TIMES.get(module, (None, None, None))
                br, bw = _BYTES.get(module, (None, None))
            is_counted = module in counted or (module == "POSIX" and "POSIX" in counted)
            why = note
            if module == "DAOS" and "DFS" in counted:
                why = "DFS is built on DAOS arrays: its records repeat the DFS traffic"
            elif module == "POSIX" and "MPI-IO" in counted:
                why = "files opened through MPI-IO are counted at MPI-IO (its time contains the POSIX time beneath)"
            own = counted_tables.get(module) if module in TOP_LAYER_TIME else None
            own_t = [float(own.total(c)) for c in TOP_LAYER_TIME[module][:3]] if own is not None else [0.0, 0.0, 0.0]
            own_b = [int(own.total(c)) for c in TOP_LAYER_BYTES[module]] if own is not None else [0, 0]
            files, opened, top_paths = 0, 0, []
            if not df.empty and "id" in df.columns:
                g = df.group_by("id")
                files = len(g.keys)
                opens = call_columns(module, df).get("opens")
                if opens is not None:
                    # Standard streams (<STDOUT>, ...) come opened: they are not files the program opened
                    opened = sum(
                        1
                        for k, n in zip(g.keys.tolist(), g.sum(opens).tolist(), strict=True)
                        if n > 0 and not self.path(int(k)).startswith("<")
                    )
                if br is not None and bw is not None:
                    moved = g.sum(df.num(br) + df.num(bw))
                    order = np.argsort(-moved, kind="stable")[:3]
                    top_paths = [self.path(int(g.keys[i])) for i in order.tolist() if moved[i] > 0]
                else:  # a module without byte counters (HDF5's file records): its first files
                    top_paths = [self.path(int(k)) for k in g.keys[:3].tolist()]
            out.append(
                InterfaceTotals(
                    name=shown,
                    records=len(df),
                    files=files,
                    opened_files=opened,
                    top_paths=top_paths,
                    bytes_read=int(df.total(br)),
                    bytes_written=int(df.total(bw)),
                    read_s=df.total(rd_t),
                    write_s=df.total(wr_t),
                    meta_s=df.total(md_t),
                    operations=int(sum(df.total(c) for c in op_cols)),
                    counted=is_counted,
                    partial=bool(info and info.partial),
                    note=why if (not is_counted or module == "POSIX") else "",
                    own_bytes_read=own_b[0],
                    own_bytes_written=own_b[1],
                    own_read_s=own_t[0],
                    own_write_s=own_t[1],
                    own_meta_s=own_t[2],
                    calls=module_calls(module, df),
                )
            )
        return out

    def interface_bytes(self) -> dict[str, int]:
        """Bytes moved per counted interface (each byte once: POSIX without the MPI-IO files)."""
        out: dict[str, int] = {}
        for layer, df in self.counted_layers:
            br, bw = TOP_LAYER_BYTES[layer]
            out[layer] = int(df[br].sum()) + int(df[bw].sum())
        return out

    @cached_property
    def workload(self) -> Workload:
        moved = self.interface_bytes()
        total = sum(moved.values())
        if total and (moved.get("DFS", 0) + moved.get("DAOS", 0)) * 2 >= total:
            return Workload.DAOS
        # A combined profile (iodiag.ingest.combine) of one-process logs is not an MPI job.
        nprocs = int(self.meta.metadata.get("combined_max_nprocs", self.meta.nprocs))
        if self.profile.has("MPI-IO") or nprocs > 1:
            return Workload.MPI
        exe = self.meta.exe.split()[0].rsplit("/", 1)[-1].lower() if self.meta.exe.strip() else ""
        if exe.startswith(_PYTHON):
            return Workload.DATA_LOADER
        return Workload.SINGLE_PROCESS

    @cached_property
    def file_system(self) -> str | None:
        """The file system that carried most of the job's bytes (from the mount table; DAOS for DFS/DAOS)."""
        if self.workload is Workload.DAOS:
            return "daos"
        by_fs: dict[str, int] = {}
        lustre_ids = (
            set(self.records("LUSTRE")["id"].astype(np.uint64).tolist()) if self.profile.has("LUSTRE") else set()
        )
        for layer, df in self.counted_layers:
            if layer in ("DFS", "DAOS"):
                by_fs["daos"] = by_fs.get("daos", 0) + int(df[TOP_LAYER_BYTES[layer][0]].sum())
                continue
            br, bw = TOP_LAYER_BYTES[layer]
            g = df.group_by("id")
            for rid, b in zip(g.keys.tolist(), g.sum(df[br] + df[bw]).tolist(), strict=True):
                if b <= 0:
                    continue
                fs = (
                    "lustre"
                    if rid in lustre_ids
                    else self.meta.fs_type(self.path(int(rid)).rsplit("/", 1)[0] + "/x") or "unknown"
                )
                if fs in _NOT_A_FILE_SYSTEM:
                    fs = "unknown"
                by_fs[fs] = by_fs.get(fs, 0) + int(b)
        if self.profile.has("LUSTRE") and not by_fs.get("lustre"):
            by_fs["lustre"] = 1
        known = {k: v for k, v in by_fs.items() if k != "unknown"}
        if not known:
            return None
        return max(sorted(known), key=lambda k: known[k])

    def on_file_system(self, *kinds: str) -> bool:
        return self.file_system in kinds


_INTERFACES = (
    # (module, shown as, ops counters, note when not counted)
    ("H5F", "HDF5 (files)", (), "sits above MPI-IO/POSIX: its traffic is counted where it reaches them"),
    (
        "H5D",
        "HDF5",
        ("H5D_READS", "H5D_WRITES"),
        "sits above MPI-IO/POSIX: its traffic is counted where it reaches them",
    ),
    (
        "PNETCDF_VAR",
        "PnetCDF",
        ("PNETCDF_VAR_INDEP_READS", "PNETCDF_VAR_INDEP_WRITES", "PNETCDF_VAR_COLL_READS", "PNETCDF_VAR_COLL_WRITES"),
        "sits above MPI-IO: its traffic is counted where it reaches MPI-IO",
    ),
    ("DFS", "DFS", ("DFS_READS", "DFS_READXS", "DFS_WRITES", "DFS_WRITEXS"), ""),
    ("DAOS", "DAOS", ("DAOS_ARRAY_READS", "DAOS_ARRAY_WRITES", "DAOS_OBJ_FETCHES", "DAOS_OBJ_UPDATES"), ""),
    (
        "MPI-IO",
        "MPI-IO",
        (
            "MPIIO_INDEP_READS",
            "MPIIO_INDEP_WRITES",
            "MPIIO_COLL_READS",
            "MPIIO_COLL_WRITES",
            "MPIIO_NB_READS",
            "MPIIO_NB_WRITES",
            "MPIIO_SPLIT_READS",
            "MPIIO_SPLIT_WRITES",
        ),
        "",
    ),
    ("POSIX", "POSIX", ("POSIX_READS", "POSIX_WRITES"), ""),
    ("STDIO", "STDIO", ("STDIO_READS", "STDIO_WRITES"), ""),
)
_BYTES = {
    "H5D": ("H5D_BYTES_READ", "H5D_BYTES_WRITTEN"),
    "PNETCDF_VAR": ("PNETCDF_VAR_BYTES_READ", "PNETCDF_VAR_BYTES_WRITTEN"),
}
_TIMES = {
    "H5D": ("H5D_F_READ_TIME", "H5D_F_WRITE_TIME", "H5D_F_META_TIME"),
    "H5F": (None, None, "H5F_F_META_TIME"),
    "PNETCDF_VAR": ("PNETCDF_VAR_F_READ_TIME", "PNETCDF_VAR_F_WRITE_TIME", "PNETCDF_VAR_F_META_TIME"),
}
DATA_MODULES = ("POSIX", "MPI-IO", "STDIO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "DFS", "DAOS")
"""Modules that carry the job's data or its timing. Any other module with records in a log is named in the
verdict's caveats as not analyzed, unless it is one we read for context (below)."""
CONTEXT_MODULES = ("LUSTRE", "HEATMAP", "DXT_POSIX", "DXT_MPIIO", "APMPI", "APXC")

_TIMESTAMP_PREFIX = {"POSIX": "POSIX", "MPI-IO": "MPIIO", "STDIO": "STDIO", "DFS": "DFS", "DAOS": "DAOS"}
_HEATMAP_SLACK_S = 10.0
"""Heatmap bins are coarse (often seconds wide): activity this far past the counters' end is not rounding."""
_EARLY_END = 0.2
"""Recorded I/O that ends within this share of the run, in a module stopped at a record limit, is a log
that stopped recording rather than a job that stopped doing I/O."""


@dataclass(frozen=True)
class Incomplete:
    """A log whose counters cannot bound the run's I/O (``Context.incomplete``)."""

    module: str
    records: int
    reason: str
    activity_end_s: float | None
    runtime_s: float


_NOT_A_FILE_SYSTEM = frozenset({"overlay", "rootfs", "tmpfs", "squashfs", "autofs", "devtmpfs", "proc", "sysfs"})
"""Mount types that say where a container or the OS lives, not where job data goes."""

_EMPTY = Table()

_PYTHON = ("python", "python2", "python3", "ipython", "torchrun", "jupyter")


def _format_version(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split("."))
    except ValueError:
        return (0,)


def _num(v: object) -> float | int:
    if isinstance(v, (np.integer, int)):
        return int(v)
    return float(v)  # type: ignore[arg-type]


def small_columns(prefix: str, op: str) -> list[str]:
    """``prefix``_SIZE_``op``_bin columns for the bins below 1 MiB (``op`` is READ or WRITE)."""
    return [f"{prefix}_SIZE_{op}_{b}" for b in SIZE_BINS]


def pct(x: float) -> str:
    return f"{x * 100:.2f}%"
