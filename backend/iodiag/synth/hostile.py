"""Hostile logs made from real ones, for the tests and benches that prove the reader's limits hold.

A decompression bomb keeps a real log's header, job record and names, and replaces one module's
region by a stream that inflates to a chosen number of zero bytes: a log both libdarshan-util and
PyDarshan accept, small on disk and huge in memory.
"""

from __future__ import annotations

import bz2
import struct
import zlib
from pathlib import Path
from typing import Literal

from iodiag.ingest.recover import header_layout, header_size

_MAGIC = 6567223
_MAP = 16
POSIX_MODULE_ID = 1
_COMP = {"zlib": 0, "bzip2": 1}


def _inflate_all(region: bytes) -> bytes:
    """Every concatenated zlib stream of a region, inflated."""
    out = bytearray()
    while region:
        d = zlib.decompressobj()
        out += d.decompress(region)
        region = d.unused_data
    return bytes(out)


def _zeros(n: int, compression: Literal["zlib", "bzip2"]) -> bytes:
    c: zlib._Compress | bz2.BZ2Compressor = zlib.compressobj(9) if compression == "zlib" else bz2.BZ2Compressor(9)
    block = b"\0" * (1 << 20)
    parts = [c.compress(block) for _ in range(n >> 20)]
    parts.append(c.compress(b"\0" * (n & ((1 << 20) - 1))))
    parts.append(c.flush())
    return b"".join(parts)


def decompression_bomb(
    src: Path,
    dst: Path,
    inflated_bytes: int,
    *,
    module_id: int = POSIX_MODULE_ID,
    compression: Literal["zlib", "bzip2"] = "zlib",
) -> int:
    """Write ``src`` to ``dst`` with module ``module_id``'s region inflating to ``inflated_bytes`` zeros.

    ``src`` must be a zlib log (the usual kind); with ``compression="bzip2"`` every region is recompressed
    with bzip2 and the header says so. Returns the size of ``dst``."""
    data = src.read_bytes()
    version = data[:8].split(b"\0", 1)[0].decode("ascii")
    fixed, modules = header_layout(version)
    endian = "<" if struct.unpack_from("<q", data, 8)[0] == _MAGIC else ">"
    if struct.unpack_from(endian + "i", data, 16)[0] != _COMP["zlib"]:
        raise ValueError(f"{src}: not a zlib-compressed log")
    head_end = header_size(version)  # the maps, then one format version per module
    maps = [struct.unpack_from(endian + "QQ", data, fixed + _MAP * i) for i in range(1 + modules)]
    # The job record sits between the header and the first mapped region; it is compressed too.
    first = min(off for off, length in maps if length)
    job = data[head_end:first]
    if compression == "bzip2":
        job = bz2.compress(_inflate_all(job), 9)
    pieces = [job]
    at = head_end + len(job)
    new_maps = []
    for i, (off, length) in enumerate(maps):
        if not length:
            new_maps.append((0, 0))
            continue
        region = data[off : off + length]
        if i == 1 + module_id:
            region = _zeros(inflated_bytes, compression)
        elif compression == "bzip2":
            region = bz2.compress(_inflate_all(region), 9)
        new_maps.append((at, len(region)))
        pieces.append(region)
        at += len(region)
    if new_maps[1 + module_id] == (0, 0):
        raise ValueError(f"{src}: has no region for module {module_id}")
    head = bytearray(data[:head_end])
    struct.pack_into(endian + "i", head, 16, _COMP[compression])
    for i, (off, length) in enumerate(new_maps):
        struct.pack_into(endian + "QQ", head, fixed + _MAP * i, off, length)
    out = bytes(head) + b"".join(pieces)
    dst.write_bytes(out)
    return len(out)


__all__ = ["POSIX_MODULE_ID", "decompression_bomb"]
