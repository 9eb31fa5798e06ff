"""Who owns a file or a lease on this host: a name for this process that outlives it on disk, and
whether the process such a name points to is certainly gone."""

from __future__ import annotations

import os
import socket
from pathlib import Path


def boot_id() -> str:
    """Eight characters that change with every boot (so a pid from an earlier boot is never mistaken)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:8] or "noboot"
    except OSError:
        return "noboot"


def hostname() -> str:
    return socket.gethostname()


def process_tag(sep: str = ":") -> str:
    """``host:boot:pid``, joined by ``sep``."""
    return sep.join((hostname(), boot_id(), str(os.getpid())))


def is_gone(host: str, boot: str, pid: str) -> bool:
    """Whether the process named ``host``/``boot``/``pid`` certainly no longer runs. Another host's
    processes cannot be seen from here: never gone."""
    if host != hostname() or not pid.isdigit():
        return False
    if boot != boot_id():
        return True
    if int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
