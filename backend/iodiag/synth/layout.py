"""Sizes, record ids, mounts and Lustre layouts for synthesized logs."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import numpy as np

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tib": 1 << 40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(value: object) -> int:
    """Bytes from an int or a string like ``8KiB``, ``1.5MiB``, ``4k`` (all units binary)."""
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"size must not be negative: {value}")
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str):
        m = _SIZE.match(value)
        if m and m.group(2).lower() in _UNITS:
            n = float(m.group(1)) * _UNITS[m.group(2).lower()]
            if n.is_integer():
                return int(n)
            raise ValueError(f"size is not a whole number of bytes: {value!r}")
    raise ValueError(f"not a size: {value!r} (use bytes or e.g. 8KiB, 1MiB)")


def record_id(name: str) -> int:
    """Darshan-style 64-bit record id of a name (blake2b, masked to 63 bits; stable across runs)."""
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & ((1 << 63) - 1)


DEFAULT_BLOCK = {"lustre": 1 << 20, "gpfs": 8 << 20, "nfs": 1 << 20}
"""POSIX_FILE_ALIGNMENT by file-system type: Darshan uses 1 MiB for Lustre, statfs f_bsize otherwise."""


@dataclass(frozen=True)
class MountInfo:
    path: str
    fs: str
    block_size: int
    ost_count: int
    slow_osts: dict[int, float] = field(default_factory=dict)

    def contains(self, path: str) -> bool:
        if self.path == "/":
            return path.startswith("/")
        return path == self.path or path.startswith(self.path.rstrip("/") + "/")


def find_mount(mounts: list[MountInfo], path: str) -> MountInfo | None:
    best: MountInfo | None = None
    for m in mounts:
        if m.contains(path) and (best is None or len(m.path) > len(best.path)):
            best = m
    return best


@dataclass
class StripeLayout:
    """A synthesized file's stripes as the generator lays its bytes out (the report's view is ``LustreLayout``)."""

    stripe_size: int
    stripe_count: int
    osts: tuple[int, ...]
    pool: str = ""

    def ost_factor(self, mount: MountInfo, offset: np.ndarray, length: np.ndarray) -> np.ndarray:
        """Per request: the largest slowdown among the OSTs the request's bytes land on."""
        out = np.ones(len(offset), dtype=np.float64)
        if not mount.slow_osts or not set(self.osts) & set(mount.slow_osts):
            return out
        factors = np.array([mount.slow_osts.get(o, 1.0) for o in self.osts], dtype=np.float64)
        sc, ss = len(self.osts), self.stripe_size
        first = offset // ss
        last = (offset + np.maximum(length, 1) - 1) // ss
        n = np.minimum(last - first + 1, sc)
        for t in range(int(n.max()) if len(n) else 0):
            f = factors[(first + t) % sc]
            out = np.where(t < n, np.maximum(out, f), out)
        return out
