"""The event trace a simulated program leaves: every call at every Darshan layer, with times.

Columns are numpy arrays gathered in chunks (one chunk per phase and layer), so a program of
millions of requests never creates a Python object per request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np

from iodiag.synth.layout import MountInfo, StripeLayout, record_id


class TraceLayer(IntEnum):
    POSIX = 0
    STDIO = 1
    MPIIO = 2
    H5F = 3
    H5D = 4
    PNCFILE = 5
    PNCVAR = 6
    DFS = 7


MODULE = {
    TraceLayer.POSIX: "POSIX",
    TraceLayer.STDIO: "STDIO",
    TraceLayer.MPIIO: "MPI-IO",
    TraceLayer.H5F: "H5F",
    TraceLayer.H5D: "H5D",
    TraceLayer.PNCFILE: "PNETCDF_FILE",
    TraceLayer.PNCVAR: "PNETCDF_VAR",
    TraceLayer.DFS: "DFS",
}


class Meta(IntEnum):
    OPEN = 0
    CLOSE = 1
    STAT = 2
    SEEK = 3
    FSYNC = 4
    COLL_OPEN = 5
    CREATE = 6
    WAIT_INDEP = 7
    WAIT_COLL = 8
    HINT = 9


class Mode(IntEnum):
    INDEP = 0
    COLL = 1
    NB = 2


IO_COLUMNS = {
    "layer": np.int8,
    "rec": np.int64,
    "rank": np.int64,
    "write": np.bool_,
    "offset": np.int64,
    "length": np.int64,
    "start": np.float64,
    "end": np.float64,
    "mem_bad": np.bool_,
    "mode": np.int8,
    "seq": np.int64,
    "phase": np.int32,
}
META_COLUMNS = {
    "layer": np.int8,
    "rec": np.int64,
    "rank": np.int64,
    "kind": np.int8,
    "start": np.float64,
    "end": np.float64,
    "seq": np.int64,
}


@dataclass
class FileState:
    path: str
    mount: MountInfo
    lustre: StripeLayout | None
    fmt: str | None = None
    """'hdf5' or 'pnetcdf' once a format phase used the file."""
    header: int = 0
    data_start: int = 0
    end: int = 0
    """Highest byte written so far + 1 (where an appending write starts)."""
    created: bool = False
    chunk_size: int = 0
    """DFS files: the DAOS array chunk size (DFS_CHUNK_SIZE)."""


@dataclass
class Trace:
    nprocs: int
    nodes: int
    names: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    parent: dict[int, int] = field(default_factory=dict)
    """Dataset / variable record -> its file record."""
    files: dict[int, FileState] = field(default_factory=dict)
    h5f_mpiio: dict[int, bool] = field(default_factory=dict)
    dtype_size: dict[int, int] = field(default_factory=dict)
    npoints: dict[int, int] = field(default_factory=dict)
    io_chunks: list[dict[str, np.ndarray]] = field(default_factory=list)
    meta_chunks: list[dict[str, np.ndarray]] = field(default_factory=list)
    end_time: float = 0.0
    phase: int = -1
    """Index of the program phase being simulated (requests remember it: their call stack is the phase's)."""
    _seq: int = 0
    _ids: list[int] = field(default_factory=list)

    def record_ids(self, keys: np.ndarray) -> np.ndarray:
        """Darshan record ids (hash of the name) of record keys, each name hashed once."""
        for name in self.names[len(self._ids) :]:
            self._ids.append(record_id(name))
        table = np.array(self._ids, dtype=np.uint64)
        return table[np.asarray(keys, dtype=np.int64)] if len(table) else np.zeros(0, dtype=np.uint64)

    def key(self, name: str) -> int:
        k = self.index.get(name)
        if k is None:
            k = self.index[name] = len(self.names)
            self.names.append(name)
        return k

    def _seqs(self, n: int) -> np.ndarray:
        out = np.arange(self._seq, self._seq + n, dtype=np.int64)
        self._seq += n
        return out

    def add_io(
        self,
        layer: TraceLayer,
        rec: np.ndarray | int,
        rank: np.ndarray | int,
        write: bool | np.ndarray,
        offset: np.ndarray,
        length: np.ndarray,
        start: np.ndarray,
        end: np.ndarray,
        mem_bad: bool | np.ndarray = False,
        mode: int | np.ndarray = Mode.INDEP,
        seq: np.ndarray | None = None,
    ) -> None:
        n = len(offset)
        if n == 0:
            return
        self.io_chunks.append(
            {
                "layer": np.full(n, int(layer), dtype=np.int8),
                "rec": np.broadcast_to(np.asarray(rec, dtype=np.int64), (n,)).copy(),
                "rank": np.broadcast_to(np.asarray(rank, dtype=np.int64), (n,)).copy(),
                "write": np.broadcast_to(np.asarray(write, dtype=np.bool_), (n,)).copy(),
                "offset": np.asarray(offset, dtype=np.int64),
                "length": np.asarray(length, dtype=np.int64),
                "start": np.asarray(start, dtype=np.float64),
                "end": np.asarray(end, dtype=np.float64),
                "mem_bad": np.broadcast_to(np.asarray(mem_bad, dtype=np.bool_), (n,)).copy(),
                "mode": np.broadcast_to(np.asarray(mode, dtype=np.int8), (n,)).copy(),
                "seq": self._seqs(n) if seq is None else np.asarray(seq, dtype=np.int64),
                "phase": np.full(n, self.phase, dtype=np.int32),
            }
        )

    def add_meta(
        self,
        layer: TraceLayer,
        rec: np.ndarray | int,
        rank: np.ndarray | int,
        kind: int | np.ndarray,
        start: np.ndarray,
        end: np.ndarray,
        seq: np.ndarray | None = None,
    ) -> None:
        start = np.atleast_1d(np.asarray(start, dtype=np.float64))
        n = len(start)
        if n == 0:
            return
        self.meta_chunks.append(
            {
                "layer": np.full(n, int(layer), dtype=np.int8),
                "rec": np.broadcast_to(np.asarray(rec, dtype=np.int64), (n,)).copy(),
                "rank": np.broadcast_to(np.asarray(rank, dtype=np.int64), (n,)).copy(),
                "kind": np.broadcast_to(np.asarray(kind, dtype=np.int8), (n,)).copy(),
                "start": start,
                "end": np.broadcast_to(np.asarray(end, dtype=np.float64), (n,)).copy(),
                "seq": self._seqs(n) if seq is None else np.asarray(seq, dtype=np.int64),
            }
        )

    def io(self) -> dict[str, np.ndarray]:
        return _concat(self.io_chunks, IO_COLUMNS)

    def meta(self) -> dict[str, np.ndarray]:
        return _concat(self.meta_chunks, META_COLUMNS)


def _concat(chunks: list[dict[str, np.ndarray]], columns: Mapping[str, Any]) -> dict[str, np.ndarray]:
    if not chunks:
        return {c: np.empty(0, dtype=t) for c, t in columns.items()}
    return {c: np.concatenate([ch[c] for ch in chunks]).astype(t, copy=False) for c, t in columns.items()}
