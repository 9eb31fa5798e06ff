"""The comparison schema: what changed from run A to run B. Versioned; exported as JSON Schema
(``iodiag compare --schema``, checked in as docs/compare.schema.json)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from iodiag.analysis.models import Confidence, Layer, Severity, Unit

COMPARISON_SCHEMA_VERSION = "1.0"


class RunCause(BaseModel):
    """One of a run's ranked causes (from its verdict)."""

    model_config = ConfigDict(frozen=True)

    code: str
    title: str
    seconds: float = Field(description="seconds the run's verdict attributes to this cause")
    share_of_runtime: float
    confidence: Confidence


class RunSummary(BaseModel):
    """One of the two runs, as its own report describes it."""

    model_config = ConfigDict(frozen=True)

    log_path: str
    jobid: int
    exe: str = Field(description="the command line Darshan recorded")
    executable: str = Field(description="basename of the command's first word: what must match to compare")
    nprocs: int
    nodes: int | None
    darshan_version: str
    runtime_s: float
    io_time_s: float | None = Field(description="the busiest rank's I/O time; null without I/O records")
    io_share: float | None = Field(description="io_time_s / runtime_s")
    io_matters: bool | None
    level: Severity = Field(description="the run's own verdict level")
    headline: str = Field(description="the run's own verdict headline")
    causes: list[RunCause] = Field(default_factory=list, description="the run's ranked causes, largest first")


class MetricRow(BaseModel):
    """One number of both runs side by side."""

    model_config = ConfigDict(frozen=True)

    section: str = Field(description="job, I/O, a layer (POSIX, MPI-IO, ...), request sizes, Lustre, OSTs, findings")
    name: str
    unit: Unit
    a: float | int | None
    b: float | int | None
    delta: float | int | None = Field(description="b - a; null when either is unknown")
    change_pct: float | None = Field(description="delta / a in percent; null when a is 0 or either is unknown")


class FindingSide(BaseModel):
    """A finding as one run's ranked diagnosis has it."""

    model_config = ConfigDict(frozen=True)

    severity: Severity
    seconds: float | None = Field(description="the finding's cost (impact); null where the log cannot price it")
    share_of_runtime: float | None
    basis: str = ""
    confidence: Confidence | None = None
    cause_rank: int | None = Field(default=None, description="1-based place among the run's ranked causes")
    cause_seconds: float | None = Field(default=None, description="seconds the run's verdict attributes to it")
    occurrences: int = Field(default=1, description="findings with this code in the run (their costs are summed)")
    message: str = ""


class FindingChange(BaseModel):
    """One finding code in run A, run B or both."""

    model_config = ConfigDict(frozen=True)

    code: str
    title: str
    layer: Layer
    a: FindingSide | None = Field(description="null: not found in run A (or only as 'ok')")
    b: FindingSide | None = Field(description="null: not found in run B (or only as 'ok')")
    delta_seconds: float | None = Field(description="b's cost - a's cost (a missing side costs 0); null if unknown")


class Comparison(BaseModel):
    """What changed from run A to run B: numbers of both with deltas, and the findings resolved, new or changed."""

    schema_version: str = COMPARISON_SCHEMA_VERSION
    tool_version: str
    verdict: str = Field(
        description="one sentence: the I/O-time change, what became of the top cause, and whether I/O still matters"
    )
    changed: bool = Field(description="false when every number and finding is the same in both runs")
    forced: bool = Field(default=False, description="the runs were not comparable and were compared with --force")
    notes: list[str] = Field(default_factory=list, description="differences between the runs to keep in mind")
    a: RunSummary
    b: RunSummary
    metrics: list[MetricRow]
    findings_resolved: list[FindingChange] = Field(description="in run A, gone from run B; costliest in A first")
    findings_new: list[FindingChange] = Field(description="not in run A, in run B; costliest in B first")
    findings_changed: list[FindingChange] = Field(
        description="same code in both, different severity or cost; largest change first"
    )
    findings_unchanged: list[FindingChange] = Field(
        default_factory=list, description="same code, same severity and cost"
    )

    def metric(self, name: str, section: str | None = None) -> MetricRow | None:
        return next((m for m in self.metrics if m.name == name and (section is None or m.section == section)), None)


class SizeHistogram(BaseModel):
    """Requests per Darshan size bin for one layer and direction, summed over the layer's records."""

    model_config = ConfigDict(frozen=True)

    layer: str
    op: str = Field(description="read or write")
    counts: list[int] = Field(description="one count per bin of iodiag.analysis.views.stack.BINS")


class OstTime(BaseModel):
    model_config = ConfigDict(frozen=True)

    ost: int
    bytes: float
    time_s: float
    files: int


class LayoutSummary(BaseModel):
    """A run's Lustre layouts in a few numbers, to compare two runs (one file's layout is ``LustreLayout``)."""

    model_config = ConfigDict(frozen=True)

    files: int = Field(description="files with a Lustre layout record")
    osts_used: int
    stripe_count_median: float
    stripe_count_max: int
    stripe_size_median: float


class RunFacts(BaseModel):
    """Numbers a comparison needs that the report does not carry, read from the run's profile."""

    model_config = ConfigDict(frozen=True)

    size_histograms: list[SizeHistogram] = Field(default_factory=list)
    lustre: LayoutSummary | None = None
    osts: list[OstTime] = Field(default_factory=list, description="I/O time per OST (each file spread over its OSTs)")
