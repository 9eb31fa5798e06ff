"""The queue survives its server: a job running when the server is killed (or stopped) is finished after
a restart, never lost and never stuck; per-job time and memory limits fail a job with a clear reason."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.api.test_api_support import LOG_A, LOG_B, LOG_DRISHTI, Server, upload, variant, wait_done
from tests.conftest import shared_log

EMPTY = shared_log("darshan-logs/empty_log/empty_log.darshan")


@pytest.fixture(scope="module")
def slow_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real log whose analysis takes a second or more: a million DXT segments (6 MB; 200 MB of memory)."""
    out = tmp_path_factory.mktemp("slow") / "dxt1m.darshan"
    subprocess.run(
        [sys.executable, "-m", "iodiag", "synth", "--dxt-segments", "1000000", "-o", str(out)],
        check=True,
        capture_output=True,
        timeout=240,
    )
    return out


# The slow log's million segments are held whole (about 200 MB, a second or more), as a trace under the
# reader's streaming budget would be: these tests need a job that runs long and large, and streamed (the
# default above 500 k segments) this one takes a fraction of both.
HELD = {"IODIAG_TRACE_BUDGET": str(10_000_000)}


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_running(server: Server, aid: str, token_user: str, timeout: float = 60) -> dict[str, object]:
    with server.client(token_user) as c:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            body = c.get(f"/api/v1/analyses/{aid}").json()
            if body["status"] == "running" and body["stage"] in ("reading", "analyzing"):
                return dict(body)
            assert body["status"] != "done", "the job finished before the server could be killed"
            time.sleep(0.02)
    raise AssertionError("the job never started")


def test_kill_mid_analysis_then_restart_finishes_every_job(slow_log: Path, tmp_path: Path) -> None:
    server = Server.start_new({**HELD, "IODIAG_MAX_UPLOAD_BYTES": str(64 << 20), "IODIAG_LEASE_S": "2"}, workers=1)
    try:
        with server.client("runner") as c:
            slow = upload(c, slow_log).json()["id"]
            others = [upload(c, log).json()["id"] for log in (LOG_A, LOG_B, LOG_DRISHTI)]
        wait_running(server, slow, "runner")
        assert server.proc is not None
        workers = children(server.proc.pid)
        assert workers, "the server runs its analyses in worker processes"
        server.stop(signal.SIGKILL)
        # The workers die with their server (no orphan finishes a job it no longer owns).
        deadline = time.monotonic() + 10
        while any(alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(p) for p in workers)

        server.start()
        with server.client("runner") as c:
            body = c.get(f"/api/v1/analyses/{slow}").json()
            assert body["status"] in ("running", "queued")  # held by the dead server until its lease runs out
            done = wait_done(c, slow, timeout=120)
            assert done["status"] == "done", done
            assert done["attempts"] == 2  # interrupted once, then finished
            assert done["findings"]
            for aid in others:
                assert wait_done(c, aid)["status"] == "done"
            assert c.get(f"/api/v1/analyses/{slow}/plots").status_code == 200
    finally:
        server.stop()


def test_clean_stop_hands_the_running_job_back_at_once(slow_log: Path, tmp_path: Path) -> None:
    server = Server.start_new({**HELD, "IODIAG_MAX_UPLOAD_BYTES": str(64 << 20), "IODIAG_LEASE_S": "600"}, workers=1)
    try:
        log = variant(slow_log, tmp_path / "slow2.darshan", 5)
        with server.client("runner") as c:
            slow = upload(c, log).json()["id"]
        wait_running(server, slow, "runner")
        server.stop(signal.SIGTERM)
        server.start()
        with server.client("runner") as c:
            # A lease of ten minutes: finishing now means the stop released the job, not the lease expiry.
            done = wait_done(c, slow, timeout=60)
            assert done["status"] == "done" and done["attempts"] == 1
    finally:
        server.stop()


def test_a_restart_takes_back_at_once_what_its_killed_predecessor_held(slow_log: Path, tmp_path: Path) -> None:
    # A lease of ten minutes: the job must not wait it out. The dead server was on this host (same boot, its
    # pid gone), so the new one ends the lease at start and runs the job again straight away.
    server = Server.start_new({**HELD, "IODIAG_MAX_UPLOAD_BYTES": str(64 << 20), "IODIAG_LEASE_S": "600"}, workers=1)
    try:
        log = variant(slow_log, tmp_path / "slow3.darshan", 7)
        with server.client("runner") as c:
            slow = upload(c, log).json()["id"]
        wait_running(server, slow, "runner")
        server.stop(signal.SIGKILL)
        started = time.monotonic()
        server.start()
        with server.client("runner") as c:
            done = wait_done(c, slow, timeout=90)
        assert done["status"] == "done" and done["attempts"] == 2, done
        assert time.monotonic() - started < 90  # far below the 600 s lease
    finally:
        server.stop()


def test_time_and_memory_limits_fail_the_job_with_a_reason(slow_log: Path) -> None:
    server = Server.start_new(
        {**HELD, "IODIAG_MAX_UPLOAD_BYTES": str(64 << 20), "IODIAG_JOB_TIMEOUT_S": "0.5"}, workers=1
    )
    try:
        with server.client("limited") as c:
            slow = upload(c, slow_log).json()["id"]
            quick = upload(c, EMPTY).json()["id"]  # milliseconds, even on a loaded machine
            failed = wait_done(c, slow)
            assert failed["status"] == "failed" and "time limit of 0.5 s" in failed["error"]
            assert c.get(f"/api/v1/analyses/{slow}/report.json").status_code == 409
            assert wait_done(c, quick)["status"] == "done"  # the pool went on with a fresh worker
    finally:
        server.stop()
    # Resident memory: the worker process itself is watched (under 100 MiB idle; this log needs 200).
    server = Server.start_new(
        {**HELD, "IODIAG_MAX_UPLOAD_BYTES": str(64 << 20), "IODIAG_JOB_MEMORY_LIMIT_BYTES": str(100 << 20)}, workers=1
    )
    try:
        with server.client("limited") as c:
            slow = upload(c, slow_log).json()["id"]
            failed = wait_done(c, slow)
            assert failed["status"] == "failed" and "memory limit of 100 MiB" in failed["error"], failed
    finally:
        server.stop()


def test_a_long_analysis_shows_its_stages_from_a_worker_that_yields_the_cpu(slow_log: Path) -> None:
    server = Server.start_new({**HELD, "IODIAG_MAX_UPLOAD_BYTES": str(64 << 20)}, workers=1)
    try:
        assert server.proc is not None
        workers = children(server.proc.pid)
        assert workers
        for pid in workers:
            # Same session as the server (so the same autogroup, where its nice value counts), its own
            # process group (killed with the reader it forks), lowest priority.
            assert os.getsid(pid) == os.getsid(server.proc.pid)
            assert os.getpgid(pid) == pid
            assert os.getpriority(os.PRIO_PROCESS, pid) == 19
        with server.client("stages") as c:
            aid = upload(c, slow_log).json()["id"]
            seen: list[str] = []
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                body = c.get(f"/api/v1/analyses/{aid}").json()
                if not seen or seen[-1] != body["stage"]:
                    seen.append(body["stage"])
                if body["status"] in ("done", "failed"):
                    break
                time.sleep(0.05)
        assert seen[-1] == "done", body
        # Stages of the first half second are not written; after it, they are.
        assert {"analyzing", "rendering"} & set(seen), (seen, body["analysis_s"])
    finally:
        server.stop()


def test_a_log_that_kills_its_worker_is_rejected_at_once_and_the_next_log_runs(slow_log: Path) -> None:
    server = Server.start_new({**HELD, "IODIAG_MAX_UPLOAD_BYTES": str(64 << 20)}, workers=1)
    try:
        assert server.proc is not None
        with server.client("crashy") as c:
            aid = upload(c, slow_log).json()["id"]
            wait_running(server, aid, "crashy")
            for pid in children(server.proc.pid):
                os.kill(pid, signal.SIGSEGV)  # what a reader bug on a hostile log looks like from outside
            failed = wait_done(c, aid, timeout=60)
            assert failed["status"] == "failed" and failed["attempts"] == 1, failed
            assert str(failed["error"]).startswith("rejected: the analysis worker") and "not retried" in str(
                failed["error"]
            )
            after = wait_done(c, upload(c, LOG_B).json()["id"], timeout=120)
            assert after["status"] == "done", after
    finally:
        server.stop()


def test_an_upload_cut_by_kill_9_leaves_nothing_after_the_restart(tmp_path: Path) -> None:
    import socket

    server = Server.start_new(workers=0)
    try:
        token = server.token("cut")
        boundary = "cutcutcut"
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.darshan"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        body_len = len(head) + (8 << 20)
        host, port = server.url.removeprefix("http://").split(":")
        sock = socket.create_connection((host, int(port)))
        sock.sendall(
            (
                f"POST /api/v1/analyses HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {body_len}\r\n\r\n"
            ).encode()
            + head
            + b"\0" * (2 << 20)  # a quarter of the log, then the server dies
        )
        deadline = time.monotonic() + 30
        while not server.temp_files() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.temp_files(), "the upload never reached the store"
        server.stop(signal.SIGKILL)
        sock.close()
        assert server.temp_files()  # what kill -9 leaves
        server.start()
        assert server.temp_files() == []  # gone at start, not an hour later
    finally:
        server.stop()
