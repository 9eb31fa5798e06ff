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


def run_isolated(
    producer: Callable[[], Iterator[tuple[str, Any]]],
    timeout_s: float,
    memory_limit_bytes: int,
) -> ChildOutcome:
    """Fork, run ``producer`` in the child, and collect what it yields."""
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
                for msg in producer():
                    data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
                    out.write(_LEN.pack(len(data)))
                    out.write(data)
                    out.flush()
        except MemoryError:
            code = 3
        except BaseException:
            code = 4
        finally:
            os._exit(code)

    os.close(wfd)
    outcome = ChildOutcome()
    deadline = time.monotonic() + timeout_s
    buf = bytearray()
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                outcome.timed_out = True
                os.kill(pid, signal.SIGKILL)
                break
            ready, _, _ = select.select([rfd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(rfd, 1 << 20)
            if not chunk:
                break
            buf += chunk
            while len(buf) >= _LEN.size:
                (n,) = _LEN.unpack_from(buf)
                if len(buf) < _LEN.size + n:
                    break
                outcome.messages.append(pickle.loads(bytes(buf[_LEN.size : _LEN.size + n])))
                del buf[: _LEN.size + n]
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


def run_inline(producer: Callable[[], Iterator[tuple[str, Any]]]) -> ChildOutcome:
    """The same contract without a child: only for logs that are already trusted."""
    return ChildOutcome(messages=list(producer()), exit_code=0)
