"""The FastAPI application: start-up (migrations, log store, worker pool), middleware, routes."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.middleware.gzip import GZipMiddleware

from iodiag import __version__
from iodiag.api import docs, errors, ui
from iodiag.api.headers import SecurityHeadersMiddleware
from iodiag.api.limits import AuthThrottleMiddleware, BodyLimitMiddleware
from iodiag.api.metrics import Metrics, MetricsMiddleware
from iodiag.api.routes import admin, analyses, chat, health, me, replies, system_report, tokens
from iodiag.api.rows import API as API_PREFIX
from iodiag.api.state import AppContext, AuthThrottle, TokenCache
from iodiag.core.settings import Settings
from iodiag.services import intake
from iodiag.services.chat import ChatService
from iodiag.services.pool import WorkerPool
from iodiag.store import BlobStore, Database, migrate
from iodiag.store import tokens as token_repo

log = logging.getLogger("iodiag.api")


def _ensure_knowledge_index(settings: Settings) -> str:
    try:
        from iodiag.knowledge.base import KnowledgeBase

        return KnowledgeBase.ensure_index(settings)
    except Exception as exc:  # a broken document must not keep the service down: answers cite nothing
        log.error("knowledge index unavailable, answers will cite no documents: %s: %s", type(exc).__name__, exc)
        return "unavailable"


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = Database(settings.effective_database_url, background_checkpoints=True)
        await run_in_threadpool(migrate.upgrade, db)
        await run_in_threadpool(intake.warm_up, db)
        blobs = BlobStore(settings.data_dir)
        blobs.sweep_tmp()
        # Before the first request: an answer written while the index was being built cited nothing, and
        # the first question on a new data directory waited 44 s for the build.
        how = await run_in_threadpool(_ensure_knowledge_index, settings)
        if how != "fresh":
            log.info("knowledge index %s at %s", how, settings.knowledge_index_dir)
        metrics = Metrics(db)
        pool = WorkerPool(settings, db, blobs, metrics.analysis_finished) if settings.workers > 0 else None
        chat_service = ChatService(settings)
        app.state.metrics = metrics
        app.state.ctx = AppContext(
            settings=settings,
            db=db,
            blobs=blobs,
            pool=pool,
            chat=chat_service,
            tokens=TokenCache(settings.token_cache_s, stamp=settings.data_dir / token_repo.REVOCATION_STAMP),
            auth_failures=AuthThrottle(settings.auth_failure_burst, settings.auth_failures_per_s),
        )
        if pool is not None:
            pool.start()
        log.info("iodiag %s serving; database %s; %d worker(s)", __version__, db.redacted_url(), settings.workers)
        # The ~160,000 objects made by the imports live as long as the process; a full collection that
        # scans them holds the interpreter for about 100 ms, straight into some request's latency.
        gc.collect()
        gc.freeze()
        try:
            yield
        finally:
            if pool is not None:
                await run_in_threadpool(pool.stop)
            chat_service.shutdown()
            db.dispose()

    app = FastAPI(
        title="iodiag",
        version=__version__,
        description="Diagnose HPC I/O performance from Darshan logs. Authenticate with `Authorization: Bearer "
        '<token>`; every error is JSON `{"detail": "one line"}`.',
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,  # served from local assets by docs.install
        redoc_url=None,
        lifespan=lifespan,
    )
    errors.install(app)
    app.add_middleware(AuthThrottleMiddleware)  # innermost: its 429s are counted and carry the usual headers
    app.add_middleware(BodyLimitMiddleware, exempt=(f"{API_PREFIX}/analyses",))
    app.add_middleware(MetricsMiddleware)
    app.add_middleware(SecurityHeadersMiddleware)
    # Plot data reaches megabytes for traced jobs (3.1 MB at 384 ranks) and compresses about tenfold; small
    # answers (a submission's) are left alone, and the chat's event stream is never buffered (Starlette
    # excludes text/event-stream).
    app.add_middleware(GZipMiddleware, minimum_size=4096, compresslevel=5)
    # Each router carries its full prefix, so a route's template (the metrics label) is its whole path.
    for module in (analyses, chat, replies, me, tokens, admin, system_report, health):
        app.include_router(module.router)
    docs.install(app, API_PREFIX)
    ui.install(app)  # last: its catch-all serves the built web UI and must not shadow the API
    return app
