"""Analyses: submit, list, read (status, findings, reports, plots), triage, delete."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from iodiag.analysis.models import Report
from iodiag.analysis.plots.data import Layer, PlotData
from iodiag.analysis.plots.timeline_window import MAX_WINDOW_LIMIT, WINDOW_LIMIT, TimelineWindow, timeline_window
from iodiag.api import rows, schemas
from iodiag.api.deps import Caller, Ctx, Helpdesk
from iodiag.api.errors import validation_detail
from iodiag.api.state import AppContext
from iodiag.api.upload import read_upload
from iodiag.comparison import Comparison, NotComparable
from iodiag.services import comparing, history, intake
from iodiag.services.intake import Rejected
from iodiag.services.timeline import NoTrace
from iodiag.store import BlobTooLarge, queue
from iodiag.store import analyses as repo
from iodiag.store import replies as reply_repo
from iodiag.store.models import Analysis
from iodiag.store.tokens import Principal

router = APIRouter(prefix=f"{rows.API}/analyses", tags=["analyses"])

NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": schemas.ErrorOut, "description": "no such analysis (or not yours)"}
}
AUTH: dict[int | str, dict[str, Any]] = {401: {"model": schemas.ErrorOut, "description": "no valid bearer token"}}
NOT_READY: dict[int | str, dict[str, Any]] = {
    409: {"model": schemas.ErrorOut, "description": "the analysis is not done"}
}

_JSON_SUBMIT_LIMIT = 64 << 10


class SubmitForm(schemas._In):
    user: schemas.UserName | None = None
    job_id: schemas.JobId | None = None
    nodes: schemas.Count | None = None
    cb_nodes: schemas.Count | None = None


def _submit_body_schema() -> dict[str, Any]:
    form = SubmitForm.model_json_schema()
    form["properties"]["file"] = {"type": "string", "format": "binary", "description": "the .darshan log"}
    form["required"] = ["file"]
    form.pop("additionalProperties", None)
    return {
        "required": True,
        "content": {
            "multipart/form-data": {"schema": form},
            "application/json": {"schema": schemas.SubmitPath.model_json_schema()},
        },
    }


def _owner(who: Principal, user: str | None) -> str:
    if who.role == "hook":
        if not user:
            raise Rejected(422, "a hook submission must name the user it is for ('user')")
        return user
    if user and user != who.user:
        raise Rejected(403, "only hook tokens may submit on behalf of another user")
    return who.user


def _filename(raw: str) -> str:
    name = PurePosixPath(raw.replace("\\", "/")).name
    return "".join(ch for ch in name if ch.isprintable())[:255]


def _declared_length(request: Request) -> int | None:
    raw = request.headers.get("content-length")
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        raise Rejected(400, "invalid Content-Length header") from None


async def _from_upload(request: Request, ctx: AppContext, who: Principal, ctype: str) -> intake.Submitted:
    limit = ctx.settings.max_upload_bytes
    declared = _declared_length(request)
    if declared is not None and declared > limit + (64 << 10):  # multipart framing is small
        raise Rejected(413, f"log too large: over the limit of {limit} bytes")
    with ctx.blobs.writer(limit) as writer:
        try:
            name, fields = await read_upload(request, writer, ctype)
        except BlobTooLarge:
            raise Rejected(413, f"log too large: over the limit of {limit} bytes") from None
        try:
            form = SubmitForm.model_validate(fields)
        except ValidationError as exc:
            raise Rejected(422, validation_detail(list(exc.errors()))) from None
        meta = intake.Meta(
            owner=_owner(who, form.user),
            submitted_by=who.user,
            filename=_filename(name),
            source="upload",
            job_id=form.job_id,
            nodes=form.nodes,
            cb_nodes=form.cb_nodes,
        )
        return await run_in_threadpool(intake.accept, ctx.db, ctx.blobs, writer, meta)


async def _from_path(request: Request, ctx: AppContext, who: Principal) -> intake.Submitted:
    declared = _declared_length(request)
    if declared is not None and declared > _JSON_SUBMIT_LIMIT:
        raise Rejected(413, "JSON body too large")
    body = await request.body()
    try:
        req = schemas.SubmitPath.model_validate_json(body)
    except ValidationError as exc:
        raise Rejected(422, validation_detail(list(exc.errors()))) from None
    if who.role != "hook":
        raise Rejected(403, "only hook tokens may submit server-side paths; upload the log instead")
    meta = intake.Meta(
        owner=_owner(who, req.user),
        submitted_by=who.user,
        filename=_filename(req.path),
        source="path",
        source_path=req.path,
        job_id=req.job_id,
        nodes=req.nodes,
        cb_nodes=req.cb_nodes,
    )

    def copy_and_accept() -> intake.Submitted:
        with ctx.blobs.writer(ctx.settings.max_upload_bytes) as writer:
            with intake.open_confined(req.path, ctx.settings.allowed_log_dirs) as fh:
                try:
                    writer.copy_from(fh)
                except BlobTooLarge:
                    raise Rejected(413, f"log too large: over the limit of {writer.limit} bytes") from None
            return intake.accept(ctx.db, ctx.blobs, writer, meta, intake.inflation_limit(ctx.settings))

    return await run_in_threadpool(copy_and_accept)


@router.post(
    "",
    status_code=202,
    response_model=schemas.SubmitOut,
    summary="Submit a log for analysis",
    description="Upload a `.darshan` log as multipart/form-data (field `file`; optional `user` for hook tokens, "
    "`job_id`, `nodes`, `cb_nodes`), or, with a hook token, send JSON naming a log on the server. 202 with "
    "the new analysis; 200 with the existing one when this owner already submitted the same log (a failed "
    "one is queued again).",
    responses={
        200: {"model": schemas.SubmitOut, "description": "this owner already submitted this log"},
        **AUTH,
        400: {"model": schemas.ErrorOut, "description": "malformed body"},
        403: {
            "model": schemas.ErrorOut,
            "description": "not allowed (path outside the allowed directories, wrong role)",
        },
        413: {"model": schemas.ErrorOut, "description": "log larger than the server's limit"},
        415: {"model": schemas.ErrorOut, "description": "neither multipart/form-data nor application/json"},
        422: {"model": schemas.ErrorOut, "description": "not a readable Darshan log, or invalid fields"},
    },
    openapi_extra={"requestBody": _submit_body_schema()},
)
async def submit(request: Request, response: Response, ctx: Ctx, who: Caller) -> schemas.SubmitOut:
    ctype = request.headers.get("content-type", "")
    mime = ctype.split(";", 1)[0].strip().lower()
    if mime == "multipart/form-data":
        result = await _from_upload(request, ctx, who, ctype)
    elif mime == "application/json":
        result = await _from_path(request, ctx, who)
    else:
        raise Rejected(
            415, "send the log as multipart/form-data (field 'file'), or JSON {\"path\": ...} with a hook token"
        )
    return _submitted(result, response, ctx)


def _submitted(result: intake.Submitted, response: Response, ctx: Ctx) -> schemas.SubmitOut:
    """The answer to a submission: a new analysis wakes the workers (202); a log already held is 200."""
    if result.created:
        if ctx.pool is not None:
            ctx.pool.wake()
    else:
        response.status_code = 200
    return schemas.SubmitOut(
        id=result.analysis_id,
        status=result.status,
        created=result.created,
        url=f"{rows.API}/analyses/{result.analysis_id}",
    )


SAMPLE_LOG = "sample-badost.darshan"


def _sample_path() -> PurePosixPath | None:
    """PyDarshan's bundled sample (an ior run with one slow Lustre OST): a real log a new user can try."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("darshan")
    for base in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(base) / "tests" / "input" / SAMPLE_LOG
        if path.is_file():
            return PurePosixPath(path)
    return None


@router.post(
    "/sample",
    status_code=202,
    response_model=schemas.SubmitOut,
    summary="Analyze a bundled sample log (a first-time user's one click)",
    responses={
        200: {"model": schemas.SubmitOut, "description": "this user already has the sample"},
        **AUTH,
        403: {"model": schemas.ErrorOut, "description": "hook tokens submit real logs only"},
        503: {"model": schemas.ErrorOut, "description": "this install has no sample log"},
    },
)
async def submit_sample(response: Response, ctx: Ctx, who: Caller) -> schemas.SubmitOut:
    if who.role == "hook":
        raise Rejected(403, "hook tokens submit real logs only")
    path = _sample_path()
    if path is None:
        raise Rejected(503, "this install has no sample log (PyDarshan's test logs are missing)")
    meta = intake.Meta(owner=who.user, submitted_by=who.user, filename=SAMPLE_LOG, source="upload")

    def copy_and_accept() -> intake.Submitted:
        with ctx.blobs.writer(ctx.settings.max_upload_bytes) as writer:
            with open(str(path), "rb") as fh:
                writer.copy_from(fh)
            return intake.accept(ctx.db, ctx.blobs, writer, meta, intake.inflation_limit(ctx.settings))

    result = await run_in_threadpool(copy_and_accept)
    return _submitted(result, response, ctx)


def list_filters(
    owner: Annotated[schemas.UserName | None, Query(description="helpdesk and admin: one user's analyses")] = None,
    status: schemas.Status | None = None,
    severity: Annotated[
        schemas.SeverityName | None, Query(description="has at least one finding of this severity")
    ] = None,
    code: Annotated[str | None, Query(pattern=r"^[A-Z][0-9]{2}$", description="has this finding (e.g. P08)")] = None,
    since: Annotated[datetime | None, Query(description="submitted at or after (ISO 8601)")] = None,
    until: Annotated[datetime | None, Query(description="submitted before (ISO 8601)")] = None,
    job_id: schemas.JobId | None = None,
    exe: Annotated[str | None, Query(max_length=256, description="executable path contains this")] = None,
    triage: schemas.TriageStatus | None = None,
    min_time_lost_s: Annotated[
        float | None, Query(ge=0, le=1e9, description="the verdict's causes cost at least this many seconds")
    ] = None,
    min_io_share: Annotated[float | None, Query(ge=0, le=1, description="I/O share of the run at least this")] = None,
) -> repo.ListFilters:
    return repo.ListFilters(
        owner=owner,
        status=status,
        severity=severity,
        code=code,
        since=_aware(since),
        until=_aware(until),
        job_id=job_id,
        exe=exe,
        triage=triage,
        min_time_lost_s=min_time_lost_s,
        min_io_share=min_io_share,
    )


Filters = Annotated[repo.ListFilters, Depends(list_filters)]
Sort = Annotated[
    schemas.SortKey,
    Query(description="sort key, '-' for largest first; -time_lost is the help desk's triage order"),
]


@router.get(
    "",
    response_model=schemas.AnalysisPage,
    summary="List analyses",
    responses={**AUTH, 422: {"model": schemas.ErrorOut}},
)
def list_analyses(
    ctx: Ctx,
    who: Caller,
    filters: Filters,
    sort: Sort = "-created",
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> schemas.AnalysisPage:
    with ctx.db.read() as s:
        total, found = repo.list_visible(s, who, filters, limit, offset, sort)
        flagged = history.flags(s, found)
        positions = (
            queue.queue_positions(s, ctx.settings.user_concurrency) if any(r.status == "queued" for r in found) else {}
        )
        unread = reply_repo.unread_counts(s, who, [r.id for r in found])
        items = [rows.summary(r, flagged.get(r.id), positions, unread) for r in found]
    return schemas.AnalysisPage(total=total, limit=limit, offset=offset, items=items)


CSV_LIMIT = 10_000


@router.get(
    "/export.csv",
    summary="The list as CSV (same filters and sort; at most 10,000 rows)",
    response_class=Response,
    responses={**AUTH, 422: {"model": schemas.ErrorOut}, 200: {"content": {"text/csv": {}}}},
)
def export_csv(ctx: Ctx, who: Caller, filters: Filters, sort: Sort = "-created") -> Response:
    with ctx.db.read() as s:
        _, found = repo.list_visible(s, who, filters, CSV_LIMIT, 0, sort)
        flagged = history.flags(s, found)
        items = [rows.summary(r, flagged.get(r.id)) for r in found]
    return Response(
        rows.csv_text(items),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="iodiag-analyses.csv"'},
    )


def _aware(value: datetime | None) -> datetime | None:
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def visible_or_404(ctx: AppContext, who: Principal, analysis_id: str) -> Analysis:
    with ctx.db.read() as s:
        row = repo.get_visible(s, analysis_id, who)
    if row is None:
        raise HTTPException(404, f"no analysis {analysis_id!r}")
    return row


def _done_output(ctx: AppContext, who: Principal, analysis_id: str, kind: str) -> bytes:
    row = visible_or_404(ctx, who, analysis_id)
    if row.status != "done":
        why = f": {row.error}" if row.status == "failed" and row.error else ""
        raise HTTPException(409, f"analysis is {row.status}{why}; its report exists once it is done")
    with ctx.db.read() as s:
        content = repo.output(s, analysis_id, kind)
    if content is None:
        raise HTTPException(404, f"analysis {analysis_id!r} has no {kind} output")
    return content


@router.get(
    "/{analysis_id}",
    response_model=schemas.AnalysisOut,
    summary="Status, progress and findings",
    responses={**AUTH, **NOT_FOUND},
)
def get_analysis(ctx: Ctx, who: Caller, analysis_id: str) -> schemas.AnalysisOut:
    row = visible_or_404(ctx, who, analysis_id)
    report, positions = None, None
    with ctx.db.read() as s:
        if row.status == "done":
            report = repo.output(s, analysis_id, "json")
        elif row.status == "queued":
            positions = queue.queue_positions(s, ctx.settings.user_concurrency)
        unread = reply_repo.unread_counts(s, who, [analysis_id]).get(analysis_id, 0)
    return rows.detail(row, report, positions, unread)


@router.get(
    "/{analysis_id}/report.json",
    response_model=Report,
    summary="The report as JSON",
    responses={**AUTH, **NOT_FOUND, **NOT_READY},
)
def report_json(ctx: Ctx, who: Caller, analysis_id: str) -> Response:
    return Response(_done_output(ctx, who, analysis_id, "json"), media_type="application/json")


@router.get(
    "/{analysis_id}/report.md",
    summary="The report as Markdown",
    response_class=Response,
    responses={200: {"content": {"text/markdown": {"schema": {"type": "string"}}}}, **AUTH, **NOT_FOUND, **NOT_READY},
)
def report_md(ctx: Ctx, who: Caller, analysis_id: str) -> Response:
    return Response(_done_output(ctx, who, analysis_id, "markdown"), media_type="text/markdown; charset=utf-8")


# The page is self-contained (inline CSS, no scripts): forbid everything else, so a hostile string in a
# log can never load or run anything even if it slipped past the renderer's escaping.
_HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'"


@router.get(
    "/{analysis_id}/report.html",
    summary="The report as one HTML page",
    response_class=Response,
    responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}, **AUTH, **NOT_FOUND, **NOT_READY},
)
def report_html(ctx: Ctx, who: Caller, analysis_id: str) -> Response:
    return Response(
        _done_output(ctx, who, analysis_id, "html"),
        media_type="text/html; charset=utf-8",
        headers={"Content-Security-Policy": _HTML_CSP, "X-Content-Type-Options": "nosniff"},
    )


@router.get(
    "/{analysis_id}/plots",
    response_model=PlotData,
    summary="Plot-ready data",
    responses={**AUTH, **NOT_FOUND, **NOT_READY},
)
def plots(ctx: Ctx, who: Caller, analysis_id: str) -> Response:
    return Response(_done_output(ctx, who, analysis_id, "plots"), media_type="application/json")


@router.get(
    "/{analysis_id}/plots/timeline",
    response_model=TimelineWindow,
    summary="A zoomed timeline window at full resolution",
    description="The DXT segments that overlap `[t0, t1]` (seconds since job start) on ranks `rank0..rank1`, "
    "read from the stored log: every segment its own bar when there are at most `limit`, else merged bars and a "
    "density grid of the window (`sampled`: true). Totals are exact either way.",
    responses={
        **AUTH,
        404: {"model": schemas.ErrorOut, "description": "no such analysis (or not yours), or no DXT trace"},
        **NOT_READY,
        422: {"model": schemas.ErrorOut, "description": "invalid window (t1 not after t0, rank1 before rank0)"},
    },
)
def plots_timeline_window(
    ctx: Ctx,
    who: Caller,
    analysis_id: str,
    t0: Annotated[float, Query(ge=0, le=1e9, description="window start, seconds since job start")],
    t1: Annotated[float, Query(gt=0, le=1e9, description="window end, seconds since job start (after t0)")],
    rank0: Annotated[int, Query(ge=0, le=100_000_000, description="first rank")] = 0,
    rank1: Annotated[int | None, Query(ge=0, le=100_000_000, description="last rank (default: the last)")] = None,
    layer: Annotated[Layer | None, Query(description="one layer only (POSIX or MPIIO; default: all)")] = None,
    limit: Annotated[
        int, Query(ge=1, le=MAX_WINDOW_LIMIT, description="segments shown one by one at most")
    ] = WINDOW_LIMIT,
) -> Response:
    if not (math.isfinite(t0) and math.isfinite(t1)):
        raise HTTPException(422, "t0 and t1 must be finite numbers of seconds")
    if t1 <= t0:
        raise HTTPException(422, f"t1 ({t1:g} s) must be after t0 ({t0:g} s)")
    if layer == "DXT":
        raise HTTPException(422, "layer must be POSIX or MPIIO")
    row = visible_or_404(ctx, who, analysis_id)
    if row.status != "done":
        raise HTTPException(409, f"analysis is {row.status}; its timeline exists once it is done")
    if rank1 is not None and rank1 < rank0:
        raise HTTPException(422, f"rank1 ({rank1}) must not be before rank0 ({rank0})")
    st = ctx.settings
    if not st.job_read_dxt:
        raise HTTPException(404, "this server does not read DXT traces (IODIAG_JOB_READ_DXT is off)")
    try:
        src = ctx.timelines.get(row.sha256, ctx.blobs.path(row.sha256), st.job_timeout_s, st.job_memory_limit_bytes)
    except NoTrace as exc:
        raise HTTPException(404, str(exc)) from None
    last = rank1 if rank1 is not None else max(rank0, src.n_ranks - 1)
    window = timeline_window(src, t0, t1, rank0, last, layer, limit)
    return Response(window.model_dump_json(), media_type="application/json")


@router.get(
    "/{analysis_id}/history",
    response_model=schemas.HistoryOut,
    summary="Runs of the same application over time",
    responses={**AUTH, **NOT_FOUND},
)
def run_history(ctx: Ctx, who: Caller, analysis_id: str) -> schemas.HistoryOut:
    row = visible_or_404(ctx, who, analysis_id)
    with ctx.db.read() as s:
        runs = history.runs(s, row)
    return schemas.HistoryOut(analysis_id=row.id, owner=row.owner, executable=row.executable, runs=runs)


@router.get(
    "/{analysis_id}/compare/median",
    response_model=schemas.MedianComparison,
    summary="This run against its application's median run",
    responses={
        **AUTH,
        **NOT_FOUND,
        409: {"model": schemas.ErrorOut, "description": "not done, or no other finished run of the application"},
    },
)
def compare_with_median(ctx: Ctx, who: Caller, analysis_id: str) -> schemas.MedianComparison:
    """Registered before ``/compare/{other_id}``: "median" is not an analysis id."""
    row = visible_or_404(ctx, who, analysis_id)
    try:
        with ctx.db.read() as s:
            comparison, baseline, n = comparing.compare_with_median(s, row)
    except (comparing.NotReady, comparing.NoHistory, NotComparable) as exc:
        raise HTTPException(409, str(exc)) from None
    return schemas.MedianComparison(analysis_id=row.id, baseline_id=baseline.id, runs=n, comparison=comparison)


@router.get(
    "/{analysis_id}/compare/{other_id}",
    response_model=Comparison,
    summary="What changed from this run to another",
    responses={
        **AUTH,
        **NOT_FOUND,
        409: {"model": schemas.ErrorOut, "description": "not done, or not the same executable"},
    },
)
def compare_runs(
    ctx: Ctx,
    who: Caller,
    analysis_id: str,
    other_id: str,
    force: Annotated[bool, Query(description="compare even when the executables differ")] = False,
) -> Comparison:
    """Run A is ``analysis_id``, run B ``other_id``: deltas are B − A, 'resolved' means in A and gone from B."""
    a = visible_or_404(ctx, who, analysis_id)
    b = visible_or_404(ctx, who, other_id)
    try:
        with ctx.db.read() as s:
            return comparing.compare_rows(s, a, b, force)
    except (comparing.NotReady, NotComparable) as exc:
        raise HTTPException(409, str(exc)) from None


@router.patch(
    "/{analysis_id}/triage",
    response_model=schemas.AnalysisSummary,
    summary="Help-desk triage",
    responses={**AUTH, 403: {"model": schemas.ErrorOut}, **NOT_FOUND, 422: {"model": schemas.ErrorOut}},
)
def triage(ctx: Ctx, who: Helpdesk, analysis_id: str, body: schemas.TriageIn) -> schemas.AnalysisSummary:
    with ctx.db.write() as s:
        row = repo.get_visible(s, analysis_id, who)
        if row is None:
            raise HTTPException(404, f"no analysis {analysis_id!r}")
        repo.set_triage(s, row, who.user, body.status, body.assignee, body.note, clear_assignee=body.clear_assignee)
        out = rows.summary(row)
    return out


@router.delete(
    "/{analysis_id}",
    status_code=204,
    summary="Delete an analysis (owner or admin)",
    response_class=Response,
    responses={**AUTH, 403: {"model": schemas.ErrorOut}, **NOT_FOUND},
)
def delete_analysis(ctx: Ctx, who: Caller, analysis_id: str) -> Response:
    with ctx.db.write() as s:
        row = repo.get_visible(s, analysis_id, who)
        if row is None:
            raise HTTPException(404, f"no analysis {analysis_id!r}")
        if who.role != "admin" and row.owner != who.user:
            raise HTTPException(403, "only the owner or an admin may delete an analysis")
        repo.lock_content(s, row.sha256)
        orphan = repo.remove(s, row)
        if orphan is not None:
            ctx.blobs.delete(orphan)  # inside the transaction: no upload of the same log can interleave
            ctx.timelines.forget(orphan)
    return Response(status_code=204)
