"""Logs libdarshan-util refuses but that can be read safely, made readable in a temporary copy.

One damage is recovered today: zero bytes between the header and the job region (left by tools that copy
logs in aligned blocks, or by a runtime that reserved space it never filled). libdarshan-util reads the job
record from the byte after the header and gives up on the zeros, though every region map in the header
still points at the right place. The copy leaves the zeros out and moves every region map up by as many
bytes: the log as it was before the padding. Anything else stays a one-line error.
"""

from __future__ import annotations

import os
import struct
import tempfile
from dataclasses import dataclass

# Header: version string (8), magic (8), compression type and partial flags (8; 16 from format 3.41, whose
# flags are 64-bit), the name map (offset, length), then one map and one version per module: 16 modules
# up to format 3.21, 64 from 3.41.
_MAP = 16


def header_layout(version: str) -> tuple[int, int]:
    """(bytes before the name map, modules) for a log format version."""
    try:
        parsed = tuple(int(x) for x in version.split("."))
    except ValueError:
        return 24, 16
    return (32, 64) if parsed >= (3, 41) else (24, 16)


@dataclass(frozen=True)
class Recovered:
    path: str
    """The readable temporary copy (the caller removes it)."""
    note: str


def region_maps(head: bytes) -> tuple[str, list[tuple[int, int]]] | None:
    """The byte order (``<`` or ``>``) and every (offset, length) map of a header, the record names first and
    then one per module id; None when ``head`` is shorter than the maps."""
    version = head[:8].split(b"\0", 1)[0].decode("ascii", "replace")
    fixed, modules = header_layout(version)
    if len(head) < fixed + _MAP * (1 + modules):
        return None
    endian = "<" if struct.unpack_from("<q", head, 8)[0] == 6567223 else ">"
    return endian, [struct.unpack_from(endian + "QQ", head, fixed + _MAP * i) for i in range(1 + modules)]


def header_size(version: str) -> int:
    fixed, modules = header_layout(version)
    return fixed + _MAP + modules * (_MAP + 4)


def _starts_stream(data: bytes) -> bool:
    """A zlib stream (0x78, then a valid check byte) or a bzip2 one ("BZh")."""
    if len(data) >= 2 and data[0] == 0x78 and ((data[0] << 8) | data[1]) % 31 == 0:
        return True
    return data[:3] == b"BZh"


def zero_padded_job_region(path: str) -> Recovered | None:
    """A copy of ``path`` with the zeros before its job record moved after it, or None when the log has no
    such padding (or anything else is wrong with it)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    version = data[:8].split(b"\0", 1)[0].decode("ascii", "replace")
    fixed, _ = header_layout(version)
    start = header_size(version)
    if len(data) < start:
        return None
    little = struct.unpack("<q", data[8:16])[0] == 6567223
    name_off = struct.unpack("<Q" if little else ">Q", data[fixed : fixed + 8])[0]
    if not start < name_off <= len(data):
        return None
    region = data[start:name_off]
    zeros = len(region) - len(region.lstrip(b"\0"))
    if zeros == 0 or zeros == len(region) or not _starts_stream(region[zeros:]):
        return None
    # The library reads the job record as everything from the header to the name region and will not
    # inflate a region that holds more than its stream: the zeros go, and every later region moves up.
    fmt = "<Q" if little else ">Q"
    head = bytearray(data[:start])
    _, modules = header_layout(version)
    for i in range(1 + modules):
        at = fixed + _MAP * i
        off, length = struct.unpack(fmt, head[at : at + 8])[0], struct.unpack(fmt, head[at + 8 : at + 16])[0]
        if length and off >= name_off:
            head[at : at + 8] = struct.pack(fmt, off - zeros)
    fd, out = tempfile.mkstemp(suffix=".darshan", prefix="iodiag-recovered-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(bytes(head) + region[zeros:] + data[name_off:])
    return Recovered(
        path=out,
        note=f"the log has {zeros:,} zero bytes between its header and its job record, which darshan-util "
        "refuses; they were skipped and the rest of the log read as written",
    )
    return None


__all__ = ["Recovered", "header_layout", "region_maps", "zero_padded_job_region"]
