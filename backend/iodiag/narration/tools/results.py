"""What the tools take and give: validated arguments and typed results.

Each result holds only numbers and names the report holds (and ratios between them) and renders itself as
:class:`Fact` lines (:meth:`ToolResult.facts`) that join the verifier's grounding, so what a model quotes from
a result can be checked like any fact.
"""

from __future__ import annotations

import math
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from iodiag.analysis.models import Unit
from iodiag.core.units import human_bytes, human_seconds
from iodiag.narration import fact_query
from iodiag.narration.checking.facts import Fact
from iodiag.narration.checking.quantities import Quantity, exact
from iodiag.narration.checking.untrusted import clean, quote, quote_command

MAX_FILES = 10  # the report lists at most 10 top files
MAX_RANKS = 16
MAX_RECOMMEND_FINDINGS = 3
MAX_RANK_FINDINGS = 5
MAX_EVIDENCE = 6
MAX_TEXT = 300  # log text (paths, commands) in a result sent to the model
STACK = ("HDF5", "PnetCDF", "MPI-IO", "POSIX")  # top layer first: how a request travels down


class ToolError(ValueError):
    """Arguments that are valid in form but name something the report does not hold."""


# --- arguments --------------------------------------------------------------------------------------


class ToolArgs(BaseModel):
    # A model that invents an argument should hear so, not have it silently dropped.
    model_config = ConfigDict(extra="forbid", frozen=True)


class NoArgs(ToolArgs):
    pass


class TopFilesArgs(ToolArgs):
    by: Literal["time", "bytes", "ops"] = Field(
        default="time", description="order by I/O time, bytes moved, or read+write operations"
    )
    n: int = Field(default=5, ge=1, le=MAX_FILES, description="how many files")


class TopOstsArgs(ToolArgs):
    by: Literal["time", "bytes"] = Field(default="time", description="order by I/O time or bytes")
    n: int = Field(default=5, ge=1, le=16, description="how many OSTs")


class TopRanksArgs(ToolArgs):
    n: int = Field(default=5, ge=1, le=MAX_RANKS, description="how many ranks")


class FileLayoutArgs(ToolArgs):
    path: str = Field(min_length=1, max_length=4096, description="the file's path, or its unique file name")


class RecommendArgs(ToolArgs):
    code: str | None = Field(default=None, description="a finding code such as L04; omit it for the costliest findings")

    @field_validator("code")
    @classmethod
    def _upper(cls, v: str | None) -> str | None:
        # "l04" and " L04 " are what small models write for L04; "" is how some leave it out
        if v is None:
            return None
        return v.strip().upper() or None


_QUERY_METRICS = get_args(fact_query.Metric)


class QueryArgs(ToolArgs):
    metric: str = Field(
        description="what to look up, one of: " + ", ".join(_QUERY_METRICS),
        json_schema_extra={"enum": list(_QUERY_METRICS)},
    )
    target: str | None = Field(
        default=None,
        max_length=4096,
        description="what the metric is about: a file name (or a pattern such as out.*.h5), an interface "
        "(POSIX, MPI-IO, STDIO, HDF5, PnetCDF, DFS) or a rank number; omit it for the whole job",
    )
    direction: Literal["read", "write", "both"] = Field(default="both", description="reads, writes or both")
    yes_no: bool = Field(default=False, description="true when the question asks yes or no")

    @field_validator("metric")
    @classmethod
    def _known(cls, v: str) -> str:
        v = v.strip().lower()
        if v not in _QUERY_METRICS:
            raise ValueError(f"unknown metric {v!r}; use one of: {', '.join(_QUERY_METRICS)}")
        return v

    @field_validator("target")
    @classmethod
    def _blank(cls, v: str | None) -> str | None:
        return (v.strip() or None) if v is not None else None


# --- results ----------------------------------------------------------------------------------------


class ToolResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    def facts(self) -> list[Fact]:
        """The result as facts, so that numbers and names a model quotes from it can be verified."""
        raise NotImplementedError


class FileRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    layer: str = Field(description="the layer its time is counted at")
    io_time_s: float
    share_of_io: float
    bytes_read: int
    bytes_written: int
    ops: int | None = Field(description="reads + writes at that layer; null where the report has no count")
    ranks: int
    file_system: str | None


class TopFiles(ToolResult):
    by: Literal["time", "bytes", "ops"]
    files: list[FileRow]
    files_listed: int = Field(description="files the report lists with their usage (those with the most I/O time)")
    files_with_io: int
    note: str = ""

    def facts(self) -> list[Fact]:
        out = [
            Fact(
                "tool:top_files",
                "file",
                f"The report lists the {self.files_listed:,} files with the most I/O time, of "
                f"{self.files_with_io:,} files with I/O.",
                values=(exact(self.files_listed, "bare"), exact(self.files_with_io, "bare")),
            )
        ]
        for i, f in enumerate(self.files):
            ops = f" in {f.ops:,} operations" if f.ops is not None else ""
            out.append(
                Fact(
                    f"tool:top_files:{i}",
                    "file",
                    f"File {i + 1} by {self.by}: {quote(f.path)} ({f.layer}): {human_seconds(f.io_time_s)} of I/O "
                    f"({_pct(f.share_of_io)} of I/O time), {human_bytes(f.bytes_read)} read, "
                    f"{human_bytes(f.bytes_written)} written{ops}, {f.ranks:,} rank(s).",
                    values=(
                        exact(f.io_time_s, "seconds"),
                        *_share(f.share_of_io),
                        exact(f.bytes_read, "bytes"),
                        exact(f.bytes_written, "bytes"),
                        exact(f.bytes_read + f.bytes_written, "bytes"),
                        exact(f.ranks, "bare"),
                        *((exact(f.ops, "bare"),) if f.ops is not None else ()),
                        exact(i + 1, "bare"),
                    ),
                    files=(f.path,),
                )
            )
        return out


class Number(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    value: int | float  # counts and byte totals stay integers: six significant digits would round them
    unit: str


class RankRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    rank: int
    busiest: bool = Field(description="the rank with the most I/O time")
    named_by: list[str] = Field(description="findings that name this rank")


class RankFinding(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: str
    title: str
    ranks: list[int] = Field(description="the first ranks the finding names")
    ranks_named: int
    evidence: list[Number]


class TopRanks(ToolResult):
    nprocs: int
    busiest_rank: int | None
    busiest_rank_io_s: float | None
    mean_rank_io_s: float | None
    runtime_s: float | None
    ranks: list[RankRow]
    findings: list[RankFinding]

    def facts(self) -> list[Fact]:
        out = []
        if self.busiest_rank is not None and self.busiest_rank_io_s is not None:
            values = [exact(self.busiest_rank_io_s, "seconds"), exact(self.nprocs, "bare")]
            if self.mean_rank_io_s is not None:
                values.append(exact(self.mean_rank_io_s, "seconds"))
            out.append(
                Fact(
                    "tool:top_ranks",
                    "ranks",
                    f"The busiest of {self.nprocs:,} ranks is rank {self.busiest_rank}, with "
                    f"{human_seconds(self.busiest_rank_io_s)} of I/O"
                    + (f" (mean rank: {human_seconds(self.mean_rank_io_s)})." if self.mean_rank_io_s else "."),
                    values=tuple(values),
                    ranks=(self.busiest_rank,),
                )
            )
        if self.ranks:
            listed = "; ".join(f"rank {r.rank} ({', '.join(r.named_by) or 'busiest'})" for r in self.ranks)
            out.append(
                Fact(
                    "tool:top_ranks:rows",
                    "ranks",
                    f"Ranks first, with the findings that name them: {listed}.",
                    ranks=tuple(r.rank for r in self.ranks),
                )
            )
        for f in self.findings:
            evidence = "; ".join(f"{n.name} {_plain(n.value)}" for n in f.evidence)
            out.append(
                Fact(
                    f"{f.code}:tool:top_ranks",
                    "ranks",
                    f"{f.code} ({f.title}) names {f.ranks_named:,} rank(s), first ranks "
                    f"{', '.join(map(str, f.ranks))}" + (f"; evidence: {evidence}." if evidence else "."),
                    code=f.code,
                    values=(exact(f.ranks_named, "bare"), *(_number(n) for n in f.evidence)),
                    ranks=tuple(f.ranks),
                )
            )
        return out


class OstRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    ost: int
    io_time_s: float
    bytes: int
    files: int


class TopOsts(ToolResult):
    osts: list[OstRow]
    median_io_time_s: float | None = Field(description="median over every OST the job used")
    note: str = ""

    def facts(self) -> list[Fact]:
        if not self.osts:
            return [Fact("tool:top_osts", "file", f"OSTs: {self.note}")]
        rows = "; ".join(
            f"OST {r.ost}: {human_seconds(r.io_time_s)}, {human_bytes(r.bytes)}, {r.files:,} file(s)" for r in self.osts
        )
        values: list[Quantity] = []
        for r in self.osts:
            values += [
                exact(r.ost, "bare"),
                exact(r.io_time_s, "seconds"),
                exact(r.bytes, "bytes"),
                exact(r.files, "bare"),
            ]
        median = ""
        if self.median_io_time_s is not None:
            median = f" (median OST: {human_seconds(self.median_io_time_s)})"
            values.append(exact(self.median_io_time_s, "seconds"))
        return [Fact("tool:top_osts", "file", f"OSTs first by I/O time{median}: {rows}.", values=tuple(values))]


class LayerRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    layer: str
    read_ops: int | None
    write_ops: int | None
    bytes_read: int
    bytes_written: int
    read_s: float
    write_s: float
    meta_s: float
    time_s: float = Field(description="read + write + metadata time, summed over ranks")


class Gap(BaseModel):
    model_config = ConfigDict(frozen=True)

    upper: str
    lower: str
    time_gap_s: float = Field(description="upper layer's time minus the lower layer's")
    bytes_written_ratio: float | None = Field(description="lower layer's bytes written / upper layer's")
    bytes_read_ratio: float | None
    write_ops_ratio: float | None = Field(description="lower layer's writes per upper-layer write")
    read_ops_ratio: float | None


class LayerGap(ToolResult):
    scope: Literal["cross-layer files", "whole job"]
    files: int | None = Field(description="files through MPI-IO, HDF5 or PnetCDF (scope 'cross-layer files')")
    layers: list[LayerRow]
    gaps: list[Gap]
    note: str = ""

    def facts(self) -> list[Fact]:
        out = []
        if self.files is not None:
            out.append(
                Fact(
                    "tool:layer_gap",
                    "crosslayer",
                    f"{self.files:,} file(s) went through MPI-IO, HDF5 or PnetCDF.",
                    values=(exact(self.files, "bare"),),
                )
            )
        for lay in self.layers:
            out.append(
                Fact(
                    f"tool:layer_gap:{lay.layer}",
                    "crosslayer",
                    f"{lay.layer} ({self.scope}): {human_seconds(lay.time_s)} of I/O time "
                    f"({human_seconds(lay.read_s)} reading, {human_seconds(lay.write_s)} writing, "
                    f"{human_seconds(lay.meta_s)} metadata); {human_bytes(lay.bytes_read)} read, "
                    f"{human_bytes(lay.bytes_written)} written"
                    + (f"; {lay.read_ops:,} reads" if lay.read_ops is not None else "")
                    + (f"; {lay.write_ops:,} writes" if lay.write_ops is not None else "")
                    + ".",
                    values=(
                        exact(lay.time_s, "seconds"),
                        exact(lay.read_s, "seconds"),
                        exact(lay.write_s, "seconds"),
                        exact(lay.meta_s, "seconds"),
                        exact(lay.bytes_read, "bytes"),
                        exact(lay.bytes_written, "bytes"),
                        *(exact(n, "bare") for n in (lay.read_ops, lay.write_ops) if n is not None),
                    ),
                )
            )
        for gap in self.gaps:
            ratios = [
                (label, r)
                for label, r in (
                    ("bytes written", gap.bytes_written_ratio),
                    ("bytes read", gap.bytes_read_ratio),
                    ("writes", gap.write_ops_ratio),
                    ("reads", gap.read_ops_ratio),
                )
                if r is not None
            ]
            out.append(
                Fact(
                    f"tool:layer_gap:{gap.upper}>{gap.lower}",
                    "crosslayer",
                    f"From {gap.upper} to {gap.lower}: {gap.upper} took {human_seconds(abs(gap.time_gap_s))} "
                    f"{'more' if gap.time_gap_s >= 0 else 'less'} than {gap.lower}"
                    + "".join(f"; {label} x{r:.2f}" for label, r in ratios)
                    + ".",
                    values=(
                        exact(gap.time_gap_s, "seconds"),
                        exact(abs(gap.time_gap_s), "seconds"),
                        *(q for _, r in ratios for q in (exact(r, "times"), exact(r, "bare"))),
                    ),
                )
            )
        return out


class FileLayout(ToolResult):
    path: str
    file_system: str | None
    on_lustre: bool | None = Field(description="null where the report does not say")
    stripe_count: int | None
    stripe_size: int | None
    osts: list[int]
    findings: list[str] = Field(description="findings that name this file")
    note: str = ""

    def facts(self) -> list[Fact]:
        if self.stripe_count is None and self.stripe_size is None:
            text = f"Layout of {quote(self.path)}: {self.note}"
            values: tuple[Quantity, ...] = ()
        else:
            size = human_bytes(self.stripe_size) if self.stripe_size is not None else "unknown size"
            text = (
                f"Lustre layout of {quote(self.path)}: {self.stripe_count} stripe(s) of {size}"
                + (f" on OSTs {', '.join(map(str, self.osts))}" if self.osts else "")
                + "."
            )
            values = tuple(
                [
                    *((exact(self.stripe_count, "bare"),) if self.stripe_count is not None else ()),
                    *((exact(self.stripe_size, "bytes"),) if self.stripe_size is not None else ()),
                    *(exact(o, "bare") for o in self.osts),
                ]
            )
        if self.findings:
            text += f" Findings naming it: {', '.join(self.findings)}."
        return [Fact("tool:file_layout", "file", text, values=values, files=(self.path,))]


class CauseRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: str
    title: str
    seconds: float
    share_of_runtime: float
    command: str = Field(description="the concrete setting that addresses it, with this job's values")


class Costs(ToolResult):
    runtime_s: float | None
    io_share: float | None = Field(description="busiest rank's I/O time / run time")
    causes: list[CauseRow] = Field(description="largest first, as the verdict ranks them")

    def facts(self) -> list[Fact]:
        out = []
        if self.io_share is not None and self.runtime_s is not None:
            out.append(
                Fact(
                    "tool:costs",
                    "verdict",
                    f"I/O takes {_pct(self.io_share)} of the {human_seconds(self.runtime_s)} run (busiest rank).",
                    values=(*_share(self.io_share), exact(self.runtime_s, "seconds")),
                )
            )
        for i, c in enumerate(self.causes):
            command = f" Command: {quote_command(c.command, MAX_TEXT)}." if c.command else ""
            out.append(
                Fact(
                    f"{c.code}:tool:costs",
                    "verdict",
                    f"Cause {i + 1}: {c.code} ({clean(c.title, 200)}) cost {human_seconds(c.seconds)}, "
                    f"{_pct(c.share_of_runtime)} of the run time.{command}",
                    code=c.code,
                    values=(exact(c.seconds, "seconds"), *_share(c.share_of_runtime), exact(i + 1, "bare")),
                )
            )
        return out


class ActionRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    recommendation: str
    command: str
    where: str
    effect: str
    saves_s: float | None


class FindingActions(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: str
    title: str
    seconds: float | None = Field(description="what the finding costs")
    actions: list[ActionRow]
    recommendations: list[str] = Field(description="recommendation ids, with or without a concrete command")


class Recommend(ToolResult):
    findings: list[FindingActions]
    note: str = ""

    def facts(self) -> list[Fact]:
        out = []
        for f in self.findings:
            cost = f" costs {human_seconds(f.seconds)}" if f.seconds is not None else ""
            commands = f"{len(f.actions)} concrete command(s)" if f.actions else "no concrete command"
            out.append(
                Fact(
                    f"{f.code}:tool:recommend",
                    "fix",
                    f"{f.code} ({clean(f.title, 200)}){cost}; the report gives {commands} for it.",
                    code=f.code,
                    values=(exact(f.seconds, "seconds"),) if f.seconds is not None else (),
                )
            )
            for i, a in enumerate(f.actions):
                saves = f" It can save up to {human_seconds(a.saves_s)}." if a.saves_s is not None else ""
                out.append(
                    Fact(
                        f"{f.code}:tool:recommend:{i}",
                        "fix",
                        f"To fix {f.code} ({clean(f.title, 200)}): {quote_command(a.command, MAX_TEXT)}; "
                        f"{clean(a.effect, 400)}. Where: {clean(a.where, 300)}.{saves}",
                        code=f.code,
                        values=tuple(
                            [
                                *((exact(a.saves_s, "seconds"),) if a.saves_s is not None else ()),
                                *((exact(f.seconds, "seconds"),) if f.seconds is not None else ()),
                            ]
                        ),
                        rec=a.recommendation,
                    )
                )
        return out


class QueryResult(ToolResult):
    """One typed query over the report's counters (the chat's fact-query layer), answered in a sentence."""

    metric: str
    target: str | None
    answer: str
    _fact: Fact | None = PrivateAttr(default=None)

    def facts(self) -> list[Fact]:
        if self._fact is None:
            return []
        f = self._fact
        return [
            Fact(
                f"tool:query:{self.metric}:{self.target or ''}",
                f.kind,
                f.text,
                values=f.values,
                files=f.files,
                ranks=f.ranks,
            )
        ]


class ToolFailure(BaseModel):
    """What the model reads when a call cannot be run."""

    model_config = ConfigDict(frozen=True)

    tool: str
    error: str


def _plain(v: float) -> str:
    """A number as people write it, never in exponent form (whose digits would read as numbers of their own)."""
    if v == int(v):
        return f"{int(v):,}"
    digits = max(0, 3 - math.floor(math.log10(abs(v))))
    return f"{v:,.{digits}f}"


def _pct(ratio: float) -> str:
    return f"{ratio * 100:.1f}%"


def _share(ratio: float) -> tuple[Quantity, ...]:
    # A result shows a share as a ratio (0.977); an answer may write it so, or as a percentage.
    return exact(ratio * 100, "percent"), exact(ratio, "bare")


def metric_number(name: str, value: float | int, unit: Unit) -> Number:
    return Number(name=name, value=value, unit=unit.value)


def _number(n: Number) -> Quantity:
    dims: dict[str, Any] = {"bytes": "bytes", "seconds": "seconds", "bytes/s": "rate"}
    if n.unit == "ratio":
        return exact(n.value * 100, "percent")
    return exact(n.value, dims.get(n.unit, "bare"))
