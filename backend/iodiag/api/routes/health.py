"""Probes and metrics.

``/healthz`` (the process answers) and ``/readyz`` (database reachable, schema at the newest
migration, workers alive) need no token: load balancers and orchestrators probe without one, and
they reveal only booleans and a queue length. ``/metrics`` is open by default for the same reason
(Prometheus scrapers): it holds aggregates only, labelled by route template, never ids, users or
paths; set ``IODIAG_METRICS_PUBLIC=false`` to require a helpdesk or admin token.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from fastapi.responses import JSONResponse

from iodiag.api import schemas
from iodiag.api.deps import Ctx, caller, get_ctx
from iodiag.api.state import AppContext
from iodiag.store import migrate
from iodiag.store import queue as jobs

router = APIRouter(tags=["ops"])


@router.get("/healthz", response_model=schemas.Health, summary="Liveness")
def healthz() -> schemas.Health:
    return schemas.Health(status="ok")


@router.get(
    "/readyz",
    response_model=schemas.Readiness,
    summary="Readiness",
    responses={503: {"model": schemas.Readiness, "description": "not ready"}},
)
def readyz(ctx: Ctx) -> JSONResponse:
    db_ok = ctx.db.ping()
    at_head = db_ok and migrate.at_head(ctx.db)
    workers_ok = ctx.pool is None or ctx.pool.alive()
    depth = None
    if db_ok:
        try:
            with ctx.db.read() as s:
                depth = jobs.depth(s)
        except Exception:
            db_ok = False
    out = schemas.Readiness(
        ready=db_ok and at_head and workers_ok,
        database=db_ok,
        migrations_at_head=at_head,
        workers_alive=workers_ok,
        workers=ctx.pool.size if ctx.pool is not None else 0,
        queue_depth=depth,
    )
    return JSONResponse(out.model_dump(), status_code=200 if out.ready else 503)


async def _metrics_access(request: Request, ctx: Annotated[AppContext, Depends(get_ctx)]) -> None:
    if ctx.settings.metrics_public:
        return
    creds = request.headers.get("authorization", "")
    scheme, _, token = creds.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise HTTPException(
            401, "missing bearer token (send 'Authorization: Bearer <token>')", {"WWW-Authenticate": "Bearer"}
        )
    from fastapi.security import HTTPAuthorizationCredentials

    who = await caller(request, ctx, HTTPAuthorizationCredentials(scheme="Bearer", credentials=token.strip()))
    if who.role not in ("helpdesk", "admin"):
        raise HTTPException(403, "metrics need the helpdesk or admin role")


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    dependencies=[Depends(_metrics_access)],
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
)
def metrics(request: Request) -> Response:
    from iodiag.api.metrics import CONTENT_TYPE

    return Response(request.app.state.metrics.render(), media_type=CONTENT_TYPE)
