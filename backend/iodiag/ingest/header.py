"""Cheap checks on a file before the Darshan library touches it.

They turn the common mistakes (wrong file, empty file, directory, old format)
into precise messages; the library's own messages are terse and go to stderr.
"""

from __future__ import annotations

import os
import stat
import struct

from iodiag.ingest.errors import LogReadError

DARSHAN_MAGIC = 6567223
NEWEST_FORMAT = (3, 41)
"""The newest log format the bundled libdarshan-util (darshan 3.5) reads."""
_HEADER_MIN = 24  # version string (8) + magic (8) + comp type and partial flag (8)


def check_log_file(path: str) -> int:
    """Return the file size, or raise LogReadError when the file cannot be a Darshan 3.x log."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise LogReadError(path, "no such file") from None
    except PermissionError:
        raise LogReadError(path, "permission denied") from None
    except OSError as exc:
        raise LogReadError(path, f"cannot access file ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise LogReadError(path, "is a directory, not a Darshan log")
    if not stat.S_ISREG(st.st_mode):
        raise LogReadError(path, "is not a regular file")
    if st.st_size == 0:
        raise LogReadError(
            path,
            "the file is empty (0 bytes): was the job still running? Darshan writes the log when the job ends "
            "(at MPI_Finalize, or at exit without MPI); use it once the job has finished",
        )
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEADER_MIN)
    except PermissionError:
        raise LogReadError(path, "permission denied") from None
    except OSError as exc:
        raise LogReadError(path, f"cannot read file ({exc.strerror})") from None
    if len(head) < _HEADER_MIN:
        raise LogReadError(
            path,
            f"the file is only {len(head)} bytes, too short to be a Darshan log: it was cut short while being "
            "written or copied; copy it again once the job has finished",
        )
    magic_le, magic_be = struct.unpack("<q", head[8:16])[0], struct.unpack(">q", head[8:16])[0]
    if DARSHAN_MAGIC not in (magic_le, magic_be):
        if head[:2] == b"\x1f\x8b":
            raise LogReadError(
                path,
                "is a gzip file: gunzip a Darshan 3 log you compressed yourself and send the .darshan file; "
                "Darshan 1.x/2.x logs (gzip files themselves) are not supported",
            )
        if all(32 <= c < 127 or c in b"\t\r\n" for c in head):
            raise LogReadError(
                path,
                "not a Darshan log but a text file (darshan-parser output or a job's output?): send the binary "
                ".darshan file from the Darshan log directory",
            )
        raise LogReadError(
            path,
            "not a Darshan log (bad magic number: it does not begin with Darshan's header): send the .darshan "
            "file the job wrote in the Darshan log directory",
        )
    version = head[:8].split(b"\0", 1)[0].decode("ascii", "replace")
    if not version.startswith("3."):
        raise LogReadError(path, f"unsupported Darshan log format version {version!r} (need 3.x)")
    try:
        parsed = tuple(int(x) for x in version.split("."))
    except ValueError:
        raise LogReadError(path, f"corrupted header: log format version {version!r} is not a number") from None
    if parsed > NEWEST_FORMAT:
        newest = ".".join(map(str, NEWEST_FORMAT))
        raise LogReadError(path, f"log format {version} is newer than this reader supports ({newest}); update iodiag")
    return st.st_size
