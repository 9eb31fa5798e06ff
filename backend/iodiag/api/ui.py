"""The web UI: the built single-page app (``frontend/dist``) served at ``/``.

``install(app)`` adds, after the API routes, the hashed assets under ``/assets`` (cached for a
year) and a fallback that answers every other GET outside the API with ``index.html``, so a
reload on ``/analyses/<id>`` works. The page gets a strict Content-Security-Policy: scripts only
from this origin, no inline scripts, no framing. Nothing is served when the UI was not built
(``cd frontend && npm ci && npm run build``); the API works without it.
"""

from __future__ import annotations

import logging
import os
from os import PathLike
from pathlib import Path

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from iodiag.core.settings import REPO_ROOT

log = logging.getLogger("iodiag.api")

DEFAULT_DIST = REPO_ROOT / "frontend" / "dist"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
_PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}
_NOT_UI = ("api/", "api", "healthz", "readyz", "metrics")


class _Assets(StaticFiles):
    """Vite's content-hashed assets: safe to cache for good."""

    def file_response(
        self, full_path: PathLike[str] | str, stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        resp = super().file_response(full_path, stat_result, scope, status_code)
        resp.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        resp.headers["X-Content-Type-Options"] = "nosniff"
        return resp


def ui_dir() -> Path:
    """Where the built UI is: ``IODIAG_UI_DIR``, else ``frontend/dist`` in the source tree."""
    env = os.environ.get("IODIAG_UI_DIR")
    return Path(env) if env else DEFAULT_DIST


def install(app: FastAPI, dist: Path | None = None) -> bool:
    """Serve the UI from ``dist`` (default :func:`ui_dir`); False (and nothing served) if it is not built."""
    root = (dist or ui_dir()).resolve()
    index = root / "index.html"
    if not index.is_file():
        log.info("no web UI at %s (build it: cd frontend && npm ci && npm run build); serving the API only", root)
        return False
    if (root / "assets").is_dir():
        app.mount("/assets", _Assets(directory=root / "assets"), name="ui-assets")

    @app.api_route("/{path:path}", methods=["GET", "HEAD"], include_in_schema=False)
    def spa(path: str) -> Response:
        if path.startswith(_NOT_UI) and (path in _NOT_UI or path.startswith("api/")):
            raise HTTPException(404, "not found")
        if path:
            candidate = (root / path).resolve()
            if candidate.is_file() and root in candidate.parents and candidate.name != "index.html":
                return FileResponse(candidate, headers={"X-Content-Type-Options": "nosniff"})
        return FileResponse(index, media_type="text/html", headers=_PAGE_HEADERS)

    log.info("serving the web UI from %s", root)
    return True
