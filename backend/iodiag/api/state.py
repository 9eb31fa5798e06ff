"""What every request handler shares: settings, database, log store, worker pool, metrics, chat."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from iodiag.core.settings import Settings
from iodiag.services.chat import ChatService
from iodiag.services.pool import WorkerPool
from iodiag.services.timeline import TimelineSources
from iodiag.store import BlobStore, Database
from iodiag.store.tokens import Principal

TOKEN_CACHE_S = 5.0
"""How long a checked token is believed without asking the database again (so also how long a
revocation made on another server takes to bite; revoking through this server is immediate)."""


class TokenCache:
    def __init__(self, ttl_s: float = TOKEN_CACHE_S) -> None:
        self.ttl_s = ttl_s
        self._entries: dict[str, tuple[Principal, float]] = {}
        self._filling: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def filling(self, token_hash: str) -> threading.Lock:
        """Held while one thread looks a token up, so a burst of requests with it asks the database once."""
        with self._lock:
            return self._filling.setdefault(token_hash, threading.Lock())

    def get(self, token_hash: str) -> Principal | None:
        with self._lock:
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
            self._entries[token_hash] = (principal, time.monotonic() + self.ttl_s)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


@dataclass
class AppContext:
    settings: Settings
    db: Database
    blobs: BlobStore
    pool: WorkerPool | None
    chat: ChatService
    tokens: TokenCache = field(default_factory=TokenCache)
    timelines: TimelineSources = field(default_factory=TimelineSources)
