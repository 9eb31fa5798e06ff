"""Which files the job's I/O went to: each file's time and bytes at its top layer, largest first.

What "which file is worst?" is answered from when no finding names a file: a job whose one big file takes all
of its I/O time has no finding about that file, but the user still wants its name and its seconds.
"""

from __future__ import annotations

import numpy as np

from iodiag.analysis.context import TOP_LAYER_BYTES, TOP_LAYER_TIME, Context
from iodiag.analysis.models import FileUsage

TOP_FILES = 10


def busiest_files(ctx: Context, n: int = TOP_FILES) -> tuple[list[FileUsage], int]:
    """The ``n`` files with the most I/O time (then bytes), and how many files had any I/O."""
    nprocs = max(ctx.meta.nprocs, 1)
    # One row per (file, layer), layers in counted order and files in the order their records come.
    ids: list[np.ndarray] = []
    layers: list[str] = []
    cols: dict[str, list[np.ndarray]] = {"time": [], "read": [], "written": [], "ranks": [], "low": [], "high": []}
    for layer, df in ctx.counted_layers:
        if not len(df):
            continue
        rd, wr, md, _ = TOP_LAYER_TIME[layer]
        br, bw = TOP_LAYER_BYTES[layer]
        g = df.group_by("id")
        order = np.argsort(np.unique(df["id"], return_index=True)[1])  # the files by their first record
        time = _clipped(df[rd]).astype(float) + _clipped(df[wr]).astype(float) + _clipped(df[md]).astype(float)
        # A shared record (rank -1) stands for every rank.
        ranks = (df["rank"] < 0) * (nprocs - 1) + 1
        ids.append(g.keys[order])
        layers += [layer] * len(order)
        cols["time"].append(g.sum(time)[order])
        cols["read"].append(g.sum(_clipped(df[br]).astype(np.int64))[order])
        cols["written"].append(g.sum(_clipped(df[bw]).astype(np.int64))[order])
        cols["ranks"].append(g.sum(ranks)[order])
        cols["low"].append(g.min(df["rank"])[order])
        cols["high"].append(g.max(df["rank"])[order])
    if not ids:
        return [], 0
    rid = np.concatenate(ids)
    time, read, written, ranks, low, high = (
        np.concatenate(cols[c]) for c in ("time", "read", "written", "ranks", "low", "high")
    )
    nbytes = read + written
    used = np.flatnonzero((time > 0) | (nbytes > 0))
    total = float(time[used].sum())
    # Most time first, then most bytes; ties keep the order above.
    used = used[np.lexsort((-nbytes[used], -time[used]))]
    out = []
    for i in used[:n].tolist():
        path = ctx.path(int(rid[i]))
        t = float(time[i])
        out.append(
            FileUsage(
                path=path,
                layer=layers[i],
                io_time_s=t,
                share_of_io=t / total if total > 0 else 0.0,
                bytes_read=int(read[i]),
                bytes_written=int(written[i]),
                ranks=int(min(int(ranks[i]), nprocs)),
                # "Who reads restart.h5?": one rank's own records, every layer (a file seen at MPI-IO and POSIX
                # has a row per layer; the top layer's row is the one kept here).
                only_rank=int(low[i]) if low[i] == high[i] and low[i] >= 0 else None,
                file_system=ctx.meta.fs_type(path),
            )
        )
    # The standard streams (<STDOUT>, <STDERR>) are records, not files: "how many files?" leaves them out.
    streams = sum(1 for i in used.tolist() if _is_stream(ctx.path(int(rid[i]))))
    return out, len(used) - streams


def _is_stream(path: str) -> bool:
    return path.startswith("<") and path.endswith(">")


def _clipped(col: np.ndarray) -> np.ndarray:
    """Negative counters (Darshan's -1 for "not recorded") as 0."""
    out: np.ndarray = np.maximum(col, 0)
    return out


def files_by_direction(ctx: Context) -> tuple[int, int]:
    """How many files the job read bytes from, and wrote bytes to (each file once, at its top layer)."""
    read: set[int] = set()
    written: set[int] = set()
    for layer, df in ctx.counted_layers:
        if not len(df):
            continue
        br, bw = TOP_LAYER_BYTES[layer]
        g = df.group_by("id")
        keys = g.keys.astype(np.uint64).tolist()
        for k, r, w in zip(keys, g.sum(_clipped(df[br])).tolist(), g.sum(_clipped(df[bw])).tolist(), strict=True):
            if _is_stream(ctx.path(int(k))):
                continue
            if r > 0:
                read.add(int(k))
            if w > 0:
                written.add(int(k))
    return len(read), len(written)
