"""Answers about the job and its layers: bytes, interfaces, file systems, stripes and OSTs, collective I/O, rates
and shares."""

from __future__ import annotations

import re

from iodiag.analysis.models import (
    FileGroup,
    FileSystemUsage,
    IOShare,
    Report,
    Severity,
)
from iodiag.analysis.outcomes.verdict import lead_words
from iodiag.narration.checking.quantities import Quantity, exact
from iodiag.narration.checking.untrusted import quote
from iodiag.narration.fact_query.common import (
    FS_NAMES,
    Out,
    aggregators,
    beneath,
    bytes_moved,
    counted_interfaces,
    lower_first,
    module_family,
    no_module,
    percent,
    ranks_on_slow_ost,
    software_kinds,
    totals,
)
from iodiag.narration.fact_query.common import (
    fmt_bytes as _b,
)
from iodiag.narration.fact_query.common import (
    fmt_seconds as _s,
)
from iodiag.narration.fact_query.files import group_answer
from iodiag.narration.fact_query.names import (
    glob_group,
    group_holding,
    group_named,
    group_regex,
    groups_named,
    is_named,
    name_pattern,
)
from iodiag.narration.fact_query.query import Query, by_direction
from iodiag.narration.fact_query.vocabulary import (
    BIG_SHARE,
    BOUND_SHARE,
    FIX_ASK,
    MOST_OF,
    NEGLIGIBLE_SHARE,
    STRIPE_BAR,
    STRIPE_SAID,
    WHY_SLOW,
    asked_file_systems,
)


def uses(report: Report, q: Query) -> Out:
    name = q.target or ""
    names = (
        ("HDF5", "H5D", "H5F")
        if name == "HDF5"
        else ("PnetCDF", "PNETCDF_FILE", "PNETCDF_VAR")
        if (name == "PnetCDF")
        else (name,)
    )
    rows = [i for i in report.interfaces if i.name in names or i.name.startswith(f"{name} (")]
    used = [i for i in rows if i.records > 0]
    held = [m for m in report.job.modules if m.name in names and m.records > 0]
    if not used and held:
        # The module is in the log though no data counters made an interface row (PnetCDF file records only)
        said = ", ".join(f"{m.name} ({m.records:,} record(s))" for m in held)
        return f"Yes: the log holds {said}: the job used {name}.", [exact(m.records, "bare") for m in held], [], []
    if not used:
        went = [i for i in report.interfaces if i.records > 0]
        # With what the other interfaces moved: "through STDIO (45.78 MiB written in 500,000 writes)"
        present = (
            ", ".join(
                f"{i.name} ({_b(i.bytes_written)} written, {_b(i.bytes_read)} read, {i.operations:,} operations)"
                for i in went[:3]
            )
            or "no instrumented interface"
        )
        values = [exact(n, "bytes") for i in went[:3] for n in (i.bytes_written, i.bytes_read)]
        values += [exact(i.operations, "bare") for i in went[:3]]
        return f"No: the log has no {name} records; the job's I/O went through {present}.", values, [], []
    i = max(used, key=lambda x: x.bytes_read + x.bytes_written)
    ops = i.operations
    moved = i.bytes_read + i.bytes_written
    if q.data and moved == 0 and all(r.name.endswith("(files)") for r in used):
        f = used[0]
        kind = "dataset (H5D)" if name == "HDF5" else "variable (PNETCDF_VAR)" if name == "PnetCDF" else "data"
        return (
            f"No: the log has no {kind} records: the job only opened {f.files:,} {name} file(s), and no data moved "
            f"through {name}.",
            [exact(f.files, "bare")],
            f.top_paths[:2],
            [],
        )
    family = [r for r in report.interfaces if r.records and (r.name == name or r.name.startswith(f"{name} ("))]
    by_file = next((r for r in family if r.name.endswith("(files)")), i)
    paths = by_file.top_paths or i.top_paths
    on = ""
    if paths and by_file.files:
        shown = ", ".join(f"`{x}`" for x in paths[:2])
        on = f" on {by_file.files:,} file(s), " + ("" if by_file.files <= 2 else "among them ") + shown
    text = (
        f"Yes: {i.name} shows {ops:,} operations moving {_b(moved)} "
        f"({_b(i.bytes_written)} written, {_b(i.bytes_read)} read) in {i.records:,} record(s){on}."
    )
    return (
        text,
        [
            exact(ops, "bare"),
            exact(moved, "bytes"),
            exact(i.bytes_written, "bytes"),
            exact(i.bytes_read, "bytes"),
            exact(i.records, "bare"),
        ],
        [],
        [],
    )


def top_interface(report: Report, q: Query) -> Out:
    rows = [i for i in counted_interfaces(report) if bytes_moved(i) > 0]
    if not rows:
        return None
    total = sum(bytes_moved(i) for i in rows)
    rows.sort(key=lambda i: -bytes_moved(i))
    top = rows[0]
    moved = bytes_moved(top)
    rest = "; ".join(f"{i.name} {_b(bytes_moved(i))}" for i in rows[1:3])
    text = f"{top.name} did most of the I/O: {_b(moved)} of the job's {_b(total)} ({percent(moved / total)})" + (
        f", against {rest}." if rest else "."
    )
    values = [exact(moved, "bytes"), exact(total, "bytes"), exact(moved / total * 100, "percent")]
    values += [exact(bytes_moved(i), "bytes") for i in rows[1:3]]
    return text, values, [], []


def job_info(report: Report, q: Query) -> Out:
    j = report.job
    if q.target == "exe":
        exe = j.exe.strip()
        if not exe or re.fullmatch(r"\d+( .*)?", exe):
            return (
                "The log does not name the program: its executable is recorded only as an anonymized number "
                f"({quote(exe or 'none')}).",
                [],
                [],
                [],
            )
        return f"The log was written by {quote(exe)}, run on {j.nprocs:,} rank(s).", [exact(j.nprocs, "bare")], [], []
    if q.target == "version":
        return f"Darshan {j.darshan_version} wrote this log (log format {j.log_format}).", [], [], []
    if q.target == "when":
        # The header's times are whole seconds in UTC, as Darshan recorded them
        start, end = j.start.strftime("%Y-%m-%d %H:%M:%S UTC"), j.end.strftime("%Y-%m-%d %H:%M:%S UTC")
        return (
            f"The job started at {start} and ended at {end}, a run of {_s(j.runtime_s)}.",
            [exact(j.runtime_s, "seconds")],
            [],
            [],
        )
    if q.target == "hints":
        # Darshan keeps the hints it wrote its own log with, not the ones the application passed to its files
        if not j.hints:
            return (
                "The log records no MPI-IO hints: Darshan does not keep the hints the application passed to "
                "MPI_File_open, and this log holds none of its own.",
                [],
                [],
                [],
            )
        said = ", ".join(quote(f"{k}={v}") for k, v in j.hints.items())
        return (
            f"The log records these MPI-IO hints: {said}. They are the hints Darshan wrote the log with "
            "(DARSHAN_LOGHINTS); the hints the application passed to its own files are not recorded.",
            [],
            [],
            [],
        )
    mods = [m for m in j.modules if m.records or m.loaded]
    if not mods:
        return "None: the log holds no module records at all (no I/O was instrumented).", [], [], []
    parts = ", ".join(f"{m.name} ({m.records:,} records{', partial' if m.partial else ''})" for m in mods)
    return f"The log holds {len(mods)} module(s): {parts}.", [exact(m.records, "bare") for m in mods], [], []


def absent(report: Report, q: Query) -> Out:
    """ "Why are there no POSIX numbers?", "why don't I see my data files?": which modules the log holds."""
    name = q.target or "POSIX"
    if module_family(report, name) and (q.target or any(i.name == "MPI-IO" and i.records for i in report.interfaces)):
        return None  # it is there: the question is about something else
    if q.target is None and module_family(report, "POSIX"):
        return None
    held = [i for i in counted_interfaces(report) if i.records]
    if q.target is None and len(held) == 1 and held[0].files <= 3 and held[0].top_paths:
        # "Why don't I see my data files?": the log holds only these few files.
        i = held[0]
        shown = ", ".join(f"`{p}`" for p in i.top_paths[:3])
        return (
            f"The log holds only {i.name} records, of {i.files:,} file(s) ({shown}): it has no POSIX or MPI-IO "
            f"module, so Darshan recorded no other file I/O of this job.",
            [exact(i.files, "bare")],
            i.top_paths[:3],
            [],
        )
    text, values = no_module(report, name)
    return text[0].upper() + text[1:] + ".", values, [], []


def datasets(report: Report, q: Query) -> Out:
    """HDF5 datasets: how many the job touched, or its dataset reads and writes (H5D records)."""
    if q.target == "names":
        # The names the log holds for datasets (H5D) and variables (PNETCDF_VAR): "file:/dataset".
        rows = [i for i in report.interfaces if i.records and i.name in ("HDF5", "PnetCDF") and i.top_paths]
        if not rows:
            return None
        parts = [
            f"{i.name} {'dataset' if i.name == 'HDF5' else 'variable'} record(s): "
            + ", ".join(f"`{p}`" for p in i.top_paths[:4])
            + (f" and {i.files - 4:,} more" if i.files > 4 else "")
            for i in rows
        ]
        return "The log names " + "; ".join(parts) + ".", [], [p for i in rows for p in i.top_paths[:4]], []
    d = next((i for i in report.interfaces if i.name == "HDF5" and i.records), None)  # the H5D (dataset) row
    f = next((i for i in report.interfaces if i.name.startswith("HDF5 (file") and i.records), None)
    if d is None:
        opened = f"; HDF5 only opened {f.files:,} file(s) ({f.records:,} H5F records)" if f else ""
        return (
            f"None: 0 HDF5 dataset reads or writes are recorded, because the log has no dataset (H5D) records{opened}.",
            [exact(0, "bare")] + ([exact(f.files, "bare"), exact(f.records, "bare")] if f else []),
            [],
            [],
        )
    shown = ", ".join(f"`{p}`" for p in d.top_paths[:2])
    if q.target == "count":
        text = (
            f"The job touched {d.files:,} HDF5 dataset(s) ({shown}), with {d.calls.reads:,} reads and "
            f"{d.calls.writes:,} writes moving {_b(d.bytes_read + d.bytes_written)}."
        )
    else:
        r, w = d.calls.reads, d.calls.writes
        did = by_direction(
            q.direction,
            f"{r:,} dataset reads",
            f"{w:,} dataset writes",
            f"{r:,} dataset reads and {w:,} dataset writes",
        )
        text = f"HDF5 did {did} on {d.files:,} dataset(s) ({shown}), moving {_b(d.bytes_read + d.bytes_written)}."
    values = [exact(d.files, "bare"), exact(d.calls.reads, "bare"), exact(d.calls.writes, "bare")]
    return text, [*values, exact(d.bytes_read + d.bytes_written, "bytes")], d.top_paths[:2], []


def iface_bytes(report: Report, q: Query) -> Out:
    rows = module_family(report, q.target)
    if not rows:
        text, values = no_module(report, q.target or "")
        return f"None: {text}.", values, [], []
    i = rows[0]
    if re.search(r"\b(time|how long|seconds|spent|spend)\b", q.raw.lower()) and not re.search(
        r"\b(bytes|how much (data|was|did))\b", q.raw.lower()
    ):
        # "total posix write time summed over ranks?": the layer's time, summed over its records
        parts = [("writing", i.write_s), ("reading", i.read_s), ("in metadata calls", i.meta_s)]
        if q.direction in ("read", "write"):
            parts.sort(key=lambda p: p[0] != ("writing" if q.direction == "write" else "reading"))
        said = ", ".join(f"{_s(t)} {doing}" for doing, t in parts)
        return (
            f"{i.name} calls took {said}, summed over ranks.",
            [exact(t, "seconds") for _, t in parts],
            [],
            [],
        )
    if q.direction in ("read", "write"):
        # "How many bytes went through pnetcdf writes?": the direction asked first, with its calls.
        w = q.direction == "write"
        moved, calls, other = (
            (i.bytes_written, i.calls.writes, i.bytes_read)
            if w
            else (
                i.bytes_read,
                i.calls.reads,
                i.bytes_written,
            )
        )
        verb, rest = ("wrote", "read") if w else ("read", "wrote")
        text = f"{i.name} {verb} {_b(moved)}" + (f" in {calls:,} calls" if calls else "") + f" (and {rest} {_b(other)})"
        values = [exact(moved, "bytes"), exact(calls, "bare"), exact(other, "bytes")]
        paths: list[str] = []
        if re.search(r"\b(which|what) files?\b|\bto which\b|\bfrom which\b|\bwhere\b|\binto which\b", q.raw.lower()):
            # "... and to which file?": the files counted at that interface that moved those bytes, most first
            theirs = sorted(
                (f for f in report.top_files if f.layer == i.name and (f.bytes_written if w else f.bytes_read) > 0),
                key=lambda f: -(f.bytes_written if w else f.bytes_read),
            )
            if theirs:
                shown = ", ".join(f"`{f.path}` ({_b(f.bytes_written if w else f.bytes_read)})" for f in theirs[:3])
                text += f": {'to' if w else 'from'} {shown}" + (" and more" if len(theirs) > 3 else "")
                values += [exact(f.bytes_written if w else f.bytes_read, "bytes") for f in theirs[:3]]
                paths = [f.path for f in theirs[:3]]
        return text + ".", values, paths, []
    wrote = f" in {i.calls.writes:,} writes" if i.calls.writes and i.bytes_written else ""
    read = f" in {i.calls.reads:,} reads" if i.calls.reads and i.bytes_read else ""
    values = [
        exact(i.bytes_read + i.bytes_written, "bytes"),
        exact(i.bytes_written, "bytes"),
        exact(i.bytes_read, "bytes"),
    ]
    values += [exact(n, "bare") for n, said in ((i.calls.writes, wrote), (i.calls.reads, read)) if said]
    return (
        f"{i.name} moved {_b(i.bytes_read + i.bytes_written)}: {_b(i.bytes_written)} written{wrote} and "
        f"{_b(i.bytes_read)} read{read}.",
        values,
        [],
        [],
    )


def _file_count(n: int) -> str:
    return f"{n:,} file{'s' if n != 1 else ''}" if n else ""


def job_bytes(report: Report, q: Query) -> Out:
    group = group_named(report, q.raw)
    if group is not None:
        return group_answer(group, q, moved=True, nprocs=report.job.nprocs)
    read, written = totals(report)
    if read + written == 0 and not any(i.records for i in report.interfaces):
        return "None: the log records no I/O at all (no instrumented module has records).", [], [], []
    key = (lambda f: -f.bytes_read) if q.direction == "read" else (lambda f: -f.bytes_written)
    files = sorted(report.top_files, key=key)[:3]
    # How many files, beside how much: "how much did ior write across all its files?"
    n_read, n_written = _file_count(report.files_read), _file_count(report.files_written)
    if q.direction == "read":
        files = [f for f in files if f.bytes_read]
        head = f"The job read {_b(read)}" + (f" from {n_read}" if read and n_read else "")
        tail = ", most from " + ", ".join(f"`{f.path}` ({_b(f.bytes_read)})" for f in files) if files else ""
    elif q.direction == "write":
        files = [f for f in files if f.bytes_written]
        head = f"The job wrote {_b(written)}" + (f" to {n_written}" if written and n_written else "")
        tail = ", most to " + ", ".join(f"`{f.path}` ({_b(f.bytes_written)})" for f in files) if files else ""
    else:
        head, tail, files = f"The job wrote {_b(written)} and read {_b(read)}", "", []
    values = [exact(read, "bytes"), exact(written, "bytes")]
    values += [exact(n, "bare") for n in (report.files_read, report.files_written) if n]
    if q.yes_no and q.direction in ("read", "write") and q.split:
        # "Is it all reads?", "does it read much?": judged on the direction's share of the bytes moved
        mine, other = (read, written) if q.direction == "read" else (written, read)
        asked = q.raw.lower()
        bar = (
            0.95
            if re.search(r"\b(all|only|just)\b", asked)
            else 0.5
            if re.search(r"\b(mostly|mainly|primarily|heavy|intensive|dominated)\b", asked)
            else 0.1
        )
        yes = mine + other > 0 and mine >= bar * (mine + other)
        verb = "written" if q.direction == "read" else "read"
        head = f"{'Yes' if yes else 'No'}: {lower_first(head)}, against {_b(other)} {verb}" + (
            f" ({percent(mine / (mine + other))} of the bytes moved)" if mine + other else ""
        )
        values.append(exact(other, "bytes"))
        if mine + other:
            values.append(exact(mine / (mine + other) * 100, "percent"))
    elif q.yes_no and q.direction in ("read", "write"):
        # "did it write anything?": yes or no first, from the bytes; a no says what the job did move instead
        mine, other = (read, written) if q.direction == "read" else (written, read)
        if not mine:
            # "wrote 0 B" reads as a unit to parse; "no bytes" is the plain answer, the number beside it
            head = head.replace(f"wrote {_b(0)}", f"wrote no bytes ({_b(0)})", 1).replace(
                f"read {_b(0)}", f"read no bytes ({_b(0)})", 1
            )
        head = ("Yes: " if mine else "No: ") + lower_first(head)
        if not mine and other:
            head += f"; it {'wrote' if q.direction == 'read' else 'read'} {_b(other)}"
    elif q.yes_no:
        # "did it do any data I/O?": yes when any byte moved; "real data" leaves out the software's own files
        env = sum(k.bytes_read + k.bytes_written for k in report.software_files)
        real = re.search(r"\b(real|actual|meaningful|useful)\b", q.raw.lower())
        if real and read + written and env >= 0.9 * (read + written):
            head = (
                f"No: of the {_b(read + written)} it moved, {_b(env)} went to the files of {software_kinds(report)}, "
                "not to data"
            )
            values.append(exact(env, "bytes"))
        else:
            head = ("Yes: " if read + written else "No: ") + lower_first(head)
    values += [exact(f.bytes_read if q.direction == "read" else f.bytes_written, "bytes") for f in files]
    # Through which interface: each counted layer's own bytes, in the same sentence ("at STDIO", since "through
    # STDIO" reads as the STDIO-bulk finding to the verifier).
    per = [
        (
            i.name,
            i.own_bytes_read
            if q.direction == "read"
            else i.own_bytes_written
            if q.direction == "write"
            else bytes_moved(i),
        )
        for i in counted_interfaces(report)
    ]
    per = sorted([(name, n) for name, n in per if n > 0], key=lambda x: -x[1])
    calls = {name: n for name, n in layer_calls(report, q.direction)}
    if len(per) == 1:
        head += (
            f" (all at {per[0][0]}"
            + (f", in {calls[per[0][0]]:,} {q.direction} calls" if per[0][0] in calls else "")
            + ")"
        )
        values += [exact(calls[per[0][0]], "bare")] if per[0][0] in calls else []
    elif per and per[0][1] >= 0.99 * sum(n for _, n in per):
        # The leading layer's bytes would print as the total itself: one number per fact.
        head += (
            f" (nearly all through {per[0][0]}; " + ", ".join(f"{_b(n)} through {name}" for name, n in per[1:]) + ")"
        )
        values += [exact(n, "bytes") for _, n in per[1:]]
    elif per:
        head += (
            " ("
            + ", ".join(
                f"{_b(n)} at {name}" + (f" in {calls[name]:,} {q.direction}s" if name in calls else "")
                for name, n in per
            )
            + ")"
        )
        values += [exact(n, "bytes") for _, n in per] + [exact(n, "bare") for n in calls.values()]
    below, bv = beneath(report, read, written, q.direction)
    return f"{head}{tail}.{below}", values + bv, [f.path for f in files], []


def layer_calls(report: Report, direction: str) -> list[tuple[str, int]]:
    """Each counted layer's read (or write) calls, where all of that layer's bytes are its own (nothing of it is
    counted at a layer above, which would make its calls cover bytes the sentence gives to another layer)."""
    if direction not in ("read", "write"):
        return []
    out = []
    for i in counted_interfaces(report):
        own, whole = (i.own_bytes_read, i.bytes_read) if direction == "read" else (i.own_bytes_written, i.bytes_written)
        n = i.calls.reads if direction == "read" else i.calls.writes
        if own > 0 and own == whole and n > 0:
            out.append((i.name, n))
    return out


def _named_file_system(report: Report, q: Query) -> Out:
    """The file system of a named file outside the file table: the largest file of each file system is known, and
    a lone log or output file on another file system usually is one; else the per-file-system totals, and
    "unknown" for the file itself."""
    name = q.target or ""
    hit = next((u for u in report.file_systems if u.top_path and is_named(u.top_path, name)), None)
    if hit is not None:
        fs = FS_NAMES.get(hit.file_system, hit.file_system)
        where = f" (mounted at `{hit.mounts[0]}`)" if hit.mounts else ""
        text = f"`{hit.top_path}` was on {fs}{where}"
        wanted = asked_file_systems(q.raw)
        if q.yes_no and wanted:
            text = ("Yes: " if hit.file_system in wanted else "No: ") + text
        moved = hit.bytes_read + hit.bytes_written
        others = [FS_NAMES.get(u.file_system, u.file_system) for u in report.file_systems if u is not hit]
        also = f"; the job's other files were on {', '.join(others)}" if others else ""
        return f"{text}, {_b(moved)} moved on {fs} in all{also}.", [exact(moved, "bytes")], [hit.top_path], []
    if not report.file_systems:
        return None
    spread = "; ".join(
        f"{FS_NAMES.get(u.file_system, u.file_system)}"
        + (f" (`{'`, `'.join(u.mounts)}`)" if u.mounts else "")
        + f", {u.files:,} file(s)"
        for u in report.file_systems[:4]
    )
    text = (
        f"Unknown for {quote(name)}: it is not among the files this report lists, so which mount it was on is not "
        f"shown; the job's files with I/O were on {spread}"
    )
    return text + ".", [exact(u.files, "bare") for u in report.file_systems[:4]], [], []


def file_system(report: Report, q: Query) -> Out:
    files = sorted(
        report.top_files,
        key=(lambda f: -f.bytes_written)
        if q.direction == "write"
        else (lambda f: -f.bytes_read)
        if q.direction == "read"
        else (lambda f: -(f.bytes_read + f.bytes_written)),
    )
    files = [f for f in files if f.file_system]
    group = None if q.target and not q.target.startswith(".") else group_named(report, q.raw)
    if group is not None:
        # "which filesystem are the test h5 files on?": that family's file system, with how many files it holds
        rx = group_regex(group)
        members = [f for f in files if rx.fullmatch(f.path)]
        fs = group.file_system or (members[0].file_system if members else None)
        if fs:
            named = FS_NAMES.get(fs, fs.upper() if len(fs) <= 4 else fs)
            moved = group.bytes_read + group.bytes_written
            layout, lv = "", []
            if group.stripe_count and group.stripe_size:
                # One layout over the family: how it is striped is the next thing a file-system question wants
                layout = f", stripe count {group.stripe_count:,}, stripe size {_b(group.stripe_size)}"
                lv = [exact(group.stripe_count, "bare"), exact(group.stripe_size, "bytes")]
            text = f"The {group.files:,} `{group.pattern}` files were on {named} ({_b(moved)} moved{layout})."
            wanted = asked_file_systems(q.raw)
            if q.yes_no and wanted:
                # "are the dump files on Lustre?": yes or no first, for the family as for one file
                text = ("Yes: " if fs in wanted else "No: ") + lower_first(text)
            return text, [exact(group.files, "bare"), exact(moved, "bytes"), *lv], [], []
        files = members or files
    if q.target and not any(is_named(f.path, q.target) for f in files):
        # A named file the file table does not list: never another file's file system in its place
        return _named_file_system(report, q)
    files = [f for f in files if is_named(f.path, q.target)] or files
    if files:
        f = files[0]
        what = (
            "named"
            if q.target
            else "output"
            if q.direction == "write"
            else "input"
            if q.direction == "read"
            else ("busiest")
        )
        others = sorted({g.file_system for g in report.top_files if g.file_system and g.file_system != f.file_system})
        also = f"; other files were on {', '.join(o for o in others if o)}" if others else ""
        fs = f.file_system or ""
        named = {"lustre": "Lustre", "daos": "DAOS"}.get(fs, fs.upper() if len(fs) <= 4 else fs)
        chunk = f", DFS chunk size {_b(f.chunk_size)}" if f.chunk_size else ""
        if f.stripe_count:
            # Its layout says which Lustre it saw, where the path's mount does not
            chunk += f", stripe count {f.stripe_count:,}" + (
                f", stripe size {_b(f.stripe_size)}" if f.stripe_size else ""
            )
            if 0 < len(f.osts) <= 8:
                chunk += f", on OST{'s' if len(f.osts) > 1 else ''} {', '.join(str(o) for o in f.osts)}"
        text = f"The {what} file `{f.path}` was on {named} ({_b(f.bytes_read + f.bytes_written)} moved{chunk}){also}."
        wanted = asked_file_systems(q.raw)
        if q.yes_no and wanted:
            # "Is test.out on NFS?", "was it on a parallel file system like lustre or gpfs?": yes or no first
            text = ("Yes: " if fs in wanted else "No: ") + lower_first(text)
        values = [exact(f.bytes_read + f.bytes_written, "bytes")]
        values += [exact(f.chunk_size, "bytes")] if f.chunk_size else []
        values += [exact(f.stripe_count, "bare")] if f.stripe_count else []
        values += [exact(f.stripe_size, "bytes")] if f.stripe_count and f.stripe_size else []
        values += [exact(o, "bare") for o in f.osts] if f.stripe_count and 0 < len(f.osts) <= 8 else []
        return text, values, [f.path], []
    if report.file_system:
        return f"Most of the job's bytes went to {report.file_system}.", [], [], []
    return None


def answer_osts(report: Report, q: Query) -> Out:
    if not report.osts:
        fs = FS_NAMES.get(report.file_system or "", report.file_system or "")
        on = f": the job's data is on {fs}, which has no OSTs" if fs and fs != "Lustre" else ""
        return f"The log has no Lustre layouts, so it names no OSTs{on}.", [], [], []
    n = len(report.osts)
    return f"The job's files landed on {n:,} OST(s).", [exact(n, "bare")], [], []


def collective(report: Report, q: Query) -> Out:
    most = bool(re.search(r"\b(most|majority|mostly)\b", q.raw.lower()))  # "were most writes collective?"
    xl = report.cross_layer
    mpi = next((la for la in (xl.job_layers if xl else []) if la.layer == "MPI-IO"), None)
    if mpi is None:
        return "No: the job made no MPI-IO calls, so no collective I/O.", [], [], []
    on = next((f for f in xl.files if is_named(f.path, q.target)), None) if xl is not None and q.target else None
    own = on.layer("MPI-IO") if on is not None else None
    if own is not None:
        # "were the writes to can_I_out_h0.nc collective?": that file's own MPI-IO counts, not the job's
        mpi = own
    else:
        on = None
    asked_layer = (
        "PnetCDF"
        if re.search(r"\b(p?netcdf|nc)\b", q.raw.lower())
        else "HDF5"
        if re.search(r"\b(hdf5?|h5)\b", q.raw.lower())
        else None
    )
    top = None
    if asked_layer is not None:
        # "were the pnetcdf writes collective?": the library's own calls, with MPI-IO's beneath them
        top = (
            on.layer(asked_layer)
            if on is not None
            else next((la for la in (xl.job_layers if xl else []) if la.layer == asked_layer), None)
        )
        if top is not None and top.collective_writes is None and top.independent_writes is None:
            top = None
    beneath_mpi = ""
    if top is not None:
        bw = (mpi.collective_writes or 0, mpi.independent_writes or 0)
        br = (mpi.collective_reads or 0, mpi.independent_reads or 0)
        mpi = top
    cw, iw = mpi.collective_writes or 0, mpi.independent_writes or 0
    cr, ir = mpi.collective_reads or 0, mpi.independent_reads or 0
    layer_name = top.layer if top is not None else "MPI-IO"
    if q.direction == "both" and cw + iw and cr + ir and top is None:
        # Neither direction named and the job did both: both counts, the answer from them together.
        coll, ind = cw + cr, iw + ir
        answer = "Yes" if coll and coll >= ind else "Partly" if coll and not most else "No"
        text = (
            f"{answer}: {coll:,} collective and {ind:,} independent MPI-IO calls ({cw:,} collective and {iw:,} "
            f"independent writes, {cr:,} collective and {ir:,} independent reads)."
        )
        values = [exact(v, "bare") for v in (coll, ind, cw, iw, cr, ir)]
        return text, values, [], []
    if q.direction == "read":
        coll, ind, verb = cr, ir, "reads"
    elif q.direction == "write" or cw + iw:
        coll, ind, verb = cw, iw, "writes"
    else:
        coll, ind, verb = cr, ir, "reads"
    answer = "Yes" if coll and coll >= ind else "Partly" if coll and not most else "No"
    asked = q.raw.lower()
    values = [exact(coll, "bare"), exact(ind, "bare")]
    of = f" to `{on.path}`" if on is not None else ""
    if top is not None:
        mc, mi = bw if verb == "writes" else br
        beneath_mpi = f" ({mc:,} collective and {mi:,} independent MPI-IO {verb} beneath them)"
        values += [exact(mc, "bare"), exact(mi, "bare")]
    if q.yes_no or not re.search(r"\b(how many|number of|count)\b", asked):
        text = f"{answer}: {coll:,} collective and {ind:,} independent {layer_name} {verb}{of}{beneath_mpi}."
    elif re.search(r"\bindependent\w*\b", asked):
        text = f"{ind:,} of the {coll + ind:,} {layer_name} {verb} were independent ({coll:,} collective){beneath_mpi}."
    else:
        text = f"{coll:,} of the {coll + ind:,} {layer_name} {verb} were collective ({ind:,} independent){beneath_mpi}."
    hdf5 = any(i.name == "HDF5" and i.records for i in report.interfaces)
    if coll and ind and hdf5 and re.search(r"\bwhy\b", asked):
        # Small independent calls beside collective data calls in an HDF5 job are, by HDF5's default, the
        # library's own metadata (superblock, object headers), read or written by each rank independently
        text = (
            f"The {ind:,} independent MPI-IO {verb} beside {coll:,} collective ones are most likely the HDF5 "
            "library's own file metadata (superblock, object headers), which HDF5 accesses independently from each "
            "rank unless collective metadata is switched on (`H5Pset_all_coll_metadata_ops`, "
            "`H5Pset_coll_metadata_write`)."
        )
    return text, values, [], []


def sharing(report: Report, q: Query) -> Out:
    out = _sharing(report)
    if out is None or not q.yes_no:
        return out
    t = report.rank_table
    own = sum(u.files for u in t.ranks)
    # "is it file per process?" asks the other way round from "do they all read one shared file?"
    per_process = bool(
        re.search(r"\b(per[- ]?(process|rank)|own files?|separate files?|one per|n-?n)\b", q.raw.lower())
    )
    shared, mixed = bool(t.shared_files), bool(t.shared_files and own)
    yes = (not shared) if per_process else shared
    word = "Partly" if mixed else ("Yes" if yes else "No")
    text, values, paths, ranks = out
    return f"{word}: {lower_first(text)}", values, paths, ranks


def _sharing(report: Report) -> Out:
    t = report.rank_table
    own_files = sum(u.files for u in t.ranks)
    ranks = len(t.ranks)
    if t.shared_files and not own_files:
        return (
            f"Shared: {t.shared_files:,} file(s) are shared by the ranks ({_b(t.shared_bytes)}); no rank has a "
            "file of its own.",
            [exact(t.shared_files, "bare"), exact(t.shared_bytes, "bytes")],
            [],
            [],
        )
    if not t.shared_files:
        return (
            f"One per process: {ranks:,} rank(s) each used files of their own ({own_files:,} file records), "
            "none shared by all ranks.",
            [exact(ranks, "bare"), exact(own_files, "bare")],
            [],
            [],
        )
    return (
        f"Both: {t.shared_files:,} shared file(s) ({_b(t.shared_bytes)}) and {own_files:,} records of files single "
        f"ranks used on their own.",
        [exact(t.shared_files, "bare"), exact(t.shared_bytes, "bytes"), exact(own_files, "bare")],
        [],
        [],
    )


def stripe(report: Report, q: Query) -> Out:
    out = _stripe_facts(report, q)
    if out is not None and q.target and not name_pattern(q.target):
        # "stripe count of field.0039.dat vs the db files?": the family compared comes after the file
        fams = _group_stripes(report, q)
        if fams is not None:
            text, values, paths, ranks = out
            more, more_values, _, _ = fams
            out = (
                f"{text.rstrip('.')}; {lower_first(more.removeprefix('On Lustre, '))}",
                [*values, *more_values],
                paths,
                ranks,
            )
    if out is None or not q.yes_no:
        return out
    judged = _layout_judged(q.raw.lower(), out[0])
    if judged is not None:
        # "is the stripe count ok?": whether the layout fits the file's size, ranks and requests
        return judged + lower_first(out[0]), *out[1:]
    if not q.target and _group_stripes(report, q) is None and report.lustre_layouts:
        # "are the files on a single OST?" naming no file or family: every laid-out file answers, never the
        # first one alone
        return _all_stripes_yes_no(report, q) or out
    # "Is X on a single OST?" / "is X striped across several OSTs?": yes or no first, from its stripe count.
    text, values, paths, ranks = out
    # The stripe count as the sentence states it (the values may start with OST ids)
    # (one count stated: a named file's, or one family's layout)
    stated = re.search(r"stripe count (\d+)", text) if paths or q.target or text.count("stripe count") == 1 else None
    count = int(stated.group(1)) if stated else None
    single, several = _stripes_asked(q.raw.lower())
    # "is X striped?" asks whether it is over several
    several = several or (not single and bool(re.search(r"\bstriped\b", q.raw.lower())))
    bar = _stripe_bar(q.raw.lower())
    if count is not None and bar is not None:
        # "striped over more than 8 OSTs?", "at least 4 stripes?": against the number asked, not against one
        comparison, n = bar
        yes = {"more": count > n, "least": count >= n, "fewer": count < n}.get(comparison, count == n)
        return ("Yes: " if yes else "No: ") + lower_first(text), values, paths, ranks
    if count is None or not (single or several):
        return out
    yes = count > 1 if several else count == 1
    return ("Yes: " if yes else "No: ") + lower_first(text), values, paths, ranks


_LAYOUT_OK = re.compile(
    r"\b(ok|okay|fine|good|right|reasonable|sensible|appropriate|adequate|enough|correct|optimal|sane|well set"
    r"|set (up )?(right|correctly|well))\b"
)
_LAYOUT_LOW = re.compile(r"\btoo (low|small|few|narrow)\b")
_LAYOUT_HIGH = re.compile(r"\btoo (high|big|large|many|wide)\b")


def _layout_judged(asked: str, text: str) -> str | None:
    """ "Yes: " or "No: " to "is the striping ok?" / "is the stripe count too low?", from the one layout the
    answer states and the layout it says would fit (none said: it fits)."""
    if text.count("stripe count") != 1:
        return None
    stated = re.search(r"stripe count (\d+)", text)
    better = re.search(r"(\d+) stripes of [\d.]+ \w+ would fit", text)
    if stated is None:
        return None
    if _LAYOUT_LOW.search(asked) or _LAYOUT_HIGH.search(asked):
        if better is None:
            return "No: "
        low = int(better.group(1)) > int(stated.group(1))
        return "Yes: " if low == bool(_LAYOUT_LOW.search(asked)) else "No: "
    if _LAYOUT_OK.search(asked):
        return "No: " if better else "Yes: "
    return None


def _stripe_bar(asked: str) -> tuple[str, int] | None:
    """ "more than 8 OSTs" -> ("more", 8); "at least 4 stripes" -> ("least", 4); "fewer than 16" -> ("fewer", 16).
    "more than one OST" is the several-OSTs question, answered as such."""
    m = STRIPE_BAR.search(asked)
    if m is None:
        said = STRIPE_SAID.search(asked)
        return ("equal", int(next(g for g in said.groups() if g))) if said else None
    word, n = m.group(1), int(m.group(2))
    if word in ("over", "across", "on"):
        return "equal", n  # "is it really striped over 256 OSTs?": that many, not more
    kind = "least" if word == "at least" else "fewer" if word in ("fewer than", "less than", "under") else "more"
    return kind, n


def _stripes_asked(asked: str) -> tuple[bool, bool]:
    """Whether a stripe yes/no asks about one OST, and whether about several ("more than one OST" asks about
    several, though it holds "one OST")."""
    single = re.search(r"\b(single|one|1|only one|just one)[\s-]+(ost|stripe)|\b(un-?striped|not striped)\b", asked)
    several = re.search(r"\b(several|multiple|many|more than one|across|over)\b", asked)
    return bool(single), bool(several)


def _all_stripes_yes_no(report: Report, q: Query) -> Out:
    single, several = _stripes_asked(q.raw.lower())
    if not (single or several):
        return None
    laid = report.lustre_layouts
    ones = sum(1 for f in laid if f.stripe_count == 1)
    fits = ones if single else len(laid) - ones
    word = "Yes" if fits == len(laid) else "No" if fits == 0 else "Partly"
    how = "stripe count 1" if single else "more than one stripe"
    return (
        f"{word}: {fits:,} of the {len(laid):,} files with a Lustre layout in the report have {how}.",
        [exact(fits, "bare"), exact(len(laid), "bare")],
        [],
        [],
    )


def _group_stripes(report: Report, q: Query) -> Out:
    """ "Stripe size of the chk01000/part.* files, and the traj frame files?": each group's one layout."""
    globbed = glob_group(report, q.raw)
    groups = [globbed] if globbed is not None else []
    groups += [g for g in groups_named(report, q.raw) if g not in groups]
    laid = [g for g in groups if g.files > 1 and (g.stripe_count or g.stripe_layouts)]
    if not laid:
        return None
    parts: list[str] = []
    values: list[Quantity] = []
    for g in laid[:3]:
        if g.stripe_count and g.stripe_size:
            every = "all of them" if g.striped_files >= g.files else f"the {g.striped_files:,} with a layout"
            parts.append(
                f"the {g.files:,} `{g.pattern}` files have stripe count {g.stripe_count} and stripe size "
                f"{_b(g.stripe_size)} ({every})"
            )
            values += [exact(g.files, "bare"), exact(g.stripe_count, "bare"), exact(g.stripe_size, "bytes")]
        else:
            rx = group_regex(g)
            members = [f for f in report.top_files if rx.fullmatch(f.path) and f.stripe_count and f.stripe_size]
            if g.files <= 4 and len(members) == g.files:
                # a few files with their own layouts: each one's
                parts += [
                    f"`{f.path}` has stripe count {f.stripe_count} and stripe size {_b(f.stripe_size or 0)}"
                    for f in members
                ]
                values += [
                    v for f in members for v in (exact(f.stripe_count or 0, "bare"), exact(f.stripe_size or 0, "bytes"))
                ]
                continue
            parts.append(f"the {g.files:,} `{g.pattern}` files have {g.stripe_layouts} different layouts")
            values += [exact(g.files, "bare"), exact(g.stripe_layouts, "bare")]
    text = "; ".join(parts)
    return f"On Lustre, {text}.", values, [], []


def _stripe_facts(report: Report, q: Query) -> Out:
    asks_osts = bool(re.search(r"\bosts?\b", q.raw.lower()))
    if not q.target or name_pattern(q.target):
        grouped = _group_stripes(report, q)
        if grouped is not None:
            return grouped
    if q.target and (asks_osts or not any(is_named(x.path, q.target) for x in report.lustre_layouts)):
        # A named file beyond the assessed layouts: its own stripe counters.
        f = next((x for x in report.top_files if is_named(x.path, q.target) and x.stripe_count), None)
        if f is not None and f.stripe_count and f.stripe_size:
            on = ""
            if f.osts:
                shown = ", ".join(str(o) for o in f.osts[:8]) + (" ..." if len(f.osts) > 8 else "")
                on = f", on OST{'s' if len(f.osts) > 1 else ''} {shown}"
            return (
                f"`{f.path}`, on Lustre, has stripe count {f.stripe_count} and stripe size {_b(f.stripe_size)}{on}.",
                [exact(f.stripe_count, "bare"), exact(f.stripe_size, "bytes"), *(exact(o, "bare") for o in f.osts[:8])],
                [f.path],
                [],
            )
    if not report.lustre_layouts:
        striped = [f for f in report.top_files if f.stripe_count and f.stripe_size]
        if striped and not q.yes_no:
            # Files with LUSTRE records but no POSIX traffic to assess (STDIO only): their recorded layouts
            kinds = sorted({(f.stripe_count or 0, f.stripe_size or 0) for f in striped})
            said = "; ".join(f"stripe count {c}, stripe size {_b(z)}" for c, z in kinds[:3])
            return (
                f"The busiest files with a Lustre layout have {said} (e.g. `{striped[0].path}`).",
                [v for c, z in kinds[:3] for v in (exact(c, "bare"), exact(z, "bytes"))],
                [striped[0].path],
                [],
            )
        fs = report.file_system or "a file system without Lustre layouts"
        no = "No: t" if q.yes_no else "T"
        if fs == "lustre":
            return (f"{no}he log has no Lustre layout records for the job's files.", [], [], [])
        fs = FS_NAMES.get(fs, fs)
        return (
            f"{no}he log has no Lustre layouts: the job's data is on {fs}, where striping does not apply.",
            [],
            [],
            [],
        )
    named = [x for x in report.lustre_layouts if is_named(x.path, q.target)]
    if q.target and not named and not any(is_named(f.path, q.target) for f in report.top_files):
        # A file the report keeps no numbers of its own for: its family's layout, never another file's
        fam = group_holding(report, q.target)
        if fam is not None and fam.stripe_count and fam.stripe_size:
            return (
                f"{quote(q.target)} is one of the {fam.files:,} `{fam.pattern}` files, which have stripe count "
                f"{fam.stripe_count} and stripe size {_b(fam.stripe_size)} on Lustre.",
                [exact(fam.files, "bare"), exact(fam.stripe_count, "bare"), exact(fam.stripe_size, "bytes")],
                [],
                [],
            )
        return None
    named = named or report.lustre_layouts
    lay = max(named, key=lambda x: x.bytes_moved)
    osts = lay.osts or next((f.osts for f in report.top_files if f.path == lay.path and f.osts), [])
    on = f" (OST{'s' if len(osts) > 1 else ''} {', '.join(str(o) for o in osts)})" if 0 < len(osts) <= 8 else ""
    text = (
        f"`{lay.path}` has stripe count {lay.stripe_count}{on} and stripe size {_b(lay.stripe_size)} for "
        f"{_b(lay.bytes_moved)} moved by "
        + (f"{lay.writers:,} writing rank(s)" if lay.writers or not lay.readers else f"{lay.readers:,} reading rank(s)")
    )
    values = [
        *(exact(o, "bare") for o in (osts if len(osts) <= 8 else [])),
        exact(lay.stripe_count, "bare"),
        exact(lay.stripe_size, "bytes"),
        exact(lay.bytes_moved, "bytes"),
        exact(lay.writers, "bare"),
        exact(lay.readers, "bare"),
    ]
    if not lay.fits and lay.command:
        text += (
            f"; for its size and the ranks using it, {lay.suggested_count} stripes of {_b(lay.suggested_size)} "
            "would fit"
        )
        values += [exact(lay.suggested_count, "bare"), exact(lay.suggested_size, "bytes")]
    return text + ".", values, [lay.path], []


def slow_ost(report: Report, q: Query) -> Out:
    # "vasp: slow OST?", "any slow OSTs?" ask yes or no, however they start; "which OST was slow?" does not
    asked = q.raw.lower()
    yes_no = q.yes_no or (
        bool(re.search(r"\?\s*$|\bany\b", asked)) and not re.search(r"\b(which|what|where|how many)\b", asked)
    )
    q = q.model_copy(update={"yes_no": yes_no})
    f = report.finding("L04")
    if f is not None and f.severity in (Severity.CRITICAL, Severity.WARNING, Severity.INFO):
        ost = next((m.value for m in f.evidence if m.name == "slow_ost"), None)
        count = next((int(m.value) for m in f.evidence if m.name == "ranks_on_slow_ost"), len(f.ranks))
        hit, hv = ranks_on_slow_ost(report, list(f.ranks), count)
        todo = ""
        if re.search(r"\b(do|fix|should|can)\b", q.raw.lower()):
            from iodiag.analysis.outcomes.verdict import action_for

            todo = " " + (action_for(f) or "")
        # A fix question cites the finding the advice comes from ("L04: OST 14, 49.5x slower per byte")
        cited = f" ({f.code}: {f.subject})" if todo.strip() and f.subject else ""
        return (
            f"{'Yes: ' if q.yes_no else ''}OST {ost} was slow{cited}{hit}. {f.message}{todo}".rstrip(),
            hv,
            [],
            list(f.ranks),
        )
    if not report.osts:
        return "The log has no Lustre layouts, so it cannot tell whether an OST was slow.", [], [], []
    per = [o.io_time_s / max(o.bytes, 1) * 2**30 for o in report.osts if o.bytes >= 64 << 20]
    if len(per) < 2:
        return (
            f"No OST can be compared with another: of the {len(report.osts):,} OST(s) the job used, {len(per)} "
            "carried enough data (64 MiB or more) to time it per byte.",
            [exact(len(report.osts), "bare"), exact(len(per), "bare")],
            [],
            [],
        )
    spread = max(per) / max(min(per), 1e-12)
    return (
        f"No: none of the {len(per)} OSTs that carried enough data was slow per byte against the others "
        f"(the slowest took {spread:.1f}x the fastest's time per GiB).",
        [exact(len(per), "bare"), exact(spread, "times")],
        [],
        [],
    )


def answer_rate(report: Report, q: Query) -> Out:
    if q.target:
        f = next((x for x in report.top_files if is_named(x.path, q.target) and x.slowest_s), None)
        if f is not None and f.slowest_s:
            # One file's rate: its bytes over the time the job waited on it (its slowest rank)
            moved = {"read": f.bytes_read, "write": f.bytes_written}.get(q.direction, f.bytes_read + f.bytes_written)
            verb = {"read": "read", "write": "written"}.get(q.direction, "moved")
            rate = moved / f.slowest_s
            text = f"`{f.path}`: {_b(moved)} {verb} in {_s(f.slowest_s)} on its slowest rank, {_b(rate)}/s."
            return text, [exact(moved, "bytes"), exact(f.slowest_s, "seconds"), exact(rate, "rate")], [f.path], []
    rows = [i for i in report.interfaces if i.records and (i.bytes_read + i.bytes_written) > 0]
    if not rows:
        return None
    parts: list[str] = []
    values: list[Quantity] = []
    for i in rows:
        for verb, nbytes, secs in (("writing", i.bytes_written, i.write_s), ("reading", i.bytes_read, i.read_s)):
            if (q.direction == "write" and verb == "reading") or (q.direction == "read" and verb == "writing"):
                continue
            if nbytes and secs > 0:
                rate = nbytes / secs
                parts.append(
                    f"{i.name} {verb} ran at {_b(rate)}/s per rank ({_b(nbytes)} over {_s(secs)} of rank time)"
                )
                values += [exact(rate, "rate"), exact(nbytes, "bytes"), exact(secs, "seconds")]
    if not parts:
        return None
    s = report.io_share
    head = ""
    if s is not None and s.slowest_rank_io_s > 0:
        total = sum(totals(report))
        job_rate = total / s.slowest_rank_io_s
        head = f"The job moved {_b(total)} in {_s(s.slowest_rank_io_s)} of I/O on its busiest rank ({_b(job_rate)}/s); "
        values += [
            exact(total, "bytes"),
            exact(s.slowest_rank_io_s, "seconds"),
            exact(total / s.slowest_rank_io_s, "rate"),
        ]
    return head + "; ".join(parts) + ".", values, [], []


def metadata(report: Report, q: Query) -> Out:
    rows = counted_interfaces(report)
    meta = sum(i.own_meta_s for i in rows)
    data = sum(i.own_read_s + i.own_write_s for i in rows)
    if meta + data <= 0:
        return None
    word = ""
    raw = q.raw.lower()
    than = re.search(
        r"\b(more|longer|less|shorter|fewer)\b.*\bthan\b.*\b(writ\w*|wrote|read\w*|data|transfer\w*|i/?o)\b", raw
    )
    against = ""
    if q.yes_no and than:
        # "more time in metadata than in writing?": against that direction's time, not reads and writes together
        way = than.group(2)
        other = (
            sum(i.own_write_s for i in rows)
            if way.startswith(("writ", "wrote"))
            else sum(i.own_read_s for i in rows)
            if way.startswith("read")
            else data
        )
        more = than.group(1) in ("more", "longer")
        word = "Yes: " if (meta > other) == more else "No: "
        if way.startswith(("writ", "wrote", "read")):
            against = f" ({_s(other)} of it {'writing' if way.startswith(('writ', 'wrote')) else 'reading'})"
    elif q.yes_no and re.search(MOST_OF, q.raw.lower()):
        # "Is metadata the bulk of the I/O time?": yes from half of it
        word = "Yes: " if meta >= data else "No: "
    elif q.yes_no:
        # "Is metadata a problem?": yes when a metadata finding is one the verdict prices as worth fixing.
        hit = next(
            (
                f
                for f in report.findings
                if f.code in ("J03", "P17") and f.severity in (Severity.CRITICAL, Severity.WARNING)
            ),
            None,
        )
        word = "Yes: " if hit is not None else "No: "
    storm = report.finding("J03")
    # The files the calls went to, as the metadata finding counts them ("1,116 of them `pkg/mod#.py`").
    where = f" ({storm.subject.split('; ')[0]})" if storm is not None and storm.subject else ""
    busiest = next((m.value for m in storm.evidence if m.name == "busiest_rank_meta_time"), None) if storm else None
    run = report.job.runtime_s
    if busiest and run > 0:
        # Per rank is what the run waits on: "what fraction of the run is metadata?"
        where += f"; the busiest rank spent {_s(float(busiest))} in them, {percent(float(busiest) / run)} of the run"
    todo = ""
    if (
        storm is not None
        and storm.severity in (Severity.CRITICAL, Severity.WARNING)
        and (re.search(FIX_ASK, q.raw.lower()) or WHY_SLOW.search(q.raw.lower()))
    ):
        # "170 s per rank in metadata?? what's happening": the storm, and what cuts it
        from iodiag.analysis.outcomes.verdict import action_for

        fix = action_for(storm)
        todo = f" {fix}" if fix else ""
    return (
        f"{word}{'m' if word else 'M'}etadata calls (open, stat, seek, close) took {_s(meta)} summed over ranks, "
        f"{percent(meta / (meta + data))} of "
        f"the job's I/O time{where}; reads and writes took {_s(data)}{against}.{todo}",
        [exact(meta, "seconds"), exact(meta / (meta + data) * 100, "percent"), exact(data, "seconds")]
        + (
            [exact(float(busiest), "seconds"), exact(float(busiest) / run * 100, "percent")]
            if busiest and run > 0
            else []
        ),
        [],
        [],
    )


def runtime(report: Report, q: Query) -> Out:
    r = report.job.runtime_s
    return f"The job ran for {_s(r)}.", [exact(r, "seconds")], [], []


def io_share(report: Report, q: Query) -> Out:
    s = report.io_share
    if s is None:
        return None
    if q.direction in ("read", "write") and s.runtime_s > 0:
        how_long = bool(re.search(r"\bhow (long|much time)\b", q.raw.lower()))
        return _direction_share(report, s, q.direction, how_long)
    return (
        f"I/O took {percent(s.share_slowest)} of the {_s(s.runtime_s)} run on the busiest rank "
        f"({_s(s.slowest_rank_io_s)}); "
        f"the average rank spent {percent(s.share_mean)}.",
        [
            exact(s.share_slowest * 100, "percent"),
            exact(s.runtime_s, "seconds"),
            exact(s.slowest_rank_io_s, "seconds"),
            exact(s.share_mean * 100, "percent"),
        ],
        [],
        [],
    )


def _direction_share(report: Report, s: IOShare, direction: str, how_long: bool = False) -> Out:
    """ "What fraction of the run was spent writing?": that direction's time on the average rank against the run,
    with the rank that spent the most in it where ranks differ."""
    reading = direction == "read"
    total = s.read_s if reading else s.write_s
    n = max(report.job.nprocs, 1)
    mean = total / n
    verb = "Reading" if reading else "Writing"
    values = [exact(mean / s.runtime_s * 100, "percent"), exact(s.runtime_s, "seconds"), exact(mean, "seconds")]
    if n == 1:
        text = f"{verb} took {percent(mean / s.runtime_s)} of the {_s(s.runtime_s)} run ({_s(mean)})"
    else:
        # A rank's own records are all of its time only where no shared record hides its part of a file
        shared = bool(report.rank_table.shared_files)
        rows = report.rank_table.ranks
        top = max(rows, key=lambda r: (r.read_s if reading else r.write_s, -r.rank)) if rows else None
        most = (top.read_s if reading else top.write_s) if top is not None else 0.0
        if how_long and top is not None and most > 1.5 * mean:
            # "how long did the writes take?" where one rank took far longer: that rank's time is how long
            # the job waited on it
            text = (
                f"{verb} took {_s(most)} on the slowest rank (rank {top.rank}"
                + (", by its own files" if shared else "")
                + f", {percent(most / s.runtime_s)} of the {_s(s.runtime_s)} run) and {_s(mean)} on the average "
                f"rank ({_s(total)} summed over the {n:,} ranks)"
            )
            values += [exact(most, "seconds"), exact(most / s.runtime_s * 100, "percent"), exact(total, "seconds")]
        else:
            text = (
                # "how long did the writes take?": the seconds first, the share after
                f"{verb} took {_s(mean)} on the average rank ({percent(mean / s.runtime_s)} of the "
                f"{_s(s.runtime_s)} run; {_s(total)} summed over the {n:,} ranks)"
                if how_long
                else f"{verb} took {percent(mean / s.runtime_s)} of the {_s(s.runtime_s)} run on the average rank "
                f"({_s(mean)}; {_s(total)} summed over the {n:,} ranks)"
            )
            values.append(exact(total, "seconds"))
            if top is not None and not shared and most > 1.05 * mean:
                text += f"; rank {top.rank} spent the most in it, {_s(most)} ({percent(most / s.runtime_s)} of the run)"
                values += [exact(most, "seconds"), exact(most / s.runtime_s * 100, "percent")]
    other = s.write_s if reading else s.read_s
    if other > 0:
        text += f"; {'writing' if reading else 'reading'} took {_s(other / n)}" + (" per rank" if n > 1 else "")
        values.append(exact(other / n, "seconds"))
    return text + ".", values, [], []


def time_split(report: Report, q: Query) -> Out:
    """ "Why does a single-process run spend ~8 s in I/O?": where that time went, file by file (a family of
    files as one), then the cost worth cutting, if any."""
    s = report.io_share
    if s is None or s.slowest_rank_io_s <= 0:
        return None
    items: list[tuple[float, str, list[Quantity]]] = []
    groups: list[re.Pattern[str]] = []  # the families named so far: a member is not named again
    files: list[str] = []
    candidates: list[tuple[float, str, FileGroup | None]] = [
        (g.io_time_s, g.pattern, g) for g in report.file_groups if g.files > 1 and "*" not in g.pattern
    ]
    candidates += [(f.io_time_s, f.path, None) for f in report.top_files]
    for seconds, name, g in sorted(candidates, key=lambda c: -c[0]):
        if seconds <= 0 or len(items) >= 3 or (items and seconds < 0.02 * items[0][0]):
            break
        if g is None and any(rx.fullmatch(name) for rx in groups):
            continue
        if g is not None and any(group_regex(g).fullmatch(p) for p in files):
            continue
        if g is not None and any(rx.fullmatch(g.pattern.replace("#", "0")) for rx in groups):
            continue  # inputs/0/case#.cfg is part of inputs/#/case#.cfg, already named
        if g is not None:
            groups.append(group_regex(g))
            moved = g.bytes_read + g.bytes_written
            what = "metadata calls" if g.meta_time_s >= 0.5 * g.io_time_s else f"{_b(moved)} moved"
            said = f"{_s(seconds)} to the {g.files:,} `{g.pattern}` files ({what})"
            items.append((seconds, said, [exact(g.files, "bare")]))
        else:
            files.append(name)
            f = next(x for x in report.top_files if x.path == name)
            verb = "written" if f.bytes_written >= f.bytes_read else "read"
            moved = max(f.bytes_written, f.bytes_read)
            said = f"{_s(seconds)} to `{f.path}` ({_b(moved)} {verb} at {f.layer})"
            items.append((seconds, said, [exact(moved, "bytes")]))
    if not items:
        return None
    summed = report.job.nprocs > 1
    head = (
        f"Of the job's I/O time ({_s(s.slowest_rank_io_s)} on the busiest rank, "
        f"{percent(s.share_slowest)} of the {_s(s.runtime_s)} run), "
        + ("summed over ranks " if summed else "")
        + ", ".join(text.replace(" to ", " went to ", 1) if not i else text for i, (_, text, _) in enumerate(items))
    )
    values = [exact(s.slowest_rank_io_s, "seconds"), exact(s.share_slowest * 100, "percent")]
    values.append(exact(s.runtime_s, "seconds"))
    for seconds, _, more in items:
        values += [exact(seconds, "seconds"), *more]
    causes = report.verdict.causes
    if causes:
        c = causes[0]
        named = f"{c.code}: {c.subject}" if c.subject else c.code
        head += f"; the cost worth cutting is {lower_first(c.title)} ({named}), ≈ {_s(c.seconds)}"
        values.append(exact(c.seconds, "seconds"))
        lead = report.finding(c.code)
        if lead is not None:
            from iodiag.analysis.outcomes.verdict import action_for

            todo = action_for(lead)
            head += f": {lower_first(todo).rstrip('.')}" if todo else ""
    else:
        head += "; no pattern in it is a problem to fix"
    return head + ".", values, [], []


def _file_write_vs_read(report: Report, q: Query) -> Out:
    """ "did reading particles.dat back take longer than writing it?": that file's read time against its write
    time; yes or no to the way round the question has it."""
    f = next((x for x in report.top_files if is_named(x.path, q.target)), None)
    if f is None or (f.read_time_s <= 0 and f.write_time_s <= 0):
        return None
    slower, faster = ("writing", "reading") if f.write_time_s >= f.read_time_s else ("reading", "writing")
    long_s, short_s = max(f.write_time_s, f.read_time_s), min(f.write_time_s, f.read_time_s)
    each = max(f.ranks, 1)
    text = (
        f"{slower.capitalize()} `{f.path}` took {_s(long_s)} summed over its {f.ranks:,} rank(s) "
        f"({_s(long_s / each)} per rank) against {_s(short_s)} {faster} it ({_s(short_s / each)} per rank), for "
        f"{_b(f.bytes_written)} written and {_b(f.bytes_read)} read."
    )
    values = [exact(long_s, "seconds"), exact(short_s, "seconds"), exact(long_s / each, "seconds")]
    values += [exact(short_s / each, "seconds"), exact(f.bytes_written, "bytes"), exact(f.bytes_read, "bytes")]
    asked = re.search(
        r"\b(writ\w*|wrote|reads?|reading)\b.*?\b(longer|slower|more time|faster|quicker|shorter|less time)\b",
        q.raw.lower(),
    )
    if q.yes_no and asked:
        first = "writing" if asked.group(1).startswith(("writ", "wrote")) else "reading"
        more = asked.group(2) in ("longer", "slower", "more time")
        yes = (first == slower) == more
        text = ("Yes: " if yes else "No: ") + lower_first(text)
    return text, values, [f.path], []


def write_vs_read(report: Report, q: Query) -> Out:
    if q.target:
        return _file_write_vs_read(report, q)
    rows = counted_interfaces(report)
    w_s, r_s = sum(i.own_write_s for i in rows), sum(i.own_read_s for i in rows)
    w_b, r_b = sum(i.own_bytes_written for i in rows), sum(i.own_bytes_read for i in rows)
    if w_s <= 0 and r_s <= 0:
        return None
    if w_s <= 0 or r_s <= 0:
        verb, secs, moved, other = (
            ("Writing", w_s, w_b, "nothing was read") if r_s <= 0 else ("Reading", r_s, r_b, "nothing was written")
        )
        return (
            f"{verb} took all of the I/O time: {_s(secs)} summed over ranks for {_b(moved)}; {other}.",
            [exact(secs, "seconds"), exact(moved, "bytes")],
            [],
            [],
        )
    slower, faster = ("Writing", "reading") if w_s >= r_s else ("Reading", "writing")
    # The verdict's order (root causes before the symptoms they explain), past the rank-imbalance symptoms
    patterns = [c for c in report.verdict.causes if c.code not in ("J02", "J04", "P19", "T01")]
    why = (
        f" {lead_words(patterns)[0].replace('the', 'The', 1)} {lower_first(patterns[0].title)} ({patterns[0].code})."
        if patterns
        else (" No finding in the log explains the difference: it is the storage's own speed for each direction.")
    )
    text = (
        f"{slower} took {_s(max(w_s, r_s))} summed over ranks against {_s(min(w_s, r_s))} {faster}: "
        f"{_b(w_b)} written at {_b(w_b / w_s)}/s and {_b(r_b)} read at {_b(r_b / r_s)}/s per rank.{why}"
    )
    asked = re.search(
        r"\b(writ\w*|wrote|reads?|reading)\b.*\b(longer|slower|more time|faster|quicker|shorter|less time)\b",
        q.raw.lower(),
    )
    if q.yes_no and asked:
        # "do the writes take longer than the reads?": yes or no, as the question put it
        first_writes = asked.group(1).startswith(("writ", "wrote"))
        more = asked.group(2) in ("longer", "slower", "more time")
        yes = (w_s > r_s) == first_writes if more else (w_s < r_s) == first_writes
        text = f"{'Yes' if yes else 'No'}: {lower_first(text)}"
    values = [
        exact(w_s, "seconds"),
        exact(r_s, "seconds"),
        exact(w_b, "bytes"),
        exact(r_b, "bytes"),
        exact(w_b / w_s, "rate"),
        exact(r_b / r_s, "rate"),
    ]
    return text, values, [], []


def io_bound(report: Report, q: Query) -> Out:
    v, s = report.verdict, report.io_share
    if s is None or v.io_matters is None:
        if s is None or s.runtime_s <= 0:
            return "The log cannot tell: it does not hold all of the job's I/O.", [], [], []
        return _partial_io_bound(report, s)
    share, values = _run_share(s)
    if q.share is not None:
        # "is more than a third of the run I/O?": against the share asked, whatever the verdict
        above = s.share_slowest > q.share
        asked_below = re.search(r"\b(less than|under|below)\b", q.raw.lower())
        yes = not above if asked_below else above
        return f"{'Yes' if yes else 'No'}: {share}.", values, [], []
    if (q.bound or q.big) and not v.io_matters and s.share_slowest >= (BOUND_SHARE if q.bound else BIG_SHARE):
        # I/O-bound by its share, though the run is too short for that I/O to cost anything worth fixing
        return (
            f"Yes: {share}, though {_s(s.slowest_rank_io_s)} of I/O is too little time to be worth tuning.",
            values,
            [],
            [],
        )
    if v.io_matters and q.bound and s.share_slowest < BOUND_SHARE:
        # "I/O-bound" means I/O takes a large part of the run; a share worth cutting is not that.
        return f"No: {share}, so the job is not I/O-bound, though that share is worth cutting.", values, [], []
    if v.io_matters and q.big and s.share_slowest < BIG_SHARE:
        return f"No: {share}, a small part of it, though worth cutting.", values, [], []
    if v.io_matters:
        return f"Yes: {share}.", values, [], []
    if s.share_slowest >= BOUND_SHARE:
        # A large share of a run too short for it to matter: the time, not the share, is the answer
        return f"No: {share}, but that is too little time to be worth tuning.", values, [], []
    return f"No: {share}; the rest is computation and communication.", values, [], []


def _partial_io_bound(report: Report, s: IOShare) -> Out:
    """A log that holds only part of the job's I/O: what it recorded bounds the share from below, so a small
    recorded share leans no and a large one is yes; between them the log cannot tell."""
    kept = [m for m in report.job.modules if m.partial and m.records]
    why = "".join(f", {m.name} kept only {m.records:,} records" for m in kept[:1])
    values = [
        *(exact(m.records, "bare") for m in kept[:1]),
        exact(s.slowest_rank_io_s, "seconds"),
        exact(s.share_slowest * 100, "percent"),
        exact(s.runtime_s, "seconds"),
    ]
    recorded = f"{_s(s.slowest_rank_io_s)} on the busiest rank, {percent(s.share_slowest)} of the {_s(s.runtime_s)} run"
    if s.share_slowest < NEGLIGIBLE_SHARE:
        return (
            f"No sign of it in what the log recorded: {recorded}; but the log holds only part of the job's I/O{why}, "
            "so I/O to files past that limit is not counted and whether it matters is unknown.",
            values,
            [],
            [],
        )
    return (
        f"The log cannot tell, as it does not hold all of the job's I/O{why}: what it recorded is {recorded}.",
        values,
        [],
        [],
    )


def _run_share(s: IOShare) -> tuple[str, list[Quantity]]:
    """ "I/O took 9% of the 6.2 min run on the busiest rank (34.08 s)", with its numbers: what both the I/O-bound
    and the is-something-wrong answers lead with."""
    text = (
        f"I/O took {percent(s.share_slowest)} of the {_s(s.runtime_s)} run on the busiest rank "
        f"({_s(s.slowest_rank_io_s)})"
    )
    values = [
        exact(s.share_slowest * 100, "percent"),
        exact(s.runtime_s, "seconds"),
        exact(s.slowest_rank_io_s, "seconds"),
    ]
    return text, values


def io_problem(report: Report, q: Query) -> Out:
    """Is something wrong with the job's I/O? Yes when the verdict names a cause; no when I/O does not matter or
    nothing in the pattern is at fault (then the rate is what bounds it). "Is it healthy?" flips the word."""
    v, s = report.verdict, report.io_share
    if s is None or v.io_matters is None:
        return io_bound(report, q)
    problem, no = ("No: ", "Yes: ") if q.healthy else ("Yes: ", "No: ")
    share, values = _run_share(s)
    if not v.io_matters:
        return (
            f"{no}nothing in the I/O needs fixing: {share}; the rest is computation and communication.",
            values,
            [],
            [],
        )
    top = v.causes[0] if v.causes else None
    f = report.finding(top.code) if top else None
    if top is None or f is None:
        return (
            f"{no}no pattern in the log is at fault: {share}, and the rate the storage delivered is what bounds it.",
            values,
            [],
            [],
        )
    named = f"{f.code}: {f.subject}" if f.subject else f.code
    cost = f.impact.seconds if f.impact and f.impact.seconds else None
    priced = f", ≈ {_s(cost)} of it" if cost else ""
    if cost:
        values.append(exact(cost, "seconds"))
    more = f" ({len(v.causes) - 1} more cause(s) below)" if len(v.causes) > 1 else ""
    return (
        f"{problem}{share}, and {lead_words(v.causes)[0]} {lower_first(f.title)} ({named}){priced}{more}.",
        values,
        [],
        [],
    )


def interfaces(report: Report, q: Query) -> Out:
    used = [i for i in report.interfaces if i.records]
    if not used:
        return "None: the log has no instrumented I/O records.", [], [], []
    high = [i for i in used if not i.counted and i.name not in ("POSIX", "DAOS")]
    parts = [f"{i.name} ({_b(i.bytes_read + i.bytes_written)})" for i in used]
    lead = f"{', '.join(dict.fromkeys(i.name.split(' (')[0] for i in high))} on top; " if high else ""
    return (
        f"The job's I/O went through {lead}{', '.join(parts)}.",
        [exact(i.bytes_read + i.bytes_written, "bytes") for i in used],
        [],
        [],
    )


def layer_sizes(report: Report, q: Query) -> Out:
    """Why POSIX requests differ in size from the MPI-IO (or PnetCDF, HDF5) calls above them: collective buffering
    gathers or splits them at aggregator ranks, one POSIX call per collective buffer; independent reads go through
    data sieving. From the cross-layer summary's job totals."""
    cl = report.cross_layer
    posix = cl.job_layer("POSIX") if cl else None
    mpi = cl.job_layer("MPI-IO") if cl else None
    if cl is None or posix is None or mpi is None:
        return None
    app = next((lay for lay in cl.job_layers if lay.layer in ("PnetCDF", "HDF5")), None)
    parts, values = [], []
    combined: list[bool] = []  # per direction: did fewer, larger requests reach POSIX?
    for verb, up, down, coll in (
        ("write", mpi.writes, posix.writes, mpi.collective_writes),
        ("read", mpi.reads, posix.reads, mpi.collective_reads),
    ):
        if up.ops <= 0 or down.ops <= 0 or (q.direction != "both" and verb != q.direction):
            continue
        size_up = up.typical_bytes or up.mean_bytes
        size_down = down.typical_bytes or down.mean_bytes
        combined.append(size_down >= 1.5 * size_up and down.ops < up.ops)
        above = f"{up.ops:,} MPI-IO {verb}s of {_b(size_up)}" + (f" (from {app.layer})" if app else "")
        below = f"{down.ops:,} POSIX {verb}s of {'mostly ' if down.typical_bytes else ''}{_b(size_down)}"
        values += [exact(up.ops, "bare"), exact(size_up, "bytes"), exact(down.ops, "bare"), exact(size_down, "bytes")]
        if coll:
            how = "gathered" if size_down > size_up else "split"
            parts.append(
                f"the {above} are collective, so MPI-IO's collective buffering (two-phase I/O) {how} them at "
                f"aggregator ranks into {below}: one POSIX call per collective buffer (cb_buffer_size), whatever "
                "size each rank asked for"
            )
            values.append(exact(coll, "bare"))
        elif verb == "read" and size_down > size_up:
            parts.append(
                f"the {above} are independent, and MPI-IO's data sieving read larger blocks holding them: {below}"
            )
        else:
            parts.append(f"the {above} reached the file system as {below}")
    if not parts:
        return None
    if q.yes_no:
        # "Did MPI-IO combine the small writes into bigger requests?": yes where fewer, larger calls reached POSIX
        return ("Yes: " if combined[0] else "No: ") + "; and ".join(parts) + ".", values, [], []
    text = "Because " + "; and ".join(parts) + "."
    return text, values, [], []


def unnamed_records(report: Report, q: Query) -> Out:
    """Records whose id is missing from the log's name table: they have no file name, so every reader (PyDarshan
    too) leaves them out; what they count is said, so a total is never silently half."""
    rows = []
    for f in report.findings:
        if f.code != "D04":
            continue
        ev = {m.name: m.value for m in f.evidence}
        if int(ev.get("unnamed_records", 0) or 0):
            rows.append(ev)
    if not rows:
        other = sum(
            int(next((m.value for m in f.evidence if m.name == "corrupt_records"), 0) or 0)
            for f in report.findings
            if f.code == "D04"
        )
        tail = f"; {other:,} record(s) were left out for other reasons (D04)" if other else ""
        return f"No: every record in the log has its file name in the name table{tail}.", [], [], []
    parts, values = [], []
    for ev in rows:
        n, kept = int(ev["unnamed_records"]), int(ev.get("records_kept", 0) or 0)
        total = kept + int(ev.get("corrupt_records", 0) or 0)
        parts.append(f"{n:,} of {total:,} {ev.get('module', '')} records")
        values += [exact(n, "bare"), exact(total, "bare")]
    said = ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]
    wrote = sum(int(ev.get("unnamed_bytes_written", 0) or 0) for ev in rows)
    read = sum(int(ev.get("unnamed_bytes_read", 0) or 0) for ev in rows)
    counts = f"; they count {_b(wrote)} written and {_b(read)} read, in no total" if wrote or read else ""
    values += [exact(wrote, "bytes"), exact(read, "bytes")] if wrote or read else []
    text = (
        f"{'Yes: ' if q.yes_no else ''}{said} have an id missing from the log's name table, so they have no file "
        f"name and are left out of every number (D04; PyDarshan drops them too){counts}."
    )
    return text, values, [], []


def completeness(report: Report, q: Query) -> Out:
    problems = [f for f in report.findings if f.code in ("D01", "D02", "D04")]
    partial = [i.name for i in report.interfaces if i.partial]
    traces = [f for f in problems if any(m.name == "module" and str(m.value).startswith("DXT_") for m in f.evidence)]
    if (
        q.yes_no
        and traces
        and len(traces) == len(problems)
        and not partial
        and re.search(r"\b(files?|records?)\b", q.raw.lower())
        and not re.search(r"\b(trace|dxt|operations?|every (read|write))\b", q.raw.lower())
    ):
        # "did darshan capture all the files?": every file has its record; only the trace of its operations
        # (DXT) filled up, which drops operations, not files
        names = " and ".join(sorted({str(m.value) for f in traces for m in f.evidence if m.name == "module"}))
        text = (
            f"Yes: every file the job used has its record (no counter module ran out of records); only the {names} "
            "trace of individual operations filled up, so the later operations are missing from the trace, not files."
        )
        return text, [], [], []
    if not problems and not partial:
        return (
            # "did darshan drop any records?" is answered no where "is it complete?" is answered yes
            f"{('No: ' if q.missing else 'Yes: ') if q.yes_no else ''}the log is complete as far as its own flags and "
            "records show: no module "
            "ran out of records, none was cut short and no record failed validation.",
            [],
            [],
            [],
        )
    corrupt = [f for f in problems if f.code == "D04"]
    if len(corrupt) > 1:
        # One sentence for every damaged module ("1 of 31 POSIX records and 5 of 6 STDIO records"), so none hides
        # in a later card
        parts = []
        for f in corrupt:
            ev = {m.name: m.value for m in f.evidence}
            bad, kept_n = int(ev.get("corrupt_records", 0)), int(ev.get("records_kept", 0))
            # Why, as the card says it: "(2 with a rank out of range (2048, 1048576; outside -1..2047))"
            head = f.message.split(". ", 1)[0]
            why = head[head.index("left out (") + len("left out ") :] if "left out (" in head else ""
            parts.append(f"{bad:,} of {bad + kept_n:,} {ev.get('module', '')} records" + (f" {why}" if why else ""))
        lead = (
            f"{corrupt[0].title} (D04): " + ", ".join(parts[:-1]) + f" and {parts[-1]} are corrupt and were left out."
        )
        problems = [f for f in problems if f.code != "D04"]
        said = " ".join([lead, *(f"{f.title} ({f.code}): {f.message}" for f in problems[:1])])
    else:
        said = " ".join(f"{f.title} ({f.code}): {f.message}" for f in problems[:2])
    if not said:
        said = f"Darshan flagged these modules as partial: {', '.join(partial)}."
    # How far it got: the records a module kept before it ran out are a lower bound on its files.
    # A DXT module's records are traced files, not what ran out (its segment buffer did): no count to lead with
    kept = [m for m in report.job.modules if m.partial and m.records and not m.name.startswith("DXT")]
    values = [exact(m.records, "bare") for m in kept[:2]]
    if kept:
        # The count first: "POSIX kept 1,024 records, then ran out of record memory", the findings after it
        lead = "; ".join(f"{m.name} kept {m.records:,} records, then ran out of record memory" for m in kept[:2])
        said = (
            f"the log is partial: {lead}, so files it did not record are missing and its totals are lower bounds. "
            f"{said}"
        )
    # "Is anything missing?" is answered yes where "is it complete?" is answered no.
    word = "Yes: " if q.missing else "No: "
    return f"{word}{said}" if q.yes_no else said[0].upper() + said[1:], values, [], []


def small_requests(report: Report, q: Query) -> Out:
    codes = ("P05",) if q.direction == "read" else ("P06",) if q.direction == "write" else ("P06", "P05")
    f = next((report.finding(c) for c in codes if report.finding(c) is not None), None)
    t = report.rank_table
    common = (
        f"; the most common request size is {_b(t.access_sizes[0].size)} ({t.access_sizes[0].count:,} of "
        f"{t.posix_requests:,})"
        if t.access_sizes
        else ""
    )
    cv = [exact(t.access_sizes[0].size, "bytes"), exact(t.access_sizes[0].count, "bare")] if t.access_sizes else []
    if f is None:
        return f"No: the log shows no run of small requests worth a finding{common}.", cv, [], []
    cost = f.impact.seconds if f.impact and f.impact.seconds else None
    priced = f", costing ≈ {_s(cost)}" if cost and f.severity in (Severity.CRITICAL, Severity.WARNING) else ""
    return f"Yes: {lower_first(f.message.rstrip('.'))}{priced} ({f.code}).", cv, [], []


def mpi_job(report: Report, q: Query) -> Out:
    """Whether the job ran under MPI: its process count and whether the log holds MPI-IO records."""
    n = report.job.nprocs
    mpiio = any(i.name == "MPI-IO" and i.records for i in report.interfaces)
    parallel = n > 1 or mpiio
    asked_serial = bool(re.search(r"\b(serial|single[- ]process)\b", q.raw.lower()))
    yes = (not parallel) if asked_serial else parallel
    io = "with MPI-IO records" if mpiio else "with no MPI-IO records"
    return f"{'Yes' if yes else 'No'}: the job ran {n:,} process(es), {io}.", [exact(n, "bare")], [], []


def answer_module(report: Report, q: Query) -> Out:
    """Whether the log holds a module (APMPI, HEATMAP, LUSTRE ...), with what the log does hold."""
    want = (q.target or "").upper()
    mods = [m for m in report.job.modules if m.records or m.loaded]
    held = ", ".join(f"{m.name} ({m.records:,} record(s))" for m in mods)
    mine = next((m for m in mods if m.name.upper().replace("-", "") == want), None)
    if mine is not None:
        return (
            f"Yes: the log holds {mine.name} ({mine.records:,} record(s)); its modules: {held}.",
            [exact(mine.records, "bare")],
            [],
            [],
        )
    return f"No: the log holds no {want} module; its modules: {held}.", [], [], []


def traced(report: Report, q: Query) -> Out:
    # A module the analysis did not load still says the log holds it (its records are not counted then).
    dxt = [m for m in report.job.modules if m.name.upper().startswith("DXT")]
    if not dxt:
        return "No: the log holds no DXT trace (DXT_POSIX or DXT_MPIIO), only Darshan's counters.", [], [], []
    parts = ", ".join(
        m.name + (f" ({m.records:,} records)" if m.records else "") + (" (partial)" if m.partial else "") for m in dxt
    )
    return f"Yes: the log holds a DXT trace: {parts}.", [exact(m.records, "bare") for m in dxt if m.records], [], []


def layer_gap(report: Report, q: Query) -> Out:
    """MPI-IO time against the POSIX time beneath it, for the named file or the one with the most MPI-IO time:
    on the slowest rank where Darshan kept one shared POSIX record, else summed over ranks. What is not in the
    POSIX calls was spent above the file system (collective buffering's exchange, waiting for other ranks)."""
    xl = report.cross_layer
    if xl is None or not xl.files:
        return None
    files = [f for f in report.top_files if f.layer == "MPI-IO" and (q.target is None or is_named(f.path, q.target))]
    f = max(files, key=lambda x: x.io_time_s, default=None)
    if f is None:
        return None
    row = next((x for x in xl.files if x.path == f.path), None)
    mpi = row.layer("MPI-IO") if row is not None else None
    posix = row.layer("POSIX") if row is not None else None
    k = f.posix_slowest
    if f.slowest_s and k is not None:
        above, below, how = f.slowest_s, k.seconds, "on the slowest rank"
    elif mpi is not None and posix is not None:
        above = mpi.reads.time_s + mpi.writes.time_s + mpi.meta_time_s
        below = posix.reads.time_s + posix.writes.time_s + posix.meta_time_s
        how = "summed over ranks"
    else:
        return None
    if above <= 0:
        return None
    gap = max(above - below, 0.0)
    share = gap / above
    word = ("No: " if share >= 0.5 else "Yes: ") if q.yes_no else ""
    coll = f.collective > 0
    where = (
        "collective buffering's exchange of data between ranks and waiting for the slowest rank or aggregator"
        if coll
        else "the MPI-IO library and waiting (file locks, other ranks)"
    )
    text = (
        f"{word}{'o' if word else 'O'}n `{f.path}`, {_s(above)} went to MPI-IO calls {how} against {_s(below)} in the "
        f"POSIX calls beneath them: the other {_s(gap)} ({percent(share)}) was spent above the file system, in {where}"
    )
    values = [exact(above, "seconds"), exact(below, "seconds"), exact(gap, "seconds"), exact(share * 100, "percent")]
    few, fv = aggregators(report, f)
    if few:
        # The gap's usual reason, from the counters: a few aggregators did the POSIX work the others waited on
        text += few
        values += fv
    gap_finding = report.finding("X04")
    if gap_finding is not None and gap_finding.impact is not None and gap_finding.impact.seconds:
        text += f" (X04, ≈ {_s(gap_finding.impact.seconds)})"
        values.append(exact(gap_finding.impact.seconds, "seconds"))
    return text + ".", values, [f.path], []


def aggregator_count(report: Report, q: Query) -> Out:
    """How many ranks carried a collective file's data to the file system (the aggregators): the ranks with POSIX
    requests beneath its collective MPI-IO calls, from the cross-layer summary. A reduced shared POSIX record hides
    them, unless a finding showed that one rank moved every byte."""
    cl = report.cross_layer
    if cl is None:
        return None
    rows = []
    for f in cl.files:
        m, p = f.layer("MPI-IO"), f.layer("POSIX")
        if m is None or p is None:
            continue
        coll = (m.collective_writes or 0) + (m.collective_reads or 0)
        if coll <= 0 or (q.target and not is_named(f.path, q.target)):
            continue
        rows.append((f, m, p, coll))
    if not rows:
        if q.target:
            return None
        return (
            "None: the job made no collective MPI-IO calls, so no ranks aggregated data for others; each rank "
            "issued its own requests.",
            [],
            [],
            [],
        )
    f, m, p, coll = max(rows, key=lambda r: r[2].writes.bytes + r[2].reads.bytes)
    writes = (m.collective_writes or 0) >= (m.collective_reads or 0)
    verb = "write" if writes else "read"
    n = p.writer_ranks if writes else p.reader_ranks
    ids = p.writer_rank_ids if writes else []
    moved = p.writes.bytes if writes else p.reads.bytes
    calls = (m.collective_writes if writes else m.collective_reads) or 0
    above = m.ranks or report.job.nprocs
    values = [exact(calls, "bare"), exact(moved, "bytes")]
    funnel = next(
        (x for x in report.findings if x.code in ("X03", "X07") and any(e.path == f.path for e in x.files)), None
    )
    estimated = False
    if n is None and funnel is not None:
        # The funnel finding counted them from the shared record: one rank moved every byte, or the ranks'
        # variance of bytes says how many did
        got = funnel.metric(f"posix_{'writer' if writes else 'reader'}_ranks")
        n = int(got) if isinstance(got, int | float) and got >= 1 else 1
        estimated = n > 1
    if n is None:
        text = (
            f"Unknown: Darshan kept one shared POSIX record for `{f.path}`, so the log does not show how many ranks "
            f"issued the POSIX {verb}s ({_b(moved)}) beneath its {calls:,} collective MPI-IO {verb}s"
        )
        usage = next((u for u in report.top_files if u.path == f.path), None)
        k = usage.posix_slowest if usage is not None else None
        if k is not None and k.bytes and moved:
            # What the record does keep: the slowest rank's bytes (its share is no count: that rank may also
            # have written on its own, as rank 0 often does)
            share = min(k.bytes / moved, 1.0)
            text += f"; its slowest rank, {k.rank}, moved {_b(k.bytes)} of them ({percent(share)})"
            values += [exact(k.bytes, "bytes"), exact(share * 100, "percent")]
        return text + ".", values, [f.path], []
    who = (
        f"One aggregator: rank {ids[0]} alone"
        if n == 1 and ids
        else "One aggregator: one rank alone"
        if n == 1
        else f"About {n:,} aggregators (Darshan's variance of bytes over the ranks)"
        if estimated
        else f"{n:,} aggregators"
    )
    text = (
        f"{who} issued the {_b(moved)} of POSIX {verb}s beneath the {calls:,} collective "
        f"MPI-IO {verb}s that {above:,} ranks made to `{f.path}`"
    )
    values += [exact(n, "bare"), exact(above, "bare")]
    if funnel is not None:
        carry = "one aggregator carries" if n == 1 else f"{n:,} aggregators carry"
        text += f" ({funnel.code}: {carry} the whole file)"
    if len(rows) > 1:
        text += f"; {len(rows) - 1:,} more file(s) had collective calls"
    return text + ".", values, [f.path], ids[:1] if n == 1 else []


def fs_bytes(report: Report, q: Query) -> Out:
    """What the job moved on the file system a question names ("did it write anything to lustre?", "how much went
    to NFS?"): each file's bytes at its top layer, by the file system its path is mounted on."""
    kinds = set((q.target or "").split("|")) - {""}
    if not kinds or not report.file_systems:
        return None
    on = [u for u in report.file_systems if u.file_system in kinds]
    name = " or ".join(sorted({FS_NAMES.get(k.replace("nfs4", "nfs"), k) for k in kinds}))
    writes, reads = q.direction in ("write", "both"), q.direction in ("read", "both")

    def moved(u: FileSystemUsage) -> int:
        return (u.bytes_written if writes else 0) + (u.bytes_read if reads else 0)

    verb = "wrote" if q.direction == "write" else "read" if q.direction == "read" else "moved"
    total = sum(moved(u) for u in on)
    elsewhere = [u for u in report.file_systems if u.file_system not in kinds and moved(u) > 0]
    values = [exact(total, "bytes")]
    if total > 0:
        files = sum(u.files for u in on)
        top = max(on, key=moved)
        where = f" (`{'`, `'.join(top.mounts)}`)" if top.mounts else ""
        text = (
            f"{'Yes: t' if q.yes_no else 'T'}he job {verb} {_b(total)} on {name}{where}, over {files:,} file(s) with "
            f"I/O there; the largest is `{top.top_path}`"
        )
        values.append(exact(files, "bare"))
        return text + ".", values, [top.top_path], []
    text = f"{'No: t' if q.yes_no else 'T'}he job {verb} nothing on {name}"
    if not on:
        text += f": none of its files with I/O were on {name}"
    if elsewhere:
        parts = [
            f"{FS_NAMES.get(u.file_system, u.file_system)}"
            + (f" (`{'`, `'.join(u.mounts)}`)" if u.mounts else "")
            + f", {_b(moved(u))}"
            for u in elsewhere[:3]
        ]
        text += f"; what it {verb} went to " + " and ".join(parts)
        values += [exact(moved(u), "bytes") for u in elsewhere[:3]]
        if len(elsewhere) == 1:
            text += f" (`{elsewhere[0].top_path}`)"
    return text + ".", values, [], []


def fs_share(report: Report, q: Query) -> Out:
    """Which file system held most of the data, with each file system's bytes and files; and, asked in the same
    breath ("... and how much went through each interface?"), each interface's bytes after it."""
    rows = [u for u in report.file_systems if u.bytes_read + u.bytes_written > 0]
    if not rows:
        return None
    total = sum(u.bytes_read + u.bytes_written for u in rows)
    top = rows[0]
    moved = top.bytes_read + top.bytes_written

    def said(u: FileSystemUsage) -> str:
        where = f" (`{'`, `'.join(u.mounts)}`)" if u.mounts else ""
        return f"{FS_NAMES.get(u.file_system, u.file_system)}{where}"

    text = f"{said(top)} held most of the data: {_b(moved)} of the job's {_b(total)} ({percent(moved / total)})"
    text += f", over {top.files:,} file(s)"
    values = [
        exact(moved, "bytes"),
        exact(total, "bytes"),
        exact(moved / total * 100, "percent"),
        exact(top.files, "bare"),
    ]
    if len(rows) > 1:
        text += "; " + "; ".join(f"{said(u)} {_b(u.bytes_read + u.bytes_written)}" for u in rows[1:3])
        values += [exact(u.bytes_read + u.bytes_written, "bytes") for u in rows[1:3]]
    text += "."
    if re.search(r"\b(interfaces?|layers?|apis?|modules?|librar(y|ies))\b", q.raw.lower()):
        more = top_interface(report, q)
        if more is not None:
            text += " " + more[0]
            values += more[1]
    return text, values, [top.top_path] if top.top_path else [], []
