"""Run the Darshan library in a forked child so corrupted logs cannot take the caller down.

libdarshan-util trusts the bytes it reads: flipped or truncated logs can make it
segfault, abort or allocate without bound. The child streams one pickled
message per piece it has read (metadata, then each module); the parent keeps
whatever arrived before a crash, which is how a log with one bad module still
yields a partial profile instead of nothing.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import resource
import select
import signal
import struct
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

_LEN = struct.Struct("<Q")


@dataclass
class ChildOutcome:
    messages: list[tuple[str, Any]] = field(default_factory=list)
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    stderr: str = ""

    @property
    def crashed(self) -> bool:
        return self.signal is not None or self.timed_out or (self.exit_code not in (0, None))


def _vm_bytes() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


class RawPayload:
    """A message part sent as raw bytes after its pickled header, not through pickle.

    Trace segments are most of a large log; pickling them would copy them twice more on each
    side of the pipe. The parent reads them straight into one buffer of the right size.
    """

    __slots__ = ("data",)

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self.data = data


Sink = Callable[[tuple[str, Any]], "tuple[str, Any] | None"]
"""Sees each message as it arrives; returns what to keep (None keeps nothing)."""


def _keep(msg: tuple[str, Any]) -> tuple[str, Any] | None:
    return msg


def run_isolated(
    producer: Callable[[], Iterator[tuple[str, Any]]],
    timeout_s: float,
    memory_limit_bytes: int,
    sink: Sink = _keep,
) -> ChildOutcome:
    """Fork, run ``producer`` in the child, and collect what it yields.

    A message whose payload is a dict with a ``RawPayload`` under "raw" travels as a pickled
    header plus the raw bytes; the parent puts a ``bytearray`` in its place.
    """
    rfd, wfd = os.pipe()
    # Both processes use this file across the fork, so no context manager can own it.
    errfile = tempfile.TemporaryFile()  # noqa: SIM115
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(rfd)
            # A crash here is expected and handled by the parent; keep the parent's crash
            # reporter (pytest or the service's) from printing it as if the parent had died.
            faulthandler.disable()
            os.dup2(errfile.fileno(), 2)
            os.dup2(errfile.fileno(), 1)
            if memory_limit_bytes > 0:
                limit = _vm_bytes() + memory_limit_bytes
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            with os.fdopen(wfd, "wb", buffering=1 << 16) as out:
                for kind, payload in producer():
                    raw = payload.pop("raw", None) if isinstance(payload, dict) else None
                    if isinstance(raw, RawPayload):
                        payload["raw_bytes"] = len(raw.data)
                    data = pickle.dumps((kind, payload), protocol=pickle.HIGHEST_PROTOCOL)
                    out.write(_LEN.pack(len(data)))
                    out.write(data)
                    if isinstance(raw, RawPayload):
                        out.write(raw.data)
                    out.flush()
        except MemoryError:
            code = 3
        except BaseException:
            code = 4
        finally:
            os._exit(code)

    os.close(wfd)
    outcome = ChildOutcome()
    reader = _PipeReader(rfd, time.monotonic() + timeout_s)
    try:
        while True:
            head = reader.read(_LEN.size)
            if head is None:
                break
            (n,) = _LEN.unpack(head)
            body = reader.read(n)
            if body is None:
                break
            kind, payload = pickle.loads(body)
            size = payload.get("raw_bytes") if isinstance(payload, dict) else None
            if size is not None:
                raw = bytearray(size)
                if not reader.fill(memoryview(raw)):
                    break
                payload["raw"] = raw
            kept = sink((kind, payload))
            if kept is not None:
                outcome.messages.append(kept)
        outcome.timed_out = reader.timed_out
        if reader.timed_out:
            os.kill(pid, signal.SIGKILL)
    finally:
        os.close(rfd)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            outcome.signal = os.WTERMSIG(status)
        elif os.WIFEXITED(status):
            outcome.exit_code = os.WEXITSTATUS(status)
        if outcome.timed_out:
            outcome.signal = None
        errfile.seek(0)
        outcome.stderr = errfile.read(64 * 1024).decode("utf-8", "replace")
        errfile.close()
    return outcome


class _PipeReader:
    """Exact-size reads from a pipe with one overall deadline."""

    def __init__(self, fd: int, deadline: float) -> None:
        self.fd = fd
        self.deadline = deadline
        self.timed_out = False

    def fill(self, target: memoryview) -> bool:
        """Fill ``target`` completely; False at end of stream or on time-out."""
        got = 0
        while got < len(target):
            left = self.deadline - time.monotonic()
            if left <= 0:
                self.timed_out = True
                return False
            ready, _, _ = select.select([self.fd], [], [], min(left, 1.0))
            if not ready:
                continue
            n = os.readv(self.fd, [target[got:]])
            if n == 0:
                return False
            got += n
        return True

    def read(self, n: int) -> bytes | None:
        buf = bytearray(n)
        return bytes(buf) if self.fill(memoryview(buf)) else None


def run_inline(producer: Callable[[], Iterator[tuple[str, Any]]], sink: Sink = _keep) -> ChildOutcome:
    """The same contract without a child: only for logs that are already trusted."""
    messages = []
    for kind, payload in producer():
        if isinstance(payload, dict) and isinstance(payload.get("raw"), RawPayload):
            payload["raw"] = payload["raw"].data
        kept = sink((kind, payload))
        if kept is not None:
            messages.append(kept)
    return ChildOutcome(messages=messages, exit_code=0)
