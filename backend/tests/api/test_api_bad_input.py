"""Bad input at the API: a clear JSON 4xx with a one-line detail, nothing stored, never a 5xx."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from iodiag.synth.broken import BYTE_BREAKAGES
from iodiag.synth.hostile import decompression_bomb
from tests.api.test_api_support import LOG_A, LOG_B, Server, shared_server, upload, upload_bytes, wait_done


@pytest.fixture(scope="module")
def server() -> Server:
    return shared_server()


@pytest.fixture()
def nothing_stored(server: Server) -> Iterator[None]:
    """The test's rejected inputs leave no stored log, no temporary file and no analysis row."""
    with server.client("auditor", "admin") as admin:
        before_rows = admin.get("/api/v1/analyses").json()["total"]
        before_logs = server.stored_logs()
        yield
        assert admin.get("/api/v1/analyses").json()["total"] == before_rows
    assert server.stored_logs() == before_logs
    assert server.temp_files() == []


def assert_error(r: httpx.Response, status: int, words: str = "") -> None:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json")
    detail = r.json()["detail"]
    assert isinstance(detail, str) and detail and "\n" not in detail
    assert words.lower() in detail.lower(), detail


@pytest.mark.usefixtures("nothing_stored")
def test_rejected_uploads(server: Server, tmp_path: Path) -> None:
    valid = LOG_A.read_bytes()
    with server.client("mallory") as c:
        # Each says what is wrong and what to do.
        assert_error(upload_bytes(c, b"hello, I am a text file, not a Darshan log at all"), 422, "text file")
        assert_error(upload_bytes(c, os.urandom(64)), 422, "send the .darshan file")
        assert_error(upload_bytes(c, b""), 422, "was the job still running? Darshan writes the log when the job ends")
        assert_error(upload_bytes(c, valid[:20]), 422, "too short")
        assert_error(upload_bytes(c, valid[:600]), 422, "cut short (truncated at byte 600, inside its header")
        assert_error(upload_bytes(c, b"\x1f\x8b" + os.urandom(200)), 422, "gunzip")
        for name, breakage in BYTE_BREAKAGES.items():
            if name == "corrupt-stream":
                continue  # passes the structural check; the worker reports it (see below)
            if name == "truncated-region":
                continue  # a log cut short is analysed as far as it goes (the test after this one)
            r = upload_bytes(c, breakage(valid))
            assert r.status_code == 422, (name, r.text)
        # A decompression bomb (POSIX inflating to 256 MiB of zeros) never reaches a worker.
        bomb = tmp_path / "bomb.darshan"
        decompression_bomb(LOG_A, bomb, 256 << 20)
        assert_error(upload_bytes(c, bomb.read_bytes()), 422, "inflate to over")
        # Larger than the server's 4 MiB limit: refused from its Content-Length, before it is read.
        assert_error(upload_bytes(c, valid + os.urandom(5 << 20)), 413, "too large")


@pytest.mark.usefixtures("nothing_stored")
def test_oversized_chunked_upload_stops_at_the_limit(server: Server) -> None:
    # No Content-Length: the streaming parser must stop at the limit by itself.
    boundary = "xBOUNDARYx"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.darshan"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()

    def body() -> Iterator[bytes]:
        yield head + LOG_A.read_bytes()
        for _ in range(6):
            yield b"\0" * (1 << 20)
        yield f"\r\n--{boundary}--\r\n".encode()

    with server.client("mallory") as c:
        r = c.post(
            "/api/v1/analyses", content=body(), headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}
        )
    assert_error(r, 413, "too large")


@pytest.mark.usefixtures("nothing_stored")
def test_rejected_requests(server: Server) -> None:
    with server.client("mallory") as c:
        assert_error(c.post("/api/v1/analyses", content=LOG_A.read_bytes()), 415, "multipart")
        assert_error(
            c.post("/api/v1/analyses", content=b"abc", headers={"Content-Type": "text/plain"}), 415, "multipart"
        )
        r = c.post("/api/v1/analyses", content=b"--x\r\ngarbage", headers={"Content-Type": "multipart/form-data"})
        assert_error(r, 400, "boundary")
        r = c.post(
            "/api/v1/analyses", content=b"--x\r\ngarbage", headers={"Content-Type": "multipart/form-data; boundary=x"}
        )
        assert r.status_code == 400, r.text
        assert_error(c.post("/api/v1/analyses", data={"user": "mallory"}, files={}), 415)
        r = c.post("/api/v1/analyses", files={"other": ("x", b"1")})
        assert_error(r, 422, "unknown form field")
        r = c.post("/api/v1/analyses", files={"file": ("a", LOG_A.read_bytes())}, data={"nodes": "zero"})
        assert_error(r, 422, "nodes")
        r = c.post("/api/v1/analyses", files={"file": ("a", LOG_A.read_bytes())}, data={"job_id": "a b;rm"})
        assert_error(r, 422, "job_id")
        r = c.post(
            "/api/v1/analyses",
            files=[("file", ("a", LOG_A.read_bytes())), ("file", ("b", LOG_B.read_bytes()))],
        )
        assert_error(r, 422, "one log")
        r = c.post("/api/v1/analyses", content=b"{not json", headers={"Content-Type": "application/json"})
        assert_error(r, 422)
        r = c.patch("/api/v1/analyses/x/triage", content=b"x" * (2 << 20), headers={"Content-Type": "application/json"})
        assert_error(r, 413, "too large")


@pytest.mark.usefixtures("nothing_stored")
def test_server_side_paths_are_confined(server: Server, tmp_path: Path) -> None:
    allowed: Path = server.allowed_dir  # type: ignore[attr-defined]
    outside = tmp_path / "outside.darshan"
    outside.write_bytes(LOG_A.read_bytes())
    (allowed / "escape.darshan").unlink(missing_ok=True)
    (allowed / "escape.darshan").symlink_to(outside)
    (allowed / "sub").mkdir(exist_ok=True)
    (allowed / "notalog.txt").write_text("hello")
    with server.client("slurm", "hook") as hook:

        def post(path: str) -> httpx.Response:
            return hook.post("/api/v1/analyses", json={"path": path, "user": "carol"})

        assert_error(post(str(outside)), 403, "outside")
        assert_error(post(str(allowed / "escape.darshan")), 403, "outside")  # symlink out of the allowed dir
        assert_error(post(f"{allowed}/sub/../../{outside.parent.name}/outside.darshan"), 403, "..")
        assert_error(post("/etc/passwd"), 403, "outside")
        assert_error(post("relative/path.darshan"), 422, "absolute")
        assert_error(post(str(allowed / "missing.darshan")), 422, "no such file")
        assert_error(post(str(allowed / "sub")), 422)
        assert_error(post(str(allowed / "notalog.txt")), 422, "darshan log")
        r = hook.post("/api/v1/analyses", json={"path": str(allowed), "user": "carol", "extra": 1})
        assert_error(r, 422, "extra")


def test_unknown_and_foreign_ids_are_404(server: Server) -> None:
    with server.client("owner2") as mine, server.client("stranger") as c:
        aid = upload(mine, LOG_B).json()["id"]
        for bad in ("nope", "00000000-0000-0000-0000-000000000000", "x" * 300, "%00", aid):
            for path in ("", "/report.json", "/report.md", "/report.html", "/plots", "/chat"):
                r = c.get(f"/api/v1/analyses/{bad}{path}")
                assert_error(r, 404)
        assert_error(mine.get("/api/v1/analyses/nope/report.pdf"), 404)


def test_reports_of_unfinished_or_failed_analyses_are_409(server: Server, tmp_path: Path) -> None:
    broken = BYTE_BREAKAGES["corrupt-stream"](LOG_A.read_bytes())
    with server.client("unlucky") as c:
        r = upload_bytes(c, broken, name="corrupt.darshan")
        assert r.status_code == 202, r.text
        from tests.api.test_api_support import wait_done

        done = wait_done(c, r.json()["id"])
        if done["status"] == "failed":
            assert done["error"] and "\n" not in done["error"]
            assert_error(c.get(f"/api/v1/analyses/{done['id']}/report.html"), 409, "failed")
        else:  # the reader kept what it could: the report says which part is missing
            assert any(f["code"] in ("D01", "D02") for f in done["findings"]), done["findings"]


def test_bad_query_parameters(server: Server) -> None:
    with server.client("mallory") as c:
        for params in (
            {"limit": 0},
            {"limit": 100000},
            {"offset": -1},
            {"severity": "bad"},
            {"code": "p08"},
            {"since": "yesterday"},
            {"status": "sleeping"},
            {"owner": "a b"},
        ):
            assert_error(c.get("/api/v1/analyses", params=params), 422)


def test_a_log_cut_short_in_its_modules_is_analysed_as_far_as_it_goes(server: Server) -> None:
    valid = LOG_A.read_bytes()
    with server.client("half") as c:
        r = upload_bytes(c, valid[: len(valid) - 100], "half.darshan")
        assert r.status_code == 202, r.text
        done = wait_done(c, r.json()["id"])
        assert done["status"] == "done", done
        report = c.get(f"/api/v1/analyses/{done['id']}/report.json").json()
        caveats = " ".join(report["verdict"]["caveats"])
        assert "cut short" in caveats and "HEATMAP lies past the end" in caveats, caveats
