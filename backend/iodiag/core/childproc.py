"""A Python child process driven over two pipes: JSON lines in, JSON events out.

The service's analysis workers and the batch runner's helpers both run analyses this way: a
fresh single-threaded interpreter (the Darshan reader forks, which is only safe from a process
without threads), in its own process group so that killing it also kills the reader it forked,
watched for its resident memory, and replaced when it dies.

The child is started as ``python -m MODULE CMD_FD EVENT_FD PARENT_PID`` and must send
``{"event": "ready"}`` once its imports are done.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

_PAGE = os.sysconf("SC_PAGE_SIZE")


class ChildGone(Exception):
    """The child closed its pipes (it exited or was killed)."""


class PipeChild:
    def __init__(self, module: str, what: str) -> None:
        self.what = what
        cmd_r, cmd_w = os.pipe()
        evt_r, evt_w = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, str(cmd_r), str(evt_w), str(os.getpid())],
            pass_fds=(cmd_r, evt_w),
            stdin=subprocess.DEVNULL,
            # Its own process group: killing it also kills the log reader it may have forked. Not its
            # own session: with the kernel's autogroup scheduling (on by default) a new session is a
            # new scheduling group, sharing the CPUs equally with the server whatever its nice value,
            # and a busy worker would then take half the machine from the API.
            process_group=0,
        )
        os.close(cmd_r)
        os.close(evt_w)
        self._cmd = os.fdopen(cmd_w, "w", buffering=1)
        self._evt = evt_r
        self._buf = b""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send_line(self, line: str) -> None:
        try:
            self._cmd.write(line + "\n")
            self._cmd.flush()
        except (BrokenPipeError, ValueError):
            raise ChildGone from None

    def send_json(self, obj: dict[str, Any]) -> None:
        self.send_line(json.dumps(obj))

    def recv(self, timeout: float) -> dict[str, Any] | None:
        """The next event, or None if none arrived within ``timeout`` seconds."""
        if b"\n" not in self._buf:
            ready, _, _ = select.select([self._evt], [], [], timeout)
            if not ready:
                return None
            data = os.read(self._evt, 1 << 20)
            if not data:
                raise ChildGone
            self._buf += data
            if b"\n" not in self._buf:
                return None
        line, self._buf = self._buf.split(b"\n", 1)
        msg: dict[str, Any] = json.loads(line)
        return msg

    def wait_ready(self, timeout: float) -> None:
        """Wait for the child's imports, so a job's time limit counts only the job."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = self.recv(max(0.0, deadline - time.monotonic()))
            if msg is not None and msg.get("event") == "ready":
                return
        raise RuntimeError(f"{self.what} not ready after {timeout:g} s")

    def rss(self) -> int:
        try:
            with open(f"/proc/{self.proc.pid}/statm") as fh:
                return int(fh.read().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            return 0

    def peak(self) -> int:
        return vm_hwm(self.proc.pid)

    def how_it_died(self, wait_s: float = 0.0) -> str:
        if wait_s > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=wait_s)
        code = self.proc.poll()
        if code is None:
            return "is still running" if wait_s <= 0 else "stopped answering"
        if code < 0:
            return f"was killed by signal {signal.Signals(-code).name}"
        return f"exited with status {code}"

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        with contextlib.suppress(OSError, ValueError):
            self._cmd.close()
        with contextlib.suppress(OSError):
            os.close(self._evt)


def vm_hwm(pid: int | str = "self") -> int:
    """Peak resident bytes of a process (Linux VmHWM), 0 when unknown."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


# --- the child's side ------------------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1
Send = Callable[[dict[str, Any]], None]


def _die_with_parent(parent_pid: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the parent still kills its children when it stops
        pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def one_line(text: object) -> str:
    return " ".join(str(text).split())


def serve(
    argv: list[str],
    handle: Callable[[str, Send], Any],
    *,
    warm: Callable[[], None],
    expected: tuple[type[Exception], ...],
    niceness: int = 0,
) -> None:
    """The child's loop: ``handle(line, send)`` per command line; its return value goes out as ``done``.

    It dies with its parent (PR_SET_PDEATHSIG), so a killed server or Dask worker leaves no child
    finishing work nobody owns. ``expected`` errors are the input's fault and go out as their one
    line; anything else is reported as internal.
    """
    cmd_fd, evt_fd, parent = int(argv[1]), int(argv[2]), int(argv[3])
    _die_with_parent(parent)
    if niceness:
        with contextlib.suppress(OSError):
            os.nice(niceness)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    events = os.fdopen(evt_fd, "w", buffering=1)

    def send(obj: dict[str, Any]) -> None:
        events.write(json.dumps(obj) + "\n")
        events.flush()

    warm()  # imports now, so the first job's time limit counts only its own work
    send({"event": "ready"})
    with os.fdopen(cmd_fd, "r") as commands:
        for line in commands:
            try:
                result = handle(line, send)
            except expected as exc:
                send({"event": "error", "message": one_line(exc)})
            except MemoryError:
                send({"event": "error", "message": "out of memory while analyzing the log"})
            except Exception as exc:
                detail = one_line(exc)
                send(
                    {
                        "event": "error",
                        "internal": True,
                        "message": f"internal error: {type(exc).__name__}" + (f": {detail}" if detail else ""),
                    }
                )
            else:
                send({"event": "done", "result": result})
