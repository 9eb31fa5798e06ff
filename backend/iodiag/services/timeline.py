"""Zoomed timeline windows from the stored log: the trace is read once and kept for the next zooms.

A user zooming and panning asks for a window every few hundred milliseconds; reading the log's DXT
trace again each time (a forked libdarshan reader, ~0.2 s for 26,000 segments, seconds for millions)
would make every step wait. The sorted segment columns of the last few logs are kept, bounded by bytes
(48 bytes a segment), keyed by the log's content hash, so every analysis of the same log shares them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from iodiag.analysis.plots.timeline_window import TimelineSource, timeline_source

CACHE_BYTES = 768 << 20
"""Segment columns kept in memory at most (about 16 million segments)."""
CACHE_ENTRIES = 8
MAX_SEGMENTS = 16_000_000
"""Traces larger than this are not read whole for windows (they would not fit the cache, and each zoom would
read them again): the reader summarises them instead, and the window says why it has no segments."""


class NoTrace(Exception):
    """The stored log has no DXT trace (or it cannot be read); one line."""


class TimelineSources:
    def __init__(
        self, max_bytes: int = CACHE_BYTES, max_entries: int = CACHE_ENTRIES, max_segments: int = MAX_SEGMENTS
    ) -> None:
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.max_segments = max_segments
        self._entries: OrderedDict[str, TimelineSource] = OrderedDict()
        self._loading: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self.loads = 0
        """Logs read so far (a cache miss each)."""

    def _cached(self, sha256: str) -> TimelineSource | None:
        with self._lock:
            hit = self._entries.get(sha256)
            if hit is not None:
                self._entries.move_to_end(sha256)
            return hit

    def get(self, sha256: str, path: Path, timeout_s: float, memory_limit_bytes: int) -> TimelineSource:
        """The log's segments; ``NoTrace`` when it has none. Concurrent callers for one log read it once."""
        hit = self._cached(sha256)
        if hit is not None:
            return hit
        with self._lock:
            gate = self._loading.setdefault(sha256, threading.Lock())
        with gate:
            hit = self._cached(sha256)
            if hit is not None:
                return hit
            try:
                src = _read(path, timeout_s, memory_limit_bytes, self.max_segments)
            finally:
                with self._lock:
                    self._loading.pop(sha256, None)
            with self._lock:
                self.loads += 1
                if src.nbytes <= self.max_bytes:
                    self._entries[sha256] = src
                    while len(self._entries) > self.max_entries or self._total() > self.max_bytes:
                        self._entries.popitem(last=False)
            return src

    def _total(self) -> int:
        return sum(s.nbytes for s in self._entries.values())

    def forget(self, sha256: str) -> None:
        with self._lock:
            self._entries.pop(sha256, None)


def _read(path: Path, timeout_s: float, memory_limit_bytes: int, max_segments: int) -> TimelineSource:
    from iodiag.ingest import LogReadError, load_profile

    if not path.is_file():
        raise NoTrace("the stored log is missing")
    try:
        profile = load_profile(
            str(path),
            include=("DXT",),
            timeout_s=timeout_s,
            memory_limit_bytes=memory_limit_bytes,
            trace_budget=max_segments,
        )
    except LogReadError as exc:
        raise NoTrace(f"the stored log cannot be read: {exc.reason}") from None
    summarised = sum(t.segments for t in profile.trace_summaries.values())
    if summarised:
        raise NoTrace(
            f"this trace has {summarised:,} segments, more than the {max_segments:,} a zoomed window reads; "
            "the report's timeline summarises it"
        )
    src = timeline_source(profile)
    if src is None:
        raise NoTrace("this log has no DXT trace, so there is no timeline to zoom into")
    return src
