"""The per-job facts of a report, taken from its JSON form.

One extractor for every source: a report just computed (``model_dump(mode="json")``), the
service's stored JSON output, or the pipeline's ``json`` output on a Dask worker. Working on the
plain dict skips validating the whole report again, which matters when a system report reads
thousands of stored analyses.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from iodiag.jobs.models import FindingFacts, LogFacts

_SEVERITIES = ("critical", "warning", "info", "ok")


def app_name(exe: str) -> str:
    """The application a command line runs: the basename of its first word ("" when empty)."""
    words = exe.split()
    return os.path.basename(words[0]) if words else ""


def _evidence(items: list[dict[str, Any]]) -> dict[str, float | int | str]:
    out: dict[str, float | int | str] = {}
    for m in items:
        value = m.get("value")
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            continue
        out[str(m.get("name", ""))] = value
    return out


def from_report(report: dict[str, Any]) -> tuple[LogFacts, list[FindingFacts]]:
    job = report["job"]
    share = report.get("io_share") or {}
    counts = report.get("counts") or {}
    # Modules not read (DXT without --dxt) report 0 records: they are not an interface the job used.
    interfaces = sorted({m["name"] for m in job.get("modules", []) if m.get("records", 0) > 0})
    exe = str(job.get("exe", ""))
    facts = LogFacts(
        exe=exe,
        app=app_name(exe),
        uid=int(job["uid"]),
        jobid=str(job["jobid"]),
        nprocs=int(job["nprocs"]),
        nodes=job.get("nodes"),
        start=datetime.fromisoformat(job["start"]) if isinstance(job["start"], str) else job["start"],
        end=datetime.fromisoformat(job["end"]) if isinstance(job["end"], str) else job["end"],
        runtime_s=float(job.get("runtime_s", 0.0)),
        io_time_s=float(share.get("slowest_rank_io_s", 0.0)),
        bytes_read=int(share.get("bytes_read", 0)),
        bytes_written=int(share.get("bytes_written", 0)),
        io_share=share.get("share_slowest"),
        interfaces=interfaces,
        n_critical=int(counts.get("critical", 0)),
        n_warning=int(counts.get("warning", 0)),
        n_info=int(counts.get("info", 0)),
        n_ok=int(counts.get("ok", 0)),
        max_severity=next((s for s in _SEVERITIES if counts.get(s, 0) > 0), None),
        tool_version=str(report.get("tool_version", "")),
    )
    findings = [
        FindingFacts(
            code=f["code"],
            severity=f["severity"],
            layer=f["layer"],
            title=f.get("title", ""),
            evidence=_evidence(f.get("evidence", [])),
            files_total=int(f.get("files_total", 0)),
            seconds=(f.get("impact") or {}).get("seconds"),
        )
        for f in report.get("findings", [])
    ]
    return facts, findings
