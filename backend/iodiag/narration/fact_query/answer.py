"""The dispatcher: a query to its answer function, with the caveats a partial or corrupt log adds in the same
sentence."""

from __future__ import annotations

import re

from iodiag.analysis.models import (
    FileUsage,
    Report,
)
from iodiag.core.units import human_bytes
from iodiag.narration.checking.facts import Fact
from iodiag.narration.checking.quantities import Quantity, exact
from iodiag.narration.checking.untrusted import quote
from iodiag.narration.fact_query.common import Out, lower_first
from iodiag.narration.fact_query.common import fmt_seconds as _s
from iodiag.narration.fact_query.files import (
    alignment,
    answer_calls,
    answer_files,
    answer_group,
    chunk_size,
    file_balance,
    file_compare,
    file_library,
    file_list,
    file_per_rank,
    file_ranks,
    file_share,
    file_slowest,
    file_usage,
    file_when,
    file_why,
    interface_files,
    job_reread,
    not_recorded,
    request_size,
    sequential,
    software,
    top_file,
)
from iodiag.narration.fact_query.job import (
    absent,
    aggregator_count,
    answer_module,
    answer_osts,
    answer_rate,
    collective,
    completeness,
    datasets,
    file_system,
    fs_bytes,
    fs_share,
    iface_bytes,
    interfaces,
    io_bound,
    io_problem,
    io_share,
    job_bytes,
    job_info,
    layer_gap,
    layer_sizes,
    metadata,
    mpi_job,
    runtime,
    sharing,
    slow_ost,
    small_requests,
    stripe,
    time_split,
    top_interface,
    traced,
    unnamed_records,
    uses,
    write_vs_read,
)
from iodiag.narration.fact_query.names import glob_group, group_named, is_named, name_pattern
from iodiag.narration.fact_query.query import Query
from iodiag.narration.fact_query.ranks import (
    answer_ranks,
    any_slow_rank,
    busiest_rank,
    fastest_rank,
    files_per_rank,
    rank_bytes,
    rank_files,
    rank_spread,
    rank_time,
    ranks_with_io,
    slow_rank,
    slow_ranks,
)
from iodiag.narration.fact_query.vocabulary import NAMED, YES_NO

# --- queries -> one checked sentence ----------------------------------------------------------------------------


def answer(report: Report, query: Query) -> Fact | None:
    """The query's answer as a fact (its text is the answer's first sentence), or None when the report cannot
    say."""
    fn = _ANSWERS.get(query.metric)
    if fn is None:
        return None
    has = {i.name for i in report.interfaces if i.records}
    if query.target == "DAOS" and "DAOS" not in has and "DFS" in has:
        # DFS is DAOS's file system: "the DAOS writes" of a DFS job are its DFS records.
        query = query.model_copy(update={"target": "DFS"})
    no_records = not any(i.records for i in report.interfaces) and not any(
        m.records for m in report.job.modules if m.name not in ("HEATMAP", "APMPI", "APXC", "LUSTRE")
    )
    if no_records and query.metric in _NEEDS_RECORDS:
        # "can you tell which file was slowest?" on a log with no I/O records: it cannot, and says why
        whether = query.yes_no or re.match(r"^\s*(can|could|does|do|did|is|was|are|were|has|have)\b", query.raw.lower())
        text = f"{'No: t' if whether else 'T'}he log records no I/O at all: no instrumented module has records."
        return Fact(f"query:{query.metric}", "answer", text)
    out = fn(report, query)
    if out is None:
        out = _not_in_log(report, query)
    if out is None:
        return None
    text, values, files, ranks = out
    also = _second_question(report, query)
    if also is not None:
        # "how much did each rank write, and was it collective?": the second question's answer follows
        text = f"{text.rstrip()} {also[0]}"
        values, files, ranks = [*values, *also[1]], [*files, *also[2]], [*ranks, *also[3]]
    partial = [m for m in report.job.modules if m.partial and m.records]
    # A group's files ("the 1,024 patche_#.in files") are counted too, wherever the question leads
    group_count = query.metric == "file_why" and bool(re.match(r"(?:(?:Yes|No): )?[Tt]he [\d,]+ `[^`]+` files", text))
    # "there is no rank 3" is a fact of the job, not a count the lost records could raise
    no_such = bool(re.search(r"\bthere is no rank\b", text))
    if partial and (query.metric in _COUNTED or group_count) and not text.startswith("None: ") and not no_such:
        # A count from a log that ran out of records is a lower bound, and says so in the same sentence.
        m = partial[0]
        lead = f"the log is incomplete ({m.name} ran out of records after {m.records:,}), so this is a lower bound"
        text, _ = _with_caveat(text, lead + ":", "Yes|No|Partly")
        values = [*values, exact(m.records, "bare")]
    corrupt = next((f for f in report.findings if f.code == "D04"), None)
    if corrupt is not None and query.metric not in ("completeness", "unnamed"):
        # A number read past corrupt records needs the caveat in the same sentence, not in another card.
        # What was wrong with them, as the screening counted it: "1 of 3 POSIX records ... (1 with a rank out of
        # range (outside -1..223))"
        why = corrupt.message.split(". ", 1)[0].replace(" are corrupt and were left out", " left out")
        ev = {m.name: m.value for m in corrupt.evidence}
        lost_w, lost_r = int(ev.get("unnamed_bytes_written", 0) or 0), int(ev.get("unnamed_bytes_read", 0) or 0)
        if lost_w or lost_r:
            # Records without a name still count I/O: a total without them is half the story, so say how much
            why += f", which count another {human_bytes(lost_w)} written and {human_bytes(lost_r)} read"
            values = [*values, exact(lost_w, "bytes"), exact(lost_r, "bytes")]
        caveat = f"the log holds corrupt records that cannot be trusted ({corrupt.code}: {why}); from the valid ones"
        if query.metric in _LAYOUT:
            # Where a file lives and how it is striped is no count the lost records could change: the answer
            # first, the caveat after it
            text = f"{text.rstrip()} The log also holds corrupt records that cannot be trusted ({corrupt.code}: {why})."
            return Fact(
                f"query:{query.metric}", "answer", text, values=tuple(values), files=tuple(files), ranks=tuple(ranks)
            )
        text, said = _with_caveat(text, caveat + ",", "Yes|No|Partly|None", plain=caveat + ":")
        if not said and _doubts(query.raw) and not _asked_number_holds(query.raw, values):
            # "rank 14 shows 2 trillion seconds, is that real?": the figure the user doubts is not one the valid
            # records give, so it came from the corrupt ones
            text = f"No: {lower_first(text)}"
    return Fact(f"query:{query.metric}", "answer", text, values=tuple(values), files=tuple(files), ranks=tuple(ranks))


def _second_question(report: Report, q: Query) -> Out:
    """The answer to a yes/no question joined to a fact question with "and" ("..., and was it collective?"),
    or the same question about a second rank ("compare the read time of rank 7 and rank 8")."""
    asked = q.raw.lower()
    if q.metric != "collective" and re.search(
        r"\band (was|were|is|are) (it|they|them|those|the \w+) collective\b", asked
    ):
        return collective(report, Query(metric="collective", yes_no=True, raw=q.raw))
    did = re.search(
        r"\band (did|does|do) (it|they|the job|the code|the app)\b.*\b(read|write)\b.*"
        r"\b(anything|any( data| bytes)?|something)\b",
        asked,
    )
    if did and q.metric not in ("bytes", "group", "file_usage"):
        # "how many conf/param*.in files, and did it actually read anything from them?": the family's bytes
        g = glob_group(report, q.raw) or group_named(report, q.raw)
        if g is not None:
            reading = did.group(3) == "read"
            moved = g.bytes_read if reading else g.bytes_written
            verb, prep = ("read", "from") if reading else ("wrote", "to")
            return (
                f"{'Yes' if moved else 'No'}: it {verb} {human_bytes(moved) if moved else 'nothing (0 B)'} {prep} "
                f"the {g.files:,} `{g.pattern}` files.",
                [exact(moved, "bytes"), exact(g.files, "bare")],
                [],
                [],
            )
    if q.metric == "stripe" and q.target:
        # "stripe size of snap_100.0 vs restart.0020.0.bin?": the second file's layout follows the first's
        others = [m.group(1) for m in NAMED.finditer(q.raw) if m.group(1) != q.target]
        if len(others) == 1:
            other = stripe(report, q.model_copy(update={"target": others[0]}))
            if other is not None:
                return re.split(r"(?<=[.!?])\s+(?=[A-Z])", other[0], maxsplit=1)[0], other[1], other[2], other[3]
    if q.scope == "rank" and q.metric in ("time", "bytes") and q.target is not None:
        named = [
            m.group(1) or m.group(2)
            for m in re.finditer(
                r"\branks?\s*#?\s*(\d+)"
                r"|\b(?:and|vs\.?|versus|or) (\d+)\b(?!\s*(?:%|[kmgt]i?b\b|bytes|s\b|sec|files?|x\b))",
                asked,
            )
        ]
        others = [r for r in dict.fromkeys(x for x in named if x) if r != q.target]
        if len(others) == 1:
            other = _ANSWERS[q.metric](report, q.model_copy(update={"target": others[0]}))
            if other is not None:
                # its first sentence: the shared-record note, said once for the first rank, is not repeated
                return re.split(r"(?<=[.!?])\s+(?=[A-Z])", other[0], maxsplit=1)[0], other[1], other[2], other[3]
    return None


def _with_caveat(text: str, lead: str, words: str, plain: str | None = None) -> tuple[str, bool]:
    """``text`` with a caveat in its first sentence: after a leading yes or no (one of ``words``), which stays
    first, else at the start (``plain``, where it reads differently there). Also whether a yes or no led."""
    said = re.match(rf"^({words}): ", text)
    if said:
        return f"{said.group(0)}{lead} {lower_first(text[said.end() :])}", True
    first = plain or lead
    return f"{first[0].upper()}{first[1:]} {lower_first(text)}", False


_DOUBT = re.compile(
    r"\b(is|are|was|were) (that|this|it|these|those|the \w+) (really |even )?"
    r"(real|right|correct|true|accurate|plausible|possible|legit|genuine|believable)\b"
    r"|\bcan (i|we) (trust|believe)\b|\breal\s*\?"
)
_UNIT_SCALE = {
    **{u: 1000.0**i for i, u in enumerate(("b", "kb", "mb", "gb", "tb", "pb"))},
    **{u: 1024.0**i for i, u in enumerate(("b", "kib", "mib", "gib", "tib", "pib")) if i},
    **dict.fromkeys(("min", "mins", "minute", "minutes"), 60.0),
    **dict.fromkeys(("h", "hour", "hours"), 3600.0),
}
_SCALE = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "billion": 1e9, "b": 1e9, "trillion": 1e12, "t": 1e12}


def _doubts(question: str) -> bool:
    return bool(_DOUBT.search(question.lower()))


def _asked_number_holds(question: str, values: list[Quantity]) -> bool:
    """Whether a figure the question quotes ("almost 2 trillion seconds") is one the answer gives (within 2x):
    a doubted figure the valid records agree with is real."""
    asked = [
        float(m.group(1).replace(",", ""))
        * _SCALE.get((m.group(2) or "").lower(), 1.0)
        * _UNIT_SCALE.get((m.group(3) or "").lower(), 1.0)
        for m in re.finditer(
            r"(?<!\brank )(?<!\bost )(?<![\w.,])(\d[\d,]*(?:\.\d+)?)\s*(thousand|million|billion|trillion|[kmbt]\b)?\s*"
            r"([kmgtp]i?b\b|bytes?\b|s\b|secs?\b|seconds?\b|mins?\b|minutes?\b|h\b|hours?\b)?",
            question.lower(),
        )
    ]
    asked = [a for a in asked if a > 0]
    if not asked:
        return True  # nothing quoted to doubt: the plain answer stands
    return any(0.5 <= a / v.value <= 2.0 for a in asked for v in values if v.value > 0)


_NEEDS_RECORDS = frozenset(
    {
        "top_file",
        "file_list",
        "file_usage",
        "file_why",
        "file_ranks",
        "file_slowest",
        "file_share",
        "request_size",
        "rate",
        "io_share",
        "busiest_rank",
        "slow_rank",
        "rank_spread",
        "sequential",
        "alignment",
        "calls",
        "group",
    }
)
_ABOUT_A_FILE = frozenset(
    {"file_usage", "file_why", "file_ranks", "file_slowest", "file_share", "file_library", "request_size"}
)


def _not_in_log(report: Report, q: Query) -> Out:
    """A file the question names that the log holds no record of ("did it read uniref90.fasta?"): said plainly,
    with what the log does hold, where the report lists every file with I/O (else it cannot be sure)."""
    name = q.target or ""
    if q.metric not in _ABOUT_A_FILE or "." not in name.strip(".") or name_pattern(name):
        return None
    if any(is_named(f.path, name) for f in report.top_files) or report.files_with_io > len(report.top_files):
        return None
    if any(is_named(lay.path, name) for lay in report.lustre_layouts):
        return None
    held = [i for i in report.interfaces if i.records]
    what = ", ".join(f"{i.name} ({i.records:,} record(s))" for i in held[:4]) or "no file records"
    shown = ", ".join(f"`{f.path.rsplit('/', 1)[-1]}`" for f in report.top_files[:3])
    text = (
        f"{'No: t' if q.yes_no or YES_NO.match(q.raw.lower()) else 'T'}he log has no record of a file named "
        f"{quote(name)}: it holds {what}"
        + (f", for {report.files_with_io:,} file(s) with I/O ({shown})" if shown else "")
        + "; a file opened through an interface Darshan did not instrument leaves no record."
    )
    return text, [exact(report.files_with_io, "bare"), *(exact(i.records, "bare") for i in held[:4])], [], []


# Answers that count what the log holds: a log out of records undercounts them.
_LAYOUT = frozenset({"file_system", "stripe"})

_COUNTED = frozenset(
    {"files", "bytes", "calls", "file_list", "interface_files", "file_usage", "metadata", "group", "rank_files"}
)


def _rank_dispatch(report: Report, q: Query) -> Out:
    return (
        rank_bytes(report, q)
        if q.scope == "rank"
        else (iface_bytes(report, q) if q.scope == "interface" else job_bytes(report, q))
    )


def _largest_kept_shared(report: Report) -> FileUsage | None:
    """The largest shared file whose fastest and slowest rank Darshan kept with their bytes."""
    shared = [f for f in report.top_files if f.kept_slowest is not None and f.kept_slowest.bytes]
    return max(shared, key=lambda f: f.bytes_read + f.bytes_written, default=None)


def _kept_rank_times(report: Report, q: Query) -> Out:
    """Time per rank where every rank's I/O sits in one shared record: the fastest and slowest rank Darshan kept
    for the largest shared file bound it; the other ranks' own times are not in the log."""
    shared = [f for f in report.top_files if f.kept_slowest is not None]
    f = max(shared, key=lambda x: x.bytes_read + x.bytes_written, default=None)
    if f is None or f.kept_slowest is None:
        return None
    slow, fast = f.kept_slowest, f.kept_fastest
    doing = {"read": " reading", "write": " writing"}.get(q.direction, " in I/O")
    if fast is not None and fast.rank != slow.rank:
        kept = (
            f"its fastest rank, {fast.rank}, spent {_s(fast.seconds)} and its slowest, {slow.rank}, {_s(slow.seconds)}"
        )
        values = [exact(fast.seconds, "seconds"), exact(slow.seconds, "seconds")]
    else:
        kept = f"its fastest and slowest rank (rank {slow.rank} for both) spent {_s(slow.seconds)}"
        values = [exact(slow.seconds, "seconds")]
    n = report.job.nprocs
    if fast is not None and abs(fast.seconds - slow.seconds) <= 0.01 * max(slow.seconds, 1e-9):
        # Fastest and slowest alike: every rank took that long
        text = (
            f"Each of the {n:,} ranks spent about {_s(slow.seconds)}{doing} `{f.path}`: Darshan's one shared record "
            "for it kept the same time for its fastest and its slowest rank"
        )
        return text + ".", [exact(slow.seconds, "seconds")], [f.path], []
    text = (
        f"Each of the {n:,} ranks spent between the times Darshan kept for `{f.path}`{doing}: {kept}; its one shared "
        "record keeps no other rank's time"
    )
    return text + ".", values, [f.path], [slow.rank]


def _rank_spread_or_shared(report: Report, q: Query) -> Out:
    """Bytes or time per rank; where no rank has records of its own (every rank wrote one shared file), what
    Darshan kept of that file per rank: its fastest and slowest rank's bytes."""
    shared_dominant = report.rank_table.shared_bytes > sum(
        u.bytes_read + u.bytes_written for u in report.rank_table.ranks
    )
    if (
        q.data
        and YES_NO.match(q.raw.lower())
        and shared_dominant
        and re.search(r"\b(same|equal\w*|even\w*|similar|identical)\b", q.raw.lower())
    ):
        # "did every rank write the same amount to the snapshot?": the shared file's kept fastest and slowest rank
        # answer it, not the few bytes some rank moved on its own
        largest = _largest_kept_shared(report)
        if largest is not None:
            kept = file_per_rank(report, q.model_copy(update={"target": largest.path.rsplit("/", 1)[-1]}))
            if kept is not None and kept[0].startswith("Every one of "):
                return f"Yes: {lower_first(kept[0])}", kept[1], kept[2], kept[3]
            if kept is not None:
                return kept
    out = rank_spread(report, q)
    if out is not None:
        return out
    if not q.data:
        return _kept_rank_times(report, q)
    largest = _largest_kept_shared(report)
    if largest is None:
        return None
    return file_per_rank(report, q.model_copy(update={"target": largest.path.rsplit("/", 1)[-1]}))


_ANSWERS = {
    "alignment": alignment,
    "file_library": file_library,
    "file_share": file_share,
    "absent": absent,
    "datasets": datasets,
    "ranks_with_io": ranks_with_io,
    "sequential": sequential,
    "file_compare": file_compare,
    "group": answer_group,
    "job_info": job_info,
    "busiest_rank": busiest_rank,
    "files_per_rank": files_per_rank,
    "rank_spread": _rank_spread_or_shared,
    "calls": answer_calls,
    "file_slowest": file_slowest,
    "file_why": file_why,
    "file_ranks": file_ranks,
    "file_when": file_when,
    "traced": traced,
    "module": answer_module,
    "mpi_job": mpi_job,
    "file_balance": file_balance,
    "layer_gap": layer_gap,
    "file_per_rank": file_per_rank,
    "interface_files": interface_files,
    "not_recorded": not_recorded,
    "small_requests": small_requests,
    "any_slow_rank": any_slow_rank,
    "file_usage": file_usage,
    "reread": job_reread,
    "interfaces": interfaces,
    "completeness": completeness,
    "unnamed": unnamed_records,
    "layer_sizes": layer_sizes,
    "aggregators": aggregator_count,
    "fs_bytes": fs_bytes,
    "fastest_rank": fastest_rank,
    "fs_share": fs_share,
    "top_file": top_file,
    "file_list": file_list,
    "uses": uses,
    "top_interface": top_interface,
    "bytes": _rank_dispatch,
    "time": rank_time,
    "slow_rank": slow_rank,
    "file_system": file_system,
    "stripe": stripe,
    "software": software,
    "time_split": time_split,
    "slow_ost": slow_ost,
    "slow_ranks": slow_ranks,
    "chunk_size": chunk_size,
    "rank_files": rank_files,
    "rate": answer_rate,
    "metadata": metadata,
    "ranks": answer_ranks,
    "files": answer_files,
    "runtime": runtime,
    "io_share": io_share,
    "write_vs_read": write_vs_read,
    "osts": answer_osts,
    "collective": collective,
    "sharing": sharing,
    "request_size": request_size,
    "io_bound": io_bound,
    "io_problem": io_problem,
}


def damaged_lead(report: Report) -> Fact | None:
    """Where most of the log's records are corrupt, the sentence every answer about the job starts with: what
    follows comes from the few records that passed, and may not describe the job."""
    bad = kept = 0
    parts = []
    for f in report.findings:
        if f.code != "D04":
            continue
        ev = {m.name: m.value for m in f.evidence}
        b, k = int(ev.get("corrupt_records", 0) or 0), int(ev.get("records_kept", 0) or 0)
        bad, kept = bad + b, kept + k
        parts.append((f"{b:,} of {b + k:,} {ev.get('module', '')} records", b, b + k))
    if not parts or bad <= kept:
        return None
    said = ", ".join(p for p, _, _ in parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1][0]
    text = (
        f"Most of this log cannot be trusted: {said} are corrupt (impossible ids, ranks or counters) and were left "
        f"out (D04), so what follows comes from the {kept:,} record(s) that passed and may not describe the job."
    )
    values = [exact(v, "bare") for _, b, n in parts for v in (b, n)] + [exact(kept, "bare")]
    return Fact("query:damaged", "answer", text, values=tuple(values))
