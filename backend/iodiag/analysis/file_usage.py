"""Which files the job's I/O went to: each file's time and bytes at its top layer, largest first.

What "which file is worst?" is answered from when no finding names a file: a job whose one big file takes all
of its I/O time has no finding about that file, but the user still wants its name and its seconds.
"""

from __future__ import annotations

import pandas as pd

from iodiag.analysis.context import TOP_LAYER_BYTES, TOP_LAYER_TIME, Context
from iodiag.analysis.models import FileUsage

TOP_FILES = 10


def busiest_files(ctx: Context, n: int = TOP_FILES) -> tuple[list[FileUsage], int]:
    """The ``n`` files with the most I/O time (then bytes), and how many files had any I/O."""
    parts = []
    nprocs = max(ctx.meta.nprocs, 1)
    for layer, df in ctx.top_layer:
        if not len(df):
            continue
        rd, wr, md, _ = TOP_LAYER_TIME[layer]
        br, bw = TOP_LAYER_BYTES[layer]
        frame = pd.DataFrame(
            {
                "id": df["id"].to_numpy(),
                "layer": layer,
                "time": df[rd].clip(lower=0).to_numpy(dtype=float)
                + df[wr].clip(lower=0).to_numpy(dtype=float)
                + df[md].clip(lower=0).to_numpy(dtype=float),
                "read": df[br].clip(lower=0).to_numpy(dtype="int64"),
                "written": df[bw].clip(lower=0).to_numpy(dtype="int64"),
                # A shared record (rank -1) stands for every rank.
                "ranks": (df["rank"].to_numpy() < 0) * (nprocs - 1) + 1,
            }
        )
        parts.append(frame)
    if not parts:
        return [], 0
    rows = pd.concat(parts, ignore_index=True)
    per_file = rows.groupby(["id", "layer"], sort=False).agg(
        time=("time", "sum"), read=("read", "sum"), written=("written", "sum"), ranks=("ranks", "sum")
    )
    per_file = per_file[(per_file["time"] > 0) | (per_file["read"] + per_file["written"] > 0)]
    total = float(per_file["time"].sum())
    per_file = per_file.assign(bytes=per_file["read"] + per_file["written"]).sort_values(
        ["time", "bytes"], ascending=False, kind="stable"
    )
    out = []
    head = per_file.head(n)
    keys: list[tuple[int, str]] = list(head.index)
    for (rid, layer), (_, r) in zip(keys, head.iterrows(), strict=True):
        path = ctx.path(int(rid))
        out.append(
            FileUsage(
                path=path,
                layer=str(layer),
                io_time_s=float(r["time"]),
                share_of_io=float(r["time"]) / total if total > 0 else 0.0,
                bytes_read=int(r["read"]),
                bytes_written=int(r["written"]),
                ranks=int(min(r["ranks"], nprocs)),
                file_system=ctx.meta.fs_type(path),
            )
        )
    return out, len(per_file)
