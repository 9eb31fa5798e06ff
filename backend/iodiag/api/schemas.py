"""Request and response bodies of the API."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from iodiag.analysis.models import Finding, SeverityCounts
from iodiag.comparison import Comparison
from iodiag.comparison.history import Regression, RunPoint
from iodiag.core.users import USER_NAME
from iodiag.narration.models import Answer

UserName = Annotated[str, StringConstraints(pattern=USER_NAME)]
JobId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9._\[\]-]{0,63}$")]
Count = Annotated[int, Field(ge=1, le=10_000_000)]
Status = Literal["queued", "running", "done", "failed"]
Stage = Literal["queued", "reading", "analyzing", "rendering", "storing", "done", "failed"]
TriageStatus = Literal["open", "in-progress", "resolved", "wontfix"]
Role = Literal["user", "hook", "helpdesk", "admin"]
SeverityName = Literal["critical", "warning", "info", "ok"]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorOut(BaseModel):
    detail: str = Field(description="what went wrong, one line")


class SubmitPath(_In):
    """Submit a log the server reads itself (hook tokens only; confined to the allowed directories)."""

    path: str = Field(min_length=1, max_length=4096, description="absolute path on the server")
    user: UserName | None = Field(default=None, description="owner of the analysis (required for hook tokens)")
    job_id: JobId | None = None
    nodes: Count | None = None
    cb_nodes: Count | None = None


class SubmitOut(BaseModel):
    id: str
    status: Status
    created: bool = Field(description="false when this owner had already submitted the same log")
    url: str


class Triage(BaseModel):
    status: TriageStatus
    assignee: str | None
    note: str | None
    updated_at: datetime | None
    updated_by: str | None


class TriageIn(_In):
    status: TriageStatus | None = None
    assignee: UserName | None = Field(default=None, description="empty string or null with clear_assignee")
    clear_assignee: bool = False
    note: str | None = Field(default=None, max_length=4000)


class RunOut(BaseModel):
    """The run a finished analysis describes: what its history and the triage list show."""

    executable: str | None = Field(description="basename of the command's first word: runs of one application")
    start: datetime | None = Field(description="when the run started, from its log")
    nprocs: int | None
    runtime_s: float | None
    io_time_s: float | None = Field(description="the busiest rank's I/O time")
    io_share: float | None = Field(description="io_time_s / runtime_s")
    verdict_level: SeverityName | None
    headline: str | None = Field(description="the verdict's first line: the costliest cause, its seconds, one action")
    nodes: int | None = Field(default=None, description="compute nodes (submitted with the log, or inferred from it)")
    node_hours: float | None = Field(default=None, description="runtime_s x nodes / 3600; null without nodes")
    time_lost_s: float | None = Field(
        default=None, description="seconds the verdict's causes cost (never more than the I/O time)"
    )
    node_hours_lost: float | None = Field(default=None, description="time_lost_s x nodes / 3600; null without nodes")


class AnalysisSummary(BaseModel):
    id: str
    owner: str
    submitted_by: str
    filename: str
    sha256: str
    size_bytes: int
    source: Literal["upload", "path"]
    job_id: str | None
    exe: str | None
    status: Status
    stage: Stage
    progress: float = Field(ge=0, le=1)
    error: str | None
    attempts: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    analysis_s: float | None
    queue_position: int | None = Field(
        default=None,
        ge=1,
        description="while queued: its place in the line (1 starts next); owners take turns, so a burst from "
        "one owner does not push another's log back",
    )
    counts: SeverityCounts
    max_severity: SeverityName | None
    triage: Triage
    unread_replies: int = Field(
        default=0, ge=0, description="replies in this job's thread, written by others, that the caller has not read"
    )
    run: RunOut | None = Field(default=None, description="null until done (and for analyses made before 0.x kept it)")
    regression: Regression | None = Field(
        default=None, description="in lists: this run's I/O time is far above its application's usual"
    )


class AnalysisLinks(BaseModel):
    self: str
    report_json: str
    report_md: str
    report_html: str
    plots: str
    chat: str
    history: str


class AnalysisOut(AnalysisSummary):
    findings: list[Finding] | None = Field(description="the report's findings once the analysis is done")
    links: AnalysisLinks


class HistoryOut(BaseModel):
    """Earlier and later runs of the same application (same owner, same executable), oldest first."""

    analysis_id: str
    owner: str
    executable: str | None
    runs: list[RunPoint]


class AnalysisPage(BaseModel):
    total: int
    limit: int
    offset: int
    items: list[AnalysisSummary]


SortKey = Literal[
    "created",
    "-created",
    "time_lost",
    "-time_lost",
    "node_hours_lost",
    "-node_hours_lost",
    "node_hours",
    "-node_hours",
    "runtime",
    "-runtime",
    "io_share",
    "-io_share",
    "nprocs",
    "-nprocs",
    "nodes",
    "-nodes",
]


class ReplyIn(_In):
    text: str = Field(min_length=1, max_length=8000)
    drafted: bool = Field(default=False, description="the text started from the generated draft")


class ReplyOut(BaseModel):
    id: int
    author: str
    role: Role
    text: str
    drafted: bool
    created_at: datetime


class ReplyThread(BaseModel):
    analysis_id: str
    owner: str
    replies: list[ReplyOut]


class ReplyDraft(BaseModel):
    """A reply to the job's owner written from the verdict and the recommendations, checked like any answer."""

    analysis_id: str
    owner: str
    text: str
    verified: bool = Field(description="every sentence traced to the report's facts")
    citations: list[str] = Field(description="finding codes and documents the draft rests on")


class ChatIn(_In):
    question: str = Field(min_length=1, max_length=4000)


class ChatMessageOut(BaseModel):
    id: int
    role: Literal["user", "assistant"]
    text: str
    answer: Answer | None
    created_at: datetime


class ChatHistory(BaseModel):
    analysis_id: str
    user: str
    messages: list[ChatMessageOut]


class MeOut(BaseModel):
    user: str
    role: Role
    via: Literal["token", "proxy"]
    unread_replies: int = Field(default=0, ge=0, description="unread replies over every thread the caller may see")
    unread_threads: int = Field(default=0, ge=0, description="threads holding them")


class ThreadRead(BaseModel):
    analysis_id: str
    last_seen_id: int = Field(description="the newest reply now counted as read (0: the thread is empty)")


class TokenIn(_In):
    user: UserName
    role: Role
    note: str = Field(default="", max_length=200)


class TokenOut(BaseModel):
    id: int
    user: str
    role: Role
    prefix: str
    note: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class TokenCreated(TokenOut):
    token: str = Field(description="the token itself: shown this once, stored only as its hash")


class Health(BaseModel):
    status: Literal["ok"]


class Readiness(BaseModel):
    ready: bool
    database: bool
    migrations_at_head: bool
    workers_alive: bool
    workers: int
    queue_depth: int | None


class SettingsOut(BaseModel):
    """The service settings, secrets redacted."""

    values: dict[str, str | int | float | bool | list[str] | None]


class MedianComparison(BaseModel):
    """A run against its application's typical run (``comparison``: A is the median run, B this one)."""

    analysis_id: str
    baseline_id: str = Field(description="the median run: of the other runs' I/O times, the middle one")
    runs: int = Field(ge=1, description="finished runs of the same application (owner and executable) it came from")
    comparison: Comparison
