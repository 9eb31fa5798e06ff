"""Engines and sessions for SQLite (the default) and PostgreSQL.

SQLite runs in WAL mode so readers never wait for the writer. pysqlite's own transaction handling
starts transactions late and as readers, so two writers can deadlock on the upgrade to a write
lock; we take over BEGIN and open write sessions with ``BEGIN IMMEDIATE``, which queues writers on
the busy timeout instead.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

_SQLITE_BUSY_MS = 30_000
_WRITE_OPTION = "iodiag_write"


_CHECKPOINT_EVERY_S = 1.0


class Database:
    def __init__(self, url: str, *, background_checkpoints: bool = False) -> None:
        """``background_checkpoints`` (SQLite; for the long-running service): copy the write-ahead log
        into the database from a thread of its own, once a second, instead of inside whichever commit
        crosses SQLite's threshold. That copy ends in an fsync, and the commit that pays for it is as
        likely to be a submission waiting to answer as the write of a finished report."""
        self.url = url
        parsed = make_url(url)
        self.dialect = parsed.get_backend_name()
        self.pool_size = 20 if self.dialect == "sqlite" else 10
        if self.dialect == "sqlite":
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            self.engine = create_engine(
                url,
                connect_args={"timeout": _SQLITE_BUSY_MS / 1000, "check_same_thread": False},
                pool_size=self.pool_size,
            )
            _sqlite_events(self.engine, autocheckpoint=not background_checkpoints)
        elif self.dialect == "postgresql":
            self.engine = create_engine(url, pool_size=self.pool_size, max_overflow=20, pool_pre_ping=True)
        else:
            raise ValueError(f"unsupported database {self.dialect!r}: use sqlite or postgresql+psycopg")
        # SQLite has one writer at a time; writers that find it busy sleep and retry with growing pauses,
        # so under load a write can wait far longer than the writes ahead of it take. Queueing this
        # process's writers on a lock instead keeps the wait to the work ahead (the server process is
        # the only regular writer: workers send their results to it).
        self._write_lock: threading.Lock | contextlib.nullcontext[None] = (
            threading.Lock() if self.dialect == "sqlite" else contextlib.nullcontext()
        )
        self._write_engine = self.engine.execution_options(**{_WRITE_OPTION: True})
        self._read = sessionmaker(bind=self.engine, expire_on_commit=False)
        self._write = sessionmaker(bind=self._write_engine, expire_on_commit=False)
        self._stop = threading.Event()
        self._checkpointer: threading.Thread | None = None
        if background_checkpoints and self.dialect == "sqlite":
            self._checkpointer = threading.Thread(target=self._checkpoint_loop, name="iodiag-checkpoint", daemon=True)
            self._checkpointer.start()

    def _checkpoint_loop(self) -> None:
        while not self._stop.wait(_CHECKPOINT_EVERY_S):
            # PASSIVE: copies what no reader still needs and never blocks writers.
            with contextlib.suppress(OperationalError), self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @contextmanager
    def read(self) -> Iterator[Session]:
        with self._read() as session:
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A transaction that commits on success and rolls back on any exception."""
        with self._write_lock, self._write() as session, session.begin():
            yield session

    @contextmanager
    def write_connection(self) -> Iterator[Connection]:
        """A write transaction on a bare connection, for Core statements on hot paths.

        A session's unit of work costs about 0.7 ms of CPU per transaction more than Core statements on
        a connection; on the submission path that is a fifth of the request.
        """
        with self._write_lock, self._write_engine.begin() as conn:
            yield conn

    def fill_pool(self) -> None:
        """Open the pool's connections now rather than on the first requests (a PostgreSQL connection
        costs the server a process start: twenty of them at once after a restart is a visible stall)."""
        with contextlib.ExitStack() as stack:
            for _ in range(self.pool_size):
                stack.enter_context(self.engine.connect())

    def ping(self) -> bool:
        try:
            with self.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            return True
        except OperationalError:
            return False

    def dispose(self) -> None:
        self._stop.set()
        if self._checkpointer is not None:
            self._checkpointer.join(10)
        self.engine.dispose()

    def redacted_url(self) -> str:
        return make_url(self.url).render_as_string(hide_password=True)


def _sqlite_events(engine: Engine, *, autocheckpoint: bool) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (see module docstring)
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {_SQLITE_BUSY_MS}")
        _retry_locked(lambda: cur.execute("PRAGMA journal_mode = WAL"))
        cur.execute("PRAGMA synchronous = NORMAL")
        if not autocheckpoint:
            cur.execute("PRAGMA wal_autocheckpoint = 0")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE_OPTION) else "BEGIN")


def _retry_locked(fn: Any, attempts: int = 50) -> None:
    """Switching to WAL needs a moment of exclusive access, which another process may hold."""
    import sqlite3

    for i in range(attempts):
        try:
            fn()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or i == attempts - 1:
                raise
            time.sleep(0.1)
