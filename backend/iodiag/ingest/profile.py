"""The typed, read-only job profile that every analysis works from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict

from iodiag.ingest.stacks import CallStacks
from iodiag.ingest.table import Table
from iodiag.ingest.trace import Trace
from iodiag.ingest.trace_stream import TraceSummary


class Mount(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    fs_type: str


class ModuleInfo(BaseModel):
    """What the log says about one instrumentation module, and how reading it went."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: int
    compressed_bytes: int
    partial: bool = False
    """Darshan ran out of memory for this module: records or trace segments are missing."""
    loaded: bool = False
    records: int = 0
    """Records kept (corrupt ones left out)."""
    read_error: str | None = None
    corrupt_records: int = 0
    """Records left out because no valid run could have written them (``integrity.screen``)."""
    corrupt_note: str | None = None
    """One line: how many were left out, of how many, and why."""
    unnamed_records: int = 0
    """Of the corrupt records, those whose id is missing from the name table (they have no file name)."""
    unnamed_bytes_read: int = 0
    unnamed_bytes_written: int = 0
    """Bytes those unnamed records count: I/O the named records do not show."""
    reset_note: str | None = None
    """One line: stray fields of kept records that were set to 0 (``integrity.screen``)."""


class JobMeta(BaseModel):
    model_config = ConfigDict(frozen=True)

    jobid: int
    uid: int
    nprocs: int
    nodes: int | None = None
    nodes_source: str | None = None
    start: datetime
    end: datetime
    runtime_s: float
    exe: str
    darshan_version: str
    log_format: str
    mounts: tuple[Mount, ...] = ()
    hints: Mapping[str, str] = MappingProxyType({})
    """MPI-IO hints from the log's "h" metadata: the hints Darshan used to write the log itself
    (DARSHAN_LOGHINTS), not the application's hints, which Darshan does not record."""
    metadata: Mapping[str, str] = MappingProxyType({})

    def mount_point(self, path: str) -> str | None:
        """The longest mount point that contains ``path``."""
        best = self._mount(path)
        return best.path if best else None

    def fs_type(self, path: str) -> str | None:
        """File system type of the longest mount point that contains ``path``."""
        best = self._mount(path)
        return best.fs_type if best else None

    def _mount(self, path: str) -> Mount | None:
        best: Mount | None = None
        for m in self.mounts:
            prefix = m.path.rstrip("/") + "/"
            if (path == m.path or path.startswith(prefix)) and (best is None or len(m.path) > len(best.path)):
                best = m
        return best


@dataclass(frozen=True)
class JobProfile:
    """Everything read from one log. Tables are shared, so treat them as read-only."""

    path: str
    meta: JobMeta
    modules: Mapping[str, ModuleInfo]
    names: Mapping[int, str]
    tables: Mapping[str, Table] = field(default_factory=dict)
    traces: Mapping[str, Trace] = field(default_factory=dict)
    """DXT_POSIX / DXT_MPIIO segments as numpy columns (read only when asked for)."""
    trace_summaries: Mapping[str, TraceSummary] = field(default_factory=dict)
    """DXT modules too large to hold (above the loader's ``trace_budget``), summarised while streaming:
    a module is in ``traces`` or here, never both."""
    stacks: CallStacks | None = None
    """Call stacks of DXT segments and their address-to-line table, when the log carries them."""
    problems: tuple[str, ...] = ()
    """Reading problems that are not tied to one module (for example a crash after the last module)."""

    def table(self, module: str) -> Table | None:
        """A module's records; for a DXT module, its segments as a table (built on each call:
        use ``traces`` for large traces)."""
        if module in self.traces:
            return self.traces[module].to_table()
        return self.tables.get(module)

    def trace(self, module: str) -> Trace | None:
        return self.traces.get(module)

    def has(self, module: str) -> bool:
        if module in self.traces:
            return len(self.traces[module]) > 0
        if module in self.trace_summaries:
            return self.trace_summaries[module].segments > 0
        t = self.tables.get(module)
        return t is not None and len(t) > 0

    def name(self, record_id: int) -> str:
        return self.names.get(int(record_id), f"<unknown record {int(record_id):#x}>")
