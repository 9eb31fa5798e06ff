"""From a program's event trace to what Darshan records: counters per (record, rank), reduced.

Definitions follow Darshan's modules (darshan-posix.c and friends): see docs/scenario-spec.md.
All computations are grouped numpy/pandas operations over the events; no counter is set by hand.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd
from darshan.backend import cffi_backend as be

from iodiag.ingest.stacks import SourceLocation
from iodiag.synth.heatmap import heatmap_table
from iodiag.synth.layout import record_id
from iodiag.synth.program import ProgramError
from iodiag.synth.scenario import Scenario, node_of
from iodiag.synth.trace import MODULE, Meta, Mode, Trace, TraceLayer
from iodiag.synth.writer import JobInfo

BOUNDS = np.array([100, 1024, 10240, 102400, 1048576, 4194304, 10485760, 104857600, 1073741824], dtype=np.int64)
"""Darshan's access-size bins (inclusive upper bounds); the tenth bin is everything larger."""
BINS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS")
MEM_ALIGNMENT = 8
POSIX_MODE = 0o664
MPI_MODE = 9  # MPI_MODE_CREATE | MPI_MODE_RDWR (MPICH values)
WITH_FILE_REC = ("H5D", "PNETCDF_VAR")
RANKED = ("POSIX", "MPI-IO", "STDIO", "H5D", "PNETCDF_VAR", "DFS")
DFS_OPS = (
    "DFS_READS",
    "DFS_READXS",
    "DFS_WRITES",
    "DFS_WRITEXS",
    "DFS_NB_READS",
    "DFS_NB_WRITES",
    "DFS_GET_SIZES",
    "DFS_PUNCHES",
    "DFS_REMOVES",
    "DFS_STATS",
)
"""Darshan's DFS module drops records with none of these (objects opened and released, nothing else)."""


@cache
def columns(module: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return tuple(be.counter_names(module)), tuple(be.fcounter_names(module))


@dataclass
class RankGroups:
    """Events of one layer grouped by (record, rank)."""

    rec: np.ndarray
    rank: np.ndarray
    io: dict[str, np.ndarray]
    io_g: np.ndarray
    meta: dict[str, np.ndarray]
    meta_g: np.ndarray

    @property
    def n(self) -> int:
        return len(self.rec)


def _select(cols: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, np.ndarray]:
    return {k: v[mask] for k, v in cols.items()}


def _group(io: dict[str, np.ndarray], meta: dict[str, np.ndarray], layer: TraceLayer, nprocs: int) -> RankGroups:
    io = _select(io, io["layer"] == layer)
    meta = _select(meta, meta["layer"] == layer)
    width = nprocs + 1
    ik = io["rec"] * width + io["rank"]
    mk = meta["rec"] * width + meta["rank"]
    keys = np.unique(np.concatenate([ik, mk]))
    order = np.lexsort((io["seq"], ik))
    io = {k: v[order] for k, v in io.items()}
    ik = ik[order]
    return RankGroups(
        rec=keys // width,
        rank=keys % width,
        io=io,
        io_g=np.searchsorted(keys, ik),
        meta=meta,
        meta_g=np.searchsorted(keys, mk),
    )


def _sum(g: np.ndarray, n: int, w: np.ndarray | None = None) -> np.ndarray:
    return np.bincount(g, weights=w, minlength=n)[:n]


def _shift(a: np.ndarray, fill: object) -> np.ndarray:
    """``a`` moved one place later: out[i] = a[i - 1], out[0] = fill."""
    out = np.empty_like(a)
    if len(a):
        out[0] = fill
        out[1:] = a[:-1]
    return out


def _top4(g: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group: the 4 most frequent non-zero values and their counts (ties: larger value first)."""
    vals = np.zeros((n, 4), dtype=np.int64)
    cnts = np.zeros((n, 4), dtype=np.int64)
    keep = values != 0
    if not keep.any():
        return vals, cnts
    df = pd.DataFrame({"g": g[keep], "v": values[keep]})
    c = df.groupby(["g", "v"], sort=False).size().reset_index(name="c")
    c = c.sort_values(["g", "c", "v"], ascending=[True, False, False], kind="stable")
    c["pos"] = c.groupby("g").cumcount()
    c = c[c["pos"] < 4]
    gi, pos = c["g"].to_numpy(), c["pos"].to_numpy()
    vals[gi, pos] = c["v"].to_numpy()
    cnts[gi, pos] = c["c"].to_numpy()
    return vals, cnts


class IOStats:
    """Darshan's per-record data-operation counters for one layer's grouped events."""

    def __init__(self, gr: RankGroups) -> None:
        n, io, g = gr.n, gr.io, gr.io_g
        self.n = n
        w = io["write"]
        off, ln = io["offset"], io["length"]
        dur = io["end"] - io["start"]
        self.ops = {op: _sum(g[w == (op == "WRITE")], n).astype(np.int64) for op in ("READ", "WRITE")}
        self.bytes = {
            op: _sum(g[w == (op == "WRITE")], n, ln[w == (op == "WRITE")]).astype(np.int64) for op in ("READ", "WRITE")
        }
        self.time = {op: _sum(g[w == (op == "WRITE")], n, dur[w == (op == "WRITE")]) for op in ("READ", "WRITE")}
        self.max_byte = {}
        self.first = {}
        self.last = {}
        self.max_time = {}
        self.max_time_size = {}
        self.hist = {}
        for op in ("READ", "WRITE"):
            sel = w == (op == "WRITE")
            gs = g[sel]
            mb = np.zeros(n, dtype=np.int64)
            np.maximum.at(mb, gs, off[sel] + ln[sel] - 1)
            self.max_byte[op] = mb
            lo = np.full(n, np.inf)
            hi = np.zeros(n)
            np.minimum.at(lo, gs, io["start"][sel])
            np.maximum.at(hi, gs, io["end"][sel])
            self.first[op] = np.where(np.isfinite(lo), lo, 0.0)
            self.last[op] = hi
            # Longest request (the first one in time order if several are equally long).
            mt = np.zeros(n)
            mts = np.zeros(n, dtype=np.int64)
            if sel.any():
                d = dur[sel]
                idx = np.lexsort((np.arange(len(d)), -d, gs))
                head = np.r_[True, gs[idx][1:] != gs[idx][:-1]]
                win = idx[head]
                mt[gs[win]] = d[win]
                mts[gs[win]] = ln[sel][win]
            self.max_time[op], self.max_time_size[op] = mt, mts
            b = np.searchsorted(BOUNDS, ln[sel], side="left")
            self.hist[op] = np.bincount(gs * 10 + b, minlength=n * 10)[: n * 10].reshape(n, 10)
        # Operation order within each record (events are sorted by group, then time).
        same = _shift(g, -1) == g
        switch = same & (_shift(w, w[0] if len(w) else False) != w)
        self.rw_switches = _sum(g[switch], n).astype(np.int64)
        # Consecutive / sequential, per kind: against the last byte of the previous request of that kind.
        order = np.lexsort((io["seq"], w, g))
        go, wo, oo, lo_ = g[order], w[order], off[order], ln[order]
        same_k = (_shift(go, -1) == go) & (_shift(wo, False) == wo)
        last = _shift(oo + lo_ - 1, 0)
        prev = np.where(same_k, last, 0)
        seq_f = oo > prev
        con_f = oo == prev + 1
        self.seq = {op: _sum(go[seq_f & (wo == (op == "WRITE"))], n).astype(np.int64) for op in ("READ", "WRITE")}
        self.consec = {op: _sum(go[con_f & (wo == (op == "WRITE"))], n).astype(np.int64) for op in ("READ", "WRITE")}
        stride = np.where((oo > 0) & (oo > prev) & (prev != 0), oo - prev - 1, 0)
        self.stride = _top4(go, stride, n)
        self.access = _top4(g, ln, n)
        self.mem_bad = _sum(g, n, io["mem_bad"].astype(np.float64)).astype(np.int64)
        self.modes = {
            (op, mode): _sum(g[(w == (op == "WRITE")) & (io["mode"] == mode)], n).astype(np.int64)
            for op in ("READ", "WRITE")
            for mode in (Mode.INDEP, Mode.COLL, Mode.NB)
        }
        self.g, self.offset, self.write = g, off, w


class MetaStats:
    def __init__(self, gr: RankGroups) -> None:
        n, m, g = gr.n, gr.meta, gr.meta_g
        self.counts = np.bincount(g * 16 + m["kind"], minlength=n * 16)[: n * 16].reshape(n, 16).astype(np.int64)
        self.time = _sum(g, n, m["end"] - m["start"])
        is_open = np.isin(m["kind"], [Meta.OPEN, Meta.COLL_OPEN, Meta.CREATE])
        self.open = self._span(g, m, is_open, n)
        self.close = self._span(g, m, m["kind"] == Meta.CLOSE, n)
        self.wait = self._span(g, m, np.isin(m["kind"], [Meta.WAIT_INDEP, Meta.WAIT_COLL]), n)
        wsel = np.isin(m["kind"], [Meta.WAIT_INDEP, Meta.WAIT_COLL])
        self.wait_time = _sum(g[wsel], n, (m["end"] - m["start"])[wsel])

    @staticmethod
    def _span(g: np.ndarray, m: dict[str, np.ndarray], sel: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        lo = np.full(n, np.inf)
        hi = np.zeros(n)
        np.minimum.at(lo, g[sel], m["start"][sel])
        np.maximum.at(hi, g[sel], m["end"][sel])
        return np.where(np.isfinite(lo), lo, 0.0), hi

    def count(self, *kinds: Meta) -> np.ndarray:
        out: np.ndarray = self.counts[:, [int(k) for k in kinds]].sum(axis=1)
        return out


class Frame:
    """Columns of one module's table under construction (zeros unless set)."""

    def __init__(self, module: str, n: int) -> None:
        self.module = module
        ints, floats = columns(module)
        self.cols: dict[str, np.ndarray] = {c: np.zeros(n, dtype=np.int64) for c in ints}
        self.cols.update({c: np.zeros(n, dtype=np.float64) for c in floats})

    def set(self, name: str, value: np.ndarray | int | float) -> None:
        if name not in self.cols:
            raise KeyError(f"{self.module} has no counter {name}")
        self.cols[name][:] = value


def _io_counters(f: Frame, p: str, s: IOStats, agg: bool) -> None:
    for op in ("READ", "WRITE"):
        f.set(f"{p}_BYTES_{op}" if op == "READ" else f"{p}_BYTES_WRITTEN", s.bytes[op])
        f.set(f"{p}_MAX_{op}_TIME_SIZE", s.max_time_size[op])
        f.set(f"{p}_F_{op}_TIME", s.time[op])
        f.set(f"{p}_F_MAX_{op}_TIME", s.max_time[op])
        f.set(f"{p}_F_{op}_START_TIMESTAMP", s.first[op])
        f.set(f"{p}_F_{op}_END_TIMESTAMP", s.last[op])
        for i, b in enumerate(BINS):
            f.set(f"{p}_SIZE_{op}_AGG_{b}" if agg else f"{p}_SIZE_{op}_{b}", s.hist[op][:, i])
    f.set(f"{p}_RW_SWITCHES", s.rw_switches)
    vals, cnts = s.access
    for i in range(4):
        f.set(f"{p}_ACCESS{i + 1}_ACCESS", vals[:, i])
        f.set(f"{p}_ACCESS{i + 1}_COUNT", cnts[:, i])


def _meta_counters(f: Frame, p: str, m: MetaStats) -> None:
    f.set(f"{p}_F_META_TIME", m.time)
    f.set(f"{p}_F_OPEN_START_TIMESTAMP", m.open[0])
    f.set(f"{p}_F_OPEN_END_TIMESTAMP", m.open[1])
    f.set(f"{p}_F_CLOSE_START_TIMESTAMP", m.close[0])
    f.set(f"{p}_F_CLOSE_END_TIMESTAMP", m.close[1])


def _posix(gr: RankGroups, t: Trace) -> Frame:
    f = Frame("POSIX", gr.n)
    s, m = IOStats(gr), MetaStats(gr)
    _io_counters(f, "POSIX", s, agg=False)
    _meta_counters(f, "POSIX", m)
    blocks = {k: st.mount.block_size for k, st in t.files.items()}
    block = np.array([blocks[r] for r in gr.rec.tolist()], dtype=np.int64)
    f.set("POSIX_OPENS", m.count(Meta.OPEN))
    f.set("POSIX_STATS", m.count(Meta.STAT))
    f.set("POSIX_SEEKS", m.count(Meta.SEEK))
    f.set("POSIX_FSYNCS", m.count(Meta.FSYNC))
    f.set("POSIX_MODE", np.where(m.count(Meta.OPEN) > 0, POSIX_MODE, 0))
    for op in ("READ", "WRITE"):
        f.set(f"POSIX_{op}S", s.ops[op])
        f.set(f"POSIX_MAX_BYTE_{op}" if op == "READ" else "POSIX_MAX_BYTE_WRITTEN", s.max_byte[op])
        f.set(f"POSIX_CONSEC_{op}S", s.consec[op])
        f.set(f"POSIX_SEQ_{op}S", s.seq[op])
    misaligned = (s.offset % block[s.g]) != 0 if len(s.g) else np.zeros(0, dtype=bool)
    f.set("POSIX_FILE_NOT_ALIGNED", _sum(s.g[misaligned], gr.n).astype(np.int64))
    f.set("POSIX_FILE_ALIGNMENT", block)
    f.set("POSIX_MEM_NOT_ALIGNED", s.mem_bad)
    f.set("POSIX_MEM_ALIGNMENT", MEM_ALIGNMENT)
    vals, cnts = s.stride
    for i in range(4):
        f.set(f"POSIX_STRIDE{i + 1}_STRIDE", vals[:, i])
        f.set(f"POSIX_STRIDE{i + 1}_COUNT", cnts[:, i])
    return f


def _stdio(gr: RankGroups, t: Trace) -> Frame:
    f = Frame("STDIO", gr.n)
    s, m = IOStats(gr), MetaStats(gr)
    f.set("STDIO_OPENS", m.count(Meta.OPEN))
    f.set("STDIO_SEEKS", m.count(Meta.SEEK))
    f.set("STDIO_FLUSHES", m.count(Meta.FSYNC))
    for op in ("READ", "WRITE"):
        f.set(f"STDIO_{op}S", s.ops[op])
        f.set("STDIO_BYTES_READ" if op == "READ" else "STDIO_BYTES_WRITTEN", s.bytes[op])
        f.set("STDIO_MAX_BYTE_READ" if op == "READ" else "STDIO_MAX_BYTE_WRITTEN", s.max_byte[op])
        f.set(f"STDIO_F_{op}_TIME", s.time[op])
        f.set(f"STDIO_F_{op}_START_TIMESTAMP", s.first[op])
        f.set(f"STDIO_F_{op}_END_TIMESTAMP", s.last[op])
    _meta_counters(f, "STDIO", m)
    return f


def _dfs(gr: RankGroups, t: Trace) -> Frame:
    """DAOS File System API (darshan-dfs.c): dfs_open/dfs_release, dfs_read/dfs_write, dfs_ostat."""
    f = Frame("DFS", gr.n)
    s, m = IOStats(gr), MetaStats(gr)
    _io_counters(f, "DFS", s, agg=False)
    _meta_counters(f, "DFS", m)
    f.set("DFS_OPENS", m.count(Meta.OPEN))
    f.set("DFS_STATS", m.count(Meta.STAT))
    f.set("DFS_READS", s.ops["READ"])
    f.set("DFS_WRITES", s.ops["WRITE"])
    # Darshan asks the object for its chunk size at its first read or write.
    chunk = np.array([t.files[int(r)].chunk_size for r in gr.rec.tolist()], dtype=np.int64)
    f.set("DFS_CHUNK_SIZE", np.where(s.ops["READ"] + s.ops["WRITE"] > 0, chunk, 0))
    return f


def _mpiio(gr: RankGroups, t: Trace) -> Frame:
    f = Frame("MPI-IO", gr.n)
    s, m = IOStats(gr), MetaStats(gr)
    _io_counters(f, "MPIIO", s, agg=True)
    _meta_counters(f, "MPIIO", m)
    f.set("MPIIO_INDEP_OPENS", m.count(Meta.OPEN))
    f.set("MPIIO_COLL_OPENS", m.count(Meta.COLL_OPEN))
    f.set("MPIIO_SYNCS", m.count(Meta.FSYNC))
    f.set("MPIIO_HINTS", m.count(Meta.HINT))
    f.set("MPIIO_MODE", np.where(m.count(Meta.OPEN, Meta.COLL_OPEN) > 0, MPI_MODE, 0))
    for op in ("READ", "WRITE"):
        f.set(f"MPIIO_INDEP_{op}S", s.modes[(op, Mode.INDEP)])
        f.set(f"MPIIO_COLL_{op}S", s.modes[(op, Mode.COLL)])
        f.set(f"MPIIO_NB_{op}S", s.modes[(op, Mode.NB)])
    return f


def _h5f(gr: RankGroups, t: Trace) -> Frame:
    f = Frame("H5F", gr.n)
    m = MetaStats(gr)
    f.set("H5F_OPENS", m.count(Meta.OPEN))
    f.set("H5F_FLUSHES", m.count(Meta.FSYNC))
    f.set("H5F_USE_MPIIO", np.array([int(t.h5f_mpiio.get(int(r), False)) for r in gr.rec], dtype=np.int64))
    _meta_counters(f, "H5F", m)
    return f


def _object_shape(f: Frame, p: str, gr: RankGroups, t: Trace, ndims_name: str) -> np.ndarray:
    dtype = np.array([t.dtype_size.get(int(r), 1) for r in gr.rec], dtype=np.int64)
    f.set(ndims_name, 1)
    f.set(
        f"{p}_NPOINTS" if p == "PNETCDF_VAR" else "H5D_DATASPACE_NPOINTS",
        np.array([t.npoints.get(int(r), 0) for r in gr.rec], dtype=np.int64),
    )
    f.set(f"{p}_DATATYPE_SIZE", dtype)
    return dtype


def _h5d(gr: RankGroups, t: Trace) -> Frame:
    f = Frame("H5D", gr.n)
    s, m = IOStats(gr), MetaStats(gr)
    _io_counters(f, "H5D", s, agg=True)
    _meta_counters(f, "H5D", m)
    f.set("H5D_OPENS", m.count(Meta.OPEN))
    f.set("H5D_READS", s.ops["READ"])
    f.set("H5D_WRITES", s.ops["WRITE"])
    f.set("H5D_REGULAR_HYPERSLAB_SELECTS", s.ops["READ"] + s.ops["WRITE"])
    coll = s.modes[("READ", Mode.COLL)] + s.modes[("WRITE", Mode.COLL)]
    f.set("H5D_USE_MPIIO_COLLECTIVE", (coll > 0).astype(np.int64))
    dtype = _object_shape(f, "H5D", gr, t, "H5D_DATASPACE_NDIMS")
    _access_dims(f, "H5D", dtype)
    return f


def _access_dims(f: Frame, p: str, dtype: np.ndarray) -> None:
    for i in range(1, 5):
        f.set(f"{p}_ACCESS{i}_LENGTH_D1", f.cols[f"{p}_ACCESS{i}_ACCESS"] // np.maximum(dtype, 1))


def _pncvar(gr: RankGroups, t: Trace) -> Frame:
    f = Frame("PNETCDF_VAR", gr.n)
    s, m = IOStats(gr), MetaStats(gr)
    _io_counters(f, "PNETCDF_VAR", s, agg=True)
    _meta_counters(f, "PNETCDF_VAR", m)
    f.set("PNETCDF_VAR_OPENS", m.count(Meta.OPEN))
    for op, put in (("READ", "GET"), ("WRITE", "PUT")):
        f.set(f"PNETCDF_VAR_INDEP_{op}S", s.modes[(op, Mode.INDEP)])
        f.set(f"PNETCDF_VAR_COLL_{op}S", s.modes[(op, Mode.COLL)])
        f.set(f"PNETCDF_VAR_NB_{op}S", s.modes[(op, Mode.NB)])
        f.set(f"PNETCDF_VAR_{put}_VARA", s.modes[(op, Mode.INDEP)] + s.modes[(op, Mode.COLL)])
        f.set(f"PNETCDF_VAR_I{put}_VARA", s.modes[(op, Mode.NB)])
    dtype = _object_shape(f, "PNETCDF_VAR", gr, t, "PNETCDF_VAR_NDIMS")
    _access_dims(f, "PNETCDF_VAR", dtype)
    return f


def _pncfile(gr: RankGroups, t: Trace, var: pd.DataFrame | None, width: int) -> Frame:
    f = Frame("PNETCDF_FILE", gr.n)
    m = MetaStats(gr)
    f.set("PNETCDF_FILE_CREATES", m.count(Meta.CREATE))
    f.set("PNETCDF_FILE_OPENS", m.count(Meta.OPEN))
    f.set("PNETCDF_FILE_INDEP_WAITS", m.count(Meta.WAIT_INDEP))
    f.set("PNETCDF_FILE_COLL_WAITS", m.count(Meta.WAIT_COLL))
    f.set("PNETCDF_FILE_SYNCS", m.count(Meta.FSYNC))
    _meta_counters(f, "PNETCDF_FILE", m)
    f.set("PNETCDF_FILE_F_META_TIME", m.time - m.wait_time)
    f.set("PNETCDF_FILE_F_WAIT_TIME", m.wait_time)
    f.set("PNETCDF_FILE_F_WAIT_START_TIMESTAMP", m.wait[0])
    f.set("PNETCDF_FILE_F_WAIT_END_TIMESTAMP", m.wait[1])
    if var is not None and len(var):
        # The file's bytes are its variables' bytes, per rank.
        keys = gr.rec * width + gr.rank
        vk = var["parent"].to_numpy() * width + var["rank"].to_numpy()
        for col, out in (
            ("PNETCDF_VAR_BYTES_READ", "PNETCDF_FILE_BYTES_READ"),
            ("PNETCDF_VAR_BYTES_WRITTEN", "PNETCDF_FILE_BYTES_WRITTEN"),
        ):
            sums = pd.Series(var[col].to_numpy()).groupby(vk).sum()
            f.set(out, sums.reindex(keys, fill_value=0).to_numpy())
    return f


# --- shared-file reduction ------------------------------------------------------------------------


def _role(module: str, name: str) -> str:
    if name.endswith("_START_TIMESTAMP"):
        return "min"
    if name.endswith("_END_TIMESTAMP"):
        return "max"
    if "_FASTEST_RANK" in name or "_SLOWEST_RANK" in name or "_VARIANCE_RANK" in name:
        return "rank"
    if "_ACCESS" in name or "_STRIDE" in name:
        return "common"
    if name.endswith("_TIME_SIZE"):
        return "timesize"
    for part in (
        "MAX_BYTE_",
        "_F_MAX_",
        "ALIGNMENT",
        "_MODE",
        "USE_MPIIO",
        "DATASPACE_",
        "DATATYPE_SIZE",
        "_NDIMS",
        "_NPOINTS",
        "IS_RECORD_VAR",
        "USE_DEPRECATED",
        "CHUNK_SIZE",
    ):
        if part in name:
            return "max"
    return "sum"


def _merge_common(df: pd.DataFrame, prefix: str, key: str, shared: np.ndarray, out: pd.DataFrame) -> None:
    """Darshan merges the ranks' top-4 lists: counts of equal values add up, the top 4 remain."""
    fields = [f for f in ("ACCESS", "STRIDE") if f"{prefix}_{f}1_COUNT" in df.columns]
    sub = df[shared]
    for fld in fields:
        tag = "ACCESS" if fld == "ACCESS" else "STRIDE"
        parts = [
            pd.DataFrame(
                {
                    "g": sub[key].to_numpy(),
                    "v": sub[f"{prefix}_{fld}{i}_{tag}"].to_numpy(),
                    "c": sub[f"{prefix}_{fld}{i}_COUNT"].to_numpy(),
                }
            )
            for i in range(1, 5)
        ]
        long = pd.concat(parts, ignore_index=True)
        long = long[(long["c"] > 0) & (long["v"] != 0)]
        sums = long.groupby(["g", "v"], sort=False)["c"].sum().reset_index()
        sums = sums.sort_values(["g", "c", "v"], ascending=[True, False, False], kind="stable")
        sums["pos"] = sums.groupby("g").cumcount()
        sums = sums[sums["pos"] < 4]
        row_of = pd.Series(np.arange(len(out)), index=out[key].to_numpy())
        for i in range(1, 5):
            out[f"{prefix}_{fld}{i}_{tag}"] = 0
            out[f"{prefix}_{fld}{i}_COUNT"] = 0
        for i in range(4):
            pick = sums[sums["pos"] == i]
            rows = row_of.reindex(pick["g"].to_numpy()).to_numpy()
            out.loc[out.index[rows], f"{prefix}_{fld}{i + 1}_{tag}"] = pick["v"].to_numpy()
            out.loc[out.index[rows], f"{prefix}_{fld}{i + 1}_COUNT"] = pick["c"].to_numpy()


def reduce_shared(module: str, df: pd.DataFrame, nprocs: int) -> pd.DataFrame:
    """Darshan's shared-record reduction: a record every rank has becomes one rank -1 record."""
    if df.empty:
        return df
    nranks = df.groupby("_key")["rank"].transform("nunique")
    shared = (nranks == nprocs).to_numpy()
    if not shared.any():
        return df
    prefix = {"MPI-IO": "MPIIO"}.get(module, module)
    ints, floats = columns(module)
    sub = df[shared]
    g = sub.groupby("_key", sort=False)
    roles = {c: _role(module, c) for c in (*ints, *floats)}
    by = {r: [c for c, x in roles.items() if x == r] for r in ("min", "max")}
    summed = [c for c, x in roles.items() if x not in ("min", "max")]
    firsts = ["id", "file_rec_id"] if "file_rec_id" in df.columns else ["id"]
    if module == "DFS":
        # darshan-dfs.c: start timestamps are the minimum over the ranks that have one (non-zero).
        starts = sub[by["min"]].where(sub[by["min"]] > 0).groupby(sub["_key"], sort=False).min().fillna(0.0)
    else:
        starts = g[by["min"]].min()
    out = pd.concat([g[firsts].first(), g[summed].sum(), starts, g[by["max"]].max()], axis=1).reset_index()
    out["rank"] = -1
    # MAX_*_TIME_SIZE: from the rank with the longest request.
    for op in ("READ", "WRITE"):
        size_col, time_col = f"{prefix}_MAX_{op}_TIME_SIZE", f"{prefix}_F_MAX_{op}_TIME"
        if size_col in roles:
            best = sub.loc[sub.groupby("_key", sort=False)[time_col].idxmax()]
            out[size_col] = best.set_index("_key")[size_col].reindex(out["_key"]).to_numpy()
    _merge_common(df, prefix, "_key", shared, out)
    if module in ("H5D", "PNETCDF_VAR"):
        dtype = out[f"{prefix}_DATATYPE_SIZE"].to_numpy()
        for i in range(1, 5):
            out[f"{prefix}_ACCESS{i}_LENGTH_D1"] = out[f"{prefix}_ACCESS{i}_ACCESS"].to_numpy() // np.maximum(dtype, 1)
    if module in RANKED:
        rd = f"{prefix}_BYTES_READ"
        wr = f"{prefix}_BYTES_WRITTEN"
        time = sub[f"{prefix}_F_READ_TIME"] + sub[f"{prefix}_F_WRITE_TIME"] + sub[f"{prefix}_F_META_TIME"]
        moved = sub[rd] + sub[wr]
        per = pd.DataFrame(
            {
                "_key": sub["_key"].to_numpy(),
                "rank": sub["rank"].to_numpy(),
                "t": time.to_numpy(),
                "b": moved.to_numpy(),
            }
        )
        per = per.sort_values(["_key", "rank"], kind="stable")
        pg = per.groupby("_key", sort=False)
        fast = per.loc[pg["t"].idxmin()].set_index("_key").reindex(out["_key"])
        slow = per.loc[pg["t"].idxmax()].set_index("_key").reindex(out["_key"])
        out[f"{prefix}_FASTEST_RANK"] = fast["rank"].to_numpy()
        out[f"{prefix}_FASTEST_RANK_BYTES"] = fast["b"].to_numpy()
        out[f"{prefix}_F_FASTEST_RANK_TIME"] = fast["t"].to_numpy()
        out[f"{prefix}_SLOWEST_RANK"] = slow["rank"].to_numpy()
        out[f"{prefix}_SLOWEST_RANK_BYTES"] = slow["b"].to_numpy()
        out[f"{prefix}_F_SLOWEST_RANK_TIME"] = slow["t"].to_numpy()
        out[f"{prefix}_F_VARIANCE_RANK_TIME"] = pg["t"].var(ddof=0).reindex(out["_key"]).to_numpy()
        out[f"{prefix}_F_VARIANCE_RANK_BYTES"] = pg["b"].var(ddof=0).reindex(out["_key"]).to_numpy()
    rest = df[~shared]
    merged = pd.concat([out[df.columns], rest], ignore_index=True)
    return merged


# --- tables -----------------------------------------------------------------------------------


def _table(module: str, gr: RankGroups, f: Frame, t: Trace) -> pd.DataFrame:
    cols: dict[str, np.ndarray] = {
        "id": t.record_ids(gr.rec),
        "rank": gr.rank.astype(np.int64),
    }
    if module in WITH_FILE_REC:
        cols["file_rec_id"] = t.record_ids(np.array([t.parent[int(r)] for r in gr.rec], dtype=np.int64))
    ints, floats = columns(module)
    for c in (*ints, *floats):
        cols[c] = f.cols[c]
    df = pd.DataFrame(cols)
    df["_key"] = gr.rec
    return df


def _finish(df: pd.DataFrame, module: str, nprocs: int) -> pd.DataFrame:
    df = reduce_shared(module, df, nprocs)
    df = df.sort_values(["_key", "rank"], kind="stable")
    ints, floats = columns(module)
    df = df.drop(columns=["_key"]).reset_index(drop=True)
    for c in ints:
        df[c] = df[c].astype(np.int64)
    for c in floats:
        df[c] = df[c].astype(np.float64)
    df["id"] = df["id"].astype(np.uint64)
    df["rank"] = df["rank"].astype(np.int64)
    if "file_rec_id" in df.columns:
        df["file_rec_id"] = df["file_rec_id"].astype(np.uint64)
    return df


def _lustre(t: Trace, meta: dict[str, np.ndarray]) -> pd.DataFrame | None:
    sel = (meta["layer"] == TraceLayer.POSIX) & (meta["kind"] == Meta.OPEN)
    recs, ranks = meta["rec"][sel], meta["rank"][sel]
    lus = np.array([t.files[int(r)].lustre is not None for r in recs], dtype=bool) if len(recs) else np.zeros(0, bool)
    recs, ranks = recs[lus], ranks[lus]
    if len(recs) == 0:
        return None
    pairs = pd.DataFrame({"rec": recs, "rank": ranks}).drop_duplicates()
    nr = pairs.groupby("rec")["rank"].transform("nunique")
    pairs.loc[nr == t.nprocs, "rank"] = -1
    pairs = pairs.drop_duplicates().sort_values(["rec", "rank"], kind="stable")
    rows = []
    for rec, rank in zip(pairs["rec"].tolist(), pairs["rank"].tolist(), strict=True):
        lay = t.files[int(rec)].lustre
        assert lay is not None
        rows.append(
            {
                "id": record_id(t.names[int(rec)]),
                "rank": int(rank),
                "component": 0,
                "stripe_size": lay.stripe_size,
                "stripe_count": lay.stripe_count,
                "stripe_pattern": 0,
                "flags": 0,
                "ext_start": 0,
                "ext_end": -1,
                "mirror_id": 0,
                "pool_name": lay.pool,
                "osts": lay.osts,
            }
        )
    comp = [n.removeprefix("LUSTRE_COMP_").lower() for n in be.counter_names("LUSTRE_COMP")]
    df = pd.DataFrame(rows)
    out = pd.DataFrame(
        {
            "id": df["id"].to_numpy(dtype=np.uint64),
            "rank": df["rank"].to_numpy(dtype=np.int64),
            "component": df["component"].to_numpy(dtype=np.int64),
            **{c: df[c].to_numpy(dtype=np.int64) for c in comp},
        }
    )
    out["pool_name"] = df["pool_name"].tolist()
    out["osts"] = df["osts"].tolist()
    return out


def call_stacks(s: Scenario) -> tuple[np.ndarray, dict[int, tuple[int, ...]], dict[int, SourceLocation]]:
    """Stack id per program phase (-1: none), the distinct stacks, and the address-to-line table.

    Frames without an address get a made-up but stable one per distinct (function, file, line); a
    scenario that gives addresses (of a real binary) keeps them, so ``--binary`` can map them.
    """
    phase_stack = np.full(max(len(s.program), 1), -1, dtype=np.int32)
    addr_of: dict[tuple[str, str, int], int] = {}
    stacks: dict[tuple[int, ...], int] = {}
    lines: dict[int, SourceLocation] = {}
    for i, ph in enumerate(s.program):
        if not ph.stack:
            continue
        addrs = []
        for fr in ph.stack:
            key = (fr.function, fr.file, fr.line)
            a = fr.address if fr.address is not None else addr_of.setdefault(key, 0x401000 + 0x40 * len(addr_of))
            addrs.append(a)
            lines.setdefault(a, SourceLocation(*key))
        phase_stack[i] = stacks.setdefault(tuple(addrs), len(stacks))
    by_id = {sid: addrs for addrs, sid in stacks.items()}
    return phase_stack, by_id, (lines if s.stacks == "table" else {})


def dxt_table(
    t: Trace, io: dict[str, np.ndarray], layer: TraceLayer, hostname: str, phase_stack: np.ndarray | None = None
) -> pd.DataFrame | None:
    sel = io["layer"] == layer
    if not sel.any():
        return None
    recs, ranks = io["rec"][sel], io["rank"][sel]
    uniq, inv = np.unique(recs, return_inverse=True)
    ids = t.record_ids(uniq)[inv.reshape(-1)]
    nodes = node_of(t.nprocs, t.nodes)
    hosts = np.array([hostname.format(node=i) for i in range(t.nodes)], dtype=object)
    df = pd.DataFrame(
        {
            "id": ids,
            "rank": ranks,
            "hostname": hosts[nodes[ranks]],
            "op": np.where(io["write"][sel], "write", "read"),
            "offset": io["offset"][sel],
            "length": io["length"][sel],
            "start": io["start"][sel],
            "end": io["end"][sel],
        }
    )
    if phase_stack is not None and (phase_stack >= 0).any():
        ph = io["phase"][sel]
        df["stack"] = np.where(ph >= 0, phase_stack[np.clip(ph, 0, len(phase_stack) - 1)], -1)
    return df


def _record_name(t: Trace, key: int) -> str:
    """The record's name in the log: DFS names a file by its path inside the container."""
    st = t.files.get(key)
    if st is None or st.mount.fs != "daos":
        return t.names[key]
    inside = st.path[len(st.mount.path.rstrip("/")) :]
    return inside if inside.startswith("/") else "/" + inside


def container_uuids(mount_path: str) -> tuple[bytes, bytes]:
    """Stable (pool, container) UUIDs for a DAOS mount ``/.../<pool>/<container>``."""
    parts = [p for p in mount_path.split("/") if p]
    pool = parts[-2] if len(parts) >= 2 else mount_path
    cont = parts[-1] if parts else mount_path
    pool_id = uuid.uuid5(uuid.NAMESPACE_URL, f"daos://{pool}")
    return pool_id.bytes, uuid.uuid5(pool_id, cont).bytes


def _dfs_finish(df: pd.DataFrame, gr: RankGroups, t: Trace) -> pd.DataFrame:
    """Drop records without operations (as darshan-dfs.c does) and add each record's pool and container."""
    keep = df[list(DFS_OPS)].sum(axis=1).to_numpy() > 0
    df = df[keep].reset_index(drop=True)
    ids = t.record_ids(gr.rec).tolist()
    by_id = {i: t.files[int(r)].mount.path for i, r in zip(ids, gr.rec.tolist(), strict=True)}
    uuids = [container_uuids(by_id[int(i)]) for i in df["id"].tolist()]
    df["pool_uuid"] = [u[0] for u in uuids]
    df["cont_uuid"] = [u[1] for u in uuids]
    return df


def derive_tables(s: Scenario, t: Trace) -> tuple[JobInfo, dict[int, str], dict[str, pd.DataFrame]]:
    """The job record, the name table and every module's table for a simulated program."""
    io, meta = t.io(), t.meta()
    tables: dict[str, pd.DataFrame] = {}
    builders = {
        TraceLayer.POSIX: _posix,
        TraceLayer.STDIO: _stdio,
        TraceLayer.MPIIO: _mpiio,
        TraceLayer.H5F: _h5f,
        TraceLayer.H5D: _h5d,
        TraceLayer.PNCVAR: _pncvar,
        TraceLayer.DFS: _dfs,
    }
    used: set[int] = set()
    width = t.nprocs + 1
    var_raw: pd.DataFrame | None = None
    for layer, build in builders.items():
        gr = _group(io, meta, layer, t.nprocs)
        if gr.n == 0:
            continue
        df = _table(MODULE[layer], gr, build(gr, t), t)
        if layer == TraceLayer.PNCVAR:
            var_raw = df.assign(parent=[t.parent[int(r)] for r in gr.rec])
        out = _finish(df, MODULE[layer], t.nprocs)
        recs = np.unique(gr.rec)
        if layer == TraceLayer.DFS:
            out = _dfs_finish(out, gr, t)
            kept = set(out["id"].tolist())
            recs = np.array([r for r, i in zip(recs.tolist(), t.record_ids(recs).tolist(), strict=True) if i in kept])
            if out.empty:
                continue
        tables[MODULE[layer]] = out
        used.update(int(r) for r in recs)
        used.update(t.parent[int(r)] for r in np.unique(gr.rec) if int(r) in t.parent)
    gr = _group(io, meta, TraceLayer.PNCFILE, t.nprocs)
    if gr.n:
        df = _table("PNETCDF_FILE", gr, _pncfile(gr, t, var_raw, width), t)
        tables["PNETCDF_FILE"] = _finish(df, "PNETCDF_FILE", t.nprocs)
        used.update(int(r) for r in np.unique(gr.rec))
    lus = _lustre(t, meta)
    if lus is not None:
        tables["LUSTRE"] = lus
    if s.dxt:
        phase_stack = call_stacks(s)[0]
        for layer, name in ((TraceLayer.POSIX, "DXT_POSIX"), (TraceLayer.MPIIO, "DXT_MPIIO")):
            d = dxt_table(t, io, layer, s.job.hostname, phase_stack)
            if d is not None:
                tables[name] = d
    keys = np.array(sorted(used), dtype=np.int64)
    names = dict(zip(t.record_ids(keys).tolist(), [_record_name(t, k) for k in keys.tolist()], strict=True))
    runtime = s.job.runtime if s.job.runtime is not None else float(np.ceil(t.end_time)) + 1.0
    if runtime < t.end_time:
        raise ProgramError(f"the program takes {t.end_time:.3f} s (I/O and compute) but job.runtime is {runtime:g} s")
    if s.heatmap:
        hm, hm_names = heatmap_table(t, io, runtime)
        if hm is not None:
            tables["HEATMAP"] = hm
            names.update(hm_names)
    whole = int(runtime)
    job = JobInfo(
        jobid=s.job.jobid,
        uid=s.job.uid,
        nprocs=s.job.nprocs,
        start_sec=s.job.start,
        start_nsec=0,
        end_sec=s.job.start + whole,
        end_nsec=round((runtime - whole) * 1e9),
        exe=s.job.exe,
        darshan_version=s.job.darshan_version,
        # A DAOS container is not a kernel mount: DFS talks to it through libdfs, so it is not in the table.
        mounts=[(m.path, m.fs) for m in s.job.mounts if m.fs != "daos"],
        metadata=dict(s.job.metadata),
    )
    return job, names, tables
