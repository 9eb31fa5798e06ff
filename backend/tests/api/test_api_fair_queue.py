"""The queue is shared fairly: owners take turns, and each queued analysis says where it stands."""

from __future__ import annotations

from pathlib import Path

from tests.api.test_api_support import LOG_A, Server, upload, variant


def test_a_burst_from_one_owner_leaves_another_owners_log_second_in_line(tmp_path: Path) -> None:
    server = Server.start_new(workers=0)  # submit only: the line stays as submitted
    try:
        with server.client("mallory") as m:
            burst = [upload(m, variant(LOG_A, tmp_path / f"m{i}.darshan", i)).json()["id"] for i in range(5)]
        with server.client("victim") as v:
            mine = upload(v, variant(LOG_A, tmp_path / "v.darshan", 99)).json()["id"]
            body = v.get(f"/api/v1/analyses/{mine}").json()
            assert (body["status"], body["queue_position"]) == ("queued", 2)
            listed = v.get("/api/v1/analyses").json()["items"]
            assert [(i["id"], i["queue_position"]) for i in listed] == [(mine, 2)]
        with server.client("mallory") as m:
            places = {i["id"]: i["queue_position"] for i in m.get("/api/v1/analyses").json()["items"]}
        # Mallory's first goes first; the rest wait behind the victim's, in the order sent.
        assert [places[a] for a in burst] == [1, 3, 4, 5, 6]
    finally:
        server.stop()
