"""Scheduler hooks and the ``iodiag submit`` client against a real server.

The Slurm epilog and PBS epilogue scripts run for real (bash, curl) over a fake Darshan log tree.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.api.test_api_support import LOG_A, LOG_B, LOG_DRISHTI, Server, free_port, shared_server, variant, wait_done
from tests.conftest import REPO

SLURM = REPO / "hooks" / "slurm-epilog.sh"
PBS = REPO / "hooks" / "pbs-epilogue.sh"
pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="the hook scripts need curl")
# Whatever a test leaves undelivered is spooled here, never in the default /var/spool/iodiag-hook.
SPOOL = Path(tempfile.gettempdir()) / f"iodiag-test-spool-{os.getpid()}"
atexit.register(shutil.rmtree, SPOOL, True)


@pytest.fixture(scope="module")
def server() -> Server:
    return shared_server()


def dated(root: Path, user: str, jobid: str, exe: str, days_ago: int = 0) -> Path:
    day = dt.date.today() - dt.timedelta(days=days_ago)
    d = root / str(day.year) / str(day.month) / str(day.day)
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{user}_{exe}_id{jobid}_{day.month}-{day.day}-3600-1234567890_1.darshan"


def run_hook(script: Path, env: dict[str, str], *args: str) -> float:
    """Run a hook as slurmd runs its epilog: in a process group of its own, killed whole once the script exits."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("IODIAG_", "SLURM_", "DARSHAN_", "PBS_"))}
    started = time.monotonic()
    proc = subprocess.Popen(
        ["bash", str(script), *args],
        env={**base, "IODIAG_HOOK_CONF": "/nonexistent", "IODIAG_HOOK_SPOOL": str(SPOOL), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    _, err = proc.communicate(timeout=30)
    took = time.monotonic() - started
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # slurmd's "kill children too"
    assert proc.returncode == 0, err
    return took


def analyses_of(server: Server, user: str, job_id: str, want: int, timeout: float = 30) -> list[dict[str, object]]:
    with server.client(user) as c:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            items = c.get("/api/v1/analyses", params={"job_id": job_id}).json()["items"]
            if len(items) >= want:
                return [wait_done(c, str(i["id"])) for i in items]
            time.sleep(0.1)
    raise AssertionError(f"no analysis of job {job_id} for {user} appeared")


def test_slurm_epilog_uploads_the_jobs_logs_from_the_dated_tree(server: Server, tmp_path: Path) -> None:
    tree = tmp_path / "darshan-logs"
    mine = variant(LOG_A, dated(tree, "alice", "424242", "a.out"), 11)
    started_yesterday = variant(LOG_B, dated(tree, "alice", "424242", "post", days_ago=1), 12)
    variant(LOG_DRISHTI, dated(tree, "alice", "999", "a.out"), 13)  # another job
    variant(LOG_DRISHTI, dated(tree, "bob", "424242", "a.out"), 14)  # another user
    env = {
        "IODIAG_URL": server.url,
        "IODIAG_TOKEN": server.token("slurm", "hook"),
        "DARSHAN_LOG_DIR": str(tree),
        "SLURM_JOB_ID": "424242",
        "SLURM_JOB_USER": "alice",
        "IODIAG_HOOK_LOG": str(tmp_path / "hook.log"),
    }
    took = run_hook(SLURM, env)
    assert took < 3, f"the epilog held the node for {took:.1f} s"
    done = analyses_of(server, "alice", "424242", 2)
    assert sorted(str(a["filename"]) for a in done) == sorted([mine.name, started_yesterday.name])
    assert all(a["status"] == "done" and a["submitted_by"] == "slurm" for a in done)
    with server.client("bob") as bob:
        assert bob.get("/api/v1/analyses", params={"job_id": "424242"}).json()["total"] == 0


def test_slurm_epilog_server_side_path_and_darshan_logpath(server: Server) -> None:
    allowed: Path = server.allowed_dir  # type: ignore[attr-defined]
    tree = allowed / "tree"
    log = variant(LOG_A, dated(tree, "erin", "5150", "sim"), 21)
    env = {
        "IODIAG_URL": server.url,
        "IODIAG_TOKEN": server.token("slurm", "hook"),
        "DARSHAN_LOG_DIR": str(tree),
        "SLURM_JOB_ID": "5150",
        "SLURM_JOB_USER": "erin",
        "IODIAG_HOOK_MODE": "path",
    }
    run_hook(SLURM, env)
    (a,) = analyses_of(server, "erin", "5150", 1)
    assert a["source"] == "path" and a["filename"] == log.name
    # A job that named its own log file with DARSHAN_LOGPATH.
    own = variant(LOG_B, allowed / "own.darshan", 22)
    run_hook(SLURM, {**env, "SLURM_JOB_ID": "5151", "DARSHAN_LOGPATH": str(own), "DARSHAN_LOG_DIR": "/nonexistent"})
    (b,) = analyses_of(server, "erin", "5151", 1)
    assert b["filename"] == "own.darshan"


def test_pbs_epilogue(server: Server, tmp_path: Path) -> None:
    tree = tmp_path / "logs"
    variant(LOG_DRISHTI, dated(tree, "gina", "8080", "wrf"), 31)
    env = {"IODIAG_URL": server.url, "IODIAG_TOKEN": server.token("pbs", "hook"), "DARSHAN_LOG_DIR": str(tree)}
    run_hook(PBS, env, "8080.pbsserver", "gina", "users")
    (a,) = analyses_of(server, "gina", "8080", 1)
    assert a["status"] == "done" and a["submitted_by"] == "pbs"


def test_hooks_never_fail_or_hold_the_epilog(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    variant(LOG_A, dated(tree, "hank", "1", "x"), 41)
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    env = {
        "IODIAG_URL": dead,
        "IODIAG_TOKEN": "iod_x",
        "DARSHAN_LOG_DIR": str(tree),
        "SLURM_JOB_ID": "1",
        "SLURM_JOB_USER": "hank",
        "IODIAG_HOOK_SPOOL": str(tmp_path / "spool"),
        "IODIAG_HOOK_RETRY_S": "1",
    }
    assert run_hook(SLURM, env) < 3
    assert run_hook(SLURM, {**env, "SLURM_JOB_USER": "bad user;rm -rf /"}) < 3
    assert run_hook(SLURM, {}) < 3  # not configured: nothing to do
    assert run_hook(PBS, env) < 3


def submit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("IODIAG_")}
    return subprocess.run(
        [sys.executable, "-m", "iodiag", "submit", *args],
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_submit_cli(server: Server, tmp_path: Path) -> None:
    env = {"IODIAG_URL": server.url, "IODIAG_TOKEN": server.token("ivan")}
    log = variant(LOG_A, tmp_path / "cli.darshan", 51)
    p = submit(str(log), "--wait", env=env)
    assert p.returncode == 0, p.stderr
    path, aid, created, status = p.stdout.strip().split("\t")
    assert (path, created, status) == (str(log), "new", "done")
    p = submit(str(log), env=env)
    assert p.returncode == 0 and p.stdout.strip().split("\t")[1:] == [aid, "existing"]
    # A 4xx: exit 2 with the server's one-line reason; the other logs are still submitted.
    junk = tmp_path / "junk.darshan"
    junk.write_text("not a log")
    p = submit(str(junk), str(variant(LOG_B, tmp_path / "ok.darshan", 52)), env=env)
    assert p.returncode == 2
    (err,) = [line for line in p.stderr.splitlines() if line.startswith("iodiag: error:")]
    assert "junk.darshan: 422" in err and "Darshan log" in err
    assert len(p.stdout.strip().splitlines()) == 1
    p = submit(str(log), env={**env, "IODIAG_TOKEN": "iod_wrong"})
    assert p.returncode == 2 and "401" in p.stderr
    p = submit(str(log), env={"IODIAG_URL": server.url})
    assert p.returncode == 2 and "IODIAG_TOKEN" in p.stderr


def test_submit_retries_until_the_server_is_up(tmp_path: Path) -> None:
    late = Server(tmp_path / "late", {"IODIAG_WORKERS": "0"})
    late.data_dir.mkdir()
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "iodiag",
            "token",
            "create",
            "--user",
            "judy",
            "--role",
            "user",
            "--data-dir",
            str(late.data_dir),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("IODIAG_")},
    )
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert token.startswith("iod_") and "shown once" in made.stderr
    log = variant(LOG_A, tmp_path / "late.darshan", 61)
    proc = subprocess.Popen(
        [sys.executable, "-m", "iodiag", "submit", str(log)],
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("IODIAG_")},
            "IODIAG_URL": late.url,
            "IODIAG_TOKEN": token,
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.5)  # the first attempts are refused: nothing listens yet
        late.start()
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        assert out.strip().split("\t")[2] == "new"
    finally:
        proc.kill()
        late.stop()
