"""Runs compared and followed over time through the real service: the compare route, an application's
history with its regression flag, the triage list's flag, the system report's regressions, and the chat's
"is this run better than my last one?"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from iodiag.comparison import Comparison
from iodiag.evals.history import DEFAULT_SERIES, load_series
from iodiag.evals.triggers import build_entry
from tests.api.test_api_support import LOG_A, Server, shared_server, upload, wait_done
from tests.conftest import wheel_log

BADOST = wheel_log("sample-badost.darshan")
GOODOST = wheel_log("sample-goodost.darshan")


@pytest.fixture(scope="module")
def server() -> Server:
    return shared_server()


def _done(c: httpx.Client, log: Path, name: str | None = None) -> dict[str, Any]:
    r = upload(c, log, name)
    assert r.status_code in (200, 201, 202), r.text
    done = wait_done(c, r.json()["id"])
    assert done["status"] == "done", done
    return done


def _ask(c: httpx.Client, aid: str, question: str) -> dict[str, Any]:
    r = c.post(f"/api/v1/analyses/{aid}/chat", json={"question": question})
    assert r.status_code == 200, r.text
    final = None
    event = None
    for line in r.text.splitlines():
        if line.startswith("event:"):
            event = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and event == "final":
            final = json.loads(line.split(":", 1)[1])
    assert final is not None, r.text
    return final


def test_compare_route_slow_ost_resolved_and_same_run_unchanged(server: Server) -> None:
    with server.client("cmp-alice") as c:
        bad, good = _done(c, BADOST), _done(c, GOODOST)
        assert bad["run"]["executable"] and bad["run"]["io_time_s"] > 0 and bad["run"]["headline"]

        r = c.get(f"/api/v1/analyses/{bad['id']}/compare/{good['id']}")
        assert r.status_code == 200, r.text
        cmp = Comparison.model_validate_json(r.content)
        assert "L04" in [f.code for f in cmp.findings_resolved]  # the slow OST is gone
        io = cmp.metric("I/O time, busiest rank")
        assert io is not None and io.a is not None and io.b is not None and io.b < io.a
        assert cmp.verdict.startswith("I/O time fell")
        # Run facts were stored with the analysis: the per-OST and request-size rows are there.
        assert any(m.section == "OSTs" for m in cmp.metrics)
        assert any(m.section == "request sizes" for m in cmp.metrics)

        same = c.get(f"/api/v1/analyses/{bad['id']}/compare/{bad['id']}").json()
        assert same["changed"] is False
        assert not same["findings_resolved"] and not same["findings_new"] and not same["findings_changed"]


def test_compare_refuses_other_programs_and_other_users(server: Server) -> None:
    with server.client("cmp-bob") as c:
        bad, other = _done(c, BADOST), _done(c, LOG_A)
        r = c.get(f"/api/v1/analyses/{bad['id']}/compare/{other['id']}")
        assert r.status_code == 409
        detail = r.json()["detail"]
        assert "not comparable" in detail and "\n" not in detail
        forced = c.get(f"/api/v1/analyses/{bad['id']}/compare/{other['id']}", params={"force": "true"})
        assert forced.status_code == 200 and forced.json()["forced"] is True
    with server.client("cmp-eve") as c:
        mine = _done(c, GOODOST)
        assert c.get(f"/api/v1/analyses/{mine['id']}/compare/{bad['id']}").status_code == 404


@pytest.fixture(scope="module")
def series_logs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, bool]]:
    """The file-system-trouble series of evals/history: nine daily runs, regressions on days 5 and 8."""
    spec, entries = load_series(DEFAULT_SERIES / "file-system-trouble.yaml", DEFAULT_SERIES.parent)
    cache = tmp_path_factory.mktemp("series")
    return [(build_entry(e, cache), r.regression) for e, r in zip(entries, spec.runs, strict=True)]


def test_history_flags_the_labelled_regressions_and_the_list_and_system_report_show_them(
    server: Server, series_logs: list[tuple[Path, bool]]
) -> None:
    with server.client("cmp-carol") as c:
        # Uploaded out of order: the history is ordered by when each run started, not when it was uploaded.
        order = [8, 0, 3, 1, 2, 5, 4, 7, 6]
        ids: dict[int, str] = {}
        for day in order:
            ids[day] = _done(c, series_logs[day][0], f"run-day{day}.darshan")["id"]

        h = c.get(f"/api/v1/analyses/{ids[0]}/history")
        assert h.status_code == 200, h.text
        runs = h.json()["runs"]
        assert [r["id"] for r in runs] == [ids[d] for d in range(9)]
        flagged = [d for d, r in enumerate(runs) if r["regression"] is not None]
        assert flagged == [d for d, (_, label) in enumerate(series_logs) if label] == [5, 8]
        why = runs[5]["regression"]["explanation"]
        assert "median" in why and "earlier runs" in why

        page = c.get("/api/v1/analyses", params={"limit": 50}).json()
        listed = {i["id"]: i["regression"] for i in page["items"]}
        assert listed[ids[5]] is not None and listed[ids[8]] is not None and listed[ids[6]] is None

        # Chat: the day-6 run against day 5 (the run before it), answered from the comparison, verified.
        answer = _ask(c, ids[6], "Is this run better than my last one?")
        assert answer["intent"] == "compare-runs" and answer["verifier"]["passed"], answer
        assert "previous run" in answer["text"] and "I/O time fell" in answer["text"]
        first = _ask(c, ids[0], "what changed since my last run?")
        assert "no earlier finished run" in first["text"]

    with server.client("cmp-help", role="helpdesk") as c:
        rep = c.get("/api/v1/system-report", params={"top": 50}).json()
        mine = [r for r in rep["regressions"] if r["user"] == "cmp-carol"]
        assert len(mine) == 2 and all(r["ratio"] >= 1.5 for r in mine)
        html = c.get("/api/v1/system-report", params={"format": "html"}).text
        assert "Regressions" in html


def test_a_run_against_its_applications_median_run(server: Server, series_logs: list[tuple[Path, bool]]) -> None:
    with server.client("cmp-mia") as c:
        ids = [_done(c, log, f"mia-day{day}.darshan")["id"] for day, (log, _) in enumerate(series_logs)]
        runs = c.get(f"/api/v1/analyses/{ids[8]}/history").json()["runs"]
        r = c.get(f"/api/v1/analyses/{ids[8]}/compare/median")
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["runs"] == 8 and body["analysis_id"] == ids[8]
        # The middle of the other runs by I/O time; equal times in the order the runs ran (history is in that order).
        others = sorted((p["io_time_s"], i, p["id"]) for i, p in enumerate(runs) if p["id"] != ids[8])
        assert body["baseline_id"] == others[(len(others) - 1) // 2][2]
        cmp = Comparison.model_validate(body["comparison"])
        io = cmp.metric("I/O time, busiest rank")
        assert io is not None and io.b > io.a  # day 8 is a labelled regression: slower than the typical run
        assert c.get(f"/api/v1/analyses/{ids[8]}/compare/{ids[0]}").status_code == 200  # the route is still there
    with server.client("cmp-solo") as c:
        alone = _done(c, LOG_A)["id"]
        r = c.get(f"/api/v1/analyses/{alone}/compare/median")
        assert r.status_code == 409 and "no other finished run" in r.json()["detail"]
