"""The dispatcher: a query to its answer function, with the caveats a partial or corrupt log adds in the same
sentence."""

from __future__ import annotations

import re

from iodiag.analysis.models import (
    Report,
)
from iodiag.narration.fact_query.common import _lower_first, _Out
from iodiag.narration.fact_query.files import (
    _alignment,
    _calls,
    _chunk_size,
    _file_balance,
    _file_compare,
    _file_library,
    _file_list,
    _file_per_rank,
    _file_ranks,
    _file_share,
    _file_slowest,
    _file_usage,
    _file_why,
    _files,
    _group,
    _interface_files,
    _not_recorded,
    _request_size,
    _sequential,
    _top_file,
)
from iodiag.narration.fact_query.job import (
    _absent,
    _collective,
    _completeness,
    _datasets,
    _file_system,
    _iface_bytes,
    _interfaces,
    _io_bound,
    _io_problem,
    _io_share,
    _job_bytes,
    _job_info,
    _layer_gap,
    _metadata,
    _module,
    _mpi_job,
    _osts,
    _rate,
    _runtime,
    _sharing,
    _slow_ost,
    _small_requests,
    _stripe,
    _top_interface,
    _traced,
    _uses,
    _write_vs_read,
)
from iodiag.narration.fact_query.names import _named, name_pattern
from iodiag.narration.fact_query.query import Query
from iodiag.narration.fact_query.ranks import (
    _any_slow_rank,
    _busiest_rank,
    _files_per_rank,
    _rank_bytes,
    _rank_files,
    _rank_spread,
    _rank_time,
    _ranks,
    _ranks_with_io,
    _slow_rank,
    _slow_ranks,
)
from iodiag.narration.fact_query.vocabulary import _YES_NO
from iodiag.narration.facts import Fact
from iodiag.narration.quantities import Quantity, exact
from iodiag.narration.untrusted import quote

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
    partial = [m for m in report.job.modules if m.partial and m.records]
    if partial and query.metric in _COUNTED and not text.startswith("None: "):
        # A count from a log that ran out of records is a lower bound, and says so in the same sentence.
        m = partial[0]
        text = (
            f"The log is incomplete ({m.name} ran out of records after {m.records:,}), so this is a lower bound: "
            f"{_lower_first(text)}"
        )
        values = [*values, exact(m.records, "bare")]
    corrupt = next((f for f in report.findings if f.code == "D04"), None)
    if corrupt is not None and query.metric != "completeness":
        # A number read past corrupt records needs the caveat in the same sentence, not in another card.
        caveat = f"the log holds corrupt records that cannot be trusted ({corrupt.code}: left out); from the valid ones"
        said = re.match(r"^(Yes|No|Partly|None): ", text)
        # A yes/no answer keeps its yes or no first.
        text = (
            f"{said.group(0)}{caveat}, {_lower_first(text[said.end() :])}"
            if said
            else f"{caveat[0].upper()}{caveat[1:]}: {_lower_first(text)}"
        )
        if not said and _doubts(query.raw) and not _asked_number_holds(query.raw, values):
            # "rank 14 shows 2 trillion seconds, is that real?": the figure the user doubts is not one the valid
            # records give, so it came from the corrupt ones
            text = f"No: {_lower_first(text)}"
    return Fact(f"query:{query.metric}", "answer", text, values=tuple(values), files=tuple(files), ranks=tuple(ranks))


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


def _not_in_log(report: Report, q: Query) -> _Out:
    """A file the question names that the log holds no record of ("did it read uniref90.fasta?"): said plainly,
    with what the log does hold, where the report lists every file with I/O (else it cannot be sure)."""
    name = q.target or ""
    if q.metric not in _ABOUT_A_FILE or "." not in name.strip(".") or name_pattern(name):
        return None
    if any(_named(f.path, name) for f in report.top_files) or report.files_with_io > len(report.top_files):
        return None
    if any(_named(lay.path, name) for lay in report.lustre_layouts):
        return None
    held = [i for i in report.interfaces if i.records]
    what = ", ".join(f"{i.name} ({i.records:,} record(s))" for i in held[:4]) or "no file records"
    shown = ", ".join(f"`{f.path.rsplit('/', 1)[-1]}`" for f in report.top_files[:3])
    text = (
        f"{'No: t' if q.yes_no or _YES_NO.match(q.raw.lower()) else 'T'}he log has no record of a file named "
        f"{quote(name)}: it holds {what}"
        + (f", for {report.files_with_io:,} file(s) with I/O ({shown})" if shown else "")
        + "; a file opened through an interface Darshan did not instrument leaves no record."
    )
    return text, [exact(report.files_with_io, "bare"), *(exact(i.records, "bare") for i in held[:4])], [], []


# Answers that count what the log holds: a log out of records undercounts them.
_COUNTED = frozenset({"files", "bytes", "calls", "file_list", "interface_files", "file_usage"})


def _rank_dispatch(report: Report, q: Query) -> _Out:
    return (
        _rank_bytes(report, q)
        if q.scope == "rank"
        else (_iface_bytes(report, q) if q.scope == "interface" else _job_bytes(report, q))
    )


_ANSWERS = {
    "alignment": _alignment,
    "file_library": _file_library,
    "file_share": _file_share,
    "absent": _absent,
    "datasets": _datasets,
    "ranks_with_io": _ranks_with_io,
    "sequential": _sequential,
    "file_compare": _file_compare,
    "group": _group,
    "job_info": _job_info,
    "busiest_rank": _busiest_rank,
    "files_per_rank": _files_per_rank,
    "rank_spread": _rank_spread,
    "calls": _calls,
    "file_slowest": _file_slowest,
    "file_why": _file_why,
    "file_ranks": _file_ranks,
    "traced": _traced,
    "module": _module,
    "mpi_job": _mpi_job,
    "file_balance": _file_balance,
    "layer_gap": _layer_gap,
    "file_per_rank": _file_per_rank,
    "interface_files": _interface_files,
    "not_recorded": _not_recorded,
    "small_requests": _small_requests,
    "any_slow_rank": _any_slow_rank,
    "file_usage": _file_usage,
    "interfaces": _interfaces,
    "completeness": _completeness,
    "top_file": _top_file,
    "file_list": _file_list,
    "uses": _uses,
    "top_interface": _top_interface,
    "bytes": _rank_dispatch,
    "time": _rank_time,
    "slow_rank": _slow_rank,
    "file_system": _file_system,
    "stripe": _stripe,
    "slow_ost": _slow_ost,
    "slow_ranks": _slow_ranks,
    "chunk_size": _chunk_size,
    "rank_files": _rank_files,
    "rate": _rate,
    "metadata": _metadata,
    "ranks": _ranks,
    "files": _files,
    "runtime": _runtime,
    "io_share": _io_share,
    "write_vs_read": _write_vs_read,
    "osts": _osts,
    "collective": _collective,
    "sharing": _sharing,
    "request_size": _request_size,
    "io_bound": _io_bound,
    "io_problem": _io_problem,
}
