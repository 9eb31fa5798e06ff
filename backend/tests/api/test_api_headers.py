"""Hardening a browser relies on: every response says nosniff and carries a CSP, the API docs load nothing
from outside, and an over-long upload file name gets a clear 4xx."""

from __future__ import annotations

import pytest

from tests.api.test_api_support import LOG_A, Server, shared_server, upload, wait_done


@pytest.fixture(scope="module")
def server() -> Server:
    return shared_server()


def _hardened(r: object) -> None:
    headers = r.headers  # type: ignore[attr-defined]
    assert headers.get("x-content-type-options") == "nosniff", (r, dict(headers))
    assert headers.get("content-security-policy"), (r, dict(headers))


def test_every_kind_of_response_is_hardened(server: Server) -> None:
    with server.client("hdr-alice") as c:
        aid = upload(c, LOG_A).json()["id"]
        assert wait_done(c, aid)["status"] == "done"
        for path in ("", "/report.json", "/report.md", "/report.html", "/plots", "/history", "/chat"):
            r = c.get(f"/api/v1/analyses/{aid}{path}")
            assert r.status_code == 200, (path, r.text)
            _hardened(r)
        # Data is never a page: the JSON and Markdown responses allow nothing at all.
        assert (
            c.get(f"/api/v1/analyses/{aid}/report.md")
            .headers["content-security-policy"]
            .startswith("default-src 'none'")
        )
        missing = c.get("/api/v1/analyses/nope")
        assert missing.status_code == 404
        _hardened(missing)
        _hardened(c.get("/healthz"))
    with server.client("hdr-help", role="helpdesk") as c:
        html = c.get("/api/v1/system-report", params={"format": "html"})
        assert html.status_code == 200
        _hardened(html)
        assert "style-src 'unsafe-inline'" in html.headers["content-security-policy"]


def test_api_docs_are_served_from_this_origin(server: Server) -> None:
    with server.client() as c:
        page = c.get("/api/v1/docs")
        assert page.status_code == 200
        _hardened(page)
        assert "/api/v1/docs/assets/swagger-ui-bundle.js" in page.text
        assert "cdn" not in page.text.lower() and "https://" not in page.text
        js = c.get("/api/v1/docs/assets/swagger-ui-bundle.js")
        assert js.status_code == 200 and "javascript" in js.headers["content-type"] and len(js.content) > 100_000


def test_an_over_long_file_name_gets_a_clear_4xx(server: Server) -> None:
    with server.client("hdr-bob") as c:
        r = upload(c, LOG_A, name="a" * 6000 + ".darshan")
        assert r.status_code == 400
        detail = r.json()["detail"]
        assert "file name" in detail and "\n" not in detail
        # A long but sane name is kept (cut to 255 characters), not refused.
        ok = upload(c, LOG_A, name="b" * 400 + ".darshan")
        assert ok.status_code in (200, 201, 202) and len(wait_done(c, ok.json()["id"])["filename"]) == 255
