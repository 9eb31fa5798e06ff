"""Answers about ranks: bytes, time and files per rank, the slowest and busiest ranks, which ranks did I/O."""

from __future__ import annotations

import re
import statistics

from iodiag.analysis.models import (
    FileGroup,
    FileUsage,
    RankUsage,
    Report,
    Severity,
)
from iodiag.core.units import request_bytes
from iodiag.narration.checking.quantities import Quantity, exact
from iodiag.narration.fact_query.common import (
    KEPT_NOTE,
    Out,
    bytes_moved,
    counted_interfaces,
    every_rank,
    kept_parts,
    kept_rank,
    lower_first,
    own_usage,
    percent,
    ranks_on_slow_ost,
    shared_moved,
    shared_named,
    shared_note,
)
from iodiag.narration.fact_query.common import (
    fmt_bytes as _b,
)
from iodiag.narration.fact_query.common import (
    fmt_seconds as _s,
)
from iodiag.narration.fact_query.names import group_regex, is_named
from iodiag.narration.fact_query.query import Query, by_direction
from iodiag.narration.fact_query.vocabulary import YES_NO


def rank_bytes(report: Report, q: Query) -> Out:
    rank = int(q.target or 0)
    if rank >= report.job.nprocs:
        return (
            (
                f"The job had {report.job.nprocs:,} ranks (0 to {report.job.nprocs - 1:,}): there is no rank {rank}."
                if report.job.nprocs > 1
                else f"The job had one rank (rank 0): there is no rank {rank}."
            ),
            [exact(report.job.nprocs, "bare"), exact(report.job.nprocs - 1, "bare")],
            [],
            [],
        )
    posix = _posix_kept(report, rank, q)
    if posix is not None:
        return posix
    u = own_usage(report, rank)
    kept = kept_rank(report, rank, q.file)
    if kept is not None and (u is None or q.file):
        return kept
    note, nv = shared_note(report)
    if u is None:
        if report.rank_table.truncated:
            return None
        # "Did rank 100 write anything?": no, unless a shared record (which keeps no ranks) moved data that way.
        no = "No: r" if q.yes_no and not shared_moved(report, q.direction) else "R"
        return (
            f"{no}ank {rank} has no file records of its own in the log{': ' + note[1:] if note else '.'}",
            nv,
            [],
            [rank],
        )
    hidden = shared_named(report, rank, q.file)
    if hidden is not None:
        return hidden
    own_file = _own_file(report, rank, q)
    if own_file is not None:
        return _rank_on_own_file(rank, own_file, q, report.job.runtime_s)
    spent = u.read_s + u.write_s + u.meta_s
    if q.direction == "write":
        head, took = f"Rank {rank} wrote {_b(u.bytes_written)}", f"{_s(u.write_s)} of writing"
        head += f" in {u.writes:,} writes of {_b(u.bytes_written / u.writes)} on average" if u.writes else ""
    elif q.direction == "read":
        head, took = f"Rank {rank} read {_b(u.bytes_read)}", f"{_s(u.read_s)} of reading"
        head += f" in {u.reads:,} reads of {_b(u.bytes_read / u.reads)} on average" if u.reads else ""
    else:
        head, took = (
            f"Rank {rank} wrote {_b(u.bytes_written)} and read {_b(u.bytes_read)}",
            f"{_s(spent)} of I/O",
        )
    if q.direction != "both":
        took += f" ({_s(spent)} of I/O in all)"
    text = f"{head} through its own records ({u.files:,} file(s)), in {took}.{note}"
    # Darshan keeps a kept rank's bytes read and written together: "moved", whatever the question asked
    parts, kv, _ = kept_parts(report, rank, None, moved_word="read and written")
    if parts:
        # "how much did rank 0 write?" where rank 0 is a shared file's kept rank: what Darshan kept for it there
        # belongs in the answer's first sentence, or its own files' few bytes read as all it moved
        text = (
            f"{head} through its own records ({u.files:,} file(s)), in {took}, and Darshan kept it as "
            + "; and as ".join(parts)
            + f"{KEPT_NOTE}."
        )
        nv = kv
    if q.yes_no:
        moved = {"write": u.bytes_written, "read": u.bytes_read}.get(q.direction, u.bytes_written + u.bytes_read)
        no = "Not through its own records: " if shared_moved(report, q.direction) else "No: "
        text = ("Yes: " if moved > 0 else no) + lower_first(text)
    return (
        text,
        [
            exact(u.bytes_written, "bytes"),
            exact(u.bytes_read, "bytes"),
            exact(u.files, "bare"),
            exact(u.writes, "bare"),
            exact(u.reads, "bare"),
            *([exact(u.bytes_written / u.writes, "bytes")] if u.writes else []),
            *([exact(u.bytes_read / u.reads, "bytes")] if u.reads else []),
            exact(spent, "seconds"),
            exact(u.write_s, "seconds"),
            exact(u.read_s, "seconds"),
            *nv,
        ],
        [],
        [rank],
    )


def _posix_kept(report: Report, rank: int, q: Query) -> Out:
    """ "How much did rank 0 write at the POSIX level?" where the rank's part is in shared files above POSIX:
    the bytes and time POSIX kept for it as a shared POSIX record's slowest rank (an aggregator under collective
    I/O). The MPI-IO record's kept ranks count what the rank asked for, not what reached the file system."""
    if not re.search(r"\bposix\b", q.raw.lower()):
        return None
    files = [
        f
        for f in report.top_files
        if f.posix_slowest is not None
        and f.posix_slowest.rank == rank
        and f.posix_slowest.bytes is not None
        and (not q.file or is_named(f.path, q.file))
    ]
    if not files:
        return None
    parts: list[str] = []
    values: list[Quantity] = []
    for f in files[:3]:
        k = f.posix_slowest
        assert k is not None and k.bytes is not None
        total = f.bytes_read + f.bytes_written
        verb = "wrote" if f.bytes_written >= f.bytes_read else "read"
        parts.append(f"{verb} {_b(k.bytes)} of `{f.path}`'s {_b(total)} in {_s(k.seconds)}")
        values += [exact(k.bytes, "bytes"), exact(k.seconds, "seconds"), exact(total, "bytes")]
    text = (
        f"At the POSIX level, rank {rank} "
        + "; it ".join(parts)
        + ", as the slowest rank Darshan kept for the shared POSIX record (under collective I/O, an aggregator; "
        "for a shared record Darshan keeps only the fastest and slowest rank)."
    )
    return text, values, [f.path for f in files[:3]], [rank]


def _own_file(report: Report, rank: int, q: Query) -> FileUsage | None:
    """The file the question names, where only this rank used it (its record is the rank's own)."""
    return next((f for f in report.top_files if q.file and f.only_rank == rank and is_named(f.path, q.file)), None)


def _rank_on_own_file(rank: int, f: FileUsage, q: Query, runtime_s: float = 0.0) -> Out:
    """A rank's I/O on a file only it used: the file's record is the rank's ("what read rate did rank 0 get on
    restart.h5?"), with its share of the run ("what share of the run did rank 0 spend on energies.txt?")."""
    read = q.direction == "read" or (q.direction == "both" and f.bytes_read >= f.bytes_written)
    moved, n = (f.bytes_read, f.calls.reads) if read else (f.bytes_written, f.calls.writes)
    verb, noun = ("read", "reads") if read else ("wrote", "writes")
    took = f.io_time_s
    text = f"Rank {rank} {verb} {_b(moved)} on `{f.path}`, the only rank that used it"
    values = [exact(moved, "bytes"), exact(took, "seconds")]
    if n:
        text += f", in {n:,} {noun} of {_b(moved / n)} on average"
        values += [exact(n, "bare"), exact(moved / n, "bytes")]
    if took > 0:
        share = f" ({percent(took / runtime_s)} of the {_s(runtime_s)} run)" if runtime_s > 0 else ""
        text += f", taking {_s(took)} of I/O{share}: {_b(moved / took)}/s"
        values.append(exact(moved / took, "rate"))
        if share:
            values += [exact(took / runtime_s * 100, "percent"), exact(runtime_s, "seconds")]
    return text + ".", values, [f.path], [rank]


def rank_time(report: Report, q: Query) -> Out:
    rank = int(q.target or 0)
    u = own_usage(report, rank)
    kept = kept_rank(report, rank, q.file)
    if kept is not None and (u is None or q.file):
        return kept
    note, nv = shared_note(report)
    if u is None:
        return (
            (f"Rank {rank} has no file records of its own in the log{': ' + note[1:] if note else '.'}", nv, [], [rank])
            if not (report.rank_table.truncated)
            else None
        )
    hidden = shared_named(report, rank, q.file)
    if hidden is not None:
        return hidden
    own_file = _own_file(report, rank, q)
    if own_file is not None:
        # "how long did rank 0 spend reading train.bin?": that file's time, not all of the rank's
        return _rank_on_own_file(rank, own_file, q, report.job.runtime_s)
    total = u.read_s + u.write_s + u.meta_s
    run = report.job.runtime_s
    share = f", {percent(total / run)} of the {_s(run)} run" if run > 0 else ""
    text = (
        f"Rank {rank} spent {_s(total)} in I/O on its own records{share}: {_s(u.write_s)} writing "
        f"({_b(u.bytes_written)}), {_s(u.read_s)} reading ({_b(u.bytes_read)}) and {_s(u.meta_s)} in metadata "
        f"calls.{note}"
    )
    values = [
        exact(total, "seconds"),
        exact(u.write_s, "seconds"),
        exact(u.read_s, "seconds"),
        exact(u.meta_s, "seconds"),
        exact(u.bytes_written, "bytes"),
        exact(u.bytes_read, "bytes"),
    ]
    if run > 0:
        values += [exact(total / run * 100, "percent"), exact(run, "seconds")]
    return text, values + nv, [], [rank]


def _rank_bytes_spread(report: Report, q: Query) -> Out:
    """Bytes per rank over the ranks with records of their own (a shared record's part per rank is not kept)."""
    t = report.rank_table

    def moved(u: RankUsage) -> int:
        return by_direction(q.direction, u.bytes_read, u.bytes_written, u.bytes_read + u.bytes_written)

    amounts = sorted(moved(u) for u in t.ranks)
    if not amounts:
        return None
    verb = {"write": "wrote", "read": "read"}.get(q.direction, "moved")
    lo, mid, hi = amounts[0], statistics.median(amounts), amounts[-1]
    over = f"the {len(amounts):,} ranks with records of their own"
    note, nv = shared_note(report)
    values = [exact(lo, "bytes"), exact(mid, "bytes"), exact(hi, "bytes"), exact(len(amounts), "bare")]
    if hi - lo <= 0.01 * max(hi, 1):
        calls = {by_direction(q.direction, u.reads, u.writes, u.reads + u.writes) for u in t.ranks}
        noun = {"write": "writes", "read": "reads"}.get(q.direction, "reads and writes")
        each = f" in {next(iter(calls)):,} {noun}" if len(calls) == 1 and next(iter(calls)) > 0 else ""
        size_values = []
        if each and mid > 0:
            # "... and what size were the writes?": every rank made the same calls, so their mean size is one number
            each += f" of {_b(mid / next(iter(calls)))}"
            size_values = [exact(mid / next(iter(calls)), "bytes")]
        parts, pv = _per_rank_families(report, q, len(amounts), mid, sized=not each)
        each += parts
        size_values += pv
        total = sum(amounts)
        text = f"Each rank {verb} {_b(mid)}{each} through its own records ({_b(total)} in all, over {over}).{note}"
        if len(amounts) == 1:
            only = t.ranks[0].rank
            text = f"Rank {only} {verb} {_b(mid)}{each} through its own records, the only rank with any.{note}"
        values = [exact(mid, "bytes"), exact(total, "bytes"), exact(len(amounts), "bare"), *size_values]
        values += [exact(n, "bare") for n in calls]
    else:
        text = (
            f"Ranks {verb} {_b(lo)} to {_b(hi)} each, {_b(mid)} at the median ({_b(sum(amounts))} in all), "
            f"over {over}.{note}"
        )
        values.append(exact(sum(amounts), "bytes"))
    n = max(report.job.nprocs, 1)
    if t.shared_bytes > sum(amounts) and len(amounts) < n:
        # Most of the data sits in shared records, which keep no per-rank split: lead with what they hold per
        # rank on average, not with the few bytes some ranks moved on their own ("each rank wrote 322 B"), in the
        # direction asked ("how much did each rank write?": the shared files' written bytes)
        shared = t.shared_bytes
        said = "moved"
        if q.direction in ("read", "write"):
            way = sum(
                f.bytes_read if q.direction == "read" else f.bytes_written
                for f in report.top_files
                if every_rank(report, f)
            )
            if way:
                shared, said = way, {"wrote": "written"}.get(verb, verb)
        lead = (
            f"Most of the data is in {t.shared_files:,} shared file(s) Darshan keeps one record for: "
            f"{_b(shared)} {said} in all, {_b(shared / n)} per rank on average over the job's "
            f"{n:,} ranks (the per-rank split is not kept). "
        )
        body = text.replace(note, "") if note else text  # the lead has said what the note says
        if hi <= 0:
            body = ""  # no rank moved a byte through its own records: nothing "besides that" to say
        size = _shared_request_size(report, q)
        if size is not None:
            # "... and in what size?": the shared files' most common request size, which Darshan keeps per file
            lead = lead.rstrip()[:-1] + f", in requests of mostly {request_bytes(size)}. "
            values.append(exact(size, "bytes"))
        text = (
            lead
            + body.replace("Each rank", "Besides that, each rank", 1)
            .replace("Ranks ", "Besides that, ranks ", 1)
            .replace("Rank ", "Besides that, rank ", 1)
        ).rstrip()
        values += [exact(t.shared_files, "bare"), exact(shared, "bytes"), exact(shared / n, "bytes")]
    asked = q.raw.lower()
    if YES_NO.match(asked) and re.search(
        r"\b(same|equal\w*|even\w*|balanced|similar|identical|uneven\w*|unequal|"
        r"imbalanced|unbalanced|different)\b",
        asked,
    ):
        even = hi - lo <= 0.01 * max(hi, 1)
        negated = bool(re.search(r"\b(uneven\w*|unequal|imbalanced|unbalanced|different)\b", asked))
        text = f"{'Yes' if even != negated else 'No'}: {lower_first(text)}"
    return text, values + nv, [], []


def _shared_request_size(report: Report, q: Query) -> int | None:
    """The most common request size of the largest shared file, where the question asks a size."""
    if not re.search(r"\b(size|sized|how big)\b", q.raw.lower()):
        return None
    shared = [f for f in report.top_files if every_rank(report, f) and f.common_size]
    largest = max(shared, key=lambda f: f.bytes_read + f.bytes_written, default=None)
    return largest.common_size if largest is not None else None


def ranks_with_io(report: Report, q: Query) -> Out:
    t = report.rank_table
    n = report.job.nprocs
    if t.truncated:
        return None
    own = sorted(u.rank for u in t.ranks)
    if q.target == "every":
        # "do all 576 ranks do I/O?": yes when every rank has a record of its own or shares one
        if t.shared_files or len(own) >= n:
            how = (
                f"Darshan holds {t.shared_files:,} shared file(s) as one record for all {n:,} ranks"
                if t.shared_files
                else f"all {n:,} ranks have I/O records of their own"
            )
            return f"Yes: {how}.", [exact(n, "bare"), exact(t.shared_files, "bare")], [], []
        shown = ", ".join(str(r) for r in own[:10]) + (" ..." if len(own) > 10 else "")
        return (
            f"No: only {len(own):,} of the job's {n:,} ranks did I/O ({shown}).",
            [exact(len(own), "bare"), exact(n, "bare")],
            [],
            own[:10],
        )
    if t.shared_files:
        return (
            f"Every rank: Darshan holds {t.shared_files:,} shared file(s) as one record for all {n:,} ranks, and "
            f"{len(own):,} rank(s) have records of their own.",
            [exact(t.shared_files, "bare"), exact(n, "bare"), exact(len(own), "bare")],
            [],
            [],
        )
    if q.target == "others":
        if len(own) == 1:
            return (
                f"No: only rank {own[0]} has I/O records; the other {n - 1:,} of the job's {n:,} ranks did none.",
                [exact(n - 1, "bare"), exact(n, "bare")],
                [],
                own,
            )
        return (
            f"Yes: {len(own):,} of the job's {n:,} ranks have I/O records of their own.",
            [exact(len(own), "bare"), exact(n, "bare")],
            [],
            [],
        )
    besides = int(q.target) if q.target and q.target.isdigit() else None
    if q.yes_no and q.healthy and besides is None and not t.shared_files:
        # "is all the I/O done by one rank?": yes when one rank alone has records
        if len(own) == 1:
            return f"Yes: only rank {own[0]} did I/O, of the job's {n:,} ranks.", [exact(n, "bare")], [], own
        return (
            f"No: {len(own):,} of the job's {n:,} ranks did I/O.",
            [exact(len(own), "bare"), exact(n, "bare")],
            [],
            [],
        )
    if q.yes_no and besides is not None:
        # "did any rank other than 0 do I/O?": yes or no, from the ranks with records of their own
        others = [r for r in own if r != besides]
        yes, no = ("No: ", "Yes: ") if q.healthy else ("Yes: ", "No: ")
        if not others:
            return (
                f"{no}only rank {besides} has I/O records, of the job's {n:,} ranks.",
                [exact(n, "bare")],
                [],
                [besides],
            )
        shown = ", ".join(str(r) for r in others[:10]) + (" ..." if len(others) > 10 else "")
        return f"{yes}{len(others):,} other rank(s) did I/O: {shown}.", [exact(len(others), "bare")], [], others[:10]
    if len(own) == 1 and n <= 1:
        return f"Rank {own[0]}, the job's only rank, did all of its I/O.", [], [], own
    if len(own) == 1:
        return f"Only rank {own[0]} did I/O, of the job's {n:,} ranks.", [exact(n, "bare")], [], own
    shown = ", ".join(str(r) for r in own[:10]) + (" ..." if len(own) > 10 else "")
    return (
        f"{len(own):,} of the job's {n:,} ranks did I/O: {shown}.",
        [exact(len(own), "bare"), exact(n, "bare")],
        [],
        [],
    )


def _most_bytes_rank(report: Report, q: Query) -> Out:
    """ "Which rank wrote the most?": by bytes. Ranks' own records give each rank's bytes; a shared (reduced)
    record keeps only its slowest rank's bytes, which lead where they exceed every rank's own."""
    t = report.rank_table
    reading, writing = q.direction == "read", q.direction == "write"
    verb = "read" if reading else "wrote" if writing else "moved"

    def mine(r: RankUsage) -> int:
        return r.bytes_read if reading else r.bytes_written if writing else r.bytes_read + r.bytes_written

    own = max(t.ranks, key=lambda r: (mine(r), -r.rank)) if t.ranks else None
    # "at the POSIX level": the rank POSIX kept beneath a file counted at MPI-IO (the aggregator that wrote it)
    posix = bool(re.search(r"\bposix\b", q.raw.lower()))
    kept = [
        (k, f)
        for f in report.top_files
        for k in [f.posix_slowest if posix and f.posix_slowest is not None else f.kept_slowest]
        if k is not None
        and k.bytes
        and (f.bytes_written if writing else f.bytes_read if reading else f.bytes_read + f.bytes_written)
    ]
    top = max(kept, key=lambda k: (k[0].bytes or 0, -k[0].rank)) if kept else None
    if top is not None and (own is None or (top[0].bytes or 0) > mine(own)):
        k, f = top
        whole = f.bytes_read + f.bytes_written
        text = (
            f"Rank {k.rank}, as far as the log shows: Darshan kept it as the slowest rank of the shared "
            f"`{f.path}`, with {_b(k.bytes or 0)} of the file's {_b(whole)} ({percent((k.bytes or 0) / whole)}) in "
            f"{_s(k.seconds)}; the shared record keeps no other rank's share"
        )
        values = [exact(k.bytes or 0, "bytes"), exact(whole, "bytes"), exact(k.seconds, "seconds")]
        fast = None if k is f.posix_slowest else f.kept_fastest  # the same layer's pair only
        if fast is not None and fast.bytes is not None and fast.rank != k.rank:
            text += f" but its fastest, rank {fast.rank}, at {_b(fast.bytes)}"
            values.append(exact(fast.bytes, "bytes"))
        return text + ".", values, [f.path], [k.rank]
    if own is None or mine(own) <= 0:
        return None
    total = sum(mine(r) for r in t.ranks)
    n = len(t.ranks)
    low = min(mine(r) for r in t.ranks)
    if report.job.nprocs <= 1:
        return (
            f"The job ran one process: rank {own.rank} {verb} all {_b(mine(own))}.",
            [exact(mine(own), "bytes")],
            [],
            [own.rank],
        )
    if n > 1 and mine(own) <= 1.01 * low:
        text = f"No rank stands out: each of the {n:,} ranks with records of their own {verb} {_b(mine(own))}"
        values = [exact(mine(own), "bytes")]
    else:
        text = (
            f"Rank {own.rank} {verb} the most: {_b(mine(own))}, {percent(mine(own) / total)} of the {_b(total)} the "
            f"{n:,} ranks with records of their own {verb} (an even share would be {_b(total / n)})"
        )
        values = [exact(mine(own), "bytes"), exact(total, "bytes"), exact(total / n, "bytes")]
    if t.shared_files:
        text += f"; {t.shared_files:,} shared file(s) ({_b(t.shared_bytes)}) keep no per-rank split"
        values.append(exact(t.shared_bytes, "bytes"))
    return text + ".", values, [], [own.rank]


def busiest_rank(report: Report, q: Query) -> Out:
    if q.data:
        moved = _most_bytes_rank(report, q)
        if moved is not None:
            return moved
    s = report.io_share
    if s is None or s.slowest_rank is None:
        return None
    values = [exact(s.slowest_rank_io_s, "seconds"), exact(s.mean_rank_io_s, "seconds")]
    run = f", {percent(s.share_slowest)} of the {_s(s.runtime_s)} run" if s.runtime_s > 0 else ""
    own = [r.read_s + r.write_s + r.meta_s for r in report.rank_table.ranks]
    median = ""
    if len(own) > 2 and not report.rank_table.truncated:
        # "by how much?": against the typical rank too, which the mean hides when one rank is far out
        m = statistics.median(own)
        median = f" (median {_s(m)})"
        values.append(exact(m, "seconds"))
    on, paths = "", []
    j04 = report.finding("J04")
    if j04 is not None and j04.files and s.slowest_rank in j04.ranks:
        # "which rank is slowest, and on what?": the file it spent that time on, where the log names it
        fe = j04.files[0]
        secs = next((m.value for m in fe.metrics if m.name == "rank_io_time"), None)
        on = f"; most of it on `{fe.path}`" + (f" ({_s(float(secs))})" if isinstance(secs, (int, float)) else "")
        paths = [fe.path]
        if isinstance(secs, (int, float)):
            values.append(exact(float(secs), "seconds"))
        if re.search(r"\bwhy\b", q.raw.lower()):
            # "which rank is the straggler and why?": what it did alone, and the fix that evens it out
            from iodiag.analysis.outcomes.verdict import action_for

            alone = "no other rank touched" in j04.message and len(j04.files) == 1
            todo = action_for(j04)
            on += (", a file no other rank touched" if alone else "") + (
                f": {lower_first(todo).rstrip('.')}" if todo else ""
            )
    ranks = [s.slowest_rank]
    if re.search(r"\b(ranks|which ones|processes)\b", q.raw.lower()):
        # "which ranks are the slowest?": the others a cause names beside the busiest, where one does
        cause = next(
            (
                f
                for f in report.findings
                if f.severity in (Severity.CRITICAL, Severity.WARNING)
                and len(f.ranks) > 1
                and s.slowest_rank in f.ranks
                and f.code not in ("J02", "J04")
            ),
            None,
        )
        if cause is not None:
            shown = ", ".join(str(r) for r in cause.ranks[:8]) + (" ..." if len(cause.ranks) > 8 else "")
            on += f"; {cause.code} ({lower_first(cause.title)}) names {len(cause.ranks):,} ranks: {shown}"
            values.append(exact(len(cause.ranks), "bare"))
            ranks = list(cause.ranks)
    if report.job.nprocs > 1 and s.slowest_rank_io_s <= 1.01 * s.mean_rank_io_s and not on:
        # Every rank the same: naming one as "the slowest" would be a tie-break, not a finding
        return (
            f"No rank stands out: every rank spent about {_s(s.mean_rank_io_s)} in I/O (the busiest, rank "
            f"{s.slowest_rank}, {_s(s.slowest_rank_io_s)}{run}).",
            values,
            paths,
            [],
        )
    return (
        f"Rank {s.slowest_rank} spent the most time in I/O: {_s(s.slowest_rank_io_s)}{run}, against "
        f"{_s(s.mean_rank_io_s)} for the average rank{median}{on}.",
        values,
        paths,
        ranks,
    )


def files_per_rank(report: Report, q: Query) -> Out:
    t = report.rank_table
    counts = sorted(u.files for u in t.ranks)
    if not counts:
        return None
    lo, mid, hi = counts[0], int(statistics.median(counts)), counts[-1]
    values = [exact(lo, "bare"), exact(hi, "bare"), exact(len(counts), "bare")]
    if lo == hi:
        text = f"Each of the {len(counts):,} ranks with records of their own used {hi:,} file(s) of its own"
        if len(counts) > 1:
            text += f" ({sum(counts):,} in all)"
            values.append(exact(sum(counts), "bare"))
    else:
        text = f"Ranks used {lo:,} to {hi:,} files of their own ({mid:,} at the median, over {len(counts):,} ranks)"
    if q.yes_no:
        every = len(counts) >= report.job.nprocs > 0
        asked = q.raw.lower()
        if re.search(r"\b(just|only|exactly) (one|a single) file\b|\bone file each\b", asked):
            every = every and hi == 1  # "did each rank write just one file?": no when any used more
        elif re.search(r"\bmore than one file\b|\bseveral files\b|\bmultiple files\b", asked):
            every = every and lo > 1  # "did each rank write more than one file?"
        text = ("Yes: e" if every else "No: e") + text[1:] if lo == hi else ("Yes: " if every else "No: ") + text
        if len(counts) < report.job.nprocs:
            text += f"; {report.job.nprocs - len(counts):,} of the {report.job.nprocs:,} ranks have none"
    # What each rank moved through them, in the direction asked ("how many files did each rank write?").
    moved = sorted(
        by_direction(q.direction, u.bytes_read, u.bytes_written, u.bytes_read + u.bytes_written) for u in t.ranks
    )
    if moved and moved[-1] > 0:
        verb = {"write": "wrote", "read": "read"}.get(q.direction, "moved")
        mlo, mmid, mhi = moved[0], statistics.median(moved), moved[-1]
        text += (
            f", and each {verb} {_b(mhi)} through them"
            if _b(mlo) == _b(mhi)
            else f", and {verb} {_b(mlo)} to {_b(mhi)} through them ({_b(mmid)} at the median)"
        )
        values += [exact(mlo, "bytes"), exact(mhi, "bytes"), exact(mmid, "bytes")]
    if t.shared_files:
        text += f", besides {t.shared_files:,} shared file(s) every rank opened"
        values.append(exact(t.shared_files, "bare"))
    return text + ".", values, [], []


def _per_rank_families(
    report: Report, q: Query, ranks: int, per_rank: float, sized: bool
) -> tuple[str, list[Quantity]]:
    """Where each rank has one file of each of a few families ("snap_#" and "traj/frame#.xtc"): each family's part
    of a rank's bytes, and, where the calls did not say it, the request size ("... and what write size?")."""

    def moved(g: FileGroup) -> int:
        return by_direction(q.direction, g.bytes_read, g.bytes_written, g.bytes_read + g.bytes_written)

    fams = [
        g
        for g in report.file_groups
        if g.files == ranks and moved(g) > 0 and "*" not in g.pattern.rsplit("/", 1)[-1] and g.ranks == ranks
    ]
    fams = sorted(fams, key=lambda g: -moved(g))
    if not fams:
        return "", []
    out, values = "", []
    if len(fams) > 1 and abs(sum(moved(g) for g in fams) / ranks - per_rank) <= 0.01 * per_rank:
        # the families add up to the rank's bytes: each one's part
        out = " (" + " and ".join(f"{_b(moved(g) / ranks)} to its `{g.pattern}` file" for g in fams) + ")"
        values += [exact(moved(g) / ranks, "bytes") for g in fams]
    if sized and re.search(r"\b(size|sized|how big)\b", q.raw.lower()):
        g = fams[0]
        calls = by_direction(q.direction, g.calls.reads, g.calls.writes, g.calls.reads + g.calls.writes)
        if g.common_size:
            out += f" in requests of mostly {request_bytes(g.common_size)}"
            values.append(exact(g.common_size, "bytes"))
        elif calls:
            out += f" in {calls // ranks:,} requests of {_b(moved(g) / calls)} on average"
            values += [exact(moved(g) / calls, "bytes"), exact(calls // ranks, "bare")]
    return out, values


def rank_spread(report: Report, q: Query) -> Out:
    """Time per rank over the ranks with records of their own: the least, the median and the most."""

    def seconds(u: RankUsage) -> float:
        return by_direction(q.direction, u.read_s, u.write_s, u.read_s + u.write_s + u.meta_s)

    t = report.rank_table
    if q.data:
        out = _rank_bytes_spread(report, q)
        if out is not None and q.yes_no:
            # "Did some ranks write more data than others?": no where every rank moved the same
            even = out[0].startswith(("Each rank", "Rank "))
            return ("No: " if even else "Yes: ") + lower_first(out[0]), *out[1:]
        return out
    doing = {"write": "writing", "read": "reading"}.get(q.direction, "in I/O")
    note, nv = shared_note(report)
    times = sorted(seconds(u) for u in t.ranks)
    if not times:
        return None
    lo, mid, hi = times[0], statistics.median(times), times[-1]
    over = f"the {len(times):,} ranks with records of their own" + (" (the busiest listed)" if t.truncated else "")
    values = [exact(lo, "seconds"), exact(mid, "seconds"), exact(hi, "seconds"), exact(len(times), "bare")]
    n = report.job.nprocs
    shared = next((f for f in report.top_files if every_rank(report, f) and f.only_rank is None and f.slowest_s), None)
    if shared is not None and shared.slowest_s and shared.slowest_s > hi:
        # Most of the time is in a record Darshan keeps once for all ranks: its slowest rank is what is known.
        who = f" (rank {shared.slowest_rank})" if shared.slowest_rank is not None else ""
        text = (
            f"Darshan kept `{shared.path}` as one record for all {n:,} ranks, so each rank's time on it is not "
            f"recorded: its slowest rank{who} spent {_s(shared.slowest_s)} on it, {_s(shared.io_time_s / n)} per "
            f"rank on average" + (f"; their own records add {_s(lo)} to {_s(hi)} {doing}." if hi > 0 else ".")
        )
        return (
            text,
            [exact(shared.slowest_s, "seconds"), exact(shared.io_time_s / n, "seconds"), *values[:3]],
            [shared.path],
            [],
        )
    shared_files = [f for f in report.top_files if every_rank(report, f) and f.only_rank is None and f.slowest_s]
    s = report.io_share
    if (
        q.direction == "both"
        and hi - lo <= 0.05 * hi
        and shared_files
        and s is not None
        and s.slowest_rank_io_s > hi * 1.05
    ):
        # "how long does each rank spend in I/O in total?": its own records plus the shared files, of which Darshan
        # kept only the slowest rank's time; their sum is the busiest rank's I/O time
        up_to = sum(f.slowest_s or 0.0 for f in shared_files)
        run = f", {percent(s.share_slowest)} of the {_s(s.runtime_s)} run" if s.runtime_s > 0 else ""
        text = (
            f"Each rank spent about {_s(mid)} in I/O on its own records, plus up to {_s(up_to)} on the "
            f"{len(shared_files):,} shared file(s) Darshan keeps once for all ranks (their slowest rank's time): "
            f"{_s(s.slowest_rank_io_s)} in all on the busiest rank{run}."
        )
        values += [exact(up_to, "seconds"), exact(s.slowest_rank_io_s, "seconds")]
        if s.runtime_s > 0:
            values += [exact(s.share_slowest * 100, "percent"), exact(s.runtime_s, "seconds")]
        return text, values, [f.path for f in shared_files], []
    runtime = report.job.runtime_s
    if runtime > 0 and (
        re.search(r"\b(fraction|share|percent\w*|proportion|how much of the run)\b", q.raw.lower())
        or hi - lo <= 0.05 * hi  # every rank alike: its time, and what part of the run that is
    ):
        # "what fraction of the runtime did each rank spend writing?": the share leads
        doing += f", {percent(mid / runtime)} of the {_s(runtime)} run"
        values += [exact(mid / runtime * 100, "percent"), exact(runtime, "seconds")]
    if hi - lo <= 0.05 * hi:
        text = f"Each rank spent about {_s(mid)} {doing} ({_s(lo)} to {_s(hi)} over {over}).{note}"
    else:
        text = f"Ranks spent {_s(lo)} to {_s(hi)} {doing}, {_s(mid)} at the median, over {over}.{note}"
    return text, values + nv, [], []


_MORE_DATA = re.compile(r"\bmore (data|bytes)\b|\b(wr[io]te|writes|read|reads|moved?|moves) more\b")


def _rank_more_data(report: Report, q: Query, rank: int) -> Out:
    """ "Did rank 2 write more data than the other ranks?": its bytes against the other ranks' own records (its
    time is another question: a rank on a slow OST is slow with no more data than the rest)."""
    rows = {r.rank: r for r in report.rank_table.ranks}
    u = rows.get(rank)
    if u is None or len(rows) < 2:
        return None
    raw = q.raw.lower()
    writing = bool(re.search(r"\bwr[io]te|\bwrit", raw)) and not re.search(r"\bread", raw)
    reading = bool(re.search(r"\bread", raw)) and not writing
    verb = "read" if reading else "wrote" if writing else "moved"

    def b(r: RankUsage) -> int:
        return r.bytes_read if reading else r.bytes_written if writing else r.bytes_read + r.bytes_written

    others = [b(r) for r in rows.values() if r.rank != rank]
    med = statistics.median(others)
    more = b(u) > 1.5 * med and b(u) - med >= 1 << 20
    same = abs(b(u) - med) <= 0.01 * max(med, 1)
    # A little more than every other rank is still more: "yes, slightly", with how much, never a bare "no"
    slightly = not more and not same and b(u) > max(others)
    opener = "Yes" if more else "Yes, slightly" if slightly else "No"
    text = (
        f"{opener}: rank {rank} {verb} {_b(b(u))} through its own records, "
        + ("the same as" if same else "against")
        + f" {_b(med)} for the median of the other {len(others):,} ranks"
    )
    values = [exact(b(u), "bytes"), exact(med, "bytes")]
    if slightly:
        text += f" ({_b(b(u) - med)} more)"
        values.append(exact(b(u) - med, "bytes"))
    if more and med > 0:
        text += f" ({b(u) / med:.1f}x)"
        values.append(exact(b(u) / med, "times"))
    if report.rank_table.shared_files:
        text += f"; {report.rank_table.shared_files:,} shared file(s) keep no per-rank split"
    return text + ".", values, [], [rank]


def slow_rank(report: Report, q: Query) -> Out:
    rank = int(q.target or 0)
    if _MORE_DATA.search(q.raw.lower()):
        by_bytes = _rank_more_data(report, q, rank)
        if by_bytes is not None:
            return by_bytes
    rows = report.rank_table.ranks
    s = report.io_share
    if (
        q.yes_no
        and s is not None
        and s.slowest_rank is not None
        and re.search(r"\bthe (slowest|busiest|most loaded)\b", q.raw.lower())
    ):
        # "Is rank 0 the slowest rank for I/O?": the busiest rank by its whole I/O time, shared files included
        mean = s.share_mean * s.runtime_s
        if s.slowest_rank == rank:
            text = f"Yes: rank {rank} is the busiest rank in I/O, with {_s(s.slowest_rank_io_s)} against {_s(mean)} "
            text += "for the mean rank."
            return text, [exact(s.slowest_rank_io_s, "seconds"), exact(mean, "seconds")], [], [rank]
        text = f"No: rank {s.slowest_rank} is the busiest rank in I/O, with {_s(s.slowest_rank_io_s)}"
        return (
            text + f" (the mean rank: {_s(mean)}).",
            [exact(s.slowest_rank_io_s, "seconds"), exact(mean, "seconds")],
            [],
            [s.slowest_rank],
        )
    u = own_usage(report, rank)
    if u is None:
        return rank_time(report, q)
    times = [r.read_s + r.write_s + r.meta_s for r in rows]
    median = statistics.median(times)
    yardstick = "median"
    if (len(rows) < 0.5 * report.job.nprocs or len(rows) < 2) and s is not None and s.runtime_s > 0:
        # Most ranks live only in shared records: the mean rank's I/O time is the yardstick.
        median, yardstick = s.share_mean * s.runtime_s, "mean"
    mine = u.read_s + u.write_s + u.meta_s
    # Where Darshan kept this rank as a shared file's slowest (or fastest) rank, that time is its time too: a rank
    # slow only in a shared file would otherwise read as idle
    kept_on = []
    for f in report.top_files:
        # One kept rank per file: a file whose fastest and slowest rank are both this one counts once
        k = next((x for x in (f.kept_slowest, f.kept_fastest) if x is not None and x.rank == rank), None)
        if k is not None:
            kept_on.append((f, k))
    kept = sum(k.seconds for _, k in kept_on)
    if kept > 0 and s is not None and s.runtime_s > 0:
        # Its own records alone are no yardstick then: the mean rank counts every rank's part of the shared files
        mine += kept
        median, yardstick = s.share_mean * s.runtime_s, "mean"
    if yardstick == "mean" and s is not None and s.slowest_rank == rank and s.slowest_rank_io_s > mine:
        # The mean counts every rank's part of the shared files: so does the busiest rank's own time
        mine = s.slowest_rank_io_s
    values = [exact(mine, "seconds"), exact(median, "seconds")]
    # A file only it used that is not one of a per-rank family (every rank writes its own frame.N.xtc)
    families = [group_regex(g) for g in report.file_groups if g.ranks > 1 and g.files > 1 and "#" in g.pattern]
    alone = max(
        (f for f in report.top_files if f.only_rank == rank and not any(rx.fullmatch(f.path) for rx in families)),
        key=lambda f: f.io_time_s,
        default=None,
    )
    extra = mine - median
    solo = report.finding("J04")
    if alone is None and solo is not None and rank in solo.ranks:
        # The imbalance finding lists the files the rank alone touched: the one outside a per-rank family
        for fe in solo.files:
            t = next((float(m.value) for m in fe.metrics if m.name == "rank_io_time"), 0.0)
            if not any(rx.fullmatch(fe.path) for rx in families) and t >= 0.5 * extra and extra >= 0.5:
                text = (
                    f"{'Yes: r' if q.yes_no else 'R'}ank {rank} spent {_s(mine)} in I/O against {_s(median)} for the "
                    f"{yardstick} rank: the {_s(extra)} more went to `{fe.path}`, which only it used ({_s(t)} there)."
                )
                return text, [*values, exact(extra, "seconds"), exact(t, "seconds")], [fe.path], [rank]
    if (
        alone is not None
        and mine < 1.5 * median
        and extra >= 0.5
        and alone.io_time_s >= 0.5 * extra
        and alone.bytes_read + alone.bytes_written > 0
    ):
        # Slower by work only it did, not by being slow: "6.37 s against 4.25 s: the 2.12 s more went to mesh.bin"
        verb = "read" if alone.bytes_read >= alone.bytes_written else "wrote"
        text = (
            f"{'Yes: r' if q.yes_no else 'R'}ank {rank} spent {_s(mine)} in I/O against {_s(median)} for the "
            f"{yardstick} rank: the {_s(extra)} more went to `{alone.path}`, which only it used (it {verb} "
            f"{_b(alone.bytes_read + alone.bytes_written)} there in {_s(alone.io_time_s)})."
        )
        values += [exact(extra, "seconds"), exact(alone.bytes_read + alone.bytes_written, "bytes")]
        values.append(exact(alone.io_time_s, "seconds"))
        return text, values, [alone.path], [rank]
    if mine < 1.5 * median or (mine - median < 1.0 and (q.yes_no or not re.search(r"\bwhy\b", q.raw.lower()))):
        return (
            f"{'No: r' if q.yes_no else 'R'}ank {rank} is not slow: it spent {_s(mine)} in I/O"
            + (f" ({percent(mine / report.job.runtime_s)} of the run)" if report.job.runtime_s > 0 else "")
            + f" against {_s(median)} for the {yardstick} rank.",
            values,
            [],
            [rank],
        )
    why = next(
        (
            f
            for f in report.findings
            if rank in f.ranks
            and f.severity in (Severity.CRITICAL, Severity.WARNING)
            and f.code not in ("J02", "J04", "P19", "T01")
        ),
        None,
    )
    moved = u.bytes_read + u.bytes_written + sum(k.bytes or 0 for _, k in kept_on)
    total = sum(bytes_moved(i) for i in counted_interfaces(report))
    mean_bytes = total / max(report.job.nprocs, 1)
    # What it was doing: the file it alone used with the most time ("rank 0 reads uniref90.fasta alone"); not
    # its own member of a family every rank has (frame0129.0.xtc beside every rank's frame0129.N.xtc), which
    # is the same work the others did, unless nothing else is left
    families = [group_regex(g) for g in report.file_groups if g.ranks > 1 and g.files > 1 and "#" in g.pattern]
    mine_alone = [f for f in report.top_files if f.only_rank == rank]
    apart = [f for f in mine_alone if not any(rx.fullmatch(f.path) for rx in families)]
    alone = max(apart or mine_alone, key=lambda f: f.io_time_s, default=None)
    on = f", most of it on `{alone.path}` ({_s(alone.io_time_s)}), which only it used" if alone else ""
    biggest = max(kept_on, key=lambda x: x[1].seconds, default=None)
    if biggest is not None and (alone is None or biggest[1].seconds > alone.io_time_s):
        # Its time in a shared file, as the rank Darshan kept for it: what it moved there, when the record says
        shared_f, shared_k = biggest
        which = "slowest" if shared_f.kept_slowest is shared_k else "fastest"
        said = f"{_b(shared_k.bytes)} in " if shared_k.bytes else ""
        on = f", most of it on the shared `{shared_f.path}` ({said}{_s(shared_k.seconds)}, as its {which} rank)"
        alone = None
    heavy = mean_bytes > 0 and moved > 2 * mean_bytes
    more = f"{moved / mean_bytes:.1f}x the mean rank's data: the work sits on it" if heavy else "no more data than most"
    if why is not None:
        from iodiag.analysis.outcomes.verdict import action_for

        todo = action_for(why)
        named = f"{why.code}: {why.subject}" if why.subject else why.code
        # The cause in the same sentence as the numbers: the first sentence answers "why".
        reason = f"; {lower_first(why.title)} ({named}) names it." + (f" {todo}" if todo else "")
        reason = reason if reason.endswith(".") else reason + "."
    elif heavy:
        reason = (
            " Distributing that work over all ranks (parallel I/O, e.g. through MPI-IO, or reading it once and"
            " broadcasting) is the fix."
        )
    else:
        reason = _like_slow_ost_ranks(report, rank, mine) or " No finding in the log explains it."
    text = (
        f"{'Yes: r' if q.yes_no else 'R'}ank {rank} spent {_s(mine)} in I/O, "
        f"{mine / median:.1f}x the {yardstick} rank's "
        f"{_s(median)}, moving {_b(moved)} ({more}){on}" + (reason if reason.startswith(";") else f".{reason}")
    )
    values += [exact(mine / median, "times"), exact(moved, "bytes")]
    if alone is not None:
        values.append(exact(alone.io_time_s, "seconds"))
    if heavy:
        values.append(exact(moved / mean_bytes, "times"))
    return text, values, [], [rank]


def _like_slow_ost_ranks(report: Report, rank: int, mine: float) -> str:
    """Where the slow-OST finding lists only some of the ranks with data on that OST and this rank's own time
    matches theirs, say so, hedged: the log does not list the rest, but nothing else takes a rank that long."""
    f = report.finding("L04")
    if f is None or not f.ranks or rank in f.ranks:
        return ""
    ev = {m.name: m.value for m in f.evidence}
    count, ost = int(ev.get("ranks_on_slow_ost", 0) or 0), ev.get("slow_ost")
    own = {r.rank: r.read_s + r.write_s + r.meta_s for r in report.rank_table.ranks}
    theirs = [own[r] for r in f.ranks if r in own]
    if count <= len(f.ranks) or not theirs:
        return ""
    typical = statistics.median(theirs)
    if not 0.8 * typical <= mine <= 1.25 * typical:
        return ""
    return (
        f" No finding names rank {rank}, but the slow-OST finding (L04) lists only {len(f.ranks)} of the "
        f"{count:,} ranks with data on OST {ost}, and their {_s(typical)} each match rank {rank}'s: it is most "
        "likely one of them."
    )


def slow_ranks(report: Report, q: Query) -> Out:
    """Which ranks are slow: those whose files sit on a slow OST, else those the imbalance finding names."""
    f = report.finding("L04")
    if f is not None and f.ranks:
        ost = next((m.value for m in f.evidence if m.name == "slow_ost"), None)
        count = next((int(m.value) for m in f.evidence if m.name == "ranks_on_slow_ost"), len(f.ranks))
        hit, hv = ranks_on_slow_ost(report, list(f.ranks), count)
        shown = ", ".join(str(r) for r in f.ranks[:8]) + (", ..." if count > min(len(f.ranks), 8) else "")
        tail = hit.split("), ", 1)[1] if "), " in hit else ""
        text = f"{count:,} rank(s) are slow ({shown}): their data sits on slow OST {ost}" + (
            f", {tail}" if tail else ""
        )
        other = _slow_for_another_reason(report, q, set(f.ranks))
        if other is not None:
            # A second straggler the slow OST does not explain (rank 0 reading the input alone): its own why
            more, mv, mf, mr = other
            return f"{text}. {more}", [*hv, *mv], mf, [*f.ranks, *mr]
        return text + ".", hv, [], list(f.ranks)
    return any_slow_rank(report, q)


def _slow_for_another_reason(report: Report, q: Query, explained: set[int]) -> Out:
    """The slowest rank outside ``explained`` that is slow by the single-rank rule (at least 1.5x the yardstick
    and a second more), said as "Also rank N ...", or None."""
    s = report.io_share
    if s is None or s.runtime_s <= 0:
        return None
    candidates = {r.rank for r in sorted(report.rank_table.ranks, key=lambda r: -(r.read_s + r.write_s + r.meta_s))[:4]}
    candidates |= {f.kept_slowest.rank for f in report.top_files if f.kept_slowest is not None}
    if s.slowest_rank is not None:
        candidates.add(s.slowest_rank)
    found: list[tuple[float, tuple[str, list[Quantity], list[str], list[int]]]] = []
    own = {r.rank: r.read_s + r.write_s + r.meta_s for r in report.rank_table.ranks}
    for rank in sorted(candidates - explained):
        if rank < 0 or _like_slow_ost_ranks(report, rank, own.get(rank, 0.0)):
            continue  # most likely one of the slow OST's ranks the finding does not list
        asked = q.model_copy(update={"target": str(rank), "yes_no": True, "raw": f"is rank {rank} slow?"})
        out = slow_rank(report, asked)
        if out is None or not out[0].startswith("Yes: "):
            continue
        mine = out[1][0].value if out[1] else 0.0
        found.append((mine, out))
    if not found:
        return None
    _, (text, values, files, ranks) = max(found, key=lambda x: x[0])
    return "Also " + lower_first(text.removeprefix("Yes: ")), values, files, ranks


def rank_files(report: Report, q: Query) -> Out:
    """How many files one rank used: its own records, and the shared ones every rank holds."""
    rank = int(q.target or 0)
    t = report.rank_table
    u = own_usage(report, rank)
    if u is None:
        if t.truncated:
            return None
        shared = f"; it used only the {t.shared_files:,} shared file(s) every rank has" if t.shared_files else ""
        return f"Rank {rank} has no file records of its own{shared}.", [exact(t.shared_files, "bare")], [], [rank]
    shared = f", besides the {t.shared_files:,} shared file(s) Darshan keeps one record for" if t.shared_files else ""
    values = [exact(u.files, "bare"), *([exact(t.shared_files, "bare")] if t.shared_files else [])]
    did: list[str] = []
    for way, verb, prep, moved in (("write", "wrote", "to", u.bytes_written), ("read", "read", "from", u.bytes_read)):
        if moved and u.files and q.direction in ("both", way):
            # "how many json files did rank 5 write?": what it moved with them comes with the count
            did.append(f"{verb} {_b(moved)} {prep} them ({_b(moved / u.files)} per file on average)")
            values += [exact(moved, "bytes"), exact(moved / u.files, "bytes")]
    moved_text = ": it " + " and ".join(did) if did else ""
    return f"Rank {rank} used {u.files:,} file(s) of its own{moved_text}{shared}.", values, [], [rank]


def answer_ranks(report: Report, q: Query) -> Out:
    n = report.job.nprocs
    s = report.io_share
    if s is None or s.runtime_s <= 0:
        return f"The job ran {n:,} rank(s).", [exact(n, "bare")], [], []
    # "how many ranks, and how long did it run / was the slowest one in I/O?": what comes with the count
    busiest = (
        f"; its busiest rank, rank {s.slowest_rank}, spent {_s(s.slowest_rank_io_s)} in I/O"
        if s.slowest_rank is not None and s.slowest_rank_io_s > 0
        else ""
    )
    values = [exact(n, "bare"), exact(s.runtime_s, "seconds")]
    values += [exact(s.slowest_rank_io_s, "seconds")] if busiest else []
    return f"The job ran {n:,} rank(s) for {_s(s.runtime_s)}{busiest}.", values, [], []


def any_slow_rank(report: Report, q: Query) -> Out:
    s = report.io_share
    if s is None or s.mean_rank_io_s <= 0:
        return None
    j04 = report.finding("J04")
    values = [exact(s.slowest_rank_io_s, "seconds"), exact(s.mean_rank_io_s, "seconds")]
    who = f"rank {s.slowest_rank}" if s.slowest_rank is not None else "the busiest rank"
    # "Is any rank slow?" is answered yes on an imbalance; "is the I/O balanced?" (healthy) is answered no.
    yes, no = ("No: ", "Yes: ") if q.healthy else ("Yes: ", "No: ")
    if j04 is not None:
        return (
            f"{yes if q.yes_no else ''}{lower_first(j04.message) if q.yes_no else j04.message}",
            values,
            [],
            list(j04.ranks),
        )
    return (
        f"{no if q.yes_no else ''}the busiest rank ({who}, {_s(s.slowest_rank_io_s)} of I/O) is close to the "
        f"average rank's {_s(s.mean_rank_io_s)}: no rank holds the others up.",
        values,
        [],
        [],
    )


def fastest_rank(report: Report, q: Query) -> Out:
    """The rank with the least I/O time: among ranks with records of their own when every rank has them; where
    the I/O sits in a shared record, the fastest rank Darshan kept for the largest shared file."""
    t = report.rank_table
    shared = [f for f in report.top_files if f.kept_fastest is not None]
    largest = max(shared, key=lambda f: f.bytes_read + f.bytes_written, default=None)
    own_bytes = sum(u.bytes_read + u.bytes_written for u in t.ranks)
    if t.ranks and not t.truncated and len(t.ranks) == report.job.nprocs and own_bytes >= t.shared_bytes:
        u = min(t.ranks, key=lambda r: (r.read_s + r.write_s + r.meta_s, r.rank))
        slow = max(t.ranks, key=lambda r: (r.read_s + r.write_s + r.meta_s, -r.rank))
        mine, top = u.read_s + u.write_s + u.meta_s, slow.read_s + slow.write_s + slow.meta_s
        text = (
            f"Rank {u.rank} was the fastest: {_s(mine)} of I/O on its own records, against {_s(top)} for the "
            f"slowest, rank {slow.rank}."
        )
        return text, [exact(mine, "seconds"), exact(top, "seconds")], [], [u.rank]
    if largest is None or largest.kept_fastest is None:
        return None
    fast, slow_k = largest.kept_fastest, largest.kept_slowest
    text = f"Rank {fast.rank} was the fastest Darshan kept for the shared `{largest.path}`: {_s(fast.seconds)}"
    values = [exact(fast.seconds, "seconds")]
    if slow_k is not None and slow_k.rank != fast.rank:
        text += f", against {_s(slow_k.seconds)} for the slowest, rank {slow_k.rank}"
        values.append(exact(slow_k.seconds, "seconds"))
    return text + " (its one record keeps no other rank's time).", values, [largest.path], [fast.rank]
