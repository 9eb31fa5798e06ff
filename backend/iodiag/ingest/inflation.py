"""How much a log inflates to, measured before the Darshan library allocates any of it.

libdarshan-util inflates each module region whole into memory, and PyDarshan then builds a record
per fixed-size slot of it. A 1 MB file whose POSIX region is a zlib stream of 1 GiB of zeros is a
valid log to both, and costs minutes and gigabytes. Real logs inflate 5–20× (counters of real
files), synthetic ones with mostly-zero counters up to ~120×; zlib itself tops out near 1,032×,
bzip2 goes far beyond. So a log may inflate to ``ratio`` × its size, and any log to ``floor_bytes``:
the scan streams each region through a decompressor that keeps nothing, and stops at the first byte
over the budget, so refusing a bomb costs at most the budget's worth of inflating and no memory.
"""

from __future__ import annotations

import bz2
import os
import struct
import zlib
from dataclasses import dataclass

from iodiag.ingest.errors import LogReadError
from iodiag.ingest.recover import region_maps

_MAGIC = 6567223
_MAP = 16
_CHUNK = 1 << 20
_ZLIB_MAX_RATIO = 1032  # deflate's ceiling: a zlib log smaller than floor/1032 cannot exceed the floor
_ZLIB, _BZIP2, _NONE = 0, 1, 2


@dataclass(frozen=True)
class InflationLimit:
    ratio: float = 150.0
    """Inflated bytes allowed per byte of the file."""
    floor_bytes: int = 32 << 20
    """Inflated bytes allowed whatever the file's size (small logs compress very well)."""

    def budget(self, file_size: int) -> int:
        return max(self.floor_bytes, int(self.ratio * file_size))


DEFAULT_LIMIT = InflationLimit()


def limit_from_env() -> InflationLimit:
    """The limit the CLI and batch use: ``IODIAG_MAX_INFLATION_RATIO`` and ``IODIAG_MIN_INFLATION_MIB``."""

    def number(name: str, default: float) -> float:
        raw = os.environ.get(name, "").strip()
        try:
            value = float(raw) if raw else default
        except ValueError:
            return default
        return value if value > 0 else default

    return InflationLimit(
        ratio=number("IODIAG_MAX_INFLATION_RATIO", DEFAULT_LIMIT.ratio),
        floor_bytes=int(number("IODIAG_MIN_INFLATION_MIB", DEFAULT_LIMIT.floor_bytes / 2**20) * 2**20),
    )


def _regions(data: bytes) -> tuple[int, list[tuple[int, int]]]:
    """(compression type, [(offset, length)] of the name region and every module region)."""
    endian = "<" if struct.unpack_from("<q", data, 8)[0] == _MAGIC else ">"
    comp = struct.unpack_from(endian + "i", data, 16)[0]
    found = region_maps(data)
    if found is None:
        return comp, []
    return comp, [(off, min(length, len(data) - off)) for off, length in found[1] if length and off < len(data)]


def _inflated(region: bytes, comp: int, left: int) -> int:
    """Bytes ``region`` inflates to (every concatenated stream), or ``left + 1`` once it passes ``left``.

    A stream that is not valid stops the count there: the library will refuse it, which is not this
    module's business."""
    if comp == _NONE:
        return len(region)
    total = 0
    rest = region
    while rest and total <= left:
        d: zlib._Decompress | bz2.BZ2Decompressor = zlib.decompressobj() if comp == _ZLIB else bz2.BZ2Decompressor()
        try:
            if isinstance(d, bz2.BZ2Decompressor):
                chunk = d.decompress(rest, _CHUNK)
                total += len(chunk)
                while not d.eof and not d.needs_input and total <= left:
                    chunk = d.decompress(b"", _CHUNK)
                    if not chunk:
                        break
                    total += len(chunk)
                rest = d.unused_data if d.eof else b""
            else:
                pending = rest
                while total <= left:
                    chunk = d.decompress(pending, _CHUNK)
                    total += len(chunk)
                    pending = d.unconsumed_tail
                    if d.eof or (not pending and not chunk):
                        break
                rest = d.unused_data if d.eof else b""
        except (zlib.error, OSError, EOFError, ValueError):
            break
    return total


def check_inflation(path: str, limit: InflationLimit = DEFAULT_LIMIT) -> int:
    """Bytes the log's regions inflate to; raises ``LogReadError`` (one line) past ``limit``'s budget."""
    size = os.path.getsize(path)
    budget = limit.budget(size)
    with open(path, "rb") as fh:
        head = fh.read(32 + _MAP * 65)
    if len(head) < 24:
        return 0
    comp, _ = _regions(head + b"\0" * (32 + _MAP * 65 - len(head)))
    if comp == _ZLIB and size * _ZLIB_MAX_RATIO <= budget:
        return 0  # cannot exceed it: not worth a pass over the file
    with open(path, "rb") as fh:
        data = fh.read()
    comp, maps = _regions(data)
    total = 0
    for off, length in maps:
        total += _inflated(data[off : off + length], comp, budget - total)
        if total > budget:
            raise LogReadError(
                path,
                f"refused: its compressed regions inflate to over {budget / 2**20:,.0f} MiB, the limit for a "
                f"{size / 2**20:,.2f} MiB file (the larger of {limit.floor_bytes / 2**20:g} MiB and {limit.ratio:g}x "
                "its size; real logs inflate 5-20x): a corrupted or crafted log. If it is genuine, raise "
                "IODIAG_MAX_INFLATION_RATIO",
            )
    return total


__all__ = ["DEFAULT_LIMIT", "InflationLimit", "check_inflation", "limit_from_env"]
