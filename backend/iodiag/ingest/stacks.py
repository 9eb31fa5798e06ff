"""Call stacks of DXT segments, and the table that maps their addresses to source lines.

Where they come from. The Drishti-enhanced Darshan (darshan pull request 966, not merged) records,
for each DXT segment, the return addresses of the call stack that issued it, and, once per log, an
address-to-line table made with addr2line at the end of the job. It stores them by changing the
header and the DXT segment layout, which stock libdarshan-util (and so PyDarshan and this reader)
cannot open; the maintainers noted that the change breaks reading old logs too.

So a log carries the same two things here in a form every Darshan reader already accepts: extra
*name records* (Darshan's id -> string table), each a line starting with ``MAGIC``. Stock tools list
them as names of records that do not exist and otherwise ignore them; this reader removes them from
the file names and parses them:

``<MAGIC> A <address hex> <function>\\x1f<source file>\\x1f<line>``
    one entry of the address-to-line table (line 0: unknown; absent entirely when the job did
    not run addr2line, in which case ``iodiag analyze --binary`` can map the addresses later)
``<MAGIC> S <stack id> <address hex>,<address hex>,...``
    a distinct call stack, innermost frame first
``<MAGIC> G <module> <record id> <rank> <w|r> <first index> <stack id>*<count> ...``
    the stack of each segment of one DXT record's writes or reads, run-length encoded, starting at
    segment ``first index`` (a long record spans several G entries)

The scenario writer (``iodiag synth``) writes this form, which is how the tests make such logs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from iodiag.ingest.trace import READ, Trace

MAGIC = "darshan-callstack/1"
_SEP = "\x1f"
MAX_NAME = 4000  # the writer's name records hold up to 4095 bytes
MAX_FRAMES = 64


class SourceLocation(NamedTuple):
    function: str
    file: str
    line: int  # 0 when addr2line could not tell


@dataclass(frozen=True)
class CallStacks:
    stacks: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    """Stack id -> return addresses, innermost first."""
    lines: Mapping[int, SourceLocation] = field(default_factory=dict)
    """Address -> source location: the log's address-to-line table (may be empty)."""
    runs: Mapping[tuple[str, int, int, int], tuple[tuple[int, int, int], ...]] = field(default_factory=dict)
    """(module, record id, rank, op) -> runs of (first segment index, stack id, count)."""

    def __bool__(self) -> bool:
        return bool(self.stacks)

    def addresses(self) -> set[int]:
        return {a for s in self.stacks.values() for a in s}


def record_id(text: str) -> int:
    """An id for a name record of ours: any 64-bit value works; a hash keeps it stable."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def is_stack_name(name: str) -> bool:
    return name.startswith(MAGIC + " ")


def parse(names: Iterable[str]) -> tuple[CallStacks, list[str]]:
    """The call stacks in a log's name records, and one line per entry that could not be parsed."""
    stacks: dict[int, tuple[int, ...]] = {}
    lines: dict[int, SourceLocation] = {}
    runs: dict[tuple[str, int, int, int], list[tuple[int, int, int]]] = {}
    bad: list[str] = []
    for name in names:
        body = name[len(MAGIC) + 1 :]
        kind, _, rest = body.partition(" ")
        try:
            if kind == "A":
                addr, _, loc = rest.partition(" ")
                func, src, line = loc.split(_SEP)
                lines[int(addr, 16)] = SourceLocation(func, src, int(line))
            elif kind == "S":
                sid, _, addrs = rest.partition(" ")
                stacks[int(sid)] = tuple(int(a, 16) for a in addrs.split(",") if a)[:MAX_FRAMES]
            elif kind == "G":
                mod, rec, rank, op, first, *rle = rest.split(" ")
                key = (mod, int(rec), int(rank), READ if op == "r" else 0)
                pos = int(first)
                for item in rle:
                    sid, _, count = item.partition("*")
                    n = int(count)
                    runs.setdefault(key, []).append((pos, int(sid), n))
                    pos += n
            else:
                raise ValueError(f"unknown entry kind {kind!r}")
        except ValueError as exc:
            bad.append(f"call-stack entry {body[:60]!r}: {exc}")
    return CallStacks(stacks, lines, {k: tuple(v) for k, v in runs.items()}), bad


def split_names(names: Mapping[int, str]) -> tuple[dict[int, str], list[str]]:
    """File names, and the call-stack entries hidden among them."""
    files: dict[int, str] = {}
    entries: list[str] = []
    for rid, name in names.items():
        if is_stack_name(name):
            entries.append(name)
        else:
            files[rid] = name
    return files, entries


def stack_column(trace: Trace, stacks: CallStacks) -> np.ndarray | None:
    """The stack id of each segment of ``trace`` (-1: none), or None when the log has none for it.

    Segments of one DXT record's writes (or reads) are contiguous in the reader's order, so a
    segment's index in its record is its distance from the start of its run.
    """
    mine = {k: v for k, v in stacks.runs.items() if k[0] == trace.module}
    if not mine or len(trace) == 0:
        return None
    out = np.full(len(trace), -1, dtype=np.int32)
    rid = trace.file_ids[trace.file]
    boundary = np.r_[
        True,
        (trace.file[1:] != trace.file[:-1]) | (trace.rank[1:] != trace.rank[:-1]) | (trace.op[1:] != trace.op[:-1]),
    ]
    starts = np.flatnonzero(boundary)
    ends = np.r_[starts[1:], len(trace)]
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        key = (trace.module, int(rid[a]), int(trace.rank[a]), int(trace.op[a]))
        for first, sid, count in mine.get(key, ()):
            lo, hi = a + first, min(a + first + count, b)
            if lo < hi:
                out[lo:hi] = sid
    return out if (out >= 0).any() else None


# --- writing (used by the scenario writer) -------------------------------------------------------------


def encode(
    stacks: Mapping[int, tuple[int, ...]],
    lines: Mapping[int, SourceLocation],
    segments: Iterable[tuple[str, int, int, int, np.ndarray]],
) -> list[str]:
    """Name-record strings for call stacks: ``segments`` yields (module, record id, rank, op, stack ids)."""
    out = [f"{MAGIC} A {a:x} {loc.function}{_SEP}{loc.file}{_SEP}{loc.line}"[:MAX_NAME] for a, loc in lines.items()]
    for sid, addrs in stacks.items():
        out.append(f"{MAGIC} S {sid} " + ",".join(f"{a:x}" for a in addrs[:MAX_FRAMES]))
    for module, rec, rank, op, ids in segments:
        if len(ids) == 0:
            continue
        change = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        counts = np.diff(np.r_[change, len(ids)])
        head = f"{MAGIC} G {module} {rec} {rank} {'r' if op == READ else 'w'}"
        parts: list[str] = []
        first = pos = 0
        for c, n in zip(change.tolist(), counts.tolist(), strict=True):
            item = f"{int(ids[c])}*{n}"
            if parts and len(head) + 24 + sum(len(p) + 1 for p in parts) + len(item) > MAX_NAME:
                out.append(f"{head} {first} " + " ".join(parts))
                parts, first = [], pos
            parts.append(item)
            pos += n
        out.append(f"{head} {first} " + " ".join(parts))
    return out
