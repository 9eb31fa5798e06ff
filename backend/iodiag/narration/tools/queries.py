"""The tools themselves: each a pure function of the report and its validated arguments, returning a result
from ``results``. ``ToolError`` is raised when valid arguments name something the report does not hold.
"""

from __future__ import annotations

import statistics
from itertools import pairwise
from pathlib import PurePosixPath
from typing import Literal

from iodiag.analysis.models import Finding, LayerStats, Report
from iodiag.narration import fact_query
from iodiag.narration.checking.facts import all_paths, rank_findings
from iodiag.narration.checking.untrusted import clean
from iodiag.narration.tools.results import (
    MAX_EVIDENCE,
    MAX_RANK_FINDINGS,
    MAX_RECOMMEND_FINDINGS,
    STACK,
    ActionRow,
    CauseRow,
    Costs,
    FileLayout,
    FileLayoutArgs,
    FileRow,
    FindingActions,
    Gap,
    LayerGap,
    LayerRow,
    NoArgs,
    OstRow,
    QueryArgs,
    QueryResult,
    RankFinding,
    RankRow,
    Recommend,
    RecommendArgs,
    ToolError,
    TopFiles,
    TopFilesArgs,
    TopOsts,
    TopOstsArgs,
    TopRanks,
    TopRanksArgs,
    metric_number,
)

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
            numbers = [metric_number(m.name, m.value, m.unit) for m in f.evidence if not isinstance(m.value, str)]
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
        layers = [_layer_row(lay) for name in STACK if (lay := cl.job_layer(name)) is not None]
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
            for name in STACK
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
            if lay.layer in STACK:
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
