"""Accepting a log: check it, store it once (content-addressed), and queue its analysis.

Rejected input leaves nothing behind: the log is checked in its temporary file, and only a log
that passes is linked into the store, just before the database transaction that adds its row.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from iodiag.core.settings import Settings
from iodiag.ingest.inflation import DEFAULT_LIMIT, InflationLimit
from iodiag.services.logcheck import BadLog, check_upload
from iodiag.store import BlobStore, Database
from iodiag.store import analyses as repo
from iodiag.store.blobs import BlobWriter


class Rejected(Exception):
    """Input refused: an HTTP status and a one-line reason."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass(frozen=True)
class Submitted:
    analysis_id: str
    created: bool  # False: this owner had already submitted the same log
    status: str


@dataclass(frozen=True)
class Meta:
    """What the request says about a log: ``NewAnalysis`` without what the bytes tell (hash, size)."""

    owner: str
    submitted_by: str
    filename: str
    source: str
    source_path: str | None = None
    job_id: str | None = None
    nodes: int | None = None
    cb_nodes: int | None = None


def accept(
    db: Database, blobs: BlobStore, writer: BlobWriter, meta: Meta, limit: InflationLimit = DEFAULT_LIMIT
) -> Submitted:
    sha = writer.finish()
    try:
        check_upload(str(writer.path), limit)
    except BadLog as exc:
        raise Rejected(422, str(exc)) from None
    # Stored before the transaction, to keep the database's write lock short.
    blobs.commit(writer, sha)
    with db.write_connection() as conn:
        repo.lock_content(conn, sha)
        existing = repo.find_content(conn, meta.owner, sha)
        if existing is not None:
            if existing.status == "failed":
                repo.requeue_failed(conn, existing.id)  # same log again after a failure: try again
                return Submitted(existing.id, False, "queued")
            return Submitted(existing.id, False, existing.status)
        # Deleted in between with the last analysis that used it (the lock orders us after that): again.
        blobs.commit(writer, sha)
        new = repo.NewAnalysis(sha256=sha, size_bytes=writer.size, **vars(meta))
        analysis_id = repo.insert_queued(conn, new)
        return Submitted(analysis_id, True, "queued")


def inflation_limit(settings: Settings) -> InflationLimit:
    return InflationLimit(ratio=settings.max_inflation_ratio, floor_bytes=int(settings.min_inflation_mib * 2**20))


class _RolledBack(Exception):
    pass


def warm_up(db: Database) -> None:
    """Run the submission transaction once and roll it back.

    The first use of each statement compiles it; after a restart under load, twenty clients
    reconnect at once and would all pay for that on their first submission.
    """
    db.fill_pool()
    sha = "0" * 64
    with contextlib.suppress(_RolledBack), db.write_connection() as conn:
        repo.lock_content(conn, sha)
        repo.find_content(conn, "", sha)
        repo.insert_queued(conn, repo.NewAnalysis("", "", sha, 0, "", "upload"))
        raise _RolledBack


def open_confined(raw: str, allowed: list[Path]) -> BinaryIO:
    """Open a server-side log only if it lies under one of ``allowed`` once symlinks are resolved.

    Confinement is checked before existence, so the answer says nothing about files elsewhere; the
    opened descriptor is checked again, against a directory swapped for a symlink in between.
    """
    if not raw or "\0" in raw:
        raise Rejected(422, "path is empty or contains a NUL byte")
    path = Path(raw)
    if not path.is_absolute():
        raise Rejected(422, "path must be absolute")
    if ".." in path.parts:
        raise Rejected(403, "path must not contain '..'")
    roots = [r.resolve() for r in allowed]
    if not roots:
        raise Rejected(403, "this server reads no server-side paths (no allowed log directories configured)")
    outside = Rejected(403, "path is outside the directories this server reads logs from")
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        raise outside from None
    if not any(real.is_relative_to(r) for r in roots):
        raise outside
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise Rejected(422, "no such file") from None
    except OSError as exc:
        raise Rejected(422, f"cannot open file ({exc.strerror})") from None
    try:
        opened = Path(os.readlink(f"/proc/self/fd/{fd}"))
        if not any(opened.is_relative_to(r) for r in roots):
            raise outside
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Rejected(422, "not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")
