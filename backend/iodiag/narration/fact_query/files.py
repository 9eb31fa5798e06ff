"""Answers about files and groups of files: usage, request sizes, order, alignment, calls, why a file is slow."""

from __future__ import annotations

import re
import statistics

from iodiag.analysis.models import (
    FileGroup,
    FileUsage,
    OpCounts,
    Report,
    Severity,
)
from iodiag.analysis.views.file_usage import READ_AGAIN
from iodiag.core.units import request_bytes
from iodiag.narration.checking.quantities import Quantity, exact
from iodiag.narration.checking.untrusted import quote, quote_command
from iodiag.narration.fact_query.common import (
    FS_NAMES,
    SMALL_REQUEST,
    Out,
    aggregators,
    bytes_moved,
    counted_interfaces,
    every_rank,
    kept_ranks,
    kept_spread,
    lower_first,
    misaligned,
    mostly_metadata,
    no_module,
    per_rank,
    percent,
    request_profile,
    shared_note,
    software_kinds,
    totals,
)
from iodiag.narration.fact_query.common import (
    fmt_bytes as _b,
)
from iodiag.narration.fact_query.common import (
    fmt_seconds as _s,
)
from iodiag.narration.fact_query.names import (
    KIND_EXTENSIONS,
    compared_sides,
    folder_group,
    glob_group,
    group_has,
    group_named,
    group_of_name,
    group_regex,
    is_named,
    loose_name,
    name_pattern,
    named_in,
)
from iodiag.narration.fact_query.query import Direction, Query
from iodiag.narration.fact_query.vocabulary import (
    CALL_NOUN,
    EVERY_RANK,
    FIX_ASK,
    META_VS_DATA,
    REREAD,
    WHY_SLOW,
    size_asked,
    size_meets,
)


def sequential(report: Report, q: Query) -> Out:
    """Were a file's (or a group's) reads or writes sequential: Darshan's consecutive and sequential counters,
    which only its POSIX module keeps. ``q.missing`` asks "random?", answered yes where "sequential?" is no."""
    f = None
    if q.target:
        f = next((x for x in report.top_files if is_named(x.path, q.target)), None)
    group = group_named(report, q.raw) if f is None else None
    if f is None and group is None:
        word = loose_name(" ".join(q.raw.lower().split()), report)
        matching = [g for g in report.file_groups if word and group_has(g, word)]
        group = max(matching, key=lambda g: g.files, default=None)
        if group is None:
            f = next((x for x in report.top_files if word and word in x.path.rsplit("/", 1)[-1].lower()), None)
    if group is not None:
        if group.layer != "POSIX":
            return None
        c, what, layer, paths = group.calls, f"the {group.files:,} `{group.pattern}` files", "POSIX", []
    elif f is not None:
        c = f.posix_calls if f.layer != "POSIX" and f.posix_calls is not None else f.calls
        what, layer, paths = f"`{f.path}`", f.layer, [f.path]
        if f.layer not in ("POSIX", "MPI-IO") and c is f.calls:
            return (
                f"The log cannot tell: Darshan counts consecutive and sequential requests only in its POSIX module, "
                f"and `{f.path}` is counted at {f.layer}.",
                [],
                [f.path],
                [],
            )
    elif q.target is None and not loose_name(" ".join(q.raw.lower().split()), report):
        # "Is the input read randomly?" with no file the report names: the job's POSIX requests.
        posix = next((i for i in report.interfaces if i.name == "POSIX" and i.records), None)
        if posix is None:
            # No POSIX module: DFS, STDIO or HDF5 alone keep no offset counters, so the order is unknown, not fine
            modules = [i.name for i in counted_interfaces(report) if bytes_moved(i) > 0]
            if not modules:
                return None
            return (
                f"The log cannot tell: Darshan counts consecutive and sequential requests only in its POSIX module, "
                f"and this job's I/O went through {' and '.join(modules)}, which "
                f"{'keeps' if len(modules) == 1 else 'keep'} no offset counters.",
                [],
                [],
                [],
            )
        c, what, layer, paths = posix.calls, "the job (POSIX)", "POSIX", []
    else:
        return None
    writes = q.direction == "write" or (q.direction == "both" and c.writes > c.reads)
    n, consec, seq = (c.writes, c.consec_writes, c.seq_writes) if writes else (c.reads, c.consec_reads, c.seq_reads)
    noun = "writes" if writes else "reads"
    if n <= 0:
        return None
    mostly = consec >= 0.8 * n
    back = n - seq
    if re.search(r"\b(random\w*|sequential\w*)\b.*\bor\b.*\b(random\w*|sequential\w*)\b", q.raw.lower()):
        # "random or sequential?" asks which, not whether: the kind leads
        word = (
            "Sequential: "
            if mostly or back < 0.2 * n
            else "Random: "
            if seq < 0.5 * n
            else "Mixed, about half sequential and half going back in the file: "
        )
    elif q.missing:  # "is it read randomly?": yes when a fifth or more of the requests go back in the file
        word = ("Yes: " if back >= 0.2 * n else "No: ") if q.yes_no else ""
    else:
        word = ("Yes: " if mostly else "No: ") if q.yes_no else ""
    # the requests' size: "how big are the reads, and are they sequential?" asks both, and a random pattern of
    # large requests costs less than one of small ones
    moved = None
    if group is not None:
        moved = group.bytes_written if writes else group.bytes_read
    elif f is not None and c is f.calls:
        moved = f.bytes_written if writes else f.bytes_read
    size = f" ({_b(moved / n)} on average)" if moved else ""
    text = (
        f"{word}of the {n:,} {noun}{size} of {what}, {consec:,} started where the previous one ended (consecutive) "
        f"and {seq:,} after it ({percent(seq / n)}: sequential, gaps allowed)"
    )
    values = [exact(n, "bare"), exact(consec, "bare"), exact(seq, "bare"), exact(seq / n * 100, "percent")]
    if moved:
        values.append(exact(moved / n, "bytes"))
    if not mostly:
        text += f"; {back:,} went back in the file"
        values.append(exact(back, "bare"))
    if (c.seeks and layer == "POSIX") or (f is not None and c is f.posix_calls and c.seeks):
        text += f", with {c.seeks:,} seeks"
        values.append(exact(c.seeks, "bare"))
    return (text[0].upper() + text[1:] if not word else text) + ".", values, paths, []


def chunk_size(report: Report, q: Query) -> Out:
    """A DAOS file's chunk size (DFS_CHUNK_SIZE) and how its requests sit against it."""
    files = [f for f in report.top_files if f.chunk_size and is_named(f.path, q.target)]
    if not files:
        if not any(i.name in ("DFS", "DAOS") and i.records for i in report.interfaces):
            return "The log has no DFS records, so it records no DAOS chunk size.", [], [], []
        return None
    f = files[0]
    chunk = f.chunk_size or 0
    same = [g for g in files if g.chunk_size == chunk]
    who = (
        f"`{f.path}`"
        if len(same) == 1 or q.target
        else f"The {len(same):,} DFS files the report lists (`{f.path}`, ...)"
    )
    verb = "uses" if len(same) == 1 or q.target else "use"
    text = f"{who} {verb} a DFS chunk size of {_b(chunk)}"
    values = [exact(chunk, "bytes")]
    fits: bool | None = None
    if f.common_size:
        size = f.common_size
        whose = "its" if len(same) == 1 or q.target else f"`{f.path.rsplit('/', 1)[-1]}`'s"
        text += f"; {whose} requests are mostly {request_bytes(size)} ({f.common_count:,} of them)"
        values += [exact(size, "bytes"), exact(f.common_count, "bare")]
        if size % chunk == 0:
            text += f", {size // chunk:,} chunk(s) each"
            fits = True
        elif chunk % size == 0:
            # A request that divides the chunk stays inside one chunk; it takes several of them to fill it
            text += f", 1/{chunk // size:,} of a chunk, so each chunk takes {chunk // size:,} requests"
            fits = False
        else:
            text += ", not a multiple of the chunk, so requests straddle chunk boundaries"
            fits = False
    if (
        q.yes_no
        and fits is not None
        and re.search(r"\b(multiple|align\w*|fit\w*|match\w*|sized?|size[ds]? to)\b", q.raw.lower())
    ):
        text = ("Yes: " if fits else "No: ") + lower_first(text)
    return text + ".", values, [f.path], []


# "How many files did it open?": opened, not merely named in the log or moved bytes
_OPENED = re.compile(r"\b(open|opened|opens|fopen\w*)\b")


def _opened_without_data(report: Report) -> Out:
    """ "How many files were opened but never read or written?": opened for nothing but their metadata."""
    n, opened = report.files_opened_without_data, report.files_opened
    if not opened:
        return None
    text = f"{n:,} of the {opened:,} file(s) the job opened were never read or written"
    values = [exact(n, "bare"), exact(opened, "bare")]
    idle = [g for g in report.file_groups if g.files >= 2 and not g.bytes_read and not g.bytes_written and g.opens]
    if n and idle:
        g = max(idle, key=lambda x: x.files)
        text += f", {g.files:,} of them the `{g.pattern}` files ({g.opens:,} opens, {g.stats:,} stats)"
        values += [exact(g.files, "bare"), exact(g.opens, "bare"), exact(g.stats, "bare")]
    return text + ".", values, [], []


def _files_opened(report: Report) -> Out | None:
    calls = sum(i.calls.opens for i in report.interfaces)
    if not report.files_opened and calls:
        return None  # a report stored before files_opened was counted: it would read 0
    n, io = report.files_opened, report.files_with_io
    values = [exact(n, "bare")]
    if not n:
        text = (
            f"Darshan counted no open for any of the log's {report.job.files:,} file record(s): the files were "
            "opened before Darshan started, or through calls it does not intercept"
        )
        values = [exact(0, "bare"), exact(report.job.files, "bare")]
        if io:
            text += f"; {io:,} of them still show I/O"
            values.append(exact(io, "bare"))
        return text + ".", values, [], []
    text = f"The job opened {n:,} file(s)"
    per = [(i.name, i.opened_files) for i in report.interfaces if i.opened_files and i.name in _OPEN_LAYERS]
    if len(per) > 1 and any(k != n for _, k in per):
        # A file opened through MPI-IO is opened at POSIX too: each layer's count, not their sum
        text += " (" + ", ".join(f"{k:,} at {name}" for name, k in sorted(per, key=lambda x: -x[1])) + ")"
        values += [exact(k, "bare") for _, k in per]
    if io != n:
        text += f"; {io:,} file(s) had I/O"
        values.append(exact(io, "bare"))
    return text + ".", values, [], []


_OPEN_LAYERS = ("POSIX", "MPI-IO", "STDIO", "DFS")


def answer_files(report: Report, q: Query) -> Out:
    if re.search(r"\blog\b.*\b(list|lists|contain\w*|hold\w*|record\w*|name\w*)\b", q.raw.lower()):
        # "How many files does the log list?": every file record, with or without I/O.
        return (
            f"The log names {report.job.files:,} file(s), {report.files_with_io:,} of them with I/O.",
            [exact(report.job.files, "bare"), exact(report.files_with_io, "bare")],
            [],
            [],
        )
    group = group_named(report, q.raw)
    if group is not None:
        # "how many png files and how much data in them?": the bytes come with the count
        asks_bytes = re.search(r"\b(bytes|how much|how big|data|volume|size|[kmgt]i?b)\b", q.raw.lower())
        return group_answer(group, q, moved=bool(asks_bytes), nprocs=report.job.nprocs)
    if q.direction in ("read", "write") and (report.files_read or report.files_written):
        n, verb = (report.files_read, "read") if q.direction == "read" else (report.files_written, "wrote")
        values = [exact(n, "bare"), exact(report.files_with_io, "bare")]
        moved = ""
        if re.search(r"\b(bytes|how much|how big|data|volume|size|[kmgt]i?b)\b", q.raw.lower()):
            # "how much did warpx write and into how many files?": the bytes with the count
            read, written = totals(report)
            amount = read if q.direction == "read" else written
            moved = f" {_b(amount)} {'from' if q.direction == 'read' else 'to'}"
            values.append(exact(amount, "bytes"))
        text = f"The job {verb}{moved} {n:,} file(s) (of {report.files_with_io:,} with any I/O)."
        return text, values, [], []
    if _OPENED.search(q.raw.lower()) and re.search(
        r"\b(never|not|without|no|nothing|but)\b.*\b(read|writ\w*|wrote|data|bytes|i/?o|used)\b", q.raw.lower()
    ):
        idle = _opened_without_data(report)
        if idle is not None:
            return idle
    if _OPENED.search(q.raw.lower()):
        opened = _files_opened(report)
        if opened is not None:
            return opened
    text = f"The job did I/O on {report.files_with_io:,} file(s)"
    values = [exact(report.files_with_io, "bare")]
    own = {u.files for u in report.rank_table.ranks}
    t = report.rank_table
    if len(own) == 1 and len(t.ranks) == report.job.nprocs > 1 and next(iter(own)) and not t.shared_files:
        # Every rank with the same number of files of its own: file per process
        k = next(iter(own))
        text += f", {k:,} per rank (file per process)"
        values.append(exact(k, "bare"))
    per = [(i.name, i.own_files) for i in report.interfaces if i.own_files]
    if len(per) > 1:
        # "How many files?" often means the ones of the main interface: each count, in the same sentence.
        text += ": " + ", ".join(f"{n:,} at {name}" for name, n in sorted(per, key=lambda x: -x[1]))
        values += [exact(n, "bare") for _, n in per]
    return text + ".", values, [], []


# Where the question asks what the file system saw, not what the application asked for
_BENEATH = re.compile(
    r"\b(reach(es|ed)?|hit(s|ting)?|get to|arrive at|land on|make it to|seen by|see)\b.*\b(lustre|gpfs|file ?system|"
    r"disk|storage|osts?|posix)\b|\b(at|on|through|in) (the )?posix\b|\bposix[- ](level|layer|side)\b"
)


def _request_size_beneath(report: Report, f: FileUsage, direction: Direction) -> Out:
    """A file's requests as they reached the file system: its POSIX calls beneath MPI-IO (two-phase I/O and data
    sieving resize them), from the cross-layer summary."""
    files = report.cross_layer.files if report.cross_layer else []
    c = next((x for x in files if x.path == f.path), None)
    posix = c.layer("POSIX") if c else None
    if posix is None:
        return None
    parts, values = [], []
    above_n, above_b = 0, 0
    for verb, st, n, moved in (
        ("write", posix.writes, f.calls.writes, f.bytes_written),
        ("read", posix.reads, f.calls.reads, f.bytes_read),
    ):
        if st.ops <= 0 or (direction != "both" and not verb.startswith(direction[:4])):
            continue
        size = st.typical_bytes or st.mean_bytes
        kind = "mostly" if st.typical_bytes else "on average"
        parts.append(f"{st.ops:,} POSIX {verb}s of {kind} {_b(size)} ({_b(st.bytes)})")
        values += [exact(st.ops, "bare"), exact(size, "bytes"), exact(st.bytes, "bytes")]
        above_n, above_b = above_n + n, above_b + moved
    if not parts:
        return None
    text = f"`{f.path}` reached the file system as " + " and ".join(parts)
    if above_n:
        # What the application asked for, one layer up: the difference is what the layer did to the requests
        text += f", beneath {above_n:,} {f.layer} calls of {_b(above_b / above_n)} on average"
        values += [exact(above_n, "bare"), exact(above_b / above_n, "bytes")]
    return text + ".", values, [f.path], []


def _access_kind(f: FileUsage, q: Query) -> tuple[str, list[Quantity]]:
    """What a request-size question also asks about the same requests: their order ("size and pattern?", POSIX
    files, whose offsets Darshan follows) or whether they were collective ("collective or independent, and what
    size?", MPI-IO files)."""
    raw = q.raw.lower()
    c = f.calls
    if re.search(r"\b(collective\w*|independent\w*)\b", raw) and f.layer == "MPI-IO":
        n = c.reads + c.writes
        if n:
            kind = "independent" if not f.collective else "collective" if f.collective >= n else "partly collective"
            return f"{kind}: {f.collective:,} of its {n:,} MPI-IO calls were collective", [
                exact(f.collective, "bare"),
                exact(n, "bare"),
            ]
    if re.search(r"\b(pattern|sequential\w*|random\w*|order|contiguous)\b", raw) and f.layer == "POSIX":
        reads = q.direction == "read" or (q.direction == "both" and c.reads >= c.writes)
        n, seq = (c.reads, c.seq_reads) if reads else (c.writes, c.seq_writes)
        if n:
            verb = "reads" if reads else "writes"
            share = seq / n
            # Random offsets still land past the previous request about half the time: only a large share is order
            kind = "sequential" if share >= 0.8 else "partly sequential" if share >= 0.65 else "random (non-sequential)"
            return f"{kind}: {seq:,} of its {n:,} {verb} start past the previous one ({percent(share)})", [
                exact(seq, "bare"),
                exact(n, "bare"),
            ]
    return "", []


def request_size(report: Report, q: Query) -> Out:
    asked = size_asked(q.raw)
    if not q.yes_no or asked is None:
        return _request_size(report, q)
    out = _request_size(report, q.model_copy(update={"yes_no": False}))
    f = next((x for x in report.top_files if q.target and is_named(x.path, q.target)), None)
    if f is None:
        return _size_yes_no(out, asked)
    if q.direction in ("read", "write") and not (f.calls.reads if q.direction == "read" else f.calls.writes):
        # "are the writes to hist.h5 under 1 MiB?" of a file only read: there are none, and that is the answer
        other, n_other, moved_other = (
            ("written", f.calls.writes, f.bytes_written)
            if q.direction == "read"
            else ("read", f.calls.reads, f.bytes_read)
        )
        text = f"No: `{f.path}` had no {q.direction}s (0 B {'read' if q.direction == 'read' else 'written'})"
        text += f"; it was {other}, {_b(moved_other)} in {n_other:,} calls." if n_other else "."
        return text, [exact(0, "bytes"), exact(moved_other, "bytes"), exact(n_other, "bare")], [f.path], []
    if out is None:
        return out
    n, moved = {
        "read": (f.calls.reads, f.bytes_read),
        "write": (f.calls.writes, f.bytes_written),
    }.get(q.direction, (f.calls.reads + f.calls.writes, f.bytes_read + f.bytes_written))
    # Darshan's most common size where it kept one (the mean hides a few small header requests); else the mean
    size = f.common_size or (moved / n if n else 0)
    if not size:
        return out
    comparison, bar = asked
    text, values, paths, ranks = out
    word = "Yes" if size_meets(size, comparison, bar) else "No"
    return f"{word}: {lower_first(text)}", [*values, exact(bar, "bytes")], paths, ranks


def _size_yes_no(out: Out, asked: tuple[str, int]) -> Out:
    """ "are the patch reads 4 KB each?" of a family or the job: yes or no from the size the answer states, the
    most common where Darshan kept one, else the mean."""
    if out is None:
        return out
    text, values, paths, ranks = out
    said = (
        re.search(r"most common size was ([\d.,]+ [KMGT]?i?B)", text)
        or re.search(r"\bof ([\d.,]+ [KMGT]?i?B) on average", text)
        or re.search(r"^Most \S+ requests were ([\d.,]+ [KMGT]?i?B)", text)
    )
    size = next((v.value for v in values if said and v.dim == "bytes" and _b(v.value) == said.group(1)), None)
    if size is None:
        return out
    comparison, bar = asked
    word = "Yes" if size_meets(size, comparison, bar) else "No"
    return f"{word}: {lower_first(text)}", [*values, exact(bar, "bytes")], paths, ranks


def _mean_size_elsewhere(report: Report, q: Query) -> Out:
    """Request sizes where no POSIX size counters exist (DFS, STDIO only): each module's mean, bytes over calls,
    the busiest first ("read request size?" of a DFS job: 88,642 reads of 16 MiB on average)."""
    kind = "writes" if q.direction == "write" else "reads" if q.direction == "read" else None
    parts: list[str] = []
    values: list[Quantity] = []
    rows = []
    for i in counted_interfaces(report):
        n = int(getattr(i.calls, kind)) if kind else i.calls.reads + i.calls.writes
        moved = i.own_bytes_written if kind == "writes" else i.own_bytes_read if kind == "reads" else bytes_moved(i)
        if n > 0 and moved > 0:
            rows.append((moved, n, i.name))
    for moved, n, name in sorted(rows, reverse=True)[:2]:
        parts.append(f"{n:,} {kind or 'reads and writes'} through {name} of {_b(moved / n)} on average")
        values += [exact(n, "bare"), exact(moved / n, "bytes")]
    if not parts:
        return None
    return "The job made " + "; and ".join(parts) + " (bytes over calls).", values, [], []


_LAYER_ASKED = re.compile(r"\b(mpi[- ]?io|hdf5|h5|p?netcdf|posix)\b")
_LAYER_NAMES = {"mpiio": "MPI-IO", "mpi-io": "MPI-IO", "mpi io": "MPI-IO", "hdf5": "HDF5", "h5": "HDF5"}
_LAYER_NAMES |= {"pnetcdf": "PnetCDF", "netcdf": "PnetCDF", "posix": "POSIX"}


def _layer_request_size(report: Report, q: Query) -> Out:
    """ "what size are the MPI-IO read requests?", "what size are the POSIX reads?": the layer asked (POSIX when
    only a direction is), that direction's calls, from the cross-layer summary; None when neither is asked."""
    raw = q.raw.lower()
    asked = _LAYER_ASKED.search(raw)
    if (asked is None and q.direction == "both") or report.cross_layer is None or re.search(r"\bwhy\b", raw):
        return None
    name = _LAYER_NAMES.get(asked.group(1), "POSIX") if asked else "POSIX"
    layer = next((la for la in report.cross_layer.job_layers if la.layer == name), None)
    if layer is None:
        return None
    parts: list[str] = []
    values: list[Quantity] = []
    for verb, st in (("write", layer.writes), ("read", layer.reads)):
        if st.ops <= 0 or (q.direction != "both" and verb != q.direction):
            continue
        if st.typical_bytes:
            parts.append(
                f"{st.ops:,} {name} {verb}s, mostly {_b(st.typical_bytes)} ({_b(st.mean_bytes)} on average, "
                f"{_b(st.bytes)} in all)"
            )
            values += [exact(st.ops, "bare"), exact(st.typical_bytes, "bytes"), exact(st.mean_bytes, "bytes")]
        else:
            parts.append(f"{st.ops:,} {name} {verb}s of {_b(st.mean_bytes)} on average ({_b(st.bytes)} in all)")
            values += [exact(st.ops, "bare"), exact(st.mean_bytes, "bytes")]
        values.append(exact(st.bytes, "bytes"))
    if not parts and asked is None:
        return None  # "what size are the writes?" of a job that wrote through STDIO: the other rules know
    if not parts:
        way = {"write": "writes", "read": "reads"}.get(q.direction, "reads or writes")
        return f"The job made no {name} {way}.", [exact(0, "bare")], [], []
    return "The job made " + " and ".join(parts) + ".", values, [], []


def _request_size(report: Report, q: Query) -> Out:
    if q.target and name_pattern(q.target):
        # "the restart.*.bin files": a name with a placeholder is the group it stands for, not its first file
        grouped = _group_request_size(report, q)
        if grouped is not None:
            return grouped
    if q.target:
        f = next((x for x in report.top_files if is_named(x.path, q.target)), None)
        if f is not None and f.layer != "POSIX" and _BENEATH.search(q.raw.lower()):
            beneath = _request_size_beneath(report, f, q.direction)
            if beneath is not None:
                return beneath
        if f is not None:
            out = _file_request_size(f.path, f.layer, f.calls, f.bytes_read, f.bytes_written, q.direction)
            if out is None or not f.common_size or not f.common_count:
                return out
            if re.search(r"\b(average|mean|avg)\b", q.raw.lower()):
                return out  # the mean was asked: bytes over calls
            # Darshan's own most common size leads; the mean follows ("what was the most common write size?").
            text, values, paths, ranks = out
            n = (
                f.calls.writes
                if q.direction == "write"
                else f.calls.reads
                if q.direction == "read"
                else (f.calls.reads + f.calls.writes)
            )
            noun = {"write": "writes", "read": "reads"}.get(q.direction, "requests")
            if f.calls.reads and f.calls.writes:  # Darshan's sizes count reads and writes together
                n, noun = f.calls.reads + f.calls.writes, "reads and writes"
            head = (
                f"The most common request size on `{f.path}` was {request_bytes(f.common_size)}, in {f.common_count:,}"
            )
            head += f" of its {n:,} {noun}" if n >= f.common_count else " requests"
            body = text.replace(f"On `{f.path}`, ", "", 1)
            more, more_values = _access_kind(f, q)
            if more:
                body = body.rstrip(".") + "; " + more + "."
            return (
                f"{head}; {body}",
                [exact(f.common_size, "bytes"), exact(f.common_count, "bare"), *values, *more_values],
                paths,
                ranks,
            )
    grouped = _group_request_size(report, q) if not q.target else None
    if grouped is not None:
        return grouped
    t = report.rank_table
    why = re.search(r"\bwhy\b", q.raw.lower())
    if why:
        kind = "writes" if q.direction == "write" else "reads" if q.direction == "read" else None
        calls = [
            (i, int(getattr(i.calls, kind)) if kind else i.calls.reads + i.calls.writes)
            for i in counted_interfaces(report)
            if i.name != "POSIX"
        ]
        posix = next((i for i in report.interfaces if i.name == "POSIX"), None)
        mine = (int(getattr(posix.calls, kind)) if kind else posix.calls.reads + posix.calls.writes) if posix else 0
        other = max(calls, key=lambda x: x[1], default=None)
        if other is not None and other[1] > mine:
            # Most of the calls asked about are at another module (STDIO's fwrite, DFS): its mean request size
            i, n = other
            moved = i.own_bytes_written if kind == "writes" else i.own_bytes_read if kind == "reads" else bytes_moved(i)
            noun = kind or "reads and writes"
            if n and moved:
                size = moved / n
                lead = "Because the requests are small: " if size <= SMALL_REQUEST else ""
                text = f"{lead}{'m' if lead else 'M'}ost {noun} went through {i.name}: {n:,} of {_b(size)} on average"
                return text + ".", [exact(n, "bare"), exact(size, "bytes")], [], []
    by_layer = _layer_request_size(report, q)
    if by_layer is not None:
        return by_layer
    if not t.access_sizes:
        return _mean_size_elsewhere(report, q)
    lead, lead_values = "", []
    tail, tail_values = "", []
    if re.search(r"\bhow much\b|\bhow many bytes\b", q.raw.lower()):
        # "how much did it write and read, and in what request size?": the bytes first, then the sizes
        read, written = totals(report)
        lead = f"The job wrote {_b(written)} and read {_b(read)}. "
        lead_values = [exact(written, "bytes"), exact(read, "bytes")]
    elif re.search(r"\b(and|&|plus)\b.*\b(total|in all|overall)\b", q.raw.lower()):
        # "write request size and total written?": the sizes asked first, the total after them
        read, written = totals(report)
        moved = written if q.direction == "write" else read if q.direction == "read" else read + written
        verb = {"write": "wrote", "read": "read"}.get(q.direction, "moved")
        tail, tail_values = f" The job {verb} {_b(moved)} in all.", [exact(moved, "bytes")]
    top = t.access_sizes[0]
    total = sum(a.count for a in t.access_sizes)
    rest = ", ".join(f"{_b(a.size)} ({a.count:,})" for a in t.access_sizes[1:3])
    posix = next((i for i in report.interfaces if i.name == "POSIX"), None)
    # Darshan's size table counts reads and writes together: say which there were
    kinds = (
        "writes"
        if posix is not None and not posix.calls.reads
        else "reads"
        if posix is not None and not posix.calls.writes
        else "reads and writes"
    )
    text = f"Most POSIX requests were {_b(top.size)}: {top.count:,} of the {t.posix_requests:,} {kinds}" + (
        f"; next {rest}." if rest else "."
    )
    values = [exact(top.size, "bytes"), exact(top.count, "bare"), exact(t.posix_requests, "bare"), exact(total, "bare")]
    values += [v for a in t.access_sizes[1:3] for v in (exact(a.size, "bytes"), exact(a.count, "bare"))]
    whole = [
        g
        for g in report.file_groups
        if g.files > 1 and g.layer == "POSIX" and g.calls.reads + g.calls.writes == t.posix_requests
    ]
    if whole and t.posix_requests % whole[0].files == 0:
        # One set of files holds every request (a file per rank): the count per file is what one process did
        g = whole[0]
        n = t.posix_requests // g.files
        text = text.rstrip(".") + f" ({n:,} per file over the {g.files:,} `{g.pattern}` files)."
        values += [exact(n, "bare"), exact(g.files, "bare")]
    if why and top.size <= SMALL_REQUEST and top.count >= 0.5 * t.posix_requests:
        # "why half a million writes for 7 GB?": the requests are small, so the bytes take that many calls
        text = f"Because the requests are small: {lower_first(text)}"
    if lead:
        text = lead.rstrip()[:-1] + "; " + lower_first(text)
    return text + tail, [*lead_values, *values, *tail_values], [], []


def _group_request_size(report: Report, q: Query) -> Out:
    """ "What read size are the Cell_D files read with?": the group's bytes over its calls, per direction."""
    g = glob_group(report, q.raw) or group_named(report, q.raw)
    if g is None or g.files < 2:
        return None
    parts: list[str] = []
    values: list[Quantity] = [exact(g.files, "bare")]
    for verb, moved, n in (("read", g.bytes_read, g.calls.reads), ("write", g.bytes_written, g.calls.writes)):
        if n <= 0 or not moved or (q.direction != "both" and verb != q.direction):
            continue
        per = f", {n / g.files:,.0f} per file" if n % g.files == 0 else ""
        parts.append(f"{n:,} {verb}s of {_b(moved / n)} on average ({_b(moved)}{per})")
        values += [exact(n, "bare"), exact(moved / n, "bytes"), exact(moved, "bytes")]
        if per:
            values.append(exact(n / g.files, "bare"))
    if not parts:
        return None
    layer = f", counted at {g.layer}" if g.layer else ""
    text = f"The {g.files:,} `{g.pattern}` files had " + " and ".join(parts) + f"{layer}."
    if g.common_size:
        # Darshan's own most common size (ACCESS1-4 over the files), beside the mean the bytes give
        requests = g.calls.reads + g.calls.writes
        common = f"{request_bytes(g.common_size)}, in {g.common_count:,} of {requests:,} requests"
        values += [exact(g.common_size, "bytes"), exact(g.common_count, "bare"), exact(requests, "bare")]
        if re.search(r"\b(most common|commonest|most frequent|usual|typical|mostly|dominant)\b", q.raw.lower()):
            text = f"The most common request size on the {g.files:,} `{g.pattern}` files was {common}; " + lower_first(
                text[len(f"The {g.files:,} `{g.pattern}` files ") :]
            ).replace("had ", "they had ", 1)
        else:
            text = text.rstrip(".") + f"; the most common size was {common}."
    return text, values, [], []


def _file_request_size(path: str, layer: str, calls: OpCounts, read: int, written: int, direction: Direction) -> Out:
    """A file's mean request size: its bytes over its read or write calls at its top layer."""
    parts = []
    values: list[Quantity] = []
    for verb, moved, n in (("write", written, calls.writes), ("read", read, calls.reads)):
        if n <= 0 or (direction != "both" and not verb.startswith(direction[:4])):
            continue
        parts.append(f"{verb}s averaged {_b(moved / n)} ({_b(moved)} in {n:,} {verb} calls)")
        values += [exact(moved / n, "bytes"), exact(moved, "bytes"), exact(n, "bare")]
    if not parts:
        return None
    text = f"On `{path}`, " + " and ".join(parts) + f", counted at {layer}."
    return text, values, [path], []


def _asked_kind(report: Report, question: str) -> list[FileUsage]:
    """The listed files of the kind a question names by extension ("which npz took the longest?", "the .h5
    files"), or every listed file when it names none."""
    exts = {f.path.rsplit(".", 1)[-1].lower() for f in report.top_files if "." in f.path.rsplit("/", 1)[-1]}
    words = set(re.findall(r"\.?([a-z][a-z0-9]{0,7})\b", question.lower()))
    asked = {e for e in exts if e in words} | {e for w in words for e in KIND_EXTENSIONS.get(w, ()) if e in exts}
    if not asked:
        return list(report.top_files)
    return [f for f in report.top_files if f.path.rsplit(".", 1)[-1].lower() in asked]


def top_file(report: Report, q: Query) -> Out:
    files = [f for f in _asked_kind(report, q.raw) if f.io_time_s > 0]
    if q.direction == "read":
        files = [f for f in files if f.bytes_read] or files
    elif q.direction == "write":
        files = [f for f in files if f.bytes_written] or files
    if not files:
        return None
    if q.direction in ("read", "write") and re.search(r"\b(long\w*|slow\w*|time|seconds)\b", q.raw.lower()):
        # "which npz took the longest to read?": the read calls' own time ranks them, not opens and seeks
        ranked = _by_direction_time(files, q.direction)
        if ranked is not None:
            return ranked
    top = files[0]
    who = f"its {top.ranks:,} ranks" if top.ranks > 1 else "its 1 rank"
    slow = f", {_s(top.slowest_s)} on its slowest rank" if top.slowest_s and top.ranks > 1 else ""
    text = (
        f"`{top.path}` took the most I/O time: {_s(top.io_time_s)} summed over {who}{slow} "
        f"({percent(top.share_of_io)} of the job's I/O time, {_b(top.bytes_written)} written and "
        f"{_b(top.bytes_read)} read through {top.layer})"
    )
    values = [
        exact(top.io_time_s, "seconds"),
        exact(top.share_of_io * 100, "percent"),
        exact(top.bytes_written, "bytes"),
        exact(top.bytes_read, "bytes"),
    ]
    if slow and top.slowest_s:
        values.append(exact(top.slowest_s, "seconds"))
    longest = max(files, key=lambda f: f.slowest_s or 0.0)
    if longest is not top and (longest.slowest_s or 0.0) > 1.5 * (top.slowest_s or 0.0):
        # Summed over ranks a widely shared file leads; the one that held a single rank longest may be another
        text += (
            f"; the file that held one rank longest is `{longest.path}`: {_s(longest.slowest_s or 0.0)} on its "
            f"slowest rank"
        )
        values.append(exact(longest.slowest_s or 0.0, "seconds"))
        return text + ".", values, [top.path, longest.path], []
    if len(files) > 1:
        nxt = files[1]
        text += f"; next is `{nxt.path}` ({_s(nxt.io_time_s)})"
        values.append(exact(nxt.io_time_s, "seconds"))
    return text + ".", values, [f.path for f in files[:2]], []


def _by_direction_time(files: list[FileUsage], direction: Direction) -> Out:
    def took(f: FileUsage) -> float:
        return f.read_time_s if direction == "read" else f.write_time_s

    ranked = sorted((f for f in files if took(f) > 0), key=lambda f: -took(f))
    if not ranked:
        return None
    top = ranked[0]
    verb, moved = ("read", top.bytes_read) if direction == "read" else ("write", top.bytes_written)
    who = f"summed over its {top.ranks:,} ranks" if top.ranks > 1 else "on its 1 rank"
    text = f"`{top.path}` took the longest to {verb}: {_s(took(top))} of {verb} calls {who} ({_b(moved)})"
    values = [exact(took(top), "seconds"), exact(moved, "bytes")]
    if len(ranked) > 1:
        text += f"; next is `{ranked[1].path}` ({_s(took(ranked[1]))})"
        values.append(exact(took(ranked[1]), "seconds"))
    return text + ".", values, [f.path for f in ranked[:2]], []


def file_list(report: Report, q: Query) -> Out:
    read, written = totals(report)
    # A job that only read (or only wrote) is listed that way: "why does it do almost no I/O?"
    direction = q.direction if q.direction != "both" else "read" if not written else "write" if not read else "both"
    if direction in ("read", "write"):
        listed = _files_moved(report, direction)
        if listed is not None and q.yes_no:
            listed = _data_or_software(report, direction, listed)
        if listed is not None:
            return listed
    files = sorted(report.top_files, key=lambda f: -(f.bytes_read + f.bytes_written))
    files = [f for f in files if f.bytes_read + f.bytes_written > 0][:5]
    if not files:
        return "The log records no bytes read or written.", [], [], []
    parts = [f"`{f.path}` ({_b(f.bytes_read)} read, {_b(f.bytes_written)} written)" for f in files]
    n = report.files_with_io
    more = f"; {n - len(files):,} more file(s) moved less" if n > len(files) else ""
    text = f"The job read {_b(read)} and wrote {_b(written)}; by bytes moved: {'; '.join(parts)}{more}."
    values = [exact(read, "bytes"), exact(written, "bytes")]
    values += [exact(v, "bytes") for f in files for v in (f.bytes_read, f.bytes_written)]
    return text, values, [f.path for f in files], []


def _data_or_software(
    report: Report, direction: Direction, listed: tuple[str, list[Quantity], list[str], list[int]]
) -> Out:
    """ "Did it read any training data?": yes, or no when what it moved was its own software environment (the
    files Python imports, system configuration), said before the list of files."""
    moved = [i.own_bytes_read if direction == "read" else i.own_bytes_written for i in counted_interfaces(report)]
    total = sum(moved)
    env = sum(k.bytes_read if direction == "read" else k.bytes_written for k in report.software_files)
    if listed is None:
        return None
    text, values, files, ranks = listed
    if total > 0 and env < 0.9 * total:
        return f"Yes: {lower_first(text)}", values, files, ranks
    if not env:
        return f"No: {lower_first(text)}", values, files, ranks
    kinds = software_kinds(report)
    whose = "all of it" if env >= total else f"{_b(env)} of it"
    at = text.find(": `")
    clause = f", {whose} from the files of {kinds}, not data"
    text = text[:at] + clause + text[at:] if at > 0 else text.rstrip(".") + clause + "."
    return f"No: {lower_first(text)}", values, files, ranks


def _files_moved(report: Report, direction: Direction) -> Out:
    """ "What did this process actually read?": the total, then the files by bytes in that direction."""

    def moved(f: FileUsage) -> int:
        return f.bytes_read if direction == "read" else f.bytes_written

    seen: set[str] = set()
    files = []
    for f in sorted((f for f in report.top_files if moved(f) > 0), key=lambda f: -moved(f)):
        if f.path not in seen:  # a file counted at two modules (POSIX and STDIO) is named once
            seen.add(f.path)
            files.append(f)
    files = files[:5]
    read, written = totals(report)
    total = read if direction == "read" else written
    verb = "read" if direction == "read" else "wrote"
    if not total:
        return f"Nothing: the job {verb} 0 B.", [exact(0, "bytes")], [], []
    values = [exact(total, "bytes"), *(exact(moved(f), "bytes") for f in files)]
    named = [f"`{f.path}` ({_b(moved(f))})" for f in files]
    if sum(moved(f) for f in files) < 0.5 * total:
        # The busiest files by time moved little this way: the families of files that did
        fams = [g for g in report.file_groups if g.files > 1 and "*" not in g.pattern.rsplit("/", 1)[-1]]
        fams = sorted(fams, key=lambda g: -(g.bytes_read if direction == "read" else g.bytes_written))[:3]
        fams = [g for g in fams if (g.bytes_read if direction == "read" else g.bytes_written) > 0]
        if fams:
            named = [
                f"the {g.files:,} `{g.pattern}` files ({_b(g.bytes_read if direction == 'read' else g.bytes_written)})"
                for g in fams
            ]
            values = [exact(total, "bytes")]
            values += [exact(g.bytes_read if direction == "read" else g.bytes_written, "bytes") for g in fams]
            values += [exact(g.files, "bare") for g in fams]
            files = []
    per = [
        (i.name, i.own_bytes_read if direction == "read" else i.own_bytes_written) for i in counted_interfaces(report)
    ]
    per = [(name, n) for name, n in per if n > 0]
    split = ""
    if len(per) > 1:
        split = " (" + ", ".join(f"{_b(n)} at {name}" for name, n in per) + ")"
        values += [exact(n, "bytes") for _, n in per]
    parts = ", ".join(named)
    more = report.files_read if direction == "read" else report.files_written
    rest = f"; {more - len(files):,} more file(s)" if files and more > len(files) else ""
    text = f"The job {verb} {_b(total)}{split}: {parts}{rest}."
    return text, values, [f.path for f in files], []


def _member_of_group(report: Report, q: Query) -> Out:
    """A named file the file table does not list, in a family the report does (restart.0020.124.bin among the
    `restart.0020.#.bin` files): the family's totals and its per-file mean, said to be the family's."""
    name = (q.target or "").rsplit("/", 1)[-1]
    if not name or name_pattern(name):
        return None
    fits = [
        g
        for g in report.file_groups
        # A numbered family only: a folder's every file ("run/*") says nothing of one name in it
        if g.files >= 2
        and "#" in g.pattern
        and group_regex(FileGroup(pattern=g.pattern.rsplit("/", 1)[-1], files=g.files)).fullmatch(name)
    ]
    for g in sorted(fits, key=lambda x: x.files):  # the narrowest family first
        read, written = g.bytes_read, g.bytes_written
        moved = read if q.direction == "read" else written if q.direction == "write" else read + written
        verb = "read" if q.direction == "read" else "wrote" if q.direction == "write" else "moved"
        text = (
            f"{quote(name)} is one of the {g.files:,} `{g.pattern}` files, which {verb} {_b(moved)} in all, "
            f"{_b(moved / g.files)} per file on average; the report keeps no total for that one file"
        )
        return text + ".", [exact(moved, "bytes"), exact(g.files, "bare"), exact(moved / g.files, "bytes")], [], []
    return None


def reread(name: str, moved: int, extent: int | None, *, many: bool = False) -> Out:
    """Yes or no to "was X read more than once?", from its bytes read against its read extent."""
    if not moved:
        return (f"No: the job read 0 B from {name}.", [exact(0, "bytes")], [], [])
    if not extent:
        return (
            f"The log cannot tell: Darshan kept no last byte read for {name}, so its {_b(moved)} read cannot be "
            "compared with its size.",
            [exact(moved, "bytes")],
            [],
            [],
        )
    times = moved / extent
    span = "from each file's start to its last byte read, added up" if many else "from its start to the last byte read"
    if times >= READ_AGAIN:
        text = (
            f"Yes: {_b(moved)} was read from {name}, {times:.1f} times the {_b(extent)} {span}, so the data was read "
            f"about {times:.1f} times over."
        )
    else:
        text = f"No: {_b(moved)} was read from {name}, against {_b(extent)} {span}: each byte about once."
    return (text, [exact(moved, "bytes"), exact(extent, "bytes"), exact(round(times, 1), "bare")], [], [])


_VS = r"\b(vs\.?|versus|against|compared to|or|and)\b"
_READ_VS_WRITE = re.compile(
    rf"\b(how long|time|seconds|spend\w*|spent)\b.*(\bwrit\w*\b.*{_VS}.*\bread\w*|\bread\w*\b.*{_VS}.*\bwrit\w*)"
)


def job_reread(report: Report, q: Query) -> Out:
    """Yes or no to "is the job reading the same files over and over?": yes where some file had at least P09's
    threshold of bytes read beyond its extent, counted over every read file (not only the busiest)."""
    r = report.read_reuse
    if r is None:
        return ("No: the job read no bytes from any file.", [exact(0, "bytes")], [], [])
    if not r.files:
        return (
            f"The log cannot tell: Darshan kept no last byte read for any of the {r.without_extent:,} file(s) the job "
            "read, so their bytes read cannot be compared with their sizes.",
            [exact(r.without_extent, "bare")],
            [],
            [],
        )
    values = [exact(r.bytes_read, "bytes"), exact(r.extent, "bytes"), exact(r.files, "bare")]
    span = "from each file's start to its last byte read, added up"
    tail = ""
    if r.small_again:
        tail += f" {r.small_again:,} small file(s) were read more than once, each by less than {_b(r.min_bytes)}."
        values.append(exact(r.small_again, "bare"))
    if r.without_extent:
        tail += f" Darshan kept no last byte read for {r.without_extent:,} more file(s), which this leaves out."
    if not r.files_again:
        text = (
            f"No: the job read {_b(r.bytes_read)} from {r.files:,} file(s), against {_b(r.extent)} {span}; no file "
            f"had {_b(r.min_bytes)} or more read twice.{tail}"
        )
        return text, values, [], []
    again = sorted(
        (f for f in report.top_files if f.read_extent and f.bytes_read - f.read_extent >= r.min_bytes),
        key=lambda f: f.bytes_read - (f.read_extent or 0),
        reverse=True,
    )
    top = ""
    if again:
        f = again[0]
        times = f.bytes_read / (f.read_extent or 1)
        top = f"; the most is `{f.path}`, {_b(f.bytes_read)} read of its {_b(f.read_extent or 0)} ({times:.1f} times)"
    which = "The one file the job read" if r.files == 1 else f"{r.files_again:,} of the {r.files:,} files the job read"
    text = (
        f"Yes: {which[0].lower()}{which[1:]} had data read more than once, "
        f"{_b(r.bytes_again)} read beyond their extents in all{top}.{tail}"
    )
    values += [exact(r.files_again, "bare"), exact(r.bytes_again, "bytes")]
    return text, values, [f.path for f in again[:1]], []


# "was particles.dat read back after it was written?": whether the job read what it wrote, not a second read
_READ_AFTER_WRITE = re.compile(
    r"\bread\w* (it |them )?back\b.*\b(after|once)\b.*\b(writ\w*|wrote|saved|dumped)\b"
    r"|\b(after|once) (it was |they were |being )?(writ\w*|wrote)\b.*\bread\w*( back)?\b"
)


def _read_after_write(f: FileUsage) -> Out:
    if not (f.bytes_written and f.bytes_read):
        did = "written" if f.bytes_written else "read" if f.bytes_read else "neither read nor written"
        moved = f.bytes_written or f.bytes_read
        return f"No: `{f.path}` was only {did} ({_b(moved)}).", [exact(moved, "bytes")], [f.path], []
    when = ""
    values = [exact(f.bytes_written, "bytes"), exact(f.bytes_read, "bytes")]
    if f.write_end_s is not None and f.read_start_s is not None and f.read_end_s is not None:
        after = f.read_end_s > f.write_end_s
        when = (
            f"; its reads ran until {_s(f.read_end_s)} into the run, after its last write ended at {_s(f.write_end_s)}"
            if after
            else f"; but its reads ended at {_s(f.read_end_s)}, before its last write ended at {_s(f.write_end_s)}"
        )
        values += [exact(f.read_end_s, "seconds"), exact(f.write_end_s, "seconds")]
        word = "Yes" if after else "No"
    else:
        word = "Yes"
    text = f"{word}: `{f.path}` was written ({_b(f.bytes_written)}) and read ({_b(f.bytes_read)}){when}."
    return text, values, [f.path], []


def file_usage(report: Report, q: Query) -> Out:
    f = next((x for x in report.top_files if is_named(x.path, q.target)), None)
    if f is None:
        return _member_of_group(report, q)
    if q.yes_no and _READ_AFTER_WRITE.search(q.raw.lower()):
        return _read_after_write(f)
    low = q.raw.lower()
    if (
        f.layer != "POSIX"
        and f.posix_slowest is not None
        and _BENEATH.search(low)
        and re.search(r"\bhow long\b|\btime\b|\bseconds?\b|\bspen[dt]s?\b|\btook\b|\btake\b", low)
    ):
        # "on the POSIX side, how long did the slowest rank spend writing X?": the rank the shared POSIX record
        # kept as its slowest, beside the slowest rank's time through the file's top layer
        k = f.posix_slowest
        kept_bytes = f" ({_b(k.bytes)})" if k.bytes is not None else ""
        text = (
            f"At the POSIX level, the slowest rank Darshan kept for `{f.path}`, rank {k.rank}, spent {_s(k.seconds)} "
            f"on it{kept_bytes}; through {f.layer}, its slowest rank took {_s(f.slowest_s or f.io_time_s)}."
        )
        values = [exact(k.seconds, "seconds"), exact(f.slowest_s or f.io_time_s, "seconds")]
        values += [exact(k.bytes, "bytes")] if k.bytes is not None else []
        return text, values, [f.path], [k.rank]
    if q.yes_no and q.direction != "write" and REREAD.search(q.raw.lower()):
        return reread(f"`{f.path}`", f.bytes_read, f.read_extent)
    if _READ_VS_WRITE.search(q.raw.lower()) and f.read_time_s and f.write_time_s:
        # "how long does each rank spend writing vs reading flux.dat?": both times, per rank and summed
        ranks = max(f.ranks, 1)
        each = f" per rank on average over its {ranks:,} ranks" if ranks > 1 else ""
        text = (
            f"Writing `{f.path}` took {_s(f.write_time_s / ranks)}{each} against {_s(f.read_time_s / ranks)} "
            f"reading ({_s(f.write_time_s)} and {_s(f.read_time_s)} summed over ranks), for {_b(f.bytes_written)} "
            f"written and {_b(f.bytes_read)} read (counted at {f.layer})."
        )
        values = [exact(v, "seconds") for v in (f.write_time_s / ranks, f.read_time_s / ranks)]
        values += [exact(f.write_time_s, "seconds"), exact(f.read_time_s, "seconds")]
        return text, [*values, exact(f.bytes_written, "bytes"), exact(f.bytes_read, "bytes")], [f.path], []
    who = f"its {f.ranks:,} ranks" if f.ranks > 1 else "its 1 rank"
    # With the calls that moved them ("8.00 GiB written in 524,288 write calls").
    # and their mean size: "how much was read from grid.nc, and in what size?"
    rc = f" in {f.calls.reads:,} read calls" if f.calls.reads else ""
    wc = f" in {f.calls.writes:,} write calls" if f.calls.writes else ""
    if f.calls.reads and f.bytes_read:
        rc += f" of {_b(f.bytes_read / f.calls.reads)} on average"
    if f.calls.writes and f.bytes_written:
        wc += f" of {_b(f.bytes_written / f.calls.writes)} on average"
    split = ""
    if f.layer == "MPI-IO" and f.collective and not (f.calls.reads and f.calls.writes):
        # One direction only, so Darshan's collective count is that direction's: how the calls were made
        split = f" ({f.collective:,} collective, {f.independent:,} independent)" if f.independent else " (collective)"
        rc, wc = (rc + split if rc else rc), (wc + split if wc else wc)
    if q.direction == "read":
        head = f"`{f.path}`: {_b(f.bytes_read)} read{rc}"
    elif q.direction == "write":
        head = f"`{f.path}`: {_b(f.bytes_written)} written{wc}"
    else:
        head = f"`{f.path}`: {_b(f.bytes_written)} written{wc} and {_b(f.bytes_read)} read{rc}"
    text = f"{head}, in {_s(f.io_time_s)} of I/O summed over {who} (counted at {f.layer})."
    moved_now = {"read": f.bytes_read, "write": f.bytes_written}.get(q.direction, f.bytes_read + f.bytes_written)
    if f.slowest_s and f.ranks > 1 and moved_now:
        # How long the job waited on it (its slowest rank) and the rate that gives: what "how long" and "what
        # bandwidth" ask beside "how much"
        text = text.rstrip(".") + (
            f"; its slowest rank took {_s(f.slowest_s)}, {_b(moved_now / f.slowest_s)}/s over the file."
        )
    more = re.search(
        r"\b(f?read\w*|f?writ\w*|wrote)\b[^?]*\b(more|less|fewer)\b[^?]*\bthan\b"
        r"|\b(more|less|fewer)\b[^?]*\b(f?read\w*|f?writ\w*|wrote)\b[^?]*\bthan\b",
        q.raw.lower(),
    )
    if q.yes_no and more:
        # "did it read more from flux.dat than it wrote?": the two amounts decide, equal is a no
        first_read = (more.group(1) or more.group(4) or "").lstrip("f").startswith("read")
        mine, other = (f.bytes_read, f.bytes_written) if first_read else (f.bytes_written, f.bytes_read)
        yes = mine > other if (more.group(2) or more.group(3)) == "more" else mine < other
        text = ("Yes: " if yes else "No: ") + ("it read as much as it wrote: " if mine == other else "") + text
    elif q.yes_no and (sized := re.search(r"\b(small|tiny|large|big|huge)\b", q.raw.lower())):
        # "did rank 0 read restart.h5 using small requests?": the size decides, not whether it was read
        n, moved = (
            (f.calls.reads, f.bytes_read)
            if q.direction == "read"
            else (f.calls.writes, f.bytes_written)
            if q.direction == "write"
            else (f.calls.reads + f.calls.writes, f.bytes_read + f.bytes_written)
        )
        size = f.common_size or (moved / n if n else 0)
        small = 0 < size <= SMALL_REQUEST
        wants_small = sized.group(1) in ("small", "tiny")
        text = ("Yes: " if small == wants_small and size else "No: ") + text
        if size:
            text = (
                text.rstrip(".") + f"; {'at most' if small else 'above'} the {_b(SMALL_REQUEST)} that counts as small."
            )
    elif q.yes_no and q.direction == "both":
        text = ("Yes: " if f.bytes_read and f.bytes_written else "No: ") + text
    elif q.yes_no:
        moved = f.bytes_read if q.direction == "read" else f.bytes_written
        text = ("Yes: " if moved else "No: ") + text
    values = [exact(f.bytes_read, "bytes"), exact(f.bytes_written, "bytes"), exact(f.io_time_s, "seconds")]
    values += [exact(n, "bare") for n in (f.calls.reads, f.calls.writes) if n]
    if f.slowest_s and f.ranks > 1 and moved_now:
        values += [exact(f.slowest_s, "seconds"), exact(moved_now / f.slowest_s, "rate")]
    values += [exact(f.collective, "bare"), exact(f.independent, "bare")] if split else []
    asked = q.raw.lower()
    if (
        f.slowest_s
        and re.search(
            r"\b(slowest|longest|worst|how long|take|took|time|runtime|fraction|share|percent\w*|proportion|each rank"
            r"|how much of|dominat\w*)\b",
            asked,
        )
        and (
            not re.search(r"\b(bytes|how much data|how big|size)\b", asked)
            or re.search(r"\b(slowest|how long)\b", asked)
        )
    ):
        # "How long did writing X take?": the file's I/O took as long as its slowest rank spent on it (the
        # ranks work at once), so that comes first; the sum over ranks follows.
        doing = {"read": "Reading", "write": "Writing"}.get(q.direction, "The I/O on")
        who = f" (rank {f.slowest_rank})" if f.slowest_rank is not None and f.ranks > 1 else ""
        run = report.job.runtime_s
        # Its share of the run: what "how much of the run went to X?" asks, and the scale of the time.
        of_run = f", {percent(f.slowest_s / run)} of the {_s(run)} run" if run > 0 else ""
        rate = f"; its slowest rank took {_s(f.slowest_s)}, "
        body = text.replace(f"`{f.path}`: ", "", 1)
        if rate in body:
            # Its time leads now: the rate stays, said once with it
            body = body.split(rate, 1)[0] + "."
            of_run += f", {_b(moved_now / f.slowest_s)}/s over the file"
        text = f"{doing} `{f.path}` took {_s(f.slowest_s)} on its slowest rank{who}{of_run}; " + lower_first(body)
        values[:0] = [exact(f.slowest_s, "seconds")] + (
            [exact(f.slowest_s / run * 100, "percent"), exact(run, "seconds")] if run > 0 else []
        )
    return text, values, [f.path], []


def alignment(report: Report, q: Query) -> Out:
    """How many of a file's (or the job's) POSIX requests did not start on the file alignment Darshan measured
    against. ``q.missing`` asks "misaligned?", answered yes where "aligned?" is no."""
    f = next((x for x in report.top_files if q.target and is_named(x.path, q.target)), None)
    if f is None and q.target:
        return None  # a file the report does not detail: not the job's count instead
    if f is None:
        word = loose_name(" ".join(q.raw.lower().split()), report, plural=False)
        f = next((x for x in report.top_files if word and word in x.path.rsplit("/", 1)[-1].lower()), None)
    if f is not None:
        c = f.posix_calls if f.layer != "POSIX" and f.posix_calls is not None else f.calls
        if f.layer not in ("POSIX", "MPI-IO") or (f.layer != "POSIX" and f.posix_calls is None):
            return (
                f"The log cannot tell: Darshan counts unaligned requests only in its POSIX module, and `{f.path}` "
                f"has no POSIX records.",
                [],
                [f.path],
                [],
            )
        what, paths, align = f"`{f.path}`", [f.path], f.alignment
    else:
        posix = next((i for i in report.interfaces if i.name == "POSIX" and i.records), None)
        if posix is None:
            return None
        c, what, paths, align = posix.calls, "the job", [], None
    memory = bool(re.search(r"\b(memory|mem|buffers?)\b", q.raw.lower()))
    n, bad = c.reads + c.writes, c.mem_not_aligned if memory else c.file_not_aligned
    if n <= 0:
        return None
    mostly_bad = bad >= 0.5 * n
    word = ""
    if q.yes_no:
        word = ("Yes: " if mostly_bad else "No: ") if q.missing else ("No: " if mostly_bad else "Yes: ")
    on = f" the {_b(align)} file alignment" if align else " the file alignment"
    text = (
        f"{bad:,} of the {n:,} POSIX reads and writes of {what} ({percent(bad / n)}) did not start on{on} "
        "(Darshan's FILE_NOT_ALIGNED)"
    )
    if memory:
        # "how many writes were memory-unaligned?": the buffers in memory, a count of its own (MEM_NOT_ALIGNED)
        p07 = report.finding("P07")
        to = next((m.value for m in p07.evidence if m.name == "mem_alignment"), None) if p07 else None
        text = (
            f"{bad:,} of the {n:,} POSIX reads and writes of {what} ({percent(bad / n)}) used a memory buffer not "
            f"aligned{f' to {to} bytes' if to else ''} (Darshan's MEM_NOT_ALIGNED)"
        )
        align = None
    values = [exact(bad, "bare"), exact(n, "bare"), exact(bad / n * 100, "percent")]
    values += [exact(align, "bytes")] if align else []
    if f is not None and f.common_size:
        text += f"; most requests were {request_bytes(f.common_size)}"
        values.append(exact(f.common_size, "bytes"))
    if f is not None and f.stripe_size:
        text += f", and its stripe size is {_b(f.stripe_size)}"
        values.append(exact(f.stripe_size, "bytes"))
    text = word + (lower_first(text) if word else text[0].upper() + text[1:])
    return text + ".", values, paths, []


def file_library(report: Report, q: Query) -> Out:
    """Which libraries a named file went through: the interfaces whose records name it, top layer first."""
    order = ["HDF5", "HDF5 (files)", "PnetCDF", "PnetCDF (files)", "MPI-IO", "POSIX", "STDIO", "DFS", "DAOS"]
    seen: list[str] = []
    path = ""
    for i in sorted(report.interfaces, key=lambda x: order.index(x.name) if x.name in order else 99):
        hit = next((p for p in i.top_paths if is_named(p.split(":")[0], q.target)), None)
        name = i.name.split(" (")[0]
        if hit and name not in seen:
            seen.append(name)
            path = path or hit.split(":")[0]
    f = next((x for x in report.top_files if is_named(x.path, q.target)), None)
    if f is not None:
        path = path or f.path
        for layer in (f.layer, "POSIX" if f.posix_calls is not None else ""):
            if layer and layer not in seen:
                seen.append(layer)
    if not seen:
        return None
    text = f"`{path}` went through {seen[0]}" + (f", on top of {' and '.join(seen[1:])}" if len(seen) > 1 else "")
    offered = {
        {"mpiio": "MPI-IO", "mpi-io": "MPI-IO", "hdf5": "HDF5", "pnetcdf": "PnetCDF"}.get(w, w.upper())
        for w in re.findall(r"\b(posix|stdio|mpi-?io|hdf5|pnetcdf|dfs)\b", q.raw.lower())
    }
    if re.match(r"\s*(was|were|is|are|did|does|do)\b", q.raw.lower()) and offered:
        # "was snapshot_109.nc written through mpi-io or pnetcdf?": neither, and the answer says so first;
        # "was particles.bin written through MPI-IO?": yes when it went through the one offered (of two offered,
        # the answer names which)
        if not offered & set(seen):
            text = f"No: {lower_first(text)}"
        elif len(offered) == 1:
            text = f"Yes: {lower_first(text)}"
    if f is None:
        return text + ".", [], [path], []
    # With what moved through it ("how much did it write to X, and via what interface?").
    text += f": {_b(f.bytes_written)} written and {_b(f.bytes_read)} read (counted at {f.layer})."
    return text, [exact(f.bytes_written, "bytes"), exact(f.bytes_read, "bytes")], [path], []


def file_share(report: Report, q: Query) -> Out:
    """A loosely named file's (or group's) share of the run: the time its slowest rank spent on it."""
    run = report.job.runtime_s
    word = q.target or ""
    groups = [g for g in report.file_groups if word and group_has(g, word) and g.slowest_s > 0]
    group = max(groups, key=lambda g: (g.files, g.io_time_s), default=None) or group_named(report, q.raw)
    if group is None or group.files < 2:
        f = next((x for x in report.top_files if word in x.path.rsplit("/", 1)[-1].lower() and x.slowest_s), None)
        if f is None or run <= 0:
            return None
        # Its time on its slowest rank and share of the run lead, whatever words the question used.
        asked = {"target": f.path.rsplit("/", 1)[-1], "yes_no": False, "raw": f"{q.raw} (share of the run)"}
        out = file_usage(report, q.model_copy(update=asked))
        took = f.slowest_s or 0.0
    else:
        if run <= 0:
            return None
        took = max(group.slowest_s, per_rank(group))
        doing = {"read": "Reading", "write": "Writing"}.get(q.direction, "The I/O on")
        many = group.slowest_s < took  # each rank used several of the files: its time is their sum
        text = (
            f"{doing} the {group.files:,} `{group.pattern}` files took "
            + (f"about {_s(took)} per rank" if many else f"at most {_s(took)} on one rank")
            + f", {percent(took / run)} of the {_s(run)} run ({_s(group.io_time_s)} summed over ranks"
            + (f", {group.opens:,} opens" if group.opens else "")
            + ")."
        )
        values = [exact(took, "seconds"), exact(took / run * 100, "percent"), exact(run, "seconds")]
        out = text, [*values, exact(group.io_time_s, "seconds")], [], []
    if out is None:
        return None
    text, values, files, ranks = out
    if q.yes_no:
        # "Is the run dominated by X?" needs half of it; "is X a bottleneck?" a tenth.
        bar = q.share if q.share is not None else 0.5 if re.search(r"\bdominat", q.raw.lower()) else 0.1
        text = ("Yes: " if took >= bar * run else "No: ") + lower_first(text)
    return text, values, files, ranks


def file_when(report: Report, q: Query) -> Out:
    """ "When was restart.h5 written?": the first start and last end Darshan timestamped for the file's reads and
    writes, in seconds from the job's start, beside the run's length."""
    if q.target is None:
        return _group_when(report, q)
    f = next((x for x in report.top_files if is_named(x.path, q.target)), None)
    if f is None:
        return None
    spans = [
        (verb, a, b)
        for verb, a, b, op in (
            ("written", f.write_start_s, f.write_end_s, "write"),
            ("read", f.read_start_s, f.read_end_s, "read"),
        )
        if a is not None and b is not None and q.direction in (op, "both")
    ]
    who = (
        f"rank {f.only_rank}"
        if f.only_rank is not None
        else "its one rank"
        if f.ranks == 1
        else f"its {f.ranks:,} ranks"
    )
    if not spans:
        asked = {"write": "writes", "read": "reads"}.get(q.direction, "reads or writes")
        return (
            f"Darshan kept no timestamps for {asked} of `{f.path}`: it had none at {f.layer}.",
            [],
            [f.path],
            [],
        )
    values: list[Quantity] = []
    said = []
    for verb, a, b in spans:
        said.append(f"{verb} from {_at(a)} to {_at(b)} after the job started")
        values += [exact(a, "seconds"), exact(b, "seconds")]
    text = f"`{f.path}` was " + ", and ".join(said)
    s = report.io_share
    if s is not None and s.runtime_s > 0:
        text += f", in a {_at(s.runtime_s)} run"
        values.append(exact(s.runtime_s, "seconds"))
    text += f" (first start to last end over {who}, counted at {f.layer})."
    return text, values, [f.path], [f.only_rank] if f.only_rank is not None else []


def _group_when(report: Report, q: Query) -> Out:
    """When a family of files was read or written: the earliest start and the latest end over the members the
    report lists, and which member came first."""
    g = group_named(report, q.raw)
    if g is None:
        return None
    rx = group_regex(g)
    members = [f for f in report.top_files if rx.fullmatch(f.path)]
    said, values = [], []
    for verb, start, end, op in (
        ("written", "write_start_s", "write_end_s", "write"),
        ("read", "read_start_s", "read_end_s", "read"),
    ):
        timed = [(getattr(f, start), getattr(f, end), f) for f in members if getattr(f, start) is not None]
        if not timed or q.direction not in (op, "both"):
            continue
        a, _, first = min(timed, key=lambda x: (x[0], x[2].path))
        b = max(e for _, e, _ in timed)
        said.append(f"{verb} from {_at(a)} (`{first.path.rsplit('/', 1)[-1]}` first) to {_at(b)} after the job started")
        values += [exact(a, "seconds"), exact(b, "seconds")]
    if not said:
        return None
    of = f"{len(members):,} of the {g.files:,}" if len(members) < g.files else f"the {g.files:,}"
    text = f"The `{g.pattern}` files were " + ", and ".join(said)
    s = report.io_share
    if s is not None and s.runtime_s > 0:
        text += f", in a {_at(s.runtime_s)} run"
        values.append(exact(s.runtime_s, "seconds"))
    return text + f" ({of} files the report times).", values, [], []


def _at(t: float) -> str:
    """A moment in the run to the hundredth of a second, with minutes beside long ones: "381.64 s (6.4 min)"."""
    if t < 1:
        return _s(t)  # "4.2 ms": a sub-second moment in hundredths of a second reads as zero
    return f"{t:,.2f} s" + (f" ({_s(t)})" if t >= 120 else "")


def file_slowest(report: Report, q: Query) -> Out:
    f = next((x for x in report.top_files if is_named(x.path, q.target)), None)
    if f is None or f.slowest_s is None:
        return None
    if f.only_rank is not None or f.ranks <= 1:
        rank = f.only_rank if f.only_rank is not None else f.slowest_rank
        text = f"Only rank {rank} used `{f.path}`, for {_s(f.slowest_s)} of I/O."
        return text, [exact(f.slowest_s, "seconds")], [f.path], [rank] if rank is not None else []
    if f.slowest_rank is None:
        return None
    text = (
        f"Rank {f.slowest_rank} was the slowest on `{f.path}`, with {_s(f.slowest_s)} of I/O on it "
        f"(of {f.ranks:,} ranks; {_s(f.io_time_s)} summed over them, counted at {f.layer})"
    )
    values = [exact(f.slowest_s, "seconds"), exact(f.io_time_s, "seconds")]
    fast = f.kept_fastest
    if fast is not None and fast.rank != f.slowest_rank:
        # "... and by how much?": against the fastest rank Darshan kept for the shared record
        text += f", against {_s(fast.seconds)} on its fastest, rank {fast.rank}"
        values.append(exact(fast.seconds, "seconds"))
    return text + ".", values, [f.path], [f.slowest_rank]


def _group_calls(group: FileGroup, kind: str, noun: str, question: str = "") -> Out:
    n = getattr(group.calls, kind)
    values = [exact(group.files, "bare"), exact(n, "bare")]
    if not (n and n % group.files == 0 and n > group.files > 1):
        return f"The {group.files:,} `{group.pattern}` files had {n:,} {noun}.", values, [], []
    per = n // group.files
    values.append(exact(per, "bare"))
    way = kind.removeprefix("small_")
    moved = {"reads": group.bytes_read, "writes": group.bytes_written}.get(way, 0)
    size = ""
    if moved and getattr(group.calls, way, 0) == n:
        # every call of that kind is counted: their mean size is the group's bytes over them
        size = f", of {_b(moved / n)} each on average"
        values.append(exact(moved / n, "bytes"))
    if re.search(r"\b(each|every|per|how many times|how often)\b", question.lower()):
        # "how many times does each rank open its restart file?": the count per file leads
        text = f"{per:,} {noun} per file on average: the {group.files:,} `{group.pattern}` files had {n:,} in all"
        return text + size + ".", values, [], []
    text = f"The {group.files:,} `{group.pattern}` files had {n:,} {noun}, {per:,} per file on average"
    return text + size + ".", values, [], []


def _with_job_calls(report: Report, out: Out, kind: str, noun: str, question: str) -> Out:
    """ "How many param*.in files are there and how many opens did the job do in total?": the group's count,
    then the job's own total where the question asks for it too."""
    total = r"\b(total|in all|overall|altogether|whole job|the job|the run)\b"
    if out is None or not re.search(total, question.lower()):
        return out
    per = [(i.name, int(getattr(i.calls, kind))) for i in report.interfaces if getattr(i.calls, kind)]
    if not per:
        return out
    name, n = max(per, key=lambda x: x[1])
    text, values, paths, ranks = out
    if any(v.value == n for v in values):
        return out
    return f"{text.rstrip('.')}; the job made {n:,} {noun} in all at {name}.", [*values, exact(n, "bare")], paths, ranks


def answer_calls(report: Report, q: Query) -> Out:
    """How many calls of one kind: on a named file, on a group of files, or over the job per module."""
    kind = q.target or "opens"
    noun = CALL_NOUN.get(kind, kind)
    globbed = glob_group(report, q.raw)  # a pattern names a group even where a file name sits inside it
    if globbed is not None:
        return _with_job_calls(report, _group_calls(globbed, kind, noun, q.raw), kind, noun, q.raw)
    if q.file:
        several = group_of_name(report, q.file)
        if several is not None:
            return _group_calls(several, kind, noun, q.raw)
        f = next((x for x in report.top_files if is_named(x.path, q.file)), None)
        if f is None:
            return None
        n, layer = getattr(f.calls, kind), f.layer
        if not n and f.posix_calls is not None and getattr(f.posix_calls, kind):
            n, layer = getattr(f.posix_calls, kind), "POSIX"
        moved = {"reads": f.bytes_read, "writes": f.bytes_written}.get(kind, 0) if layer == f.layer else 0
        if n and f.ranks > 1 and re.search(r"\b(each|every|per) (rank|process|proc|task)\b", q.raw.lower()):
            # "how many writes did each rank do to fields_0166?": the count per rank leads
            per = n / f.ranks
            text = f"{per:,.0f} {noun} per rank on average: `{f.path}` had {n:,} over its {f.ranks:,} ranks"
            values = [exact(per, "bare"), exact(n, "bare"), exact(f.ranks, "bare")]
            if moved:
                text += f", {_b(moved / n)} each on average"
                values.append(exact(moved / n, "bytes"))
            return text + f" (counted at {layer}).", values, [f.path], []
        if n and moved:
            # "how many fwrite calls went into reads.fastq, and how big?": the mean size comes with the count
            text = f"`{f.path}` had {n:,} {noun} of {_b(moved / n)} on average (counted at {layer})."
            return text, [exact(n, "bare"), exact(moved / n, "bytes")], [f.path], []
        return f"`{f.path}` had {n:,} {noun} (counted at {layer}).", [exact(n, "bare")], [f.path], []
    group = group_named(report, q.raw)
    if group is not None:
        return _with_job_calls(report, _group_calls(group, kind, noun, q.raw), kind, noun, q.raw)
    sized = _sized_calls(report, kind, noun, q.raw) if kind in ("reads", "writes") else None
    if sized is not None:
        return sized
    if kind in ("reads", "writes") and re.search(r"\b(each|every|per) (rank|process|proc|task)\b", q.raw.lower()):
        spread = _calls_per_rank(report, kind, noun)
        if spread is not None:
            return spread
    per = [(i.name, int(getattr(i.calls, kind))) for i in report.interfaces if getattr(i.calls, kind)]
    if not per:
        return f"None: the log counts no {noun} in any module.", [exact(0, "bare")], [], []
    per.sort(key=lambda x: -x[1])
    first, n = per[0]
    text = f"The job made {n:,} {noun} at {first}"
    if len(per) > 1:
        text += " (" + "; ".join(f"{m:,} at {name}" for name, m in per[1:]) + ")"
    return text + ".", [exact(m, "bare") for _, m in per], [], []


def _asked_size(question: str) -> list[int]:
    """The request size a question names ("8 KiB writes", "4k reads", "1MB"), in bytes: both readings of a
    decimal unit (8 KB is 8,000 or 8,192 B to most users)."""
    m = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(k|m|g|kb|mb|gb|kib|mib|gib|b|bytes?)\b", question.lower())
    if m is None:
        return []
    n, unit = float(m.group(1)), m.group(2)
    if unit in ("b", "byte", "bytes"):
        return [round(n)]
    power = "kmg".index(unit[0]) + 1
    sizes = {round(n * 1024**power)}
    if "i" not in unit:
        sizes.add(round(n * 1000**power))
    return sorted(sizes)


def _sized_calls(report: Report, kind: str, noun: str, question: str) -> Out:
    """ "How many 8 KiB writes did the run do?": the requests of that size in Darshan's access-size table (four
    sizes per record, reads and writes together), against the job's calls of the kind asked."""
    sizes = _asked_size(question)
    if not sizes:
        return None
    table = report.rank_table.access_sizes
    hit = next((a for a in table if a.size in sizes), None)
    if hit is None:
        return None
    posix = next((i for i in report.interfaces if i.name == "POSIX"), None)
    mine = int(getattr(posix.calls, kind)) if posix is not None else 0
    other = int(posix.calls.reads if kind == "writes" else posix.calls.writes) if posix is not None else 0
    values = [exact(hit.count, "bare"), exact(hit.size, "bytes")]
    if other == 0 and mine:
        # Every POSIX request was of the kind asked, so the size table's count is of that kind alone
        text = f"{hit.count:,} of the job's {mine:,} POSIX {noun} were {_b(hit.size)}."
        values.append(exact(mine, "bare"))
    else:
        text = (
            f"{hit.count:,} POSIX requests were {_b(hit.size)} (Darshan's size table counts reads and writes "
            f"together), against {mine:,} {noun} and {other:,} "
            f"{CALL_NOUN.get('reads' if kind == 'writes' else 'writes', 'calls')} in all."
        )
        values += [exact(mine, "bare"), exact(other, "bare")]
    return text, values, [], []


def _calls_per_rank(report: Report, kind: str, noun: str) -> Out:
    """ "How many writes did each rank do, and how big?": the calls on each rank's own records, with their mean
    size; a shared record's calls have no per-rank split, and the answer says so."""
    rows = report.rank_table.ranks
    counts = sorted(int(getattr(u, kind)) for u in rows)
    if not counts or not counts[-1]:
        return None
    moved = [(u.bytes_read if kind == "reads" else u.bytes_written, int(getattr(u, kind))) for u in rows]
    total_n = sum(n for _, n in moved)
    size = sum(b for b, _ in moved) / total_n if total_n else 0.0
    lo, mid, hi = counts[0], statistics.median(counts), counts[-1]
    over = f"{total_n:,} in all over the {len(counts):,} ranks with records of their own"
    if hi - lo <= 0.01 * hi:
        text = f"Each rank made {mid:,.0f} {noun} of {_b(size)} on average ({over})."
        values = [exact(mid, "bare"), exact(size, "bytes"), exact(total_n, "bare"), exact(len(counts), "bare")]
    else:
        text = f"Ranks made {lo:,} to {hi:,} {noun} each, {mid:,.0f} at the median, of {_b(size)} on average ({over})."
        values = [exact(lo, "bare"), exact(mid, "bare"), exact(hi, "bare"), exact(size, "bytes")]
        values += [exact(total_n, "bare"), exact(len(counts), "bare")]
    if report.rank_table.shared_files:
        note, nv = shared_note(report)
        text += note
        values += nv
    return text, values, [], []


def _compare_sides(report: Report, q: Query) -> Out:
    """ "which costs each rank more time, coeffs.bin or importing the python package?": each side's time per
    rank, the larger first."""
    sides = compared_sides(report, q.raw)
    if sides is None:
        return None
    a, b = sides
    more, less = (a, b) if a.per_rank >= b.per_rank else (b, a)
    verb = "cost" if more.label.startswith("the ") else "costs"
    text = (
        f"{more.label[0].upper()}{more.label[1:]} {verb} more: about {_s(more.per_rank)} per rank, against "
        f"{_s(less.per_rank)} on {less.label} (summed over ranks: {_s(more.summed)} against {_s(less.summed)})."
    )
    values = [exact(more.per_rank, "seconds"), exact(less.per_rank, "seconds")]
    values += [exact(more.summed, "seconds"), exact(less.summed, "seconds")]
    return text, values, [*more.paths, *less.paths], []


def file_compare(report: Report, q: Query) -> Out:
    """Two named files side by side: how long each took on its slowest rank (the time the job waited on it)."""
    a = next((x for x in report.top_files if q.target and is_named(x.path, q.target)), None)
    b = next((x for x in report.top_files if q.file and is_named(x.path, q.file)), None)
    if a is None or b is None or a.path == b.path:
        return _compare_sides(report, q)

    def took(f: FileUsage) -> float:
        return f.slowest_s if f.slowest_s else f.io_time_s

    long, short = (a, b) if took(a) >= took(b) else (b, a)
    text = (
        f"`{long.path}` takes longer: its slowest rank spent {_s(took(long))} on it, against {_s(took(short))} on "
        f"`{short.path}` (summed over ranks: {_s(long.io_time_s)} against {_s(short.io_time_s)})."
    )
    values = [exact(took(long), "seconds"), exact(took(short), "seconds")]
    values += [exact(long.io_time_s, "seconds"), exact(short.io_time_s, "seconds")]
    return text, values, [long.path, short.path], []


def answer_group(report: Report, q: Query) -> Out:
    g = group_named(report, q.raw) or folder_group(report, q.raw)
    if g is None:
        return None
    if q.yes_no and q.direction != "write" and REREAD.search(q.raw.lower()):
        # "does each rank read its field file more than once?": the family's bytes read against its extents
        return reread(f"the {g.files:,} files named `{g.pattern}`", g.bytes_read, g.read_extent, many=True)
    every = _every_rank(g, q, report.job.nprocs)
    if every is not None:
        return every
    if q.yes_no and q.direction in ("read", "write"):
        some = g.files_read if q.direction == "read" else g.files_written
        moved = g.bytes_read if q.direction == "read" else g.bytes_written
        verb, prep = ("read", "from") if q.direction == "read" else ("wrote", "to")
        if not some:
            return (
                f"No: the job {verb} 0 B {prep} the {g.files:,} files named `{g.pattern}`"
                + (f" ({g.opens:,} opens, {g.stats:,} stats)." if g.opens else "."),
                [exact(g.files, "bare"), exact(g.opens, "bare"), exact(g.stats, "bare")],
                [],
                [],
            )
        return (
            f"Yes: the job {verb} {_b(moved)} {prep} {some:,} of the {g.files:,} files named `{g.pattern}`.",
            [exact(moved, "bytes"), exact(some, "bare"), exact(g.files, "bare")],
            [],
            [],
        )
    if re.search(
        r"\bhow (much time|long)\b|\b(lose|loses|lost|spend|spends|spent|waste\w*|cost\w*)\b", q.raw.lower()
    ) and not re.search(r"\b(bytes|data|gib|mib|gb|mb)\b", q.raw.lower()):
        # "how much time does each rank lose to the conf/table*.dat files?": their time per rank, and on what
        return _group_why(report, g, q)
    # "how many bytes went to the out.* files?" asks what moved, not only how many files
    asks_bytes = re.search(r"\b(bytes|how much(?! time)|how big|how large|data|volume|size|[kmgt]i?b)\b", q.raw.lower())
    out = group_answer(g, q, moved=bool(asks_bytes), nprocs=report.job.nprocs)
    did = re.search(r"\b(did|does|do)\b.*\b(read|write)\b.*\b(anything|any( data| bytes)?|something)\b", q.raw.lower())
    if out is not None and did:
        # "how many, and did it actually read anything from them?": the second half, in the same sentence
        reading = did.group(2) == "read"
        moved = g.bytes_read if reading else g.bytes_written
        verb, prep = ("read", "from") if reading else ("wrote", "to")
        text, values, paths, ranks = out
        said = f"it {verb} {_b(moved)} {prep} them" + ("" if moved else " (nothing)")
        out = (f"{text.rstrip('.')}; {said}.", [*values, exact(moved, "bytes")], paths, ranks)
    return out


def _every_rank(g: FileGroup, q: Query, nprocs: int) -> Out:
    """ "Does every rank open the table files?": each file's opens against the ranks, and the ranks that used
    them (a shared record counts every rank, so the opens per file tell whether each rank came)."""
    if not (q.yes_no and nprocs > 1 and g.opens and EVERY_RANK.search(q.raw.lower())):
        return None
    per = g.opens / g.files
    if re.search(
        r"\b(separate|own|its own|one|a|distinct)( \w+)? files? (for|per|of) (every|each|a|one)( single)? "
        r"(rank|process|task)\b",
        q.raw.lower(),
    ):
        # "does pele write a separate Cell_D file for every rank?": one file per rank, not every rank in each file
        one_each = g.files >= nprocs and g.ranks >= nprocs and per < 2
        text = (
            f"{'Yes' if one_each else 'No'}: the job has {g.files:,} `{g.pattern}` files for its {nprocs:,} ranks, "
            f"used by {g.ranks:,} rank(s), {per:,.0f} open(s) per file."
        )
        return text, [exact(g.files, "bare"), exact(nprocs, "bare"), exact(g.ranks, "bare"), exact(per, "bare")], [], []
    yes = g.ranks >= nprocs and per >= nprocs
    used = f"{g.ranks:,} of the job's {nprocs:,} ranks used them"
    calls = g.calls.reads if q.direction == "read" else g.calls.writes if q.direction == "write" else 0
    did = f" and {'read' if q.direction == 'read' else 'written'} {calls / g.files:,.0f} times each" if calls else ""
    text = (
        f"{'Yes' if yes else 'No'}: the {g.files:,} `{g.pattern}` files were opened {g.opens:,} times, "
        f"{per:,.0f} per file{did}" + (f", as many as the job's {nprocs:,} ranks" if yes else f" ({used})") + "."
    )
    values = [exact(g.files, "bare"), exact(g.opens, "bare"), exact(per, "bare"), exact(nprocs, "bare")]
    values += [exact(g.ranks, "bare")] + ([exact(calls / g.files, "bare")] if calls else [])
    return text, values, [], []


def group_answer(g: FileGroup, q: Query, moved: bool = False, nprocs: int = 0) -> Out:
    values = [exact(g.files, "bare")]
    every = _every_rank(g, q, nprocs)
    if every is not None:
        return every
    some = {"read": g.files_read, "write": g.files_written}.get(q.direction)
    if not moved and some == 0:
        verb = "read" if q.direction == "read" else "written"
        return (
            f"None of the {g.files:,} files named `{g.pattern}` was {verb}"
            + (f" ({g.opens:,} opens, {g.opens / g.files:,.0f} per file, and no bytes)." if g.opens else "."),
            [exact(g.files, "bare"), exact(g.opens, "bare"), exact(g.opens / g.files, "bare")],
            [],
            [],
        )
    if not moved and some is not None and 0 < some < g.files:
        # "How many restart files were written?": those of the pattern the job wrote to, not all it opened.
        verb = "read" if q.direction == "read" else "wrote"
        moved_b = g.bytes_read if q.direction == "read" else g.bytes_written
        return (
            f"The job {verb} {some:,} of the {g.files:,} files named `{g.pattern}` ({_b(moved_b)}).",
            [exact(some, "bare"), exact(g.files, "bare"), exact(moved_b, "bytes")],
            [],
            [],
        )
    if moved and q.yes_no and q.direction in ("read", "write"):
        # "were any bytes actually read from the conf/table*.dat files?": yes or no first, from the bytes
        got = g.bytes_read if q.direction == "read" else g.bytes_written
        verb, prep = ("read", "from") if q.direction == "read" else ("wrote", "to")
        text = f"{'Yes' if got else 'No'}: the job {verb} {_b(got)} {prep} the {g.files:,} files named `{g.pattern}`"
        if g.opens:
            text += f" ({g.opens:,} opens, {g.opens / g.files:,.0f} per file)"
        return (
            text + ".",
            [*values, exact(got, "bytes"), exact(g.opens, "bare"), exact(g.opens / g.files, "bare")],
            [],
            [],
        )
    if moved or q.direction != "both":
        if q.direction == "read" or (q.direction == "both" and g.bytes_read and not g.bytes_written):
            did = f"read {_b(g.bytes_read)} from"
            values.append(exact(g.bytes_read, "bytes"))
        elif q.direction == "write" or not g.bytes_read:
            did = f"wrote {_b(g.bytes_written)} to"
            values.append(exact(g.bytes_written, "bytes"))
        else:
            did = f"wrote {_b(g.bytes_written)} to and read {_b(g.bytes_read)} from"
            values += [exact(g.bytes_written, "bytes"), exact(g.bytes_read, "bytes")]
        text = f"The job {did} {g.files:,} files named `{g.pattern}`"
    else:
        text = f"The job did I/O on {g.files:,} files named `{g.pattern}`"
    extra = []
    if 1 < g.ranks < g.files and g.files % g.ranks == 0:
        # "5,119 per rank": each rank's own share of a family every rank used alike
        extra.append(f"{g.files // g.ranks:,} per rank over {g.ranks:,} ranks")
        values += [exact(g.files // g.ranks, "bare"), exact(g.ranks, "bare")]
    if g.opens:
        extra.append(f"{g.opens:,} opens, {g.opens / g.files:,.0f} per file")
        values += [exact(g.opens, "bare"), exact(g.opens / g.files, "bare")]
    if moved and g.files > 1 and re.search(r"\b(each|per file|apiece|every file)\b", q.raw.lower()):
        # "how big is each?": the bytes per file
        moved_each = (g.bytes_read + g.bytes_written) / g.files
        extra.append(f"{_b(moved_each)} per file on average")
        values.append(exact(moved_each, "bytes"))
    if g.ranks and re.search(r"\b(ranks?|process(es)?|procs?)\b", q.raw.lower()):
        # "how many record_*.xyz files were read and by how many ranks?"
        extra.append(f"used by {g.ranks:,} rank{'s' if g.ranks > 1 else ''}")
        values.append(exact(g.ranks, "bare"))
    if g.io_time_s > 0:
        extra.append(f"{_s(g.io_time_s)} of I/O summed over ranks")
        values.append(exact(g.io_time_s, "seconds"))
    return text + (f" ({', '.join(extra)})" if extra else "") + ".", values, [], []


def file_balance(report: Report, q: Query) -> Out:
    f = next((x for x in report.top_files if is_named(x.path, q.target)), None)
    if f is None:
        return None
    t = report.rank_table
    slow = next((r for r in t.shared_slowest if r.path == f.path), None)
    fast = next((r for r in t.shared_fastest if r.path == f.path), None)
    if slow is None or fast is None or slow.bytes is None or fast.bytes is None:
        return None
    uneven = slow.bytes >= 2 * max(fast.bytes, 1) or slow.seconds >= 2 * max(fast.seconds, 1e-3) + 1.0
    asked_uneven = bool(re.search(r"\b(imbalanced|unbalanced)\b", q.raw.lower()))
    yes = uneven if asked_uneven else not uneven
    text = (
        f"{'Yes' if yes else 'No'}: of `{f.path}`'s {f.ranks:,} ranks, Darshan kept the slowest, rank {slow.rank}, at "
        f"{_b(slow.bytes)} in {_s(slow.seconds)}, and the fastest, rank {fast.rank}, at {_b(fast.bytes)} in "
        f"{_s(fast.seconds)}."
    )
    values = [exact(slow.bytes, "bytes"), exact(slow.seconds, "seconds"), exact(fast.bytes, "bytes")]
    values += [exact(fast.seconds, "seconds"), exact(f.ranks, "bare")]
    return text, values, [f.path], [slow.rank, fast.rank]


def _family_per_rank(report: Report, q: Query) -> Out:
    g = glob_group(report, q.raw) or group_named(report, q.raw)
    if g is None or g.files < 2 or g.ranks < 1:
        return None
    per = g.files / g.ranks
    some = g.files_read if q.direction == "read" else g.files_written if q.direction == "write" else g.files
    verb = {"read": "read", "write": "wrote"}.get(q.direction, "used")
    text = (
        f"Each rank {verb} {per:,.0f} of the `{g.pattern}` files on average: {g.files:,} files over the "
        f"{g.ranks:,} rank(s) that used them"
        + (f" ({some:,} of them {'read' if verb == 'read' else 'written'})" if some != g.files else "")
        + "."
    )
    return text, [exact(per, "bare"), exact(g.files, "bare"), exact(g.ranks, "bare")], [], []


def file_per_rank(report: Report, q: Query) -> Out:
    """Each rank's bytes on one named file: from its own records, or from the fastest and slowest rank a shared
    record keeps (equal bytes at both ends: the ranks moved the same amount, as far as Darshan kept)."""
    if q.target and name_pattern(q.target) and re.search(r"\bhow many\b", q.raw.lower()):
        # "how many record_*.dat files did each rank write?": the family's files per rank, not one member's bytes
        counted = _family_per_rank(report, q)
        if counted is not None:
            return counted
    f = next((x for x in report.top_files if is_named(x.path, q.target)), None)
    if f is None:
        return None
    read = q.direction == "read" or (q.direction == "both" and f.bytes_read > f.bytes_written)
    verb, total = ("read", f.bytes_read) if read else ("wrote", f.bytes_written)
    if f.only_rank is not None:
        of = f" (1 of the job's {report.job.nprocs:,} ranks)" if report.job.nprocs > 1 else ""
        text = f"Only rank {f.only_rank}{of} used `{f.path}`: it {verb} {_b(total)}."
        values = [exact(total, "bytes"), exact(1, "bare"), exact(report.job.nprocs, "bare")]
        return ("No: " + lower_first(text) if q.yes_no else text), values, [f.path], [f.only_rank]
    fast, slow = f.kept_fastest, f.kept_slowest
    if fast is None or slow is None or fast.bytes is None or slow.bytes is None:
        return None
    # Darshan keeps a shared record's bytes per rank only for these two; moved bytes may be reads and writes
    per = total / f.ranks if f.ranks else 0.0
    even = abs(slow.bytes - fast.bytes) <= 0.01 * max(slow.bytes, 1)
    values = [exact(slow.bytes, "bytes"), exact(total, "bytes"), exact(f.ranks, "bare")]
    if even:
        text = (
            f"every one of `{f.path}`'s {f.ranks:,} ranks {verb} {_b(slow.bytes)} as far as Darshan kept: its one "
            "shared record keeps only the fastest and the slowest rank"
            + (
                f" (rank {fast.rank} for both)"
                if fast.rank == slow.rank
                else f" (rank {fast.rank} and rank {slow.rank})"
            )
            + f", and each moved {_b(slow.bytes)} ({_b(total)} in all, {_b(per)} per rank on average)"
        )
        values.append(exact(per, "bytes"))
        word = "Yes: " if q.yes_no else ""
        return f"{word}{text[0].upper() if not word else text[0]}{text[1:]}.", values, [f.path], [fast.rank, slow.rank]
    text = (
        f"the ranks of `{f.path}` moved different amounts: Darshan kept its slowest rank, rank {slow.rank}, at "
        f"{_b(slow.bytes)} and its fastest, rank {fast.rank}, at {_b(fast.bytes)} ({_b(total)} {verb} in all over "
        f"{f.ranks:,} ranks; the others' shares are not kept)"
    )
    values.append(exact(fast.bytes, "bytes"))
    word = "No: " if q.yes_no else ""
    return f"{word}{text[0].upper() if not word else text[0]}{text[1:]}.", values, [f.path], [fast.rank, slow.rank]


def interface_files(report: Report, q: Query) -> Out:
    i = next((x for x in report.interfaces if x.name.split(" (")[0] == q.target and x.records), None)
    if i is None:
        text, values = no_module(report, q.target or "")
        return f"None: {text}.", values, [], []
    if re.search(r"\bopen", q.raw.lower()):
        # "How many files did POSIX open?": its opens, which can be none for a file it only stat'ed.
        c = i.calls
        if not c.opens:
            return (
                f"{i.name} opened 0 files: its {i.files:,} file record(s) hold no open call"
                + (f", only {c.stats:,} stat call(s)." if c.stats else "."),
                [exact(0, "bare"), exact(i.files, "bare"), exact(c.stats, "bare")],
                [],
                [],
            )
        if i.opened_files:
            text = f"{i.name} opened {i.opened_files:,} file(s), with {c.opens:,} opens"
            values = [exact(i.opened_files, "bare"), exact(c.opens, "bare")]
            if i.opened_files != i.files:
                text += f"; it has records of {i.files:,}"
                values.append(exact(i.files, "bare"))
            return text + ".", values, [], []
        return (
            f"{i.name} has records of {i.files:,} file(s), with {c.opens:,} opens.",
            [exact(i.files, "bare"), exact(c.opens, "bare")],
            [],
            [],
        )
    return f"{i.name} has records of {i.files:,} file(s).", [exact(i.files, "bare")], [], []


def file_ranks(report: Report, q: Query) -> Out:
    """Which ranks used a named file: the one rank whose own records hold it all, every rank of a shared record
    (with the slowest Darshan kept), or how many ranks had records of it."""
    f = next((x for x in report.top_files if is_named(x.path, q.target)), None)
    if f is None:
        return None
    verb = {"read": "read", "write": "wrote"}.get(q.direction, "used")
    moved = f.bytes_read if q.direction == "read" else f.bytes_written if q.direction == "write" else None
    what = f" ({_b(moved)})" if moved else ""
    values = [exact(moved, "bytes")] if moved else []
    n_all = report.job.nprocs
    if f.only_rank is not None:
        of = f" (1 of the job's {n_all:,} ranks)" if n_all > 1 else ""
        text = f"Rank {f.only_rank} alone{of} {verb} `{f.path}`{what}, in {_s(f.io_time_s)} of I/O."
        if q.yes_no:
            # "Is one rank doing all the writing of X?" is answered yes; "is X read in parallel?" no
            text = f"{'No' if q.healthy else 'Yes'}: {lower_first(text)}"
        return (
            text,
            [*values, exact(f.io_time_s, "seconds"), exact(1, "bare"), exact(n_all, "bare")],
            [f.path],
            [f.only_rank],
        )
    n = report.job.nprocs
    lay = next((x for x in report.lustre_layouts if x.path == f.path), None)
    posix_asked = f.layer == "MPI-IO" and re.search(r"\bposix\b|\bfile ?system\b|\bdisk\b", q.raw.lower())
    lone = f.posix_slowest
    total = f.bytes_read + f.bytes_written
    if posix_asked and (
        lay is not None or (lone is not None and lone.bytes is not None and lone.bytes >= 0.99 * total)
    ):
        # Beneath collective MPI-IO only the aggregators reach the file system: the POSIX writers (readers), from
        # the Lustre layout's count, or the one rank a shared POSIX record kept with all of the file's bytes.
        verb2 = "read" if q.direction == "read" else "wrote"
        if lone is not None and lone.bytes is not None and total and lone.bytes >= 0.99 * total:
            # The shared POSIX record kept one rank with all of the file's bytes: one aggregator, whatever the
            # layout's count of ranks with a record says
            k, who = 1, f"Only rank {lone.rank}"
        else:
            assert lay is not None
            k = lay.readers if q.direction == "read" else lay.writers
            who = f"{k:,} rank(s)"
        text = f"{who} {verb2} `{f.path}` at the POSIX level, of the {f.ranks:,} that used it through MPI-IO"
        if k < f.ranks and f.collective:
            text += " (collective buffering: only the aggregators reach the file system)"
        text += "."
        if q.yes_no:
            text = f"{'No' if k < f.ranks else 'Yes'}: {lower_first(text)}"
        return text, [exact(k, "bare"), exact(f.ranks, "bare")], [f.path], []
    if q.yes_no:
        text = (
            f"Yes: {f.ranks:,} ranks {verb} `{f.path}`{what}."
            if q.healthy
            else f"No: {f.ranks:,} ranks {verb} `{f.path}`{what}, not one alone."
        )
        return text, [exact(f.ranks, "bare"), *values], [f.path], []
    if every_rank(report, f):
        slow = next((k for which, k in kept_ranks(report, q.target) if which == "slowest"), None)
        text = f"All {n:,} ranks {verb} `{f.path}`{what}: Darshan kept one shared record for it"
        if slow is not None:
            text += f", and rank {slow.rank} as its slowest, with {_s(slow.seconds)}"
            values.append(exact(slow.seconds, "seconds"))
            if slow.bytes is not None and re.search(r"\b(each|apiece|per rank|every rank|how much)\b", q.raw.lower()):
                text += f" and {_b(slow.bytes)}"
                values.append(exact(slow.bytes, "bytes"))
        if moved and n and re.search(r"\b(each|apiece|per rank|every rank)\b", q.raw.lower()):
            # "how much each?": the record keeps no per-rank bytes; the even split is what the total allows
            text += f"; an even split would be {_b(moved / n)} per rank"
            values.append(exact(moved / n, "bytes"))
        return text + ".", values, [f.path], [slow.rank] if slow is not None else []
    text = f"{f.ranks:,} rank(s) {verb} `{f.path}`{what}, each with a record of its own."
    return text, [exact(f.ranks, "bare"), *values], [f.path], []


def file_why(report: Report, q: Query) -> Out:
    """Why one named file is slow: the costliest problem that names it, with its numbers and fix."""
    target = q.target or ""
    if "." not in target.strip(".") or name_pattern(target) or glob_group(report, q.raw) is not None:
        # A loose word ("the species yaml configs") or a pattern names a group of files: answered for the group
        loose = [g for g in report.file_groups if target and group_has(g, target)]
        group = (
            glob_group(report, q.raw)
            or group_named(report, q.raw)
            or max(loose, key=lambda g: (g.files, g.io_time_s), default=None)
        )
        if group is not None and group.files >= 2:
            return _group_why(report, group, q)
    naming = [
        f
        for f in report.findings
        if f.severity in (Severity.CRITICAL, Severity.WARNING)
        and f.impact is not None
        and f.impact.seconds
        and any(is_named(fe.path, q.target) for fe in f.files)
    ]
    if not naming:
        return _file_why_unpriced(report, q)
    from iodiag.analysis.outcomes.verdict import action_for, by_verdict

    # The verdict's ranking first (a cause before the imbalance it explains), then the cost.
    place = by_verdict(report.verdict)
    f = min(naming, key=lambda x: (place(x.code), -(x.impact.seconds or 0.0)))  # type: ignore[union-attr]
    path = next(fe.path for fe in f.files if is_named(fe.path, q.target))
    seconds = f.impact.seconds or 0.0  # type: ignore[union-attr]
    named = f"{f.code}: {f.subject}" if f.subject else f.code
    todo = action_for(f)
    usage = next((x for x in report.top_files if x.path == path), None)
    values = [exact(seconds, "seconds")]
    took = ""
    if usage is not None and usage.slowest_s:
        # How long the file's I/O took (its slowest rank), beside what the cause costs.
        who = f" (rank {usage.slowest_rank})" if usage.slowest_rank is not None and usage.ranks > 1 else ""
        if usage.only_rank is not None and report.job.nprocs > 1:
            who = f" (rank {usage.only_rank}, the only rank that used it)"
        on = f", on {FS_NAMES.get(usage.file_system, usage.file_system)}," if usage.file_system in FS_NAMES else ""
        if on and usage.stripe_count and usage.stripe_size:
            # its layout: what a fix for a shared file's write rate weighs (more OSTs, stripe-sized requests)
            on = f"{on[:-1]} ({usage.stripe_count} stripe(s) of {_b(usage.stripe_size)}),"
            values += [exact(usage.stripe_count, "bare"), exact(usage.stripe_size, "bytes")]
        profile, pv = request_profile(usage, q.direction)
        moved = usage.bytes_read + usage.bytes_written
        # The rate the job saw on it: every byte over the time its slowest rank took
        rate = f"{_b(moved / usage.slowest_s)}/s" if moved and usage.slowest_s > 0 else ""
        if rate:
            who = f" ({who[2:-1]}, {rate})" if who else f" ({rate})"
        took = f"{on} took {_s(usage.slowest_s)} on its slowest rank{who}{profile}{',' if profile else ''} and"
        values[:0] = [exact(usage.slowest_s, "seconds"), *pv]
        if rate:
            values.append(exact(moved / usage.slowest_s, "rate"))
    also = ""
    second = [x for x in naming if x.code != f.code]
    if second:
        # The next problem on the same file, by the same ranking: "also M03 (8,192 independent writes)".
        n = min(second, key=lambda x: (place(x.code), -(x.impact.seconds or 0.0)))  # type: ignore[union-attr]
        also = f"; also {n.code}" + (f" ({n.subject})" if n.subject else "")
    spread, sv = aggregators(report, usage) if usage is not None else ("", [])
    if not spread:
        spread, sv = kept_spread(report, path)
    values += sv
    took = f"{took[: -len(' and')].rstrip(',')}{spread}, and" if spread and took.endswith(" and") else took
    text = f"`{path}`{took} is slow mainly because of {lower_first(f.title)} ({named}), ≈ {_s(seconds)}" + (
        f": {lower_first(todo).rstrip('.')}" if todo else ""
    )
    if f.actions and (re.search(FIX_ASK, q.raw.lower()) or WHY_SLOW.search(q.raw.lower())):
        # "how do I speed it up?", "what's slowing down my checkpoint?": the finding's own command, as the
        # verdict gives it
        text += f" ({quote_command(f.actions[0].command)})"
    return text + also + ".", values, [path], []


def _group_why(report: Report, g: FileGroup, q: Query) -> Out:
    """Why a group of files is slow: its per-rank time and calls, and the costliest finding naming its files."""
    rx = group_regex(g)
    naming = [
        f
        for f in report.findings
        if f.severity in (Severity.CRITICAL, Severity.WARNING)
        and f.impact is not None
        and f.impact.seconds
        and any(rx.fullmatch(fe.path) for fe in f.files)
    ]
    run = report.job.runtime_s
    per = per_rank(g)
    if not naming:
        # A job-level cause names no files (a metadata storm counts calls, not paths): it explains the group
        # when its cost is the group's own time per rank
        naming = [
            f
            for f in report.findings
            if f.severity in (Severity.CRITICAL, Severity.WARNING)
            and not f.files
            and f.impact is not None
            and f.impact.seconds
            and 0.5 * per <= f.impact.seconds <= 1.2 * per
        ]
    c = g.calls
    calls = [(n, w) for n, w in ((g.opens, "opens"), (g.stats, "stats"), (c.reads, "reads"), (c.writes, "writes")) if n]
    # Per file too, where the files were used alike ("999,999 reads, 90,909 per file")
    moved_by = {"reads": g.bytes_read, "writes": g.bytes_written}
    said = ", ".join(
        # "small": what a reader asks about first when many requests cost the time
        f"{n:,} {'small ' if moved_by.get(w) and moved_by[w] / n <= SMALL_REQUEST else ''}{w}"
        + (f" ({n / g.files:,.0f} per file)" if g.files > 1 and n > g.files else "")
        # the requests' size, where they moved data: small ones are the usual reason many calls cost time
        + (f" of {_b(moved_by[w] / n)} on average" if moved_by.get(w) else "")
        for n, w in calls
    )
    mis, mis_values = misaligned(g.calls, None, g.files)
    said += mis
    share = f" ({percent(per / run)} of the {_s(run)} run)" if run > 0 else ""
    took = f"{_s(per)} per rank" + (f" over its {g.ranks:,} rank(s)" if g.ranks > 1 else "") + share
    uneven = g.files > 1 and per > 0 and g.slowest_s >= 2 * per and g.slowest_s - per >= 1.0
    if g.ranks > 1 and g.ranks >= report.job.nprocs and not uneven:
        # "how do we cut the startup cost of the yaml files?": that every rank pays it is the point
        took = f"{_s(per)} on every rank (all {g.ranks:,}" + (f"; {share.strip(' ()')})" if share else ")")
    elif uneven:
        # A handful of ranks far slower than the rest ("80 s for a few Cell_D files, 5 s for most"): the mean
        # alone would hide them
        took = (
            f"{_s(per)} per rank on average over its {g.ranks:,} rank(s){share}, but up to {_s(g.slowest_s)} "
            "on one rank's file"
        )
    fs = FS_NAMES.get(g.file_system or "", "")
    mostly, meta_values = mostly_metadata(g.meta_time_s, g.io_time_s)
    text = (
        f"The {g.files:,} `{g.pattern}` files{f' on {fs}' if fs else ''} took about {took}"
        f"{mostly}, with {said} "
        f"({_b(g.bytes_read + g.bytes_written)} moved"
    )
    values = [exact(g.files, "bare"), exact(per, "seconds"), *meta_values, *(exact(n, "bare") for n, _ in calls)]
    if uneven:
        values.append(exact(g.slowest_s, "seconds"))
    values += mis_values
    values += [exact(moved_by[w] / n, "bytes") for n, w in calls if moved_by.get(w)]
    values.append(exact(g.bytes_read + g.bytes_written, "bytes"))
    each = (g.bytes_read + g.bytes_written) / g.files if g.files > 1 else 0.0
    if each > 0:
        text += f", {_b(each)} per file"
        values.append(exact(each, "bytes"))
        if g.ranks == g.files and per > 0 and not mostly:
            # One file per rank: a rank's rate on its own file is what the storage gave each writer
            text += f", {_b(each / per)}/s per rank"
            values.append(exact(each / per, "rate"))
    text += ")"
    if run > 0:
        values.append(exact(per / run * 100, "percent"))
    asked = META_VS_DATA.search(q.raw.lower())
    if q.yes_no and asked and g.io_time_s > 0:
        # "does opening them cost more than reading them?": yes or no from the metadata and data times
        meta_first = bool(asked.group(1))
        more = (asked.group(2) or asked.group(5)) not in ("less", "shorter")
        meta, data = g.meta_time_s, g.io_time_s - g.meta_time_s
        yes = (meta > data) == meta_first if more else (meta < data) == meta_first
        text = f"{'Yes' if yes else 'No'}: {lower_first(text)}"
    if not naming:
        noted = max(
            (
                f
                for f in report.findings
                if f.severity is Severity.INFO
                and f.impact is not None
                and f.impact.seconds
                and f.recommendations
                and any(rx.fullmatch(fe.path) for fe in f.files)
            ),
            # a measured or modelled cost before an upper bound (misaligned requests "at most ..."), then the larger
            key=lambda f: (
                not f.impact.basis.startswith("modelled: upper bound"),  # type: ignore[union-attr]
                f.impact.seconds or 0.0,  # type: ignore[union-attr]
            ),
            default=None,
        )
        shared_in = _shared_inputs_hint(g, report.job.nprocs, per)
        if noted is None:
            hint = _unpriced_hint(g, per, mostly)
            return text + "; no finding prices them as a problem" + (hint or shared_in) + ".", values, [], []
        from iodiag.analysis.outcomes.verdict import action_for

        # Under the warning threshold, but what the log says about them, and its fix, is still the answer to "why"
        seconds = noted.impact.seconds or 0.0  # type: ignore[union-attr]
        todo = action_for(noted)
        text += (
            f"; no finding prices them above info, but {noted.code} notes them ({lower_first(noted.title)}, "
            f"≈ {_s(seconds)})" + (f": {lower_first(todo).rstrip('.')}" if todo else "")
        )
        return text + shared_in + ".", [*values, exact(seconds, "seconds")], [], []
    from iodiag.analysis.outcomes.verdict import action_for, by_verdict

    place = by_verdict(report.verdict)
    f = min(naming, key=lambda x: (place(x.code), -(x.impact.seconds or 0.0)))  # type: ignore[union-attr]
    seconds = f.impact.seconds or 0.0  # type: ignore[union-attr]
    named = f"{f.code}: {f.subject}" if f.subject else f.code
    todo = action_for(f)
    text += f", and are slow mainly because of {lower_first(f.title)} ({named}), ≈ {_s(seconds)}" + (
        f": {lower_first(todo).rstrip('.')}" if todo else ""
    )
    return text + ".", [*values, exact(seconds, "seconds")], [], []


def _shared_inputs_hint(g: FileGroup, nprocs: int, per: float) -> str:
    """Many small files every rank opens and reads (inputs, frames, configs): reading them once and sharing
    them, or packing them, cuts the opens as well as the small reads. Empty when not that pattern or too short."""
    if per < 1.0 or g.files < 2 or nprocs < 2 or g.ranks < nprocs or g.bytes_written or not g.bytes_read:
        return ""
    if g.opens < g.files * nprocs or g.bytes_read / g.files > 1 << 20:  # small files: a MiB or less each
        return ""
    return (
        f"; every one of the {nprocs:,} ranks opens and reads each file: reading them once on one rank and "
        "broadcasting them (MPI_Bcast), or packing them into one larger file, would cut it"
    )


def _unpriced_hint(g: FileGroup, per: float, mostly: str) -> str:
    """What would cut a family's time when no finding prices it, read off its own counters: many opens for
    little data (fewer, larger files) or small requests (fewer, larger requests). Empty when neither holds or
    the time is too short to be worth it."""
    if per < 1.0:
        return ""
    if mostly:
        return "; most of that is opening and closing them: fewer, larger files (or keeping them open) would cut it"
    c = g.calls
    calls = c.reads + c.writes
    moved = g.bytes_read + g.bytes_written
    if calls and moved / calls <= SMALL_REQUEST:
        return "; with requests this small, buffering them into fewer, larger ones (1 MiB or more) would cut it"
    return ""


def _file_why_unpriced(report: Report, q: Query) -> Out:
    """No priced finding names the file: its own time and rate, and what the log notes about it (an info finding
    still says how it was used, e.g. 998,400 reads of 4 KiB), beside another file the question names."""
    f = next((x for x in report.top_files if is_named(x.path, q.target)), None)
    if f is None or f.io_time_s <= 0:
        return None
    moved = f.bytes_read + f.bytes_written
    profile, pv = request_profile(f, q.direction)
    slowest = ""
    if f.slowest_s and f.ranks > 1 and f.slowest_rank is not None:
        slowest = f" ({_s(f.slowest_s)} on its slowest rank, rank {f.slowest_rank})"
        pv = [exact(f.slowest_s, "seconds"), *pv]
    text = (
        f"`{f.path}` took {_s(f.io_time_s)} of I/O summed over its {f.ranks:,} rank(s){slowest} for {_b(moved)} "
        f"({_b(moved / f.io_time_s)}/s){profile}"
    )
    values = [exact(f.io_time_s, "seconds"), exact(moved, "bytes"), exact(moved / f.io_time_s, "rate"), *pv]
    spread, sv = aggregators(report, f)
    if not spread:
        spread, sv = kept_spread(report, f.path)
    text += spread
    values += sv
    paths = [f.path]
    other = next(
        (x for x in report.top_files if x.path != f.path and q.raw and named_in(x.path, q.raw)),
        None,
    )
    if other is not None and other.io_time_s > 0:
        o_moved = other.bytes_read + other.bytes_written
        text += (
            f", against {_s(other.io_time_s)} for {_b(o_moved)} ({_b(o_moved / other.io_time_s)}/s) on `{other.path}`"
        )
        values += [exact(other.io_time_s, "seconds"), exact(o_moved, "bytes"), exact(o_moved / other.io_time_s, "rate")]
        paths.append(other.path)
    share = report.io_share
    causes = report.verdict.causes
    took = f.slowest_s or f.io_time_s
    if other is None and share is not None and causes and took < 0.25 * share.slowest_rank_io_s:
        # The file is not where the time went: say where it did, in the same sentence
        c = causes[0]
        cause = report.finding(c.code)
        subject = f": {cause.subject}" if cause is not None and cause.subject else ""
        text += (
            f"; that is little of the busiest rank's {_s(share.slowest_rank_io_s)} of I/O, which went mostly to "
            f"{lower_first(c.title)} ({c.code}{subject}), ≈ {_s(c.seconds)}"
        )
        values += [exact(share.slowest_rank_io_s, "seconds"), exact(c.seconds, "seconds")]
    note = next(
        (
            x
            for x in report.findings
            if x.severity is not Severity.OK and x.files and any(is_named(fe.path, q.target) for fe in x.files)
        ),
        None,
    )
    if note is not None:
        text += f". {note.code} notes it: {note.message.split(' (Shown as info')[0].rstrip('.')}"
    asked = " ".join(q.raw.lower().split())
    if re.search(FIX_ASK, asked) or re.search(r"\b(how (could|can|do|to)|get more|faster|speed\w*)\b", asked):
        levers = _file_levers(f)
        if levers:
            # No finding prices a change, but the file's own layout and calls still say what would give it more
            text += "; nothing in the log prices a change for it, but its counters leave room for more: " + "; ".join(
                levers
            )
    return text + ".", values, paths, []


def _file_levers(f: FileUsage) -> list[str]:
    """What a file's own layout and calls leave room for, where several ranks share it."""
    out = []
    if f.stripe_count == 1 and f.ranks > 1:
        out.append(
            f"it sits on one OST (stripe count 1) for {f.ranks:,} ranks, so striping its folder over more OSTs "
            "before the file is written spreads it over more storage servers"
        )
    if f.layer == "MPI-IO" and f.ranks > 1 and f.independent and not f.collective:
        out.append("its MPI-IO calls are all independent, so collective calls would let MPI-IO combine them")
    return out


def software(report: Report, q: Query) -> Out:
    """ "Why does the log list site-packages files?": they are the software environment, and what they cost."""
    kinds = report.software_files
    if not kinds:
        return None
    parts: list[str] = []
    values: list[Quantity] = []
    why = {
        "python packages": "read by Python while it starts and imports packages",
        "shared libraries": "loaded by the dynamic linker when the program starts",
        "system files": "read by the C library and the runtime for configuration",
    }
    for k in kinds:
        moved = k.bytes_read + k.bytes_written
        of = {"python packages": "the Python environment", "system files": "system configuration"}.get(k.kind, k.kind)
        parts.append(
            f"{k.files:,} files of {of} ({why.get(k.kind, 'the software environment')}; e.g. {quote(k.example)}): "
            f"{_b(moved)} in {_s(k.io_time_s)} of I/O summed over ranks"
        )
        values += [exact(k.files, "bare"), exact(moved, "bytes"), exact(k.io_time_s, "seconds")]
    text = "They are the software environment, not the job's data: " + "; ".join(parts)
    io = report.io_share
    cost = sum(k.io_time_s for k in kinds)
    if io is not None and io.runtime_s > 0:
        small = cost < 0.01 * io.runtime_s * max(report.job.nprocs, 1)
        text += f" ({'negligible' if small else 'worth a look'} beside the {_s(io.runtime_s)} run)"
        values.append(exact(io.runtime_s, "seconds"))
    return text + ".", values, [], []


def not_recorded(report: Report, q: Query) -> Out:
    asked = (q.target or "").lower()
    if re.match(r"host|node|which (compute )?node|compute node|how many nodes|number of nodes", asked) and (
        report.job.hosts
    ):
        # A DXT trace names the host of each rank's records.
        hosts = report.job.hosts
        # Host names come from the log: code spans keep them inert, like file names.
        shown = ", ".join(quote(h) for h in hosts[:8]) + (f" and {len(hosts) - 8} more" if len(hosts) > 8 else "")
        text = f"The DXT trace names {len(hosts)} host(s) (the hostname of each rank's records): {shown}."
        return text, [exact(len(hosts), "bare")], [], []
    if re.match(r"(which|what) (compute )?nodes?|node ?names?|hosts?|host ?names?", asked):
        q = q.model_copy(update={"target": "which node or host each rank ran on (a DXT trace would)"})
    if re.match(r"queue", asked):
        q = q.model_copy(update={"target": "how long the job waited in the queue (only its start and end times)"})
    if re.match(r"killed|exit|crash|terminat|finish", asked):
        q = q.model_copy(update={"target": "whether the job was killed or exited cleanly (its exit status)"})
    # "Can the log tell me how much memory it used?" is a yes/no question: no first.
    whether = re.match(r"^\s*(can|could|does|do|did|is|was|will|would)\b", q.raw.lower())
    text = (
        f"{'No: the' if whether else 'The'} log does not record {q.target or 'that'}: Darshan keeps I/O counters "
        "per file and rank (and, with DXT, each read and write with its host), not the job's hosts without DXT, "
        "memory, processors, page cache, exit status or network (MPI communication is counted only by the "
        "optional APMPI module)."
    )
    values: list[Quantity] = []
    if re.match(r"host|node|which (compute )?node|compute node|how many nodes|number of nodes", asked):
        # What the header does hold: the process count, from which nodes follow only with the ranks per node
        n = report.job.nprocs
        text += f" It records the job's {n:,} process(es) (MPI ranks); the nodes are those divided by ranks per node."
        values.append(exact(n, "bare"))
    return text, values, [], []
