"""Facility-wide prevalence of each finding over the stored analyses (help desk and admin)."""

from __future__ import annotations

from datetime import date
from typing import Literal

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from iodiag.api import rows, schemas
from iodiag.api.deps import Ctx, Helpdesk
from iodiag.batch import system_report
from iodiag.batch.system_html import render
from iodiag.batch.system_report import SystemReport

router = APIRouter(prefix=rows.API, tags=["admin"])


@router.get(
    "/system-report",
    response_model=SystemReport,
    summary="Facility-wide findings: jobs affected per code, bytes, I/O time and node-hours at stake",
    responses={401: {"model": schemas.ErrorOut}, 403: {"model": schemas.ErrorOut}, 422: {"model": schemas.ErrorOut}},
)
async def get_system_report(
    ctx: Ctx,
    who: Helpdesk,
    since: date | None = None,
    until: date | None = None,
    top: int = Query(5, ge=1, le=50),
    format: Literal["json", "html"] = "json",
) -> SystemReport | Response:
    def make() -> SystemReport:
        with ctx.db.read() as s:
            return system_report.build(s, since=since, until=until, top_n=top)

    # CPU-bound: it parses every stored JSON report, so keep it off the event loop.
    report = await run_in_threadpool(make)
    if format == "html":
        # Self-contained: inline styles and data: images, nothing loaded, nothing run.
        csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'"
        return HTMLResponse(render(report), headers={"Content-Security-Policy": csp})
    return report
