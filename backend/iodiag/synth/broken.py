"""Near-valid broken logs, for robustness tests: each differs from a valid log in one known way.

They start from a real log written by ``write_log`` and break one thing the reader must survive.
The header offsets below are those of the Darshan 3.x header: version string (8 bytes), magic
(8), compression type and partial flags (16), the name region map (offset, length), then one map
per module id, then the module versions.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from iodiag.ingest.table import Table
from iodiag.synth._lib import MODULE_VERSIONS, library
from iodiag.synth.writer import JobInfo, put_job, put_names, write_log

MOD_MAP_AT = 48
MAP_SIZE = 16


def _region(data: bytes, mod_id: int) -> tuple[int, int]:
    return struct.unpack_from("<QQ", data, MOD_MAP_AT + MAP_SIZE * mod_id)


def _posix_id() -> int:
    _, _, be = library()
    return int(be.mod_name_to_idx("POSIX"))


def bad_magic(valid: bytes) -> bytes:
    return valid[:8] + b"\xde\xad\xbe\xef\x00\x00\x00\x00" + valid[16:]


def unknown_version(valid: bytes) -> bytes:
    return b"3.99\0\0\0\0" + valid[8:]


def region_past_end(valid: bytes) -> bytes:
    """The POSIX region's map says it runs 1 MiB past the end of the file."""
    mod = _posix_id()
    off, length = _region(valid, mod)
    out = bytearray(valid)
    struct.pack_into("<QQ", out, MOD_MAP_AT + MAP_SIZE * mod, off, length + (1 << 20))
    return bytes(out)


def region_offset_past_end(valid: bytes) -> bytes:
    """The POSIX region starts beyond the end of the file."""
    mod = _posix_id()
    _, length = _region(valid, mod)
    out = bytearray(valid)
    struct.pack_into("<QQ", out, MOD_MAP_AT + MAP_SIZE * mod, len(valid) + 4096, length)
    return bytes(out)


def corrupt_stream(valid: bytes) -> bytes:
    """Garbage in the middle of the POSIX region's compressed stream."""
    off, length = _region(valid, _posix_id())
    out = bytearray(valid)
    for i in range(off + length // 3, off + max(length // 3 + 1, 2 * length // 3)):
        out[i] ^= 0x5A
    return bytes(out)


def truncated_region(valid: bytes) -> bytes:
    """The file ends half-way through the POSIX region."""
    off, length = _region(valid, _posix_id())
    return valid[: off + length // 2]


BYTE_BREAKAGES: dict[str, Callable[[bytes], bytes]] = {
    "bad-magic": bad_magic,
    "unknown-version": unknown_version,
    "region-past-end": region_past_end,
    "region-offset-past-end": region_offset_past_end,
    "corrupt-stream": corrupt_stream,
    "truncated-region": truncated_region,
}


def write_broken(
    kind: str,
    path: str | os.PathLike[str],
    job: JobInfo,
    names: Mapping[int, str],
    tables: Mapping[str, pd.DataFrame | Table],
) -> Path:
    """Write a valid log for ``tables`` (a profile's, or frames) and break it as ``kind`` says (see ``KINDS``)."""
    out = Path(path)
    if kind == "missing-names":
        # Records whose ids have no name record: the reader must still read them.
        used = {int(i) for t in tables.values() for i in np.unique(np.asarray(t["id"]))}
        kept = {k: v for k, v in names.items() if k not in used or k == min(used)}
        write_log(out, job, kept, tables)
        return out
    if kind == "lying-dxt-count":
        _write_lying_dxt(out, job, names)
        return out
    if kind not in BYTE_BREAKAGES:
        raise ValueError(f"unknown breakage {kind!r}; known: {sorted(KINDS)}")
    write_log(out, job, names, tables)
    out.write_bytes(BYTE_BREAKAGES[kind](out.read_bytes()))
    return out


def _write_lying_dxt(out: Path, job: JobInfo, names: Mapping[int, str]) -> None:
    """A DXT_POSIX record whose header claims a million writes but carries ten segments."""
    ffi, lib, be = library()
    if out.exists():
        out.unlink()
    fd = lib.darshan_log_create(str(out).encode(), 0, 0)
    keep: list[object] = []
    try:
        put_job(ffi, lib, fd, job)
        put_names(ffi, lib, fd, names, keep)
        head = ffi.sizeof("struct dxt_file_record")
        seg = ffi.sizeof("struct segment_info")
        buf = ffi.new("char[]", head + 10 * seg)
        rec = ffi.cast("struct dxt_file_record *", buf)
        rec.base_rec.id = next(iter(names), 1)
        rec.base_rec.rank = 0
        rec.write_count = 1_000_000
        rec.read_count = 0
        lib.darshan_log_put_mod(fd, be.mod_name_to_idx("DXT_POSIX"), buf, head + 10 * seg, MODULE_VERSIONS["DXT_POSIX"])
    finally:
        lib.darshan_log_close(fd)


KINDS = (*BYTE_BREAKAGES, "missing-names", "lying-dxt-count")
