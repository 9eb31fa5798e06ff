"""What every request handler shares: settings, database, log store, worker pool, metrics, chat."""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from iodiag.core.settings import Settings
from iodiag.services.chat import ChatService
from iodiag.services.pool import WorkerPool
from iodiag.services.timeline import TimelineSources
from iodiag.store import BlobStore, Database
from iodiag.store.tokens import Principal

TOKEN_CACHE_S = 5.0
"""How long a checked token is believed without asking the database again. A revocation does not wait
for it: every revocation replaces the data directory's stamp (``tokens.announce_revocation``), and a
changed stamp empties the cache before the next request is answered."""


KNOWN_GOOD_S = 3600.0


class TokenCache:
    def __init__(self, ttl_s: float = TOKEN_CACHE_S, stamp: Path | None = None) -> None:
        self.ttl_s = ttl_s
        self.stamp = stamp
        self._seen: tuple[int, int] | None = self._stamp_id()
        self._entries: dict[str, tuple[Principal, float]] = {}
        self._known: dict[str, float] = {}  # hash -> until when: it authenticated lately
        self._filling: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def _stamp_id(self) -> tuple[int, int] | None:
        if self.stamp is None:
            return None
        try:
            st = os.stat(self.stamp)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns)

    def filling(self, token_hash: str) -> threading.Lock:
        """Held while one thread looks a token up, so a burst of requests with it asks the database once."""
        with self._lock:
            return self._filling.setdefault(token_hash, threading.Lock())

    def get(self, token_hash: str) -> Principal | None:
        seen = self._stamp_id()  # one stat (~2 µs): what a revocation anywhere changes
        with self._lock:
            if seen != self._seen:
                self._entries.clear()
                self._seen = seen
            hit = self._entries.get(token_hash)
            if hit is None or hit[1] < time.monotonic():
                self._entries.pop(token_hash, None)
                return None
            return hit[0]

    def put(self, token_hash: str, principal: Principal) -> None:
        with self._lock:
            if len(self._entries) > 10_000:
                self._entries.clear()
                self._filling.clear()
            if len(self._known) > 10_000:
                self._known.clear()
            now = time.monotonic()
            self._entries[token_hash] = (principal, now + self.ttl_s)
            self._known[token_hash] = now + KNOWN_GOOD_S

    def known(self, token_hash: str) -> bool:
        """Whether this token authenticated within ``KNOWN_GOOD_S``: its lookup is never throttled (it is
        still looked up, so a revocation holds). A guesser cannot hit a hash that only real tokens have."""
        with self._lock:
            return self._known.get(token_hash, 0.0) > time.monotonic()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


class AuthThrottle:
    """Failed authentications per client address, as a token bucket: ``burst`` failures at once, then
    ``per_s`` a second. An address with an empty bucket is answered 429 before its token is looked up,
    so a flood of bad tokens costs neither a thread nor a database query; a token that authenticated
    lately (``TokenCache.known``) is still looked up, so a valid client behind the same address is not
    refused."""

    def __init__(self, burst: int = 20, per_s: float = 2.0) -> None:
        self.burst = float(burst)
        self.per_s = per_s
        self._buckets: dict[str, tuple[float, float]] = {}  # address -> (tokens, at)
        self._lock = threading.Lock()

    def _level(self, address: str, now: float) -> float:
        tokens, at = self._buckets.get(address, (self.burst, now))
        return min(self.burst, tokens + (now - at) * self.per_s)

    def retry_after(self, address: str) -> int:
        """Seconds until ``address`` may try again; 0 when it may now."""
        now = time.monotonic()
        with self._lock:
            if address not in self._buckets:
                return 0
            level = self._level(address, now)
        return 0 if level >= 1.0 else max(1, math.ceil((1.0 - level) / self.per_s))

    def failed(self, address: str) -> None:
        now = time.monotonic()
        with self._lock:
            if len(self._buckets) > 50_000:  # forget the addresses whose buckets have refilled
                self._buckets = {a: b for a, b in self._buckets.items() if self._level(a, now) < self.burst}
            self._buckets[address] = (max(0.0, self._level(address, now) - 1.0), now)


@dataclass
class AppContext:
    settings: Settings
    db: Database
    blobs: BlobStore
    pool: WorkerPool | None
    chat: ChatService
    tokens: TokenCache = field(default_factory=TokenCache)
    auth_failures: AuthThrottle = field(default_factory=AuthThrottle)
    timelines: TimelineSources = field(default_factory=TimelineSources)
