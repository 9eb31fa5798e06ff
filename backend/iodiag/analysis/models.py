"""The findings schema: what the analysis says about a job. Versioned; exported as JSON Schema."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "2.3"
"""2.3: files carry their calls and slowest rank (``top_files``), interfaces their calls, and the report groups
files by name pattern (``file_groups``).
2.2: the report assesses the busiest Lustre files' layouts (``lustre_layouts``) and lists per-OST load (``osts``).
2.1: the report lists the files with the most I/O time (``top_files``).
2.0: findings carry ``impact`` (cost in run time) and ``detected_severity``; the report carries ``verdict``,
``workload`` and ``interfaces``; severity is graded from cost."""


class _Model(BaseModel):
    # Validators and serializers are built on first use: the CLI builds only the models a report holds.
    model_config = ConfigDict(defer_build=True)


class Severity(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    INFO = "info"
    OK = "ok"

    @property
    def rank(self) -> int:
        return _SEVERITY_ORDER[self]


_SEVERITY_ORDER = {Severity.CRITICAL: 0, Severity.WARNING: 1, Severity.INFO: 2, Severity.OK: 3}


class Layer(StrEnum):
    JOB = "job"
    STDIO = "STDIO"
    POSIX = "POSIX"
    MPIIO = "MPI-IO"
    HDF5 = "HDF5"
    PNETCDF = "PnetCDF"
    LUSTRE = "Lustre"


class Unit(StrEnum):
    COUNT = "count"
    RATIO = "ratio"
    BYTES = "bytes"
    SECONDS = "seconds"
    BYTES_PER_SECOND = "bytes/s"
    TEXT = "text"


class Confidence(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Impact(_Model):
    """What a finding costs: run time lost on the critical path (the busiest rank's I/O time)."""

    model_config = ConfigDict(frozen=True)

    seconds: float | None = Field(description="seconds of run time lost; null where the log cannot support a number")
    share_of_runtime: float | None = Field(description="seconds / the job's run time")
    share_of_io: float | None = Field(description="seconds / the busiest rank's I/O time")
    basis: str = Field(
        description="'measured: ...' (from the log's timers) or 'modelled: ...' (an estimate), or why "
        "there is no number"
    )
    confidence: Confidence


class Metric(_Model):
    """One measured number behind a finding."""

    model_config = ConfigDict(frozen=True)

    name: str
    value: float | int | str
    unit: Unit
    description: str = ""


def window_metrics(start: float, end: float) -> list[Metric]:
    """The time window a finding is about, as two metrics (what the UI's "show in plots" zooms to)."""
    return [
        Metric(name="window_start", value=float(start), unit=Unit.SECONDS, description="seconds since job start"),
        Metric(name="window_end", value=float(end), unit=Unit.SECONDS, description="seconds since job start"),
    ]


class FileEvidence(_Model):
    """A file a finding is about, with the numbers that implicate it."""

    model_config = ConfigDict(frozen=True)

    path: str
    record_id: str = Field(description="Darshan record id (hash of the path), as a decimal string")
    metrics: list[Metric] = Field(default_factory=list)


class SourceFrame(_Model):
    model_config = ConfigDict(frozen=True)

    address: str = Field(description="return address, hex")
    function: str = Field(description="'??' when unknown")
    file: str = Field(description="source file, '??' when unknown")
    line: int = Field(description="0 when unknown")


class SourceLine(_Model):
    """The segments of a finding that one source line issued, with the call chain that reached it."""

    model_config = ConfigDict(frozen=True)

    file: str
    line: int
    function: str
    segments: int
    bytes: int
    ranks: int = Field(description="distinct ranks among those segments")
    call_chain: list[SourceFrame] = Field(description="innermost frame first")


class Action(_Model):
    """A concrete setting for one of a finding's recommendations, computed from this job."""

    model_config = ConfigDict(frozen=True)

    recommendation: str = Field(description="id in the recommendation registry")
    command: str = Field(description="what to type or set, with this job's values")
    where: str = Field(description="where it goes (shell, job script, code) and when")
    effect: str = Field(description="what it changes, in this job's numbers")
    saves_s: float | None = Field(default=None, description="seconds it can save: at most the finding's cost")


class Finding(_Model):
    model_config = ConfigDict(frozen=True)

    code: str
    severity: Severity = Field(description="graded from the finding's cost (impact): what to fix first")
    detected_severity: Severity = Field(
        description="the severity the detection rule gives on its own (Drishti's for the checks that come from "
        "Drishti): shown with --severity drishti"
    )
    impact: Impact | None = Field(default=None, description="what the finding costs; null for descriptive findings")
    layer: Layer
    title: str
    message: str
    subject: str = Field(default="", description="this job's instance in a few words, with its key number")
    evidence: list[Metric] = Field(default_factory=list)
    files: list[FileEvidence] = Field(default_factory=list)
    files_total: int = 0
    ranks: list[int] = Field(default_factory=list)
    explained_by: str | None = Field(
        default=None, description="for a symptom shown as info: the cause on the same ranks that explains it"
    )
    recommendations: list[str] = Field(default_factory=list, description="ids in the recommendation registry")
    actions: list[Action] = Field(
        default_factory=list, description="concrete settings for those recommendations, computed from this job"
    )
    source_lines: list[SourceLine] | None = Field(
        default=None,
        description="the finding's trace segments grouped by the source line that issued them, most segments "
        "first; null unless the log carries call stacks (or --binary maps them)",
    )

    def metric(self, name: str) -> float | int | str | None:
        for m in self.evidence:
            if m.name == name:
                return m.value
        return None


class JobFacts(_Model):
    """Facts about the job that a Darshan log does not hold, supplied by the user or the scheduler."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nodes: int | None = Field(default=None, ge=1, description="compute nodes (overrides what the log suggests)")
    cb_nodes: int | None = Field(
        default=None,
        ge=1,
        description="MPI-IO aggregators the application used (ROMIO cb_nodes). Darshan does not record it: "
        "the log's 'h' metadata holds the hints Darshan used to write its own log file",
    )


class ModuleSummary(_Model):
    name: str
    version: int
    records: int
    loaded: bool
    partial: bool
    read_error: str | None = None


class JobSummary(_Model):
    jobid: int
    uid: int
    exe: str
    nprocs: int
    nodes: int | None
    start: datetime
    end: datetime
    runtime_s: float
    darshan_version: str
    log_format: str
    hints: dict[str, str] = Field(description="MPI-IO hints Darshan used to write the log (DARSHAN_LOGHINTS)")
    modules: list[ModuleSummary]
    files: int
    file_systems: dict[str, int] = Field(default_factory=dict, description="files per file-system type")
    hosts: list[str] = Field(
        default_factory=list, description="host names the DXT trace records (sorted, at most 64); empty without DXT"
    )


class IOShare(_Model):
    """How much of the job's run time went to I/O (read + write + metadata, each layer counted once)."""

    runtime_s: float
    runtime_resolution_s: float = Field(
        default=0.0, description="logs before format 3.41 store whole seconds: the run time may be this much too long"
    )
    slowest_rank_io_s: float
    mean_rank_io_s: float
    slowest_rank: int | None
    share_slowest: float
    share_mean: float
    read_s: float
    write_s: float
    meta_s: float
    bytes_read: int
    bytes_written: int


class Workload(StrEnum):
    """What kind of job this is: it decides which checks apply."""

    MPI = "mpi"
    SINGLE_PROCESS = "single-process"
    DATA_LOADER = "data-loader"
    DAOS = "daos"


class OpCounts(_Model):
    """Calls Darshan counted, summed over records (a shared record holds every rank's): what "how many stat
    calls?" or "how many seeks on index.bin?" asks for. 0 where the module has no such counter."""

    model_config = ConfigDict(frozen=True)

    opens: int = 0
    reads: int = 0
    writes: int = 0
    stats: int = 0
    seeks: int = 0
    syncs: int = Field(default=0, description="fsync (POSIX), MPI_File_sync (MPI-IO), ncmpi_sync (PnetCDF)")
    fdatasyncs: int = 0
    flushes: int = Field(default=0, description="fflush (STDIO), H5Fflush/H5Dflush (HDF5)")
    rw_switches: int = Field(default=0, description="times a rank switched between reading and writing")
    mmaps: int = 0
    consec_reads: int = Field(default=0, description="reads starting right where the previous one ended (POSIX)")
    seq_reads: int = Field(default=0, description="reads starting past the previous one's end, gaps allowed (POSIX)")
    consec_writes: int = 0
    seq_writes: int = 0
    file_not_aligned: int = Field(
        default=0, description="reads and writes not starting on the file alignment (POSIX_FILE_NOT_ALIGNED)"
    )
    mem_not_aligned: int = Field(
        default=0, description="reads and writes whose memory buffer is not aligned (POSIX_MEM_NOT_ALIGNED)"
    )
    small_reads: int = Field(default=0, description="reads under 1 MiB, from the request-size bins (POSIX, MPI-IO)")
    small_writes: int = Field(default=0, description="writes under 1 MiB, from the request-size bins (POSIX, MPI-IO)")


class InterfaceTotals(_Model):
    """One I/O interface (Darshan module) of the log, with its own totals."""

    name: str = Field(description="POSIX, MPI-IO, STDIO, HDF5, PnetCDF, DFS, DAOS, ...")
    records: int
    bytes_read: int = 0
    bytes_written: int = 0
    read_s: float = 0.0
    write_s: float = 0.0
    meta_s: float = 0.0
    operations: int = 0
    counted: bool = Field(
        description="feeds the job's byte and time totals (False: it sits above or beneath a counted layer, or "
        "was not analyzed)"
    )
    files: int = Field(default=0, description="distinct files (record ids) this interface has records for")
    opened_files: int = Field(
        default=0,
        description="of those, the files it counted at least one open for (a record can hold only stats, seeks "
        "or I/O on a descriptor opened before Darshan started)",
    )
    top_paths: list[str] = Field(
        default_factory=list, description="its files that moved the most bytes through it, at most 3"
    )
    partial: bool = False
    note: str = ""
    own_bytes_read: int = Field(
        default=0,
        description="its part of the job's totals: each file once, at its top layer (POSIX without the files "
        "opened through MPI-IO); 0 where it is not counted",
    )
    own_bytes_written: int = 0
    own_read_s: float = 0.0
    own_write_s: float = 0.0
    own_meta_s: float = 0.0
    calls: OpCounts = Field(default_factory=OpCounts, description="its calls, over every record of it")
    own_files: int = Field(default=0, description="files with I/O counted at this interface (each file once)")


class Cause(_Model):
    """One reason the job's I/O was slow, with what it cost."""

    code: str
    title: str
    seconds: float = Field(description="seconds attributed to this cause; causes never add up past the I/O time")
    share_of_runtime: float
    summary: str = Field(description="one sentence: what happened, with the job's numbers")
    subject: str = Field(default="", description="the finding's instance in a few words, with its key number")
    action: str = Field(default="", description="the one change that addresses it")
    command: str = Field(default="", description="the concrete setting for it, with this job's values, when known")
    confidence: Confidence = Confidence.MEDIUM


class Verdict(_Model):
    """The one answer to "why is my job slow?", computed once here and only displayed elsewhere."""

    io_matters: bool | None = Field(description="null when the log cannot tell (no I/O or no timing)")
    io_share: float | None = Field(default=None, description="busiest rank's I/O time / run time")
    level: Severity = Field(description="critical: I/O dominates; warning: it matters; ok: it does not; info: unknown")
    headline: str = Field(description="one actionable sentence")
    causes: list[Cause] = Field(default_factory=list, description="largest first")
    where_time_went: str = Field(
        default="", description="how the I/O time splits between reads, writes, metadata and files"
    )
    caveats: list[str] = Field(default_factory=list)


class SeverityCounts(_Model):
    critical: int = 0
    warning: int = 0
    info: int = 0
    ok: int = 0


# --- cross-layer summary (computed in crosslayer.py) -------------------------------------------------

MAX_RANKS_LISTED = 64


class OpStats(_Model):
    """Reads or writes at one layer."""

    ops: int = 0
    bytes: int = 0
    time_s: float = 0.0
    mean_bytes: float = Field(default=0.0, description="bytes / ops")
    median_bin: str | None = Field(default=None, description="Darshan size bin holding the median request")
    median_bytes: int | None = Field(
        default=None,
        description="median estimate: the most common request size (ACCESS1-4 counters) inside the median bin",
    )
    typical_bytes: int | None = Field(default=None, description="most common request size (ACCESS1-4 counters)")
    small_ops: int = Field(default=0, description="requests of at most 10 KiB (Darshan's three smallest bins)")


class LayerStats(_Model):
    layer: str = Field(description="HDF5, PnetCDF, MPI-IO, POSIX or Lustre")
    reads: OpStats = Field(default_factory=OpStats)
    writes: OpStats = Field(default_factory=OpStats)
    meta_time_s: float = 0.0
    ranks: int | None = Field(
        default=None, description="ranks with records at this layer (all ranks when Darshan reduced them to one)"
    )
    writer_ranks: int | None = Field(
        default=None, description="ranks that wrote at this layer; None when only a shared (reduced) record wrote"
    )
    writer_rank_ids: list[int] = Field(default_factory=list, description=f"first {MAX_RANKS_LISTED} writer ranks")
    reader_ranks: int | None = None
    collective_writes: int | None = Field(default=None, description="MPI-IO/PnetCDF collective (and split) writes")
    independent_writes: int | None = Field(default=None, description="independent and non-blocking writes")
    collective_reads: int | None = None
    independent_reads: int | None = None
    hdf5_collective: bool | None = Field(default=None, description="H5D_USE_MPIIO_COLLECTIVE on any dataset")
    stripe_count: int | None = None
    stripe_size: int | None = None
    osts: list[int] = Field(default_factory=list)


class FileCrossLayer(_Model):
    record_id: str
    path: str
    layers: list[LayerStats] = Field(description="top layer first: HDF5/PnetCDF, MPI-IO, POSIX, Lustre")
    write_aggregation: float | None = Field(
        default=None, description="MPI-IO writes per POSIX write (> 1: requests were combined; < 1: split)"
    )
    read_aggregation: float | None = None
    summary_text: str

    def layer(self, name: str) -> LayerStats | None:
        return next((lay for lay in self.layers if lay.layer == name), None)


class CrossLayerSummary(_Model):
    """Per file (files with MPI-IO, HDF5 or PnetCDF records, largest first) and job totals over them."""

    files: list[FileCrossLayer]
    files_total: int = Field(description="files with MPI-IO, HDF5 or PnetCDF records")
    job_layers: list[LayerStats]
    write_aggregation: float | None = None
    read_aggregation: float | None = None
    summary_text: str

    def file(self, record_id: int | str) -> FileCrossLayer | None:
        return next((f for f in self.files if f.record_id == str(record_id)), None)

    def job_layer(self, name: str) -> LayerStats | None:
        return next((lay for lay in self.job_layers if lay.layer == name), None)


class RankSeconds(_Model):
    model_config = ConfigDict(frozen=True)

    rank: int
    seconds: float
    bytes: int | None = Field(default=None, description="the bytes Darshan kept for that rank, where it keeps them")
    path: str = Field(default="", description="the shared file this rank was kept for")


class FileUsage(_Model):
    """One file's I/O, counted once at its top layer (MPI-IO for files opened through it, else POSIX; STDIO)."""

    model_config = ConfigDict(frozen=True)

    path: str
    layer: str = Field(description="the layer its time is counted at: MPI-IO, POSIX, STDIO, DFS or DAOS")
    io_time_s: float = Field(description="read + write + metadata time, summed over the ranks that used it")
    meta_time_s: float = Field(
        default=0.0, description="of io_time_s, the metadata calls' (open, stat, seek, close, sync)"
    )
    read_time_s: float = Field(default=0.0, description="of io_time_s, the read calls', summed over ranks")
    write_time_s: float = Field(default=0.0, description="of io_time_s, the write calls', summed over ranks")
    share_of_io: float = Field(description="io_time_s / the same sum over every file")
    bytes_read: int
    bytes_written: int
    ranks: int = Field(description="ranks with a record of it (every rank for a shared record)")
    only_rank: int | None = Field(
        default=None, description="the one rank that used it, where a single rank's own record holds all of it"
    )
    file_system: str | None = None
    calls: OpCounts = Field(default_factory=OpCounts, description="its calls at ``layer``")
    posix_calls: OpCounts | None = Field(
        default=None, description="its POSIX calls, where ``layer`` is above POSIX (MPI-IO) and POSIX has records"
    )
    slowest_rank: int | None = Field(
        default=None, description="the rank with the most I/O time on it at ``layer`` (Darshan's SLOWEST_RANK)"
    )
    slowest_s: float | None = Field(
        default=None, description="that rank's I/O time on it: how long the file's I/O took from start to end"
    )
    kept_fastest: RankSeconds | None = Field(
        default=None,
        description="where one shared record at ``layer`` holds the file: the fastest rank Darshan kept, with its "
        "time and bytes (the only per-rank numbers a shared record keeps, beside the slowest)",
    )
    kept_slowest: RankSeconds | None = Field(default=None, description="that record's slowest rank, time and bytes")
    posix_slowest: RankSeconds | None = Field(
        default=None,
        description="where ``layer`` is above POSIX and POSIX kept one shared record for it: that record's slowest "
        "rank, its POSIX time and bytes (under collective I/O, an aggregator)",
    )
    stripe_count: int | None = Field(default=None, description="its Lustre stripe count, where the log has it")
    stripe_size: int | None = None
    osts: list[int] = Field(default_factory=list, description="the Lustre OSTs it is striped over (at most 64)")
    read_extent: int | None = Field(
        default=None,
        description="bytes from offset 0 to the last byte read (Darshan's largest max byte read + 1 over its "
        "POSIX records, STDIO's where POSIX has none): bytes_read well above it means data read more than once",
    )
    read_start_s: float | None = Field(
        default=None, description="seconds from the job's start to its first read's start (any rank), at ``layer``"
    )
    read_end_s: float | None = Field(default=None, description="seconds from the job's start to its last read's end")
    write_start_s: float | None = Field(default=None, description="the same for its first write")
    write_end_s: float | None = Field(default=None, description="the same for its last write")
    common_size: int | None = Field(
        default=None, description="its most common request size at ``layer`` (Darshan's ACCESS1..4), where kept"
    )
    common_count: int = Field(default=0, description="how many requests had ``common_size``")
    chunk_size: int | None = Field(
        default=None, description="a DAOS (DFS) file's chunk size, in bytes (DFS_CHUNK_SIZE)"
    )
    alignment: int | None = Field(
        default=None, description="the file alignment Darshan measured against, in bytes (POSIX_FILE_ALIGNMENT)"
    )
    independent: int = Field(default=0, description="its independent MPI-IO reads and writes")
    collective: int = Field(default=0, description="its collective MPI-IO reads and writes")


class FileSystemUsage(_Model):
    """What the job moved on one kind of file system: "did it write anything to lustre?", "how much went to NFS?"."""

    file_system: str = Field(description="lustre, gpfs, nfs, daos, ext4, ...; unknown where the mount table is silent")
    mounts: list[str] = Field(default_factory=list, description="its mount points holding the job's files (at most 3)")
    files: int = Field(description="files with I/O on it, each once at its top layer (standard streams left out)")
    bytes_read: int = 0
    bytes_written: int = 0
    io_time_s: float = Field(default=0.0, description="read + write + metadata time on its files, summed over ranks")
    top_path: str = Field(default="", description="its file that moved the most bytes")


class FileGroup(_Model):
    """Files that share a name pattern: "how many .json files?", "how many bytes went to the restart files?"."""

    model_config = ConfigDict(frozen=True)

    pattern: str = Field(description="``*.ext`` over the job, ``dir/*.ext``, or ``dir/name`` with digit runs as #")
    files: int
    bytes_read: int = 0
    bytes_written: int = 0
    io_time_s: float = Field(default=0.0, description="summed over ranks, at each file's top layer")
    meta_time_s: float = Field(
        default=0.0, description="of io_time_s, the metadata calls' (open, stat, seek, close, sync), summed over ranks"
    )
    opens: int = 0
    stats: int = 0
    files_read: int = Field(default=0, description="of its files, those the job read bytes from")
    files_written: int = Field(default=0, description="of its files, those the job wrote bytes to")
    calls: OpCounts = Field(default_factory=OpCounts, description="its files' calls, each at the file's top layer")
    layer: str | None = Field(default=None, description="the one layer its files are counted at; None when mixed")
    slowest_s: float = Field(
        default=0.0, description="the most I/O time one rank spent on one of its files (Darshan's slowest rank)"
    )
    ranks: int = Field(default=0, description="the ranks that used its files (a shared file counts all its ranks)")
    file_system: str | None = Field(default=None, description="the file system of its files (of one of them)")
    stripe_count: int | None = Field(
        default=None, description="the Lustre stripe count every member with a layout shares; None when none or mixed"
    )
    stripe_size: int | None = Field(default=None, description="the stripe size that goes with stripe_count")
    striped_files: int = Field(default=0, description="of its files, those with a Lustre layout (when one is shared)")
    read_extent: int | None = Field(
        default=None,
        description="its files' read extents (FileUsage.read_extent) added up, where every read file has one",
    )
    stripe_layouts: int = Field(default=0, description="how many different layouts its members have, when mixed")
    common_size: int | None = Field(
        default=None, description="its files' most common request size (ACCESS1-4), where counted at one layer"
    )
    common_count: int = Field(default=0, description="how many requests had ``common_size``")


class ReadReuse(_Model):
    """Job-wide: the bytes read against the files' read extents, each file at POSIX (STDIO where POSIX did not
    see it). Bytes well above the extents mean data was read more than once ("does it read the same files over
    and over?")."""

    bytes_read: int = Field(description="bytes read from the files that have a read extent")
    extent: int = Field(description="those files' read extents (max byte read + 1) added up")
    files: int = Field(description="files read that have a read extent")
    files_again: int = Field(description="of them, those with at least ``min_bytes`` read beyond their extent")
    bytes_again: int = Field(description="the bytes those files had read beyond their extents (read again)")
    small_again: int = Field(
        default=0, description="files read more than 1.05 times their extent, by less than ``min_bytes``"
    )
    min_bytes: int = Field(description="the bytes read again that make a file count (P09's threshold)")
    without_extent: int = Field(default=0, description="files read whose last byte read Darshan did not keep")


class SoftwareFiles(_Model):
    """Files of the software environment rather than the job's data: Python's packages read at import, shared
    libraries, system configuration. "Why does the log list site-packages files?" is answered from these."""

    model_config = ConfigDict(frozen=True)

    kind: str = Field(description="python packages, shared libraries or system files")
    files: int
    bytes_read: int = 0
    bytes_written: int = 0
    io_time_s: float = Field(default=0.0, description="summed over ranks, at each file's top layer")
    opens: int = 0
    example: str = Field(description="one of its paths")


class LustreLayout(_Model):
    """One Lustre file's stripe layout against what its size, writers (or readers) and requests call for."""

    model_config = ConfigDict(frozen=True)

    path: str
    bytes_moved: int = Field(description="bytes read + written at the POSIX layer")
    writers: int = Field(description="ranks that wrote it at the POSIX layer (the aggregators under collective I/O)")
    readers: int = Field(default=0, description="ranks that read it at the POSIX layer")
    stripe_count: int
    stripe_size: int
    osts: list[int] = Field(default_factory=list, description="the OSTs its stripes are on, as Darshan recorded them")
    common_request: int = Field(default=0, description="the most common POSIX request size; 0 when unknown")
    suggested_count: int = Field(
        description="stripe count for its size and the ranks using it (never fewer than it has)"
    )
    suggested_size: int = Field(description="stripe size for its common request size (never smaller than it has)")
    command: str | None = Field(default=None, description="lfs setstripe for new files; None when the layout fits")
    fits: bool = Field(description="the layout already meets both suggestions")


class OstUsage(_Model):
    """One Lustre OST's share of the job: each file's bytes and I/O time spread evenly over the OSTs its data
    reached (Darshan records layouts, not per-OST traffic)."""

    model_config = ConfigDict(frozen=True)

    ost: int
    bytes: int
    io_time_s: float = Field(description="I/O time of the files on it, summed over ranks, spread over their OSTs")
    files: int


class RankUsage(_Model):
    """One rank's own I/O: its per-rank records at each file's top layer (shared, reduced records excluded)."""

    model_config = ConfigDict(frozen=True)

    rank: int
    bytes_read: int
    bytes_written: int
    read_s: float
    write_s: float
    meta_s: float
    files: int = Field(description="files it has a record of its own for")
    reads: int = Field(default=0, description="read calls on its own records, at each file's top layer")
    writes: int = Field(default=0, description="write calls on its own records, at each file's top layer")


class AccessSize(_Model):
    model_config = ConfigDict(frozen=True)

    size: int
    count: int


class RankTable(_Model):
    """Per-rank facts as far as Darshan kept them. A file every rank opened is often reduced to one shared record
    (rank -1) that keeps only totals plus the fastest and slowest rank: those ranks' share of it is unknown."""

    ranks: list[RankUsage] = Field(default_factory=list, description="ranks with records of their own, by rank")
    truncated: bool = Field(default=False, description="only the ranks with the most I/O time are listed")
    shared_files: int = Field(default=0, description="files held as shared (reduced) records")
    shared_bytes: int = Field(default=0, description="bytes read and written in shared records")
    shared_fastest: list[RankSeconds] = Field(
        default_factory=list, description="the rank Darshan kept as fastest of each of the largest shared files"
    )
    shared_slowest: list[RankSeconds] = Field(
        default_factory=list, description="the rank Darshan kept as slowest of each of the largest shared files"
    )
    access_sizes: list[AccessSize] = Field(
        default_factory=list,
        description="the job's most common POSIX request sizes (Darshan's ACCESS1-4 over every record, reads and "
        "writes together), most frequent first",
    )
    posix_requests: int = Field(default=0, description="POSIX reads and writes, to put access_sizes in proportion")


class Report(_Model):
    schema_version: str = SCHEMA_VERSION
    tool_version: str
    log_path: str
    job: JobSummary
    io_share: IOShare | None
    counts: SeverityCounts
    findings: list[Finding]
    thresholds: dict[str, float | int]
    problems: list[str] = Field(default_factory=list, description="things the reader could not do")
    cross_layer: CrossLayerSummary | None = Field(
        default=None,
        description="how each file's requests changed from HDF5/PnetCDF through MPI-IO to POSIX and Lustre",
    )
    verdict: Verdict
    top_files: list[FileUsage] = Field(
        default_factory=list, description="the files with the most I/O time, largest first (at most 10)"
    )
    files_with_io: int = Field(default=0, description="files with any I/O time or bytes (top_files lists the first)")
    file_systems: list[FileSystemUsage] = Field(
        default_factory=list, description="bytes and time per kind of file system, the most bytes first"
    )
    files_opened: int = Field(
        default=0, description="files opened at least once at POSIX, MPI-IO, STDIO or DFS (each file once)"
    )
    files_opened_without_data: int = Field(
        default=0, description="of those, files the job read no byte from and wrote no byte to"
    )
    file_groups: list[FileGroup] = Field(
        default_factory=list, description="files sharing a name pattern, the most files first (at most 40)"
    )
    software_files: list[SoftwareFiles] = Field(
        default_factory=list, description="files of the software environment (Python packages, libraries), by kind"
    )
    files_read: int = Field(default=0, description="files the job read bytes from (each file once, top layer)")
    files_written: int = Field(default=0, description="files the job wrote bytes to (each file once, top layer)")
    read_reuse: ReadReuse | None = Field(
        default=None, description="bytes read against the read files' extents; None when the job read nothing"
    )
    workload: Workload = Workload.MPI
    interfaces: list[InterfaceTotals] = Field(default_factory=list, description="every data-bearing module")
    file_system: str | None = Field(
        default=None, description="file system that carried most of the job's bytes (lustre, gpfs, nfs, daos, ...)"
    )
    lustre_layouts: list[LustreLayout] = Field(
        default_factory=list, description="the Lustre files that moved the most bytes (at most 3), layout assessed"
    )
    osts: list[OstUsage] = Field(
        default_factory=list, description="every OST the job used (at most 512), the most I/O time first"
    )
    rank_table: RankTable = Field(default_factory=RankTable, description="per-rank I/O, as far as the log keeps it")

    def codes(self) -> set[str]:
        return {f.code for f in self.findings}

    def finding(self, code: str) -> Finding | None:
        return next((f for f in self.findings if f.code == code), None)
