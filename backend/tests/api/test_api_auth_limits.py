"""A revoked token stops working at once on a running server, whoever revokes it; a flood of bad tokens
from one address is answered 429 without slowing the valid tokens beside it."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from tests.api.test_api_support import Server


@pytest.fixture()
def server() -> Iterator[Server]:
    s = Server.start_new(
        {"IODIAG_AUTH_FAILURE_BURST": "5", "IODIAG_AUTH_FAILURES_PER_S": "1", "IODIAG_TOKEN_CACHE_S": "0.2"}, workers=0
    )
    yield s
    s.stop()


def token_id(server: Server, user: str) -> int:
    with server.client("root", "admin") as admin:
        (row,) = [t for t in admin.get("/api/v1/tokens").json() if t["user"] == user]
        return int(row["id"])


def test_a_token_revoked_from_the_command_line_stops_working_at_once(server: Server) -> None:
    token = server.token("leaver")
    tid = token_id(server, "leaver")
    accepted_after: list[float] = []
    revoked_at: list[float] = []
    stop = threading.Event()

    def hammer() -> None:
        with server.client(token=token) as c:
            while not stop.is_set():
                sent = time.monotonic()
                if c.get("/api/v1/me").status_code == 200 and revoked_at and sent > revoked_at[0]:
                    accepted_after.append(sent)

    with server.client(token=token) as c:
        assert c.get("/api/v1/me").status_code == 200  # checked, so cached
    t = threading.Thread(target=hammer)
    t.start()
    try:
        p = subprocess.run(
            [sys.executable, "-m", "iodiag", "token", "revoke", str(tid), "--data-dir", str(server.data_dir)],
            env=server.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        revoked_at.append(time.monotonic())
        assert p.returncode == 0, p.stderr
        time.sleep(0.5)
    finally:
        stop.set()
        t.join()
    assert accepted_after == []  # not one request sent after the command returned was let in
    with server.client(token=token) as c:
        r = c.get("/api/v1/me")
        # The hammering after the revocation were failed authentications too: by now they are throttled.
        assert r.status_code in (401, 429) and ("revoked" in r.json()["detail"] or "Retry-After" in r.headers)


def test_bad_tokens_are_throttled_per_address_and_valid_ones_are_not(server: Server) -> None:
    good = server.token("steady")
    with server.client(token=good) as ok:
        assert ok.get("/api/v1/me").status_code == 200
        with server.client(token="iod_not-a-token") as bad:
            codes = [bad.get("/api/v1/me").status_code for _ in range(12)]
            assert codes[:5] == [401] * 5 and set(codes[5:]) == {429}, codes
            r = bad.get("/api/v1/me")
            assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
            assert "too many failed authentications" in r.json()["detail"]
            with server.client("newcomer") as new:  # a token never seen from there waits like the flood
                assert new.get("/api/v1/me").status_code == 429
            # The valid token beside the flood is answered as before, also once its cache entry has run out
            # (0.2 s here) and it is looked up again.
            for _ in range(4):
                assert [ok.get("/api/v1/me").status_code for _ in range(5)] == [200] * 5
                time.sleep(0.25)
            time.sleep(int(r.headers["Retry-After"]) + 0.1)
            assert bad.get("/api/v1/me").status_code == 401  # after the wait, a real answer again
