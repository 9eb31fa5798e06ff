"""What the DXT benches share: timing a fresh process, and the bare PyDarshan read they are compared with.

Imported by the bench scripts next to it (``python bench/<script>.py`` puts this directory on the path).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PYDARSHAN_DXT_READ = """
import sys, time, json
import darshan
t = time.perf_counter()
r = darshan.DarshanReport(sys.argv[1], read_all=False)
r.mod_read_all_dxt_records("DXT_POSIX", dtype="pandas")
df = r.records["DXT_POSIX"].to_df()
n = sum(len(x["read_segments"]) + len(x["write_segments"]) for x in df)
print(json.dumps({"seconds": time.perf_counter() - t, "segments": n}))
"""
"""A bare PyDarshan read of a log's DXT_POSIX segments (the peer's own fastest path), printing its seconds."""


@dataclass(frozen=True)
class Timed:
    wall_s: float
    peak_rss_bytes: float
    """ru_maxrss of wait4: the process and the grandchildren it waited for (iodiag's forked reader)."""
    stdout: str


def timed(cmd: list[str], timeout: float) -> Timed | None:
    """Run ``cmd`` as a fresh process; None on failure (its last stderr line is printed) or time-out."""
    t = time.perf_counter()
    out_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-timed-{os.getpid()}.out"
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        deadline = t + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                out_path.unlink(missing_ok=True)
                return None
            time.sleep(0.005)
    dt = time.perf_counter() - t
    text = out_path.read_text(errors="replace")
    out_path.unlink(missing_ok=True)
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read().decode(errors="replace").strip().splitlines() if proc.stderr else []
        print(f"  {Path(cmd[0]).name} failed: {err[-1:]}", file=sys.stderr)
        return None
    return Timed(dt, usage.ru_maxrss * 1024.0, text)
