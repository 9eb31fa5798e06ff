"""Lustre views: each file's stripe layout against how the job used it, and the load each OST carried.

Checks judge these (``checks/lustre.py``); actions, the verdict and plots read them too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iodiag.analysis.views.context import Context
from iodiag.ingest.table import Groups, Table


@dataclass(frozen=True)
class LaidOutFile:
    record_id: int
    stripe_size: int
    stripe_count: int
    osts: tuple[int, ...]
    bytes_written: int
    bytes_read: int
    io_time: float
    wall_time: float
    """The file's read and write time as the job waited for it: its slowest rank's, not the sum over ranks (a
    shared file 8,192 ranks read at once is not 8,192 times slower per byte than a file one rank reads)."""
    extent: int
    writers: int
    readers: int
    common_size: int
    common_share: float
    not_aligned_share: float
    """Share of the file's requests that do not start on a stripe (Darshan's file alignment) boundary."""
    ranks: tuple[int, ...]
    backward_share: float = 0.0
    """Share of the file's requests that go backwards (random access): slow per byte on any OST."""


def _common_access(posix: Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per file (ids ascending): the most frequent request size over its records and that size's request count.

    Ties go to the larger size, so the choice does not depend on record order.
    """
    ids = np.concatenate([posix["id"]] * 4)
    size = np.concatenate([posix[f"POSIX_ACCESS{i}_ACCESS"] for i in range(1, 5)])
    count = np.concatenate([posix[f"POSIX_ACCESS{i}_COUNT"] for i in range(1, 5)])
    keep = (size > 0) & (count > 0)
    ids, size, count = ids[keep], size[keep], count[keep]
    if not len(ids):
        return ids, size, count
    # Sum the counts of each (file, size).
    order = np.lexsort((size, ids))
    ids, size, count = ids[order], size[order], count[order]
    starts = np.flatnonzero(np.r_[True, (ids[1:] != ids[:-1]) | (size[1:] != size[:-1])])
    ids, size, count = ids[starts], size[starts], np.add.reduceat(count, starts)
    # Per file, the last after sorting by (count, size): the largest count, ties to the larger size.
    order = np.lexsort((size, count, ids))
    ids, size, count = ids[order], size[order], count[order]
    last = np.flatnonzero(np.r_[ids[1:] != ids[:-1], True])
    return ids[last], size[last], count[last]


def layouts(ctx: Context) -> list[LaidOutFile]:
    return ctx.memo("lustre_layouts", lambda: _build_layouts(ctx))


def _distinct_pairs(ids: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (id, value) pairs, sorted by id, then value."""
    order = np.lexsort((values, ids))
    i, v = ids[order], values[order]
    keep = np.r_[True, (i[1:] != i[:-1]) | (v[1:] != v[:-1])] if len(i) else np.zeros(0, dtype=bool)
    return i[keep], v[keep]


def _build_layouts(ctx: Context) -> list[LaidOutFile]:
    lus = ctx.records("LUSTRE")
    posix = ctx.posix_records
    if lus.empty or posix.empty:
        return []
    nprocs = max(ctx.meta.nprocs, 1)
    lus_ids = np.unique(lus["id"])
    posix = posix.where(np.isin(posix["id"], lus_ids))
    if posix.empty:
        return []
    files = ctx.files
    files = files.where(np.isin(files["id"], lus_ids))
    fid = files["id"]  # ascending: one layout per file, in this order
    io_time = files["POSIX_F_READ_TIME"] + files["POSIX_F_WRITE_TIME"]
    ops = files["POSIX_READS"] + files["POSIX_WRITES"]
    extent = np.maximum(files["POSIX_MAX_BYTE_WRITTEN"], files["POSIX_MAX_BYTE_READ"])
    # Each open starts over at offset 0 (a reread from the start is not random), so opens are not backward.
    backward = np.maximum(
        ops - files.num("POSIX_SEQ_READS") - files.num("POSIX_SEQ_WRITES") - np.maximum(files.num("POSIX_OPENS"), 1),
        0,
    )
    wrote = posix["POSIX_WRITES"] > 0
    wg = Groups(_distinct_pairs(posix["id"][wrote], posix["rank"][wrote])[0])  # one row per (file, writing rank)
    writers = wg.lookup(fid, wg.count(), 0)
    read = posix["POSIX_READS"] > 0
    rg = Groups(_distinct_pairs(posix["id"][read], posix["rank"][read])[0])  # one row per (file, reading rank)
    readers = rg.lookup(fid, rg.count(), 0)
    # Per file, the slowest rank's data time: a shared (reduced) record keeps it (less nothing: Darshan's
    # slowest-rank time includes the metadata calls, a small part for files worth comparing); per-rank records
    # give it directly.
    rank_time = posix.num("POSIX_F_READ_TIME") + posix.num("POSIX_F_WRITE_TIME")
    if "POSIX_F_SLOWEST_RANK_TIME" in posix.columns:
        rank_time = np.where(posix["rank"] < 0, posix.num("POSIX_F_SLOWEST_RANK_TIME"), rank_time)
    tg = posix.group_by("id")
    wall = tg.lookup(fid, tg.max(rank_time), 0.0)
    cid, csize, ccount = _common_access(posix)
    cg = Groups(cid)
    size = cg.lookup(fid, csize, 0)
    count = cg.lookup(fid, ccount, 0)
    lg = lus.group_by("id")
    first = lg.argmin(lus["component"])  # the first component (lowest number, then first record)
    stripe_size = lg.lookup(fid, lus["stripe_size"][first])
    stripe_count = lg.lookup(fid, lg.max(lus["stripe_count"]))
    comps = np.lexsort((lus["component"], lus["id"]))
    osts = _grouped_tuples(lus["id"][comps], lus["osts"][comps], flatten=True)
    own = posix["rank"] >= 0
    ranks = _grouped_tuples(*_distinct_pairs(posix["id"][own], posix["rank"][own]), flatten=False)
    out = []
    for rid, n_ops, sz, cnt, ss, sc, bw, br, t, wt, ext, shared, w, r, na, back in zip(
        fid.tolist(),
        ops.tolist(),
        size.tolist(),
        count.tolist(),
        stripe_size.tolist(),
        stripe_count.tolist(),
        files["POSIX_BYTES_WRITTEN"].tolist(),
        files["POSIX_BYTES_READ"].tolist(),
        io_time.tolist(),
        wall.tolist(),
        extent.tolist(),
        files["shared"].tolist(),
        writers.tolist(),
        readers.tolist(),
        files["POSIX_FILE_NOT_ALIGNED"].tolist(),
        backward.tolist(),
        strict=True,
    ):
        ops_f = float(n_ops)
        common = 0 if ops_f <= 0 else int(sz)
        out.append(
            LaidOutFile(
                record_id=int(rid),
                stripe_size=int(ss),
                stripe_count=int(sc),
                osts=osts.get(int(rid), ()),
                bytes_written=int(bw),
                bytes_read=int(br),
                io_time=float(t),
                wall_time=min(float(wt), float(t)),
                extent=max(int(ext) + 1, 0),
                writers=nprocs if shared and w > 0 else int(w),
                readers=nprocs if shared and r > 0 else int(r),
                common_size=common,
                common_share=min(float(cnt) / ops_f, 1.0) if common else 0.0,
                not_aligned_share=min(float(na) / ops_f, 1.0) if ops_f > 0 else 0.0,
                ranks=ranks.get(int(rid), ()),
                backward_share=min(float(back) / ops_f, 1.0) if ops_f > 0 else 0.0,
            )
        )
    return out


def _grouped_tuples(keys: np.ndarray, values: np.ndarray, flatten: bool) -> dict[int, tuple[int, ...]]:
    """Group ``values`` by sorted ``keys`` into tuples without a Python call per group."""
    if len(keys) == 0:
        return {}
    uniq, starts = np.unique(keys, return_index=True)
    out: dict[int, tuple[int, ...]] = {}
    for k, chunk in zip(uniq.tolist(), np.split(values, starts[1:]), strict=True):
        items = [int(o) for t in chunk for o in t] if flatten else [int(v) for v in chunk]
        out[int(k)] = tuple(dict.fromkeys(items))
    return out


LATENCY_BOUND_REQUEST = 64 << 10
"""Files whose usual request is smaller than this move at the speed of round trips, not of an OST's disks: a
per-byte comparison of OSTs leaves them out (their cost is the small requests' finding, P05/P06)."""
RANDOM_ON_ANY_OST = 0.2
RANDOM_LATENCY_BOUND = 1 << 20
"""Files with more than RANDOM_ON_ANY_OST of their requests going backwards, in requests under 1 MiB, move at
the speed of seeks on any OST: the per-byte comparison leaves them out too (their cost is the random-access
finding, P11/P13). Random 1 MiB or larger requests are mostly transfer and stay in."""


def ost_load(ctx: Context) -> Table:
    """Bytes and I/O time per OST, spreading each file evenly over the OSTs its data reached: columns ``ost``
    (ascending, OSTs with traffic only), ``bytes``, ``time`` (seconds, summed over ranks: each file's whole
    time on each of its OSTs, which serve it at once), ``share`` (the same time split evenly over the
    file's OSTs, so the column adds up to the files' time), ``wall`` (seconds, each file's slowest rank:
    what speed per byte is compared by) and ``files``."""
    return ctx.memo("ost_load", lambda: _ost_load(ctx))


def bandwidth_load(ctx: Context, direction: str | None = None) -> Table:
    """``ost_load`` over the files whose usual request is at least ``LATENCY_BOUND_REQUEST`` and whose access is
    mostly in order: what an OST's speed per byte can be judged by. ``direction`` ("read" or "write") keeps the
    files that moved mostly that way."""
    return ctx.memo(
        f"ost_load_bandwidth:{direction}",
        lambda: _ost_load(ctx, min_request=LATENCY_BOUND_REQUEST, sequential_only=True, direction=direction),
    )


def _ost_load(ctx: Context, min_request: int = 0, sequential_only: bool = False, direction: str | None = None) -> Table:
    osts: list[int] = []
    spread: list[int] = []
    each: list[float] = []  # bytes per OST
    times: list[float] = []
    walls: list[float] = []
    ids: list[int] = []
    for f in layouts(ctx):
        if not f.osts or (min_request and 0 < f.common_size < min_request):
            continue
        if sequential_only and f.backward_share > RANDOM_ON_ANY_OST and 0 < f.common_size < RANDOM_LATENCY_BOUND:
            continue
        if direction is not None and (f.bytes_read >= f.bytes_written) != (direction == "read"):
            continue
        used = len(f.osts)
        if f.stripe_size > 0 and f.extent > 0:
            used = max(1, min(used, -(-f.extent // f.stripe_size)))
        osts.extend(f.osts[:used])
        spread.append(used)
        each.append((f.bytes_written + f.bytes_read) / used)
        times.append(f.io_time)
        walls.append(f.wall_time)
        ids.append(f.record_id)
    if not osts:
        return Table(
            {
                "ost": np.zeros(0, dtype=np.int64),
                "bytes": np.zeros(0),
                "time": np.zeros(0),
                "share": np.zeros(0),
                "wall": np.zeros(0),
                "files": np.zeros(0, np.int64),
            }
        )
    g = Groups(np.asarray(osts, dtype=np.int64))
    n = np.asarray(spread)  # rows per file
    load = Table(
        {
            "ost": g.keys,
            "bytes": g.sum(np.repeat(np.asarray(each, dtype=float), n)),
            "time": g.sum(np.repeat(np.asarray(times, dtype=float), n)),
            "share": g.sum(np.repeat(np.asarray(times, dtype=float) / n, n)),
            "wall": g.sum(np.repeat(np.asarray(walls, dtype=float), n)),
            "files": g.nunique(np.repeat(np.asarray(ids, dtype=np.uint64), n)),
        }
    )
    keep = np.flatnonzero(load["bytes"] > 0)
    return load if len(keep) == len(load) else Table({k: load[k][keep] for k in load}, len(keep))
