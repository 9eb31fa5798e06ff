"""The interactive API docs (Swagger UI) at ``/api/v1/docs``, from assets installed with the package.

FastAPI's default page loads Swagger UI from a CDN: a server with no internet would show a blank page, and a
page that runs a third party's script is one more thing to trust. The assets come from the
``swagger-ui-bundle`` wheel instead and are served from this origin.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

# Swagger UI's page starts the bundle with one inline script; nothing on it comes from a log.
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)


def assets_dir() -> Path | None:
    """The folder holding swagger-ui-bundle.js, or None when the wheel is missing."""
    spec = importlib.util.find_spec("swagger_ui_bundle")  # its files only: no code of it runs
    if spec is None or spec.origin is None:
        return None
    found = sorted(Path(spec.origin).parent.rglob("swagger-ui-bundle.js"))
    return found[-1].parent if found else None


def install(app: FastAPI, prefix: str) -> bool:
    """Serve the docs page and its assets; False (no docs page) when the assets are not installed."""
    root = assets_dir()
    if root is None:
        return False
    assets = f"{prefix}/docs/assets"
    app.mount(assets, StaticFiles(directory=root), name="swagger-assets")
    openapi_url = app.openapi_url or f"{prefix}/openapi.json"

    @app.get(f"{prefix}/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        page = get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} API",
            swagger_js_url=f"{assets}/swagger-ui-bundle.js",
            swagger_css_url=f"{assets}/swagger-ui.css",
            swagger_favicon_url=f"{assets}/favicon-32x32.png",
        )
        page.headers["Content-Security-Policy"] = DOCS_CSP
        return page

    return True
