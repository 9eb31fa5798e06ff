"""DXT traces as columns of numpy arrays: no Python object per segment.

A segment costs 41 bytes resident: rank and file index (int32 each), op (int8), offset and
length (int64), start and end (float64).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

WRITE, READ = 0, 1
SEGMENT_DTYPE = np.dtype([("offset", "<i8"), ("length", "<i8"), ("start", "<f8"), ("end", "<f8")])
"""Darshan's on-disk ``struct segment_info``."""


@dataclass(frozen=True, eq=False)
class Trace:
    module: str
    rank: np.ndarray
    file: np.ndarray
    """Index into ``file_ids`` per segment."""
    op: np.ndarray
    """0 = write, 1 = read."""
    offset: np.ndarray
    length: np.ndarray
    start: np.ndarray
    end: np.ndarray
    file_ids: np.ndarray
    """Darshan record id of each file index."""
    hostnames: Mapping[int, str] = field(default_factory=dict)
    """Host of each rank that has segments."""
    records: int = 0

    def __len__(self) -> int:
        return len(self.offset)

    @property
    def nbytes(self) -> int:
        """Resident bytes. The segment fields may be views of one block; count each buffer once."""
        seen: dict[int, int] = {}
        for c in (self.rank, self.file, self.op, self.offset, self.length, self.start, self.end, self.file_ids):
            base = c.base if isinstance(c.base, np.ndarray) else c
            seen[id(base)] = max(seen.get(id(base), 0), base.nbytes if base is not c else c.nbytes)
        return sum(seen.values())

    def record_ids(self) -> np.ndarray:
        """Darshan record id per segment (materialized on demand: 8 bytes per segment)."""
        ids: np.ndarray = self.file_ids[self.file]
        return ids

    def to_frame(self) -> pd.DataFrame:
        """The trace as a DataFrame with the ingest's DXT columns (for small traces and tests)."""
        hosts = (
            np.array([self.hostnames.get(int(r), "") for r in range(int(self.rank.max()) + 1)], dtype=object)
            if len(self)
            else np.array([], dtype=object)
        )
        return pd.DataFrame(
            {
                "id": self.record_ids(),
                "rank": self.rank.astype(np.int64),
                "hostname": hosts[self.rank] if len(self) else hosts,
                "op": np.where(self.op == READ, "read", "write"),
                "offset": self.offset,
                "length": self.length,
                "start": self.start,
                "end": self.end,
            }
        )


class TraceBuilder:
    """Assembles a ``Trace`` from the reader's chunks, one chunk of whole records at a time."""

    def __init__(self, module: str) -> None:
        self.module = module
        self._file_index: dict[int, int] = {}
        self._hosts: dict[int, str] = {}
        self._parts: list[tuple[np.ndarray, ...]] = []
        self._records = 0

    def add(self, records: list[tuple[int, int, str, int, int]], segments: bytes) -> None:
        """``records``: (record id, rank, hostname, writes, reads); ``segments``: their segments in order."""
        if not records:
            return
        seg = np.frombuffer(segments, dtype=SEGMENT_DTYPE)
        counts = np.fromiter((c for r in records for c in (r[3], r[4])), dtype=np.int64, count=2 * len(records))
        per = counts[0::2] + counts[1::2]
        if int(per.sum()) != len(seg):
            raise ValueError("DXT chunk: segment count does not match the records")
        files = np.empty(len(records), dtype=np.int32)
        ranks = np.empty(len(records), dtype=np.int32)
        for i, (rid, rank, host, _, _) in enumerate(records):
            files[i] = self._file_index.setdefault(int(rid), len(self._file_index))
            ranks[i] = rank
            self._hosts.setdefault(int(rank), host)
        # Within a record Darshan stores the writes first, then the reads: runs of 0s then 1s.
        op = np.repeat(np.tile(np.array([WRITE, READ], dtype=np.int8), len(records)), counts)
        self._parts.append((np.repeat(ranks, per), np.repeat(files, per), op, seg))
        self._records += len(records)

    def build(self) -> Trace:
        if self._parts:
            joined = [
                np.concatenate([p[i] for p in self._parts]) if len(self._parts) > 1 else self._parts[0][i]
                for i in range(4)
            ]
        else:
            joined = [np.empty(0, np.int32), np.empty(0, np.int32), np.empty(0, np.int8), np.empty(0, SEGMENT_DTYPE)]
        self._parts.clear()
        rank, file, op, seg = joined
        ids = np.empty(len(self._file_index), dtype=np.uint64)
        for rid, i in self._file_index.items():
            ids[i] = rid
        # The four segment fields stay views into one 32-byte-per-segment block: no copies.
        return Trace(
            module=self.module,
            rank=rank,
            file=file,
            op=op,
            offset=seg["offset"],
            length=seg["length"],
            start=seg["start"],
            end=seg["end"],
            file_ids=ids,
            hostnames=dict(self._hosts),
            records=self._records,
        )
