"""Helpers for the API tests: a real ``iodiag serve`` on loopback, tokens, and polling.

No tests here. Test modules share one server per session through ``shared_server()``; tests that
kill or reconfigure a server start their own with ``Server.start``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from iodiag.store import Database, migrate
from iodiag.store import tokens as token_repo
from tests.conftest import shared_log

LOG_A = shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.4.1.darshan")
LOG_B = shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.1.0.darshan")
LOG_DXT = shared_log(
    "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
)
LOG_DRISHTI = shared_log(
    "drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan"
)
POSTGRES_URL = os.environ.get("IODIAG_TEST_POSTGRES_URL", "")
FAST_QUEUE = {"IODIAG_LEASE_S": "3", "IODIAG_HEARTBEAT_S": "0.5", "IODIAG_POLL_S": "0.2"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fresh_postgres_url(base: str) -> str:
    """A new empty database on the test cluster, so each server starts from nothing."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(base)
    name = f"iodiag_{uuid.uuid4().hex[:12]}"
    admin = url.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.set(database=name).render_as_string(hide_password=False)


class Server:
    def __init__(self, data_dir: Path, env: dict[str, str], database_url: str = "") -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.database_url = database_url or f"sqlite:///{data_dir / 'iodiag.db'}"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("IODIAG_")},
            "IODIAG_DATA_DIR": str(data_dir),
            "IODIAG_DATABASE_URL": self.database_url,
            **env,
        }
        self.log = data_dir / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._tokens: dict[tuple[str, str], str] = {}

    @classmethod
    def start_new(cls, env: dict[str, str] | None = None, postgres: bool = False, workers: int = 2) -> Server:
        data_dir = Path(tempfile.mkdtemp(prefix="iodiag-api-"))
        db_url = fresh_postgres_url(POSTGRES_URL) if postgres else ""
        server = cls(data_dir, {"IODIAG_WORKERS": str(workers), **FAST_QUEUE, **(env or {})}, db_url)
        server.start()
        atexit.register(server.cleanup)
        return server

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def start(self, timeout: float = 60) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "iodiag", "serve", "--port", str(self.port), "--log-level", "warning"],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"server not ready in {timeout} s:\n{self.log.read_text()[-3000:]}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def token(self, user: str, role: str = "user") -> str:
        """A token for ``user`` with ``role``, made straight in the database (as ``iodiag token create`` does)."""
        key = (user, role)
        if key not in self._tokens:
            db = Database(self.database_url)
            migrate.upgrade(db)
            with db.write() as s:
                _, self._tokens[key] = token_repo.create(s, user, role, note="test")
            db.dispose()
        return self._tokens[key]

    def client(self, user: str | None = None, role: str = "user", token: str | None = None) -> httpx.Client:
        headers = {}
        if token is None and user is not None:
            token = self.token(user, role)
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def server_log(self) -> str:
        return self.log.read_text(errors="replace")

    def stored_logs(self) -> list[Path]:
        root = self.data_dir / "logs"
        return sorted(p for p in root.rglob("*.darshan") if ".tmp" not in p.parts)

    def temp_files(self) -> list[Path]:
        return sorted((self.data_dir / "logs" / ".tmp").glob("*"))


_SHARED: Server | None = None


def shared_server() -> Server:
    """One server for the whole session (SQLite; hook paths allowed under a temp dir)."""
    global _SHARED
    if _SHARED is None:
        allowed = Path(tempfile.mkdtemp(prefix="iodiag-allowed-"))
        _SHARED = Server.start_new(
            {
                "IODIAG_ALLOWED_LOG_DIRS": json.dumps([str(allowed)]),
                "IODIAG_MAX_UPLOAD_BYTES": str(4 << 20),
            }
        )
        _SHARED.allowed_dir = allowed  # type: ignore[attr-defined]
        atexit.register(shutil.rmtree, allowed, True)
    return _SHARED


def upload(client: httpx.Client, log: Path, name: str | None = None, **fields: str) -> httpx.Response:
    with open(log, "rb") as fh:
        return client.post(
            "/api/v1/analyses", files={"file": (name or log.name, fh, "application/octet-stream")}, data=fields
        )


def upload_bytes(client: httpx.Client, data: bytes, name: str = "x.darshan", **fields: str) -> httpx.Response:
    return client.post("/api/v1/analyses", files={"file": (name, data, "application/octet-stream")}, data=fields)


def wait_done(client: httpx.Client, analysis_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        r = client.get(f"/api/v1/analyses/{analysis_id}")
        assert r.status_code == 200, r.text
        body = r.json()
        if body["status"] in ("done", "failed"):
            return body
        time.sleep(0.1)
    raise AssertionError(f"analysis {analysis_id} not finished in {timeout} s: {body}")


def variant(log: Path, out: Path, salt: int) -> Path:
    """A copy of a real log whose bytes (so whose hash) differ: a byte appended after the last region.

    The reader ignores bytes past the regions the header maps, so the analysis is the same.
    """
    out.write_bytes(log.read_bytes() + salt.to_bytes(8, "little"))
    return out
