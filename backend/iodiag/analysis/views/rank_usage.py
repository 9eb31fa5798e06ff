"""Per-rank I/O for the report: what each rank read, wrote and waited for, from its own records.

Darshan keeps a record per (file, rank) unless the file was opened by every rank, in which case it is reduced
to one shared record (rank -1) holding totals and only the fastest and slowest rank. A question about one
rank is answered from its own records, and says what a shared file hides.
"""

from __future__ import annotations

import numpy as np

from iodiag.analysis.models import AccessSize, RankSeconds, RankTable, RankUsage
from iodiag.analysis.views.calls import call_columns
from iodiag.analysis.views.context import TOP_LAYER_BYTES, TOP_LAYER_TIME, Context
from iodiag.analysis.views.request_sizes import most_common, size_counts

SHARED_KEPT = 8
"""Shared files whose fastest and slowest rank are listed, largest first."""

MAX_RANKS = 4096
"""Ranks listed in full up to this; beyond it, the ones with the most I/O time."""


def rank_table(ctx: Context) -> RankTable:
    acc: dict[str, dict[int, float]] = {k: {} for k in ("br", "bw", "rs", "ws", "ms", "files", "reads", "writes")}
    shared_files = shared_bytes = 0
    # (bytes of the record, rank, seconds, bytes kept for that rank or -1, record id) per shared record
    fastest: list[tuple[float, int, float, int, int]] = []
    slowest: list[tuple[float, int, float, int, int]] = []
    for layer, records in ctx.counted_layers:
        if not len(records):
            continue
        rd, wr, md, slow_col = TOP_LAYER_TIME[layer]
        br_col, bw_col = TOP_LAYER_BYTES[layer]
        prefix = slow_col.removesuffix("_F_SLOWEST_RANK_TIME")
        ranks = np.asarray(records["rank"])
        own = ranks >= 0
        cols = {"br": records.num(br_col), "bw": records.num(bw_col), "rs": records.num(rd), "ws": records.num(wr)}
        cols["ms"] = records.num(md)
        cols["files"] = np.ones(len(records))
        calls = call_columns(layer, records)
        for kind in ("reads", "writes"):
            cols[kind] = calls.get(kind, np.zeros(len(records), dtype=np.int64))
        if own.any():
            keys, inv = np.unique(ranks[own], return_inverse=True)
            for name, values in cols.items():
                sums = np.bincount(inv, weights=np.asarray(values, dtype=float)[own])
                d = acc[name]
                for k, v in zip(keys.tolist(), sums.tolist(), strict=True):
                    d[k] = d.get(k, 0.0) + v
        if (~own).any():
            moved = (np.asarray(cols["br"], dtype=float) + np.asarray(cols["bw"], dtype=float))[~own]
            shared_files += int((~own).sum())
            shared_bytes += int(moved.sum())
            for which, out in (("FASTEST", fastest), ("SLOWEST", slowest)):
                who_col, time_col = f"{prefix}_{which}_RANK", f"{prefix}_F_{which}_RANK_TIME"
                if who_col in records.columns and time_col in records.columns:
                    who = np.asarray(records[who_col])[~own]
                    secs = records.num(time_col)[~own]
                    bytes_col = f"{prefix}_{which}_RANK_BYTES"
                    kept = (
                        np.asarray(records.num(bytes_col))[~own]
                        if bytes_col in records.columns
                        else np.full(len(who), -1.0)
                    )
                    ids = np.asarray(records["id"]).astype(np.uint64)[~own]
                    out.extend(
                        (float(b), int(r), float(t), int(k), int(i))
                        for b, r, t, k, i in zip(moved, who, secs, kept, ids, strict=True)
                    )
    rows = [
        RankUsage(
            rank=int(r),
            bytes_read=int(acc["br"].get(r, 0.0)),
            bytes_written=int(acc["bw"].get(r, 0.0)),
            read_s=acc["rs"].get(r, 0.0),
            write_s=acc["ws"].get(r, 0.0),
            meta_s=acc["ms"].get(r, 0.0),
            files=int(acc["files"].get(r, 0.0)),
            reads=int(acc["reads"].get(r, 0.0)),
            writes=int(acc["writes"].get(r, 0.0)),
        )
        for r in sorted(acc["files"])
    ]
    truncated = len(rows) > MAX_RANKS
    if truncated:
        rows = sorted(rows, key=lambda u: (-(u.read_s + u.write_s + u.meta_s), u.rank))[:MAX_RANKS]
        rows.sort(key=lambda u: u.rank)

    def top(pairs: list[tuple[float, int, float, int, int]]) -> list[RankSeconds]:
        return [
            RankSeconds(rank=r, seconds=t, bytes=k if k >= 0 else None, path=ctx.path(i))
            for _, r, t, k, i in sorted(pairs, key=lambda x: -x[0])[:SHARED_KEPT]
            if r >= 0
        ]

    sizes, requests = _access_sizes(ctx)
    return RankTable(
        access_sizes=sizes,
        posix_requests=requests,
        ranks=rows,
        truncated=truncated,
        shared_files=shared_files,
        shared_bytes=shared_bytes,
        shared_fastest=top(fastest),
        shared_slowest=top(slowest),
    )


def _access_sizes(ctx: Context) -> tuple[list[AccessSize], int]:
    """The four most common POSIX request sizes over all records (Darshan keeps four per record, reads and writes
    together), and the number of POSIX reads and writes."""
    p = ctx.posix_records
    if not len(p) or "POSIX_ACCESS1_ACCESS" not in p.columns:
        return [], 0
    top = most_common(size_counts(p, "POSIX") or {}, 4)
    requests = int(p.num("POSIX_READS").sum() + p.num("POSIX_WRITES").sum())
    return [AccessSize(size=s, count=c) for s, c in top], requests
