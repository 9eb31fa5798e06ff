"""Questions to queries: the rules that read a question (and, with the report, the files it names) into a Query."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from iodiag.analysis.models import (
    Report,
)
from iodiag.narration.fact_query.names import (
    FILE_NOUNS,
    activity_name,
    compared_sides,
    ext_group,
    folder_group,
    glob_group,
    group_named,
    is_named,
    loose_name,
    name_pattern,
    report_paths,
)
from iodiag.narration.fact_query.query import Direction, Query
from iodiag.narration.fact_query.vocabulary import (
    BIG_PART,
    CALL_WORDS,
    CAPTURED,
    DROPPED,
    EVERY_RANK,
    FIRST_JUDGED,
    FIX_ASK,
    HEALTHY,
    IFACE,
    INTERFACES_WORDS,
    IO_JUDGED,
    IO_PROBLEM,
    LOG_HEALTH,
    META_VS_DATA,
    MOST_OF,
    MOST_OF_RUN,
    NAMED,
    RANK,
    READ,
    READ_OR_WRITE_TIME,
    REAL_COUNT,
    REREAD,
    SHARE_WORDS,
    SIZE_SAID,
    STRIPE_BAR,
    STRIPE_SAID,
    TOPIC,
    UNRECORDED,
    WHY_SLOW,
    WRITE,
    YES_NO,
    as_question,
    asked_file_systems,
    size_asked,
    spelled,
)


def _asked_share(q: str) -> float | None:
    """The share a question measures against: "more than a third", "over 50%", "at least half"."""
    m = re.search(
        r"\b(more than|over|above|at least|less than|under|below|exceed\w*)\s+(the\s+)?"
        r"(half|a third|one third|a quarter|one quarter|a fourth|a fifth|one fifth|a tenth|one tenth|two thirds"
        r"|three quarters|\d+(?:\.\d+)?\s*(?:%|percent))",
        q,
    )
    if not m:
        return None
    word = m.group(3)
    if word in SHARE_WORDS:
        return SHARE_WORDS[word]
    return float(re.match(r"\d+(?:\.\d+)?", word).group(0)) / 100  # type: ignore[union-attr]


def _iface_query(q: str) -> Query:
    """The bytes of the interface a question names ("how much did it write through POSIX?")."""
    m = IFACE.search(q)
    target = INTERFACES_WORDS[m.group(1).lower()] if m else None
    return Query(metric="bytes", scope="interface", target=target, direction=_direction(q))


def _one_file_named(q: str, report: Report) -> bool:
    """Whether a word of the question is part of exactly one file's name ("the fasta" for uniref90.fasta)."""
    word = loose_name(q, report, plural=False)
    return word is not None and sum(word in f.path.rsplit("/", 1)[-1].lower() for f in report.top_files) == 1


def _direction(q: str) -> Direction:
    q = NAMED.sub(" ", q)  # "reads.fastq" names a file, not the reading
    w, r = bool(WRITE.search(q)), bool(READ.search(q))
    return "write" if w and not r else "read" if r and not w else "both"


# Words naming files of the software environment rather than data
SOFTWARE_ASK = re.compile(
    r"\b(site|dist)-packages\b|\bdist-info\b|\bentry_points\b|\bpyvenv\b|\.pth\b"
    r"|\bpython (packages?|files?|librar\w+|modules?)|\.pyc?\b|\bshared (librar\w+|objects?)\b|\.so\b"
    r"|\b(venv|virtualenv|conda env\w*)\b"
)


def _job_info_kind(q: str) -> str | None:
    """Questions about the log's own header: the program, the Darshan version, every module it holds."""
    if re.search(
        r"\b(what|which) (program|executable|exe|binary|application|code|app)\b|\bprogram (name|produced)\b", q
    ):
        return "exe"
    if re.search(r"\b(which|what) (darshan )?modules\b.*\b(in|does|are|log)\b", q):
        return "modules"
    if re.search(r"\bdarshan (library |runtime )?(version|release)\b|\bversion of darshan\b|\bwhich darshan\b", q):
        return "version"
    if re.search(
        r"^(when|at what time|what time|what date|which day|on what date)\b.*\b(job|run)\b.*\b(start\w*|begin\w*|"
        r"began|end\w*|finish\w*|complet\w*|run|ran)\b|^(what|when) (was|is) the (job'?s? |run'?s? )?(start|end) "
        r"(time|date)\b",
        q,
    ):
        return "when"  # "when did the job start?": the header's start and end times
    if re.search(r"\b(what|which|any|list)\b[^?]*\bhints?\b", q) and not re.search(
        r"\b(where|how|should|could|would|recommend\w*|put|add|set it|that hint)\b", q
    ):
        return "hints"  # "what mpi-io hints were set?": what the log holds of them
    return None


def _call_kind(q: str) -> str | None:
    """Which counted call a "how many ..." question asks for, or None (bytes, files, small requests: not calls)."""
    if not re.search(r"\b(how many|number of|count of|no\.? of|total|count)\b", q):
        return None
    if re.search(r"\bwhy\b|\btakes? (forever|ages|so long)\b", q) and not re.search(r"\bhow many\b", q):
        return None  # "writes like 17 MB total but I/O takes forever, why?": a why question, not a count
    if re.search(r"\bhow many bytes\b|\bhow much\b|\bdatasets?\b", q):
        return None  # "how many bytes went through pnetcdf writes?": bytes; datasets have their own answer
    if re.search(r"\bswitch\w* (between|from) (read|writ)", q):
        return "rw_switches"  # "how many times did ranks switch between reading and writing?": not the reads
    times = re.search(r"\bhow (many times|often)\b.*?\b(open|read|writ|stat|seek|sync|flush)\w*", q)
    if times:
        # "how many times does each rank open its restart file?": a count of calls, whatever else it names
        return {
            "open": "opens",
            "read": "reads",
            "writ": "writes",
            "stat": "stats",
            "seek": "seeks",
            "flush": "flushes",
        }.get(times.group(2), "syncs")
    if re.search(
        r"\b(small|tiny|large|(?<!how )big|unaligned|misaligned|random|sequential|collective|independent)\b", q
    ):
        return None  # a kind of request, not every call
    if re.search(r"\b(bytes?|gb|gib|mb|mib|data|files?|ranks?|processes|osts?|time|seconds)\b", q) and not (
        re.search(r"\b(calls?|ops|operations|switch\w*|fsync\w*|seeks?|stats?|reads|writes|opens)\b", q)
    ):
        return None
    q = re.sub(rf"\bstats? {FILE_NOUNS}", " ", q)  # "the stats files" are files, not stat calls
    for kind, words in CALL_WORDS:
        if re.search(rf"\b({words})", q):
            return kind
    return None


# "..., and was it collective?" after a fact question: a second question the answer joins after the first
_AND_COLLECTIVE = re.compile(
    r",? and (was|were|is|are) (it|they|them|those|the \w+) collective\b[^.?!]*[.?!]*\s*$", re.I
)


WHEN = re.compile(
    r"^(when|at what (point|time)|during (which|what)|(in )?(which|what) (part|stage|phase|point))\b"
    r"|\bwhen (in the run |during the run )?(did|was|were)\b|\b(start\w*|finish\w*|end\w*|begin\w*|began)\b.*"
    r"\b(relative|into the run|since|from the (job'?s? )?start)\b"
)
"""A question about when in the run something happened ("when was restart.h5 written?")."""


def parse_about(question: str, report: Report) -> Query | None:
    question = as_question(spelled(question))
    tail = _AND_COLLECTIVE.search(question)
    if tail and re.match(r"\s*(how (much|many|big|long)|what|which)\b", question, re.I):
        # "how much went into ocean.nc and was it collective": the fact first, the yes/no after it
        first = _parse_about(question[: tail.start()], report)
        if first is not None and first.metric != "collective":
            return first.model_copy(update={"raw": question})
    return _finished(_parse_about(question, report), question)


def program_as_job(question: str, report: Report) -> str:
    """ "what fraction of run_model.py is I/O?": a name that is the job's own program, and no file the log holds,
    means the job."""
    program = PurePosixPath(report.job.exe.split()[0]).name.lower() if report.job.exe.strip() else ""
    scripts = {PurePosixPath(w).name.lower() for w in report.job.exe.split()[:3]} - {""}
    for m in NAMED.finditer(question):
        name = m.group(1).lower()
        if name not in scripts and name != program:
            continue
        if any(PurePosixPath(f.path).name.lower() == name for f in report.top_files):
            continue  # the program's own file read as data ("did it read run.py?") stays a file
        return _as_job(question, m.start(), m.end())
    for name in sorted({program, *scripts} - {""}, key=len, reverse=True):
        # a name the file-name pattern does not take ("pw.x": a one-letter extension), written as the exe has it
        hit = re.search(rf"(?<![\w./-]){re.escape(name)}(?![\w-]|\.\w)", question, re.I)
        if (
            hit is not None
            and "." in name
            and not any(PurePosixPath(f.path).name.lower() == name for f in report.top_files)
        ):
            return _as_job(question, hit.start(), hit.end())
    return question


def _as_job(question: str, start: int, end: int) -> str:
    """ "in this pw.x run" -> "in this job run"; "run_model.py takes ages" -> "the job takes ages"."""
    said = "job" if re.search(r"\b(this|my|the|our|that|its)\s+$", question[:start], re.I) else "the job"
    return question[:start] + said + question[end:]


COMPARE_COST = re.compile(
    r"\b(longer|slower|faster|quicker|more (i/?o )?time|less time|costs? (\w+ )*?more|more (costly|expensive)"
    r"|(bigger|larger|greater|higher|main|biggest|largest) (cost|share|part)|which (takes|is|costs)"
    r"|(eats?|uses?|takes?|spends?|burns?|loses?) more|compare\w*)\b"
)


def _file_named(question: str, report: Report) -> str | None:
    """The file a question names: by a name with an extension, or by a word that is a whole file name the report
    holds ("Cell_D_5"), case as typed."""
    named = NAMED.search(question)
    if named:
        return named.group(1)
    bases = {p.rsplit("/", 1)[-1].lower() for p in report_paths(report)}
    return next((w for w in re.findall(r"[A-Za-z][\w.-]*\w", question) if w.lower() in bases and len(w) > 3), None)


def _parse_about(question: str, report: Report) -> Query | None:
    """``parse``, and a why-question that names a file loosely ("why is the restart write so slow?", "how do I
    make the particle dump faster?"): a word of the question that is part of the name of a file the report holds
    asks about the files it names."""
    question = program_as_job(with_extensions(question, report), report)
    found = parse(question)
    q = " ".join(question.lower().split())
    if (
        report.software_files
        and SOFTWARE_ASK.search(q)
        and re.search(r"\b(why|what (are|is|were)|what's|where (do|did|does)|come from|purpose|needed|normal)\b", q)
        # a file named on its own ("why does reading uuid.pyc take longer?") is a question about that file
        and (
            not NAMED.search(question) or re.search(r"\b(lists?|listed|shows?|shown|contains?|records|includes?)\b", q)
        )
    ):
        # "why does the log list a bunch of site-packages entry_points.txt files?": the software environment
        return Query(metric="software", raw=question)
    if (
        (found is None or found.metric not in ("file_compare", "write_vs_read"))
        and COMPARE_COST.search(q)
        and not re.search(r"\bwhy\b", q)
        and not re.search(r"\b(read\w*|load\w*)\b.*\b(than|or|vs\.?)\b.*\b(writ\w*)\b( it| them)?\W*$", q)
        and not META_VS_DATA.search(q)
        and compared_sides(report, question) is not None
    ):
        # "what costs rank 0 more time, its lammpstrj dump or its stats file?": two files, families or the Python
        # packages, each side's time per rank; the answer says None when a side names nothing the log holds
        return Query(metric="file_compare", raw=question)
    if re.search(r"\b(which|what) osts?\b.*\b(is|are|was|were|on|holds?|held|has|have|store\w*|hold)\b", q) and (
        target := _file_named(question, report)
    ):
        # "which OST is Cell_D_5 on?", "what OST holds plt.dat?": that file's own layout, its OSTs named
        return Query(metric="stripe", target=target, raw=question)
    if WHEN.search(q) and not NAMED.search(question) and not re.search(r"\bhow (long|much|many)\b", q):
        if group_named(report, question) is not None:
            # "when was the first npz file read?": the family's first and last timestamped request
            return Query(metric="file_when", direction=_direction(q), raw=question)
        word = loose_name(q, report, plural=False)
        if word and re.search(r"\b(read|reads|writ\w*|wrote|load\w*|sav\w*|dump\w*|stor\w*)\b", q):
            # "when was the test file written?": the file a word of its name stands for
            return Query(metric="file_when", target=word, direction=_direction(q), raw=question)
    if found is not None and found.metric == "request_size" and found.target and re.match(r"(how long|time)\b", q):
        # "how long did writing reads.fastq take and what size were the writes?": the time leads; the file's
        # answer gives its calls' mean size beside it
        found = found.model_copy(update={"metric": "file_usage"})
    if (
        found is None
        and not NAMED.search(question)
        and re.search(r"\b(which|what) (high[- ]level )?(i/?o )?(librar\w*|interfaces?|layers?|apis?)\b", q)
        and (word := loose_name(q, report, plural=False)) is not None
    ):
        # "which interface wrote the restart file?": the interfaces of the file a word of its name stands for
        return Query(metric="file_library", target=word, raw=question)
    if (
        (found is None or (found.metric in ("bytes", "calls") and not found.target))
        and REREAD.search(q)
        and not re.search(r"\b(writ\w*|wrote|rewrit\w*)\b", q)
        and not NAMED.search(question)
        and not RANK.search(q)
        and group_named(report, question) is None
        and loose_name(q, report) is None
    ):
        # "is the job reading the same files over and over?": every read file's bytes against its extent
        return Query(metric="reread", direction="read", yes_no=bool(YES_NO.match(q)), raw=question)
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
        and not any(is_named(f.path, found.target) for f in report.top_files)
    ):
        # "how much data did run_model.py read?" names the program (its command line), not a file it used;
        # "how much did train.py write to dump.dat?" names the file after it
        other = [m.group(1) for m in NAMED.finditer(question) if m.group(1) != found.target]
        if other:
            found = found.model_copy(update={"target": other[0]})
        elif WHY_SLOW.search(q):
            # "why is data loading slow in run_model.py?": the program's slowness, where its time went and why
            return Query(metric="time_split", raw=question)
        else:
            found = Query(metric="bytes", direction=found.direction, raw=question)
    share = re.search(
        r"\b(fraction|share|percent\w*|proportion|how much of the (run|job|time|run ?time|wall ?time))\b|\bdominat\w*"
        r"|\b(costing|cost(s|ing)? (us|me)|a lot of (the |our |my )?(run ?time|time|wall ?time))\b"
        r"|\bhurt\w*\b|\bslow\w* (down )?(the|this|my|our) (run|job)\b"
        r"|\b(eat|eats|eating|take up|takes up|consum\w*)\b.*\b(run|time)",
        q,
    )
    if (
        share
        and (
            found is None
            or found.metric in ("io_share", "io_bound", "top_file", "file_list", "bytes", "file_usage", "runtime")
        )
        and not NAMED.search(question)
        and not RANK.search(q)
    ):
        # "what share of the run was the checkpoint read?", "is this run dominated by reading the restart?"
        word = loose_name(q, report)
        kind = ext_group(report, q)
        if word is None and kind is not None:
            word = kind.pattern.rsplit(".", 1)[-1].lower()  # "does the csv output eat half the run?"
        elif word is None:
            # one file of that kind: its name
            exts = set(re.findall(r"\b([a-z][a-z0-9]{1,5})\b", q))
            one = [f for f in report.top_files if f.path.rsplit(".", 1)[-1].lower() in exts and "." in f.path]
            word = one[0].path.rsplit("/", 1)[-1].lower() if len(one) == 1 else None
        if word is not None or group_named(report, question) is not None:
            return Query(
                metric="file_share",
                target=word,
                share=_asked_share(q),
                direction=_direction(q),
                # "we create a ton of tiny shard files. is that costing us a lot?": the question is the last sentence
                yes_no=bool(YES_NO.match(q) or re.search(r"[.;!?]\s*(did|does|do|is|was|were|are|has|have)\b", q)),
                raw=question,
            )
    if (
        found is None
        and re.search(r"\bhow (big|large)\b|\b(size|volume) of (the|its|my)\b", q)
        and not re.search(r"\b(files|all|total)\b", q)  # "total size of the restart files?": the group's
        and not NAMED.search(question)
        and (word := loose_name(q, report, plural=False)) is not None
    ):
        # "how big was the restart write?": the bytes of the file a word names
        return Query(metric="file_usage", target=word, direction=_direction(q), raw=question)
    if (
        (found is None or found.metric in ("time", "io_share", "runtime", "uses"))
        and re.search(
            r"\b(is|are|was|were)\b[^.!?]*\b(problem|bottleneck|slowing|costing|costly|expensive|significant|"
            r"an issue|hurting|holding)\b"
            r"|\b(is|are|was|were)\b[^.!?]*\b(big|large|major|main|huge|substantial|meaningful|sizable) (part|share"
            r"|chunk|portion|fraction)\b"
            r"|\b(does|do|did)\b[^.!?]*\b(matter|count|slow\w*|hold\w*|hurt\w*|cost)\b[^.!?]*"
            r"\b(run ?time|run|job|wall ?time|it|things|us)\b",
            q,
        )
        and not NAMED.search(question)
        and (
            (word := loose_name(q, report, plural=False) or activity_name(q, report)) is not None
            or group_named(report, question) is not None
        )
    ):
        # "is the checkpoint write a problem in this run?": that file's (or family's) share of the run, yes from
        # a tenth of it
        return Query(metric="file_share", target=word, yes_no=True, direction=_direction(q), raw=question)
    if (
        (found is None or found.metric in ("busiest_rank", "slow_rank", "any_slow_rank"))
        and re.search(r"\b(which|what) (ranks?|process\w*)\b.*\b(fastest|slowest|slow\w*|longest)\b", q)
        and not NAMED.search(question)
        and _one_file_named(q, report)
    ):
        # "which ranks were fastest and slowest on the test file": the ranks Darshan kept for that file
        word = loose_name(q, report, plural=False)
        return Query(metric="file_slowest", target=word, direction=_direction(q), raw=question)
    named_one = NAMED.search(question)
    if (
        (META_VS_DATA.search(q) or re.search(r"\bmeta ?data (time|cost|overhead)\b", q))
        and group_named(report, question) is not None
        and (named_one is None or "*" in named_one.group(1))
    ):
        # "does opening the samples cost more than actually reading them?": the family's metadata against its data
        return Query(metric="file_why", yes_no=bool(YES_NO.match(q)), raw=question)
    small = re.search(r"\bhow many (small|tiny) (f?writes?|f?reads?|requests?)\b", q)
    if small and (
        found is None or found.metric in ("group", "files", "top_file", "file_list", "bytes", "file_usage", "calls")
    ):
        # "how many small writes went to the probe_*.dat files?": the size bins under 1 MiB of those files
        named = NAMED.search(question)
        group = glob_group(report, question) or group_named(report, question)
        if group is not None or named is not None:
            sized = "small_reads" if small.group(2).lstrip("f").startswith("read") else "small_writes"
            if small.group(2).startswith("request"):
                sized = "small_writes" if _direction(q) == "write" else "small_reads"
            file = None if group is not None or named is None else named.group(1)
            return Query(metric="calls", target=sized, file=file, raw=question)
    if (found is None or found.metric in ("top_file", "file_list")) and (
        re.search(r"\b(how many|how much|did|were|was|any|total|size|how big|how large)\b", q)
        or (YES_NO.match(q) and EVERY_RANK.search(q))
    ):
        group = group_named(report, question)
        if (
            group is not None
            and not WHY_SLOW.search(q)
            and not re.search(r"\b(interfaces?|layers?|librar\w+|apis?|modules?|file ?systems?|stripe\w*|osts?)\b", q)
        ):
            # "how many .jar files did it read data from?", "did it read any data out of the shard files?"
            return Query(metric="group", direction=_direction(q), yes_no=bool(YES_NO.match(q)), raw=question)
    if (
        (found is None or found.metric in ("top_file", "file_list", "bytes", "file_usage", "runtime", "files"))
        and re.search(r"\b(size|how big|how large|how much|total|bytes|volume|data|how many files|files in)\b", q)
        and (folder := folder_group(report, question)) is not None
        and group_named(report, question) in (None, folder)
    ):
        # "total checkpoint size (chk00392)?": the files of the folder it names
        return Query(metric="group", direction=_direction(q), raw=question)
    if (
        found is None
        and re.search(r"\b(stripe\w*|striping|lustre)\b", q)
        and not report.lustre_layouts
        and (report.file_system or "").lower() != "lustre"
    ):
        return Query(
            metric="stripe", raw=question, yes_no=bool(YES_NO.match(q))
        )  # "any Lustre stripe settings I should look at?" on GPFS
    if (
        found is not None
        and found.metric in ("file_usage", "bytes", "top_file", "file_list", "files", "file_ranks")
        and (
            (
                ((found.target and name_pattern(found.target)) or "*" in question)
                and glob_group(report, question) is not None
            )
            # "how big is the checkpoint (the .pt files)?", "how many .h5 files were created?": an extension
            or (
                re.search(rf"(?<![\w.])\.[a-z][a-z0-9]{{0,7}} {FILE_NOUNS}", q)
                and group_named(report, question) is not None
            )
        )
    ):
        # "total bytes read from the atoms.*.txt dumps": every file the pattern names, not the first of them
        return Query(metric="group", direction=found.direction, yes_no=bool(YES_NO.match(q)), raw=question)
    if (
        found is not None
        and found.metric in ("rate", "request_size")
        and not found.target
        and (re.search(r"\bfile\b", q) or _one_file_named(q, report))
        and not re.search(FIX_ASK, q)
        and not re.search(r"\b(how (could|can|do|to)|get more|faster|speed\w* up)\b", q)
        and (word := loose_name(q, report, plural=False)) is not None
    ):
        # "whats the bw on the nyx restart file": the file a word of the question names
        return found.model_copy(update={"target": word})
    if (
        found is not None
        and found.metric != "file_why"
        and not NAMED.search(question)
        and re.search(r"\b(each|every|per|both) (rank|process)\b", q)
        and READ_OR_WRITE_TIME.search(q)
        and group_named(report, question) is not None
    ):
        # "how long does each rank spend on the conf/table files": the group's time per rank
        return Query(metric="file_why", direction=_direction(q), raw=question)
    if (
        (found is None or found.metric in ("rate", "top_file"))
        and re.search(r"\b(this|that|the|my|our) (one |single |output |input |data )?file\b", q)
        and (re.search(FIX_ASK, q) or re.search(r"\b(how (could|can|do|to)|get more|faster|speed)\b", q))
    ):
        # "how could it get more bandwidth on this file?": the one file the job's data went to, and its fix
        data = sorted(report.top_files, key=lambda f: -(f.bytes_read + f.bytes_written))
        if data and (
            len(data) == 1
            or (data[0].bytes_read + data[0].bytes_written) >= 0.8 * sum(f.bytes_read + f.bytes_written for f in data)
        ):
            base = data[0].path.rsplit("/", 1)[-1]
            return Query(metric="file_why", target=base, direction=_direction(q), raw=question)
    if found is not None and found.metric != "runtime":
        return found
    if found is not None:
        # "how long did the checkpoint write take?": the run time, unless a word names one of its files
        word = loose_name(q, report, plural=False)
        overall = re.search(r"\b(job|run|whole|total|overall|wall)\b", q)
        if word is None and not overall and (ext_group(report, q) or group_named(report, question)) is not None:
            # "how long did reading the csv files take?": that family's time, not the run's
            return Query(metric="file_share", direction=_direction(q), raw=question)
        if word is None and not overall and re.search(HOW_LONG_DIRECTION, q):
            # "how long did the MPI-IO writes take?": that direction's time, not the run's
            return Query(metric="io_share", direction=_direction(q), raw=question)
        if word is None or overall:
            return found
        return Query(metric="file_usage", target=word, direction=_direction(q), raw=question)
    if not WHY_SLOW.search(q) or re.search(r"\bhow (long|much|many)\b", q):
        return None
    word = loose_name(q, report, plural=False)
    if word is None and group_named(report, question) is not None:
        # "writing the per-rank csv files eats a big chunk of the run, why?": the group the words name
        return Query(metric="file_why", direction=_direction(q), raw=question)
    return Query(metric="file_why", target=word, direction=_direction(q), raw=question) if word else None


HOW_LONG_DIRECTION = (
    r"\bhow long (did|does|do|was)\b( it| the job| the run)?( spend)?( the)?( [\w-]+)? "
    r"(writ(e|es|ing)|reads?|reading)\b"
    r"(?! (the|a|an|its|my|this|that)\b)"
)
"""Asks the time one direction took, with no file named ("how long did the MPI-IO writes take?")."""


def with_extensions(question: str, report: Report) -> str:
    """The question with a file named without its extension written in full ("plotfile_0322" for
    plotfile_0322.dat), where exactly one file of the report has that stem: the rules below know names by their
    extension."""
    bases: dict[str, set[str]] = {}
    for path in report_paths(report):
        base = path.rsplit("/", 1)[-1]
        stem, dot, _ = base.rpartition(".")
        if dot and stem:
            bases.setdefault(stem.lower(), set()).add(base)

    def full(m: re.Match[str]) -> str:
        word = m.group(0)
        names = bases.get(word.lower(), set())
        return next(iter(names)) if len(names) == 1 else word

    # A stem that looks like a file's (a digit or an underscore in it), not followed by its own extension
    return re.sub(r"(?<![\w./-])[A-Za-z][\w-]*(?:\d|_)[\w-]*(?![\w.])", full, question)


def _finished(q: Query | None, question: str) -> Query | None:
    """The query with what every rule leaves to the end: the question's own words, which every answer can read
    (a quoted figure it doubts, two files it compares), and the share an I/O-size question is judged against."""
    low = question.lower()
    if q is not None and q.metric == "io_bound" and q.share is None and MOST_OF_RUN.search(low):
        q = q.model_copy(update={"share": 0.5})  # "does it spend most of its time in I/O?": more than half
    elif q is not None and q.metric == "io_bound" and not q.bound and q.share is None and BIG_PART.search(low):
        q = q.model_copy(update={"big": True})  # "is I/O a big part of the run?" asks its size, not its cost
    return q.model_copy(update={"raw": question}) if q is not None and not q.raw else q


ONE_SHARED_FILE = re.compile(
    r"\b(one|a single|the same|a|single) shared file\b|\bshare (one|a|the same|a single) (\w+ )?files?\b"
    r"|\b(all|every|both)\b.*\b(one|a single|the same) (\w+ )?file\b"
)


RATE_WORDS = re.compile(
    r"\b(bandwi\w*|bw|throughput|mb/s|gb/s|mib/s|gib/s|rate|speed)\b"
    r"|\bhow (fast|quickly)\b.*\b(writ\w*|wrote|read\w*)\b"
)


def parse(question: str) -> Query | None:
    question = as_question(spelled(question))
    return _finished(_parse(question), question)


def _parse(question: str) -> Query | None:
    """The query a question asks, or None when it is not a plain fact question these rules know."""
    q = " ".join(question.lower().split())
    # "each hacc rank" is "each rank", "open() calls" are "open calls": the app's name and C's parentheses name
    # nothing the rules below look for
    q = re.sub(
        r"\b(each|every|per) (?!other\b|single\b|one\b|\d)([a-z][\w-]*) (ranks?|process(?:es)?|tasks?)\b", r"\1 \3", q
    )
    q = re.sub(r"\b([a-z]+)\(\)", r"\1", q)
    if re.match(r"^(what|how) (is|are|does|do)\b.*\b(mean|work)|^(what is|what are|explain|define)\b", q) and not (
        re.search(r"\b(my|this|the job|it|rank \d+)\b", q) or NAMED.search(question)
    ):
        return None  # a concept ("what is collective buffering?"), not a fact of this log
    yes_no = bool(YES_NO.match(q))
    if (
        yes_no
        and re.search(r"\b(read|load)\w* (any|some)( input| data)? (files?|data|inputs?)\b", q)
        and not NAMED.search(question)
        and not re.search(r"\b(from|out of|in|of) (the|its|my|these|those|any) ", q)  # "... out of the cfg files?"
    ):
        return Query(metric="bytes", direction="read", yes_no=True, raw=question)  # "did it read any input files?"
    named_early = NAMED.search(question)
    if named_early and yes_no and (STRIPE_BAR.search(q) or STRIPE_SAID.search(q)):
        # "does snapshot_200.h5 use more than 8 stripes?": its stripe count against the number asked
        return Query(metric="stripe", target=named_early.group(1), yes_no=True, raw=question)
    if (
        yes_no
        and re.search(r"^(did|does|do) any (rank|process|task)s? (write|read|produce|output)\b", q)
        and re.search(r"\b(any(thing)?|output|data|files?|input|bytes)\W*$", q)
        and not NAMED.search(question)
    ):
        # "did any rank write output?": whether the job wrote at all, not which ranks a finding names
        return Query(metric="bytes", direction=_direction(q), yes_no=True, raw=question)
    if re.search(r"\bhow many files\b.*\bopen\w*\b.*\b(never|not|without|no)\b.*\b(read|writ\w*|data|bytes)\b", q):
        return Query(metric="files", raw=question)  # "how many files were opened but never read or written?"
    if re.search(r"\b(which|what) (file ?systems?|fs|storage|mounts?)\b.*\b(most|majority|bulk|largest)\b", q):
        return Query(metric="fs_share", raw=question)  # "which file system held most of the data?"
    if re.search(r"\b(which|what) (rank|process)\b.*\b(fastest|quickest|least time|shortest)\b", q):
        return Query(metric="fastest_rank", raw=question)  # "which rank was fastest?"
    kinds = asked_file_systems(q)
    if (
        kinds
        and not NAMED.search(question)
        and re.search(r"\b(writ\w*|wrote|read\w*|anything|bytes|how much|moved?|put|sav\w*)\b", q)
        and re.search(
            r"\b(to|on|onto|from|in|into|off)\b( the)? ?(\w+ )?(nfs|lustre|gpfs|daos|beegfs|xfs|ext4|local|parallel)\b",
            q,
        )
        and not re.search(r"\b(stripe\w*|osts?|why|slow\w*|bandwidth|rate|throughput|faster|speed\w*|quicker)\b", q)
        # "are the dump writes aligned to the GPFS block?", "sized to the DAOS chunk size?": a property of the
        # requests measured against the file system, not the bytes on it
        and not re.search(r"\b(align\w*|misalign\w*|unaligned|block ?size|blocks?|chunk\w*|sized?|multiples?)\b", q)
        and not re.search(FIX_ASK, q)
    ):
        # "did this job write anything to the lustre scratch filesystem?": the bytes on that file system
        return Query(
            metric="fs_bytes", target="|".join(sorted(kinds)), direction=_direction(q), yes_no=yes_no, raw=question
        )
    if re.search(
        r"\bwhy\b.*\b(spends?|spent|spending|takes?|taking|took)\b.*\b(\d[\d.,]*\s*(s|secs?|seconds?|min\w*|h|hours?)"
        r"|so long|that long|so much time)\b.*\b(in|on|doing|for) (its |the |all )?i/?o\b",
        q,
    ) and not re.search(r"\b(each|every|some|few|other|several|certain) (ranks?|process\w*)\b|\branks? \d", q):
        return Query(metric="time_split", raw=question)  # "why does a one-process run spend ~8 s in I/O?"
    if re.search(
        r"\bwhat'?s?( is)? (eating|taking|using|consuming|hogging)\b|\bwhere (does|did) (the|my|all) (the )?time go", q
    ):
        return None  # "what's eating the time?": a why question, whatever fact follows it
    if re.search(
        r"\b(records?|entries|files?)\b.*\b(no|without|missing( a| their| the)?|unknown|lost) (file ?)?names?\b"
        r"|\b(unnamed|nameless|anonymous) (records?|entries|files?)\b",
        q,
    ):
        # "are there records in this log that have no file name?": ids missing from the name table
        return Query(metric="unnamed", yes_no=yes_no)
    if (
        re.search(r"\b(darshan|the log|the report|it)\b.*\b(says?|shows?|reports?|claims?|lists?)\b", q)
        and re.search(
            r"\b(exa|peta|zetta)bytes?\b|\b[\d.]+ ?(eb|pb|zb)\b|\b(negative|absurd|impossible|insane|crazy)\b", q
        )
        and not RANK.search(q)
    ):  # "rank 265 spent negative time?": that rank's records answer it
        # "why does darshan say warpx wrote 3.8 exabytes?": a figure no run can reach comes from damaged records
        return Query(metric="completeness", missing=True)
    if LOG_HEALTH.search(q):
        # "is this log ok or is something off with it?": a question about the record, not the job; the first
        # judgement word sets which answer is "yes"
        # The question is the last clause that judges ("something looks off, are the records consistent?"):
        # within it, the first judgement word ("is this log ok or is something off with it?")
        # A clause asked with "?" outranks a remark ("are these numbers even real? something looks off").
        clauses = [c for c in re.findall(r"[^,.;?!]+[,.;?!]?", q) if FIRST_JUDGED.search(c)]
        asked = [c for c in clauses if c.endswith("?")]
        clause = (asked or clauses)[-1] if clauses else q
        # Within it, the first judgement word where it offers two ("is this log ok or is something off?"); in a
        # plain yes/no, the last one, the word asked about ("the log has weird huge numbers - is it trustworthy?")
        judged = list(FIRST_JUDGED.finditer(clause))
        plain = re.match(r"\s*(is|are|was|were|can|could|should|do|does)\b", clause) and " or " not in clause
        first = judged[-1] if plain and judged else FIRST_JUDGED.search(clause)
        return Query(
            metric="completeness",
            yes_no=True,
            missing=bool(
                first
                and re.match(
                    r"off|broken|wrong|inconsistent|corrupt|bad|bogus|garbage|weird|suspicious|invalid|impossible|nonsens",
                    first.group(1),
                )
            ),
        )
    if re.search(r"\b(dxt|trace)\b", q) and re.search(r"\b(every|all|complete|whole)\b", q) and yes_no:
        return Query(metric="completeness", yes_no=True)  # "does the DXT trace contain every read?"
    if re.search(r"\b(darshan|the log|log|it|instrumentation)\b", q) and DROPPED.search(q) and not RANK.search(q):
        # "did darshan drop any records for this run?": yes when a module ran out of records
        return Query(metric="completeness", yes_no=True, missing=True)
    if REAL_COUNT.search(q):
        # "darshan shows 4096 shard files, is that the real number?": yes when no module ran out of records
        return Query(metric="completeness", yes_no=True)
    if CAPTURED.search(q):
        # "did darshan capture every file?", "were all file records captured?": yes when nothing is missing
        return Query(metric="completeness", yes_no=True)
    if (
        yes_no
        and re.search(
            r"\b(any|some)( real| actual| meaningful| significant| substantial| serious)?( data)? "
            r"(i/?o|reading or writing|file i/?o)\b",
            q,
        )
        # "were the other ranks doing any I/O?" is a question about ranks; "this python process" is the job
        and not re.search(
            r"\b(ranks|processes|procs|nodes|tasks|rank \d+|(other|each|every|which) (rank|process))\b", q
        )
    ):
        # "did this python process do any real data I/O?": yes or no from the bytes it moved
        if re.search(r"\b(meaningful|significant|substantial|serious)\b", q):
            return Query(metric="io_bound", yes_no=True, raw=question)  # "meaningful": judged on its time
        return Query(metric="bytes", yes_no=True, raw=question)
    if (
        re.search(
            r"\bwhat (did|does|do) (it|this|the|my|our)\b[\w\s]*\b(actually |really )?(read|write|wrote)\b\W*$", q
        )
        or re.search(
            r"^(did|does|do|has) (it|this|the|my|our)\b[\w\s]*\b((read|write|load)\w* (any|some) [\w-]+ data"
            r"|(touch|access|use|open)\w* (any|some) ([\w-]+ )?data)\b",
            q,
        )
        or re.search(
            r"\b(which|what) files (did|does|do) (it|this|the|my|our)\b[\w\s]*\b(read|write|wrote|load)\w*\b", q
        )
        or re.search(
            r"\bwhy (does|did|is|do) (it|this|the|my|our)\b[\w\s]*\b(do|doing|does|did) "
            r"(almost |nearly |hardly |so )?(no|little|nothing)( i/?o)?\b",
            q,
        )
    ):
        # "what did this python process actually read?": the files, by bytes moved that way; "did it read any
        # training data?" too (yes or no: data, not the files of its software environment), and "why does it do
        # almost no I/O?" (what little it did is the answer)
        asks_data = re.search(
            r"^(did|does|do|has)\b.*\b((any|some) [\w-]+ data|(touch|access|use|open)\w* (any|some) data)\b", q
        )
        return Query(metric="file_list", direction=_direction(q), yes_no=bool(asks_data), raw=question)
    share = _asked_share(q)
    if share is not None and re.search(r"(?<![-\w])i/?o\b", q) and re.search(r"\b(run ?time|run|time|wall)\b", q):
        # "is more than a third of the runtime spent in I/O?": measured against the share asked
        return Query(metric="io_bound", yes_no=True, share=share, raw=question)
    if IO_JUDGED.search(q) and not re.search(r"\b(why|how (do|can|to)|fix)\b", q):
        if re.match(r"\s*(how (much|long)|what)\b", q):
            return Query(metric="io_share")  # "how much time ... vs the whole run?": the share, not a yes
        # "is I/O a big deal here?", "should I worry about I/O?": a judgement of the job, answered yes or no
        return Query(metric="io_bound", yes_no=True)
    if (
        IO_PROBLEM.search(q)
        and not re.search(r"\b(why|how (do|can|to)|what (should|do|can))\b", q)
        and not TOPIC.search(q)
    ):
        return Query(metric="io_problem", yes_no=True, healthy=bool(HEALTHY.search(q)))
    if (
        re.search(r"\bosts?\b", q)
        and re.search(r"\b(slow\w*|sluggish|bad|faulty|degraded|underperform\w*|lagg\w*|sick|broken|dragging)\b", q)
        and re.search(r"\b(what (should|do|can) (i|we)|how (do|can|should) (i|we))\b", q)
    ):
        # "one OST seems slow - what should I do?": the slow OST, with what to do about it
        return Query(metric="slow_ost", raw=question)
    advice_on = NAMED.search(question)
    if advice_on and re.search(FIX_ASK, q) and not re.search(r"\b(stripe\w*|striping|lfs)\b", q):
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
            r"\b(write|wrote|written)\b.*\b(anything|any (data|bytes|output( files?)?|files?|results?))\b"
            r"|\bany (data|bytes|output)\b.*\bwritten\b",
            q,
        )
        and not NAMED.search(question)
        and not RANK.search(q)  # "did rank 5 write anything?" is the rank's
    ):
        return Query(metric="bytes", direction="write", yes_no=True, raw=question)  # "did it write anything?"
    if (
        yes_no
        and re.search(r"\b(read|load)\w*\b.*\b(anything|any (data|bytes|input( files?)?|files?))\b", q)
        and not NAMED.search(question)
        and not RANK.search(q)  # "did rank 5 read anything?" is the rank's
        and not re.search(r"\b(writ\w*|wrote)\b", q)
        and not re.search(r"\b(from|out of|in|of) (the|its|my|these|those|any) ", q)  # "... out of the cfg files?"
    ):
        return Query(metric="bytes", direction="read", yes_no=True, raw=question)  # "did it read anything?"
    mix = re.search(
        r"\b(read|write|wrote|writ\w+)s? (much|a lot of|lots of|a lot)\b"
        r"|\b(all|only|mostly|mainly|primarily|just) (reads?|writes?|reading|writing)\b"
        r"|\b(read|write)[- ](heavy|intensive|dominated)\b",
        q,
    )
    if yes_no and not NAMED.search(question) and ONE_SHARED_FILE.search(q):
        # "do the ranks all read one shared file?": shared against one file per rank, yes or no
        return Query(metric="sharing", yes_no=True, raw=question)
    if yes_no and mix and not NAMED.search(question) and not RANK.search(q):
        # "does this job read much input data?", "is the heavy I/O all reads?": the read/write split, yes or no
        return Query(metric="bytes", direction=_direction(mix.group(0)), yes_no=True, split=True, raw=question)
    if (
        len({m.group(1).lower() for m in IFACE.finditer(q)}) >= 2
        and re.search(r"\b(share|fraction|percent\w*|proportion|split|ratio|how much of)\b", q)
        and re.search(r"\b(bytes|data|i/?o|traffic|volume)\b", q)
        and not re.search(r"\btime\b", q)
    ):
        # "what share of the bytes went through stdio vs posix?": each interface's bytes and share
        return Query(metric="top_interface", raw=question)
    if re.search(r"\baggregators?\b", q) and re.search(
        r"\b(how many|number of|which|who|what ranks?|did (it|the job|they) use|were there)\b", q
    ):
        # "how many aggregators wrote the restart file?": the ranks beneath the collective calls
        named = NAMED.search(question)
        return Query(metric="aggregators", target=named.group(1) if named else None, raw=question)
    if (
        re.search(r"\b(why|how come)\b", q)
        and re.search(r"\bposix\b", q)
        and re.search(r"\b(mpi-?io|pnetcdf|p?netcdf|hdf5|h5|app|application|code|program)\b", q)
        and re.search(
            r"\b(sizes?|sized|\d+(\.\d+)? ?[kmg]i?b|(bigger|larger|smaller) (requests|writes|reads|calls))\b", q
        )
        and not re.search(r"\b(time|slow\w*|long\w*|seconds?|faster)\b", q)
    ):
        # "why are the posix writes 16 MiB when pnetcdf writes 8 MiB?": what MPI-IO did to the requests
        return Query(metric="layer_sizes", direction=_direction(q), raw=question)
    if (
        re.search(r"\b(combin\w*|merg\w*|aggregat\w*|coalesc\w*|gather\w*)\b", q)
        and re.search(r"\b(mpi-?io|romio|collective buffer\w*|two-phase)\b", q)
        and re.search(r"\b(bigger|larger|fewer|big|large)\b", q)
    ):
        # "did MPI-IO combine the small writes into bigger file-system requests?": the two layers' sizes
        return Query(metric="layer_sizes", direction=_direction(q), yes_no=bool(YES_NO.match(q)), raw=question)
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
        named = NAMED.search(question)
        return Query(metric="layer_gap", target=named.group(1) if named else None, yes_no=yes_no, raw=question)
    stream = re.search(r"\b(stdout|stderr|standard (out|output|error)|the screen|the console)\b", q)
    if stream and re.search(r"\b(how much|how many|bytes|print\w*|wr[oi]te\w*|output|log\w*|data)\b", q):
        # "how much did it print to stdout?": the stream's own record
        stream_name = "<STDERR>" if re.search(r"\b(stderr|standard error)\b", stream.group(0)) else "<STDOUT>"
        call = _call_kind(q)
        if call is not None:
            # "how many times was stdout flushed?": the stream's calls of that kind
            return Query(metric="calls", target=call, file=stream_name, raw=question)
        return Query(metric="file_usage", target=stream_name, direction="write", raw=question)
    if re.search(r"\bmet(a|)data\b|\bmeta[- ]data\b", q) and re.search(MOST_OF, q):
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
    unrecorded = UNRECORDED.search(q)
    if unrecorded:
        return Query(metric="not_recorded", target=unrecorded.group(1), raw=question)
    if (
        re.search(r"\b(dxt|trac(e|es|ed|ing))\b", q)
        and (yes_no or re.search(r"\b(was|is) (there|it)\b", q))
        and not re.search(r"\b(complete|partial|full|truncat\w*|missing|lost|dropp\w*|cut|every|all)\b", q)
    ):
        return Query(metric="traced", yes_no=True)  # "is DXT tracing in this log?"
    iface = IFACE.search(q)
    if iface and re.search(r"\bhow many files\b", q):
        # "how many files did posix touch?"
        return Query(
            metric="interface_files", scope="interface", target=INTERFACES_WORDS[iface.group(1).lower()], raw=question
        )
    if (
        re.search(r"\b(why|how come|where)\b", q)
        and re.search(r"\b(no|not|missing|absent|without)\b|n't\b", q)
        and re.search(r"\b(see|seen|shows?|showing|appears?|listed|numbers|records?|recorded|in (the|this) log)\b", q)
        and (iface or re.search(r"\b(my|the|any)\b.*\bfiles\b", q))
    ):
        # "why are there no POSIX numbers?", "why don't I see my data files in this log?": what the log holds
        return Query(metric="absent", target=INTERFACES_WORDS[iface.group(1).lower()] if iface else None, raw=question)
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
    named_file = NAMED.search(question)
    both = list(dict.fromkeys(m.group(1) for m in NAMED.finditer(question)))
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
        and not re.search(r"\b(time|seconds|long|slow\w*|fast\w*|why|how many times|how often)\b", q)
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
            r"|\bread again\b|\bread\w* .*\b(more than once|twice|(multiple|several|many) times|repeatedly)\b",
            q,
        )
    ):
        # "does this job both read and write state.bin?"
        return Query(metric="file_usage", target=named_file.group(1), yes_no=True, raw=question)
    if (
        named_file
        and re.match(r"^\s*(did|does|do|was|were|has|have)\b", q)
        and re.search(r"\b(f?read|f?write|wrote|written|open\w*|touch\w*|access\w*|load\w*|us(e|ed))\b", q)
        and not re.search(r"\b(why|how|which|what|who|coll?ec?ti?v\w*|aligned|sequential\w*|random\w*)\b", q)
        and not IFACE.search(q)  # "was ocean.nc written with pnetcdf?" asks which library
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
    if re.search(
        r"\b(aligned|misaligned|unaligned|alignment|align|line (up|up with)|lined up|lines up)\b", q
    ) and not re.search(r"\b(why|fix|how (do|can|to|should))\b", q):
        # "are the flux.dat writes aligned to the stripes?", "how many accesses to state.bin were not aligned?"
        return Query(
            metric="alignment",
            target=named_file.group(1) if named_file else None,
            yes_no=yes_no,
            missing=bool(re.search(r"\b(misaligned|unaligned|not aligned)\b", q)),
            raw=question,
        )
    if (
        named_file
        and yes_no
        and (
            re.search(
                r"\b(bottleneck|slowing|costing|costly|expensive|significant|big deal|matters?|important|a problem"
                r"|an issue|hurt\w*|worth)\b",
                q,
            )
            or (_asked_share(q) is not None and re.search(r"\b(run|runtime|job|wall ?time|time)\b", q))
        )
    ):
        # "is writing thermo.dat a bottleneck?": its share of the run, yes from a tenth of it; "is more than a
        # quarter of the run spent reading results.txt?": yes from that share
        return Query(
            metric="file_share",
            target=named_file.group(1).lower(),
            direction=_direction(q),
            yes_no=True,
            share=_asked_share(q),
            raw=question,
        )
    if (
        named_file
        and yes_no
        and re.search(r"\bposix\b", q)
        and re.search(r"\b(all|every|each)( \d+| the)? (ranks?|process\w*|tasks)\b", q)
    ):
        # "did all 35 ranks write to particles.dat at the POSIX level?": the ranks that reached POSIX
        return Query(
            metric="file_ranks", target=named_file.group(1), direction=_direction(q), yes_no=True, raw=question
        )
    if (
        named_file
        and IFACE.search(q)
        and yes_no
        and re.search(r"\b(through|via|with|using|by)\b", q)
        and not re.search(r"\b(collective\w*|independent\w*|non-?collective)\b", q)  # how, not which interface
    ):
        # "was particles_0205.bin written through MPI-IO?": that file's interfaces, not the job's
        return Query(metric="file_library", target=named_file.group(1), raw=question)
    if named_file and (
        re.search(r"\b(which|what) (high[- ]level )?(i/?o )?(librar\w*|interfaces?|layers?|apis?|modules?)\b", q)
        # "is reads.fastq written via posix or stdio?": which of the two it went through
        or re.search(
            r"\b(posix|stdio|mpi-?io|hdf5|pnetcdf|dfs)\b (or|vs\.?|versus) (posix|stdio|mpi-?io|hdf5|pnetcdf|dfs)\b", q
        )
    ):
        # "which I/O library wrote snapshot_293.nc?"
        return Query(metric="file_library", target=named_file.group(1), raw=question)
    if (
        named_file
        and yes_no
        and re.search(
            r"\bin parallel\b|\bby (all|every|each|many|several)( of)?( the| its| my)? (\w+ )?(ranks?|process\w*)\b", q
        )
    ):
        # "is mesh.bin read in parallel?": how many ranks used it, yes from more than one
        return Query(
            metric="file_ranks",
            target=named_file.group(1),
            direction=_direction(q),
            yes_no=True,
            healthy=True,
            raw=question,
        )
    if named_file and re.search(r"\b(one|a single|single|only one|just one) (rank|process)\b", q):
        # "is one rank doing all the writing of snapshot_231.nc?"
        return Query(
            metric="file_ranks", target=named_file.group(1), direction=_direction(q), yes_no=True, raw=question
        )
    if named_file and WHEN.search(q) and not re.search(r"\bhow (long|much|many)\b", q):
        # "when did the writes to ocean.nc start and finish?": the file's first and last timestamped request
        return Query(metric="file_when", target=named_file.group(1), direction=_direction(q), raw=question)
    if named_file and (
        re.search(r"\b(which|what) (rank|process)\w*\b.*\b(slow\w*|longest|most time|straggl\w*|lagg\w*)\b", q)
        or re.search(r"\b(fastest|slowest) (and|&|or|vs\.?) (fastest|slowest)\b", q)
    ):
        # "which rank was slowest writing vpicio.hdf5?": the slowest rank Darshan kept for the file
        return Query(metric="file_slowest", target=named_file.group(1), direction=_direction(q), raw=question)
    rank = RANK.search(q)
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
        and re.search(r"\b(each|every|per|both|all( (the|[\d,]+))?) (ranks?|process\w*|procs)\b", q)
        and re.search(r"\bhow much\b|\bhow many bytes\b|\b(bytes|data|gib|mib|gb|mb|amounts?)\b", q)
        and not named_file
        and not re.search(r"\bwhy\b", q)
    ):
        # "how much did each rank write?" asks bytes; "how much time does each rank spend writing?" asks time
        timed = re.search(r"\bhow much time\b|\b(spend|spent|spends|seconds|long)\b", q) and not re.search(
            r"\b(bytes|data|gib|mib|gb|mb)\b|\bhow much\b(?! time)", q
        )
        return Query(metric="rank_spread", direction=_direction(q), data=not timed)
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
    if (
        yes_no
        and (named_file or SIZE_SAID.search(q))
        and size_asked(q)
        and re.search(r"\b(f?reads?|f?writes?|requests?|calls?|access\w*|transfers?|i/?o|chunks?|written|read)\b", q)
        and not re.search(r"\b(rank|process|task)s? \d", q)
    ):
        # "are the hist_0135.h5 reads at least 1 MiB each?": its request size against the size asked
        return Query(
            metric="request_size",
            target=named_file.group(1) if named_file else None,
            direction=_direction(q),
            yes_no=True,
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
    if not rank and re.search(
        r"\b(some|any|certain|a few|the) (ranks|processes)\b.*\b(more|less) (data|bytes)\b"
        r"|\b(some|any|certain) (ranks|processes) (wr[io]te|read|move[d]?) more\b",
        q,
    ):
        # "did some ranks write more data than others?": the ranks' bytes, least to most
        return Query(
            metric="rank_spread", data=True, yes_no=bool(YES_NO.match(q)), direction=_direction(q), raw=question
        )
    if (
        not rank
        and not named_file
        and re.search(
            r"\b(which|what|who) (rank|process)\w*\b.*\b(most|longest|slowest|busiest|straggl\w*|lagg\w*)\b"
            r"|\bwho (was|is) (the )?(slowest|busiest)\b",
            q,
        )
        and not re.search(r"\b(which|what) (ranks|processes)\b.*\b(straggl\w*|lagg\w*|slow (ones|ranks))\b", q)
    ):
        if re.search(r"\b(wrote|writ\w*|read\w*|bytes|data|moved|volume)\b", q) and not re.search(
            r"\b(time|long\w*|slow\w*|busiest|straggl\w*|lagg\w*|seconds)\b", q
        ):
            # "which rank wrote the most?": by the bytes it moved, not its time
            return Query(metric="busiest_rank", data=True, direction=_direction(q), raw=question)
        return Query(metric="busiest_rank")  # "which rank spent the most time in I/O, and how long?"
    if (
        named_file
        and re.search(r"\b(each|every|per) (rank|process)\b", q)
        and READ_OR_WRITE_TIME.search(q)
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
    if re.search(
        r"\bhow many files\b.*\b(each|every|per) (rank|process)\b|\bfiles per (rank|process)\b"
        r"|\b(each|every|per) (rank|process)\b.*\bhow many( \w+)? files\b",
        q,
    ):
        return Query(metric="files_per_rank", direction=_direction(q))
    if yes_no and re.search(
        r"\b(each|every) (rank|process)\b.*\bown\b"
        r"|\b(each|every) (rank|process) (write|read|open|use)s? (just |only |exactly )?"
        r"(one|a single|more than one) file",
        q,
    ):
        # "does every rank write its own?", "did each rank write just one file?"
        return Query(metric="files_per_rank", direction=_direction(q), yes_no=True, raw=question)
    if (
        not rank
        and re.search(r"\bwhy\b", q)
        and re.search(r"\b(spends?|spent|takes?|took|need\w*)\b[^.?!]*\b\d+(\.\d+)? ?(s|secs?|seconds?|min\w*)\b", q)
        and re.search(r"\b(per|each|every) (rank|process)\b", q)
        and not NAMED.search(question)
        and not re.search(r"\bfiles?\b|\*|/", q)  # "why do the stats files take 12 s per rank": those files
        # the job's reading or writing, not one thing it reads ("to read its checkpoint part" names a file)
        and re.search(r"\b(in|on|doing) i/?o\b|\b(reading|writing)\b(?! (its|their|the|a|an|my|our|this|that)\b)", q)
    ):
        # "vasp spends ~10 s per rank reading only 150MB each. why?": where the time went and what costs it
        return Query(metric="time_split", direction=_direction(q), raw=question)
    if (
        not rank
        and not re.search(r"\b(why|how (do|can|to))\b", q)
        and not re.search(FIX_ASK, q)  # "writes take 10 s per rank out of 21 s. ideas?" asks for the fix
        and re.search(r"\b(per[- ]rank|each rank|every rank|per[- ]process|each process|across ranks)\b", q)
        and re.search(r"\b(how long|time|seconds|spend|spent|took|take)\b", q)
    ):
        return Query(metric="rank_spread", direction=_direction(q))  # "per rank write time"
    call = _call_kind(NAMED.sub(" ", q))  # "reads.fastq" names a file, not read calls
    if call and not rank and not re.search(r"\bwhat sizes?\b|\bsizes\b", q):  # "what size were the writes?"
        return Query(metric="calls", target=call, file=named_file.group(1) if named_file else None, raw=question)
    if rank and re.search(r"\bhow many files\b|\bnumber of files\b|\bfiles? (did|does) (it|rank \d+)", q):
        return Query(metric="rank_files", scope="rank", target=rank.group(1), direction=_direction(q))
    if rank:
        target = rank.group(1)
        on = NAMED.search(question)
        file = on.group(1) if on else None
        if file and (re.search(r"\bwhy\b", q) or re.search(FIX_ASK, q)):
            # "why does rank 0 spend 90 s on spectra.dat?": the file's own counters say why
            return Query(metric="file_why", target=file, direction=_direction(q), raw=question)
        if (
            re.search(r"\b(more|less|fewer)\b.*\bthan (the )?(others|other ranks|rest|average|median)\b", q)
            and not file
        ):
            return Query(metric="slow_rank", scope="rank", target=target, yes_no=yes_no)  # "does rank 0 do more?"
        if re.search(r"\b(why|slow\w*|straggl\w*|lag\w*|doing|busy|up to|longer|going on|wrong|problem)\b", q) and not (
            file and READ_OR_WRITE_TIME.search(q)
        ):
            return Query(metric="slow_rank", scope="rank", target=target, file=file, yes_no=yes_no)
        if file and re.search(r"\b(request|transfer|access|f?read|f?write|block|i/?o) ?sizes?\b|\bwhat size\b", q):
            # "what request size does rank 1 use reading X?": the file's requests (a shared record's are every
            # rank's; Darshan keeps no size per rank)
            return Query(metric="request_size", target=file, direction=_direction(q), raw=question)
        if re.search(r"\b(how long|time|seconds|spend|spent|wait\w*|fraction|share|percent\w*|proportion)\b", q):
            return Query(metric="time", scope="rank", target=target, direction=_direction(q), file=file, raw=question)
        if re.search(r"\b(bytes|how much|data|gib|mib|gb|mb|volume|amount)\b", q) or WRITE.search(q) or READ.search(q):
            return Query(
                metric="bytes",
                scope="rank",
                target=target,
                direction=_direction(q),
                file=file,
                yes_no=yes_no,
                raw=question,
            )
    named = NAMED.search(question)
    # "why does cesm issue nearly half a million writes for under 7 GB?" asks the request size too: they are small
    why_so_many = re.search(r"\bwhy\b", q) and re.search(
        r"\b(so many|that many|too many|many|million|thousands?|hundreds? of thousands|[\d,.]+k?) "
        r"(small |tiny )?(f?writes?|f?reads?|requests?|calls?|i/?o ops|operations)\b",
        q,
    )
    if why_so_many or re.search(
        r"\b(request|transfer|access|block|i/?o|f?write|f?read) ?sizes?\b|\bwhat size\b"
        r"|\b(average|mean|typical|avg) size\b"
        r"|\b(average|mean|typical|avg) (f?write|f?read|request|call|access|transfer)s? sizes?\b"
        r"|\bsize of (the |a |each )?([\w-]+ )?(reads?|writes?|requests?)\b"
        r"|\b(accesses|requests|reads|writes)\b.*\blook like\b|\b(accesses|requests)\b.*\bsizes\b",
        q,
    ):
        return Query(
            metric="request_size", target=named.group(1) if named else None, direction=_direction(q), raw=question
        )
    if re.search(
        r"\bi/?o[- ]bound\b|\bis (the )?i/?o (why|the reason|a big part|the problem|a bottleneck)"
        r"|\bis (the )?i/?o (a|an) (\w+ )?(part|share|chunk|portion|fraction) of\b"
        r"|\bbecause of (the )?i/?o\b|\bi/?o (a|the) (big|large|main) (part|share)\b"
        r"|\b(limited|held (back|up)|slowed( down)?|bottleneck(ed)?|gated|throttled) (by|on) (the )?(file )?i/?o\b"
        r"|\bi/?o[- ]limited\b|\bi/?o (limit|hold|slow|throttl)\w*( back| down| up)? (the|this|my) (job|run)\b",
        q,
    ):
        return Query(metric="io_bound", yes_no=True, bound=bool(re.search(r"\bi/?o[- ]bound\b", q)))
    if (
        re.search(r"\bcoll?ec?ti?v\w*\b", q)
        and named
        and re.search(r"\b(why|fix|how (do|can|should) (i|we)|speed\w* up|faster|efficient|inefficient|slow)\b", q)
    ):
        # "dump.0205 takes 74 s to write collectively, how do i fix it?": why the file is slow, not a count
        return Query(metric="file_why", target=named.group(1), direction=_direction(q), raw=question)
    if (
        re.search(r"\bwhy\b", q)
        and re.search(r"\bindependent\b", q)
        and re.search(r"\bcoll?ec?ti?v\w*\b", q)
        and re.search(r"\b(hdf5?|h5)\b", q)
    ):
        # "why are there 16384 tiny independent reads in an otherwise collective HDF5 read?": the library's own
        # metadata calls beside the collective data calls
        return Query(metric="collective", direction=_direction(q), raw=question)
    if re.search(r"\bcoll?ec?ti?v\w*\b", q) and re.search(
        r"\b(why|fix|how (do|can|should) (i|we)|speed\w* up|faster|improve|tun\w*)\b", q
    ):
        # "how do I speed up the collective checkpoint?": a fix, which a count does not give
        return None
    if re.search(r"\bcoll?ec?ti?v\w*\b", q) and re.search(r"^how (long|much|big|large)\b", q):
        # "how long did the collective snapshot write take?": "collective" names the write, the question its time
        return _parse(re.sub(r"\bcoll?ec?ti?v\w*\s*", "", question, flags=re.IGNORECASE))
    if re.search(r"\bcoll?ec?ti?v\w*\b", q) or (
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
    compared = re.search(
        r"\b(writ\w*|wrote|reads?|reading)\b.*\b(longer|slower|faster|quicker|shorter|more time|less time|versus|vs\.?"
        r"|compared (to|with))\s.*\b(reads?|reading|writ\w*)\b",
        q,
    )
    if compared and compared.group(1)[0] != compared.group(4)[0] and not RANK.search(q):
        # "do the writes take longer than the reads?", "how long did writing take versus reading?"; with a file
        # named, that file's own read and write time
        return Query(metric="write_vs_read", yes_no=yes_no, target=named.group(1) if named else None, raw=question)
    if re.search(
        r"\b(write|writ\w*) time\b.*\bread\w* time\b|\bread\w* time\b.*\b(write|writ\w*) time\b"
        r"|\breads? or writes?\b|\bwrites? or reads?\b|\bwrit\w* or read\w*\b|\bread\w* or writ\w*\b"
        r"|\b(more|most) time\b.*\b(writ\w*|read\w*)\b.*\bor\b",
        q,
    ) and not re.search(r"\bhow (much|many bytes)\b|\b(bytes|data|volume|gib|gb|mib|mb)\b", q):
        return Query(metric="write_vs_read")
    if re.search(
        r"\b(which|what)\b.*\bfiles?\b.*\b(most|longest|slowest|hotspot|hot spot|bottleneck|dominat\w*)\b"
        r"|\b(hotspot|hot spot|busiest file|slowest file)\b",
        q,
    ) and not re.search(r"\bosts?\b|\b(data|bytes|volume|gb|gib|mb|mib)\b", q):
        if re.search(r"\b(read|wrote|written|write)\b\s+(\w+\s+)?(the )?most\b", q) and not re.search(
            r"\b(time|long|slow\w*)\b", q
        ):
            # "which files did it read the most from?": by the bytes moved that way, not by time
            return Query(metric="file_list", direction=_direction(q))
        return Query(metric="top_file", direction=_direction(q))
    if re.search(
        r"\b(which|what)\s+(?!ranks?\b|process\w*|procs?\b|osts?\b|nodes?\b|phases?\b|layers?\b|interfaces?\b"
        r"|modules?\b|steps?\b|apis?\b|one\b)(\.?[\w.-]+\s+)?(took|takes|spent|was|is|had)\s+the\s+(longest|slowest)\b",
        q,
    ):
        return Query(metric="top_file", direction=_direction(q))  # "which npz took the longest to read?"
    if re.search(r"\b(which|what) files\b.*\b(do|did|does|doing)\b.*\bi/?o\b(?! time)", q):
        return Query(metric="file_list")  # "what files did chroma actually do I/O on?"
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
        if named and not IFACE.search(q):  # "how many bytes went to output.log?"
            return Query(metric="file_usage", target=named.group(1), direction=_direction(q), raw=question)
        if IFACE.search(q):  # "how many bytes were written into hdf5 datasets?"
            return _iface_query(q)
        return Query(metric="bytes", direction=_direction(q), raw=question)
    if re.search(
        r"\b(spend|spending|spent|dominat\w*)\b.*\b(most|majority|bulk)\b.*(?<![-\w])i/?o\b"
        r"|\bmost of (its|the|my) (time|run ?time)\b.*\bi/?o\b|\bi/?o[- ]heavy\b|\bi/?o[- ]dominated\b",
        q,
    ) and not re.match(r"(why|how come)\b", q):
        # "does it spend most of its time in I/O?"; "why does it ..." asks for the cause, not the yes
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
    if re.fullmatch(
        r"(which|what) (darshan )?(modules?|interfaces?|layers?|apis?|librar(y|ies)|libs?)\W*", q
    ) or re.fullmatch(
        r"(which|what) (i/?o )?(modules?|interfaces?|apis?|librar(y|ies)) (is|are|was|were) (this|these|that|it)\W*", q
    ):
        return Query(metric="interfaces")  # "which modules?", "what I/O interface is this?"
    if re.search(
        r"\b(which|what)\b.*\b(interfaces?|librar(y|ies)|libs?|apis?|modules?|layers?)\b.*\b(use|used|using|did|does|do|"
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
    if (
        yes_no
        and re.search(r"\b(all|every|each)( the| of the)?( \d[\d,]*)? (ranks?|process\w*)\b", q)
        and re.search(r"\b(do|does|did|doing|perform\w*)\b[\w\s]*\bi/?o\b(?! time)", q)
        and not named
    ):
        return Query(metric="ranks_with_io", yes_no=True, target="every")  # "do all 576 ranks do I/O?"
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
    solo = IFACE.fullmatch(q.strip(" ?!."))
    if solo:
        return Query(metric="uses", scope="interface", target=INTERFACES_WORDS[solo.group(1).lower()], yes_no=True)
    if re.search(
        r"\bnumber of (ranks|processes|procs|tasks|mpi ranks)\b|\bnprocs\b|^(ranks|processes|procs)\W*$"
        r"|^how many (mpi )?(ranks|processes|procs|tasks)( and\b|\?|$)",
        q,
    ):
        return Query(metric="ranks")
    if re.search(r"\b(which|what) files?\b.*\b(most|largest|biggest)\b.*\b(data|bytes|volume)\b", q):
        return Query(metric="file_list", direction=_direction(q))
    if re.search(r"\b(which|what) files?\b.*\b(read|wrote|written|write)\b.*\b(the )?most\b", q):
        # "which files did it read the most from?": by the bytes moved that way, not by time
        return Query(metric="file_list", direction=_direction(q))
    if (
        named
        and (
            WHY_SLOW.search(q)
            or re.search(FIX_ASK, q)
            # "the traj.xyz read takes 26 s. that's a lot for 512MB, no?": a judgement of its time
            or (
                re.search(r"\b(a lot|too (long|much|many)|reasonable|normal|expected)\b", q)
                and re.search(r"\b(takes?|took|taking|\d+(\.\d+)? ?(s|sec\w*|min\w*))\b", q)
            )
        )
        and not re.search(r"\bhow (long|much|many)\b", q)  # "how long did the slowest rank spend on X?"
        # "what fraction of the run did the slowest rank spend writing X?" asks the share, not the cause ("its share
        # of kernels.dat" is its part of the file)
        and not re.search(
            r"\b(what|which) (fraction|share|percent\w*|proportion)\b"
            r"|\b(fraction|share|percent\w*|proportion) of (the |its |my )?(run|runtime|job|wall|time)\b",
            q,
        )
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
    if re.search(r"\bhow many (\w+ )?files\b", q) and not named:
        # "how many files had data written to them?": a count of files, not the bytes in them
        return Query(metric="files", direction=_direction(q), raw=question)
    if re.search(
        r"\b(bytes|volume|data|amount)\b.*\b(read|writ\w*|wrote)\b|\b(read|writ\w*|wrote)\b.*\b(bytes|volume)\b", q
    ):
        if named:
            return Query(metric="file_usage", target=named.group(1), direction=_direction(q), raw=question)
        if IFACE.search(q) and not re.search(r"\b(h5|hdf5|netcdf|nc) files?\b", q):
            # "how much data did it read and write through POSIX?" (but "the h5 file" is a file)
            return _iface_query(q)
        return Query(metric="bytes", direction=_direction(q))
    if re.search(r"\b(which|what)\b.*\b(interface|layer|api|library|module)\b.*\b(most|majority|bulk)\b", q):
        return Query(metric="top_interface")
    iface = IFACE.search(q)
    through = re.search(r"\b(through|via|over|on top of|using|use)\b", q)
    later = [m for m in IFACE.finditer(q) if through and m.start() > through.start()]
    if iface and later and later[0].group(1).lower() != iface.group(1).lower():
        # "did the hdf5 files go through MPI-IO?": the interface after "through" is the one asked about
        iface = later[0]
    if (
        iface
        and (yes_no or re.search(r"\b(use|used|using|through|via)\b", q))
        and not re.search(r"\bhow much\b", q)
        and (yes_no or not re.match(r"^\s*(what|which|how|where|when)\b", q))  # "what rate did X get through MPI-IO?"
    ):
        return Query(
            metric="uses",
            scope="interface",
            target=INTERFACES_WORDS[iface.group(1).lower()],
            yes_no=True,
            data=bool(re.search(r"\b(data|dataset\w*|bytes|writ\w*|wrote|read\w*)\b", q)),
        )
    if iface and re.search(r"\bhow much\b", q):
        return Query(
            metric="bytes", scope="interface", target=INTERFACES_WORDS[iface.group(1).lower()], direction=_direction(q)
        )
    target = named.group(1) if named else None
    ost_trouble = (
        r"(slow\w*|sluggish|bad|faulty|degraded|underperform\w*|lagg\w*|sick|broken|dragging|misbehav\w*|acting up"
        r"|anomal\w*|abnormal\w*|outliers?|unhealthy)"
    )
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
        return Query(metric="sharing", yes_no=yes_no, raw=question)
    if yes_no and re.search(r"\bon (the |an? )?(\w+ )?(nfs|lustre|gpfs|daos|xfs|ext4|local disk)\b", q):
        # "is test.out on NFS?", "is the ocean file on lustre?"
        return Query(metric="file_system", direction=_direction(q), target=target, yes_no=True, raw=question)
    if re.search(
        r"\b(file ?system|fs|mount ?point|mounted)\b|\b(which|what|where)\b.*\bstorage\b"
        r"|^where (is|are|was|were|does|do|did)\b.*\b(stored|kept|saved|located|live[sd]?|sit|sits|sat|written|put"
        r"|go|goes|went|end(ed)? up|land(ed)?)\b",
        q,
    ) and not re.search(r"\bstorage targets?\b|\b(blame|fault|problem|slow\w*|why)\b", q):
        # "was it on a parallel file system like lustre or gpfs?" asks whether, and is answered yes or no
        whether = yes_no and bool(asked_file_systems(q))
        return Query(metric="file_system", direction=_direction(q), target=target, yes_no=whether, raw=question)
    if re.search(r"\bstripe|\bstr[ip]{2}e\b|\bstripping\b|\bstriping\b", q):
        return Query(metric="stripe", target=target, yes_no=yes_no, raw=question)
    if yes_no and re.search(
        r"\b(on|over|across|to) (a |one |a single |single |several |multiple |many |more than one )osts?\b", q
    ):
        # "is each shard csv on a single OST?": the files' stripe count decides
        return Query(metric="stripe", target=target, yes_no=True, raw=question)
    ost_trouble = (
        r"(slow\w*|sluggish|bad|faulty|degraded|underperform\w*|lagg\w*|sick|broken|dragging|problem\w*|issues?"
        r"|trouble\w*|misbehav\w*|acting up|anomal\w*|abnormal\w*|outliers?|unhealthy|weird|odd|wrong)"
    )
    asks = yes_no or re.match(r"^\s*(could|can|might|may)\b", q)
    ost = r"(osts?|storage targets?|storage servers?|object storage|disks?)"
    if re.search(rf"\b{ost}\b", q) and re.search(r"\b(how many|which|what) (ranks|processes|procs)\b", q):
        return Query(metric="slow_ranks")  # "how many ranks are stuck on the slow storage target?"
    if asks and re.search(rf"\b{ost}\b.*\b{ost_trouble}\b|\b{ost_trouble}\b.*\b{ost}\b", q):
        return Query(metric="slow_ost", yes_no=True)
    if re.search(
        RATE_WORDS,
        q,
    ) and not re.search(r"\b(why|fix|speed\w* (it |this |things )?up|improve|faster|tun\w*)\b", q):
        return Query(metric="rate", direction=_direction(q), target=target, raw=question)
    if re.search(
        r"\bmet(a|)data\b|\bmeta[- ]data\b|\bopen/stat|\bopens?\b.*\btime\b"
        r"|\bopening( the| all)?( \w+)? files\b.*\b(time|take|took|long)\b",  # "how long did opening files take?"
        q,
    ):
        return Query(metric="metadata", yes_no=yes_no)
    if re.search(r"\bhow many\b.*\b(ranks|processes|procs|tasks|mpi ranks)\b|\bnprocs\b", q):
        return Query(metric="ranks")
    if re.search(r"\bhow many\b.*\bfiles\b", q):
        # records are not files
        return None if iface else Query(metric="files", direction=_direction(q), raw=question)
    if re.search(
        r"(\b(fraction|share|percent\w*|proportion)\b|%).*\b(run ?time|run|job|wall ?time)\b"
        r"|\bhow much of the (run ?time|run|job|wall ?time)\b",
        q,
    ) and _direction(q) in ("read", "write"):
        # "what fraction of the runtime was spent writing?": that direction's time against the run
        return Query(metric="io_share", direction=_direction(q))
    if re.search(
        r"(\b(fraction|share|percent\w*|proportion)\b|%).*\b(i/?o)\b|\b(i/?o)\b.*\b(fraction|share|percent\w*)\b", q
    ):
        return Query(metric="io_share")
    if re.search(
        r"\bhow much of (the |this |my |its )?([\w.-]+ )?(run ?time|run|job|wall ?time)\b.*\bi/?o\b"
        r"|\bhow much of (it|that|this)\b.*\bi/?o\b",
        q,
    ):
        # "how much of the enzo runtime is I/O?", "how long did it run, and how much of it was I/O?": the share
        return Query(metric="io_share")
    if re.search(r"\bhow long\b.*\b(run|job|take|last)\b|\brun ?time\b|\bwall ?time\b|\belapsed\b", q):
        return Query(metric="runtime")
    if re.search(
        r"\bhow much\b.*\b(data|bytes|read|writ\w*|wrote)\b|\bhow many bytes\b|\btotal\b.*\b(read|writ\w*)\b", q
    ) and not re.search(r"\bhow much (time|faster|quicker|speed\w*)\b", q):
        return Query(metric="bytes", direction=_direction(q), raw=question)
    return None
