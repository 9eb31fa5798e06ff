"""The REST API against a real ``iodiag serve`` on loopback: submit, poll, reports, roles, triage, delete."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from iodiag.analysis.models import Report
from iodiag.analysis.plots.data import PlotData
from tests.api.test_api_support import (
    LOG_A,
    LOG_B,
    LOG_DRISHTI,
    LOG_DXT,
    Server,
    shared_server,
    upload,
    variant,
    wait_done,
)


@pytest.fixture(scope="module")
def server() -> Server:
    return shared_server()


def test_upload_poll_done_and_every_report_format(server: Server) -> None:
    with server.client("alice") as c:
        r = upload(c, LOG_DXT, job_id="4373053")
        assert r.status_code == 202, r.text
        body = r.json()
        assert body["created"] is True and body["status"] == "queued"
        aid = body["id"]
        assert body["url"] == f"/api/v1/analyses/{aid}"

        done = wait_done(c, aid)
        assert done["status"] == "done", done
        assert done["progress"] == 1.0 and done["stage"] == "done"
        assert done["owner"] == "alice" and done["submitted_by"] == "alice"
        assert done["job_id"] == "4373053" and done["exe"]
        assert done["findings"], "a done analysis carries its findings"
        assert sum(done["counts"].values()) == len(done["findings"])
        assert done["links"]["report_html"].endswith("/report.html")

        rj = c.get(f"/api/v1/analyses/{aid}/report.json")
        assert rj.status_code == 200 and rj.headers["content-type"].startswith("application/json")
        report = Report.model_validate_json(rj.content)
        assert report.log_path == LOG_DXT.name  # the submitted name, not the store's hash name
        assert [f.code for f in report.findings] == [f["code"] for f in done["findings"]]

        md = c.get(f"/api/v1/analyses/{aid}/report.md")
        assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown")
        assert md.text.lstrip().startswith("#")

        html = c.get(f"/api/v1/analyses/{aid}/report.html")
        assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
        assert "<html" in html.text.lower()
        assert "default-src 'none'" in html.headers["content-security-policy"]

        plots = c.get(f"/api/v1/analyses/{aid}/plots")
        assert plots.status_code == 200
        data = PlotData.model_validate_json(plots.content)
        assert data.timeline is not None  # the DXT trace was read
        # Large bodies travel compressed to a client that accepts it, with the security headers still on.
        assert plots.headers["content-encoding"] == "gzip"
        assert int(plots.headers["content-length"]) * 3 < len(plots.content)
        assert plots.headers["x-content-type-options"] == "nosniff"
        plain = c.get(f"/api/v1/analyses/{aid}/plots", headers={"Accept-Encoding": "identity"})
        assert "content-encoding" not in plain.headers and plain.content == plots.content


def test_same_log_again_returns_the_same_analysis(server: Server) -> None:
    with server.client("idem") as c, server.client("idem2") as other:
        first = upload(c, LOG_B)
        assert first.status_code == 202
        again = upload(c, LOG_B, name="renamed.darshan")
        assert again.status_code == 200, again.text
        assert again.json()["id"] == first.json()["id"] and again.json()["created"] is False
        # Idempotency is per owner: another user's copy is their own analysis.
        theirs = upload(other, LOG_B)
        assert theirs.status_code == 202 and theirs.json()["id"] != first.json()["id"]
        assert len(c.get("/api/v1/analyses").json()["items"]) == 1


def test_list_filters_and_pagination(server: Server, tmp_path: Path) -> None:
    with server.client("lister") as c:
        ids = {}
        for name, log in (("a", LOG_A), ("b", LOG_B), ("d", LOG_DRISHTI)):
            r = upload(c, log, job_id=f"job-{name}")
            assert r.status_code == 202
            ids[name] = r.json()["id"]
        for aid in ids.values():
            assert wait_done(c, aid)["status"] == "done"

        page = c.get("/api/v1/analyses", params={"limit": 2}).json()
        assert page["total"] == 3 and len(page["items"]) == 2 and page["limit"] == 2
        rest = c.get("/api/v1/analyses", params={"limit": 2, "offset": 2}).json()
        assert len(rest["items"]) == 1
        seen = {i["id"] for i in page["items"]} | {i["id"] for i in rest["items"]}
        assert seen == set(ids.values())
        # Newest first.
        assert page["items"][0]["id"] == ids["d"]

        def listed(**params: str) -> set[str]:
            r = c.get("/api/v1/analyses", params=params)
            assert r.status_code == 200, r.text
            return {i["id"] for i in r.json()["items"]}

        assert listed(job_id="job-b") == {ids["b"]}
        detail = {k: c.get(f"/api/v1/analyses/{v}").json() for k, v in ids.items()}
        code = detail["d"]["findings"][0]["code"]
        having = {ids[k] for k in ids if code in {f["code"] for f in detail[k]["findings"]}}
        assert listed(code=code) == having
        crit = {ids[k] for k in ids if detail[k]["counts"]["critical"] > 0}
        assert listed(severity="critical") == crit
        assert listed(exe=detail["a"]["exe"][-12:]) >= {ids["a"]}
        assert listed(status="done") == set(ids.values())
        future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
        past = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
        assert listed(since=future) == set()
        assert listed(since=past, until=future) == set(ids.values())
        assert listed(code="Z99") == set()


def test_users_see_only_their_own_and_get_404_for_others(server: Server) -> None:
    with server.client("owner1") as mine, server.client("intruder") as theirs:
        aid = upload(mine, LOG_A).json()["id"]
        wait_done(mine, aid)
        for path in ("", "/report.json", "/report.md", "/report.html", "/plots", "/chat"):
            r = theirs.get(f"/api/v1/analyses/{aid}{path}")
            assert r.status_code == 404, (path, r.text)
            assert r.json()["detail"]
        assert theirs.delete(f"/api/v1/analyses/{aid}").status_code == 404
        assert theirs.post(f"/api/v1/analyses/{aid}/chat", json={"question": "why?"}).status_code == 404
        assert aid not in {i["id"] for i in theirs.get("/api/v1/analyses").json()["items"]}
        # Asking for someone else's analyses by owner gives nothing, not theirs.
        assert theirs.get("/api/v1/analyses", params={"owner": "owner1"}).json()["total"] == 0
        # Triage is the help desk's.
        r = mine.patch(f"/api/v1/analyses/{aid}/triage", json={"status": "resolved"})
        assert r.status_code == 403


def test_helpdesk_sees_all_and_triages(server: Server) -> None:
    with server.client("patient") as user, server.client("hd", "helpdesk") as hd:
        aid = upload(user, LOG_DRISHTI).json()["id"]
        assert hd.get(f"/api/v1/analyses/{aid}").status_code == 200
        assert aid in {i["id"] for i in hd.get("/api/v1/analyses", params={"owner": "patient"}).json()["items"]}
        r = hd.patch(
            f"/api/v1/analyses/{aid}/triage", json={"status": "in-progress", "assignee": "hd", "note": "looking"}
        )
        assert r.status_code == 200, r.text
        t = r.json()["triage"]
        assert (t["status"], t["assignee"], t["note"], t["updated_by"]) == ("in-progress", "hd", "looking", "hd")
        assert user.get(f"/api/v1/analyses/{aid}").json()["triage"]["status"] == "in-progress"
        ids = {i["id"] for i in hd.get("/api/v1/analyses", params={"triage": "in-progress"}).json()["items"]}
        assert aid in ids
        r = hd.patch(f"/api/v1/analyses/{aid}/triage", json={"status": "resolved", "clear_assignee": True})
        assert r.json()["triage"]["status"] == "resolved" and r.json()["triage"]["assignee"] is None
        assert hd.patch(f"/api/v1/analyses/{aid}/triage", json={"status": "closed"}).status_code == 422
        assert hd.patch("/api/v1/analyses/nope/triage", json={"status": "open"}).status_code == 404
        # The help desk may not delete a user's analysis; the owner may.
        assert hd.delete(f"/api/v1/analyses/{aid}").status_code == 403


def test_hook_submits_on_behalf_of_a_user(server: Server, tmp_path: Path) -> None:
    log = variant(LOG_A, tmp_path / "hooked.darshan", 1)
    with server.client("slurm", "hook") as hook, server.client("carol") as carol:
        r = upload(hook, log, user="carol", job_id="777")
        assert r.status_code == 202, r.text
        aid = r.json()["id"]
        mine = carol.get(f"/api/v1/analyses/{aid}").json()
        assert (mine["owner"], mine["submitted_by"], mine["job_id"]) == ("carol", "slurm", "777")
        # A hook must say whom the log is for; a user may not submit for someone else.
        assert upload(hook, log).status_code == 422
        r = upload(carol, log, user="dave")
        assert r.status_code == 403 and "hook" in r.json()["detail"]
        # Server-side paths: hook tokens only, inside the allowed directories.
        inside = server.allowed_dir / "job.darshan"  # type: ignore[attr-defined]
        variant(LOG_B, inside, 2)
        r = hook.post("/api/v1/analyses", json={"path": str(inside), "user": "carol"})
        assert r.status_code == 202, r.text
        assert wait_done(carol, r.json()["id"])["status"] == "done"
        r = carol.post("/api/v1/analyses", json={"path": str(inside)})
        assert r.status_code == 403


def test_tokens_admin_and_auth(server: Server) -> None:
    with server.client("root", "admin") as admin, server.client("eve") as eve:
        assert eve.get("/api/v1/tokens").status_code == 403
        assert eve.get("/api/v1/settings").status_code == 403
        created = admin.post("/api/v1/tokens", json={"user": "frank", "role": "user", "note": "laptop"})
        assert created.status_code == 201, created.text
        tok = created.json()
        assert tok["token"].startswith("iod_") and tok["prefix"] == tok["token"][:10]
        listing = admin.get("/api/v1/tokens").json()
        assert all("token" not in t for t in listing)
        assert tok["id"] in {t["id"] for t in listing}
        with server.client(token=tok["token"]) as frank:
            assert frank.get("/api/v1/me").json() == {
                "user": "frank",
                "role": "user",
                "via": "token",
                "unread_replies": 0,
                "unread_threads": 0,
            }
            assert admin.delete(f"/api/v1/tokens/{tok['id']}").status_code == 200
            r = frank.get("/api/v1/me")
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        assert admin.delete("/api/v1/tokens/999999").status_code == 404
        assert admin.post("/api/v1/tokens", json={"user": "x", "role": "root"}).status_code == 422
        settings = admin.get("/api/v1/settings").json()["values"]
        assert settings["workers"] == 2 and settings["llm_api_key"] in ("", "<redacted>")
    with server.client() as anon:
        assert anon.get("/api/v1/me").status_code == 401
        assert anon.get("/api/v1/analyses").status_code == 401
        # Tokens are read from the Authorization header only, never from the URL.
        token = server.token("eve")
        assert anon.get("/api/v1/me", params={"token": token, "access_token": token}).status_code == 401
        assert anon.get("/api/v1/me", headers={"Authorization": f"Basic {token}"}).status_code == 401
        assert anon.get("/api/v1/me", headers={"Authorization": "Bearer iod_not-a-token"}).status_code == 401


def test_delete_removes_row_and_unshared_log(server: Server, tmp_path: Path) -> None:
    log = variant(LOG_A, tmp_path / "gone.darshan", 99)
    with server.client("deleter") as c, server.client("sharer") as other:
        aid = upload(c, log).json()["id"]
        shared = upload(other, log).json()["id"]  # same content, another owner: one stored log
        wait_done(c, aid)
        n_logs = len(server.stored_logs())
        assert c.delete(f"/api/v1/analyses/{aid}").status_code == 204
        assert c.get(f"/api/v1/analyses/{aid}").status_code == 404
        assert len(server.stored_logs()) == n_logs  # still used by the other owner's analysis
        assert other.delete(f"/api/v1/analyses/{shared}").status_code == 204
        assert len(server.stored_logs()) == n_logs - 1


def test_probes_and_metrics(server: Server) -> None:
    with server.client() as anon:
        assert anon.get("/healthz").json() == {"status": "ok"}
        ready = anon.get("/readyz")
        assert ready.status_code == 200
        assert ready.json() | {"queue_depth": 0} == {
            "ready": True,
            "database": True,
            "migrations_at_head": True,
            "workers_alive": True,
            "workers": 2,
            "queue_depth": 0,
        }
        with server.client("metrics-user") as c:
            aid = upload(c, LOG_A).json()["id"]
            wait_done(c, aid)
            c.get("/api/v1/analyses/does-not-exist")
        text = anon.get("/metrics").text
        assert 'iodiag_http_requests_total{method="GET",route="/api/v1/analyses/{analysis_id}",status="404"}' in text
        assert 'route="/api/v1/analyses",status="202"' in text or 'route="/api/v1/analyses",status="200"' in text
        assert "iodiag_queue_depth " in text
        assert 'iodiag_analyses{status="done"}' in text
        assert 'iodiag_analysis_seconds_bucket{le="1.0",outcome="done"}' in text
        assert "does-not-exist" not in text  # ids never become labels


def test_progress_is_reported_while_running(server: Server, tmp_path: Path) -> None:
    # Several analyses at once on two workers: some are seen queued or mid-way, all end done.
    with server.client("busy") as c:
        ids = [upload(c, variant(LOG_DRISHTI, tmp_path / f"v{i}.darshan", 1000 + i)).json()["id"] for i in range(6)]
        seen: set[tuple[str, str]] = set()
        deadline = time.monotonic() + 180  # a loaded 2-core CI machine: six analyses, two workers
        while time.monotonic() < deadline:
            states = [c.get(f"/api/v1/analyses/{i}").json() for i in ids]
            seen |= {(s["status"], s["stage"]) for s in states}
            for s in states:
                assert 0.0 <= s["progress"] <= 1.0
            if all(s["status"] == "done" for s in states):
                break
            time.sleep(0.02)
        assert all(s["status"] == "done" for s in states)
        assert ("queued", "queued") in seen or any(st == "running" for st, _ in seen)


def test_exported_openapi_is_current() -> None:
    """docs/openapi.json is what the server serves: re-export with `iodiag openapi -o docs/openapi.json`."""
    import json

    from iodiag.api import create_app
    from iodiag.core.settings import Settings
    from tests.conftest import REPO

    exported = json.loads((REPO / "docs" / "openapi.json").read_text())
    assert exported == create_app(Settings()).openapi(), "run: iodiag openapi -o docs/openapi.json"


def test_trusted_proxy_user_header(server: Server) -> None:
    # Off by default: the header alone authenticates nobody.
    with server.client() as anon:
        assert anon.get("/api/v1/me", headers={"X-Remote-User": "zoe"}).status_code == 401
    import json

    trusting = Server.start_new(
        {"IODIAG_TRUST_PROXY_HEADER": "true", "IODIAG_TRUSTED_PROXIES": json.dumps(["127.0.0.0/8"])}, workers=0
    )
    elsewhere = Server.start_new(
        {"IODIAG_TRUST_PROXY_HEADER": "true", "IODIAG_TRUSTED_PROXIES": json.dumps(["10.1.2.3"])}, workers=0
    )
    try:
        with trusting.client() as c:
            assert c.get("/api/v1/me", headers={"X-Remote-User": "zoe"}).json() == {
                "user": "zoe",
                "role": "user",
                "via": "proxy",
                "unread_replies": 0,
                "unread_threads": 0,
            }
            assert c.get("/api/v1/me", headers={"X-Remote-User": "zoe; drop"}).status_code == 401
            assert c.get("/api/v1/me").status_code == 401
            # A token still wins over the header.
            token = trusting.token("yann", "helpdesk")
            me = c.get("/api/v1/me", headers={"X-Remote-User": "zoe", "Authorization": f"Bearer {token}"}).json()
            assert me["user"] == "yann"
        with elsewhere.client() as c:  # we are not the configured proxy
            assert c.get("/api/v1/me", headers={"X-Remote-User": "zoe"}).status_code == 401
    finally:
        trusting.stop()
        elsewhere.stop()
