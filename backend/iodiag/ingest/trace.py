"""DXT traces as columns of numpy arrays: no Python object per segment.

A segment costs 41 bytes resident: rank and file index (int32 each), op (int8), offset and
length (int64), start and end (float64).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from iodiag.ingest.table import Table

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
    stack: np.ndarray | None = None
    """Call-stack id per segment (int32, -1: none) when the log carries call stacks (see ``stacks``)."""

    def __len__(self) -> int:
        return len(self.offset)

    @property
    def nbytes(self) -> int:
        """Resident bytes. The segment fields may be views of one block; count each buffer once."""
        seen: dict[int, int] = {}
        cols = [self.rank, self.file, self.op, self.offset, self.length, self.start, self.end, self.file_ids]
        if self.stack is not None:
            cols.append(self.stack)
        for c in cols:
            base = c.base if isinstance(c.base, np.ndarray) else c
            seen[id(base)] = max(seen.get(id(base), 0), base.nbytes if base is not c else c.nbytes)
        return sum(seen.values())

    def record_ids(self) -> np.ndarray:
        """Darshan record id per segment (materialized on demand: 8 bytes per segment)."""
        ids: np.ndarray = self.file_ids[self.file]
        return ids

    def to_table(self) -> Table:
        """The trace as a table with the ingest's DXT columns, one row per segment (for small traces and tests)."""
        hosts = (
            np.array([self.hostnames.get(int(r), "") for r in range(int(self.rank.max()) + 1)], dtype=object)
            if len(self)
            else np.array([], dtype=object)
        )
        return Table(
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
    """Assembles a ``Trace`` from the reader's chunks, one chunk of whole records at a time.

    Chunks are copied into columns sized up front from ``expected`` (Darshan's own operation
    counters give the segment count of a complete trace), so a large trace is never held twice.
    """

    def __init__(self, module: str, expected: int = 0) -> None:
        self.module = module
        self._file_index: dict[int, int] = {}
        self._hosts: dict[int, str] = {}
        self._records = 0
        self._n = 0
        self._seg: np.ndarray = np.empty(0, dtype=SEGMENT_DTYPE)
        self._rank: np.ndarray = np.empty(0, dtype=np.int32)
        self._file: np.ndarray = np.empty(0, dtype=np.int32)
        self._op: np.ndarray = np.empty(0, dtype=np.int8)
        self._alloc(max(expected, 0))

    def _alloc(self, capacity: int) -> None:
        old = self._seg
        seg = np.empty(capacity, dtype=SEGMENT_DTYPE)
        rank = np.empty(capacity, dtype=np.int32)
        file = np.empty(capacity, dtype=np.int32)
        op = np.empty(capacity, dtype=np.int8)
        if self._n:
            seg[: self._n], rank[: self._n] = old[: self._n], self._rank[: self._n]
            file[: self._n], op[: self._n] = self._file[: self._n], self._op[: self._n]
        self._seg, self._rank, self._file, self._op = seg, rank, file, op

    def add(self, records: list[tuple[int, int, str, int, int]], segments: bytes | bytearray | memoryview) -> None:
        """``records``: (record id, rank, hostname, writes, reads); ``segments``: their segments in order."""
        if not records:
            return
        seg = np.frombuffer(segments, dtype=SEGMENT_DTYPE)
        counts = np.fromiter((c for r in records for c in (r[3], r[4])), dtype=np.int64, count=2 * len(records))
        per = counts[0::2] + counts[1::2]
        k = len(seg)
        if int(per.sum()) != k:
            raise ValueError("DXT chunk: segment count does not match the records")
        files = np.empty(len(records), dtype=np.int32)
        ranks = np.empty(len(records), dtype=np.int32)
        for i, (rid, rank, host, _, _) in enumerate(records):
            files[i] = self._file_index.setdefault(int(rid), len(self._file_index))
            ranks[i] = rank
            self._hosts.setdefault(int(rank), host)
        if self._n + k > len(self._seg):
            self._alloc(max(2 * len(self._seg), self._n + k))
        a, b = self._n, self._n + k
        self._seg[a:b] = seg
        self._rank[a:b] = np.repeat(ranks, per)
        self._file[a:b] = np.repeat(files, per)
        # Within a record Darshan stores the writes first, then the reads: runs of 0s then 1s.
        self._op[a:b] = np.repeat(np.tile(np.array([WRITE, READ], dtype=np.int8), len(records)), counts)
        self._n = b
        self._records += len(records)

    def build(self) -> Trace:
        n = self._n
        if n < len(self._seg):  # the estimate was high (a partial trace): give the slack back
            self._seg, self._rank = self._seg[:n].copy(), self._rank[:n].copy()
            self._file, self._op = self._file[:n].copy(), self._op[:n].copy()
        seg = self._seg
        ids = np.empty(len(self._file_index), dtype=np.uint64)
        for rid, i in self._file_index.items():
            ids[i] = rid
        # The four segment fields stay views into one 32-byte-per-segment block.
        return Trace(
            module=self.module,
            rank=self._rank,
            file=self._file,
            op=self._op,
            offset=seg["offset"],
            length=seg["length"],
            start=seg["start"],
            end=seg["end"],
            file_ids=ids,
            hostnames=dict(self._hosts),
            records=self._records,
        )
