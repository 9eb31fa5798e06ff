"""Database rows as API responses."""

from __future__ import annotations

import csv
import io
import json
from typing import cast

from pydantic import TypeAdapter

from iodiag.analysis.models import Finding, SeverityCounts
from iodiag.api import schemas
from iodiag.comparison.history import Regression
from iodiag.store.models import Analysis, ApiToken

API = "/api/v1"
_FINDINGS = TypeAdapter(list[Finding])


def summary(
    row: Analysis,
    regression: Regression | None = None,
    positions: dict[str, int] | None = None,
    unread: dict[str, int] | None = None,
) -> schemas.AnalysisSummary:
    return schemas.AnalysisSummary(
        **_summary_fields(row, positions), regression=regression, unread_replies=(unread or {}).get(row.id, 0)
    )


def _run(row: Analysis) -> schemas.RunOut | None:
    if row.status != "done" or row.runtime_s is None:
        return None
    return schemas.RunOut(
        executable=row.executable,
        start=row.run_start,
        nprocs=row.nprocs,
        runtime_s=row.runtime_s,
        io_time_s=row.io_time_s,
        io_share=row.io_share,
        verdict_level=cast(schemas.SeverityName | None, row.verdict_level),
        headline=row.headline,
        nodes=row.run_nodes,
        node_hours=_hours(row.runtime_s, row.run_nodes),
        time_lost_s=row.time_lost_s,
        node_hours_lost=_hours(row.time_lost_s, row.run_nodes),
    )


def _hours(seconds: float | None, nodes: int | None) -> float | None:
    return seconds * nodes / 3600.0 if seconds is not None and nodes else None


def _summary_fields(row: Analysis, positions: dict[str, int] | None = None) -> dict[str, object]:
    return {
        "queue_position": (positions or {}).get(row.id) if row.status == "queued" else None,
        "id": row.id,
        "owner": row.owner,
        "submitted_by": row.submitted_by,
        "filename": row.filename,
        "sha256": row.sha256,
        "size_bytes": row.size_bytes,
        "source": row.source,
        "job_id": row.job_id,
        "exe": row.exe,
        "status": row.status,
        "stage": row.stage,
        "progress": min(1.0, max(0.0, row.progress)),
        "error": row.error,
        "attempts": row.attempts,
        "created_at": row.created_at,
        "started_at": row.started_at,
        "finished_at": row.finished_at,
        "analysis_s": row.analysis_s,
        "counts": SeverityCounts(critical=row.n_critical, warning=row.n_warning, info=row.n_info, ok=row.n_ok),
        "max_severity": row.max_severity,
        "triage": schemas.Triage(
            status=cast(schemas.TriageStatus, row.triage_status),
            assignee=row.triage_assignee,
            note=row.triage_note,
            updated_at=row.triage_updated_at,
            updated_by=row.triage_updated_by,
        ),
        "run": _run(row),
    }


def links(analysis_id: str) -> schemas.AnalysisLinks:
    base = f"{API}/analyses/{analysis_id}"
    return schemas.AnalysisLinks(
        self=base,
        report_json=f"{base}/report.json",
        report_md=f"{base}/report.md",
        report_html=f"{base}/report.html",
        plots=f"{base}/plots",
        chat=f"{base}/chat",
        history=f"{base}/history",
    )


def detail(
    row: Analysis, report_json: bytes | None, positions: dict[str, int] | None = None, unread: int = 0
) -> schemas.AnalysisOut:
    findings = None
    if report_json is not None:
        # Only the findings are wanted: skip validating the rest of a possibly large report.
        findings = _FINDINGS.validate_python(json.loads(report_json).get("findings", []))
    return schemas.AnalysisOut(
        **_summary_fields(row, positions), findings=findings, links=links(row.id), unread_replies=unread
    )


def token(row: ApiToken) -> schemas.TokenOut:
    return schemas.TokenOut(
        id=row.id,
        user=row.user,
        role=cast(schemas.Role, row.role),
        prefix=row.prefix,
        note=row.note,
        created_at=row.created_at,
        last_used_at=row.last_used_at,
        revoked_at=row.revoked_at,
    )


CSV_COLUMNS = (
    "id",
    "owner",
    "filename",
    "job_id",
    "executable",
    "status",
    "submitted",
    "run_start",
    "runtime_s",
    "nprocs",
    "nodes",
    "io_share",
    "io_time_s",
    "node_hours",
    "time_lost_s",
    "node_hours_lost",
    "verdict",
    "headline",
    "critical",
    "warning",
    "regression",
    "triage",
    "assignee",
)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    text = str(value)
    # A cell a spreadsheet would run as a formula: log text (file names, headlines) is data, never code.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def csv_text(items: list[schemas.AnalysisSummary]) -> str:
    """The triage list as CSV, one row per analysis, in the list's order."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\r\n")
    w.writerow(CSV_COLUMNS)
    for a in items:
        r = a.run
        w.writerow(
            _cell(v)
            for v in (
                a.id,
                a.owner,
                a.filename,
                a.job_id,
                r.executable if r else None,
                a.status,
                a.created_at.isoformat(),
                r.start.isoformat() if r and r.start else None,
                r.runtime_s if r else None,
                r.nprocs if r else None,
                r.nodes if r else None,
                r.io_share if r else None,
                r.io_time_s if r else None,
                r.node_hours if r else None,
                r.time_lost_s if r else None,
                r.node_hours_lost if r else None,
                r.verdict_level if r else None,
                r.headline if r else None,
                a.counts.critical,
                a.counts.warning,
                "yes" if a.regression is not None else "",
                a.triage.status,
                a.triage.assignee,
            )
        )
    return out.getvalue()
