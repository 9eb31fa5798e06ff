"""The service on PostgreSQL (IODIAG_TEST_POSTGRES_URL; ``tests/pg_start.sh`` starts a throwaway cluster):
the same flow as on SQLite, concurrent submissions of one log, and a server killed mid-analysis."""

from __future__ import annotations

import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.api.test_api_restart import slow_log, wait_running  # noqa: F401  (fixture)
from tests.api.test_api_support import LOG_A, LOG_DRISHTI, POSTGRES_URL, Server, upload, variant, wait_done

pytestmark = pytest.mark.skipif(not POSTGRES_URL, reason="set IODIAG_TEST_POSTGRES_URL (tests/pg_start.sh)")


@pytest.fixture(scope="module")
def server() -> Server:
    return Server.start_new({"IODIAG_MAX_UPLOAD_BYTES": str(64 << 20), "IODIAG_LEASE_S": "2"}, postgres=True)


def test_submit_poll_report_on_postgres(server: Server) -> None:
    assert server.database_url.startswith("postgresql+psycopg://")
    with server.client("pguser") as c:
        aid = upload(c, LOG_DRISHTI).json()["id"]
        done = wait_done(c, aid)
        assert done["status"] == "done" and done["findings"]
        assert c.get(f"/api/v1/analyses/{aid}/report.md").status_code == 200
        code = done["findings"][0]["code"]
        assert aid in {i["id"] for i in c.get("/api/v1/analyses", params={"code": code}).json()["items"]}


def test_concurrent_submissions_of_one_log_make_one_analysis(server: Server, tmp_path: Path) -> None:
    log = variant(LOG_A, tmp_path / "same.darshan", 77)
    with server.client("racer") as c:
        with ThreadPoolExecutor(10) as ex:
            answers = list(ex.map(lambda _: upload(c, log), range(10)))
        assert all(r.status_code in (200, 202) for r in answers), [r.text for r in answers]
        assert len({r.json()["id"] for r in answers}) == 1
        assert sum(r.json()["created"] for r in answers) == 1
        assert c.get("/api/v1/analyses").json()["total"] == 1
    assert len([p for p in server.stored_logs() if p.read_bytes() == log.read_bytes()]) == 1


def test_killed_server_on_postgres_loses_nothing(server: Server, slow_log: Path) -> None:  # noqa: F811
    with server.client("pgrunner") as c:
        slow = upload(c, slow_log).json()["id"]
    wait_running(server, slow, "pgrunner")
    server.stop(signal.SIGKILL)
    server.start()
    with server.client("pgrunner") as c:
        done = wait_done(c, slow, timeout=120)
        assert done["status"] == "done" and done["attempts"] == 2
