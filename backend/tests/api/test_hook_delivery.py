"""The Slurm epilog never loses a log: any file name, retries, the spool and ``iodiag hook flush``.

Real bash, real curl and a real server; a stand-in server on loopback plays the busy and the hung one.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePosixPath

import httpx
import pytest

from iodiag.cli.hook_cmd import read_conf, read_record
from tests.api.test_api_hooks import SLURM, analyses_of, run_hook
from tests.api.test_api_support import LOG_A, LOG_B, LOG_DRISHTI, Server, free_port, shared_server, variant

pytestmark = pytest.mark.skipif(shutil.which("curl") is None, reason="the hook scripts need curl")


@pytest.fixture(scope="module")
def server() -> Server:
    return shared_server()


def hook_env(url: str, token: str, tmp_path: Path, job: str, user: str, **more: str) -> dict[str, str]:
    return {
        "IODIAG_URL": url,
        "IODIAG_TOKEN": token,
        "SLURM_JOB_ID": job,
        "SLURM_JOB_USER": user,
        "IODIAG_HOOK_LOG": str(tmp_path / "hook.log"),
        "IODIAG_HOOK_SPOOL": str(tmp_path / "spool"),
        **more,
    }


def summary(tmp_path: Path, job: str, timeout: float = 45) -> tuple[tuple[int, int, int], str]:
    """The background sender's last line for ``job``: (sent, spooled, lost), and the whole hook log."""
    log = tmp_path / "hook.log"
    pattern = re.compile(rf"iodiag: job {job}: (\d+) sent, (\d+) spooled, (\d+) lost")
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.exists() else ""
        if m := pattern.search(text):
            sent, spooled, lost = (int(g) for g in m.groups())
            return (sent, spooled, lost), text
        time.sleep(0.1)
    raise AssertionError(f"the hook sender for job {job} did not finish:\n{text}")


def records(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "spool").glob("*.rec"))


def shown(name: str) -> str:
    """The name the server gives an upload or a path (api/routes/analyses.py ``_filename``)."""
    base = PurePosixPath(name.replace("\\", "/")).name
    return "".join(ch for ch in base if ch.isprintable())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def flush(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IODIAG_")}
    return subprocess.run(
        [sys.executable, "-m", "iodiag", "hook", "flush", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_any_file_name_reaches_the_server(server: Server, tmp_path: Path) -> None:
    # curl's -F would split these at ';' or ','; the shell would expand the rest if the script let it.
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    names = [
        "nora_we,ird;type=text_id9001_a.darshan",
        "nora_say \"hi\" and 'bye'_id9001_b.darshan",
        "nora_$(touch PWNED) `id` $HOME_id9001_c.darshan",
        "nora_new\nline and\ttab back\\slash_id9001_d.darshan",
        "nora_  spaces  ,; _id9001_e.darshan",
    ]
    logs = [variant(LOG_A, jobdir / name, 9001 + i) for i, name in enumerate(names)]
    env = hook_env(server.url, server.token("slurm", "hook"), tmp_path, "9001", "nora", DARSHAN_LOG_DIR=str(jobdir))
    assert run_hook(SLURM, env) < 3
    counts, text = summary(tmp_path, "9001")
    assert counts == (len(names), 0, 0), text
    done = analyses_of(server, "nora", "9001", len(names))
    assert {str(a["sha256"]): str(a["filename"]) for a in done} == {sha256(p): shown(p.name) for p in logs}
    assert not records(tmp_path)

    # Path mode: the path goes as a JSON string, quotes, backslashes and control characters escaped.
    allowed: Path = server.allowed_dir  # type: ignore[attr-defined]
    odd = variant(LOG_B, allowed / 'nora "x" $(y) ;,\n\t\x01 z.darshan', 9010)
    path_env = {**env, "IODIAG_HOOK_MODE": "path", "SLURM_JOB_ID": "9002", "DARSHAN_LOGPATH": str(odd)}
    assert run_hook(SLURM, path_env) < 3
    counts, text = summary(tmp_path, "9002")
    assert counts == (1, 0, 0), text
    (a,) = analyses_of(server, "nora", "9002", 1)
    assert (a["source"], a["filename"], a["sha256"]) == ("path", shown(odd.name), sha256(odd))


def test_a_down_server_gets_the_log_spooled_and_flush_sends_it(tmp_path: Path) -> None:
    late = Server(tmp_path / "late", {"IODIAG_WORKERS": "0"})
    late.data_dir.mkdir()
    token = late.token("slurm", "hook")
    tree = tmp_path / "job"
    tree.mkdir()
    logs = [
        variant(LOG_A, tree / "omar_sim_id9101_a.darshan", 9101),
        variant(LOG_B, tree / 'omar_p\\o\nst, "x"_id9101_b.darshan', 9102),  # the record escapes both
    ]
    junk = tree / "omar_junk_id9101_c.darshan"
    junk.write_text("not a Darshan log")
    env = hook_env(late.url, token, tmp_path, "9101", "omar", DARSHAN_LOG_DIR=str(tree), IODIAG_HOOK_RETRY_S="1")
    assert run_hook(SLURM, env) < 3
    counts, text = summary(tmp_path, "9101")
    assert counts == (0, 3, 0), text
    recs = records(tmp_path)
    assert {read_record(r).log for r in recs} == {*logs, junk}
    assert {(read_record(r).user, read_record(r).job_id, read_record(r).mode) for r in recs} == {
        ("omar", "9101", "upload")
    }
    assert not list((tmp_path / "spool").glob(".tmp.*"))

    # Still down: the records stay, exit 1.
    args = ("--spool", str(tmp_path / "spool"), "--url", late.url, "--token", token)
    p = flush(*args, "--tries", "1")
    assert p.returncode == 1, p.stderr
    assert "cannot reach the server" in p.stderr and "3 logs stay spooled" in p.stderr
    assert len(records(tmp_path)) == 3

    late.start()
    try:
        # Wrong token: nothing is sent, nothing is dropped.
        p = flush("--spool", str(tmp_path / "spool"), "--url", late.url, "--token", "iod_wrong")
        assert p.returncode == 2 and "401" in p.stderr and "3 logs stay spooled" in p.stderr, p.stderr
        assert len(records(tmp_path)) == 3
        # Up: the logs go, the junk is refused for good (exit 2, one line), and the spool is empty.
        p = flush(*args)
        assert p.returncode == 2, p.stderr
        assert p.stdout.count("\tnew\n") == 2
        (lost,) = p.stderr.splitlines()
        assert lost.startswith(f"iodiag: error: {junk}: log lost: 422 ")
        assert not records(tmp_path)
        with late.client("omar") as c:
            items = c.get("/api/v1/analyses", params={"job_id": "9101"}).json()["items"]
        assert sorted(i["sha256"] for i in items) == sorted(sha256(q) for q in logs)
        p = flush(*args)
        assert p.returncode == 0 and "nothing spooled" in p.stderr
    finally:
        late.stop()


def test_flush_reads_the_hooks_settings_file(tmp_path: Path) -> None:
    conf = tmp_path / "hook.env"
    conf.write_text(
        "# the hook sources this with bash\n"
        'export IODIAG_URL="http://127.0.0.1:1"  # nothing there\n'
        "IODIAG_TOKEN='iod_x'\n"
        f"IODIAG_HOOK_SPOOL={tmp_path / 'nothing'}\n"
        "DARSHAN_LOG_DIR=/lus/logs\n"
    )
    assert read_conf(conf.read_text()) == {
        "IODIAG_URL": "http://127.0.0.1:1",
        "IODIAG_TOKEN": "iod_x",
        "IODIAG_HOOK_SPOOL": str(tmp_path / "nothing"),
    }
    p = flush("--conf", str(conf))
    assert p.returncode == 0 and f"nothing spooled in {tmp_path / 'nothing'}" in p.stderr, p.stderr
    p = flush("--conf", str(tmp_path / "missing.env"))
    assert p.returncode == 2 and p.stderr.startswith("iodiag: error: cannot read the hook's settings"), p.stderr
    assert "Traceback" not in p.stderr


def test_a_restarting_server_gets_the_log_and_what_was_spooled(tmp_path: Path) -> None:
    late = Server(tmp_path / "late", {"IODIAG_WORKERS": "0"})
    late.data_dir.mkdir()
    token = late.token("slurm", "hook")
    earlier = variant(LOG_A, tmp_path / "earlier.darshan", 9201)
    env = hook_env(late.url, token, tmp_path, "9201", "pia", DARSHAN_LOGPATH=str(earlier), IODIAG_HOOK_RETRY_S="0")
    assert run_hook(SLURM, env) < 3
    assert summary(tmp_path, "9201")[0] == (0, 1, 0)
    assert len(records(tmp_path)) == 1

    # The next job ends while the server is down; it comes back a few seconds later (a restart).
    log = variant(LOG_B, tmp_path / "now.darshan", 9202)
    env = hook_env(late.url, token, tmp_path, "9202", "pia", DARSHAN_LOGPATH=str(log))
    assert run_hook(SLURM, env) < 3
    try:
        time.sleep(2.5)
        late.start()
        counts, text = summary(tmp_path, "9202", timeout=90)  # backoff reaches 15 s (with jitter) between tries
        # This job's log got through on a retry, and what the earlier job spooled went after it.
        assert counts == (2, 0, 0), text
        assert re.search(r"now\.darshan: try 1: .*(Connection refused|Couldn't connect)", text), text
        assert "earlier.darshan: sent from the spool (job 9201, user pia)" in text
        assert not records(tmp_path)
        with late.client("pia") as c:
            items = c.get("/api/v1/analyses").json()["items"]
        assert sorted((i["job_id"], i["sha256"]) for i in items) == [("9201", sha256(earlier)), ("9202", sha256(log))]
    finally:
        late.stop()


class Standin:
    """A server on loopback that answers the first ``busy`` requests 503 and forwards the rest to ``upstream``,
    or holds every request ``hang_s`` seconds without an answer."""

    def __init__(self, busy: int = 0, upstream: str = "", hang_s: float = 0) -> None:
        self.seen = 0
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                standin.seen += 1
                if hang_s:
                    time.sleep(hang_s)
                if standin.seen <= busy or not upstream:
                    self.answer(503, b'{"detail": "busy, try again later"}')
                    return
                headers = {k: self.headers[k] for k in ("Content-Type", "Authorization")}
                r = httpx.post(upstream + self.path, content=body, headers=headers, timeout=30)
                self.answer(r.status_code, r.content)

            def answer(self, status: int, body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up waiting (the hung case)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_busy_server_is_retried_until_it_takes_the_log(server: Server, tmp_path: Path) -> None:
    standin = Standin(busy=2, upstream=server.url)
    try:
        log = variant(LOG_DRISHTI, tmp_path / "busy.darshan", 9301)
        env = hook_env(standin.url, server.token("slurm", "hook"), tmp_path, "9301", "quin", DARSHAN_LOGPATH=str(log))
        assert run_hook(SLURM, env) < 3
        counts, text = summary(tmp_path, "9301")
        assert counts == (1, 0, 0), text
        assert "busy.darshan: try 1: 503 busy, try again later" in text and "try 2: 503" in text
        assert standin.seen == 3
        (a,) = analyses_of(server, "quin", "9301", 1)
        assert a["sha256"] == sha256(log) and a["filename"] == "busy.darshan"
    finally:
        standin.close()


def test_a_server_that_never_answers_gets_the_log_spooled(tmp_path: Path) -> None:
    standin = Standin(hang_s=3)
    try:
        log = variant(LOG_A, tmp_path / "hung.darshan", 9401)
        env = hook_env(
            standin.url,
            "iod_x",
            tmp_path,
            "9401",
            "rita",
            DARSHAN_LOGPATH=str(log),
            IODIAG_HOOK_TIMEOUT="1",
            IODIAG_HOOK_RETRY_S="2",
        )
        assert run_hook(SLURM, env) < 3
        counts, text = summary(tmp_path, "9401")
        assert counts == (0, 1, 0), text
        assert "timed out" in text
        (rec,) = records(tmp_path)
        assert f"path={log}\nuser=rita\njob_id=9401\nmode=upload\n" in rec.read_text()
    finally:
        standin.close()


def test_a_refused_log_is_lost_with_a_line_in_the_job_output(server: Server, tmp_path: Path) -> None:
    me = getpass.getuser()  # the job output is written as the job's user: it must exist here
    junk = tmp_path / "junk.darshan"
    junk.write_text("not a Darshan log")
    job_out = tmp_path / "slurm-9501.out"
    job_out.write_text("the job's own output\n")
    env = hook_env(
        server.url,
        server.token("slurm", "hook"),
        tmp_path,
        "9501",
        me,
        DARSHAN_LOGPATH=str(junk),
        SLURM_JOB_STDOUT=str(job_out),
    )
    assert run_hook(SLURM, env) < 3
    counts, text = summary(tmp_path, "9501")
    assert counts == (0, 0, 1), text
    assert re.search(rf"iodiag: {re.escape(str(junk))}: log lost: 422 .*Darshan log", text), text
    lines = job_out.read_text().splitlines()
    assert lines[0] == "the job's own output"
    assert len(lines) == 2 and lines[1].startswith(f"iodiag: {junk}: log lost: 422 "), lines
    assert not records(tmp_path)
    assert "try 1" not in text  # a 4xx is final: not retried

    # The sender itself exits 1 when a log is lost (IODIAG_HOOK_WAIT runs it in the foreground); so does a log
    # that can be neither sent nor spooled.
    base = {k: v for k, v in os.environ.items() if not k.startswith(("IODIAG_", "SLURM_", "DARSHAN_"))}
    wait = {**base, "IODIAG_HOOK_CONF": "/nonexistent", **env, "IODIAG_HOOK_WAIT": "1", "SLURM_JOB_ID": "9502"}
    p = subprocess.run(["bash", str(SLURM)], env=wait, capture_output=True, timeout=30)
    assert p.returncode == 1
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    nowhere = {
        **wait,
        "SLURM_JOB_ID": "9503",
        "IODIAG_URL": f"http://127.0.0.1:{free_port()}",
        "IODIAG_HOOK_RETRY_S": "0",
        "IODIAG_HOOK_SPOOL": str(blocked / "spool"),
        "DARSHAN_LOGPATH": str(variant(LOG_A, tmp_path / "stuck.darshan", 9503)),
    }
    p = subprocess.run(["bash", str(SLURM)], env=nowhere, capture_output=True, timeout=30)
    assert p.returncode == 1
    counts, text = summary(tmp_path, "9503")
    assert counts == (0, 0, 1)
    assert re.search(r"stuck\.darshan: log lost: .*could not be spooled", text), text
