"""Prometheus metrics: requests by route and status, queue depth, analyses by status, analysis time.

Route labels are route templates (``/api/v1/analyses/{analysis_id}``), never raw paths: ids would
make the series unbounded and would leak them to whoever reads the metrics.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from iodiag.store import Database
from iodiag.store import analyses as repo
from iodiag.store import queue as jobs
from iodiag.store.models import ANALYSIS_STATUSES

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _DatabaseCollector(Collector):
    def __init__(self, db: Database) -> None:
        self.db = db

    def collect(self) -> Iterator[Metric]:
        depth = GaugeMetricFamily("iodiag_queue_depth", "Analyses waiting for a worker")
        by_status = GaugeMetricFamily("iodiag_analyses", "Analyses by status", labels=["status"])
        try:
            with self.db.read() as s:
                counts = repo.counts_by_status(s)
                depth.add_metric([], jobs.depth(s))
        except Exception:  # the database is down: /readyz says so; still serve the other metrics
            return
        for status in ANALYSIS_STATUSES:
            by_status.add_metric([status], counts.get(status, 0))
        yield depth
        yield by_status


class Metrics:
    def __init__(self, db: Database) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "iodiag_http_requests",
            "HTTP requests by route and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "iodiag_http_request_seconds",
            "HTTP request time by route",
            ["method", "route"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5, 5, 10),
            registry=self.registry,
        )
        self.analysis_seconds = Histogram(
            "iodiag_analysis_seconds",
            "Wall-clock time of one analysis in a worker",
            ["outcome"],
            buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600),
            registry=self.registry,
        )
        self.registry.register(_DatabaseCollector(db))

    def analysis_finished(self, outcome: str, seconds: float) -> None:
        self.analysis_seconds.labels(outcome).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Counts every request; finds the ``Metrics`` on ``app.state`` (made at start-up, with the database)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        started = time.perf_counter()

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            metrics: Metrics | None = getattr(scope["app"].state, "metrics", None) if "app" in scope else None
            if metrics is not None:
                self._record(metrics, scope, status, time.perf_counter() - started)

    @staticmethod
    def _record(metrics: Metrics, scope: Scope, status: int, seconds: float) -> None:
        route = scope.get("route")
        template = getattr(route, "path", None) or "unmatched"
        method = scope.get("method", "")
        metrics.requests.labels(method, template, str(status)).inc()
        metrics.latency.labels(method, template).observe(seconds)
