"""What travels between the batch client, the Dask workers and their helper processes."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from iodiag.jobs.pipeline import JobResult, PipelineInput

TaskKind = Literal["facts", "pipeline"]
"""``facts``: read and analyze only (Parquet output). ``pipeline``: the service's whole pipeline, every
report format and the plots rendered (store output, and the service's own analyses)."""


class FindingFacts(BaseModel):
    """One finding, as the system report and the Parquet findings table keep it."""

    model_config = ConfigDict(frozen=True)

    code: str
    severity: str
    layer: str
    title: str
    evidence: dict[str, float | int | str] = Field(default_factory=dict)
    files_total: int = 0
    seconds: float | None = Field(default=None, description="run time the finding costs (its impact); null: unpriced")


class LogFacts(BaseModel):
    """The per-job numbers of one report that a facility-wide view needs."""

    model_config = ConfigDict(frozen=True)

    exe: str
    app: str = Field(description="basename of the command line's first word")
    uid: int
    jobid: str
    nprocs: int
    nodes: int | None
    start: datetime
    end: datetime
    runtime_s: float
    io_time_s: float = Field(description="I/O time of the slowest rank (read + write + metadata)")
    bytes_read: int
    bytes_written: int
    io_share: float | None
    interfaces: list[str] = Field(description="modules with records: POSIX, MPI-IO, STDIO, H5F, LUSTRE, ...")
    n_critical: int
    n_warning: int
    n_info: int
    n_ok: int
    max_severity: str | None
    tool_version: str


class Task(BaseModel):
    """One log for a Dask worker. ``spec`` is the service's own job description: its
    ``read_timeout_s`` and ``read_memory_limit_bytes`` bound the whole analysis, as in the service."""

    model_config = ConfigDict(frozen=True)

    kind: TaskKind
    spec: PipelineInput
    sha256: str | None = Field(default=None, description="checked on the worker before analyzing; None: not checked")


class MemoryUse(BaseModel):
    """Peak resident memory (VmHWM) seen so far by the processes of one Dask worker."""

    worker_bytes: int = 0
    helper_bytes: int = 0
    reader_bytes: int = Field(default=0, description="largest forked Darshan reader (shared pages counted)")


class TaskResult(BaseModel):
    path: str
    sha256: str | None
    ok: bool
    error: str | None = None
    internal: bool = False
    seconds: float = 0.0
    facts: LogFacts | None = None
    findings: list[FindingFacts] = Field(default_factory=list)
    pipeline: JobResult | None = Field(
        default=None,
        description="pipeline kind: what the service's pipeline returned (its output paths are the worker's and gone)",
    )
    outputs: dict[str, bytes] = Field(default_factory=dict, description="pipeline kind: kind -> zlib-compressed")
    memory: MemoryUse = Field(default_factory=MemoryUse)
    worker: str = ""

    @classmethod
    def failure(
        cls,
        path: str,
        sha256: str | None,
        error: str,
        *,
        internal: bool = False,
        seconds: float = 0.0,
        worker: str = "",
    ) -> TaskResult:
        return cls(
            path=path,
            sha256=sha256,
            ok=False,
            error=" ".join(error.split()),
            internal=internal,
            seconds=seconds,
            worker=worker,
        )


class ChildReply(BaseModel):
    """What the helper process answers for one task that it finished."""

    facts: LogFacts
    findings: list[FindingFacts]
    pipeline: JobResult | None = None
    reader_peak_bytes: int = 0
