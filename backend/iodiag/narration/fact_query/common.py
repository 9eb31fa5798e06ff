"""What every answer is written with: number formatting, the counted interfaces, shared-record notes and
request profiles."""

from __future__ import annotations

import statistics

from iodiag.analysis.models import (
    FileGroup,
    FileUsage,
    InterfaceTotals,
    OpCounts,
    RankSeconds,
    RankUsage,
    Report,
)
from iodiag.analysis.outcomes.verdict import percent as whole_percent
from iodiag.core.units import human_bytes, human_seconds, request_bytes
from iodiag.narration.checking.quantities import Quantity, exact
from iodiag.narration.fact_query.names import is_named
from iodiag.narration.fact_query.query import Direction

Out = tuple[str, list[Quantity], list[str], list[int]] | None


def lower_first(text: str) -> str:
    # "I/O took", "OST 5", "MPI-IO": a name, not a sentence's first word, keeps its case
    if len(text) > 1 and text[0].isupper() and not text[1].isupper() and not text.startswith(("I/O", "I ")):
        return text[0].lower() + text[1:]
    return text


def percent(ratio: float) -> str:
    """A share as an answer gives it: whole percent, but two significant digits under 1 % ("0.19% of the run"),
    where the headline's "<1%" would hide the number the question asks for."""
    pct = ratio * 100
    if 0 < pct < 0.001:
        return "<0.001%"  # floating-point dust ("8.7e-14%") is not a share anyone can use
    if 0 < pct < 1:
        return f"{pct:.2g}%"
    return whole_percent(ratio)


def fmt_bytes(n: float) -> str:
    return human_bytes(n)


def fmt_seconds(n: float) -> str:
    return human_seconds(n)


_b, _s = fmt_bytes, fmt_seconds  # short names for the f-strings below


def software_kinds(report: Report) -> str:
    """Whose files the software environment's are, in words: "its Python environment and system configuration"."""
    owner = {"python packages": "its Python environment", "system files": "system configuration"}
    return " and ".join(owner.get(k.kind, k.kind) for k in report.software_files)


def counted_interfaces(report: Report) -> list[InterfaceTotals]:  # the interfaces whose bytes and time make the totals
    return [i for i in report.interfaces if i.counted]


def bytes_moved(i: InterfaceTotals) -> int:
    """The interface's part of the job's bytes (each file once: POSIX without the files opened through MPI-IO)."""
    return i.own_bytes_read + i.own_bytes_written


def own_usage(report: Report, rank: int) -> RankUsage | None:
    return next((u for u in report.rank_table.ranks if u.rank == rank), None)


def shared_note(report: Report) -> tuple[str, list[Quantity]]:
    t = report.rank_table
    if not t.shared_files:
        return "", []
    slow = t.shared_slowest[0] if t.shared_slowest else None
    fast = t.shared_fastest[0] if t.shared_fastest else None
    kept = ""
    values: list[Quantity] = [exact(t.shared_files, "bare"), exact(t.shared_bytes, "bytes")]
    if slow and fast:
        kept = (
            f" (of the largest, rank {fast.rank} was fastest, {_s(fast.seconds)}, and rank {slow.rank} slowest, "
            f"{_s(slow.seconds)})"
        )
        values += [exact(fast.seconds, "seconds"), exact(slow.seconds, "seconds")]
    n = max(report.job.nprocs, 1)
    even = f" (an even split would be {_b(t.shared_bytes / n)} per rank)" if n > 1 and t.shared_bytes else ""
    if even:
        values.append(exact(t.shared_bytes / n, "bytes"))
    return (
        f" Darshan also holds {t.shared_files:,} shared file(s) ({_b(t.shared_bytes)}) as one record for all ranks, "
        f"keeping only the fastest and slowest rank{kept}, so each rank's part of those is not recorded{even}.",
        values,
    )


def kept_ranks(report: Report, file: str | None) -> list[tuple[str, RankSeconds]]:
    """The ranks Darshan kept for shared files (slowest first, then fastest), on the named file if any."""
    t = report.rank_table
    return [
        (which, k)
        for which, kept in (("slowest", t.shared_slowest), ("fastest", t.shared_fastest))
        for k in kept
        if file is None or is_named(k.path, file)
    ]


def kept_parts(
    report: Report, rank: int, file: str | None, *, moved_word: str = ""
) -> tuple[list[str], list[Quantity], list[str]]:
    """For each shared file (the named one, if any) Darshan kept this rank for, as its fastest or slowest rank:
    "the slowest rank of the shared file `x`: 41 GiB in 12.2 s", with its numbers and the paths. ``moved_word``
    ("moved") says the bytes are reads and writes together, where a question asked about one direction."""
    hits = [(which, k) for which, k in kept_ranks(report, file) if k.rank == rank][:2]
    parts: list[str] = []
    values: list[Quantity] = []
    for which, k in hits:
        moved = f"{_b(k.bytes)}{' ' + moved_word if moved_word else ''} in " if k.bytes is not None else ""
        layer = next((f.layer for f in report.top_files if f.path == k.path), "")
        at = f" at {layer}" if layer and layer != "POSIX" else ""  # "at MPI-IO": what the rank asked for
        parts.append(f"the {which} rank of the shared file `{k.path}`{at}: {moved}{_s(k.seconds)}")
        values += [exact(k.seconds, "seconds")] + ([exact(k.bytes, "bytes")] if k.bytes is not None else [])
    return parts, values, [k.path for _, k in hits]


KEPT_NOTE = " (for a shared file it keeps only the fastest and slowest rank)"


def kept_rank(report: Report, rank: int, file: str | None) -> Out:
    """What Darshan kept for this rank as the fastest or slowest rank of a shared file (the named one, if any)."""
    parts, values, paths = kept_parts(report, rank, file)
    if not parts:
        return None
    text = f"Darshan kept rank {rank} as " + "; and as ".join(parts) + KEPT_NOTE + "."
    return text, values, paths, [rank]


def shared_named(report: Report, rank: int, file: str | None) -> Out:
    """The named file is shared and this rank is not one Darshan kept for it: say what is and is not recorded."""
    if not file:
        return None
    on_file = kept_ranks(report, file)
    fast = next((k for which, k in on_file if which == "fastest"), None)
    slow = next((k for which, k in on_file if which == "slowest"), None)
    if fast is None and slow is None:
        return None
    path = (fast or slow).path  # type: ignore[union-attr]
    kept = "; ".join(
        f"{which} rank {k.rank}, {_s(k.seconds)}" + (f", {_b(k.bytes)}" if k.bytes is not None else "")
        for which, k in (("fastest", fast), ("slowest", slow))
        if k
    )
    values = [exact(k.seconds, "seconds") for k in (fast, slow) if k]
    values += [exact(k.bytes, "bytes") for k in (fast, slow) if k and k.bytes is not None]
    return (
        f"`{path}` is a shared file: Darshan kept only its fastest and slowest rank ({kept}), so rank {rank}'s "
        "time and bytes on it are not recorded.",
        values,
        [path],
        [rank],
    )


def every_rank(report: Report, f: FileUsage) -> bool:
    """Whether every rank of a multi-rank job used the file (a shared record, or a record per rank)."""
    return f.ranks >= report.job.nprocs > 1


def shared_moved(report: Report, direction: Direction) -> bool:
    """Whether a shared (every-rank) file among the busiest moved data in that direction."""
    return any(
        every_rank(report, f)
        and {"read": f.bytes_read, "write": f.bytes_written}.get(direction, f.bytes_read + f.bytes_written)
        for f in report.top_files
    )


def module_family(report: Report, name: str | None) -> list[InterfaceTotals]:
    """An interface's rows with records: HDF5 is "HDF5 (datasets)" and "HDF5 (files)"; the most bytes first."""
    rows = [i for i in report.interfaces if i.records and (i.name == name or i.name.startswith(f"{name} ("))]
    return sorted(rows, key=lambda i: -(i.bytes_read + i.bytes_written))


def no_module(report: Report, name: str) -> tuple[str, list[Quantity]]:
    """What to say when the log has no records of an interface: it was not recorded, and what the log does hold."""
    held = [i for i in counted_interfaces(report) if i.records and bytes_moved(i) > 0] or [
        i for i in counted_interfaces(report) if i.records
    ]
    text = f"the log has no {name} module, so {name} I/O was not recorded"
    if not held:
        return text + ", and no other module has records either", []
    parts = ", ".join(f"{i.name} ({_b(bytes_moved(i))} in {i.files:,} file(s))" for i in held[:3])
    return text + f"; the I/O it does hold is at {parts}", [
        v for i in held[:3] for v in (exact(bytes_moved(i), "bytes"), exact(i.files, "bare"))
    ]


def totals(report: Report) -> tuple[int, int]:
    """(read, written) by the application: each file once, at its top layer (the interfaces' own totals would
    count a file opened through MPI-IO twice, at MPI-IO and again at POSIX)."""
    s = report.io_share
    if s is not None:
        return s.bytes_read, s.bytes_written
    rows = counted_interfaces(report)
    return sum(i.own_bytes_read for i in rows), sum(i.own_bytes_written for i in rows)


def beneath(report: Report, read: int, written: int, direction: Direction) -> tuple[str, list[Quantity]]:
    """What reached the file system through POSIX, where it differs from what the application asked for."""
    posix = next((i for i in report.interfaces if i.name == "POSIX" and i.records), None)
    if posix is None or not any(i.name == "MPI-IO" and i.records for i in report.interfaces):
        return "", []
    pairs = [("read", read, posix.bytes_read), ("written", written, posix.bytes_written)]
    parts = [
        (verb, mine, theirs)
        for verb, mine, theirs in pairs
        if (direction == "both" or verb.startswith(direction[:4])) and theirs and abs(theirs - mine) > 0.01 * theirs
    ]
    if not parts:
        return "", []
    text = "; ".join(f"{_b(theirs)} {verb}" for verb, _, theirs in parts)
    return f" At the file system (POSIX, beneath MPI-IO): {text}.", [exact(t, "bytes") for _, _, t in parts]


def ranks_on_slow_ost(report: Report, hit: list[int], count: int) -> tuple[str, list[Quantity]]:
    """ ", hitting 10 ranks (78, 174, ...), 12.22 s of I/O each against a median of 2.44 s for the other ranks":
    the ranks whose own files sit on the slow OST against the rest, from their own records."""
    if not hit:
        return "", []
    own = {r.rank: r.read_s + r.write_s + r.meta_s for r in report.rank_table.ranks}
    shown = ", ".join(str(r) for r in hit[:8]) + (", ..." if count > min(len(hit), 8) else "")
    text, values = f", hitting {count:,} rank(s) ({shown})", [exact(count, "bare")]
    on = [own[r] for r in hit if r in own]
    off = [t for r, t in own.items() if r not in set(hit)]
    if on and off and not report.rank_table.truncated:
        slow, rest = statistics.median(on), statistics.median(off)
        text += f", {_s(slow)} of I/O each against a median of {_s(rest)} for the other ranks"
        values += [exact(slow, "seconds"), exact(rest, "seconds")]
    return text, values


FS_NAMES = {
    "nfs": "NFS",
    "lustre": "Lustre",
    "gpfs": "GPFS",
    "xfs": "a local XFS disk",
    "ext4": "a local ext4 disk",
    "daos": "DAOS (through DFS)",
}


def per_rank(g: FileGroup) -> float:
    """A group's time per rank that used it (its time summed over ranks, shared over them evenly)."""
    return g.io_time_s / g.ranks if g.ranks > 0 else g.slowest_s


def mostly_metadata(meta_s: float, io_s: float) -> tuple[str, list[Quantity]]:
    """ ", mostly in metadata calls: 329.4 s of opens, stats and seeks summed over ranks against 97.16 s of reads
    and writes" where those calls outweigh the data; what explains small files that are slow to read."""
    data = io_s - meta_s
    if meta_s <= 0 or io_s <= 0 or meta_s < 0.3 * io_s:
        return "", []
    if meta_s < data:
        # A large part, if not most: opens and closes of many small files still cost nearly as much as the reads
        return (
            f", {percent(meta_s / io_s)} of it in metadata calls ({_s(meta_s)} of opens, stats, seeks and closes "
            f"summed over ranks, against {_s(data)} of reads and writes)",
            [exact(meta_s / io_s * 100, "percent"), exact(meta_s, "seconds"), exact(data, "seconds")],
        )
    return (
        f", mostly in metadata calls: {_s(meta_s)} of opens, stats, seeks and closes summed over ranks "
        f"({percent(meta_s / io_s)} of their I/O time) against {_s(max(data, 0.0))} of reads and writes",
        [exact(meta_s, "seconds"), exact(meta_s / io_s * 100, "percent"), exact(max(data, 0.0), "seconds")],
    )


SMALL_REQUEST = 64 << 10
"""Requests at most this size are called small in an answer (each pays a round trip more than it moves)."""


def request_profile(f: FileUsage, direction: Direction) -> tuple[str, list[Quantity]]:
    """How a file's requests looked, from its counters: ", over 276,276 writes of mostly 32.00 KiB, made
    independently (0 collective)"; what a why-question about one file wants beside the cause."""
    c = f.calls
    w = direction == "write" or (direction == "both" and c.writes >= c.reads)
    n, noun = (c.writes, "writes") if w else (c.reads, "reads")
    if n <= 0:
        return "", []
    moved = f.bytes_written if w else f.bytes_read
    typical = f.common_size if f.common_size and f.common_count >= 0.5 * n else (moved / n if moved else 0)
    if 0 < typical <= SMALL_REQUEST:
        noun = f"small {noun}"  # what the count is: many small requests, each paying a round trip
    text, values = f", over {n:,} {noun}", [exact(n, "bare")]
    other, other_noun = (c.reads, "reads") if w else (c.writes, "writes")
    if direction == "both" and other >= 0.25 * n:
        # A file read and written alike (read-modify-write, interleaved updates): both halves are its load
        text, values = (
            f", over {n + other:,} {'small ' if noun.startswith('small') else ''}requests "
            f"({n:,} {noun.split()[-1]} and {other:,} {other_noun})",
            [exact(n + other, "bare"), exact(n, "bare"), exact(other, "bare")],
        )
        n += other
    if f.common_size and f.common_count >= 0.5 * n:
        text += f" of mostly {request_bytes(f.common_size)}"
        values.append(exact(f.common_size, "bytes"))
    elif moved > 0:
        # STDIO keeps no access-size table: the mean request is what the counters give
        text += f" of {_b(moved / n)} on average"
        values.append(exact(moved / n, "bytes"))
    if f.layer == "MPI-IO" and (f.independent or f.collective):
        if not f.collective:
            text += " made independently (0 collective)"
        elif not f.independent:
            text += " made collectively"
        else:
            text += f" ({f.collective:,} collective, {f.independent:,} made independently)"
            values += [exact(f.collective, "bare"), exact(f.independent, "bare")]
    seq = c.seq_writes if w else c.seq_reads
    if c.seeks >= 0.5 * n and seq < 0.75 * (c.writes if w else c.reads):
        # Seeks between requests that are not in order: the access pattern, not the size, is the load
        text += f", with {c.seeks:,} seeks"
        values.append(exact(c.seeks, "bare"))
    mis, mv = misaligned(f.posix_calls or c, f.alignment)
    return text + mis, values + mv


def misaligned(c: OpCounts, alignment: int | None, files: int = 1) -> tuple[str, list[Quantity]]:
    """ ", 999,424 of them not aligned to 1.00 MiB": where most of a file's POSIX requests start off the file
    alignment, each one touches two blocks (or stripes), and that is part of why the file is slow."""
    n = c.reads + c.writes
    if n <= 0 or c.file_not_aligned < 0.5 * n:
        return "", []
    to = f" to {fmt_bytes(alignment)}" if alignment else ""
    each, ev = "", []
    if files > 1 and c.file_not_aligned >= files:
        each, ev = f" ({c.file_not_aligned / files:,.0f} per file)", [exact(c.file_not_aligned / files, "bare")]
    return f", {c.file_not_aligned:,} requests not aligned{to}{each}", [
        *ev,
        exact(c.file_not_aligned, "bare"),
        *([exact(alignment, "bytes")] if alignment else []),
    ]


def kept_spread(report: Report, path: str) -> tuple[str, list[Quantity]]:
    """A shared file's slowest and fastest rank as Darshan kept them, where the slowest moved far more (one rank
    doing most of a file's I/O): "; its slowest rank, rank 1, moved 12.67 GiB in 24.39 s, its fastest 16.00 MiB"."""
    t = report.rank_table
    slow = next((r for r in t.shared_slowest if r.path == path), None)
    fast = next((r for r in t.shared_fastest if r.path == path), None)
    if slow is None or fast is None or slow.bytes is None or fast.bytes is None or slow.rank == fast.rank:
        return "", []
    if slow.bytes < 10 * max(fast.bytes, 1):
        return "", []
    text = (
        f"; Darshan kept its slowest rank, rank {slow.rank}, at {_b(slow.bytes)} in {_s(slow.seconds)}, against "
        f"{_b(fast.bytes)} in {_s(fast.seconds)} for its fastest, rank {fast.rank}: the ranks' shares are far from even"
    )
    return text, [exact(slow.bytes, "bytes"), exact(slow.seconds, "seconds"), exact(fast.bytes, "bytes")]


def aggregators(report: Report, f: FileUsage) -> tuple[str, list[Quantity]]:
    """A collective file whose POSIX work went through a few ranks: the shared POSIX record's slowest rank moved a
    large share of the file's bytes ("; at POSIX, rank 0 alone wrote 93.75 GiB of its 375.00 GiB (25%) in 8.0 min:
    about 4 aggregators did the file system's work for all 512 ranks"). Too few aggregators serialise the file."""
    k = f.posix_slowest
    total = f.bytes_read + f.bytes_written
    if k is None or k.bytes is None or total <= 0 or f.ranks < 8 or not f.collective:
        return "", []
    share = k.bytes / total
    if share < 0.05 or 1 / share > f.ranks / 4:
        return "", []
    verb = "wrote" if f.bytes_written >= f.bytes_read else "read"
    few = round(1 / share)
    who = "one aggregator" if few <= 1 else f"about {few:,} aggregators"
    text = (
        f"; at POSIX, rank {k.rank} alone {verb} {_b(k.bytes)} of its {_b(total)} ({percent(share)}) in "
        f"{_s(k.seconds)}: {who} did the file system's work for all {f.ranks:,} ranks (more aggregators: the "
        "`cb_nodes` hint, or on Lustre a wider stripe, which ROMIO takes as its aggregator count)"
    )
    return text, [
        exact(k.bytes, "bytes"),
        exact(total, "bytes"),
        exact(share * 100, "percent"),
        exact(k.seconds, "seconds"),
    ]
