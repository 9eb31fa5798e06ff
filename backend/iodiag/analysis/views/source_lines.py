"""From a finding's trace segments to the source lines that issued them.

Only what the log (or the user's binary) says: a segment without a call stack, or an address that
neither the log's table nor addr2line can place, adds nothing; a finding whose segments have no
stacks at all gets no source lines (the field stays null, never guessed).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from iodiag.analysis.models import SourceFrame, SourceLine
from iodiag.ingest.stacks import CallStacks, SourceLocation
from iodiag.ingest.trace import Trace

ADDR2LINE_TIMEOUT_S = 60.0
_UNKNOWN = SourceLocation("??", "??", 0)


class BinaryError(ValueError):
    """The --binary file cannot be used to map addresses (one line, for the user)."""


def addr2line(
    binary: str | Path, addresses: Iterable[int], timeout_s: float = ADDR2LINE_TIMEOUT_S
) -> dict[int, SourceLocation]:
    """Map addresses to source lines with binutils' addr2line (function names demangled).

    The addresses must be those of the binary's own image: the Drishti-enhanced Darshan records
    return addresses of a non-PIE executable as they are, which addr2line reads directly.
    """
    path = Path(binary)
    if not path.is_file():
        raise BinaryError(f"{path}: no such binary")
    tool = shutil.which("addr2line")
    if tool is None:
        raise BinaryError("addr2line (GNU binutils) is not installed: cannot map addresses with --binary")
    addrs = sorted(set(addresses))
    if not addrs:
        return {}
    try:
        out = subprocess.run(
            [tool, "-f", "-C", "-e", str(path)],
            input="\n".join(f"{a:#x}" for a in addrs) + "\n",
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BinaryError(f"{path}: addr2line took more than {timeout_s:.0f} s") from None
    if out.returncode != 0:
        first = (out.stderr.strip().splitlines() or ["failed"])[0]
        raise BinaryError(f"{path}: addr2line: {first}")
    rows = out.stdout.splitlines()
    if len(rows) < 2 * len(addrs):
        raise BinaryError(f"{path}: addr2line returned {len(rows)} lines for {len(addrs)} addresses")
    result: dict[int, SourceLocation] = {}
    for i, a in enumerate(addrs):
        func, loc = rows[2 * i], rows[2 * i + 1]
        src, _, line = loc.rpartition(":")
        line = line.split(" ", 1)[0]  # "12 (discriminator 3)"
        result[a] = SourceLocation(func or "??", src or "??", int(line) if line.isdigit() else 0)
    return result


@dataclass
class _Group:
    segments: int = 0
    bytes: float = 0.0
    ranks: int = 0
    best: int = -1
    chain: list[SourceFrame] = field(default_factory=list)


def _frame(address: int, loc: SourceLocation) -> SourceFrame:
    return SourceFrame(address=f"{address:#x}", function=loc.function, file=loc.file, line=loc.line)


def known(loc: SourceLocation | None) -> bool:
    return loc is not None and loc.file not in ("", "??") and loc.line > 0


def source_lines(
    trace: Trace,
    mask: np.ndarray,
    stacks: CallStacks,
    lines: Mapping[int, SourceLocation],
    limit: int = 10,
) -> list[SourceLine] | None:
    """The masked segments grouped by the innermost frame with a known source line, most segments first."""
    if trace.stack is None or len(trace) == 0:
        return None
    sel = mask & (trace.stack >= 0)
    if not sel.any():
        return None
    sid = trace.stack[sel]
    uniq, inv = np.unique(sid, return_inverse=True)
    counts = np.bincount(inv)
    nbytes = np.bincount(inv, weights=trace.length[sel])
    rmax = int(trace.rank.max()) + 1
    pair_stack = np.unique(inv.astype(np.int64) * rmax + trace.rank[sel]) // rmax
    ranks_per_stack = np.bincount(pair_stack, minlength=len(uniq))
    groups: dict[tuple[str, int, str], _Group] = {}
    for i, s in enumerate(uniq.tolist()):
        frames = [(a, lines.get(a)) for a in stacks.stacks.get(int(s), ())]
        site = next((loc for _, loc in frames if loc is not None and known(loc)), None)
        if site is None:
            continue
        g = groups.setdefault((site.file, site.line, site.function), _Group())
        g.segments += int(counts[i])
        g.bytes += float(nbytes[i])
        g.ranks = max(g.ranks, int(ranks_per_stack[i]))
        if int(counts[i]) > g.best:  # the chain shown is the line's most frequent one
            g.best = int(counts[i])
            g.chain = [_frame(a, loc or _UNKNOWN) for a, loc in frames]
    if not groups:
        return None
    out = [
        SourceLine(
            file=file,
            line=line,
            function=func,
            segments=g.segments,
            bytes=round(g.bytes),
            ranks=g.ranks,
            call_chain=g.chain,
        )
        for (file, line, func), g in groups.items()
    ]
    out.sort(key=lambda s: (-s.segments, s.file, s.line))
    return out[:limit]
