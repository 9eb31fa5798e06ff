"""Uploaded logs, stored by the sha256 of their bytes under ``data_dir/logs/ab/abcdef....darshan``.

A log is written to a temporary file in the same file system, hashed while it is written, flushed
to disk and only then linked under its final name: a crash leaves a stray temporary file (removed at
the next start-up), never a half-written log under a real name.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Self

from iodiag.core.host import is_gone, process_tag

_STALE_TMP_S = 3600.0
_TAG_SEP = "~"
_COPY_CHUNK = 1 << 20


class BlobTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"larger than the limit of {limit} bytes")
        self.limit = limit


class BlobWriter:
    """A temporary file that hashes and counts what is written and refuses to grow past ``limit``."""

    def __init__(self, tmp_dir: Path, limit: int) -> None:
        # Named by its process, so a restarted server can tell the files of a writer that died.
        fd, name = tempfile.mkstemp(dir=tmp_dir, prefix=process_tag(_TAG_SEP) + _TAG_SEP, suffix=".part")
        self.path = Path(name)
        self._fh: BinaryIO = os.fdopen(fd, "wb")
        self._hash = hashlib.sha256()
        self.size = 0
        self.limit = limit
        self._closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.size += len(data)
        if self.size > self.limit:
            raise BlobTooLarge(self.limit)
        self._hash.update(data)
        self._fh.write(data)

    def copy_from(self, src: BinaryIO) -> None:
        while chunk := src.read(_COPY_CHUNK):
            self.write(chunk)

    def finish(self) -> str:
        """Flush to disk; returns the sha256 hex digest."""
        if not self._closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._closed = True
        return self._hash.hexdigest()

    def discard(self) -> None:
        if not self._closed:
            self._fh.close()
            self._closed = True
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # Whatever was not committed into the store is thrown away.
        self.discard()


class BlobStore:
    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / "logs"
        self.tmp = self.root / ".tmp"
        self.tmp.mkdir(parents=True, exist_ok=True)

    def writer(self, limit: int) -> BlobWriter:
        return BlobWriter(self.tmp, limit)

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / f"{sha256}.darshan"

    def exists(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    def commit(self, writer: BlobWriter, sha256: str) -> bool:
        """Give a finished temporary file its final name (a hard link: the temporary name stays until the
        writer is closed); False if that content was already stored.

        The content is on disk before the name appears (``finish`` synced it), so no crash can leave a
        partial log under a real name. The new directory entry is not synced at once: it reaches the
        disk with the file system's next journal commit, like the database's own latest commits
        (SQLite's synchronous=NORMAL), and a power cut in between loses the submission whole.
        Syncing the directory too would cost a second journal commit per upload on the request path.
        """
        final = self.path(sha256)
        if final.is_file():
            return False
        final.parent.mkdir(exist_ok=True)
        os.chmod(writer.path, 0o440)
        try:
            os.link(writer.path, final)
        except FileExistsError:
            return False
        return True

    def delete(self, sha256: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(sha256).unlink()

    def sweep_tmp(self, older_than_s: float = _STALE_TMP_S) -> int:
        """Remove temporary files left by a crash; returns how many.

        A file whose writer is certainly gone (a process of this host that no longer runs, or of an
        earlier boot) goes at once; any other (another host's, or unnamed) once it is ``older_than_s``
        old, since a live writer on a shared data directory may still be filling it."""
        now, n = time.time(), 0
        for p in self.tmp.iterdir():
            with contextlib.suppress(FileNotFoundError):
                parts = p.name.split(_TAG_SEP)
                dead = len(parts) >= 4 and is_gone(*parts[:3])
                if dead or now - p.stat().st_mtime > older_than_s:
                    p.unlink()
                    n += 1
        return n
