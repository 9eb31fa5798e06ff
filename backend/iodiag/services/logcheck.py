"""A cheap structural check of an uploaded log, so bad input is refused at submission, not in a worker.

``iodiag.ingest.header`` catches the wrong file (magic, version, size); here we also read the
header's region map: a file cut short inside its header, job record or record names is refused (a log
cut later is accepted and analysed as far as it goes, with a caveat), and so is one whose regions
inflate past what a log of its size holds (``iodiag.ingest.inflation``), so a decompression bomb never reaches a worker.
"""

from __future__ import annotations

from iodiag.ingest import LogReadError
from iodiag.ingest.header import check_log_file
from iodiag.ingest.inflation import DEFAULT_LIMIT, InflationLimit, check_inflation
from iodiag.ingest.recover import header_layout, region_maps
from iodiag.ingest.truncation import COPY_AGAIN, cut_short


class BadLog(ValueError):
    """The file is not a readable Darshan log; the message is one line without the path."""


def check_upload(path: str, limit: InflationLimit = DEFAULT_LIMIT) -> None:
    try:
        size = check_log_file(path)
    except LogReadError as exc:
        raise BadLog(exc.reason) from None
    _check_regions(path, size)
    try:
        # Last: it reads the whole file, which only a log that passed the cheap checks is worth.
        check_inflation(path, limit)
    except LogReadError as exc:
        raise BadLog(exc.reason) from None


def _check_regions(path: str, size: int) -> None:
    with open(path, "rb") as fh:
        head = fh.read(32 + 16 + 16 * 64)
    version = head[:8].split(b"\0", 1)[0].decode("ascii", "replace")
    name_at, n_mods = header_layout(version)
    maps_end = name_at + 16 * (1 + n_mods)
    cut = cut_short(path)
    if cut is not None and cut.unusable is not None:
        raise BadLog(
            f"the log is cut short (truncated at byte {cut.file_bytes:,}, inside {cut.unusable}): nothing in it can "
            f"be analysed. {COPY_AGAIN}"
        )
    found = region_maps(head)
    if found is None:
        raise BadLog(f"truncated: {size} bytes is shorter than the log header. {COPY_AGAIN}")
    for i, (off, length) in enumerate(found[1]):
        if length == 0:
            continue
        what = "the record-name region" if i == 0 else f"module region {i - 1}"
        # A region past the end is a log cut short, analysed as far as it goes (``ingest.truncation``);
        # one that starts inside the header cannot be any log's.
        if off < maps_end or (cut is None and off + length > size):
            raise BadLog(
                f"corrupted: its header maps {what} to bytes {off:,}-{off + length:,} of a {size:,}-byte file, "
                "which no Darshan log does; the file was damaged after it was written"
            )
