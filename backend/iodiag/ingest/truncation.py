"""A log cut short: where the file ends against where its header says its data does.

A log copied while the job was still writing it, or written to a full disk, ends early. Its header
still maps every region, so what lies wholly before the end can be read, and the modules past it
are known by name. Only a cut inside the header, the job record or the record names leaves nothing
to analyse.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import pairwise

from iodiag.ingest.recover import header_size, region_maps

_MAP = 16
# darshan-log-format.h's module ids, in order (the header's module maps follow them).
MODULE_NAMES = (
    "NULL",
    "POSIX",
    "MPI-IO",
    "H5F",
    "H5D",
    "PNETCDF_FILE",
    "PNETCDF_VAR",
    "BG/Q",
    "LUSTRE",
    "STDIO",
    "DXT_POSIX",
    "DXT_MPIIO",
    "MDHIM",
    "APXC",
    "APMPI",
    "HEATMAP",
    "DFS",
    "DAOS",
)

CUT_READ_ERROR = "cut short: the file ends before its data does"
"""A module's read error when the end of the file cut it (``ModuleInfo.read_error``)."""

COPY_AGAIN = (
    "Darshan writes the log when the job ends (MPI_Finalize, or exit for a program without MPI): copy it "
    "again once the job has finished, and check the log directory's file system is not full"
)


@dataclass(frozen=True)
class CutShort:
    file_bytes: int
    data_bytes: int
    """Where the last region ends, by the header."""
    cut: tuple[str, ...]
    """Modules whose region runs past the end of the file (partly or wholly missing), in file order."""
    unusable: str | None
    """What of the log's core (header, job record, record names) is cut, if any: nothing can be read then."""

    def note(self) -> str:
        missing = self.data_bytes - self.file_bytes
        if not self.cut:
            where = "no module lies past the end"
        else:
            one = len(self.cut) == 1
            where = (
                f"{', '.join(self.cut)} {'lies' if one else 'lie'} past the end and {'was' if one else 'were'} read "
                "only as far as the file goes"
            )
        return (
            f"the log is cut short: the file ends at byte {self.file_bytes:,}, {missing:,} bytes before its data "
            f"does; {where}"
        )


def cut_short(path: str) -> CutShort | None:
    """How ``path`` is cut short, or None when every region its header maps lies inside the file, when the
    maps do not describe a log whose end was cut off, or when the header cannot be read at all (the
    caller's other checks say why)."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            head = fh.read(32 + _MAP * 65 + 4 * 64)
    except OSError:
        return None
    if len(head) < 16:
        return None
    need = header_size(head[:8].split(b"\0", 1)[0].decode("ascii", "replace"))
    found = region_maps(head)
    if size < need or found is None:
        return CutShort(size, need, (), f"its header (the first {need:,} bytes)")
    maps = found[1]
    name_off, name_len = maps[0]
    present = sorted((off, length) for off, length in maps if length)
    data_end = max((off + length for off, length in present), default=size)
    if data_end <= size:
        return None
    # Darshan writes the regions back to back. A map that leaves a gap or overlaps the next one is damage
    # inside the file, not an end cut off: not this module's case (the caller refuses it as corrupted).
    if any(a + n != b for (a, n), (b, _) in pairwise(present)):
        return None
    if name_off > size:
        return CutShort(size, data_end, (), f"its job record (bytes {need:,} to {name_off:,})")
    if name_off + name_len > size:
        return CutShort(size, data_end, (), f"its record names (bytes {name_off:,} to {name_off + name_len:,})")
    cut = [
        (off, MODULE_NAMES[i - 1] if i - 1 < len(MODULE_NAMES) else f"module {i - 1}")
        for i, (off, length) in enumerate(maps)
        if i > 0 and length and off + length > size
    ]
    return CutShort(size, data_end, tuple(name for _, name in sorted(cut)), None)


__all__ = ["COPY_AGAIN", "CUT_READ_ERROR", "MODULE_NAMES", "CutShort", "cut_short"]
