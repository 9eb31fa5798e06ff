"""Bring the database schema to the newest migration; say whether it is there.

Several servers may start at once against one PostgreSQL database: the upgrade holds an advisory
lock so only one of them migrates. On SQLite the write transaction already serialises them.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text

from iodiag.store.db import Database

logging.getLogger("alembic").setLevel(logging.WARNING)  # it logs its context on every readiness probe
_MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_PG_LOCK_KEY = 0x10D1A6  # any constant shared by all iodiag servers


def _config(conn: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    cfg.set_main_option("path_separator", "os")
    if conn is not None:
        cfg.attributes["connection"] = conn
    return cfg


def head() -> str:
    heads = ScriptDirectory.from_config(_config()).get_heads()
    assert len(heads) == 1, f"migrations have {len(heads)} heads"
    return heads[0]


def upgrade(db: Database) -> None:
    with db.engine.begin() as conn:
        if db.dialect == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
        command.upgrade(_config(conn), "head")


def current(db: Database) -> str | None:
    with db.engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def at_head(db: Database) -> bool:
    try:
        return current(db) == head()
    except Exception:
        return False


def _revision(url: str, message: str) -> None:
    """Autogenerate a revision against a database migrated to the current head."""
    db = Database(url)
    upgrade(db)
    with db.engine.begin() as conn:
        command.revision(_config(conn), message=message, autogenerate=True)


if __name__ == "__main__":  # developer tool: python -m iodiag.store.migrate revision "message" [URL]
    if len(sys.argv) < 3 or sys.argv[1] != "revision":
        sys.exit("usage: python -m iodiag.store.migrate revision MESSAGE [DATABASE_URL]")
    _revision(sys.argv[3] if len(sys.argv) > 3 else "sqlite:////tmp/iodiag-revision.db", sys.argv[2])
