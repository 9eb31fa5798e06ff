"""Request sizes from Darshan's ACCESS1-4 counters, shared by the checks and the rank/file views.

Darshan keeps, per record, the four most frequent request sizes with their counts, reads and writes together.
Every reader of those counters sums them the same way here, so a size quoted by a check and by the report's
request-size table cannot disagree.
"""

from __future__ import annotations

import numpy as np

from iodiag.ingest.table import Table


def access_counts(frame: Table, prefix: str) -> dict[tuple[int, int], int] | None:
    """(record id, request size) -> summed count over the rows' ACCESS1-4 pairs, or None where the module
    has no such counters (an older module version)."""
    if f"{prefix}_ACCESS1_ACCESS" not in frame or "id" not in frame:
        return None
    out: dict[tuple[int, int], int] = {}
    ids = np.asarray(frame["id"]).tolist()
    for i in range(1, 5):
        acc, cnt = f"{prefix}_ACCESS{i}_ACCESS", f"{prefix}_ACCESS{i}_COUNT"
        if acc not in frame or cnt not in frame:
            continue
        sizes = np.asarray(frame[acc], dtype=np.int64).tolist()
        counts = np.asarray(frame[cnt], dtype=np.int64).tolist()
        for rid, size, count in zip(ids, sizes, counts, strict=True):
            if size > 0 and count > 0:
                out[(int(rid), size)] = out.get((int(rid), size), 0) + count
    return out


def size_counts(frame: Table, prefix: str, below: int | None = None) -> dict[int, int] | None:
    """Request size -> summed count over every record (sizes under ``below`` only, when given)."""
    pairs = access_counts(frame, prefix)
    if pairs is None:
        return None
    out: dict[int, int] = {}
    for (_, size), count in pairs.items():
        if below is None or size < below:
            out[size] = out.get(size, 0) + count
    return out


def most_common(counts: dict[int, int], n: int = 1) -> list[tuple[int, int]]:
    """The ``n`` most frequent (size, count) pairs; a tie goes to the larger size."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], -kv[0]))[:n]


def typical_per_record(frame: Table, prefix: str) -> dict[int, int]:
    """Per record id, the request size with the largest count (a tie goes to the larger size)."""
    best: dict[int, tuple[int, int]] = {}
    for (rid, size), count in (access_counts(frame, prefix) or {}).items():
        if rid not in best or (count, size) > best[rid]:
            best[rid] = (count, size)
    return {rid: size for rid, (_, size) in best.items()}
