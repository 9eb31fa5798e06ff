"""Questions about plain facts of the log, answered from the report's numbers in the first sentence.

The intents are about findings; "did it use HDF5?", "how many bytes did rank 3 write?" or "what file system was
the output on?" are about the job's facts, and a finding near them is not their answer. This module turns such a
question into a typed :class:`Query` (a metric, a scope, an operation), runs it over the report's counters
(interfaces, files, per-rank records, Lustre layouts, OSTs) and words the answer as one sentence whose every
number is a :class:`Fact` value, so the verifier checks it like any other. A question it does not recognise
gives None and the finding-centred answer stands alone.

Per-rank questions say what Darshan did not keep: a file every rank opened is often reduced to one shared
record holding only totals and the fastest and slowest rank.
"""

from __future__ import annotations

import re
import statistics
from typing import Literal, TypeVar

from pydantic import BaseModel

from iodiag.analysis.models import (
    FileGroup,
    FileUsage,
    InterfaceTotals,
    OpCounts,
    RankSeconds,
    RankUsage,
    Report,
    Severity,
)
from iodiag.analysis.verdict import percent
from iodiag.core.units import human_bytes, human_seconds
from iodiag.narration.facts import Fact
from iodiag.narration.quantities import Quantity, exact
from iodiag.narration.untrusted import quote

Metric = Literal[
    "bytes",
    "time",
    "uses",
    "top_interface",
    "file_system",
    "runtime",
    "ranks",
    "files",
    "io_share",
    "rate",
    "metadata",
    "stripe",
    "slow_ost",
    "write_vs_read",
    "slow_rank",
    "osts",
    "collective",
    "sharing",
    "request_size",
    "io_bound",
    "top_file",
    "file_list",
    "interfaces",
    "completeness",
    "small_requests",
    "any_slow_rank",
    "file_usage",
    "file_why",
    "not_recorded",
    "io_problem",
    "file_ranks",
    "traced",
    "interface_files",
    "calls",
    "file_slowest",
    "rank_spread",
    "busiest_rank",
    "job_info",
    "files_per_rank",
    "group",
    "file_compare",
    "sequential",
    "ranks_with_io",
    "absent",
    "datasets",
    "file_share",
    "file_library",
    "alignment",
    "slow_ranks",
    "chunk_size",
    "rank_files",
    "module",
    "mpi_job",
    "file_balance",
    "layer_gap",
    "file_per_rank",
]
Scope = Literal["job", "interface", "rank", "file"]
_T = TypeVar("_T")
Direction = Literal["read", "write", "both"]


class Query(BaseModel):
    """One fact to look up: ``metric`` of ``scope`` (``target`` names the rank, interface or file)."""

    metric: Metric
    scope: Scope = "job"
    target: str | None = None
    direction: Direction = "both"
    yes_no: bool = False
    data: bool = False  # "did it write any HDF5 dataset data?": asks about data moved, not only files opened
    missing: bool = False  # "is anything missing?" (yes when it is) rather than "is it complete?" (no when not)
    healthy: bool = False  # "is the I/O healthy?" (yes when nothing is at fault) rather than "is there a problem?"
    bound: bool = False  # "is it I/O-bound?": yes only when I/O takes a large part of the run, not any part
    share: float | None = None  # "is more than a third of the run I/O?": the share the answer is measured against
    split: bool = False  # "is it all reads?", "does it read much?": yes or no from the read/write split of bytes
    file: str | None = None  # a file the question names beside a rank ("rank 0's bytes on restart.h5")
    raw: str = ""  # the question as asked, for answers that compare two files it names


# --- questions -> queries -----------------------------------------------------------------------------------

_INTERFACES = {
    "hdf5": "HDF5",
    "h5": "HDF5",
    "pnetcdf": "PnetCDF",
    "netcdf": "PnetCDF",
    "mpi-io": "MPI-IO",
    "mpiio": "MPI-IO",
    "mpi io": "MPI-IO",
    "stdio": "STDIO",
    "fwrite": "STDIO",
    "fread": "STDIO",
    "posix": "POSIX",
    "dfs": "DFS",
    "daos": "DAOS",
}
INTERFACES = _INTERFACES  # the names a question (or a model's tool call) may give an interface by
# Not inside a program's name ("this mpi-io-test run").
_IFACE = re.compile(
    r"(?<![.\-/])\b(" + "|".join(re.escape(k) for k in _INTERFACES) + r")\b(?!\.\w|-(?!level\b|layer\b)\w)",
    re.IGNORECASE,
)  # nor part of a file's name ("eos_table.h5", "ior-posix.out.0001")
# "rank 3", "rank #3", and the first of several: "ranks 140, 396 and 652"
_RANK = re.compile(r"\branks?\s*#?\s*(\d+)\b", re.IGNORECASE)
_WRITE = re.compile(r"\b(f?writ\w*|wrote|output|dump|checkpoint|save\w*|fprintf|fputs)\b", re.IGNORECASE)
_READ = re.compile(r"\b(f?read\w*|input|load\w*|fscanf|fgets)\b", re.IGNORECASE)
# A file named in the question: a word with an extension of letters (restart.0040.bin, traj.xyz, .npz files).
_NAMED = re.compile(
    r"(?<![\w*.])([A-Za-z][\w-]*(?:\.[\w-]+)*\.(?:N|X{2,}|#+)(?![\w.])|(?:[\w-]+\.)*[\w-]*\*[\w*-]*(?:\.[\w*-]+)*\.[A-Za-z][A-Za-z0-9]{1,5}|[\w-]*(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{1,5}|[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)*\.\d{2,8}|(?<=/)[A-Za-z][\w-]*\.\d{1,8})(?!\w|\.\w)"
)  # also a numbered name: dump.0253, and after a folder any number ("monitor/m.0"; "input/mesh.bin" names mesh.bin)
# Judgements of whether I/O matters, in the words people use for them.
_IO_JUDGED = re.compile(
    r"\bi/?o\b.*\b(eating|eats|hogging|a lot of the run\w*|much of the run\w*)\b|"
    r"\bi/?o\b.*\b(significant|big deal|a (big |real )?problem|an issue|worth|matters?|concern\w*|bottleneck|"
    r"more than half|most of (the )?(run|time)|majority|big chunk|large chunk|big part|large part|big share)\b"
    r"|\b(worry|worth \w+ing)\b.*\bi/?o\b"
    r"|\b(a lot of|lots of|much|much of|most of|a big chunk of|a large part of) (the |its |my )?(time|run ?time|run)\b"
    r".*(?<![-\w])i/?o\b"
)
# What a Darshan log never holds: said so plainly instead of answered from something near it.
_UNRECORDED = re.compile(
    r"\b(hostnames?|host names?|hosts?\b|node ?names?|(?:which|what) (?:compute )?nodes?|compute nodes?|how many nodes|"
    r"number of nodes|memory(?![- ]?align)|ram|cpu|gpu|"
    r"network|energy|power draw|environment variables?|offsets? of each|page ?cache|cache hits?|exit (?:status|code)|"
    r"crash\w*|finish\w* (?:cleanly|successfully|ok)|mpi communication|communication time|killed|"
    r"exit\w* (?:normally|cleanly|ok|successfully)|terminat\w*|queue\w*|peak memory|"
    r"\d+(?:st|nd|rd|th) (?:write|read|request|call|open))\b"
)
# "Is this log ok?": the record itself, answered from the data-quality findings and partial flags.
_JUDGED_WORD = (
    r"(ok|okay|fine|off|sane|sound|broken|healthy|good|wrong|valid|consistent|inconsistent|corrupt\w*|trust\w*"
    r"|reliable)"
)
_LOG_HEALTH = re.compile(
    rf"\b(this|the|my) (darshan )?log(file)?\b.*\b{_JUDGED_WORD}\b"
    rf"|\b(something|anything) {_JUDGED_WORD}\b.*\b(this|the|my) (darshan )?log(file)?\b"
    rf"|\b(these|the|its|this log's) (counters|numbers|records|values)\b.*\b{_JUDGED_WORD}\b"
    rf"|\b{_JUDGED_WORD}\b.*\b(the |these |its )?(per-rank |rank )?"
    r"(timings|times|totals|byte totals|counters|numbers)\b"
)
_FIRST_JUDGED = re.compile(rf"\b{_JUDGED_WORD}\b")
_CAPTURED = re.compile(
    r"\b(all|every|everything)\b.*\b(captur\w*|recorded|logged|instrumented)\b"
    r"|\b(captur\w*|record\w*|log\w*|instrument\w*|catch\w*|caught|track\w*|see|saw)\b.*\b(all|every|everything)\b"
    r".*\b(files?|records?|i/?o)\b"
)
_FINE = r"(healthy|ok|okay|fine|good|sane|reasonable)"  # words that judge I/O sound
# "Is there anything wrong with the I/O?", "is the I/O healthy?": a yes/no judgement of the job's I/O.
_IO_PROBLEM = re.compile(
    rf"\b(anything|something|is there \w+) (wrong|off|amiss|bad|to fix|to improve)\b"
    rf"|\b(an?|any) (i/?o )?(problems?|issues?)\b|\bi/?o (problems?|issues?)\b"
    rf"|\b(is|are|was|looks?) (the |my |this |its )?(job'?s? )?i/?o {_FINE}\b"
    rf"|\b(is|was) (the |this |my )?(job|run) healthy\b|^\s*(is|was) (the )?i/?o {_FINE}\b"
    rf"|^\s*(healthy|ok|okay|fine)\s*\??$"
)
# A named topic ("is metadata a problem?") is asked about that topic, not the job's I/O as a whole.
_TOPIC = re.compile(
    r"\b(met(a|)data|osts?|stripe\w*|rank \d+|small|random|collective\w*|imbalance|file ?system|stdio|hdf5|"
    r"mpi-?io|posix|reads?|writes?)\b"
)
_HEALTHY = re.compile(rf"\b{_FINE}\b")
_READ_OR_WRITE_TIME = re.compile(r"\b(how long|time|seconds|spend|spent)\b")
_YES_NO = re.compile(
    r"^\s*(?:(?:hey|hi|hello|so|ok|okay|um|uh|quick question|question)[,!:.]?\s+)*"
    r"(did|does|do|is|was|were|are|has|have|any)\b",
    re.IGNORECASE,
)  # "hey, is there a slow OST in this run?" asks yes or no too


_SHARE_WORDS = {
    "half": 0.5,
    "a third": 1 / 3,
    "one third": 1 / 3,
    "a quarter": 0.25,
    "a fourth": 0.25,
    "a tenth": 0.1,
    "two thirds": 2 / 3,
    "three quarters": 0.75,
}


def _asked_share(q: str) -> float | None:
    """The share a question measures against: "more than a third", "over 50%", "at least half"."""
    m = re.search(
        r"\b(more than|over|above|at least|less than|under|below|exceed\w*)\s+(the\s+)?"
        r"(half|a third|one third|a quarter|a fourth|a tenth|two thirds|three quarters|\d+(?:\.\d+)?\s*(?:%|percent))",
        q,
    )
    if not m:
        return None
    word = m.group(3)
    if word in _SHARE_WORDS:
        return _SHARE_WORDS[word]
    return float(re.match(r"\d+(?:\.\d+)?", word).group(0)) / 100  # type: ignore[union-attr]


def _iface_query(q: str) -> Query:
    """The bytes of the interface a question names ("how much did it write through POSIX?")."""
    m = _IFACE.search(q)
    target = _INTERFACES[m.group(1).lower()] if m else None
    return Query(metric="bytes", scope="interface", target=target, direction=_direction(q))


def _by_direction(direction: Direction, read: _T, write: _T, both: _T) -> _T:
    """The value for the direction a question asks about: one selector instead of a nested conditional each."""
    return read if direction == "read" else write if direction == "write" else both


def _direction(q: str) -> Direction:
    w, r = bool(_WRITE.search(q)), bool(_READ.search(q))
    return "write" if w and not r else "read" if r and not w else "both"


# Words too common in questions to name a file by ("why is writing the output slow?").
_NOT_A_NAME = frozenset(
    [
        "slow",
        "slower",
        "slowly",
        "faster",
        "fast",
        "speed",
        "make",
        "much",
        "many",
        "long",
        "takes",
        "taking",
        "took",
        "time",
        "times",
        "write",
        "writes",
        "writing",
        "written",
        "wrote",
        "read",
        "reads",
        "reading",
        "file",
        "files",
        "data",
        "output",
        "outputs",
        "input",
        "inputs",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "when",
        "where",
        "does",
        "doing",
        "with",
        "from",
        "into",
        "only",
        "each",
        "every",
        "rank",
        "ranks",
        "process",
        "processes",
        "about",
        "there",
        "their",
        "here",
        "really",
        "very",
        "still",
        "phase",
        "step",
        "steps",
        "part",
        "whole",
        "same",
        "other",
        "than",
        "even",
        "job",
        "jobs",
        "run",
        "runs",
        "running",
        "code",
        "program",
        "should",
        "could",
        "would",
        "have",
        "lustre",
        "storage",
        "disk",
        "system",
        "share",
        "fraction",
        "percent",
        "percentage",
        "proportion",
        "dominated",
        "spent",
        "spend",
    ]
)
# Calls Darshan counts, in the words people ask for them ("how many fsync calls?", "number of stat calls").
_CALL_WORDS: tuple[tuple[str, str], ...] = (
    ("rw_switches", r"(read[/ -]?write|r/?w) switch\w*|switch\w* between read\w* and writ\w*|switch\w*"),
    ("fdatasyncs", r"fdatasync\w*|fdsync\w*"),
    ("syncs", r"syncs?\b|fsync\w*|sync calls"),
    ("stats", r"f?stats?\b|stat (calls?|ops|operations)"),
    ("seeks", r"l?seeks?"),
    ("flushes", r"f?flush\w*"),
    ("mmaps", r"mmaps?"),
    ("opens", r"opens\b|open (calls?|ops|operations)|times \w+ (was |it )?opened"),
    ("reads", r"f?reads\b|f?read (calls?|ops|operations|requests)"),
    ("writes", r"f?writes\b|f?write (calls?|ops|operations|requests)|fprintf (calls?)"),
)
_CALL_NOUN = {
    "rw_switches": "read/write switches",
    "syncs": "fsync calls",
    "fdatasyncs": "fdatasync calls",
    "stats": "stat calls",
    "seeks": "seeks",
    "flushes": "flushes",
    "mmaps": "mmap calls",
    "opens": "opens",
    "reads": "read calls",
    "writes": "write calls",
}


def _job_info_kind(q: str) -> str | None:
    """Questions about the log's own header: the program, the Darshan version, every module it holds."""
    if re.search(
        r"\b(what|which) (program|executable|exe|binary|application|code|app)\b|\bprogram (name|produced)\b", q
    ):
        return "exe"
    if re.search(r"\b(which|what) (darshan )?modules\b.*\b(in|does|are|log)\b", q):
        return "modules"
    if re.search(r"\bdarshan (version|release)\b|\bversion of darshan\b|\bwhich darshan\b", q):
        return "version"
    return None


def _call_kind(q: str) -> str | None:
    """Which counted call a "how many ..." question asks for, or None (bytes, files, small requests: not calls)."""
    if not re.search(r"\b(how many|number of|count of|no\.? of|total|count)\b", q):
        return None
    if re.search(r"\bwhy\b|\btakes? (forever|ages|so long)\b", q) and not re.search(r"\bhow many\b", q):
        return None  # "writes like 17 MB total but I/O takes forever, why?": a why question, not a count
    if re.search(r"\bhow many bytes\b|\bhow much\b|\bdatasets?\b", q):
        return None  # "how many bytes went through pnetcdf writes?": bytes; datasets have their own answer
    if re.search(
        r"\b(small|tiny|large|(?<!how )big|unaligned|misaligned|random|sequential|collective|independent)\b", q
    ):
        return None  # a kind of request, not every call
    if re.search(r"\b(bytes?|gb|gib|mb|mib|data|files?|ranks?|processes|osts?|time|seconds)\b", q) and not (
        re.search(r"\b(calls?|ops|operations|switch\w*|fsync\w*|seeks?|stats?|reads|writes|opens)\b", q)
    ):
        return None
    for kind, words in _CALL_WORDS:
        if re.search(rf"\b({words})", q):
            return kind
    return None


_FIX_ASK = (
    r"\b(fix|cheaper|improve|optimi[sz]e|tune|quicker|suggest\w*|recommend\w*|less time)\b"
    r"|\bwhat (should|do|can|could|would) (i|we|you) (do|change|try)\b|\bwhat to do\b"
)
_MOST_OF = r"\b(bulk|most|majority|mostly|dominat\w*|more than half|largest part|biggest part|main part)\b"
_WHY_SLOW = re.compile(
    r"\b(why|slow\w*|crawl\w*|speed\w* up|faster|takes? (forever|so long|long)|(spend|take|use)s? less time)\b"
)


def parse_about(question: str, report: Report) -> Query | None:
    return _with_raw(_parse_about(question, report), question)


def _parse_about(question: str, report: Report) -> Query | None:
    """``parse``, and a why-question that names a file loosely ("why is the restart write so slow?", "how do I
    make the particle dump faster?"): a word of the question that is part of the name of a file the report holds
    asks about the files it names."""
    found = parse(question)
    q = " ".join(question.lower().split())
    exe = report.job.exe.split()
    if (
        found is not None
        and found.target
        and found.metric in ("file_usage", "bytes", "file_why")
        and exe
        and (
            exe[0].rsplit("/", 1)[-1] == found.target
            or (
                found.target.endswith((".py", ".sh", ".pl", ".jl", ".R"))
                and any(w.rsplit("/", 1)[-1] == found.target for w in exe)
            )
        )
        and not any(_named(f.path, found.target) for f in report.top_files)
    ):
        # "how much data did run_model.py read?" names the program (its command line), not a file it used
        found = Query(metric="bytes", direction=found.direction, raw=question)
    share = re.search(
        r"\b(fraction|share|percent\w*|proportion|how much of the (run|job|time|run ?time|wall ?time))\b|\bdominat\w*"
        r"|\b(costing|cost(s|ing)? (us|me)|a lot of (the |our |my )?(run ?time|time|wall ?time))\b",
        q,
    )
    if (
        share
        and (
            found is None
            or found.metric in ("io_share", "io_bound", "top_file", "file_list", "bytes", "file_usage", "runtime")
        )
        and not _NAMED.search(question)
        and not _RANK.search(q)
    ):
        # "what share of the run was the checkpoint read?", "is this run dominated by reading the restart?"
        word = _loose_name(q, report)
        if word is not None or group_named(report, question) is not None:
            return Query(
                metric="file_share",
                target=word,
                direction=_direction(q),
                # "we create a ton of tiny shard files. is that costing us a lot?": the question is the last sentence
                yes_no=bool(_YES_NO.match(q) or re.search(r"[.;!?]\s*(did|does|do|is|was|were|are|has|have)\b", q)),
                raw=question,
            )
    if (found is None or found.metric in ("top_file", "file_list")) and re.search(
        r"\b(how many|how much|did|were|was|any)\b", q
    ):
        group = group_named(report, question)
        if (
            group is not None
            and not _WHY_SLOW.search(q)
            and not re.search(r"\b(interfaces?|layers?|librar\w+|apis?|modules?|file ?systems?|stripe\w*|osts?)\b", q)
        ):
            # "how many .jar files did it read data from?", "did it read any data out of the shard files?"
            return Query(metric="group", direction=_direction(q), yes_no=bool(_YES_NO.match(q)), raw=question)
    if (
        found is None
        and re.search(r"\b(stripe\w*|striping|lustre)\b", q)
        and not report.lustre_layouts
        and (report.file_system or "").lower() != "lustre"
    ):
        return Query(
            metric="stripe", raw=question, yes_no=bool(_YES_NO.match(q))
        )  # "any Lustre stripe settings I should look at?" on GPFS
    if (
        found is not None
        and found.metric in ("file_usage", "bytes", "top_file", "file_list", "files")
        and (
            (
                ((found.target and name_pattern(found.target)) or "*" in question)
                and _glob_group(report, question) is not None
            )
            # "how big is the checkpoint (the .pt files)?", "how many .h5 files were created?": an extension
            or (re.search(r"(?<![\w.])\.[a-z][a-z0-9]{0,7} files\b", q) and group_named(report, question) is not None)
        )
    ):
        # "total bytes read from the atoms.*.txt dumps": every file the pattern names, not the first of them
        return Query(metric="group", direction=found.direction, raw=question)
    if found is not None and found.metric != "runtime":
        return found
    if found is not None:
        # "how long did the checkpoint write take?": the run time, unless a word names one of its files
        word = _loose_name(q, report, plural=False)
        if word is None or re.search(r"\b(job|run|whole|total|overall|wall)\b", q):
            return found
        return Query(metric="file_usage", target=word, direction=_direction(q), raw=question)
    if not _WHY_SLOW.search(q) or re.search(r"\bhow (long|much|many)\b", q):
        return None
    word = _loose_name(q, report, plural=False)
    if word is None and group_named(report, question) is not None:
        # "writing the per-rank csv files eats a big chunk of the run, why?": the group the words name
        return Query(metric="file_why", direction=_direction(q), raw=question)
    return Query(metric="file_why", target=word, direction=_direction(q), raw=question) if word else None


def _loose_name(q: str, report: Report, plural: bool = True) -> str | None:
    """A word of the question that is part of the name of a file the report holds ("restart", "particle")."""
    bases = {p.rsplit("/", 1)[-1].lower() for p in _report_paths(report)}
    for word in re.findall(r"[a-z][a-z0-9_]{3,}", q):
        if word in _NOT_A_NAME:
            continue
        # "the restarts" names restart.0463.0.bin; without ``plural``, a plural names many files, not one
        for w in (word, word[:-1]) if plural and word.endswith("s") and len(word) > 4 else (word,):
            if any(w in b for b in bases):
                return str(w)
    return None


def _report_paths(report: Report) -> list[str]:
    paths = [f.path for f in report.top_files]
    paths += [fe.path for f in report.findings for fe in f.files]
    return list(dict.fromkeys(paths))


def _with_raw(q: Query | None, question: str) -> Query | None:
    # Every answer can read the question's own words (a quoted figure it doubts, two files it compares)
    return q.model_copy(update={"raw": question}) if q is not None and not q.raw else q


def parse(question: str) -> Query | None:
    return _with_raw(_parse(question), question)


def _parse(question: str) -> Query | None:
    """The query a question asks, or None when it is not a plain fact question these rules know."""
    q = " ".join(question.lower().split())
    if re.match(r"^(what|how) (is|are|does|do)\b.*\b(mean|work)|^(what is|what are|explain|define)\b", q) and not (
        re.search(r"\b(my|this|the job|it|rank \d+)\b", q) or _NAMED.search(question)
    ):
        return None  # a concept ("what is collective buffering?"), not a fact of this log
    yes_no = bool(_YES_NO.match(q))
    if re.search(
        r"\bwhat'?s?( is)? (eating|taking|using|consuming|hogging)\b|\bwhere (does|did) (the|my|all) (the )?time go", q
    ):
        return None  # "what's eating the time?": a why question, whatever fact follows it
    if _LOG_HEALTH.search(q):
        # "is this log ok or is something off with it?": a question about the record, not the job; the first
        # judgement word sets which answer is "yes"
        # The question is the last clause that judges ("something looks off, are the records consistent?"):
        # within it, the first judgement word ("is this log ok or is something off with it?")
        clauses = [c for c in re.split(r"[,.;?!]", q) if _FIRST_JUDGED.search(c)]
        first = _FIRST_JUDGED.search(clauses[-1] if clauses else q)
        return Query(
            metric="completeness",
            yes_no=True,
            missing=bool(first and re.match(r"off|broken|wrong|inconsistent|corrupt", first.group(1))),
        )
    if re.search(r"\b(dxt|trace)\b", q) and re.search(r"\b(every|all|complete|whole)\b", q) and yes_no:
        return Query(metric="completeness", yes_no=True)  # "does the DXT trace contain every read?"
    if _CAPTURED.search(q):
        # "did darshan capture every file?", "were all file records captured?": yes when nothing is missing
        return Query(metric="completeness", yes_no=True)
    share = _asked_share(q)
    if share is not None and re.search(r"(?<![-\w])i/?o\b", q) and re.search(r"\b(run ?time|run|time|wall)\b", q):
        # "is more than a third of the runtime spent in I/O?": measured against the share asked
        return Query(metric="io_bound", yes_no=True, share=share, raw=question)
    if _IO_JUDGED.search(q) and not re.search(r"\b(why|how (do|can|to)|fix)\b", q):
        # "is I/O a big deal here?", "should I worry about I/O?": a judgement of the job, answered yes or no
        return Query(metric="io_bound", yes_no=True)
    if (
        _IO_PROBLEM.search(q)
        and not re.search(r"\b(why|how (do|can|to)|what (should|do|can))\b", q)
        and not _TOPIC.search(q)
    ):
        return Query(metric="io_problem", yes_no=True, healthy=bool(_HEALTHY.search(q)))
    if (
        re.search(r"\bosts?\b", q)
        and re.search(r"\b(slow\w*|sluggish|bad|faulty|degraded|underperform\w*|lagg\w*|sick|broken|dragging)\b", q)
        and re.search(r"\b(what (should|do|can) (i|we)|how (do|can|should) (i|we))\b", q)
    ):
        # "one OST seems slow - what should I do?": the slow OST, with what to do about it
        return Query(metric="slow_ost", raw=question)
    advice_on = _NAMED.search(question)
    if advice_on and re.search(_FIX_ASK, q) and not re.search(r"\b(stripe\w*|striping|lfs)\b", q):
        # "rank 0 dumps spectra.dat through stdio, what should we do?": the file's own cause and its fix
        return Query(metric="file_why", target=advice_on.group(1), direction=_direction(q), raw=question)
    if re.search(r"\b(should|recommend\w*|suggest\w*|best)\b", q):
        return None  # advice: the finding-centred answer leads with what to change
    module = re.search(r"\b(apmpi|apxc|heatmap|lustre module|lustre records?|mdhim|bg/?q)\b", q)
    if module and (yes_no or re.search(r"\b(carry|contain|include|have|hold)\b", q)):
        # "does this log carry APMPI data?": the modules the log holds, not an interface the job used
        name = module.group(1).split()[0].upper().replace("/", "")
        return Query(metric="module", target="LUSTRE" if name == "LUSTRE" else name, yes_no=True, raw=question)
    if (
        yes_no
        and re.search(
            r"\b(write|wrote|written)\b.*\b(anything|any (data|bytes))\b|\bany (data|bytes)\b.*\bwritten\b", q
        )
        and not _NAMED.search(question)
        and not _RANK.search(q)  # "did rank 5 write anything?" is the rank's
    ):
        return Query(metric="bytes", direction="write", yes_no=True, raw=question)  # "did it write anything?"
    mix = re.search(
        r"\b(read|write|wrote|writ\w+)s? (much|a lot of|lots of|a lot)\b"
        r"|\b(all|only|mostly|mainly|primarily|just) (reads?|writes?|reading|writing)\b"
        r"|\b(read|write)[- ](heavy|intensive|dominated)\b",
        q,
    )
    if yes_no and mix and not _NAMED.search(question) and not _RANK.search(q):
        # "does this job read much input data?", "is the heavy I/O all reads?": the read/write split, yes or no
        return Query(metric="bytes", direction=_direction(mix.group(0)), yes_no=True, split=True, raw=question)
    if (
        len({m.group(1).lower() for m in _IFACE.finditer(q)}) >= 2
        and re.search(r"\b(share|fraction|percent\w*|proportion|split|ratio|how much of)\b", q)
        and re.search(r"\b(bytes|data|i/?o|traffic|volume)\b", q)
        and not re.search(r"\btime\b", q)
    ):
        # "what share of the bytes went through stdio vs posix?": each interface's bytes and share
        return Query(metric="top_interface", raw=question)
    if (
        re.search(r"\bmpi[- ]?io\b", q)
        and re.search(r"\bposix\b", q)
        and re.search(
            r"\b(rest|gap|difference|differ\w*|where did|where does|where is|spent in|spend in|overhead|extra|missing|"
            r"beneath|underneath|under it|most of|bulk|only took|only takes|why)\b",
            q,
        )
    ):
        # "MPI-IO says 86 s for dump.dat but POSIX only 9 s: where did the rest go?": time above the file system
        named = _NAMED.search(question)
        return Query(metric="layer_gap", target=named.group(1) if named else None, yes_no=yes_no, raw=question)
    if re.search(r"\bmet(a|)data\b|\bmeta[- ]data\b", q) and re.search(_MOST_OF, q):
        # "is metadata the bulk of the POSIX I/O time?": judged on its share, before the module's name takes it
        return Query(metric="metadata", yes_no=yes_no, raw=question)
    if re.search(
        r"^(is|was) (this|it|the job) (an? )?((mpi|parallel|serial|single[- ]process|multi[- ]?(process|rank|node))"
        r"[ ,]*)+( \w+)? ?(job|run|program|code|application|app)?\W*$",
        q,
    ):
        return Query(metric="mpi_job", yes_no=True, raw=question)  # "is this an mpi job?"
    info = _job_info_kind(q)
    if info:
        return Query(metric="job_info", target=info)
    unrecorded = _UNRECORDED.search(q)
    if unrecorded:
        return Query(metric="not_recorded", target=unrecorded.group(1), raw=question)
    if (
        re.search(r"\b(dxt|trac(e|es|ed|ing))\b", q)
        and (yes_no or re.search(r"\b(was|is) (there|it)\b", q))
        and not re.search(r"\b(complete|partial|full|truncat\w*|missing|lost|dropp\w*|cut|every|all)\b", q)
    ):
        return Query(metric="traced", yes_no=True)  # "is DXT tracing in this log?"
    iface = _IFACE.search(q)
    if iface and re.search(r"\bhow many files\b", q):
        # "how many files did posix touch?"
        return Query(
            metric="interface_files", scope="interface", target=_INTERFACES[iface.group(1).lower()], raw=question
        )
    if (
        re.search(r"\b(why|how come|where)\b", q)
        and re.search(r"\b(no|not|missing|absent|without)\b|n't\b", q)
        and re.search(r"\b(see|seen|shows?|showing|appears?|listed|numbers|records?|recorded|in (the|this) log)\b", q)
        and (iface or re.search(r"\b(my|the|any)\b.*\bfiles\b", q))
    ):
        # "why are there no POSIX numbers?", "why don't I see my data files in this log?": what the log holds
        return Query(metric="absent", target=_INTERFACES[iface.group(1).lower()] if iface else None, raw=question)
    if re.search(r"\bnames?\b.*\b(datasets?|variables?|vars?)\b|\b(datasets?|variables?) (names?|called)\b", q):
        # "what's the name of the HDF5 dataset?", "name of the netcdf variable it wrote?"
        return Query(metric="datasets", target="names", raw=question)
    if (
        re.search(r"\bdatasets?\b", q)
        and not re.search(r"\b(why|how (do|can|to|should))\b", q)
        and not re.search(r"\bhow many bytes\b|\bhow much\b|\b(bytes|volume|gib|mib|gb|mb)\b", q)
    ):
        if re.search(r"\bhow many\b.*\bdatasets?\b(?! (reads?|writes?|calls?|op))", q) and not re.search(
            r"\b(reads?|writes?|calls?|operations?)\b", q
        ):
            return Query(metric="datasets", target="count")  # "how many HDF5 datasets did it touch?"
        if re.search(r"\b(how many|number of)\b", q):
            return Query(metric="datasets", target="calls", direction=_direction(q))
        if yes_no:
            return Query(metric="uses", scope="interface", target="HDF5", yes_no=True, data=True)
    named_file = _NAMED.search(question)
    both = list(dict.fromkeys(m.group(1) for m in _NAMED.finditer(question)))
    if (
        len(both) == 2
        and not re.search(r"\bwhy\b", q)
        and re.search(
            r"\b(longer|slower|faster|quicker|more time|less time|costs? more|more expensive|which (takes|is|costs))\b",
            q,
        )
    ):
        # "which takes longer: reading uniref90.fasta or writing dump.0244?"
        return Query(metric="file_compare", target=both[0], file=both[1], raw=question)
    if named_file and (
        re.search(r"\b(each|every|per|all|both)( the)? (ranks?|process\w*|procs?)\b", q)
        and re.search(
            r"\b(same|equal\w*|how much|how many bytes|bytes|amount|data|read|write|wrote|written|open\w*)\b", q
        )
        and not re.search(r"\b(time|seconds|long|slow\w*|fast\w*|why)\b", q)
    ):
        # "did every rank write the same amount to fields_0170.dat?", "how much did each rank read from grid.nc?"
        return Query(
            metric="file_per_rank", target=named_file.group(1), direction=_direction(q), yes_no=yes_no, raw=question
        )
    if named_file and re.search(r"\bhow many (ranks|processes)\b", q):
        # "how many ranks wrote dump.0106 at the POSIX level?"
        return Query(metric="file_ranks", target=named_file.group(1), direction=_direction(q), raw=question)
    if (
        named_file
        and re.search(
            r"\b(who|which (rank|process)\w*|what (rank|process)\w*)\b.*\b(read|reads|reading|wrote|writes?|writing|"
            r"open\w*|us\w+|access\w*|touch\w*)\b",
            q,
        )
        and not re.search(r"\b(slow\w*|fast\w*|longest|most time|straggl\w*|lagg\w*)\b", q)
    ):
        # "who reads restart.h5?", "which rank wrote dump.atom?"
        return Query(metric="file_ranks", target=named_file.group(1), direction=_direction(q), raw=question)
    if (
        named_file
        and yes_no
        and re.search(
            r"\bboth (read|writ\w*) and (read|writ\w*)\b|\bread and writ\w*\b|\bread (it )?back\b|\bre-?read\b"
            r"|\bread again\b",
            q,
        )
    ):
        # "does this job both read and write state.bin?"
        return Query(metric="file_usage", target=named_file.group(1), yes_no=True, raw=question)
    if (
        named_file
        and re.match(r"^\s*(did|does|do|was|were|has|have)\b", q)
        and re.search(r"\b(f?read|f?write|wrote|written|open\w*|touch\w*|access\w*|load\w*|us(e|ed))\b", q)
        and not re.search(r"\b(why|how|which|what|who|coll?ec?tiv\w*|aligned|sequential\w*|random\w*)\b", q)
        and not _IFACE.search(q)  # "was ocean.nc written with pnetcdf?" asks which library
    ):
        # "did hmmsearch actually read uniref90.fasta?": yes or no from the file's own counters
        return Query(
            metric="file_usage", target=named_file.group(1), direction=_direction(q), yes_no=True, raw=question
        )
    if re.search(r"\bchunk ?sizes?\b|\bchunk(ed|ing)?\b", q) and re.search(r"\b(dfs|daos)\b", q):
        # "what DFS chunk size do the files use?", "are the DAOS writes a multiple of the chunk size?"
        return Query(
            metric="chunk_size", target=named_file.group(1) if named_file else None, yes_no=yes_no, raw=question
        )
    if re.search(r"\b(aligned|misaligned|unaligned|alignment|align)\b", q) and not re.search(
        r"\b(why|fix|how (do|can|to|should))\b", q
    ):
        # "are the flux.dat writes aligned to the stripes?", "how many accesses to state.bin were not aligned?"
        return Query(
            metric="alignment",
            target=named_file.group(1) if named_file else None,
            yes_no=yes_no,
            missing=bool(re.search(r"\b(misaligned|unaligned|not aligned)\b", q)),
            raw=question,
        )
    if named_file and yes_no and re.search(r"\b(bottleneck|slowing|costing|costly|expensive|significant)\b", q):
        # "is writing thermo.dat a bottleneck?": its share of the run, yes from a tenth of it
        return Query(metric="file_share", target=named_file.group(1).lower(), yes_no=True, raw=question)
    if named_file and re.search(r"\b(which|what) (i/?o )?(librar\w*|interfaces?|layers?|apis?|modules?)\b", q):
        # "which I/O library wrote snapshot_293.nc?"
        return Query(metric="file_library", target=named_file.group(1), raw=question)
    if named_file and re.search(r"\b(one|a single|single|only one|just one) (rank|process)\b", q):
        # "is one rank doing all the writing of snapshot_231.nc?"
        return Query(
            metric="file_ranks", target=named_file.group(1), direction=_direction(q), yes_no=True, raw=question
        )
    if named_file and re.search(
        r"\b(which|what) (rank|process)\w*\b.*\b(slow\w*|longest|most time|straggl\w*|lagg\w*)\b", q
    ):
        # "which rank was slowest writing vpicio.hdf5?": the slowest rank Darshan kept for the file
        return Query(metric="file_slowest", target=named_file.group(1), direction=_direction(q), raw=question)
    rank = _RANK.search(q)
    if (
        re.search(r"\b(sequential\w*|contiguous\w*|in order|consecutive\w*|random\w*)\b", q)
        and (yes_no or re.search(r"\b(how|were|are|was)\b", q))
        and not re.search(r"\b(why|fix|how (do|can|to|should|could)|improve|faster|make)\b", q)
    ):
        # "are the index.bin reads sequential?": the file's consecutive and sequential counters
        return Query(
            metric="sequential",
            target=named_file.group(1) if named_file else None,
            direction=_direction(q),
            yes_no=yes_no,
            # "is lookup.bin read randomly?" is answered yes when "were its reads sequential?" is answered no
            missing=bool(re.search(r"\brandom\w*\b", q)),
            raw=question,
        )
    if (
        not rank
        and re.search(r"\b(each|every|per) (rank|process)\b", q)
        and re.search(r"\bhow much\b|\bhow many bytes\b|\b(bytes|data|gib|mib|gb|mb)\b", q)
        and not named_file
        and not re.search(r"\bwhy\b", q)
    ):
        return Query(metric="rank_spread", direction=_direction(q), data=True)  # "how much did each rank write?"
    if re.search(
        r"\bhow (big|large) (is|are|was|were) (each|every|a|the|one|their|its) (single )?(f?writes?|f?reads?|requests?|"
        r"calls?|access\w*|transfers?)\b",
        q,
    ):
        # "how big is each write to state.bin?": the request size, not the file's
        return Query(
            metric="request_size",
            target=named_file.group(1) if named_file else None,
            direction=_direction(q),
            raw=question,
        )
    if named_file and re.match(r"^how (big|large) (is|was)\b", q):
        # "how big is reads.fastq?": the bytes that went to it
        return Query(metric="file_usage", target=named_file.group(1), raw=question)
    if named_file and re.search(r"\bhow (big|large)\b.*\b(reads?|writes?|calls?|fread|fwrite|requests?|accesses)\b", q):
        # "how big were the fread calls on reads.fastq?"
        way: Direction = (
            "read" if re.search(r"\b(f?read\w*)\b", q) else "write" if re.search(r"\bf?writ", q) else "both"
        )
        return Query(metric="request_size", target=named_file.group(1), direction=way, raw=question)
    if (
        not rank
        and not named_file
        and re.search(r"\b(which|what) (rank|process)\w*\b.*\b(most|longest|slowest|busiest|straggl\w*|lagg\w*)\b", q)
        and not re.search(r"\b(which|what) (ranks|processes)\b.*\b(straggl\w*|lagg\w*|slow (ones|ranks))\b", q)
    ):
        return Query(metric="busiest_rank")  # "which rank spent the most time in I/O, and how long?"
    if (
        named_file
        and re.search(r"\b(each|every|per) (rank|process)\b", q)
        and _READ_OR_WRITE_TIME.search(q)
        and not re.search(r"\bwhy\b", q)
    ):
        # "how long did each rank spend reading X?": the file's slowest rank, and what Darshan kept of the rest
        return Query(metric="file_usage", target=named_file.group(1), direction=_direction(q), raw=question)
    other = re.search(
        r"^(did|does|do|were|was|is) (any|other|some) (other )?(ranks?|process\w*)\b.*"
        r"\b(other than|besides|except|apart from|but|beyond) (rank )?#?(\d+)\b",
        q,
    )
    if other:
        return Query(metric="ranks_with_io", yes_no=True, target=other.group(7))  # "did any rank other than 0 do I/O?"
    if re.search(
        r"^(did|do|does|were|was|are|is) (the )?(other|rest of the|remaining) ([\d,]+ )?(ranks?|process\w*|procs)\b"
        r".*\b(anything|any (i/?o|data|bytes|files?)|at all|i/?o|doing|do)\b",
        q,
    ):
        # "were the other 62 ranks writing anything?": the ranks besides the one(s) that did
        return Query(metric="ranks_with_io", yes_no=True, target="others", direction=_direction(q))
    only = re.search(r"^(does|did|is|was) only (rank )?#?(\d+)\b.*\b(i/?o|read\w*|writ\w*|files?)\b", q)
    if only:
        # "does only rank 0 do I/O?": yes when no other rank did, the reverse of "any other rank?"
        return Query(metric="ranks_with_io", yes_no=True, target=only.group(3), healthy=True)
    if re.search(r"\b(which|what|how many) (ranks|processes)\b.*\b(did|do|does|doing|perform\w*)\b.*\bi/?o\b", q):
        return Query(metric="ranks_with_io")  # "which ranks did any I/O?"
    if re.search(r"\bhow many files\b.*\b(each|every|per) (rank|process)\b|\bfiles per (rank|process)\b", q):
        return Query(metric="files_per_rank", direction=_direction(q))
    if yes_no and re.search(r"\b(each|every) (rank|process)\b.*\bown\b", q):
        return Query(metric="files_per_rank", direction=_direction(q), yes_no=True)  # "does every rank write its own?"
    if (
        not rank
        and not re.search(r"\b(why|how (do|can|to))\b", q)
        and re.search(r"\b(per[- ]rank|each rank|every rank|per[- ]process|each process|across ranks)\b", q)
        and re.search(r"\b(how long|time|seconds|spend|spent|took|take)\b", q)
    ):
        return Query(metric="rank_spread", direction=_direction(q))  # "per rank write time"
    call = _call_kind(_NAMED.sub(" ", q))  # "reads.fastq" names a file, not read calls
    if call and not rank:
        return Query(metric="calls", target=call, file=named_file.group(1) if named_file else None, raw=question)
    if rank and re.search(r"\bhow many files\b|\bnumber of files\b|\bfiles? (did|does) (it|rank \d+)", q):
        return Query(metric="rank_files", scope="rank", target=rank.group(1), direction=_direction(q))
    if rank:
        target = rank.group(1)
        on = _NAMED.search(question)
        file = on.group(1) if on else None
        if file and (re.search(r"\bwhy\b", q) or re.search(_FIX_ASK, q)):
            # "why does rank 0 spend 90 s on spectra.dat?": the file's own counters say why
            return Query(metric="file_why", target=file, direction=_direction(q), raw=question)
        if (
            re.search(r"\b(more|less|fewer)\b.*\bthan (the )?(others|other ranks|rest|average|median)\b", q)
            and not file
        ):
            return Query(metric="slow_rank", scope="rank", target=target, yes_no=yes_no)  # "does rank 0 do more?"
        if re.search(r"\b(why|slow\w*|straggl\w*|lag\w*|doing|busy|up to|longer|going on|wrong|problem)\b", q) and not (
            file and _READ_OR_WRITE_TIME.search(q)
        ):
            return Query(metric="slow_rank", scope="rank", target=target, file=file, yes_no=yes_no)
        if re.search(r"\b(how long|time|seconds|spend|spent|wait\w*|fraction|share|percent\w*|proportion)\b", q):
            return Query(metric="time", scope="rank", target=target, direction=_direction(q), file=file)
        if (
            re.search(r"\b(bytes|how much|data|gib|mib|gb|mb|volume|amount)\b", q)
            or _WRITE.search(q)
            or _READ.search(q)
        ):
            return Query(metric="bytes", scope="rank", target=target, direction=_direction(q), file=file, yes_no=yes_no)
    named = _NAMED.search(question)
    if re.search(r"\bwhy\b", q) and re.search(
        r"\b(so many|that many|too many|many|million|thousands?|hundreds? of thousands|[\d,.]+k?) "
        r"(small |tiny )?(f?writes?|f?reads?|requests?|calls?|i/?o ops|operations)\b",
        q,
    ):
        # "why does cesm issue nearly half a million writes for under 7 GB?": the requests are small
        return Query(
            metric="request_size", target=named.group(1) if named else None, direction=_direction(q), raw=question
        )
    if re.search(
        r"\b(request|transfer|access|block|i/?o|f?write|f?read) ?sizes?\b|\bwhat size\b"
        r"|\b(average|mean|typical|avg) size\b"
        r"|\b(average|mean|typical|avg) (f?write|f?read|request|call|access|transfer)s? sizes?\b"
        r"|\bsize of (the |a |each )?([\w-]+ )?(reads?|writes?|requests?)\b",
        q,
    ):
        return Query(
            metric="request_size", target=named.group(1) if named else None, direction=_direction(q), raw=question
        )
    if re.search(
        r"\bi/?o[- ]bound\b|\bis (the )?i/?o (why|the reason|a big part|the problem|a bottleneck)"
        r"|\bbecause of (the )?i/?o\b|\bi/?o (a|the) (big|large|main) (part|share)\b",
        q,
    ):
        return Query(metric="io_bound", yes_no=True, bound=bool(re.search(r"\bi/?o[- ]bound\b", q)))
    if (
        re.search(r"\bcoll?ec?tiv\w*\b", q)
        and named
        and re.search(r"\b(why|fix|how (do|can|should) (i|we)|speed\w* up|faster|efficient|inefficient|slow)\b", q)
    ):
        # "dump.0205 takes 74 s to write collectively, how do i fix it?": why the file is slow, not a count
        return Query(metric="file_why", target=named.group(1), direction=_direction(q), raw=question)
    if re.search(r"\bcoll?ec?tiv\w*\b", q) and re.search(
        r"\b(why|fix|how (do|can|should) (i|we)|speed\w* up|faster|improve|tun\w*)\b", q
    ):
        # "how do I speed up the collective checkpoint?": a fix, which a count does not give
        return None
    if re.search(r"\bcoll?ec?tiv\w*\b", q) or (
        re.search(r"\bindependent\w*\b", q) and re.search(r"\b(mpi[- ]?io|mpiio|reads?|writes?|calls?)\b", q)
    ):
        return Query(
            metric="collective",
            direction=_direction(q),
            target=named.group(1) if named else None,
            yes_no=yes_no,
            raw=question,
        )
    if re.search(r"\bwhy\b.*\bwrit\w*\b.*\b(longer|slower|more time)\b.*\bread", q) or re.search(
        r"\bwhy\b.*\bread\w*\b.*\b(longer|slower|more time)\b.*\bwrit", q
    ):
        return Query(metric="write_vs_read")
    if re.search(
        r"\b(write|writ\w*) time\b.*\bread\w* time\b|\bread\w* time\b.*\b(write|writ\w*) time\b"
        r"|\breads? or writes?\b|\bwrites? or reads?\b|\bwrit\w* or read\w*\b|\bread\w* or writ\w*\b"
        r"|\b(more|most) time\b.*\b(writ\w*|read\w*)\b.*\bor\b",
        q,
    ) and not re.search(r"\bhow (much|many bytes)\b|\b(bytes|data|volume|gib|gb|mib|mb)\b", q):
        return Query(metric="write_vs_read")
    if re.search(
        r"\b(which|what)\b.*\bfiles?\b.*\b(most|longest|slowest|hotspot|hot spot|bottleneck)\b"
        r"|\b(hotspot|hot spot|busiest file|slowest file)\b",
        q,
    ) and not re.search(r"\bosts?\b|\b(data|bytes|volume|gb|gib|mb|mib)\b", q):
        return Query(metric="top_file", direction=_direction(q))
    if re.search(
        r"\b(which|what) files?\b.*\b(read|writ\w*|wrote)\b.*\b(how much|how many bytes|each|size)\b"
        r"|\bhow much\b.*\b(read|writ\w*|wrote)\b.*\b(which|what) files\b|\bfrom which files\b",
        q,
    ):
        return Query(metric="file_list")
    if (
        re.search(
            r"\bhow many\b\s*(bytes|gb|gib|mb|mib|tb|tib|kb|kib|terabytes|gigabytes|megabytes)\b"
            r"|\b(volume|amount|quantity) of data\b|\btotal\b.*\b(bytes|data|read|writ\w*|wrote)\b",
            q,
        )
        and not rank
    ):
        if named and not _IFACE.search(q):  # "how many bytes went to output.log?"
            return Query(metric="file_usage", target=named.group(1), direction=_direction(q), raw=question)
        if _IFACE.search(q):  # "how many bytes were written into hdf5 datasets?"
            return _iface_query(q)
        return Query(metric="bytes", direction=_direction(q), raw=question)
    if re.search(
        r"\b(spend|spending|spent|dominat\w*)\b.*\b(most|majority|bulk)\b.*(?<![-\w])i/?o\b"
        r"|\bmost of (its|the|my) (time|run ?time)\b.*\bi/?o\b|\bi/?o[- ]heavy\b|\bi/?o[- ]dominated\b",
        q,
    ):
        return Query(metric="io_bound", yes_no=True, bound=True)
    if re.search(
        r"\b(trust|complete|incomplete|partial|truncated|corrupt\w*|valid|reliable|missing|dropped|negative|absurd|"
        r"lost|captur\w* (everything|all))\b",
        q,
    ) and re.search(r"\b(log|trace|dxt|counters?|records?|data|darshan)\b", q):
        asks_missing = bool(re.search(r"\b(missing|partial|incomplete|truncated|corrupt\w*|lost|dropped)\b", q))
        if re.search(r"\bcaptur\w* (everything|all)\b", q):
            asks_missing = False
        return Query(
            metric="completeness", yes_no=yes_no or bool(re.match(r"^\s*(can|could)\b", q)), missing=asks_missing
        )
    if re.fullmatch(r"(which|what) (darshan )?(modules?|interfaces?|layers?|apis?|librar(y|ies))\W*", q):
        return Query(metric="interfaces")  # "which modules?"
    if re.search(
        r"\b(which|what)\b.*\b(interfaces?|librar(y|ies)|apis?|modules?|layers?)\b.*\b(use|used|using|did|"
        r"in (the|this) log|present|recorded|show(s|ed)? up|appear\w*)\b"
        r"|\b(which|what)\b.*\b(interfaces?|librar(y|ies)|apis?|modules?)\b.*\bwas\b",
        q,
    ) and not re.search(r"\b(most|majority|bulk)\b", q):
        return Query(metric="interfaces")
    if re.search(r"\bhow (much|long)( time)?\b.*\b(in|on|doing)\b\s*(the\s*)?i/?o\b", q) and not re.match(
        r"^how many (mpi )?(ranks|processes|procs|tasks)\b", q
    ):
        return Query(metric="io_share")
    if (
        re.search(r"\b(small|tiny)\b", q)
        and re.search(r"\b(writes?|reads?|requests?|i/?o|transfers?)\b", q)
        and (yes_no or re.search(r"\b(is|are)\b.*\bdoing\b", q))
    ):
        return Query(metric="small_requests", direction=_direction(q), yes_no=True)
    if yes_no and re.search(r"\b(straggl\w*|load imbalance|imbalance\w*|imbalanced|unbalanced)\b", q) and not named:
        return Query(metric="any_slow_rank", yes_no=True)  # "is there a straggler?", "is there load imbalance?"
    if yes_no and re.search(r"\b(one|a single|only one|just one) (rank|process)\b", q) and not named:
        # "is all the I/O done by one rank?", "is only one rank doing the output?"
        return Query(metric="ranks_with_io", yes_no=True, healthy=True, direction=_direction(q))
    if re.search(r"\b(which|what) (ranks|processes)\b.*\b(slow\w*|straggl\w*|lag\w*|behind)\b", q) or re.search(
        r"\b(which|what) (ranks|processes) (are|were) (the )?(stragglers|laggards)\b", q
    ):
        return Query(metric="slow_ranks")  # "which ranks are the slow ones?"
    if re.search(r"\b(any|some|a)\s+(rank|process)\w*\b.*\b(slow\w*|straggl\w*|lag\w*|behind)\b", q):
        return Query(metric="any_slow_rank", yes_no=yes_no)
    if (
        yes_no
        and re.search(r"\b(all|every|each|the) (ranks?|process\w*|procs?)\b", q)
        and re.search(r"\b(same|similar|equal|comparable|alike)\b.*\b(time|long|fast|speed)\b", q)
    ):
        # "did all ranks take about the same time to write their snapshot?": no when one rank holds the rest up
        return Query(metric="any_slow_rank", yes_no=True, healthy=True)
    if re.search(r"\b(balanced|even(ly)? (spread|split|distributed)|evenly|imbalanced|unbalanced)\b", q) and named:
        # "is snapshot_104.nc load balanced?": the file's slowest and fastest rank as Darshan kept them
        return Query(metric="file_balance", target=named.group(1), yes_no=yes_no, raw=question)
    if re.search(r"\b(balanced|even(ly)? (spread|split|distributed)|evenly)\b", q) and re.search(
        r"\b(ranks?|process\w*|tasks?)\b", q
    ):
        # "is the I/O balanced across ranks?": yes when no rank holds the others up
        return Query(metric="any_slow_rank", yes_no=yes_no, healthy=True)
    solo = _IFACE.fullmatch(q.strip(" ?!."))
    if solo:
        return Query(metric="uses", scope="interface", target=_INTERFACES[solo.group(1).lower()], yes_no=True)
    if re.search(
        r"\bnumber of (ranks|processes|procs|tasks|mpi ranks)\b|\bnprocs\b|^(ranks|processes|procs)\W*$"
        r"|^how many (mpi )?(ranks|processes|procs|tasks)( and\b|\?|$)",
        q,
    ):
        return Query(metric="ranks")
    if re.search(r"\b(which|what) files?\b.*\b(most|largest|biggest)\b.*\b(data|bytes|volume)\b", q):
        return Query(metric="file_list")
    if (
        named
        and (
            _WHY_SLOW.search(q)
            or re.search(_FIX_ASK, q)
            # "the traj.xyz read takes 26 s. that's a lot for 512MB, no?": a judgement of its time
            or (
                re.search(r"\b(a lot|too (long|much|many)|reasonable|normal|expected)\b", q)
                and re.search(r"\b(takes?|took|taking|\d+(\.\d+)? ?(s|sec\w*|min\w*))\b", q)
            )
        )
        and not re.search(r"\bhow (long|much|many)\b", q)  # "how long did the slowest rank spend on X?"
    ):
        return Query(metric="file_why", target=named.group(1), direction=_direction(q), raw=question)
    if (
        named
        and re.search(r"\bosts?\b", q)
        and re.search(r"\b(strip\w*|holds?|on|which|what|use[sd]?|span\w*|spread|over|across|how many)\b", q)
    ):
        # "which OST holds dump.0294?", "is mesh.bin sitting on a single OST?"
        return Query(metric="stripe", target=named.group(1), raw=question, yes_no=yes_no)
    if (
        named
        and re.search(
            r"\b(how long|time|seconds|how big|how much|size of|bytes|fraction|share|percent\w*|proportion)\b", q
        )
        and not (re.search(r"\bstripe|\bstr[ip]{2}e\b|\bstripping\b", q))
    ):
        return Query(metric="file_usage", target=named.group(1), direction=_direction(q), raw=question)
    if re.search(
        r"\b(bytes|volume|data|amount)\b.*\b(read|writ\w*|wrote)\b|\b(read|writ\w*|wrote)\b.*\b(bytes|volume)\b", q
    ):
        if named:
            return Query(metric="file_usage", target=named.group(1), direction=_direction(q), raw=question)
        if _IFACE.search(q) and not re.search(r"\b(h5|hdf5|netcdf|nc) files?\b", q):
            # "how much data did it read and write through POSIX?" (but "the h5 file" is a file)
            return _iface_query(q)
        return Query(metric="bytes", direction=_direction(q))
    if re.search(r"\b(which|what)\b.*\b(interface|layer|api|library|module)\b.*\b(most|majority|bulk)\b", q):
        return Query(metric="top_interface")
    iface = _IFACE.search(q)
    if iface and (yes_no or re.search(r"\b(use|used|using|through|via)\b", q)) and not re.search(r"\bhow much\b", q):
        return Query(
            metric="uses",
            scope="interface",
            target=_INTERFACES[iface.group(1).lower()],
            yes_no=True,
            data=bool(re.search(r"\b(data|dataset\w*|bytes|writ\w*|wrote|read\w*)\b", q)),
        )
    if iface and re.search(r"\bhow much\b", q):
        return Query(
            metric="bytes", scope="interface", target=_INTERFACES[iface.group(1).lower()], direction=_direction(q)
        )
    target = named.group(1) if named else None
    ost_trouble = r"(slow\w*|sluggish|bad|faulty|degraded|underperform\w*|lagg\w*|sick|broken|dragging)"
    if (
        re.search(rf"\bosts?\b.*\b{ost_trouble}\b|\b{ost_trouble}\b.*\bosts?\b", q)
        and not (yes_no or re.match(r"^\s*(could|can|might|may)\b", q))
        and not re.search(r"\b(slowest|busiest|most)\b", q)  # a ranking question: the OST table answers it
        and not re.search(r"\b(which|what) (files?|ranks?|processes)\b|\bsay\b|\bnersc|\bolcf|\balcf", q)
    ):
        return Query(metric="slow_ost")  # "which OST is slow?", "how many ranks did the slow OST hit?"
    if re.search(r"\b(how many|number of|count of)\b.*\bosts?\b|\bosts?\b.*\bhow many\b|\b(which|what) osts\b", q):
        return Query(metric="osts")
    if re.search(r"\bshared\b.*\b(per[- ]process|per rank|own file|one per)\b|\bfile[- ]per[- ]process\b|\bn-?n\b", q):
        return Query(metric="sharing")
    if yes_no and re.search(r"\bon (nfs|lustre|gpfs|daos|xfs|ext4|a local disk|local disk)\b", q):
        # "is test.out on NFS?", "is the ocean file on lustre?"
        return Query(metric="file_system", direction=_direction(q), target=target, yes_no=True, raw=question)
    if re.search(
        r"\b(file ?system|fs|mount ?point|mounted)\b|\b(which|what|where)\b.*\bstorage\b", q
    ) and not re.search(r"\bstorage targets?\b|\b(blame|fault|problem|slow\w*|why)\b", q):
        # "was it on a parallel file system like lustre or gpfs?" asks whether, and is answered yes or no
        whether = yes_no and bool(_asked_file_systems(q))
        return Query(metric="file_system", direction=_direction(q), target=target, yes_no=whether, raw=question)
    if re.search(r"\bstripe|\bstr[ip]{2}e\b|\bstripping\b|\bstriping\b", q):
        return Query(metric="stripe", target=target, yes_no=yes_no, raw=question)
    ost_trouble = r"(slow\w*|sluggish|bad|faulty|degraded|underperform\w*|lagg\w*|sick|broken|dragging)"
    asks = yes_no or re.match(r"^\s*(could|can|might|may)\b", q)
    ost = r"(osts?|storage targets?|object storage|disks?)"
    if asks and re.search(rf"\b{ost}\b.*\b{ost_trouble}\b|\b{ost_trouble}\b.*\b{ost}\b", q):
        return Query(metric="slow_ost", yes_no=True)
    if re.search(r"\b(bandwi\w*|throughput|mb/s|gb/s|mib/s|gib/s|rate|speed)\b", q) and not re.search(
        r"\b(why|fix|speed\w* (it |this |things )?up|improve|faster|tun\w*)\b", q
    ):
        return Query(metric="rate", direction=_direction(q), target=target, raw=question)
    if re.search(r"\bmet(a|)data\b|\bmeta[- ]data\b|\bopen/stat|\bopens?\b.*\btime\b", q):
        return Query(metric="metadata", yes_no=yes_no)
    if re.search(r"\bhow many\b.*\b(ranks|processes|procs|tasks|mpi ranks)\b|\bnprocs\b", q):
        return Query(metric="ranks")
    if re.search(r"\bhow many\b.*\bfiles\b", q):
        # records are not files
        return None if iface else Query(metric="files", direction=_direction(q), raw=question)
    if re.search(
        r"\b(fraction|share|percent\w*|%|proportion)\b.*\b(i/?o)\b|\b(i/?o)\b.*\b(fraction|share|percent\w*)\b", q
    ):
        return Query(metric="io_share")
    if re.search(r"\bhow long\b.*\b(run|job|take|last)\b|\brun ?time\b|\bwall ?time\b|\belapsed\b", q):
        return Query(metric="runtime")
    if re.search(
        r"\bhow much\b.*\b(data|bytes|read|writ\w*|wrote)\b|\bhow many bytes\b|\btotal\b.*\b(read|writ\w*)\b", q
    ) and not re.search(r"\bhow much (time|faster|quicker|speed\w*)\b", q):
        return Query(metric="bytes", direction=_direction(q), raw=question)
    return None


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


_Out = tuple[str, list[Quantity], list[str], list[int]] | None
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


def _lower_first(text: str) -> str:
    # "I/O took", "OST 5", "MPI-IO": a name, not a sentence's first word, keeps its case
    if len(text) > 1 and text[0].isupper() and not text[1].isupper() and not text.startswith(("I/O", "I ")):
        return text[0].lower() + text[1:]
    return text


def _b(n: float) -> str:
    return human_bytes(n)


def _s(n: float) -> str:
    return human_seconds(n)


def _counted(report: Report) -> list[InterfaceTotals]:  # the interfaces whose bytes and time make the totals
    return [i for i in report.interfaces if i.counted]


def _moved(i: InterfaceTotals) -> int:
    """The interface's part of the job's bytes (each file once: POSIX without the files opened through MPI-IO)."""
    return i.own_bytes_read + i.own_bytes_written


def _uses(report: Report, q: Query) -> _Out:
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


def _top_interface(report: Report, q: Query) -> _Out:
    rows = [i for i in _counted(report) if _moved(i) > 0]
    if not rows:
        return None
    total = sum(_moved(i) for i in rows)
    rows.sort(key=lambda i: -_moved(i))
    top = rows[0]
    moved = _moved(top)
    rest = "; ".join(f"{i.name} {_b(_moved(i))}" for i in rows[1:3])
    text = f"{top.name} did most of the I/O: {_b(moved)} of the job's {_b(total)} ({percent(moved / total)})" + (
        f", against {rest}." if rest else "."
    )
    values = [exact(moved, "bytes"), exact(total, "bytes"), exact(moved / total * 100, "percent")]
    values += [exact(_moved(i), "bytes") for i in rows[1:3]]
    return text, values, [], []


def _own(report: Report, rank: int) -> RankUsage | None:
    return next((u for u in report.rank_table.ranks if u.rank == rank), None)


def _shared_note(report: Report) -> tuple[str, list[Quantity]]:
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


def _kept_ranks(report: Report, file: str | None) -> list[tuple[str, RankSeconds]]:
    """The ranks Darshan kept for shared files (slowest first, then fastest), on the named file if any."""
    t = report.rank_table
    return [
        (which, k)
        for which, kept in (("slowest", t.shared_slowest), ("fastest", t.shared_fastest))
        for k in kept
        if file is None or _named(k.path, file)
    ]


def _kept(report: Report, rank: int, file: str | None) -> _Out:
    """What Darshan kept for this rank as the fastest or slowest rank of a shared file (the named one, if any)."""
    hits = [(which, k) for which, k in _kept_ranks(report, file) if k.rank == rank]
    if not hits:
        return None
    parts: list[str] = []
    values: list[Quantity] = []
    for which, k in hits[:2]:
        moved = f"{_b(k.bytes)} in " if k.bytes is not None else ""
        parts.append(f"the {which} rank of the shared file `{k.path}`: {moved}{_s(k.seconds)}")
        values += [exact(k.seconds, "seconds")] + ([exact(k.bytes, "bytes")] if k.bytes is not None else [])
    text = (
        f"Darshan kept rank {rank} as "
        + "; and as ".join(parts)
        + " (for a shared file it keeps only the fastest and slowest rank)."
    )
    return text, values, [k.path for _, k in hits[:2]], [rank]


def _shared_named(report: Report, rank: int, file: str | None) -> _Out:
    """The named file is shared and this rank is not one Darshan kept for it: say what is and is not recorded."""
    if not file:
        return None
    on_file = _kept_ranks(report, file)
    fast = next((k for which, k in on_file if which == "fastest"), None)
    slow = next((k for which, k in on_file if which == "slowest"), None)
    if fast is None and slow is None:
        return None
    path = (fast or slow).path  # type: ignore[union-attr]
    kept = "; ".join(
        f"{which} rank {k.rank}, {_s(k.seconds)}" for which, k in (("fastest", fast), ("slowest", slow)) if k
    )
    values = [exact(k.seconds, "seconds") for k in (fast, slow) if k]
    return (
        f"`{path}` is a shared file: Darshan kept only its fastest and slowest rank ({kept}), so rank {rank}'s "
        "time and bytes on it are not recorded.",
        values,
        [path],
        [rank],
    )


def _rank_bytes(report: Report, q: Query) -> _Out:
    rank = int(q.target or 0)
    if rank >= report.job.nprocs:
        return (
            f"The job had {report.job.nprocs:,} ranks (0 to {report.job.nprocs - 1:,}): there is no rank {rank}.",
            [exact(report.job.nprocs, "bare"), exact(report.job.nprocs - 1, "bare")],
            [],
            [],
        )
    u = _own(report, rank)
    kept = _kept(report, rank, q.file)
    if kept is not None and (u is None or q.file):
        return kept
    note, nv = _shared_note(report)
    if u is None:
        if report.rank_table.truncated:
            return None
        # "Did rank 100 write anything?": no, unless a shared record (which keeps no ranks) moved data that way.
        no = "No: r" if q.yes_no and not _shared_moved(report, q.direction) else "R"
        return (
            f"{no}ank {rank} has no file records of its own in the log{': ' + note[1:] if note else '.'}",
            nv,
            [],
            [rank],
        )
    hidden = _shared_named(report, rank, q.file)
    if hidden is not None:
        return hidden
    spent = u.read_s + u.write_s + u.meta_s
    if q.direction == "write":
        head, took = f"Rank {rank} wrote {_b(u.bytes_written)}", f"{_s(u.write_s)} of writing"
    elif q.direction == "read":
        head, took = f"Rank {rank} read {_b(u.bytes_read)}", f"{_s(u.read_s)} of reading"
    else:
        head, took = f"Rank {rank} wrote {_b(u.bytes_written)} and read {_b(u.bytes_read)}", f"{_s(spent)} of I/O"
    if q.direction != "both":
        took += f" ({_s(spent)} of I/O in all)"
    text = f"{head} through its own records ({u.files:,} file(s)), in {took}.{note}"
    if q.yes_no:
        moved = {"write": u.bytes_written, "read": u.bytes_read}.get(q.direction, u.bytes_written + u.bytes_read)
        no = "Not through its own records: " if _shared_moved(report, q.direction) else "No: "
        text = ("Yes: " if moved > 0 else no) + _lower_first(text)
    return (
        text,
        [
            exact(u.bytes_written, "bytes"),
            exact(u.bytes_read, "bytes"),
            exact(u.files, "bare"),
            exact(spent, "seconds"),
            exact(u.write_s, "seconds"),
            exact(u.read_s, "seconds"),
            *nv,
        ],
        [],
        [rank],
    )


def _every_rank(report: Report, f: FileUsage) -> bool:
    """Whether every rank of a multi-rank job used the file (a shared record, or a record per rank)."""
    return f.ranks >= report.job.nprocs > 1


def _shared_moved(report: Report, direction: Direction) -> bool:
    """Whether a shared (every-rank) file among the busiest moved data in that direction."""
    return any(
        _every_rank(report, f)
        and {"read": f.bytes_read, "write": f.bytes_written}.get(direction, f.bytes_read + f.bytes_written)
        for f in report.top_files
    )


def _rank_time(report: Report, q: Query) -> _Out:
    rank = int(q.target or 0)
    u = _own(report, rank)
    kept = _kept(report, rank, q.file)
    if kept is not None and (u is None or q.file):
        return kept
    note, nv = _shared_note(report)
    if u is None:
        return (
            (f"Rank {rank} has no file records of its own in the log{': ' + note[1:] if note else '.'}", nv, [], [rank])
            if not (report.rank_table.truncated)
            else None
        )
    hidden = _shared_named(report, rank, q.file)
    if hidden is not None:
        return hidden
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


def _rank_bytes_spread(report: Report, q: Query) -> _Out:
    """Bytes per rank over the ranks with records of their own (a shared record's part per rank is not kept)."""
    t = report.rank_table

    def moved(u: RankUsage) -> int:
        return _by_direction(q.direction, u.bytes_read, u.bytes_written, u.bytes_read + u.bytes_written)

    amounts = sorted(moved(u) for u in t.ranks)
    if not amounts:
        return None
    verb = {"write": "wrote", "read": "read"}.get(q.direction, "moved")
    lo, mid, hi = amounts[0], statistics.median(amounts), amounts[-1]
    over = f"the {len(amounts):,} ranks with records of their own"
    note, nv = _shared_note(report)
    values = [exact(lo, "bytes"), exact(mid, "bytes"), exact(hi, "bytes"), exact(len(amounts), "bare")]
    if hi - lo <= 0.01 * max(hi, 1):
        text = f"Each rank {verb} {_b(mid)} through its own records (over {over}).{note}"
        values = [exact(mid, "bytes"), exact(len(amounts), "bare")]
    else:
        text = f"Ranks {verb} {_b(lo)} to {_b(hi)} each, {_b(mid)} at the median, over {over}.{note}"
    n = max(report.job.nprocs, 1)
    if t.shared_bytes > sum(amounts) and len(amounts) < n:
        # Most of the data sits in shared records, which keep no per-rank split: lead with what they hold per
        # rank on average, not with the few bytes some ranks moved on their own ("each rank wrote 322 B")
        lead = (
            f"Most of the data is in {t.shared_files:,} shared file(s) Darshan keeps one record for: "
            f"{_b(t.shared_bytes)} moved in all, {_b(t.shared_bytes / n)} per rank on average over the job's "
            f"{n:,} ranks (the per-rank split is not kept). "
        )
        text = lead + text.replace("Each rank", "Besides that, each rank", 1).replace(
            "Ranks ", "Besides that, ranks ", 1
        )
        values += [exact(t.shared_files, "bare"), exact(t.shared_bytes, "bytes"), exact(t.shared_bytes / n, "bytes")]
    asked = q.raw.lower()
    if _YES_NO.match(asked) and re.search(
        r"\b(same|equal\w*|even\w*|balanced|similar|identical|uneven\w*|unequal|"
        r"imbalanced|unbalanced|different)\b",
        asked,
    ):
        even = hi - lo <= 0.01 * max(hi, 1)
        negated = bool(re.search(r"\b(uneven\w*|unequal|imbalanced|unbalanced|different)\b", asked))
        text = f"{'Yes' if even != negated else 'No'}: {_lower_first(text)}"
    return text, values + nv, [], []


def _ranks_with_io(report: Report, q: Query) -> _Out:
    t = report.rank_table
    n = report.job.nprocs
    if t.truncated:
        return None
    own = sorted(u.rank for u in t.ranks)
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


def _sequential(report: Report, q: Query) -> _Out:
    """Were a file's (or a group's) reads or writes sequential: Darshan's consecutive and sequential counters,
    which only its POSIX module keeps. ``q.missing`` asks "random?", answered yes where "sequential?" is no."""
    f = None
    if q.target:
        f = next((x for x in report.top_files if _named(x.path, q.target)), None)
    group = group_named(report, q.raw) if f is None else None
    if f is None and group is None:
        word = _loose_name(" ".join(q.raw.lower().split()), report)
        matching = [g for g in report.file_groups if word and _group_has(g, word)]
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
    elif q.target is None and not _loose_name(" ".join(q.raw.lower().split()), report):
        # "Is the input read randomly?" with no file the report names: the job's POSIX requests.
        posix = next((i for i in report.interfaces if i.name == "POSIX" and i.records), None)
        if posix is None:
            return None
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
    if q.missing:  # "is it read randomly?": yes when a fifth or more of the requests go back in the file
        word = ("Yes: " if back >= 0.2 * n else "No: ") if q.yes_no else ""
    else:
        word = ("Yes: " if mostly else "No: ") if q.yes_no else ""
    text = (
        f"{word}of the {n:,} {noun} of {what}, {consec:,} started where the previous one ended (consecutive) "
        f"and {seq:,} after it ({percent(seq / n)}: sequential, gaps allowed)"
    )
    values = [exact(n, "bare"), exact(consec, "bare"), exact(seq, "bare"), exact(seq / n * 100, "percent")]
    if not mostly:
        text += f"; {back:,} went back in the file"
        values.append(exact(back, "bare"))
    if (c.seeks and layer == "POSIX") or (f is not None and c is f.posix_calls and c.seeks):
        text += f", with {c.seeks:,} seeks"
        values.append(exact(c.seeks, "bare"))
    return (text[0].upper() + text[1:] if not word else text) + ".", values, paths, []


def _job_info(report: Report, q: Query) -> _Out:
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
    mods = [m for m in j.modules if m.records or m.loaded]
    if not mods:
        return "None: the log holds no module records at all (no I/O was instrumented).", [], [], []
    parts = ", ".join(f"{m.name} ({m.records:,} records{', partial' if m.partial else ''})" for m in mods)
    return f"The log holds {len(mods)} module(s): {parts}.", [exact(m.records, "bare") for m in mods], [], []


def _busiest_rank(report: Report, q: Query) -> _Out:
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
    return (
        f"Rank {s.slowest_rank} spent the most time in I/O: {_s(s.slowest_rank_io_s)}{run}, against "
        f"{_s(s.mean_rank_io_s)} for the average rank{median}.",
        values,
        [],
        [s.slowest_rank],
    )


def _files_per_rank(report: Report, q: Query) -> _Out:
    t = report.rank_table
    counts = sorted(u.files for u in t.ranks)
    if not counts:
        return None
    lo, mid, hi = counts[0], int(statistics.median(counts)), counts[-1]
    values = [exact(lo, "bare"), exact(hi, "bare"), exact(len(counts), "bare")]
    if lo == hi:
        text = f"Each of the {len(counts):,} ranks with records of their own used {hi:,} file(s) of its own"
    else:
        text = f"Ranks used {lo:,} to {hi:,} files of their own ({mid:,} at the median, over {len(counts):,} ranks)"
    if q.yes_no:
        every = len(counts) >= report.job.nprocs > 0
        text = ("Yes: e" if every else "No: e") + text[1:] if lo == hi else ("Yes: " if every else "No: ") + text
        if not every:
            text += f"; {report.job.nprocs - len(counts):,} of the {report.job.nprocs:,} ranks have none"
    # What each rank moved through them, in the direction asked ("how many files did each rank write?").
    moved = sorted(
        _by_direction(q.direction, u.bytes_read, u.bytes_written, u.bytes_read + u.bytes_written) for u in t.ranks
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


def _rank_spread(report: Report, q: Query) -> _Out:
    """Time per rank over the ranks with records of their own: the least, the median and the most."""

    def seconds(u: RankUsage) -> float:
        return _by_direction(q.direction, u.read_s, u.write_s, u.read_s + u.write_s + u.meta_s)

    t = report.rank_table
    if q.data:
        return _rank_bytes_spread(report, q)
    doing = {"write": "writing", "read": "reading"}.get(q.direction, "in I/O")
    note, nv = _shared_note(report)
    times = sorted(seconds(u) for u in t.ranks)
    if not times:
        return None
    lo, mid, hi = times[0], statistics.median(times), times[-1]
    over = f"the {len(times):,} ranks with records of their own" + (" (the busiest listed)" if t.truncated else "")
    values = [exact(lo, "seconds"), exact(mid, "seconds"), exact(hi, "seconds"), exact(len(times), "bare")]
    n = report.job.nprocs
    shared = next((f for f in report.top_files if _every_rank(report, f) and f.only_rank is None and f.slowest_s), None)
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
    if hi - lo <= 0.05 * hi:
        text = f"Each rank spent about {_s(mid)} {doing} ({_s(lo)} to {_s(hi)} over {over}).{note}"
    else:
        text = f"Ranks spent {_s(lo)} to {_s(hi)} {doing}, {_s(mid)} at the median, over {over}.{note}"
    return text, values + nv, [], []


def _slow_rank(report: Report, q: Query) -> _Out:
    rank = int(q.target or 0)
    rows = report.rank_table.ranks
    u = _own(report, rank)
    if u is None:
        return _rank_time(report, q)
    times = [r.read_s + r.write_s + r.meta_s for r in rows]
    median = statistics.median(times)
    yardstick = "median"
    s = report.io_share
    if (len(rows) < 0.5 * report.job.nprocs or len(rows) < 2) and s is not None and s.runtime_s > 0:
        # Most ranks live only in shared records: the mean rank's I/O time is the yardstick.
        median, yardstick = s.share_mean * s.runtime_s, "mean"
    mine = u.read_s + u.write_s + u.meta_s
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
    if mine < 1.5 * median or mine - median < 1.0:
        return (
            f"{'No: r' if q.yes_no else 'R'}ank {rank} is not slow: it spent {_s(mine)} in I/O on its own records "
            f"against {_s(median)} for the "
            f"{yardstick} rank.",
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
    moved = u.bytes_read + u.bytes_written
    total = sum(_moved(i) for i in _counted(report))
    mean_bytes = total / max(report.job.nprocs, 1)
    # What it was doing: the file it alone used with the most time ("rank 0 reads uniref90.fasta alone").
    alone = max((f for f in report.top_files if f.only_rank == rank), key=lambda f: f.io_time_s, default=None)
    on = f", most of it on `{alone.path}` ({_s(alone.io_time_s)}), which only it used" if alone else ""
    heavy = mean_bytes > 0 and moved > 2 * mean_bytes
    more = f"{moved / mean_bytes:.1f}x the mean rank's data: the work sits on it" if heavy else "no more data than most"
    if why is not None:
        from iodiag.analysis.verdict import action_for

        todo = action_for(why)
        named = f"{why.code}: {why.subject}" if why.subject else why.code
        # The cause in the same sentence as the numbers: the first sentence answers "why".
        reason = f"; {_lower_first(why.title)} ({named}) names it." + (f" {todo}" if todo else "")
        reason = reason if reason.endswith(".") else reason + "."
    elif heavy:
        reason = " Spreading that work over the ranks (or reading it once and broadcasting) is the fix."
    else:
        reason = " No finding in the log explains it."
    text = (
        f"{'Yes: r' if q.yes_no else 'R'}ank {rank} spent {_s(mine)} in I/O on its own records, "
        f"{mine / median:.1f}x the {yardstick} rank's "
        f"{_s(median)}, moving {_b(moved)} ({more}){on}" + (reason if reason.startswith(";") else f".{reason}")
    )
    values += [exact(mine / median, "times"), exact(moved, "bytes")]
    if alone is not None:
        values.append(exact(alone.io_time_s, "seconds"))
    if heavy:
        values.append(exact(moved / mean_bytes, "times"))
    return text, values, [], [rank]


def _family(report: Report, name: str | None) -> list[InterfaceTotals]:
    """An interface's rows with records: HDF5 is "HDF5 (datasets)" and "HDF5 (files)"; the most bytes first."""
    rows = [i for i in report.interfaces if i.records and (i.name == name or i.name.startswith(f"{name} ("))]
    return sorted(rows, key=lambda i: -(i.bytes_read + i.bytes_written))


def _no_module(report: Report, name: str) -> tuple[str, list[Quantity]]:
    """What to say when the log has no records of an interface: it was not recorded, and what the log does hold."""
    held = [i for i in _counted(report) if i.records and _moved(i) > 0] or [i for i in _counted(report) if i.records]
    text = f"the log has no {name} module, so {name} I/O was not recorded"
    if not held:
        return text + ", and no other module has records either", []
    parts = ", ".join(f"{i.name} ({_b(_moved(i))} in {i.files:,} file(s))" for i in held[:3])
    return text + f"; the I/O it does hold is at {parts}", [
        v for i in held[:3] for v in (exact(_moved(i), "bytes"), exact(i.files, "bare"))
    ]


def _absent(report: Report, q: Query) -> _Out:
    """ "Why are there no POSIX numbers?", "why don't I see my data files?": which modules the log holds."""
    name = q.target or "POSIX"
    if _family(report, name) and (q.target or any(i.name == "MPI-IO" and i.records for i in report.interfaces)):
        return None  # it is there: the question is about something else
    if q.target is None and _family(report, "POSIX"):
        return None
    held = [i for i in _counted(report) if i.records]
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
    text, values = _no_module(report, name)
    return text[0].upper() + text[1:] + ".", values, [], []


def _datasets(report: Report, q: Query) -> _Out:
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
        did = _by_direction(
            q.direction,
            f"{r:,} dataset reads",
            f"{w:,} dataset writes",
            f"{r:,} dataset reads and {w:,} dataset writes",
        )
        text = f"HDF5 did {did} on {d.files:,} dataset(s) ({shown}), moving {_b(d.bytes_read + d.bytes_written)}."
    values = [exact(d.files, "bare"), exact(d.calls.reads, "bare"), exact(d.calls.writes, "bare")]
    return text, [*values, exact(d.bytes_read + d.bytes_written, "bytes")], d.top_paths[:2], []


def _iface_bytes(report: Report, q: Query) -> _Out:
    rows = _family(report, q.target)
    if not rows:
        text, values = _no_module(report, q.target or "")
        return f"None: {text}.", values, [], []
    i = rows[0]
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
        return (
            f"{i.name} {verb} {_b(moved)}" + (f" in {calls:,} calls" if calls else "") + f" (and {rest} {_b(other)}).",
            [exact(moved, "bytes"), exact(calls, "bare"), exact(other, "bytes")],
            [],
            [],
        )
    return (
        f"{i.name} moved {_b(i.bytes_read + i.bytes_written)}: {_b(i.bytes_written)} written and "
        f"{_b(i.bytes_read)} read.",
        [exact(i.bytes_read + i.bytes_written, "bytes"), exact(i.bytes_written, "bytes"), exact(i.bytes_read, "bytes")],
        [],
        [],
    )


def _totals(report: Report) -> tuple[int, int]:
    """(read, written) by the application: each file once, at its top layer (the interfaces' own totals would
    count a file opened through MPI-IO twice, at MPI-IO and again at POSIX)."""
    s = report.io_share
    if s is not None:
        return s.bytes_read, s.bytes_written
    rows = _counted(report)
    return sum(i.own_bytes_read for i in rows), sum(i.own_bytes_written for i in rows)


def _beneath(report: Report, read: int, written: int, direction: Direction) -> tuple[str, list[Quantity]]:
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


def _job_bytes(report: Report, q: Query) -> _Out:
    group = group_named(report, q.raw)
    if group is not None:
        return _group_answer(group, q, moved=True)
    read, written = _totals(report)
    if read + written == 0 and not any(i.records for i in report.interfaces):
        return "None: the log records no I/O at all (no instrumented module has records).", [], [], []
    key = (lambda f: -f.bytes_read) if q.direction == "read" else (lambda f: -f.bytes_written)
    files = sorted(report.top_files, key=key)[:3]
    if q.direction == "read":
        files = [f for f in files if f.bytes_read]
        head = f"The job read {_b(read)}"
        tail = ", most from " + ", ".join(f"`{f.path}` ({_b(f.bytes_read)})" for f in files) if files else ""
    elif q.direction == "write":
        files = [f for f in files if f.bytes_written]
        head = f"The job wrote {_b(written)}"
        tail = ", most to " + ", ".join(f"`{f.path}` ({_b(f.bytes_written)})" for f in files) if files else ""
    else:
        head, tail, files = f"The job wrote {_b(written)} and read {_b(read)}", "", []
    values = [exact(read, "bytes"), exact(written, "bytes")]
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
        head = f"{'Yes' if yes else 'No'}: {_lower_first(head)}, against {_b(other)} {verb}" + (
            f" ({percent(mine / (mine + other))} of the bytes moved)" if mine + other else ""
        )
        values.append(exact(other, "bytes"))
        if mine + other:
            values.append(exact(mine / (mine + other) * 100, "percent"))
    elif q.yes_no and q.direction in ("read", "write"):
        # "did it write anything?": yes or no first, from the bytes
        head = ("Yes: " if (read if q.direction == "read" else written) else "No: ") + _lower_first(head)
    values += [exact(f.bytes_read if q.direction == "read" else f.bytes_written, "bytes") for f in files]
    # Through which interface: each counted layer's own bytes, in the same sentence ("at STDIO", since "through
    # STDIO" reads as the STDIO-bulk finding to the verifier).
    per = [
        (
            i.name,
            i.own_bytes_read if q.direction == "read" else i.own_bytes_written if q.direction == "write" else _moved(i),
        )
        for i in _counted(report)
    ]
    per = sorted([(name, n) for name, n in per if n > 0], key=lambda x: -x[1])
    if len(per) == 1:
        head += f" (all at {per[0][0]})"
    elif per and per[0][1] >= 0.99 * sum(n for _, n in per):
        # The leading layer's bytes would print as the total itself: one number per fact.
        head += (
            f" (nearly all through {per[0][0]}; " + ", ".join(f"{_b(n)} through {name}" for name, n in per[1:]) + ")"
        )
        values += [exact(n, "bytes") for _, n in per[1:]]
    elif per:
        head += " (" + ", ".join(f"{_b(n)} at {name}" for name, n in per) + ")"
        values += [exact(n, "bytes") for _, n in per]
    below, bv = _beneath(report, read, written, q.direction)
    return f"{head}{tail}.{below}", values + bv, [f.path for f in files], []


def _file_system(report: Report, q: Query) -> _Out:
    files = sorted(
        report.top_files,
        key=(lambda f: -f.bytes_written)
        if q.direction == "write"
        else (lambda f: -f.bytes_read)
        if q.direction == "read"
        else (lambda f: -(f.bytes_read + f.bytes_written)),
    )
    files = [f for f in files if f.file_system]
    group = None if q.target else group_named(report, q.raw)
    if group is not None:
        # "which filesystem are the test h5 files on?": a file of that group, not the busiest file
        rx = group_regex(group)
        members = [f for f in files if rx.fullmatch(f.path)]
        if not members and group.file_system:
            # None of its files is among the busiest: the group's own file system answers
            fs = group.file_system
            named = _FS_NAMES.get(fs, fs.upper() if len(fs) <= 4 else fs)
            text = f"The {group.files:,} `{group.pattern}` files were on {named}."
            return text, [exact(group.files, "bare")], [], []
        files = members or files
    files = [f for f in files if _named(f.path, q.target)] or files
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
        text = f"The {what} file `{f.path}` was on {named} ({_b(f.bytes_read + f.bytes_written)} moved{chunk}){also}."
        wanted = _asked_file_systems(q.raw)
        if q.yes_no and wanted:
            # "Is test.out on NFS?", "was it on a parallel file system like lustre or gpfs?": yes or no first
            text = ("Yes: " if fs in wanted else "No: ") + _lower_first(text)
        values = [exact(f.bytes_read + f.bytes_written, "bytes")]
        values += [exact(f.chunk_size, "bytes")] if f.chunk_size else []
        return text, values, [f.path], []
    if report.file_system:
        return f"Most of the job's bytes went to {report.file_system}.", [], [], []
    return None


_FS_WORDS = {
    "nfs": {"nfs", "nfs4"},
    "lustre": {"lustre"},
    "gpfs": {"gpfs"},
    "daos": {"daos"},
    "beegfs": {"beegfs"},
    "xfs": {"xfs"},
    "ext4": {"ext4"},
    "local": {"ext4", "xfs", "ext3", "btrfs"},
    "parallel": {"lustre", "gpfs", "daos", "beegfs"},
}


def _asked_file_systems(question: str) -> set[str]:
    """The file-system kinds a yes/no question asks about ("on NFS?", "a parallel file system like lustre or
    gpfs?", "on a local disk?"); empty when it names none (then it asks which, not whether)."""
    q = question.lower()
    out: set[str] = set()
    for word, kinds in _FS_WORDS.items():
        if re.search(
            rf"\b{word}\b" + (r"\s+(file\s*system|fs|disk|storage)" if word in ("local", "parallel") else ""), q
        ):
            out |= kinds
    return out


def _named(path: str, target: str | None) -> bool:
    """Whether ``path`` is the file (or one of the files, for ``.npz``) the question names; a name with a
    placeholder ("rankN.csv", "atoms.*.txt", "field_XXXX.dat") names every file it fits."""
    if not target:
        return True
    base = path.rsplit("/", 1)[-1]
    if base == target or (target.startswith(".") and base.endswith(target)) or target in base:
        return True
    pattern = name_pattern(target)
    return bool(pattern and pattern.fullmatch(base))


# A run of digits written as a placeholder in a file name: "rankN.csv", "atoms.*.txt", "field_XXXX.dat",
# "out.<rank>.h5", "chk#.bin". A capital N only after a lower-case letter or separator ("RUN.csv" is a name).
_PLACEHOLDER = re.compile(r"\*|(?<=[a-z_.\-])(?:N|X{2,}|x{3,}|#+|<\w+>|\{\w+\})(?=[._\-]|$)")


def name_pattern(name: str) -> re.Pattern[str] | None:
    """The file-name pattern a name with placeholders stands for, or None when it has none."""
    if not _PLACEHOLDER.search(name):
        return None
    out, at = [], 0
    for m in _PLACEHOLDER.finditer(name):
        # "*" is any text; the others stand for the digits of a number
        out += [re.escape(name[at : m.start()]), "[^/]*" if m.group(0) == "*" else r"\d+"]
        at = m.end()
    return re.compile("".join([*out, re.escape(name[at:])]), re.IGNORECASE)


def _osts(report: Report, q: Query) -> _Out:
    if not report.osts:
        fs = _FS_NAMES.get(report.file_system or "", report.file_system or "")
        on = f": the job's data is on {fs}, which has no OSTs" if fs and fs != "Lustre" else ""
        return f"The log has no Lustre layouts, so it names no OSTs{on}.", [], [], []
    n = len(report.osts)
    return f"The job's files landed on {n:,} OST(s).", [exact(n, "bare")], [], []


def _collective(report: Report, q: Query) -> _Out:
    most = bool(re.search(r"\b(most|majority|mostly)\b", q.raw.lower()))  # "were most writes collective?"
    xl = report.cross_layer
    mpi = next((la for la in (xl.job_layers if xl else []) if la.layer == "MPI-IO"), None)
    if mpi is None:
        return "No: the job made no MPI-IO calls, so no collective I/O.", [], [], []
    on = next((f for f in xl.files if _named(f.path, q.target)), None) if xl is not None and q.target else None
    own = on.layer("MPI-IO") if on is not None else None
    if own is not None:
        # "were the writes to can_I_out_h0.nc collective?": that file's own MPI-IO counts, not the job's
        mpi = own
    else:
        on = None
    cw, iw = mpi.collective_writes or 0, mpi.independent_writes or 0
    cr, ir = mpi.collective_reads or 0, mpi.independent_reads or 0
    if q.direction == "both" and cw + iw and cr + ir:
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
    if q.yes_no or not re.search(r"\b(how many|number of|count)\b", asked):
        text = f"{answer}: {coll:,} collective and {ind:,} independent MPI-IO {verb}{of}."
    elif re.search(r"\bindependent\w*\b", asked):
        text = f"{ind:,} of the {coll + ind:,} MPI-IO {verb} were independent ({coll:,} collective)."
    else:
        text = f"{coll:,} of the {coll + ind:,} MPI-IO {verb} were collective ({ind:,} independent)."
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


def _sharing(report: Report, q: Query) -> _Out:
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


def _stripe(report: Report, q: Query) -> _Out:
    out = _stripe_facts(report, q)
    if out is None or not q.yes_no:
        return out
    # "Is X on a single OST?" / "is X striped across several OSTs?": yes or no first, from its stripe count.
    text, values, paths, ranks = out
    count = next((v.value for v in values if v.dim == "bare"), None) if paths else None
    asked = q.raw.lower()
    single = re.search(r"\b(single|one|1|only one|just one)\s+(ost|stripe)", asked)
    several = re.search(r"\b(several|multiple|many|more than one|across|over)\b", asked)
    if count is None or not (single or several):
        return out
    yes = count == 1 if single else count > 1
    return ("Yes: " if yes else "No: ") + _lower_first(text), values, paths, ranks


def _stripe_facts(report: Report, q: Query) -> _Out:
    asks_osts = bool(re.search(r"\bosts?\b", q.raw.lower()))
    if q.target and (asks_osts or not any(_named(x.path, q.target) for x in report.lustre_layouts)):
        # A named file beyond the assessed layouts: its own stripe counters.
        f = next((x for x in report.top_files if _named(x.path, q.target) and x.stripe_count), None)
        if f is not None and f.stripe_count and f.stripe_size:
            on = ""
            if f.osts:
                shown = ", ".join(str(o) for o in f.osts[:8]) + (" ..." if len(f.osts) > 8 else "")
                on = f", on OST{'s' if len(f.osts) > 1 else ''} {shown}"
            return (
                f"`{f.path}` has stripe count {f.stripe_count} and stripe size {_b(f.stripe_size)}{on}.",
                [exact(f.stripe_count, "bare"), exact(f.stripe_size, "bytes"), *(exact(o, "bare") for o in f.osts[:8])],
                [f.path],
                [],
            )
    if not report.lustre_layouts:
        fs = report.file_system or "a file system without Lustre layouts"
        fs = _FS_NAMES.get(fs, fs)
        no = "No: t" if q.yes_no else "T"
        return (
            f"{no}he log has no Lustre layouts: the job's data is on {fs}, where striping does not apply.",
            [],
            [],
            [],
        )
    named = [x for x in report.lustre_layouts if _named(x.path, q.target)] or report.lustre_layouts
    lay = max(named, key=lambda x: x.bytes_moved)
    osts = next((f.osts for f in report.top_files if f.path == lay.path and f.osts), [])
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


def _slow_ost(report: Report, q: Query) -> _Out:
    f = report.finding("L04")
    if f is not None and f.severity in (Severity.CRITICAL, Severity.WARNING, Severity.INFO):
        ost = next((m.value for m in f.evidence if m.name == "slow_ost"), None)
        count = next((int(m.value) for m in f.evidence if m.name == "ranks_on_slow_ost"), len(f.ranks))
        hit, hv = _ranks_on_slow_ost(report, list(f.ranks), count)
        todo = ""
        if re.search(r"\b(do|fix|should|can)\b", q.raw.lower()):
            from iodiag.analysis.verdict import action_for

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
            f"No OST can be compared with another: the job used {len(report.osts)} OST(s) with enough data.",
            [exact(len(report.osts), "bare")],
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


def _ranks_on_slow_ost(report: Report, hit: list[int], count: int) -> tuple[str, list[Quantity]]:
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


def _slow_ranks(report: Report, q: Query) -> _Out:
    """Which ranks are slow: those whose files sit on a slow OST, else those the imbalance finding names."""
    f = report.finding("L04")
    if f is not None and f.ranks:
        ost = next((m.value for m in f.evidence if m.name == "slow_ost"), None)
        count = next((int(m.value) for m in f.evidence if m.name == "ranks_on_slow_ost"), len(f.ranks))
        hit, hv = _ranks_on_slow_ost(report, list(f.ranks), count)
        shown = ", ".join(str(r) for r in f.ranks[:8]) + (", ..." if count > min(len(f.ranks), 8) else "")
        tail = hit.split("), ", 1)[1] if "), " in hit else ""
        text = f"{count:,} rank(s) are slow ({shown}): their data sits on slow OST {ost}" + (
            f", {tail}" if tail else ""
        )
        return text + ".", hv, [], list(f.ranks)
    return _any_slow_rank(report, q)


def _chunk_size(report: Report, q: Query) -> _Out:
    """A DAOS file's chunk size (DFS_CHUNK_SIZE) and how its requests sit against it."""
    files = [f for f in report.top_files if f.chunk_size and _named(f.path, q.target)]
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
        text += f"; {whose} requests are mostly {_b(size)} ({f.common_count:,} of them)"
        values += [exact(size, "bytes"), exact(f.common_count, "bare")]
        if size % chunk == 0:
            text += f", {size // chunk:,} chunk(s) each"
            fits = True
        else:
            text += ", not a multiple of the chunk, so requests straddle chunk boundaries"
            fits = False
    if q.yes_no and fits is not None and re.search(r"\b(multiple|align\w*|fit\w*|match\w*)\b", q.raw.lower()):
        text = ("Yes: " if fits else "No: ") + _lower_first(text)
    return text + ".", values, [f.path], []


def _rank_files(report: Report, q: Query) -> _Out:
    """How many files one rank used: its own records, and the shared ones every rank holds."""
    rank = int(q.target or 0)
    t = report.rank_table
    u = _own(report, rank)
    if u is None:
        if t.truncated:
            return None
        shared = f"; it used only the {t.shared_files:,} shared file(s) every rank has" if t.shared_files else ""
        return f"Rank {rank} has no file records of its own{shared}.", [exact(t.shared_files, "bare")], [], [rank]
    shared = f", besides the {t.shared_files:,} shared file(s) Darshan keeps one record for" if t.shared_files else ""
    return (
        f"Rank {rank} used {u.files:,} file(s) of its own{shared}.",
        [exact(u.files, "bare"), *([exact(t.shared_files, "bare")] if t.shared_files else [])],
        [],
        [rank],
    )


def _rate(report: Report, q: Query) -> _Out:
    if q.target:
        f = next((x for x in report.top_files if _named(x.path, q.target) and x.slowest_s), None)
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
        total = sum(_totals(report))
        job_rate = total / s.slowest_rank_io_s
        head = f"The job moved {_b(total)} in {_s(s.slowest_rank_io_s)} of I/O on its busiest rank ({_b(job_rate)}/s); "
        values += [
            exact(total, "bytes"),
            exact(s.slowest_rank_io_s, "seconds"),
            exact(total / s.slowest_rank_io_s, "rate"),
        ]
    return head + "; ".join(parts) + ".", values, [], []


def _metadata(report: Report, q: Query) -> _Out:
    rows = _counted(report)
    meta = sum(i.own_meta_s for i in rows)
    data = sum(i.own_read_s + i.own_write_s for i in rows)
    if meta + data <= 0:
        return None
    word = ""
    if q.yes_no and re.search(_MOST_OF, q.raw.lower()):
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
    return (
        f"{word}{'m' if word else 'M'}etadata calls (open, stat, seek, close) took {_s(meta)} summed over ranks, "
        f"{percent(meta / (meta + data))} of "
        f"the job's I/O time{where}; reads and writes took {_s(data)}.",
        [exact(meta, "seconds"), exact(meta / (meta + data) * 100, "percent"), exact(data, "seconds")]
        + (
            [exact(float(busiest), "seconds"), exact(float(busiest) / run * 100, "percent")]
            if busiest and run > 0
            else []
        ),
        [],
        [],
    )


def _ranks(report: Report, q: Query) -> _Out:
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


def _files(report: Report, q: Query) -> _Out:
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
        return _group_answer(group, q)
    if q.direction in ("read", "write") and (report.files_read or report.files_written):
        n, verb = (report.files_read, "read") if q.direction == "read" else (report.files_written, "wrote")
        return (
            f"The job {verb} {n:,} file(s) (of {report.files_with_io:,} with any I/O).",
            [exact(n, "bare"), exact(report.files_with_io, "bare")],
            [],
            [],
        )
    text = f"The job did I/O on {report.files_with_io:,} file(s)"
    values = [exact(report.files_with_io, "bare")]
    per = [(i.name, i.own_files) for i in report.interfaces if i.own_files]
    if len(per) > 1:
        # "How many files?" often means the ones of the main interface: each count, in the same sentence.
        text += ": " + ", ".join(f"{n:,} at {name}" for name, n in sorted(per, key=lambda x: -x[1]))
        values += [exact(n, "bare") for _, n in per]
    return text + ".", values, [], []


def _runtime(report: Report, q: Query) -> _Out:
    r = report.job.runtime_s
    return f"The job ran for {_s(r)}.", [exact(r, "seconds")], [], []


def _io_share(report: Report, q: Query) -> _Out:
    s = report.io_share
    if s is None:
        return None
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


def _write_vs_read(report: Report, q: Query) -> _Out:
    rows = _counted(report)
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
    cause = next(
        (
            f
            for f in report.findings
            if f.severity in (Severity.CRITICAL, Severity.WARNING)
            and f.impact
            and f.code not in ("J02", "J04", "P19", "T01")
            and f.code in {c.code for c in report.verdict.causes}
        ),
        None,
    )
    why = (
        f" The largest cost in the log is {_lower_first(cause.title)} ({cause.code})."
        if cause
        else (" No finding in the log explains the difference: it is the storage's own speed for each direction.")
    )
    text = (
        f"{slower} took {_s(max(w_s, r_s))} summed over ranks against {_s(min(w_s, r_s))} {faster}: "
        f"{_b(w_b)} written at {_b(w_b / w_s)}/s and {_b(r_b)} read at {_b(r_b / r_s)}/s per rank.{why}"
    )
    values = [
        exact(w_s, "seconds"),
        exact(r_s, "seconds"),
        exact(w_b, "bytes"),
        exact(r_b, "bytes"),
        exact(w_b / w_s, "rate"),
        exact(r_b / r_s, "rate"),
    ]
    return text, values, [], []


def _rank_dispatch(report: Report, q: Query) -> _Out:
    return (
        _rank_bytes(report, q)
        if q.scope == "rank"
        else (_iface_bytes(report, q) if q.scope == "interface" else _job_bytes(report, q))
    )


def _request_size(report: Report, q: Query) -> _Out:
    if q.target:
        f = next((x for x in report.top_files if _named(x.path, q.target)), None)
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
            head = f"The most common request size on `{f.path}` was {_b(f.common_size)} ({f.common_count:,}"
            head += f" of its {n:,} {noun})" if n >= f.common_count else " requests)"
            body = text.replace(f"On `{f.path}`, ", "", 1)
            return (
                f"{head}; {body}",
                [exact(f.common_size, "bytes"), exact(f.common_count, "bare"), *values],
                paths,
                ranks,
            )
    t = report.rank_table
    why = re.search(r"\bwhy\b", q.raw.lower())
    if why:
        kind = "writes" if q.direction == "write" else "reads" if q.direction == "read" else None
        calls = [
            (i, int(getattr(i.calls, kind)) if kind else i.calls.reads + i.calls.writes)
            for i in _counted(report)
            if i.name != "POSIX"
        ]
        posix = next((i for i in report.interfaces if i.name == "POSIX"), None)
        mine = (int(getattr(posix.calls, kind)) if kind else posix.calls.reads + posix.calls.writes) if posix else 0
        other = max(calls, key=lambda x: x[1], default=None)
        if other is not None and other[1] > mine:
            # Most of the calls asked about are at another module (STDIO's fwrite, DFS): its mean request size
            i, n = other
            moved = i.own_bytes_written if kind == "writes" else i.own_bytes_read if kind == "reads" else _moved(i)
            noun = kind or "reads and writes"
            if n and moved:
                size = moved / n
                lead = "Because the requests are small: " if size <= SMALL_REQUEST else ""
                text = f"{lead}{'m' if lead else 'M'}ost {noun} went through {i.name}: {n:,} of {_b(size)} on average"
                return text + ".", [exact(n, "bare"), exact(size, "bytes")], [], []
    if not t.access_sizes:
        return None
    top = t.access_sizes[0]
    total = sum(a.count for a in t.access_sizes)
    rest = ", ".join(f"{_b(a.size)} ({a.count:,})" for a in t.access_sizes[1:3])
    text = f"Most POSIX requests were {_b(top.size)}: {top.count:,} of the {t.posix_requests:,} reads and writes" + (
        f"; next {rest}." if rest else "."
    )
    values = [exact(top.size, "bytes"), exact(top.count, "bare"), exact(t.posix_requests, "bare"), exact(total, "bare")]
    values += [v for a in t.access_sizes[1:3] for v in (exact(a.size, "bytes"), exact(a.count, "bare"))]
    if why and top.size <= SMALL_REQUEST and top.count >= 0.5 * t.posix_requests:
        # "why half a million writes for 7 GB?": the requests are small, so the bytes take that many calls
        text = f"Because the requests are small: {_lower_first(text)}"
    return text, values, [], []


def _file_request_size(path: str, layer: str, calls: OpCounts, read: int, written: int, direction: Direction) -> _Out:
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


def _io_bound(report: Report, q: Query) -> _Out:
    v, s = report.verdict, report.io_share
    if s is None or v.io_matters is None:
        if s is None or s.runtime_s <= 0:
            return "The log cannot tell: it does not hold all of the job's I/O.", [], [], []
        kept = [m for m in report.job.modules if m.partial and m.records]
        why = "".join(f", {m.name} kept only {m.records:,} records" for m in kept[:1])
        return (
            f"The log cannot tell, as it does not hold all of the job's I/O{why}: what it recorded is "
            f"{_s(s.slowest_rank_io_s)} on the busiest rank, {percent(s.share_slowest)} of the {_s(s.runtime_s)} run.",
            [
                *(exact(m.records, "bare") for m in kept[:1]),
                exact(s.slowest_rank_io_s, "seconds"),
                exact(s.share_slowest * 100, "percent"),
                exact(s.runtime_s, "seconds"),
            ],
            [],
            [],
        )
    share = (
        f"I/O took {percent(s.share_slowest)} of the {_s(s.runtime_s)} run on the busiest rank "
        f"({_s(s.slowest_rank_io_s)})"
    )
    values = [
        exact(s.share_slowest * 100, "percent"),
        exact(s.runtime_s, "seconds"),
        exact(s.slowest_rank_io_s, "seconds"),
    ]
    if q.share is not None:
        # "is more than a third of the run I/O?": against the share asked, whatever the verdict
        above = s.share_slowest > q.share
        asked_below = re.search(r"\b(less than|under|below)\b", q.raw.lower())
        yes = not above if asked_below else above
        return f"{'Yes' if yes else 'No'}: {share}.", values, [], []
    if v.io_matters and q.bound and s.share_slowest < BOUND_SHARE:
        # "I/O-bound" means I/O takes a large part of the run; a share worth cutting is not that.
        return f"No: {share}, so the job is not I/O-bound, though that share is worth cutting.", values, [], []
    if v.io_matters:
        return f"Yes: {share}.", values, [], []
    return f"No: {share}; the rest is computation and communication.", values, [], []


BOUND_SHARE = 1 / 3
"""The share of the run above which a job is called I/O-bound (I/O is a large part of it, not just worth cutting)."""


def _io_problem(report: Report, q: Query) -> _Out:
    """Is something wrong with the job's I/O? Yes when the verdict names a cause; no when I/O does not matter or
    nothing in the pattern is at fault (then the rate is what bounds it). "Is it healthy?" flips the word."""
    v, s = report.verdict, report.io_share
    if s is None or v.io_matters is None:
        return _io_bound(report, q)
    problem, no = ("No: ", "Yes: ") if q.healthy else ("Yes: ", "No: ")
    share = (
        f"I/O took {percent(s.share_slowest)} of the {_s(s.runtime_s)} run on the busiest rank "
        f"({_s(s.slowest_rank_io_s)})"
    )
    values = [
        exact(s.share_slowest * 100, "percent"),
        exact(s.runtime_s, "seconds"),
        exact(s.slowest_rank_io_s, "seconds"),
    ]
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
        f"{problem}{share}, and the largest cost is {_lower_first(f.title)} ({named}){priced}{more}.",
        values,
        [],
        [],
    )


def _top_file(report: Report, q: Query) -> _Out:
    files = [f for f in report.top_files if f.io_time_s > 0]
    if q.direction == "read":
        files = [f for f in files if f.bytes_read] or files
    elif q.direction == "write":
        files = [f for f in files if f.bytes_written] or files
    if not files:
        return None
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
    if len(files) > 1:
        nxt = files[1]
        text += f"; next is `{nxt.path}` ({_s(nxt.io_time_s)})"
        values.append(exact(nxt.io_time_s, "seconds"))
    return text + ".", values, [f.path for f in files[:2]], []


def _file_list(report: Report, q: Query) -> _Out:
    files = sorted(report.top_files, key=lambda f: -(f.bytes_read + f.bytes_written))
    files = [f for f in files if f.bytes_read + f.bytes_written > 0][:5]
    if not files:
        return "The log records no bytes read or written.", [], [], []
    parts = [f"`{f.path}` ({_b(f.bytes_read)} read, {_b(f.bytes_written)} written)" for f in files]
    n = report.files_with_io
    more = f"; {n - len(files):,} more file(s) moved less" if n > len(files) else ""
    read, written = _totals(report)
    text = f"The job read {_b(read)} and wrote {_b(written)}; by bytes moved: {'; '.join(parts)}{more}."
    values = [exact(read, "bytes"), exact(written, "bytes")]
    values += [exact(v, "bytes") for f in files for v in (f.bytes_read, f.bytes_written)]
    return text, values, [f.path for f in files], []


def _interfaces(report: Report, q: Query) -> _Out:
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


def _completeness(report: Report, q: Query) -> _Out:
    problems = [f for f in report.findings if f.code in ("D01", "D02", "D04")]
    partial = [i.name for i in report.interfaces if i.partial]
    if not problems and not partial:
        return (
            f"{'Yes: ' if q.yes_no else ''}the log is complete as far as its own flags and records show: no module "
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
            parts.append(f"{bad:,} of {bad + kept_n:,} {ev.get('module', '')} records")
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


def _small_requests(report: Report, q: Query) -> _Out:
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
    return f"Yes: {_lower_first(f.message.rstrip('.'))}{priced} ({f.code}).", cv, [], []


def _any_slow_rank(report: Report, q: Query) -> _Out:
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
            f"{yes if q.yes_no else ''}{_lower_first(j04.message) if q.yes_no else j04.message}",
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


def _file_usage(report: Report, q: Query) -> _Out:
    f = next((x for x in report.top_files if _named(x.path, q.target)), None)
    if f is None:
        return None
    who = f"its {f.ranks:,} ranks" if f.ranks > 1 else "its 1 rank"
    # With the calls that moved them ("8.00 GiB written in 524,288 write calls").
    rc = f" in {f.calls.reads:,} read calls" if f.calls.reads else ""
    wc = f" in {f.calls.writes:,} write calls" if f.calls.writes else ""
    if q.direction == "read":
        head = f"`{f.path}`: {_b(f.bytes_read)} read{rc}"
    elif q.direction == "write":
        head = f"`{f.path}`: {_b(f.bytes_written)} written{wc}"
    else:
        head = f"`{f.path}`: {_b(f.bytes_written)} written{wc} and {_b(f.bytes_read)} read{rc}"
    text = f"{head}, in {_s(f.io_time_s)} of I/O summed over {who} (counted at {f.layer})."
    if q.yes_no and q.direction == "both":
        text = ("Yes: " if f.bytes_read and f.bytes_written else "No: ") + text
    elif q.yes_no:
        moved = f.bytes_read if q.direction == "read" else f.bytes_written
        text = ("Yes: " if moved else "No: ") + text
    values = [exact(f.bytes_read, "bytes"), exact(f.bytes_written, "bytes"), exact(f.io_time_s, "seconds")]
    values += [exact(n, "bare") for n in (f.calls.reads, f.calls.writes) if n]
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
        text = f"{doing} `{f.path}` took {_s(f.slowest_s)} on its slowest rank{who}{of_run}; " + _lower_first(
            text.replace(f"`{f.path}`: ", "", 1)
        )
        values[:0] = [exact(f.slowest_s, "seconds")] + (
            [exact(f.slowest_s / run * 100, "percent"), exact(run, "seconds")] if run > 0 else []
        )
    return text, values, [f.path], []


def _alignment(report: Report, q: Query) -> _Out:
    """How many of a file's (or the job's) POSIX requests did not start on the file alignment Darshan measured
    against. ``q.missing`` asks "misaligned?", answered yes where "aligned?" is no."""
    f = next((x for x in report.top_files if q.target and _named(x.path, q.target)), None)
    if f is None and q.target:
        return None  # a file the report does not detail: not the job's count instead
    if f is None:
        word = _loose_name(" ".join(q.raw.lower().split()), report, plural=False)
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
    n, bad = c.reads + c.writes, c.file_not_aligned
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
    values = [exact(bad, "bare"), exact(n, "bare"), exact(bad / n * 100, "percent")]
    values += [exact(align, "bytes")] if align else []
    if f is not None and f.common_size:
        text += f"; most requests were {_b(f.common_size)}"
        values.append(exact(f.common_size, "bytes"))
    if f is not None and f.stripe_size:
        text += f", and its stripe size is {_b(f.stripe_size)}"
        values.append(exact(f.stripe_size, "bytes"))
    text = word + (_lower_first(text) if word else text[0].upper() + text[1:])
    return text + ".", values, paths, []


def _file_library(report: Report, q: Query) -> _Out:
    """Which libraries a named file went through: the interfaces whose records name it, top layer first."""
    order = ["HDF5", "HDF5 (files)", "PnetCDF", "PnetCDF (files)", "MPI-IO", "POSIX", "STDIO", "DFS", "DAOS"]
    seen: list[str] = []
    path = ""
    for i in sorted(report.interfaces, key=lambda x: order.index(x.name) if x.name in order else 99):
        hit = next((p for p in i.top_paths if _named(p.split(":")[0], q.target)), None)
        name = i.name.split(" (")[0]
        if hit and name not in seen:
            seen.append(name)
            path = path or hit.split(":")[0]
    f = next((x for x in report.top_files if _named(x.path, q.target)), None)
    if f is not None:
        path = path or f.path
        for layer in (f.layer, "POSIX" if f.posix_calls is not None else ""):
            if layer and layer not in seen:
                seen.append(layer)
    if not seen:
        return None
    text = f"`{path}` went through {seen[0]}" + (f", on top of {' and '.join(seen[1:])}" if len(seen) > 1 else "")
    if f is None:
        return text + ".", [], [path], []
    # With what moved through it ("how much did it write to X, and via what interface?").
    text += f": {_b(f.bytes_written)} written and {_b(f.bytes_read)} read (counted at {f.layer})."
    return text, [exact(f.bytes_written, "bytes"), exact(f.bytes_read, "bytes")], [path], []


def _file_share(report: Report, q: Query) -> _Out:
    """A loosely named file's (or group's) share of the run: the time its slowest rank spent on it."""
    run = report.job.runtime_s
    word = q.target or ""
    groups = [g for g in report.file_groups if word and _group_has(g, word) and g.slowest_s > 0]
    group = max(groups, key=lambda g: (g.files, g.io_time_s), default=None) or group_named(report, q.raw)
    if group is None or group.files < 2:
        f = next((x for x in report.top_files if word in x.path.rsplit("/", 1)[-1].lower() and x.slowest_s), None)
        if f is None or run <= 0:
            return None
        # Its time on its slowest rank and share of the run lead, whatever words the question used.
        asked = {"target": f.path.rsplit("/", 1)[-1], "yes_no": False, "raw": f"{q.raw} (share of the run)"}
        out = _file_usage(report, q.model_copy(update=asked))
        took = f.slowest_s or 0.0
    else:
        if run <= 0:
            return None
        took = max(group.slowest_s, _per_rank(group))
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
        bar = 0.5 if re.search(r"\bdominat", q.raw.lower()) else 0.1
        text = ("Yes: " if took >= bar * run else "No: ") + _lower_first(text)
    return text, values, files, ranks


_FS_NAMES = {
    "nfs": "NFS",
    "lustre": "Lustre",
    "gpfs": "GPFS",
    "xfs": "a local XFS disk",
    "ext4": "a local ext4 disk",
    "daos": "DAOS (through DFS)",
}


def _file_slowest(report: Report, q: Query) -> _Out:
    f = next((x for x in report.top_files if _named(x.path, q.target)), None)
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
        f"(of {f.ranks:,} ranks; {_s(f.io_time_s)} summed over them, counted at {f.layer})."
    )
    return text, [exact(f.slowest_s, "seconds"), exact(f.io_time_s, "seconds")], [f.path], [f.slowest_rank]


def _group_calls(group: FileGroup, kind: str, noun: str) -> _Out:
    n = getattr(group.calls, kind)
    text = f"The {group.files:,} `{group.pattern}` files had {n:,} {noun}."
    return text, [exact(group.files, "bare"), exact(n, "bare")], [], []


def _calls(report: Report, q: Query) -> _Out:
    """How many calls of one kind: on a named file, on a group of files, or over the job per module."""
    kind = q.target or "opens"
    noun = _CALL_NOUN.get(kind, kind)
    globbed = _glob_group(report, q.raw)  # a pattern names a group even where a file name sits inside it
    if globbed is not None:
        return _group_calls(globbed, kind, noun)
    if q.file:
        f = next((x for x in report.top_files if _named(x.path, q.file)), None)
        if f is None:
            return None
        n, layer = getattr(f.calls, kind), f.layer
        if not n and f.posix_calls is not None and getattr(f.posix_calls, kind):
            n, layer = getattr(f.posix_calls, kind), "POSIX"
        moved = {"reads": f.bytes_read, "writes": f.bytes_written}.get(kind, 0) if layer == f.layer else 0
        if n and moved:
            # "how many fwrite calls went into reads.fastq, and how big?": the mean size comes with the count
            text = f"`{f.path}` had {n:,} {noun} of {_b(moved / n)} on average (counted at {layer})."
            return text, [exact(n, "bare"), exact(moved / n, "bytes")], [f.path], []
        return f"`{f.path}` had {n:,} {noun} (counted at {layer}).", [exact(n, "bare")], [f.path], []
    group = group_named(report, q.raw)
    if group is not None:
        return _group_calls(group, kind, noun)
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


def _sized_calls(report: Report, kind: str, noun: str, question: str) -> _Out:
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
            f"{_CALL_NOUN.get('reads' if kind == 'writes' else 'writes', 'calls')} in all."
        )
        values += [exact(mine, "bare"), exact(other, "bare")]
    return text, values, [], []


def _calls_per_rank(report: Report, kind: str, noun: str) -> _Out:
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
        note, nv = _shared_note(report)
        text += note
        values += nv
    return text, values, [], []


# Words before "files" that name no pattern ("how many output files?" is every written file).
_NOT_A_KIND = frozenset({"the", "of", "all", "any", "many", "much", "different", "unique", "distinct", "separate"})


def group_named(report: Report, question: str) -> FileGroup | None:
    """The file group a question names by the word(s) before "files" ("json files", "restart files", ".npz
    files", "config files"): the group with the most files whose extension, name or folder the word is."""
    globbed = _glob_group(report, question)
    if globbed is not None:
        return globbed
    found: list[FileGroup] = []
    nouns = (
        r"(?:files?|shards?|records?|chunks?|tables?|images?|frames?|dumps?|snapshots?|checkpoints?|tiles?|samples?"
        r"|patch(?:es)?|events?|slices?|libs?|librar(?:y|ies))"
    )
    # A lookahead, so "of the shard files" is tried at "the shard files" too (matches overlap).
    for m in re.finditer(rf"(?=\b((?:\.?[a-z0-9_]+ ){{1,2}}){nouns}\b)", question.lower()):
        for w in m.group(1).split():
            if w in _NOT_A_NAME or w in _NOT_A_KIND or len(w.lstrip(".")) < 2:
                continue
            found += [g for g in report.file_groups if _group_has(g, w)]
    if not found:
        # The noun can be the name itself: "reading snapshots" names the snap_#.# files, "the shards" shard_#.npy
        for m in re.finditer(rf"\b({nouns})\b", question.lower()):
            noun = m.group(1).removesuffix("s")
            if noun != "file":
                found += [g for g in report.file_groups if g.files > 1 and _group_has(g, noun)]
    return max(found, key=lambda g: (g.files, g.bytes_read + g.bytes_written), default=None)


def _glob_group(report: Report, question: str) -> FileGroup | None:
    """The group a shell pattern in the question names ("conf/table*.dat", "chk00369/part.*", "*.yaml"): every
    word of the pattern is in the group's folder, name or extension; the most files win."""
    best: FileGroup | None = None
    # "rankN.csv" and "field_XXXX.dat" are patterns too: their placeholders become "*"
    question = " ".join(_PLACEHOLDER.sub("*", w) if "." in w else w for w in question.split())
    for m in re.finditer(r"[\w./-]*\*[\w.*/-]*", question.lower()):
        words = [w for w in re.split(r"[^a-z0-9_]+", m.group(0)) if len(w) >= 2]
        if not words:
            continue
        for g in report.file_groups:
            pattern = g.pattern.lower()
            ext = pattern.rsplit(".", 1)[-1] if "." in pattern.rsplit("/", 1)[-1] else ""
            if all(w == ext or w in pattern for w in words) and (best is None or g.files > best.files):
                best = g
    return best


def _group_has(g: FileGroup, word: str) -> bool:
    folder, _, base = g.pattern.rpartition("/")
    ext = base.rsplit(".", 1)[-1].lower() if "." in base else ""
    w = word.lstrip(".")
    if w == ext:
        return True
    if word.startswith(".") or len(w) < 4:
        return False
    tokens = {t for t in re.split(r"[^a-z0-9]+", (folder.rsplit("/", 1)[-1] + " " + base).lower()) if len(t) >= 4}
    return any(t.startswith(w) or w.startswith(t) for t in tokens)


def _file_compare(report: Report, q: Query) -> _Out:
    """Two named files side by side: how long each took on its slowest rank (the time the job waited on it)."""
    a = next((x for x in report.top_files if _named(x.path, q.target)), None)
    b = next((x for x in report.top_files if _named(x.path, q.file)), None)
    if a is None or b is None or a.path == b.path:
        return None

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


def _group(report: Report, q: Query) -> _Out:
    g = group_named(report, q.raw)
    if g is None:
        return None
    if q.yes_no and q.direction in ("read", "write"):
        some = g.files_read if q.direction == "read" else g.files_written
        moved = g.bytes_read if q.direction == "read" else g.bytes_written
        verb, prep = ("read", "from") if q.direction == "read" else ("wrote", "to")
        if not some:
            return (
                f"No: the job {verb} no data {prep} the {g.files:,} files named `{g.pattern}`"
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
    # "how many bytes went to the out.* files?" asks what moved, not only how many files
    asks_bytes = re.search(r"\b(bytes|how much|how big|how large|data|volume|size|[kmgt]i?b)\b", q.raw.lower())
    return _group_answer(g, q, moved=bool(asks_bytes))


def _group_answer(g: FileGroup, q: Query, moved: bool = False) -> _Out:
    values = [exact(g.files, "bare")]
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
    if g.opens:
        extra.append(f"{g.opens:,} opens, {g.opens / g.files:,.0f} per file")
        values += [exact(g.opens, "bare"), exact(g.opens / g.files, "bare")]
    if g.io_time_s > 0:
        extra.append(f"{_s(g.io_time_s)} of I/O summed over ranks")
        values.append(exact(g.io_time_s, "seconds"))
    return text + (f" ({', '.join(extra)})" if extra else "") + ".", values, [], []


def _file_balance(report: Report, q: Query) -> _Out:
    f = next((x for x in report.top_files if _named(x.path, q.target)), None)
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


def _file_per_rank(report: Report, q: Query) -> _Out:
    """Each rank's bytes on one named file: from its own records, or from the fastest and slowest rank a shared
    record keeps (equal bytes at both ends: the ranks moved the same amount, as far as Darshan kept)."""
    f = next((x for x in report.top_files if _named(x.path, q.target)), None)
    if f is None:
        return None
    read = q.direction == "read" or (q.direction == "both" and f.bytes_read > f.bytes_written)
    verb, total = ("read", f.bytes_read) if read else ("wrote", f.bytes_written)
    if f.only_rank is not None:
        text = f"Only rank {f.only_rank} used `{f.path}`: it {verb} {_b(total)}."
        return ("No: " + _lower_first(text) if q.yes_no else text), [exact(total, "bytes")], [f.path], [f.only_rank]
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


def _mpi_job(report: Report, q: Query) -> _Out:
    """Whether the job ran under MPI: its process count and whether the log holds MPI-IO records."""
    n = report.job.nprocs
    mpiio = any(i.name == "MPI-IO" and i.records for i in report.interfaces)
    parallel = n > 1 or mpiio
    asked_serial = bool(re.search(r"\b(serial|single[- ]process)\b", q.raw.lower()))
    yes = (not parallel) if asked_serial else parallel
    io = "with MPI-IO records" if mpiio else "with no MPI-IO records"
    return f"{'Yes' if yes else 'No'}: the job ran {n:,} process(es), {io}.", [exact(n, "bare")], [], []


def _module(report: Report, q: Query) -> _Out:
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


def _traced(report: Report, q: Query) -> _Out:
    # A module the analysis did not load still says the log holds it (its records are not counted then).
    dxt = [m for m in report.job.modules if m.name.upper().startswith("DXT")]
    if not dxt:
        return "No: the log holds no DXT trace (DXT_POSIX or DXT_MPIIO), only Darshan's counters.", [], [], []
    parts = ", ".join(
        m.name + (f" ({m.records:,} records)" if m.records else "") + (" (partial)" if m.partial else "") for m in dxt
    )
    return f"Yes: the log holds a DXT trace: {parts}.", [exact(m.records, "bare") for m in dxt if m.records], [], []


def _interface_files(report: Report, q: Query) -> _Out:
    i = next((x for x in report.interfaces if x.name.split(" (")[0] == q.target and x.records), None)
    if i is None:
        text, values = _no_module(report, q.target or "")
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
        return (
            f"{i.name} has records of {i.files:,} file(s), with {c.opens:,} opens.",
            [exact(i.files, "bare"), exact(c.opens, "bare")],
            [],
            [],
        )
    return f"{i.name} has records of {i.files:,} file(s).", [exact(i.files, "bare")], [], []


def _file_ranks(report: Report, q: Query) -> _Out:
    """Which ranks used a named file: the one rank whose own records hold it all, every rank of a shared record
    (with the slowest Darshan kept), or how many ranks had records of it."""
    f = next((x for x in report.top_files if _named(x.path, q.target)), None)
    if f is None:
        return None
    verb = {"read": "read", "write": "wrote"}.get(q.direction, "used")
    moved = f.bytes_read if q.direction == "read" else f.bytes_written if q.direction == "write" else None
    what = f" ({_b(moved)})" if moved else ""
    values = [exact(moved, "bytes")] if moved else []
    if f.only_rank is not None:
        text = f"Rank {f.only_rank} alone {verb} `{f.path}`{what}, in {_s(f.io_time_s)} of I/O."
        if q.yes_no:
            # "Is one rank doing all the writing of X?"
            text = f"Yes: {_lower_first(text)}"
        return text, [*values, exact(f.io_time_s, "seconds")], [f.path], [f.only_rank]
    n = report.job.nprocs
    lay = next((x for x in report.lustre_layouts if x.path == f.path), None)
    if lay is not None and f.layer == "MPI-IO" and re.search(r"\bposix\b|\bfile ?system\b|\bdisk\b", q.raw.lower()):
        # Beneath collective MPI-IO only the aggregators reach the file system: the POSIX writers (readers).
        k = lay.readers if q.direction == "read" else lay.writers
        verb2 = "read" if q.direction == "read" else "wrote"
        text = f"{k:,} rank(s) {verb2} `{f.path}` at the POSIX level, of the {f.ranks:,} that used it through MPI-IO"
        if k < f.ranks and f.collective:
            text += " (collective buffering: only the aggregators reach the file system)"
        text += "."
        return text, [exact(k, "bare"), exact(f.ranks, "bare")], [f.path], []
    if q.yes_no:
        text = f"No: {f.ranks:,} ranks {verb} `{f.path}`{what}, not one alone."
        return text, [exact(f.ranks, "bare"), *values], [f.path], []
    if _every_rank(report, f):
        slow = next((k for which, k in _kept_ranks(report, q.target) if which == "slowest"), None)
        text = f"All {n:,} ranks {verb} `{f.path}`{what}: Darshan kept one shared record for it"
        if slow is not None:
            text += f", and rank {slow.rank} as its slowest, with {_s(slow.seconds)}"
            values.append(exact(slow.seconds, "seconds"))
        return text + ".", values, [f.path], [slow.rank] if slow is not None else []
    text = f"{f.ranks:,} rank(s) {verb} `{f.path}`{what}, each with a record of its own."
    return text, [exact(f.ranks, "bare"), *values], [f.path], []


def _file_why(report: Report, q: Query) -> _Out:
    """Why one named file is slow: the costliest problem that names it, with its numbers and fix."""
    target = q.target or ""
    if "." not in target.strip(".") or name_pattern(target) or _glob_group(report, q.raw) is not None:
        # A loose word ("the species yaml configs") or a pattern names a group of files: answered for the group
        loose = [g for g in report.file_groups if target and _group_has(g, target)]
        group = (
            _glob_group(report, q.raw)
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
        and any(_named(fe.path, q.target) for fe in f.files)
    ]
    if not naming:
        return _file_why_unpriced(report, q)
    from iodiag.analysis.verdict import action_for, by_verdict

    # The verdict's ranking first (a cause before the imbalance it explains), then the cost.
    place = by_verdict(report.verdict)
    f = min(naming, key=lambda x: (place(x.code), -(x.impact.seconds or 0.0)))  # type: ignore[union-attr]
    path = next(fe.path for fe in f.files if _named(fe.path, q.target))
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
        on = f", on {_FS_NAMES.get(usage.file_system, usage.file_system)}," if usage.file_system in _FS_NAMES else ""
        profile, pv = _request_profile(usage, q.direction)
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
    spread, sv = _aggregators(report, usage) if usage is not None else ("", [])
    if not spread:
        spread, sv = _kept_spread(report, path)
    values += sv
    took = f"{took[: -len(' and')].rstrip(',')}{spread}, and" if spread and took.endswith(" and") else took
    text = f"`{path}`{took} is slow mainly because of {_lower_first(f.title)} ({named}), ≈ {_s(seconds)}" + (
        f": {_lower_first(todo).rstrip('.')}" if todo else ""
    )
    return text + also + ".", values, [path], []


def group_regex(g: FileGroup) -> re.Pattern[str]:
    """The paths a group's pattern stands for ("dir/s#.yaml": digit runs; "*.json": any name)."""
    parts = re.split(r"(#|\*)", g.pattern)
    body = "".join(r"\d+" if p == "#" else r"[^/]*" if p == "*" else re.escape(p) for p in parts)
    return re.compile(("(?:.*/)?" if "/" not in g.pattern else "") + body)


def _per_rank(g: FileGroup) -> float:
    """A group's time per rank that used it (its time summed over ranks, shared over them evenly)."""
    return g.io_time_s / g.ranks if g.ranks > 0 else g.slowest_s


def _group_why(report: Report, g: FileGroup, q: Query) -> _Out:
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
    per = _per_rank(g)
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
    said = ", ".join(
        f"{n:,} {w}" + (f" ({n / g.files:,.0f} per file)" if g.files > 1 and n > g.files else "") for n, w in calls
    )
    share = f" ({percent(per / run)} of the {_s(run)} run)" if run > 0 else ""
    over = f" over its {g.ranks:,} rank(s)" if g.ranks > 1 else ""
    fs = _FS_NAMES.get(g.file_system or "", "")
    mostly, meta_values = _mostly_metadata(g.meta_time_s, g.io_time_s)
    text = (
        f"The {g.files:,} `{g.pattern}` files{f' on {fs}' if fs else ''} took about {_s(per)} per rank{over}{share}"
        f"{mostly}, with {said} "
        f"({_b(g.bytes_read + g.bytes_written)} moved)"
    )
    values = [exact(g.files, "bare"), exact(per, "seconds"), *meta_values, *(exact(n, "bare") for n, _ in calls)]
    values.append(exact(g.bytes_read + g.bytes_written, "bytes"))
    if run > 0:
        values.append(exact(per / run * 100, "percent"))
    if not naming:
        return text + "; no finding prices them as a problem.", values, [], []
    from iodiag.analysis.verdict import action_for, by_verdict

    place = by_verdict(report.verdict)
    f = min(naming, key=lambda x: (place(x.code), -(x.impact.seconds or 0.0)))  # type: ignore[union-attr]
    seconds = f.impact.seconds or 0.0  # type: ignore[union-attr]
    named = f"{f.code}: {f.subject}" if f.subject else f.code
    todo = action_for(f)
    text += f", and are slow mainly because of {_lower_first(f.title)} ({named}), ≈ {_s(seconds)}" + (
        f": {_lower_first(todo).rstrip('.')}" if todo else ""
    )
    return text + ".", [*values, exact(seconds, "seconds")], [], []


def _mostly_metadata(meta_s: float, io_s: float) -> tuple[str, list[Quantity]]:
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


def _request_profile(f: FileUsage, direction: Direction) -> tuple[str, list[Quantity]]:
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
    if f.common_size and f.common_count >= 0.5 * n:
        text += f" of mostly {_b(f.common_size)}"
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
    return text, values


def _kept_spread(report: Report, path: str) -> tuple[str, list[Quantity]]:
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


def _aggregators(report: Report, f: FileUsage) -> tuple[str, list[Quantity]]:
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


def _layer_gap(report: Report, q: Query) -> _Out:
    """MPI-IO time against the POSIX time beneath it, for the named file or the one with the most MPI-IO time:
    on the slowest rank where Darshan kept one shared POSIX record, else summed over ranks. What is not in the
    POSIX calls was spent above the file system (collective buffering's exchange, waiting for other ranks)."""
    xl = report.cross_layer
    if xl is None or not xl.files:
        return None
    files = [f for f in report.top_files if f.layer == "MPI-IO" and (q.target is None or _named(f.path, q.target))]
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
    few, fv = _aggregators(report, f)
    if few:
        # The gap's usual reason, from the counters: a few aggregators did the POSIX work the others waited on
        text += few
        values += fv
    gap_finding = report.finding("X04")
    if gap_finding is not None and gap_finding.impact is not None and gap_finding.impact.seconds:
        text += f" (X04, ≈ {_s(gap_finding.impact.seconds)})"
        values.append(exact(gap_finding.impact.seconds, "seconds"))
    return text + ".", values, [f.path], []


def _file_why_unpriced(report: Report, q: Query) -> _Out:
    """No priced finding names the file: its own time and rate, and what the log notes about it (an info finding
    still says how it was used, e.g. 998,400 reads of 4 KiB), beside another file the question names."""
    f = next((x for x in report.top_files if _named(x.path, q.target)), None)
    if f is None or f.io_time_s <= 0:
        return None
    moved = f.bytes_read + f.bytes_written
    profile, pv = _request_profile(f, q.direction)
    slowest = ""
    if f.slowest_s and f.ranks > 1 and f.slowest_rank is not None:
        slowest = f" ({_s(f.slowest_s)} on its slowest rank, rank {f.slowest_rank})"
        pv = [exact(f.slowest_s, "seconds"), *pv]
    text = (
        f"`{f.path}` took {_s(f.io_time_s)} of I/O summed over its {f.ranks:,} rank(s){slowest} for {_b(moved)} "
        f"({_b(moved / f.io_time_s)}/s){profile}"
    )
    values = [exact(f.io_time_s, "seconds"), exact(moved, "bytes"), exact(moved / f.io_time_s, "rate"), *pv]
    spread, sv = _aggregators(report, f)
    if not spread:
        spread, sv = _kept_spread(report, f.path)
    text += spread
    values += sv
    paths = [f.path]
    other = next(
        (x for x in report.top_files if x.path != f.path and q.raw and _named_in(x.path, q.raw)),
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
            f"{_lower_first(c.title)} ({c.code}{subject}), ≈ {_s(c.seconds)}"
        )
        values += [exact(share.slowest_rank_io_s, "seconds"), exact(c.seconds, "seconds")]
    note = next(
        (
            x
            for x in report.findings
            if x.severity is not Severity.OK and x.files and any(_named(fe.path, q.target) for fe in x.files)
        ),
        None,
    )
    if note is not None:
        text += f". {note.code} notes it: {note.message.split(' (Shown as info')[0].rstrip('.')}"
    return text + ".", values, paths, []


def _named_in(path: str, question: str) -> bool:
    """Whether the question names this file (its base name, as written)."""
    base = path.rsplit("/", 1)[-1]
    return bool(base) and base.lower() in question.lower()


def _not_recorded(report: Report, q: Query) -> _Out:
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
    return (
        f"{'No: the' if whether else 'The'} log does not record {q.target or 'that'}: Darshan keeps I/O counters "
        "per file and rank (and, with DXT, each read and write with its host), not the job's hosts without DXT, "
        "memory, processors, page cache, exit status or network (MPI communication is counted only by the "
        "optional APMPI module).",
        [],
        [],
        [],
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
