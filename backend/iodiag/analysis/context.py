"""Derived views of a profile that several checks share, computed once per analysis."""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd

from iodiag.analysis.models import FileEvidence, InterfaceTotals, IOShare, JobFacts, Metric, Unit, Workload
from iodiag.core.thresholds import Thresholds
from iodiag.ingest import JobProfile

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
        """Per-analysis memo for derived tables that only some checks need (keyed by check family)."""

    def table(self, module: str) -> pd.DataFrame:
        t = self.profile.table(module)
        return t.frame if t is not None else pd.DataFrame()

    @property
    def posix(self) -> pd.DataFrame:
        return self.table("POSIX")

    @property
    def mpiio(self) -> pd.DataFrame:
        return self.table("MPI-IO")

    @property
    def stdio(self) -> pd.DataFrame:
        return self.table("STDIO")

    def path(self, record_id: int) -> str:
        return self.profile.name(record_id)

    def file(self, record_id: int, *metrics: Metric) -> FileEvidence:
        return FileEvidence(path=self.path(record_id), record_id=str(int(record_id)), metrics=list(metrics))

    def top_files(
        self,
        per_file: pd.Series,
        metric: str,
        unit: Unit,
        extra: pd.Series | None = None,
        extra_name: str = "",
        extra_unit: Unit = Unit.RATIO,
    ) -> tuple[list[FileEvidence], int]:
        """The files with the largest positive values of ``per_file`` (indexed by record id)."""
        s = per_file[per_file > 0].sort_values(ascending=False, kind="stable")
        out = []
        head = s.head(self.top_n)
        for rid, value in zip(head.index.tolist(), head.to_numpy().tolist(), strict=True):
            metrics = [Metric(name=metric, value=_num(value), unit=unit)]
            if extra is not None and rid in extra.index:
                metrics.append(Metric(name=extra_name, value=_num(extra[rid]), unit=extra_unit))
            out.append(self.file(int(rid), *metrics))
        return out, len(s)

    @property
    def nodes(self) -> int | None:
        return self.facts.nodes or self.meta.nodes

    @cached_property
    def posix_files(self) -> pd.DataFrame:
        """POSIX per file (index: record id, sorted): sums over the file's records, extents maxed.

        Built with numpy: a pandas groupby costs about a millisecond per call, and most logs
        have few records, so the fixed cost would dominate the analysis.
        """
        p = self.posix
        ids = p["id"].to_numpy(dtype=np.uint64)
        uniq, inv = np.unique(ids, return_inverse=True)
        out: dict[str, np.ndarray] = {}
        for col in _FILE_SUMS:
            vals = p[col].to_numpy()
            summed = np.bincount(inv, weights=vals, minlength=len(uniq))
            out[col] = summed if vals.dtype.kind == "f" else np.rint(summed).astype(np.int64)
        for col in _FILE_MAXES:
            m = np.full(len(uniq), np.iinfo(np.int64).min, dtype=np.int64)
            np.maximum.at(m, inv, p[col].to_numpy(dtype=np.int64))
            out[col] = m
        shared = np.zeros(len(uniq), dtype=bool)
        np.logical_or.at(shared, inv, p["rank"].to_numpy() < 0)
        out["shared"] = shared
        return pd.DataFrame(out, index=pd.Index(uniq, name="id"))

    @cached_property
    def mpiio_ids(self) -> set[int]:
        return set(self.mpiio["id"].astype(np.uint64).tolist()) if len(self.mpiio) else set()

    def collective_share(self, op: str) -> float:
        """Share of MPI-IO ``op`` (READ or WRITE) calls that were collective; 0 without MPI-IO."""
        m = self.mpiio
        if m.empty:
            return 0.0
        coll = float(m[f"MPIIO_COLL_{op}S"].sum())
        total = coll + float(m[f"MPIIO_INDEP_{op}S"].sum())
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
    def top_layer(self) -> list[tuple[str, pd.DataFrame]]:
        """Records that carry each file's time once: MPI-IO for files opened through it, else POSIX; plus STDIO.

        MPI-IO time already contains the POSIX time spent underneath it, so counting both would
        double the I/O time of MPI-IO files.
        """
        parts: list[tuple[str, pd.DataFrame]] = []
        dfs, daos = self.table("DFS"), self.table("DAOS")
        if len(dfs):
            parts.append(("DFS", dfs))
        elif len(daos):
            # DFS is built on DAOS arrays: with both, the DAOS records repeat the DFS traffic.
            parts.append(("DAOS", daos))
        if len(self.stdio):
            parts.append(("STDIO", self.stdio))
        if len(self.mpiio):
            parts.append(("MPI-IO", self.mpiio))
        if len(self.posix):
            posix = self.posix
            if self.mpiio_ids:
                posix = posix[~posix["id"].isin(list(self.mpiio_ids))]
            waits = self.blocked_waits
            if waits.any():
                posix = posix[~posix.index.isin(waits[waits].index)]
            parts.append(("POSIX", posix))
        return parts

    @cached_property
    def unrequested_read_ids(self) -> set[int]:
        """Files whose POSIX reads the application mostly did not ask for: reads beneath MPI-IO writes
        (ROMIO's read-modify-write, X05). Aggregating or reordering the application's reads cannot remove them,
        so the read findings (P05, P11, P15) do not price them."""
        m, p = self.mpiio, self.posix
        if m.empty or p.empty:
            return set()
        mw = m.groupby("id")[["MPIIO_BYTES_READ", "MPIIO_BYTES_WRITTEN", "MPIIO_INDEP_READS", "MPIIO_COLL_READS"]].sum()
        pr = p.groupby("id")[["POSIX_BYTES_READ", "POSIX_READS"]].sum()
        j = pr.join(mw, how="inner")
        asked_ops = j["MPIIO_INDEP_READS"] + j["MPIIO_COLL_READS"]
        hit = (
            (j["MPIIO_BYTES_WRITTEN"] > 0)
            & (j["POSIX_READS"] > 0)
            & ((j["MPIIO_BYTES_READ"] < 0.5 * j["POSIX_BYTES_READ"]) | (asked_ops < 0.5 * j["POSIX_READS"]))
        )
        return {int(i) for i in j.index[hit].tolist()}

    @cached_property
    def blocked_waits(self) -> pd.Series:
        """POSIX records that waited, not moved data: minutes in open/close per open for under 1 MiB.

        A named pipe's open() blocks until the other end opens it; a device or a lock file can block the same
        way. Such a record can hold most of a run's "metadata time" (threads waiting in open for the whole
        run) while storage did nothing. No file system takes that long to open a file in normal operation,
        so these records are left out of the I/O time and named in the verdict's caveats.
        """
        p = self.posix
        if p.empty:
            return pd.Series(dtype=bool)
        runtime = max(self.meta.runtime_s, 0.0)
        opens = p["POSIX_OPENS"].clip(lower=1).to_numpy(dtype=float)
        meta = p["POSIX_F_META_TIME"].to_numpy(dtype=float)
        moved = (p["POSIX_BYTES_READ"] + p["POSIX_BYTES_WRITTEN"]).to_numpy(dtype=float)
        floor = max(10.0, 0.1 * runtime)
        mask = (meta / opens >= floor) & (moved < (1 << 20))
        return pd.Series(mask, index=p.index)

    @cached_property
    def io_share(self) -> IOShare | None:
        if not self.top_layer:
            return None
        nprocs = max(self.meta.nprocs, 1)
        unique: dict[int, float] = {}
        shared_total = shared_slowest = 0.0
        slowest_shared_rank: tuple[float, int] | None = None
        read_s = write_s = meta_s = 0.0
        bytes_read = bytes_written = 0
        for layer, df in self.top_layer:
            rd, wr, md, slow = TOP_LAYER_TIME[layer]
            br, bw = TOP_LAYER_BYTES[layer]
            t = (df[rd] + df[wr] + df[md]).to_numpy()
            ranks = df["rank"].to_numpy()
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
                slowest = np.clip(df[slow].to_numpy()[shared], 0, None)
                shared_slowest += float(slowest.sum())
                rank_col = slow.replace("_F_SLOWEST_RANK_TIME", "_SLOWEST_RANK")
                i = int(np.argmax(slowest))
                cand = (float(slowest[i]), int(df[rank_col].to_numpy()[shared][i]))
                if slowest_shared_rank is None or cand > slowest_shared_rank:
                    slowest_shared_rank = cand
        slowest_unique_rank, slowest_unique = (None, 0.0)
        if unique:
            slowest_unique_rank, slowest_unique = max(unique.items(), key=lambda kv: (kv[1], -kv[0]))
        slowest_io = slowest_unique + shared_slowest
        if slowest_unique_rank is not None and slowest_unique >= shared_slowest:
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
        for layer, df in self.top_layer:
            rd, wr, md, _ = TOP_LAYER_TIME[layer]
            total += float(df[rd].sum() + df[wr].sum() + df[md].sum())
        return total

    @cached_property
    def io_matters(self) -> bool | None:
        """Is I/O a reason for the run time? None when the log cannot tell. The one place this is decided:
        J01, the verdict and every renderer follow it."""
        s = self.io_share
        if s is None or s.runtime_s <= 0:
            return None
        t = self.thresholds
        if s.slowest_rank_io_s < t.io_matters_min_seconds:
            return False
        if s.share_slowest >= t.io_share_low:
            return True
        # Old logs round times to whole seconds; say "not I/O" only if that holds for the shortest run
        # time the log allows.
        shortest = s.runtime_s - s.runtime_resolution_s
        return shortest > 0 and s.slowest_rank_io_s / shortest >= t.io_share_low

    @cached_property
    def interfaces(self) -> list[InterfaceTotals]:
        counted = {layer for layer, _ in self.top_layer}
        out: list[InterfaceTotals] = []
        for module, shown, op_cols, note in _INTERFACES:
            df = self.table(module)
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
            out.append(
                InterfaceTotals(
                    name=shown,
                    records=len(df),
                    bytes_read=int(_col_sum(df, br)),
                    bytes_written=int(_col_sum(df, bw)),
                    read_s=_col_sum(df, rd_t),
                    write_s=_col_sum(df, wr_t),
                    meta_s=_col_sum(df, md_t),
                    operations=int(sum(_col_sum(df, c) for c in op_cols)),
                    counted=is_counted,
                    partial=bool(info and info.partial),
                    note=why if (not is_counted or module == "POSIX") else "",
                )
            )
        return out

    def interface_bytes(self) -> dict[str, int]:
        """Bytes moved per counted interface (each byte once: POSIX without the MPI-IO files)."""
        out: dict[str, int] = {}
        for layer, df in self.top_layer:
            br, bw = TOP_LAYER_BYTES[layer]
            out[layer] = int(df[br].sum() + df[bw].sum())
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
        lustre_ids = set(self.table("LUSTRE")["id"].astype(np.uint64).tolist()) if self.profile.has("LUSTRE") else set()
        for layer, df in self.top_layer:
            if layer in ("DFS", "DAOS"):
                by_fs["daos"] = by_fs.get("daos", 0) + int(df[TOP_LAYER_BYTES[layer][0]].sum())
                continue
            br, bw = TOP_LAYER_BYTES[layer]
            moved = (df[br] + df[bw]).groupby(df["id"]).sum()
            for rid, b in zip(moved.index.tolist(), moved.to_numpy().tolist(), strict=True):
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

_NOT_A_FILE_SYSTEM = frozenset({"overlay", "rootfs", "tmpfs", "squashfs", "autofs", "devtmpfs", "proc", "sysfs"})
"""Mount types that say where a container or the OS lives, not where job data goes."""

_PYTHON = ("python", "python2", "python3", "ipython", "torchrun", "jupyter")


def _col_sum(df: pd.DataFrame, col: str | None) -> float:
    if col is None or col not in df.columns:
        return 0.0
    return float(df[col].sum())


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
