"""Typed tools over a report, offered to a model that can call functions (OpenAI ``tools``).

The prompt holds the facts that fit in the window, picked for the question; a model that can call functions
can also look up what a question needs beyond them: the busiest files by bytes, the layout of one file, the
commands for one finding. Each tool here is a pure
function of the report and its validated arguments; its result holds only numbers and names the report holds
(and ratios between them), so what a model quotes from a result can be checked like any fact: every result
renders itself as :class:`Fact` lines (:meth:`ToolResult.facts`) that join the verifier's grounding.

:func:`run` never raises: an unknown tool, arguments that are not JSON or do not validate, or a name the report
does not hold all come back as an error result the model can read and correct.
"""

from __future__ import annotations

import json
import logging
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import PurePosixPath
from typing import Any, Generic, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from iodiag.analysis.models import Finding, LayerStats, Report, Unit
from iodiag.core.units import human_bytes, human_seconds
from iodiag.narration import fact_query
from iodiag.narration.budget import MESSAGE_OVERHEAD, MIN_PROMPT_TOKENS
from iodiag.narration.facts import Fact, all_paths, rank_findings
from iodiag.narration.quantities import Quantity, exact
from iodiag.narration.untrusted import clean, quote, quote_command

log = logging.getLogger(__name__)

MAX_TOOL_ROUNDS = 2
MAX_CALLS_PER_ROUND = 3  # a small model that loops on calls must not fill the window with results
RESULT_TOKENS = 768  # room kept in the window for the calls and their results, all rounds together
MAX_FILES = 10  # the report lists at most 10 top files
MAX_RANKS = 16
MAX_RECOMMEND_FINDINGS = 3
MAX_RANK_FINDINGS = 5
MAX_EVIDENCE = 6
MAX_TEXT = 300  # log text (paths, commands) in a result sent to the model
_STACK = ("HDF5", "PnetCDF", "MPI-IO", "POSIX")  # top layer first: how a request travels down


class ToolError(ValueError):
    """Arguments that are valid in form but name something the report does not hold."""


# --- arguments --------------------------------------------------------------------------------------


class _Args(BaseModel):
    # A model that invents an argument should hear so, not have it silently dropped.
    model_config = ConfigDict(extra="forbid", frozen=True)


class NoArgs(_Args):
    pass


class TopFilesArgs(_Args):
    by: Literal["time", "bytes", "ops"] = Field(
        default="time", description="order by I/O time, bytes moved, or read+write operations"
    )
    n: int = Field(default=5, ge=1, le=MAX_FILES, description="how many files")


class TopOstsArgs(_Args):
    by: Literal["time", "bytes"] = Field(default="time", description="order by I/O time or bytes")
    n: int = Field(default=5, ge=1, le=16, description="how many OSTs")


class TopRanksArgs(_Args):
    n: int = Field(default=5, ge=1, le=MAX_RANKS, description="how many ranks")


class FileLayoutArgs(_Args):
    path: str = Field(min_length=1, max_length=4096, description="the file's path, or its unique file name")


class RecommendArgs(_Args):
    code: str | None = Field(default=None, description="a finding code such as L04; omit it for the costliest findings")

    @field_validator("code")
    @classmethod
    def _upper(cls, v: str | None) -> str | None:
        # "l04" and " L04 " are what small models write for L04; "" is how some leave it out
        if v is None:
            return None
        return v.strip().upper() or None


_QUERY_METRICS = get_args(fact_query.Metric)


class QueryArgs(_Args):
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


# --- the tools --------------------------------------------------------------------------------------


def top_files(report: Report, args: TopFilesArgs) -> TopFiles:
    ops = _file_ops(report)
    rows = [
        FileRow(
            path=fu.path,
            layer=fu.layer,
            io_time_s=fu.io_time_s,
            share_of_io=fu.share_of_io,
            bytes_read=fu.bytes_read,
            bytes_written=fu.bytes_written,
            ops=ops.get((fu.path, fu.layer)),
            ranks=fu.ranks,
            file_system=fu.file_system,
        )
        for fu in report.top_files
    ]
    note = ""
    if len(report.top_files) < report.files_with_io:
        note = f"ranked among the {len(report.top_files)} files with the most I/O time the report lists"
    if args.by == "bytes":
        rows.sort(key=lambda r: -(r.bytes_read + r.bytes_written))
    elif args.by == "ops":
        rows.sort(key=lambda r: (r.ops is None, -(r.ops or 0)))
        if any(r.ops is None for r in rows):
            counts = "operation counts only for files read or written through MPI-IO, HDF5 or PnetCDF"
            note = "; ".join(x for x in (note, f"the report holds {counts}: the others come last") if x)
    return TopFiles(
        by=args.by, files=rows[: args.n], files_listed=len(rows), files_with_io=report.files_with_io, note=note
    )


def top_ranks(report: Report, args: TopRanksArgs) -> TopRanks:
    share = report.io_share
    busiest = share.slowest_rank if share is not None else None
    named: dict[int, list[str]] = {}
    findings: list[RankFinding] = []
    for f in _by_cost(report.findings):
        if not f.ranks:
            continue
        if len(findings) < MAX_RANK_FINDINGS:
            numbers = [_metric(m.name, m.value, m.unit) for m in f.evidence if not isinstance(m.value, str)]
            findings.append(
                RankFinding(
                    code=f.code,
                    title=f.title,
                    ranks=f.ranks[: args.n],
                    ranks_named=len(f.ranks),
                    evidence=numbers[:MAX_EVIDENCE],
                )
            )
        for r in f.ranks:
            named.setdefault(r, []).append(f.code)
    # The busiest rank first, then those most findings name; ties keep the order the findings give them.
    order = sorted(named, key=lambda r: (r != busiest, -len(named[r])))
    if busiest is not None and busiest not in named:
        order.insert(0, busiest)
    rows = [RankRow(rank=r, busiest=r == busiest, named_by=named.get(r, [])) for r in order[: args.n]]
    return TopRanks(
        nprocs=report.job.nprocs,
        busiest_rank=busiest,
        busiest_rank_io_s=share.slowest_rank_io_s if share is not None else None,
        mean_rank_io_s=share.mean_rank_io_s if share is not None else None,
        runtime_s=share.runtime_s if share is not None else None,
        ranks=rows,
        findings=findings,
    )


def top_osts(report: Report, args: TopOstsArgs) -> TopOsts:
    if not report.osts:
        why = "the job used no Lustre file system" if report.file_system != "lustre" else "the log has no layouts"
        return TopOsts(osts=[], median_io_time_s=None, note=why)
    rows = sorted(
        report.osts,
        key=(lambda o: (-o.io_time_s, -o.bytes, o.ost)) if args.by == "time" else (lambda o: (-o.bytes, o.ost)),
    )
    times = sorted(o.io_time_s for o in report.osts)
    return TopOsts(
        osts=[OstRow(ost=o.ost, io_time_s=o.io_time_s, bytes=o.bytes, files=o.files) for o in rows[: args.n]],
        median_io_time_s=statistics.median(times),
    )


def layer_gap(report: Report, args: NoArgs) -> LayerGap:
    cl = report.cross_layer
    if cl is not None:
        layers = [_layer_row(lay) for name in _STACK if (lay := cl.job_layer(name)) is not None]
        scope: Literal["cross-layer files", "whole job"] = "cross-layer files"
        files: int | None = cl.files_total
        note = "totals over the files read or written through MPI-IO, HDF5 or PnetCDF"
    else:
        by_name = {i.name: i for i in report.interfaces}
        layers = [
            LayerRow(
                layer=name,
                read_ops=None,
                write_ops=None,
                bytes_read=i.bytes_read,
                bytes_written=i.bytes_written,
                read_s=i.read_s,
                write_s=i.write_s,
                meta_s=i.meta_s,
                time_s=i.read_s + i.write_s + i.meta_s,
            )
            for name in _STACK
            if (i := by_name.get(name)) is not None
        ]
        scope, files = "whole job", None
        note = "job totals per interface: the report has no per-file cross-layer summary (no MPI-IO, HDF5 or PnetCDF)"
    gaps = [_gap(upper, lower) for upper, lower in pairwise(layers)]
    if not gaps:
        note += "; one layer only, so no gap between layers"
    return LayerGap(scope=scope, files=files, layers=layers, gaps=gaps, note=note)


def file_layout(report: Report, args: FileLayoutArgs) -> FileLayout:
    path = _resolve_path(report, args.path)
    usage = next((fu for fu in report.top_files if fu.path == path), None)
    fs = usage.file_system if usage is not None else None
    crossed = report.cross_layer.files if report.cross_layer is not None else []
    lustre = next((lay for x in crossed if x.path == path and (lay := x.layer("Lustre")) is not None), None)
    on_lustre: bool | None = True if lustre is not None or fs == "lustre" else (False if fs else None)
    if lustre is not None:
        note = ""
    elif on_lustre:
        note = "on Lustre, but the report holds no stripe layout for this file"
    elif on_lustre is False:
        note = f"not on Lustre (file system: {fs})"
    else:
        note = "the report does not record this file's file system or layout"
    return FileLayout(
        path=path,
        file_system=fs or ("lustre" if lustre is not None else None),
        on_lustre=on_lustre,
        stripe_count=lustre.stripe_count if lustre is not None else None,
        stripe_size=lustre.stripe_size if lustre is not None else None,
        osts=list(lustre.osts) if lustre is not None else [],
        findings=[f.code for f in report.findings if any(fe.path == path for fe in f.files)],
        note=note,
    )


def query(report: Report, args: QueryArgs) -> QueryResult:
    target = args.target
    interfaces = {k.lower(): v for k, v in fact_query.INTERFACES.items()}
    scope: Literal["job", "interface", "rank", "file"] = "job"
    if target is not None and target.lstrip("#").isdigit():
        scope, target = "rank", target.lstrip("#")
    elif target is not None and target.lower() in interfaces:
        scope, target = "interface", interfaces[target.lower()]
    elif target is not None:
        scope = "file"
    q = fact_query.Query(
        metric=args.metric,  # validated against the same list
        scope=scope,
        target=target,
        direction=args.direction,
        yes_no=args.yes_no,
        raw=f"{args.metric} {args.target or ''}".strip(),
    )
    fact = fact_query.answer(report, q)
    if fact is None:
        raise ToolError(
            f"the log cannot answer {args.metric}" + (f" for {args.target!r}" if args.target else "") + "; try another "
            "metric or target"
        )
    out = QueryResult(metric=args.metric, target=args.target, answer=clean(fact.text, 1200))
    out._fact = fact
    return out


def costs(report: Report, args: NoArgs) -> Costs:
    share = report.io_share
    return Costs(
        runtime_s=share.runtime_s if share is not None else None,
        io_share=report.verdict.io_share,
        causes=[
            CauseRow(
                code=c.code,
                title=c.title,
                seconds=c.seconds,
                share_of_runtime=c.share_of_runtime,
                command=c.command,
            )
            for c in report.verdict.causes
        ],
    )


def recommend(report: Report, args: RecommendArgs) -> Recommend:
    if args.code is not None:
        f = report.finding(args.code)
        if f is None:
            codes = ", ".join(sorted(report.codes())) or "none"
            raise ToolError(f"the report has no finding {args.code}; its findings: {codes}")
        chosen = [f]
        note = "" if f.actions else f"the report has no concrete command for {f.code}"
    else:
        chosen = [f for f in rank_findings(report) if f.actions][:MAX_RECOMMEND_FINDINGS]
        note = "" if chosen else "no finding of this report comes with a concrete command"
    return Recommend(
        findings=[
            FindingActions(
                code=f.code,
                title=f.title,
                seconds=f.impact.seconds if f.impact is not None else None,
                actions=[
                    ActionRow(
                        recommendation=a.recommendation,
                        command=a.command,
                        where=a.where,
                        effect=a.effect,
                        saves_s=a.saves_s,
                    )
                    for a in f.actions
                ],
                recommendations=list(f.recommendations),
            )
            for f in chosen
        ],
        note=note,
    )


A = TypeVar("A", bound=_Args)
R = TypeVar("R", bound=ToolResult)


@dataclass(frozen=True)
class Tool(Generic[A, R]):
    name: str
    description: str  # one line: what the model reads to choose it
    args: type[A]
    fn: Callable[[Report, A], R]

    def __call__(self, report: Report, args: A) -> R:
        return self.fn(report, args)

    def schema(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry: a function with a JSON Schema for its arguments."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": _schema(self.args)},
        }


TOOLS: dict[str, Tool[Any, Any]] = {
    t.name: t
    for t in (
        Tool("costs", "The causes of the job's slow I/O, ranked, with seconds and share of the run.", NoArgs, costs),
        Tool(
            "query",
            "Look up one fact from the log's counters (bytes, times, calls, ranks, files, file system, stripes, "
            "OSTs, interfaces) for the job, a file, an interface or a rank; the answer is a sentence with numbers.",
            QueryArgs,
            query,
        ),
        Tool(
            "recommend",
            "Concrete commands (where they go, what they change, seconds they can save) for one finding "
            "or, without a code, for the costliest findings.",
            RecommendArgs,
            recommend,
        ),
        Tool("top_files", "The files with the most I/O time, bytes or operations.", TopFilesArgs, top_files),
        Tool(
            "top_ranks",
            "The busiest rank and the ranks findings name, with their evidence.",
            TopRanksArgs,
            top_ranks,
        ),
        Tool(
            "top_osts",
            "The Lustre OSTs with the most I/O time or bytes, and the median OST.",
            TopOstsArgs,
            top_osts,
        ),
        Tool(
            "layer_gap",
            "Time, bytes and operations per I/O layer (HDF5/PnetCDF, MPI-IO, POSIX) and the gaps between them.",
            NoArgs,
            layer_gap,
        ),
        Tool(
            "file_layout",
            "The Lustre stripe layout of one file, where the report has it.",
            FileLayoutArgs,
            file_layout,
        ),
    )
}


def schemas() -> list[dict[str, Any]]:
    """Every tool as an OpenAI ``tools`` entry, in the order they are offered."""
    return [t.schema() for t in TOOLS.values()]


def reserve_tokens(count: Callable[[str], int], context_tokens: int, answer_tokens: int) -> int | None:
    """Tokens to keep free in the window for the tools (their schemas, the calls and results), or None when
    the window is too small to offer them and still hold a useful prompt."""
    need = count(json.dumps(schemas(), separators=(",", ":"))) + RESULT_TOKENS
    return need if context_tokens - answer_tokens - need >= MIN_PROMPT_TOKENS else None


@dataclass(frozen=True)
class ToolRun:
    """One call, run: the ``tool`` message's content and the facts its result adds to the grounding."""

    name: str
    ok: bool
    content: str
    facts: list[Fact] = field(default_factory=list)


def run(report: Report, name: str, arguments: str | Mapping[str, Any] | None) -> ToolRun:
    """Run one call as a model asked for it; never raises."""
    tool = TOOLS.get(name)
    if tool is None:
        return failure(name, f"unknown tool {clean(name, 60)!r}; tools: {', '.join(TOOLS)}")
    try:
        raw = json.loads(arguments) if isinstance(arguments, str) and arguments.strip() else (arguments or {})
    except json.JSONDecodeError as exc:
        return failure(name, f"arguments are not JSON: {exc.msg}")
    if not isinstance(raw, Mapping):
        return failure(name, "arguments must be a JSON object")
    try:
        args = tool.args.model_validate(dict(raw))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
        return failure(name, f"bad arguments: {problems}")
    try:
        result = tool(report, args)
    except ToolError as exc:
        return failure(name, str(exc))
    except Exception:  # a bug in a tool must cost the model one answer's tool round, not the answer
        log.exception("tool %s failed", name)
        return failure(name, "the tool failed")
    return ToolRun(name, True, to_content(result), result.facts())


@dataclass(frozen=True)
class Answered:
    """One round of calls, answered: (call id, content) per call in order, their facts, and the room left."""

    results: list[tuple[str, str]]
    facts: list[Fact]
    room: int


def run_calls(
    report: Report, calls: Sequence[tuple[str, str, str]], count: Callable[[str], int], room: int
) -> Answered:
    """Answer every call (id, name, arguments) of one round, within ``room`` tokens of the window.

    Every call gets an answer, as the protocol wants; calls past ``MAX_CALLS_PER_ROUND`` and results that do not
    fit get an error instead, and add no facts.
    """
    results: list[tuple[str, str]] = []
    facts: list[Fact] = []
    for i, (call_id, name, arguments) in enumerate(calls):
        if i >= MAX_CALLS_PER_ROUND:
            ran = failure(name, f"not run: at most {MAX_CALLS_PER_ROUND} calls at a time")
        else:
            ran = run(report, name, arguments)
        cost = count(ran.content) + count(arguments) + MESSAGE_OVERHEAD
        if cost > room:
            ran = failure(name, "the result is too long for the context window: ask for fewer items or one code")
            cost = count(ran.content) + count(arguments) + MESSAGE_OVERHEAD
        room -= cost
        results.append((call_id, ran.content))
        facts += ran.facts
    return Answered(results, facts, room)


def failure(name: str, error: str) -> ToolRun:
    return ToolRun(name, False, ToolFailure(tool=clean(name, 60), error=error).model_dump_json())


def to_content(result: BaseModel) -> str:
    """A result as the ``tool`` message's JSON: log text cleaned and in backticks, as in every prompt (text
    from the log is data, never instructions), floats cut to six digits (they cost tokens, not precision)."""
    return json.dumps(_compact(result.model_dump(mode="json")), separators=(",", ":"), ensure_ascii=False)


# --- helpers ----------------------------------------------------------------------------------------

_LOG_KEYS = frozenset({"path", "command"})


def _compact(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _compact(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_compact(v, key) for v in value]
    if isinstance(value, float) and math.isfinite(value):
        # Below 1e-4, JSON writes an exponent ("3.1e-06"), which a model copies and a reader misreads; a share
        # or a time that small is 0 to the fourth decimal.
        return float(f"{value:.6g}") if abs(value) >= 1e-4 else 0.0
    if isinstance(value, str):
        if key == "command" and value:
            return quote_command(value, MAX_TEXT)  # exact: to be pasted, its paths already shell-quoted
        return quote(value, MAX_TEXT) if key in _LOG_KEYS and value else clean(value, 400)
    return value


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    """The arguments' JSON Schema without pydantic's titles (tokens, and nothing a model needs)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    schema: dict[str, Any] = strip(model.model_json_schema())
    schema.setdefault("properties", {})
    return schema


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


def _metric(name: str, value: float | int, unit: Unit) -> Number:
    return Number(name=name, value=value, unit=unit.value)


def _number(n: Number) -> Quantity:
    dims: dict[str, Any] = {"bytes": "bytes", "seconds": "seconds", "bytes/s": "rate"}
    if n.unit == "ratio":
        return exact(n.value * 100, "percent")
    return exact(n.value, dims.get(n.unit, "bare"))


def _by_cost(findings: list[Finding]) -> list[Finding]:
    def cost(f: Finding) -> float:
        return f.impact.seconds if f.impact is not None and f.impact.seconds is not None else -1.0

    return sorted(findings, key=lambda f: (f.severity.rank, -cost(f)))


def _file_ops(report: Report) -> dict[tuple[str, str], int]:
    """Reads + writes per (file, layer), where the cross-layer summary counted them."""
    out: dict[tuple[str, str], int] = {}
    if report.cross_layer is None:
        return out
    for x in report.cross_layer.files:
        for lay in x.layers:
            if lay.layer in _STACK:
                out[(x.path, lay.layer)] = lay.reads.ops + lay.writes.ops
    return out


def _layer_row(lay: LayerStats) -> LayerRow:
    return LayerRow(
        layer=lay.layer,
        read_ops=lay.reads.ops,
        write_ops=lay.writes.ops,
        bytes_read=lay.reads.bytes,
        bytes_written=lay.writes.bytes,
        read_s=lay.reads.time_s,
        write_s=lay.writes.time_s,
        meta_s=lay.meta_time_s,
        time_s=lay.reads.time_s + lay.writes.time_s + lay.meta_time_s,
    )


def _ratio(lower: int | None, upper: int | None) -> float | None:
    return lower / upper if lower is not None and upper else None


def _gap(upper: LayerRow, lower: LayerRow) -> Gap:
    return Gap(
        upper=upper.layer,
        lower=lower.layer,
        time_gap_s=upper.time_s - lower.time_s,
        bytes_written_ratio=_ratio(lower.bytes_written, upper.bytes_written),
        bytes_read_ratio=_ratio(lower.bytes_read, upper.bytes_read),
        write_ops_ratio=_ratio(lower.write_ops, upper.write_ops),
        read_ops_ratio=_ratio(lower.read_ops, upper.read_ops),
    )


def _resolve_path(report: Report, given: str) -> str:
    """The report's path for what a model wrote: the path itself, or a unique tail of it (its file name)."""
    paths = list(dict.fromkeys([*(fu.path for fu in report.top_files), *all_paths(report)]))
    want = given.strip().strip("`'\"")
    if want in paths:
        return want
    tail = want.lstrip("/")
    hits = [p for p in paths if tail and (p.endswith("/" + tail) or PurePosixPath(p).name == tail)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise ToolError(f"{len(hits)} files of the report end with {clean(want, 120)!r}: give the full path")
    raise ToolError(f"the report names no file {clean(want, 120)!r}")
