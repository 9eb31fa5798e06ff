"""The help desk's triage by impact, its CSV export, the reply thread with the job's owner, and the sample log,
through the real service."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.test_api_support import LOG_A, Server, shared_server, upload, wait_done
from tests.conftest import shared_log, wheel_log

BADOST = wheel_log("sample-badost.darshan")
DRISHTI = shared_log("drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan")


@pytest.fixture(scope="module")
def server() -> Server:
    return shared_server()


def _done(c: httpx.Client, log: Path, name: str | None = None, **fields: str) -> dict[str, Any]:
    r = upload(c, log, name, **fields)
    assert r.status_code in (200, 201, 202), r.text
    done = wait_done(c, r.json()["id"])
    assert done["status"] == "done", done
    return done


def test_triage_columns_sort_by_time_lost_and_filter(server: Server) -> None:
    with server.client("tri-owner") as c:
        small = _done(c, LOG_A)
        big = _done(c, DRISHTI, nodes="8")
        ost = _done(c, BADOST)
    run = big["run"]
    # Impact columns: nodes as submitted, node-hours from the run time, time lost from the verdict's causes.
    assert run["nodes"] == 8
    assert run["node_hours"] == pytest.approx(run["runtime_s"] * 8 / 3600)
    assert 0 < run["time_lost_s"] <= run["io_time_s"] + 1e-9
    assert run["node_hours_lost"] == pytest.approx(run["time_lost_s"] * 8 / 3600)
    with server.client("tri-helen", role="helpdesk") as h:
        page = h.get("/api/v1/analyses", params={"owner": "tri-owner", "sort": "-time_lost"}).json()
        ids = [a["id"] for a in page["items"]]
        assert set(ids) == {small["id"], big["id"], ost["id"]}
        lost = [a["run"]["time_lost_s"] for a in page["items"]]
        assert lost == sorted(lost, reverse=True)
        asc = h.get("/api/v1/analyses", params={"owner": "tri-owner", "sort": "time_lost"}).json()
        assert [a["id"] for a in asc["items"]] == ids[::-1]
        by_runtime = h.get("/api/v1/analyses", params={"owner": "tri-owner", "sort": "-runtime"}).json()
        runtimes = [a["run"]["runtime_s"] for a in by_runtime["items"]]
        assert runtimes == sorted(runtimes, reverse=True)
        # Only one run has nodes: it sorts first by node-hours lost, the others (unknown) last.
        nh = h.get("/api/v1/analyses", params={"owner": "tri-owner", "sort": "-node_hours_lost"}).json()
        assert nh["items"][0]["id"] == big["id"]
        floor = lost[1]
        kept = h.get("/api/v1/analyses", params={"owner": "tri-owner", "min_time_lost_s": floor}).json()
        assert kept["total"] == 2 and all(a["run"]["time_lost_s"] >= floor for a in kept["items"])
        bad = h.get("/api/v1/analyses", params={"sort": "-nonsense"})
        assert bad.status_code == 422 and "\n" not in bad.json()["detail"]


def test_csv_export_matches_the_list_and_defuses_formulas(server: Server) -> None:
    with server.client("tri-csv") as c:
        first = _done(c, LOG_A, name="=HYPERLINK(evil).darshan")
        second = _done(c, BADOST)
        r = c.get("/api/v1/analyses/export.csv", params={"sort": "-time_lost"})
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/csv")
        assert "attachment" in r.headers["content-disposition"]
        table = list(csv.DictReader(io.StringIO(r.text)))
        listed = c.get("/api/v1/analyses", params={"sort": "-time_lost"}).json()["items"]
    assert [row["id"] for row in table] == [a["id"] for a in listed]
    assert {row["id"] for row in table} == {first["id"], second["id"]}
    by_id = {row["id"]: row for row in table}
    # A spreadsheet must not run a file name as a formula.
    assert by_id[first["id"]]["filename"].startswith("'=")
    assert float(by_id[second["id"]]["runtime_s"]) == pytest.approx(second["run"]["runtime_s"], rel=1e-5)
    assert by_id[second["id"]]["headline"] == second["run"]["headline"]


def test_reply_thread_draft_send_and_owner_answers(server: Server) -> None:
    with server.client("tri-alice") as c:
        job = _done(c, BADOST)
        aid = job["id"]
        assert c.get(f"/api/v1/analyses/{aid}/replies").json()["replies"] == []
        # Users cannot have a reply drafted: that is the help desk's tool.
        assert c.post(f"/api/v1/analyses/{aid}/replies/draft").status_code == 403
    with server.client("tri-helen", role="helpdesk") as h:
        # The first draft builds the narrator (its knowledge index) on this fresh server: allow for it.
        d = h.post(f"/api/v1/analyses/{aid}/replies/draft", timeout=180)
        assert d.status_code == 200, d.text
        draft = d.json()
        assert draft["verified"] is True and draft["owner"] == "tri-alice"
        assert draft["text"].startswith("Hello tri-alice,")
        # The draft answers "what do I change?" with this job's own numbers and what to do.
        assert "L04" in draft["citations"]
        assert "storage team" in draft["text"] and "-o 0" not in draft["text"]  # report the OST, never pin it
        assert job["run"]["headline"].split(":")[0] in draft["text"]
        # Written for a person: no bare citation marks, guides as links to their pages.
        assert not re.search(r"\[[A-Z]\d{2}\]|\[doc:", draft["text"]), draft["text"]
        assert "](/docs/lustre-slow-ost)" in draft["text"]
        edited = draft["text"] + "\nHelen (help desk)"
        sent = h.post(f"/api/v1/analyses/{aid}/replies", json={"text": edited, "drafted": True})
        assert sent.status_code == 201, sent.text
        assert sent.json()["role"] == "helpdesk" and sent.json()["drafted"] is True
        assert h.post(f"/api/v1/analyses/{aid}/replies", json={"text": "   "}).status_code == 422
    with server.client("tri-alice") as c:
        thread = c.get(f"/api/v1/analyses/{aid}/replies").json()
        assert [m["text"] for m in thread["replies"]] == [edited]
        back = c.post(f"/api/v1/analyses/{aid}/replies", json={"text": "Thanks, I will restripe the directory."})
        assert back.status_code == 201 and back.json()["author"] == "tri-alice"
        assert len(c.get(f"/api/v1/analyses/{aid}/replies").json()["replies"]) == 2
    with server.client("tri-mallory") as m:
        assert m.get(f"/api/v1/analyses/{aid}/replies").status_code == 404
        assert m.post(f"/api/v1/analyses/{aid}/replies", json={"text": "hi"}).status_code == 404
    with server.client("tri-hook", role="hook") as k:
        r = k.post(f"/api/v1/analyses/{aid}/replies", json={"text": "hi"})
        assert r.status_code in (403, 404)


def test_sample_log_one_click(server: Server) -> None:
    with server.client("tri-newbie") as c:
        r = c.post("/api/v1/analyses/sample")
        assert r.status_code == 202, r.text
        done = wait_done(c, r.json()["id"])
        assert done["status"] == "done" and done["filename"] == "sample-badost.darshan"
        assert any(f["code"] == "L04" for f in done["findings"])
        again = c.post("/api/v1/analyses/sample")
        assert again.status_code == 200 and again.json()["id"] == done["id"]
    with server.client("tri-hook2", role="hook") as k:
        assert k.post("/api/v1/analyses/sample").status_code == 403


def test_unread_replies_appear_on_both_sides_and_clear_when_read(server: Server) -> None:
    base: dict[str, int] = {}  # staff see every thread, other tests' too: their page count is counted from here

    def unread(c: httpx.Client, aid: str) -> tuple[int, int, int]:
        listed = {i["id"]: i["unread_replies"] for i in c.get("/api/v1/analyses").json()["items"]}
        me = c.get("/api/v1/me").json()
        total = me["unread_replies"] - base.setdefault(me["user"], me["unread_replies"] - listed[aid])
        return listed[aid], c.get(f"/api/v1/analyses/{aid}").json()["unread_replies"], total

    with server.client("unr-owner") as o, server.client("unr-desk", role="helpdesk") as h:
        aid = _done(o, BADOST)["id"]
        unread(h, aid)  # the desk's count before this thread exists
        assert unread(o, aid) == (0, 0, 0)
        h.post(f"/api/v1/analyses/{aid}/replies", json={"text": "Please restripe the output directory."})
        h.post(f"/api/v1/analyses/{aid}/replies", json={"text": "And rerun."})
        assert unread(o, aid) == (2, 2, 2)  # the owner's list, the job and the page title's count
        assert unread(h, aid) == (0, 0, 0)  # what one wrote is not unread for oneself
        assert o.post(f"/api/v1/analyses/{aid}/replies/read").json()["last_seen_id"] > 0
        assert unread(o, aid) == (0, 0, 0)
        o.post(f"/api/v1/analyses/{aid}/replies", json={"text": "Done, thanks."})
        assert unread(h, aid) == (1, 1, 1)  # the desk's row flags the owner's answer
        assert unread(o, aid) == (0, 0, 0)
        with server.client("unr-desk2", role="helpdesk") as h2:
            assert unread(h2, aid) == (3, 3, 3)  # a colleague has read nothing yet
        h.post(f"/api/v1/analyses/{aid}/replies/read")
        assert unread(h, aid) == (0, 0, 0)
    with server.client("unr-stranger") as x:
        assert x.post(f"/api/v1/analyses/{aid}/replies/read").status_code == 404
        assert x.get("/api/v1/me").json()["unread_replies"] == 0
