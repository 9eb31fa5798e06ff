"""Run every registered check over a profile and assemble the report."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from iodiag import __version__
from iodiag.analysis import checks as _checks  # noqa: F401  (registers the checks)
from iodiag.analysis.models import (
    CrossLayerSummary,
    Finding,
    InterfaceTotals,
    JobFacts,
    JobSummary,
    ModuleSummary,
    RankTable,
    Report,
    SeverityCounts,
)
from iodiag.analysis.outcomes import grading, verdict
from iodiag.analysis.outcomes.actions import actions_for, lustre_layouts, ost_usage
from iodiag.analysis.outcomes.advice import fit_recommendations
from iodiag.analysis.registry import CHECKS, CheckSpec, Hit
from iodiag.analysis.views.context import Context
from iodiag.analysis.views.file_usage import (
    busiest_files,
    file_groups,
    file_system_usage,
    files_by_direction,
    files_opened,
    files_opened_without_data,
    files_per_layer,
    read_reuse,
    software_files,
)
from iodiag.analysis.views.rank_usage import rank_table
from iodiag.analysis.views.source_lines import addr2line, known, source_lines
from iodiag.analysis.views.stack import cross_layer
from iodiag.core.thresholds import Thresholds
from iodiag.ingest import JobProfile
from iodiag.ingest.stacks import CallStacks, SourceLocation

T = TypeVar("T")


def analyze(
    profile: JobProfile,
    thresholds: Thresholds | None = None,
    top_n: int = 10,
    facts: JobFacts | None = None,
    binary: str | Path | None = None,
) -> Report:
    """Same profile and thresholds in, same report out: checks run in code order and sort stably.

    ``binary``: the job's executable, to map call-stack addresses the log's own table lacks
    (raises ``BinaryError`` when it cannot be used).
    """
    t = thresholds or Thresholds()
    ctx = Context(profile, top_n=top_n, facts=facts, thresholds=t)
    findings: list[Finding] = []
    problems = list(profile.problems)
    lines = _address_lines(profile, binary)
    for code in sorted(CHECKS):
        spec = CHECKS[code]
        if not all(profile.has(m) for m in spec.requires):
            continue
        if spec.requires_any and not any(profile.has(m) for m in spec.requires_any):
            continue
        try:
            result = spec.fn(ctx, t)
        except Exception as exc:  # a bug in one check must not hide the others' findings
            problems.append(f"check {code} failed: {type(exc).__name__}: {exc}")
            continue
        hits = result if isinstance(result, list) else [result] if result is not None else []
        findings.extend(_finding(ctx, t, spec, h, profile.stacks, lines, top_n) for h in hits)
    findings = verdict.settle_symptoms(ctx, findings)
    findings = verdict.settle_same_file(findings)
    findings = verdict.settle_roots(findings, t)
    findings.sort(key=_by_cost)
    counts = Counter(f.severity.value for f in findings)
    xl = _cross_layer(ctx, problems)
    # Every file a finding names gets its row, so "how is initial_conditions.dat striped?" finds its numbers
    named = frozenset(int(e.record_id) for f in findings for e in f.files if e.record_id.isdigit())
    top_files, files_with_io = busiest_files(ctx, named=named)
    files_read, files_written = files_by_direction(ctx)
    return Report(
        tool_version=__version__,
        log_path=profile.path,
        job=_job_summary(profile, ctx.nodes),
        io_share=ctx.io_share,
        counts=SeverityCounts(**counts),
        findings=findings,
        thresholds=t.model_dump(),
        problems=problems,
        cross_layer=xl,
        verdict=verdict.build(ctx, findings, t),
        top_files=top_files,
        files_with_io=files_with_io,
        files_opened=files_opened(ctx),
        files_opened_without_data=files_opened_without_data(ctx),
        file_systems=_optional("file systems", file_system_usage, ctx, problems) or [],
        file_groups=_optional("file groups", file_groups, ctx, problems) or [],
        software_files=_optional("software files", software_files, ctx, problems) or [],
        files_read=files_read,
        files_written=files_written,
        read_reuse=_optional("read reuse", read_reuse, ctx, problems),
        workload=ctx.workload,
        interfaces=_with_own_files(ctx),
        file_system=ctx.file_system,
        lustre_layouts=_optional("Lustre layout assessment", lustre_layouts, ctx, problems) or [],
        osts=_optional("per-OST load", ost_usage, ctx, problems) or [],
        rank_table=_rank_table(ctx, problems),
    )


def _with_own_files(ctx: Context) -> list[InterfaceTotals]:
    # The counted layers are named as the interfaces are (POSIX, MPI-IO, STDIO, DFS, DAOS).
    per = files_per_layer(ctx)
    return [i.model_copy(update={"own_files": per.get(i.name, 0)}) for i in ctx.interfaces]


def _rank_table(ctx: Context, problems: list[str]) -> RankTable:
    try:
        return rank_table(ctx)
    except Exception as exc:  # per-rank facts are for questions; the report stands without them
        problems.append(f"per-rank table failed: {type(exc).__name__}: {exc}")
        return RankTable()


def _optional(what: str, build: Callable[[Context], T], ctx: Context, problems: list[str]) -> T | None:
    """A part of the report that the rest stands without: a failure is a problem line and None, not a lost
    report."""
    try:
        return build(ctx)
    except Exception as exc:
        problems.append(f"{what} failed: {type(exc).__name__}: {exc}")
        return None


def with_detected_severity(report: Report) -> Report:
    """The report as the detection rules grade it (``--severity drishti``): each finding's detected severity,
    sorted by severity then code like Drishti. Costs and the verdict are kept."""
    findings = [f.model_copy(update={"severity": f.detected_severity}) for f in report.findings]
    findings.sort(key=lambda f: (f.severity.rank, f.code))
    counts = Counter(f.severity.value for f in findings)
    return report.model_copy(update={"findings": findings, "counts": SeverityCounts(**counts)})


def _by_cost(f: Finding) -> tuple[int, float, str]:
    """Most severe first, and inside a severity the costliest first (unpriced findings last)."""
    seconds = f.impact.seconds if f.impact is not None and f.impact.seconds is not None else -1.0
    return (f.severity.rank, -seconds, f.code)


def _cross_layer(ctx: Context, problems: list[str]) -> CrossLayerSummary | None:
    try:
        return cross_layer(ctx)
    except Exception as exc:  # the summary must not cost the report
        problems.append(f"cross-layer summary failed: {type(exc).__name__}: {exc}")
        return None


def _address_lines(profile: JobProfile, binary: str | Path | None) -> dict[int, SourceLocation]:
    stacks = profile.stacks
    if stacks is None:
        return {}
    lines = dict(stacks.lines)
    if binary is not None:
        missing = [a for a in stacks.addresses() if not known(lines.get(a))]
        lines.update(addr2line(binary, missing))
    return lines


def _finding(
    ctx: Context,
    t: Thresholds,
    spec: CheckSpec,
    hit: Hit,
    stacks: CallStacks | None,
    lines: dict[int, SourceLocation],
    top_n: int,
) -> Finding:
    wanted = [*hit.lead_recommendations, *spec.recommendations, *hit.extra_recommendations]
    recs = fit_recommendations(ctx, list(dict.fromkeys(wanted)))
    detected = hit.severity or spec.severity
    imp = grading.impact(ctx, hit.cost, spec)
    severity, why_lower = grading.grade(ctx, spec, detected, imp, hit.cost, t)
    message = hit.message
    slow_ost = next((int(m.value) for m in hit.evidence if m.name == "slow_ost" and not isinstance(m.value, str)), None)
    actions = actions_for(ctx, spec.code, recs, hit.files, imp, slow_ost) if imp is not None else []
    if why_lower and detected.rank < severity.rank:
        message += f" (Shown as {severity.value}: {why_lower}.)"
    where = None
    if stacks is not None and hit.trace is not None and hit.segments is not None:
        where = source_lines(hit.trace, hit.segments, stacks, lines, limit=max(top_n, 1))
    return Finding(
        code=spec.code,
        severity=severity,
        detected_severity=detected,
        impact=imp,
        layer=spec.layer,
        title=spec.title,
        message=message,
        subject=hit.subject,
        evidence=hit.evidence,
        files=hit.files,
        files_total=hit.files_total or len(hit.files),
        ranks=hit.ranks,
        recommendations=recs,
        actions=actions,
        source_lines=where,
    )


def _job_summary(profile: JobProfile, nodes: int | None) -> JobSummary:
    m = profile.meta
    fs: Counter[str] = Counter()
    by_dir: dict[str, str] = {}
    # DFS and DAOS records name objects inside a DAOS container, not paths under the mount table.
    daos_ids = {
        int(i)
        for mod in ("DFS", "DAOS")
        if (t := profile.tables.get(mod)) is not None and len(t)
        for i in t["id"].tolist()
    }
    fs["daos"] = len(daos_ids)
    if not daos_ids:
        del fs["daos"]
    lus = profile.tables.get("LUSTRE")
    lustre_ids = {int(i) for i in lus["id"].tolist()} if lus is not None and len(lus) else set()
    for rid, name in profile.names.items():
        if int(rid) in daos_ids:
            continue
        if int(rid) in lustre_ids:  # the LUSTRE module saw its layout: whatever the mount table says
            fs["lustre"] += 1
            continue
        # Files share directories, and the mount lookup is per directory.
        d = name.rsplit("/", 1)[0] + "/x" if "/" in name else name
        kind = by_dir.get(d)
        if kind is None:
            kind = by_dir[d] = m.fs_type(d) or "unknown"
        fs[kind] += 1
    return JobSummary(
        jobid=m.jobid,
        uid=m.uid,
        exe=m.exe,
        nprocs=m.nprocs,
        nodes=nodes,
        start=m.start,
        end=m.end,
        runtime_s=m.runtime_s,
        darshan_version=m.darshan_version,
        log_format=m.log_format,
        hints=dict(m.hints),
        modules=[
            ModuleSummary(
                name=i.name,
                version=i.version,
                records=i.records,
                loaded=i.loaded,
                partial=i.partial,
                read_error=i.read_error,
            )
            for i in profile.modules.values()
        ],
        files=len(profile.names),
        file_systems=dict(fs.most_common()),
        # DXT records carry each rank's host, whether the trace is held whole or summarised while streamed.
        hosts=sorted(
            {h for t in profile.traces.values() for h in t.hostnames.values() if h}
            | {h for m in profile.trace_summaries.values() for h in m.hostnames.values() if h}
        )[:64],
    )
