"""Cross-layer summary: how each file's I/O changed on its way down HDF5 / PnetCDF -> MPI-IO -> POSIX -> Lustre.

Darshan records every layer separately, with the same record id for a file at MPI-IO, POSIX, H5F,
PNETCDF_FILE and LUSTRE (H5D and PNETCDF_VAR records point at their file through ``file_rec_id``,
or, in logs that leave it 0, through their name ``<file>:<object>``). This module lines the layers
up per file and for the job: operations, bytes, time, request sizes, collective vs independent
calls, which ranks issued the requests (at POSIX under collective MPI-IO: the aggregators) and the
Lustre layout, plus a sentence per file that says what became of the requests.

Pure numpy, deterministic. The summary's models live with the report's (``models.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from iodiag.analysis.models import MAX_RANKS_LISTED, CrossLayerSummary, FileCrossLayer, LayerStats, OpStats
from iodiag.ingest.table import Table

if TYPE_CHECKING:
    from iodiag.analysis.views.context import Context

BINS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS")
"""Darshan's request-size histogram bins; upper bounds are inclusive."""
BIN_UPPER = (100, 1 << 10, 10 << 10, 100 << 10, 1 << 20, 4 << 20, 10 << 20, 100 << 20, 1 << 30, 1 << 62)
BIN_LOWER = (0, *BIN_UPPER[:-1])
BIN_LABELS = (
    "0-100 B",
    "100 B-1 KiB",
    "1-10 KiB",
    "10-100 KiB",
    "100 KiB-1 MiB",
    "1-4 MiB",
    "4-10 MiB",
    "10-100 MiB",
    "100 MiB-1 GiB",
    "over 1 GiB",
)
SMALL_BINS = 3
"""Bins up to 10 KiB (0_100, 100_1K, 1K_10K): the size of HDF5 metadata writes (superblock, object
headers, B-tree nodes, heaps), and of no sensible data request under a parallel I/O library."""

MAX_FILES = 20


# --- computation ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    layer: str
    module: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    bytes_read: str
    bytes_written: str
    read_time: str
    write_time: str
    meta_time: str
    hist: str
    """Histogram column prefix; ``{op}`` is READ or WRITE."""
    access: str
    """ACCESSn prefix, e.g. ``POSIX_ACCESS`` (columns ``{access}{n}_ACCESS`` and ``{access}{n}_COUNT``)."""
    coll_reads: tuple[str, ...] = ()
    coll_writes: tuple[str, ...] = ()


SPECS = {
    "HDF5": _Spec(
        "HDF5",
        "H5D",
        ("H5D_READS",),
        ("H5D_WRITES",),
        "H5D_BYTES_READ",
        "H5D_BYTES_WRITTEN",
        "H5D_F_READ_TIME",
        "H5D_F_WRITE_TIME",
        "H5D_F_META_TIME",
        "H5D_SIZE_{op}_AGG_",
        "H5D_ACCESS",
    ),
    "PnetCDF": _Spec(
        "PnetCDF",
        "PNETCDF_VAR",
        ("PNETCDF_VAR_INDEP_READS", "PNETCDF_VAR_COLL_READS", "PNETCDF_VAR_NB_READS"),
        ("PNETCDF_VAR_INDEP_WRITES", "PNETCDF_VAR_COLL_WRITES", "PNETCDF_VAR_NB_WRITES"),
        "PNETCDF_VAR_BYTES_READ",
        "PNETCDF_VAR_BYTES_WRITTEN",
        "PNETCDF_VAR_F_READ_TIME",
        "PNETCDF_VAR_F_WRITE_TIME",
        "PNETCDF_VAR_F_META_TIME",
        "PNETCDF_VAR_SIZE_{op}_AGG_",
        "PNETCDF_VAR_ACCESS",
        ("PNETCDF_VAR_COLL_READS",),
        ("PNETCDF_VAR_COLL_WRITES",),
    ),
    "MPI-IO": _Spec(
        "MPI-IO",
        "MPI-IO",
        ("MPIIO_INDEP_READS", "MPIIO_COLL_READS", "MPIIO_SPLIT_READS", "MPIIO_NB_READS"),
        ("MPIIO_INDEP_WRITES", "MPIIO_COLL_WRITES", "MPIIO_SPLIT_WRITES", "MPIIO_NB_WRITES"),
        "MPIIO_BYTES_READ",
        "MPIIO_BYTES_WRITTEN",
        "MPIIO_F_READ_TIME",
        "MPIIO_F_WRITE_TIME",
        "MPIIO_F_META_TIME",
        "MPIIO_SIZE_{op}_AGG_",
        "MPIIO_ACCESS",
        ("MPIIO_COLL_READS", "MPIIO_SPLIT_READS"),
        ("MPIIO_COLL_WRITES", "MPIIO_SPLIT_WRITES"),
    ),
    "POSIX": _Spec(
        "POSIX",
        "POSIX",
        ("POSIX_READS",),
        ("POSIX_WRITES",),
        "POSIX_BYTES_READ",
        "POSIX_BYTES_WRITTEN",
        "POSIX_F_READ_TIME",
        "POSIX_F_WRITE_TIME",
        "POSIX_F_META_TIME",
        "POSIX_SIZE_{op}_",
        "POSIX_ACCESS",
    ),
}
LAYER_ORDER = ("HDF5", "PnetCDF", "MPI-IO", "POSIX", "Lustre")


def cross_layer(ctx: Context) -> CrossLayerSummary | None:
    """The summary, computed once per analysis (``ctx.cache``); None for jobs without MPI-IO/HDF5/PnetCDF."""
    return ctx.memo("cross_layer", lambda: _build(ctx))


def all_files(ctx: Context) -> list[FileCrossLayer]:
    """Every file of the summary (the report keeps the largest ``MAX_FILES``)."""
    if cross_layer(ctx) is None:
        return []
    return cast("list[FileCrossLayer]", ctx.cache["cross_layer_files"])


@dataclass
class _Sums:
    """Per-file column sums of one layer (rows follow ``ids``), plus the rank sets."""

    ids: np.ndarray
    cols: dict[str, np.ndarray]
    ranks: list[int | None]
    writer_ranks: list[list[int] | None]
    reader_ranks: list[int | None]
    collective_flag: np.ndarray | None = None
    access: list[dict[int, int]] | None = None


def _build(ctx: Context) -> CrossLayerSummary | None:
    profile = ctx.profile
    nprocs = max(int(ctx.meta.nprocs), 1)
    tables = {name: ctx.records(spec.module) for name, spec in SPECS.items()}
    mpiio = tables["MPI-IO"]
    file_ids: set[int] = set()
    if len(mpiio):
        file_ids.update(mpiio["id"].astype(np.uint64).tolist())
    keyed: dict[str, Table] = {}
    for name in ("HDF5", "PnetCDF"):
        t = tables[name]
        if len(t):
            k = _file_keys(ctx, t)
            t = t.with_columns(_file=k).where(k != 0)
            keyed[name] = t
            file_ids.update(t["_file"].astype(np.uint64).tolist())
    for module in ("H5F", "PNETCDF_FILE"):
        t = ctx.records(module)
        if len(t):
            file_ids.update(t["id"].astype(np.uint64).tolist())
    if not file_ids:
        return None
    posix = tables["POSIX"]
    keyed["MPI-IO"] = mpiio.with_columns(_file=mpiio["id"]) if len(mpiio) else mpiio
    if len(posix):
        posix = posix.where(posix.isin("id", file_ids))
        posix = posix.with_columns(_file=posix["id"])
    keyed["POSIX"] = posix
    sums = {name: _sum(t, SPECS[name], nprocs) for name, t in keyed.items() if len(t)}
    h5f_meta = _meta_by_file(ctx.records("H5F"), "H5F_F_META_TIME")
    lustre = _lustre(ctx.records("LUSTRE"))

    per_file: list[tuple[int, list[LayerStats]]] = []
    for rid in sorted(file_ids):
        layers: list[LayerStats] = []
        for name in ("HDF5", "PnetCDF", "MPI-IO", "POSIX"):
            s = sums.get(name)
            if s is None:
                continue
            idx = np.searchsorted(s.ids, np.uint64(rid))
            if idx >= len(s.ids) or s.ids[idx] != np.uint64(rid):
                continue
            lay = _layer_stats(SPECS[name], s, int(idx))
            if name == "HDF5":
                lay.meta_time_s += h5f_meta.get(rid, 0.0)
            layers.append(lay)
        if rid in lustre:
            layers.append(lustre[rid])
        if layers:
            per_file.append((rid, layers))
    if not per_file:
        return None

    def volume(item: tuple[int, list[LayerStats]]) -> int:
        return max(lay.reads.bytes + lay.writes.bytes for lay in item[1])

    per_file.sort(key=lambda it: (-volume(it), it[0]))
    every = [_file_summary(rid, profile.name(rid), layers) for rid, layers in per_file]
    ctx.cache["cross_layer_files"] = every
    files = every[:MAX_FILES]
    job_layers = _job_layers([layers for _, layers in per_file], nprocs)
    w_agg = _aggregation(job_layers, "writes")
    r_agg = _aggregation(job_layers, "reads")
    return CrossLayerSummary(
        files=files,
        files_total=len(per_file),
        job_layers=job_layers,
        write_aggregation=w_agg,
        read_aggregation=r_agg,
        summary_text=_job_text(job_layers, len(per_file)),
    )


def _file_keys(ctx: Context, t: Table) -> np.ndarray:
    """The file record id of each H5D / PNETCDF_VAR row: ``file_rec_id``, else the ``<file>:<object>`` name."""
    keys = t["file_rec_id"].astype(np.uint64) if "file_rec_id" in t else np.zeros(len(t), np.uint64)
    missing = keys == 0
    if missing.any():
        by_path = {path: rid for rid, path in ctx.profile.names.items()}
        cache: dict[int, int] = {}
        ids = t["id"].astype(np.uint64)
        for i in np.flatnonzero(missing).tolist():
            oid = int(ids[i])
            if oid not in cache:
                cache[oid] = _owner(ctx.profile.name(oid), by_path)
            keys[i] = cache[oid]
    return keys


def _owner(name: str, by_path: dict[str, int]) -> int:
    """The record id of the longest known path that ``name`` continues with ``:``."""
    pos = name.rfind(":")
    while pos > 0:
        rid = by_path.get(name[:pos])
        if rid is not None:
            return int(rid)
        pos = name.rfind(":", 0, pos)
    return 0


def _meta_by_file(t: Table, col: str) -> dict[int, float]:
    if t.empty or col not in t:
        return {}
    g = t.group_by("id")
    s = g.sum(np.fmax(t[col].astype(np.float64), 0.0))  # NaN counts 0, as the DataFrame sum skipped it
    return {int(k): float(v) for k, v in zip(g.keys.tolist(), s.tolist(), strict=True)}


def _lustre(t: Table) -> dict[int, LayerStats]:
    if t.empty:
        return {}
    out: dict[int, LayerStats] = {}
    comps = t.take(np.lexsort((t["component"], t["id"])))
    ids = comps["id"]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    ends = np.r_[starts[1:], len(ids)]
    counts, sizes, ost_lists = comps["stripe_count"], comps["stripe_size"], comps["osts"]
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        osts: list[int] = []
        for o in ost_lists[a:b].tolist():
            for x in o if isinstance(o, (list, tuple, np.ndarray)) else []:
                if int(x) not in osts:
                    osts.append(int(x))
        out[int(ids[a])] = LayerStats(
            layer="Lustre",
            stripe_count=int(counts[a:b].max()),
            stripe_size=int(sizes[a]),
            osts=osts,
        )
    return out


def _sum(df: Table, spec: _Spec, nprocs: int) -> _Sums:
    keys = df["_file"].astype(np.uint64)
    uniq, inv = np.unique(keys, return_inverse=True)
    n = len(uniq)
    cols: list[str] = [
        *spec.reads,
        *spec.writes,
        spec.bytes_read,
        spec.bytes_written,
        spec.read_time,
        spec.write_time,
        spec.meta_time,
        *spec.coll_reads,
        *spec.coll_writes,
    ]
    for op in ("READ", "WRITE"):
        cols += [spec.hist.format(op=op) + b for b in BINS]
    cols = list(dict.fromkeys(c for c in cols if c in df))
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(n + 1))
    raw = np.clip(_matrix(df, cols), 0, None)
    summed = np.add.reduceat(raw[order], bounds[:-1], axis=0) if len(raw) else np.zeros((n, len(cols)))
    out = {c: summed[:, i] for i, c in enumerate(cols)}

    ranks = df["rank"]
    writes = raw[:, [cols.index(c) for c in spec.writes if c in cols]].sum(axis=1)
    reads = raw[:, [cols.index(c) for c in spec.reads if c in cols]].sum(axis=1)
    slowest = _slowest(df, spec)
    rank_count: list[int | None] = []
    writer: list[list[int] | None] = []
    reader: list[int | None] = []
    for f in range(n):
        rows = order[bounds[f] : bounds[f + 1]]
        r = ranks[rows]
        shared = bool((r < 0).any())
        rank_count.append(nprocs if shared else len(np.unique(r)))
        w = rows[writes[rows] > 0]
        if shared and bool((ranks[w] < 0).any()):
            writer.append(_sole_rank(df, spec, w, slowest))
        else:
            writer.append(sorted(set(ranks[w].tolist())))
        rd = rows[reads[rows] > 0]
        reader.append(None if shared and bool((ranks[rd] < 0).any()) else len(set(ranks[rd].tolist())))

    access: list[dict[int, int]] = [{} for _ in range(n)]
    for i in range(1, 5):
        a, c = f"{spec.access}{i}_ACCESS", f"{spec.access}{i}_COUNT"
        if a not in df or c not in df:
            continue
        sizes = df[a].astype(np.int64)
        counts = df[c].astype(np.int64)
        for j in np.flatnonzero((sizes > 0) & (counts > 0)).tolist():
            d = access[int(inv[j])]
            d[int(sizes[j])] = d.get(int(sizes[j]), 0) + int(counts[j])

    flag = None
    if "H5D_USE_MPIIO_COLLECTIVE" in df:
        flag = np.zeros(n, dtype=bool)
        np.logical_or.at(flag, inv, df["H5D_USE_MPIIO_COLLECTIVE"] > 0)
    return _Sums(uniq, out, rank_count, writer, reader, flag, access)


def _matrix(t: Table, cols: list[str]) -> np.ndarray:
    """The columns as one float64 array, a column per name."""
    out = np.empty((len(t), len(cols)), dtype=np.float64)
    for i, c in enumerate(cols):
        out[:, i] = t[c]
    return out


def _slowest(df: Table, spec: _Spec) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(slowest rank, its bytes, the record's bytes) per row, for reduced (shared) records."""
    prefix = spec.bytes_read.split("_BYTES_")[0]
    rank_col, bytes_col = f"{prefix}_SLOWEST_RANK", f"{prefix}_SLOWEST_RANK_BYTES"
    if rank_col not in df or bytes_col not in df:
        return None
    total = df[spec.bytes_read].astype(np.float64) + df[spec.bytes_written].astype(np.float64)
    return df[rank_col], df[bytes_col].astype(np.float64), total


def _sole_rank(
    df: Table, spec: _Spec, rows: np.ndarray, slowest: tuple[np.ndarray, np.ndarray, np.ndarray] | None
) -> list[int] | None:
    """A shared record hides who did the I/O, unless its slowest rank moved all of its bytes (one writer)."""
    if slowest is None or len(rows) != 1:
        return None
    rank, rank_bytes, total = (a[rows[0]] for a in slowest)
    if total > 0 and rank >= 0 and rank_bytes >= total:
        return [int(rank)]
    return None


def _op_stats(spec: _Spec, s: _Sums, i: int, op: str) -> OpStats:
    ops_cols = spec.reads if op == "READ" else spec.writes
    ops = round(sum(s.cols[c][i] for c in ops_cols if c in s.cols))
    nbytes = round(s.cols.get(spec.bytes_read if op == "READ" else spec.bytes_written, np.zeros(i + 1))[i])
    t = float(s.cols.get(spec.read_time if op == "READ" else spec.write_time, np.zeros(i + 1))[i])
    hist = np.array([s.cols.get(spec.hist.format(op=op) + b, np.zeros(i + 1))[i] for b in BINS])
    access = s.access[i] if s.access else {}
    return op_stats(ops, nbytes, t, hist, access)


def op_stats(ops: int, nbytes: int, time_s: float, hist: np.ndarray, access: dict[int, int]) -> OpStats:
    """Request-size statistics from a Darshan histogram and the ACCESS1-4 (size, count) pairs."""
    total = float(hist.sum())
    median_bin = median_bytes = None
    if total > 0:
        k = int(np.searchsorted(np.cumsum(hist), total / 2.0))
        k = min(k, len(BINS) - 1)
        median_bin = BINS[k]
        inside = [(c, sz) for sz, c in access.items() if BIN_LOWER[k] < sz <= BIN_UPPER[k] or (k == 0 and sz <= 100)]
        if inside:
            median_bytes = max(inside)[1]
    typical = max(((c, sz) for sz, c in access.items()), default=None)
    return OpStats(
        ops=ops,
        bytes=nbytes,
        time_s=time_s,
        mean_bytes=nbytes / ops if ops else 0.0,
        median_bin=median_bin,
        median_bytes=median_bytes,
        typical_bytes=typical[1] if typical else None,
        small_ops=round(float(hist[:SMALL_BINS].sum())),
    )


def _layer_stats(spec: _Spec, s: _Sums, i: int) -> LayerStats:
    writer = s.writer_ranks[i]
    lay = LayerStats(
        layer=spec.layer,
        reads=_op_stats(spec, s, i, "READ"),
        writes=_op_stats(spec, s, i, "WRITE"),
        meta_time_s=float(s.cols.get(spec.meta_time, np.zeros(i + 1))[i]),
        ranks=s.ranks[i],
        writer_ranks=None if writer is None else len(writer),
        writer_rank_ids=[] if writer is None else writer[:MAX_RANKS_LISTED],
        reader_ranks=s.reader_ranks[i],
    )
    if spec.coll_writes:
        lay.collective_writes = round(sum(s.cols[c][i] for c in spec.coll_writes if c in s.cols))
        lay.independent_writes = lay.writes.ops - lay.collective_writes
        lay.collective_reads = round(sum(s.cols[c][i] for c in spec.coll_reads if c in s.cols))
        lay.independent_reads = lay.reads.ops - lay.collective_reads
    if s.collective_flag is not None:
        lay.hdf5_collective = bool(s.collective_flag[i])
    return lay


def _job_layers(per_file: list[list[LayerStats]], nprocs: int) -> list[LayerStats]:
    out: list[LayerStats] = []
    for name in LAYER_ORDER:
        lays = [lay for layers in per_file for lay in layers if lay.layer == name]
        if not lays:
            continue
        if name == "Lustre":
            counts = sorted({lay.stripe_count or 0 for lay in lays})
            sizes = sorted({lay.stripe_size or 0 for lay in lays})
            osts = sorted({o for lay in lays for o in lay.osts})
            out.append(
                LayerStats(
                    layer=name,
                    stripe_count=counts[0] if len(counts) == 1 else None,
                    stripe_size=sizes[0] if len(sizes) == 1 else None,
                    osts=osts,
                )
            )
            continue
        job = LayerStats(layer=name, meta_time_s=sum(lay.meta_time_s for lay in lays))
        job.reads = _merge_ops([lay.reads for lay in lays])
        job.writes = _merge_ops([lay.writes for lay in lays])
        job.ranks = max((lay.ranks or 0 for lay in lays), default=0)
        if any(lay.writer_ranks is None and lay.writes.ops for lay in lays):
            job.writer_ranks = None
        else:
            ids = sorted({r for lay in lays for r in lay.writer_rank_ids})
            job.writer_ranks = max(len(ids), max((lay.writer_ranks or 0 for lay in lays), default=0))
            job.writer_rank_ids = ids[:MAX_RANKS_LISTED]
        readers = [lay.reader_ranks for lay in lays if lay.reads.ops]
        known = [r for r in readers if r is not None]
        job.reader_ranks = None if len(known) < len(readers) else max(known, default=0)
        if any(lay.collective_writes is not None for lay in lays):
            job.collective_writes = sum(lay.collective_writes or 0 for lay in lays)
            job.independent_writes = sum(lay.independent_writes or 0 for lay in lays)
            job.collective_reads = sum(lay.collective_reads or 0 for lay in lays)
            job.independent_reads = sum(lay.independent_reads or 0 for lay in lays)
        if any(lay.hdf5_collective is not None for lay in lays):
            job.hdf5_collective = any(lay.hdf5_collective for lay in lays)
        out.append(job)
    return out


def _merge_ops(parts: list[OpStats]) -> OpStats:
    """Job totals; the median bin is the one holding most requests' median by weight of each file's ops."""
    ops = sum(p.ops for p in parts)
    nbytes = sum(p.bytes for p in parts)
    by_bin: dict[str, int] = {}
    sizes: dict[int, int] = {}
    for p in parts:
        if p.median_bin:
            by_bin[p.median_bin] = by_bin.get(p.median_bin, 0) + p.ops
        if p.median_bytes:
            sizes[p.median_bytes] = sizes.get(p.median_bytes, 0) + p.ops
    median_bin = max(by_bin.items(), key=lambda kv: (kv[1], BINS.index(kv[0])))[0] if by_bin else None
    k = BINS.index(median_bin) if median_bin else -1
    inside = [(c, s) for s, c in sizes.items() if k >= 0 and BIN_LOWER[k] < s <= BIN_UPPER[k]]
    typical = [(p.ops, p.typical_bytes) for p in parts if p.typical_bytes]
    return OpStats(
        ops=ops,
        bytes=nbytes,
        time_s=sum(p.time_s for p in parts),
        mean_bytes=nbytes / ops if ops else 0.0,
        median_bin=median_bin,
        median_bytes=max(inside)[1] if inside else None,
        typical_bytes=max(typical)[1] if typical else None,
        small_ops=sum(p.small_ops for p in parts),
    )


def _aggregation(layers: list[LayerStats], op: str) -> float | None:
    m = next((lay for lay in layers if lay.layer == "MPI-IO"), None)
    p = next((lay for lay in layers if lay.layer == "POSIX"), None)
    if m is None or p is None:
        return None
    mo, po = getattr(m, op).ops, getattr(p, op).ops
    return mo / po if mo and po else None


# --- text -----------------------------------------------------------------------------------------


def size_text(s: OpStats) -> str:
    """'median 8 KiB' (or the bin when the ACCESS counters miss it)."""
    if s.median_bytes:
        return f"median {compact_bytes(s.median_bytes)}"
    if s.median_bin:
        return f"median {BIN_LABELS[BINS.index(s.median_bin)]}"
    if s.ops:
        return f"mean {compact_bytes(s.mean_bytes)}"
    return ""


def compact_bytes(n: float) -> str:
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(v) < 1024 or unit == "TiB":
            return f"{v:.0f} {unit}" if unit == "B" or v == int(v) else f"{v:.1f} {unit}".replace(".0 ", " ")
        v /= 1024
    return f"{v:.1f} PiB"


def _ranks_text(lay: LayerStats, op: str) -> str:
    n = lay.writer_ranks if op == "writes" else lay.reader_ranks
    if n is None:
        return f"a record shared by all {lay.ranks:,} ranks" if lay.ranks else ""
    return f"{n:,} rank{'s' if n != 1 else ''}" if n else ""


def _op_phrase(lay: LayerStats, op: str) -> str:
    s: OpStats = getattr(lay, op)
    verb = op
    kind = mixed = ""
    if lay.collective_writes is not None:
        coll = (lay.collective_writes if op == "writes" else lay.collective_reads) or 0
        if coll == s.ops:
            kind = "collective "
        elif coll:
            mixed = f"{coll:,} collective"
        else:
            kind = "independent "
    label = {"HDF5": "HDF5 dataset", "PnetCDF": "PnetCDF variable"}.get(lay.layer, lay.layer)
    head = f"{s.ops:,} {kind}{label} {verb}"
    ranks = _ranks_text(lay, op)
    if ranks:
        ranks = ("on " if lay.layer == "POSIX" and not ranks.startswith("a ") else "from ") + ranks
    details = [x for x in (mixed, size_text(s), ranks) if x]
    return head + (f" ({', '.join(details)})" if details else "")


def _chain(layers: list[LayerStats], op: str) -> str:
    """'A became B and C' over the layers that did this operation."""
    parts = [_op_phrase(lay, op) for lay in layers if lay.layer != "Lustre" and getattr(lay, op).ops]
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return parts[0] + " became " + " and then ".join(parts[1:])


def _ratio_text(layers: list[LayerStats], op: str) -> str:
    r = _aggregation(layers, op)
    if r is None:
        return ""
    if r >= 1:
        return f"{r:,.1f} MPI-IO {op} per POSIX {op[:-1]}"
    return f"each MPI-IO {op[:-1]} was split into {1 / r:,.1f} POSIX {op}"


def _lustre_text(layers: list[LayerStats]) -> str:
    lus = next((lay for lay in layers if lay.layer == "Lustre"), None)
    if lus is None:
        return ""
    if lus.stripe_count is None:
        return "Lustre: mixed layouts"
    size = f" x {compact_bytes(lus.stripe_size)}" if lus.stripe_size else ""
    return f"Lustre: {lus.stripe_count} stripe{'s' if lus.stripe_count != 1 else ''}{size}"


def _text(layers: list[LayerStats]) -> str:
    sentences = []
    for op in ("writes", "reads"):
        chain = _chain(layers, op)
        if chain:
            ratio = _ratio_text(layers, op)
            sentences.append(chain + (f"; {ratio}" if ratio else ""))
    lus = _lustre_text(layers)
    if lus:
        sentences.append(lus)
    return ". ".join(s[0].upper() + s[1:] for s in sentences) + "." if sentences else "No reads or writes."


def _file_summary(rid: int, path: str, layers: list[LayerStats]) -> FileCrossLayer:
    return FileCrossLayer(
        record_id=str(rid),
        path=path,
        layers=layers,
        write_aggregation=_aggregation(layers, "writes"),
        read_aggregation=_aggregation(layers, "reads"),
        summary_text=_text(layers),
    )


def _job_text(layers: list[LayerStats], nfiles: int) -> str:
    return f"{nfiles:,} file{'s' if nfiles != 1 else ''} through MPI-IO, HDF5 or PnetCDF: {_text(layers)}"
