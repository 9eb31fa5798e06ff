"""The words and patterns questions are read by: interfaces, judgements, call kinds, fix and why phrasings."""

from __future__ import annotations

import re

# --- questions -> queries -----------------------------------------------------------------------------------

INTERFACES_WORDS = {
    "hdf5": "HDF5",
    "h5": "HDF5",
    "h5d": "HDF5",
    "h5f": "HDF5",
    "pnetcdf": "PnetCDF",
    "netcdf": "PnetCDF",
    "mpi-io": "MPI-IO",
    "mpiio": "MPI-IO",
    "mpi io": "MPI-IO",
    "stdio": "STDIO",
    "fwrite": "STDIO",
    "fread": "STDIO",
    "fopen": "STDIO",
    "fopened": "STDIO",
    "posix": "POSIX",
    "dfs": "DFS",
    "daos": "DAOS",
}
INTERFACES = INTERFACES_WORDS  # the names a question (or a model's tool call) may give an interface by
# Not inside a program's name ("this mpi-io-test run").
IFACE = re.compile(
    r"(?<![.\-/])\b(" + "|".join(re.escape(k) for k in INTERFACES_WORDS) + r")\b(?!\.\w|-(?!level\b|layer\b)\w)",
    re.IGNORECASE,
)  # nor part of a file's name ("eos_table.h5", "ior-posix.out.0001")
# "rank 3", "rank #3", and the first of several: "ranks 140, 396 and 652"
RANK = re.compile(r"\branks?\s*#?\s*(\d+)\b", re.IGNORECASE)
WRITE = re.compile(
    r"\b(f?writ\w*|wrote|output|dump|checkpoint|save\w*|fprintf|fputs|(went|goes|go|gone) into)\b", re.IGNORECASE
)
READ = re.compile(r"\b(f?read\w*|input|load\w*|fscanf|fgets)\b", re.IGNORECASE)
# A file named in the question: a word with an extension of letters (restart.0040.bin, traj.xyz, .npz files).
NAMED = re.compile(
    r"(?<![\w*.])([A-Za-z][\w-]*(?:\.[\w-]+)*\.(?:N|X{2,}|#+)(?![\w.])|(?:[\w-]+\.)*[\w-]*\*[\w*-]*(?:\.[\w*-]+)*\.[A-Za-z][A-Za-z0-9]{1,5}|[\w-]*(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{1,5}|[A-Za-z][\w-]*(?:\.[A-Za-z][\w-]*)*\.\d{2,8}|(?<=/)[A-Za-z][\w-]*\.\d{1,8}|[A-Za-z][\w-]*_\d+\.\d{1,8}|[A-Za-z][\w-]{2,}\.\d)(?!\w|\.\w)"
)  # also a numbered name: dump.0253, snap_164.0, part.0, and after a folder any number ("monitor/m.0")
# Judgements of whether I/O matters, in the words people use for them.
IO_JUDGED = re.compile(
    r"\bi/?o\b.*\b(eating|eats|hogging|a lot of the run\w*|much of the run\w*)\b|"
    r"\bi/?o\b.*\b(significant|big deal|a (big |real )?problem|an issue|worth|matters?|concern\w*|bottleneck|"
    r"more than half|most of (the )?(run|time)|majority|big chunk|large chunk|big part|large part|big share|"
    r"hurt\w*|slowing|holding (it|us|me|the \w+) (up|back))\b"
    r"|\b(worry|worth \w+ing)\b.*\bi/?o\b"
    r"|\b(a lot of|lots of|much|much of|most of|a big chunk of|a large part of|significant) (the |its |my )?"
    r"(time|run ?time|run)\b.*(?<![-\w])i/?o\b"
)
# What a Darshan log never holds: said so plainly instead of answered from something near it.
UNRECORDED = re.compile(
    r"\b(hostnames?|host names?|hosts?\b|node ?names?|(?:which|what) (?:compute )?nodes?|compute nodes?|how many nodes|"
    r"number of nodes|memory(?![- ]?(un|mis)?align)|ram|cpu|gpu|"
    r"network|energy|power draw|environment variables?|offsets? of each|page ?cache|cache hits?|exit (?:status|code)|"
    r"crash\w*|finish\w* (?:cleanly|successfully|ok)|mpi communication|communication time|killed|"
    r"exit\w* (?:normally|cleanly|ok|successfully)|terminat\w*|queue\w*|peak memory|"
    r"\d+(?:st|nd|rd|th) (?:write|read|request|call|open))\b"
)
# "Is this log ok?": the record itself, answered from the data-quality findings and partial flags.
_JUDGED_WORD = (
    r"(ok|okay|fine|off|sane|sound|broken|healthy|good|wrong|valid|consistent|inconsistent|corrupt\w*|trust\w*"
    r"|reliable|bad|bogus|garbage|weird|suspicious|invalid|impossible|nonsens\w*|real|legit\w*|believ\w*|accurate)"
)
LOG_HEALTH = re.compile(
    rf"\b(this|the|my) ([\w-]+ )?(darshan )?log(file)?\b.*\b{_JUDGED_WORD}\b"
    rf"|\b(something|anything) {_JUDGED_WORD}\b.*\b(this|the|my) (darshan )?log(file)?\b"
    rf"|\b(these|the|its|this log's) ([\w-]+ )?(counters|numbers|records|values)\b.*\b{_JUDGED_WORD}\b"
    rf"|\b{_JUDGED_WORD}\b.*\b(the |these |its )?(per-rank |rank )?"
    r"(timings|times|totals|byte totals|counters|numbers)\b"
)
FIRST_JUDGED = re.compile(rf"\b{_JUDGED_WORD}\b")
DROPPED = re.compile(
    r"\b(drop\w*|lost|lose|miss(ed|ing)?|skip\w*|truncat\w*|cut (off|short)|discard\w*|ran out|run out)\b"
    r".*\b(records?|files?|entries|data|i/?o|anything|something)\b"
    r"|\b(records?|files?|entries)\b.*\b(dropped|lost|missing|truncated|discarded|left out)\b"
)
REAL_COUNT = re.compile(
    r"\b(is|are) (that|this|it|those|these) (the )?(real|true|actual|full|complete|whole|right|correct) "
    r"(number|count|total|list|amount)\b|\b(is|are) (that|this|those|these) all( of them| the files)?\b"
)
CAPTURED = re.compile(
    r"\b(all|every|everything)\b.*\b(captur\w*|recorded|logged|instrumented)\b"
    r"|\b(all|every)( of)?( the)? files?\b.*\b(in|on) (this|the) (darshan )?log\b"
    r"|\b(captur\w*|record\w*|log\w*|instrument\w*|catch\w*|caught|track\w*|see|saw)\b.*\b(all|every|everything)\b"
    r".*\b(files?|records?|i/?o)\b"
)
_FINE = r"(healthy|ok|okay|fine|good|sane|reasonable)"  # words that judge I/O sound
# "Is there anything wrong with the I/O?", "is the I/O healthy?": a yes/no judgement of the job's I/O.
IO_PROBLEM = re.compile(
    rf"\b(anything|something|is there \w+) (wrong|off|amiss|bad|to fix|to improve)\b"
    rf"|\b(an?|any) (i/?o )?(problems?|issues?)\b|\bi/?o (problems?|issues?)\b"
    rf"|\b(is|are|was|looks?) (the |my |this |its )?(job'?s? )?i/?o {_FINE}\b"
    rf"|\b(is|was) (the |this |my )?(job|run) healthy\b|^\s*(is|was) (the )?i/?o {_FINE}\b"
    rf"|^\s*(healthy|ok|okay|fine)\s*\??$"
)
# A named topic ("is metadata a problem?") is asked about that topic, not the job's I/O as a whole.
TOPIC = re.compile(
    r"\b(met(a|)data|osts?|stripe\w*|rank \d+|small|random|collective\w*|imbalance|file ?system|stdio|hdf5|"
    r"mpi-?io|posix|reads?|writes?)\b"
)
HEALTHY = re.compile(rf"\b{_FINE}\b")
READ_OR_WRITE_TIME = re.compile(r"\b(how long|time|seconds|spend|spent)\b")
YES_NO = re.compile(
    r"^\s*(?:(?:hey|hi|hello|so|ok|okay|um|uh|quick question|question)[,!:.]?\s+)*"
    r"(did|does|do|is|was|were|are|has|have|any)\b",
    re.IGNORECASE,
)  # "hey, is there a slow OST in this run?" asks yes or no too


SHARE_WORDS = {
    "half": 0.5,
    "a third": 1 / 3,
    "one third": 1 / 3,
    "a quarter": 0.25,
    "a fourth": 0.25,
    "a tenth": 0.1,
    "a fifth": 0.2,
    "one fifth": 0.2,
    "one quarter": 0.25,
    "one tenth": 0.1,
    "two thirds": 2 / 3,
    "three quarters": 0.75,
}


# Words too common in questions to name a file by ("why is writing the output slow?").
NOT_A_NAME = frozenset(
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
        "written",
        "wrote",
        "read",
        "reads",
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
CALL_WORDS: tuple[tuple[str, str], ...] = (
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
CALL_NOUN = {
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
    "small_reads": "small reads (under 1 MiB)",
    "small_writes": "small writes (under 1 MiB)",
}


FIX_ASK = (
    r"\b(fix|cheaper|improve|optimi[sz]e|tune|quicker|suggest\w*|recommend\w*|less time|ideas?|advice|tips?)\b"
    r"|\bspeed\w* (it |this |that |them |things )?up\b|\b(be|get|got) sped up\b"
    r"|\bwhat (should|do|can|could|would) (i|we|you) (do|change|try)\b|\bwhat to (do|change|try)\b"
    r"|\bhow should\b|\binstead\b|\bdifferently\b|\bwhat should (change|be changed|\w+ do)\b"
    r"|\bwhat can (be|i|we) done\b|\bwhat can (i|we) do\b|\banything (i|we) can do\b"
    r"|\bhow (can|do|could|would) (i|we) (reduce|cut|lower|avoid|shrink)\b"
)
MOST_OF = (
    r"\b(bulk|most|majority|mostly|dominat\w*|more than half|largest part|biggest part|main part|bigger|larger"
    r"|(main|primary|chief|biggest|largest|dominant) (cost|share|expense|time sink|consumer))\b"
)
WHY_SLOW = re.compile(
    r"\b(why|slow\w*|crawl\w*|speed\w* up|sped up|faster|takes? (forever|so long|long)|(spend|take|use)s? less time"
    r"|(spends?|takes?|taking|spending) (ages|forever)|what'?s (going on|happening|wrong)|what is (going on|happening)"
    r"|(cut|reduce|lower|trim)\b.*\b(overhead|time|cost))\b"
)


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


def asked_file_systems(question: str) -> set[str]:
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


BOUND_SHARE = 1 / 3
"""The share of the run above which a job is called I/O-bound (I/O is a large part of it, not just worth cutting)."""


NEGLIGIBLE_SHARE = 0.01
"""Below this share of the run, recorded I/O is negligible: a partial log then leans no (missing records only add)."""

BIG_SHARE = 0.10
"""The share of the run from which I/O is "a big part" or "significant" of it: more than a share worth cutting."""

BIG_PART = re.compile(
    r"\b(big|large|major|main|huge|significant|substantial|meaningful|sizable|sizeable) (part|share|chunk|portion"
    r"|fraction)\b"
    r"|\bi/?o\b.*\b(significant|substantial)\b|\b(significant|substantial)\b.*(?<![-\w])i/?o\b"
)
"""A question about I/O's size in the run ("is I/O a big part of the runtime?"), not whether it is worth cutting."""


MOST_OF_RUN = re.compile(
    r"\b(most of|the majority of|more than half( of)?|the bulk of) (the |its |my |our )?"
    r"(time|run ?time|run|wall ?time)\b"
    r"|\b(mostly|majority) i/?o\b|\bi/?o[- ]dominated\b"
)
"""A question whether I/O is more than half of the run ("does it spend most of its time in I/O?")."""


EVERY_RANK = re.compile(r"\b(every|each|both|all( the| [\d,]+)?) (ranks?|process\w*|procs|tasks?)\b")
"""A question about all ranks alike ("does every rank open the table files?")."""


# Words whose misspellings ("sequentail", "colective", "metdata") would otherwise miss every rule; only long
# words, and only one slip away (a letter dropped, added, changed or two swapped), so "sequence" stays itself.
SHORT_TYPOS = {
    "totl": "total",
    "toal": "total",
    "wirte": "write",
    "wrtie": "write",
    "wirtes": "writes",
    "wrtes": "writes",
    "raed": "read",
    "reda": "read",
    "raeds": "reads",
    "wrote": "wrote",
    "teh": "the",
    "hwo": "how",
    "mcuh": "much",
    "slwo": "slow",
}
"""Short words typed with one slip, too short for the one-edit match below to be safe ("totl written?")."""

SPELLED = frozenset(
    {
        "sequential",
        "sequentially",
        "collective",
        "collectively",
        "independent",
        "independently",
        "metadata",
        "bandwidth",
        "throughput",
        "striping",
        "aggregator",
        "aggregators",
        "checkpoint",
        "checkpoints",
        "bottleneck",
        "imbalance",
        "imbalanced",
        "performance",
        "significant",
        "misaligned",
        "unaligned",
        "contention",
        "filesystem",
        "straggler",
        "stragglers",
        "parallel",
        "request",
        "requests",
        "writing",
        "reading",
        "complete",
        "incomplete",
        "truncated",
        "fraction",
        "interface",
        "interfaces",
    }
)


def _one_slip(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with one letter dropped, added or changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def spelled(question: str) -> str:
    """The question with slips in the words the rules key on put right ("are the reads sequentail?")."""

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        if low in SPELLED:
            return word
        near = next((w for w in sorted(SPELLED) if abs(len(w) - len(low)) <= 1 and _one_slip(low, w)), None)
        return near or word

    question = re.sub(
        r"(?<![\w./-])[A-Za-z]{3,6}(?![\w./-])", lambda m: SHORT_TYPOS.get(m.group(0).lower(), m.group(0)), question
    )
    return re.sub(r"(?<![\w./-])[A-Za-z]{7,}(?![\w./-])", fix, question)


# "does opening the samples cost more than reading them?": metadata time against data time, either way round
META_VS_DATA = re.compile(
    r"\b(open\w*|stat\w*|metadata|creat\w*|clos\w*)\b.*\b(more|longer|slower|less|shorter|than|versus|vs\.?)\b"
    r".*\b(read\w*|writ\w*|data|transfer\w*)\b"
    r"|\b(read\w*|writ\w*|data|transfer\w*)\b.*\b(more|longer|slower|less|shorter|than|versus|vs\.?)\b"
    r".*\b(open\w*|stat\w*|metadata|creat\w*|clos\w*)\b"
)


# "restart.h5 is on lustre, right?" and "energies.txt - is that on lustre?" ask yes or no as much as "is
# restart.h5 on lustre?" does: a statement with a tag, or a name followed by a question about "that", is put in
# the question's usual order so every rule keyed on "is/did/does ..." reads it.
_TAG = re.compile(
    r"^(?P<stmt>.+?)[\s,;.!-]*\b(?:right|correct|true|yeah|yes|no|eh|isn'?t (?:it|that)|is(?:n'?t)? (?:it|that) so"
    r"|wasn'?t it|aren'?t they|weren'?t they|didn'?t (?:it|they)|doesn'?t it|don'?t they|am i right|yes or no"
    r"|or not)\s*\?+\s*$",
    re.IGNORECASE,
)
_AUX = r"is|are|was|were|does|do|did|has|have|had"
_STATEMENT = re.compile(rf"^(?P<subj>(?:\S+\s+){{0,6}}?\S+)\s+(?P<aux>{_AUX})\s+(?!not\b|there\b)(?P<rest>.+)$", re.I)
_ASKS = re.compile(rf"^\s*({_AUX}|can|could|will|would|should|why|how|what|which|where|when|who)\b", re.I)
_FILLER = re.compile(r"^(?:(?:so|ok|okay|and|but|well|um|uh|then|i think|i guess|i assume)[,]?\s+)+", re.I)
_HEAD_THEN_WORD = re.compile(
    r"^(?P<head>[^?]+?)\s*(?:\s[-–—]|:)\s+(?!(?:why|how|what|which|where|when|who|help|ideas?|thoughts?|fix)\b)"
    r"(?P<word>[a-z][\w-]*(?: or [a-z][\w-]*)?)\s*\?+\s*$",
    re.I,
)
_ABOUT_THAT = re.compile(
    rf"^(?P<head>[^?]+?)\s*(?:\s[-–—]|:)\s+(?P<aux>{_AUX})\s+(?:that|it|this|they|those|these)\b(?P<rest>.*)$", re.I
)


# "flux.dat is on lustre?" and "the input files sit on GPFS?": a statement with only a question mark asks yes or
# no too. Only a short subject before the verb counts, and no question word anywhere, so "each rank writes 850 KB
# but spends 2 s in I/O - where does it go?" stays the question it is.
_WH_ANYWHERE = re.compile(r"\b(why|how|what|which|where|when|who|whose)(?:s|'s|’s)?\b", re.I)
# a subject ending in one of these is a noun phrase running on ("the read size", "avg read size"), not a subject
_RUNS_ON = re.compile(
    r"\b(the|a|an|avg|average|mean|typical|its|their|my|this|that|per|of|total|max|min|largest|biggest|smallest"
    r"|any|each|every|file|request|i/?o)$",
    re.I,
)
_VERB_STATEMENT = re.compile(
    r"^(?P<subj>(?:\S+\s+){0,5}?\S+)\s+(?P<verb>gets|get|sits|sit|lives|live|uses|use|goes|go|lands|land|ends up"
    r"|end up|stays|stay|reads|read|writes|write|takes|take|spends|spend|needs|need|hits|hit|fits|fit)\s+(?P<rest>.+)$",
    re.I,
)
# "has a stripe count of 32": "has" owning a thing, asked as "does ... have"
_HAS_THING = re.compile(r"^(a|an|the|any|its|their|no|more|fewer|only|one|\d)", re.I)


def _reordered(subj: str, aux: str, rest: str) -> str:
    """The auxiliary first; "has"/"does" owning or doing a thing ("has a stripe count of 32", "does most of the
    I/O") are asked with "do" ("does X have ...", "does X do ...")."""
    low = aux.lower()
    if low in ("has", "have", "had") and _HAS_THING.match(rest):
        return f"{'did' if low == 'had' else 'does' if low == 'has' else 'do'} {subj} have {rest}?"
    if low in ("does", "do", "did") and (_HAS_THING.match(rest) or re.match(r"(most|all|nearly|almost|much)\b", rest)):
        return f"{aux} {subj} do {rest}?"
    return f"{aux} {subj} {rest}?"


def _runs_on(subj: str) -> bool:
    """Whether a would-be subject is a clause or a noun phrase running on, not the subject of a statement."""
    return bool(re.search(r"[,;:]|\s[-–—]\s", subj) or _RUNS_ON.search(subj))


def _untagged(text: str) -> str | None:
    """ "flux.dat is on lustre?" -> "is flux.dat on lustre?"; None where the text is not such a statement."""
    if not text.endswith("?") or _ASKS.match(text) or _WH_ANYWHERE.search(text):
        return None
    said = _FILLER.sub("", text.rstrip("? ")).strip()
    stmt = _STATEMENT.match(said)
    if stmt is not None:
        if _runs_on(stmt["subj"]):
            return None  # "darshan shows 4096 files, is that real?": a question after a clause, already asked
        return _reordered(stmt["subj"], stmt["aux"], stmt["rest"])
    verb = _VERB_STATEMENT.match(said)
    if verb is None or _runs_on(verb["subj"]):
        return None
    word = verb["verb"].lower()
    third = word.endswith("s") and word not in ("ends up",)
    base = word[:-1] if third else word.replace("ends up", "end up")
    base = {"goe": "go"}.get(base, base)
    return f"{'does' if third or word == 'ends up' else 'do'} {verb['subj']} {base} {verb['rest']}?"


def as_question(question: str) -> str:
    """The question in the usual order when it was asked as a statement with a tag, about "that", or with only
    a question mark."""
    text = question.strip()
    about = _ABOUT_THAT.match(text)
    if about:
        return f"{about['aux']} {about['head'].strip()}{about['rest']}"
    word = _HEAD_THEN_WORD.match(text)
    if word and not _ASKS.match(text):
        # "kernels.dat access pattern - sequential?": is the head what the word says
        return f"is {word['head'].strip()} {word['word']}?"
    tag = _TAG.match(text)
    if not tag or _ASKS.match(text):
        return _untagged(text) or question
    said = _FILLER.sub("", tag["stmt"].strip())
    stmt = _STATEMENT.match(said)
    if stmt is None:
        # "the ranks all read one file, right?": no auxiliary to move; "did" asks the same
        return f"did {said.rstrip(' ,;.')}?"
    return _reordered(stmt["subj"], stmt["aux"], stmt["rest"].rstrip(" ,;."))


# "are the hist.h5 reads at least 1 MiB each?": a request size the question measures against
SIZE_ASKED = re.compile(
    r"\b(at least|over|above|more than|bigger than|larger than|greater than|under|below|less than|smaller than"
    r"|at most|no more than|no bigger than)\s*(\d+(?:\.\d+)?)\s*(b|bytes?|k|kb|kib|m|mb|mib|g|gb|gib)\b"
)
_UNITS = {"b": 1, "byte": 1, "bytes": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20}
_UNITS |= {"mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}


# "are the patch reads 4 KB each?", "written in 16 KB chunks?": a size stated as the requests' own, asked as is
SIZE_SAID = re.compile(
    r"\b(?:of |in |about |around |roughly |~)?(\d+(?:\.\d+)?)\s*(b|bytes?|k|kb|kib|m|mb|mib|g|gb|gib)"
    r"(?:\s+|-)(?:each|apiece|chunks?|requests?|reads?|writes?|blocks?|pieces?|calls?|transfers?|i/?os?"
    r"|per (?:read|write|call|request|op|operation))\b"
)


def size_asked(question: str) -> tuple[str, int] | None:
    """("at least", 1048576) for "... at least 1 MiB each?": the comparison and the size in bytes; ("about",
    4096) for "are the reads 4 KB each?"."""
    low = question.lower()
    m = SIZE_ASKED.search(low)
    if m:
        return m.group(1), int(float(m.group(2)) * _UNITS[m.group(3)])
    said = SIZE_SAID.search(low)
    return ("about", int(float(said.group(1)) * _UNITS[said.group(2)])) if said else None


def size_meets(size: float, comparison: str, bar: int) -> bool:
    """Whether a request size meets the question's comparison ("at least 1 MiB": 1 MiB itself meets it; "4 KB
    each" is met within a tenth either way, so KB and KiB both hold)."""
    if comparison == "about":
        return abs(size - bar) <= 0.1 * bar
    if comparison in ("at least",):
        return size >= bar
    if comparison in ("over", "above", "more than", "bigger than", "larger than", "greater than"):
        return size > bar
    if comparison in ("at most", "no more than", "no bigger than"):
        return size <= bar
    return size < bar


STRIPE_BAR = re.compile(
    r"\b(more than|greater than|at least|fewer than|less than|under|over|across|on)\s+(\d+)\s+"
    r"(osts?|stripes?|targets?)\b"
)
"""A stripe count asked against a number ("more than 8 OSTs", "at least 4 stripes", "over 256 OSTs")."""

STRIPE_SAID = re.compile(
    r"\bstripe[ _]?count(?:\s+(?:of|is|=|:|set to))?\s*=?\s*(\d+)\b|\b(\d+)\s+stripes\b|\blfs setstripe\s+-c\s+(\d+)"
)
"""A stripe count the question states ("a stripe count of 32", "stripe_count=4", "8 stripes"): that many."""


REREAD = re.compile(
    r"\bre-?read\w*|\bread\w* (it |them |its \w+ |the \w+ )?(back|again)\b|\bmore than once\b|\btwice\b"
    r"|\b(multiple|several|many) times\b|\brepeated(ly)?\b|\bover and over\b|\bredundant\w*"
    r"|\bsame (files?|data|input|bytes)\b.*\b(again|over|twice|times)\b"
)
"""Asks whether data was read more than once: "is grid.nc re-read?", "does each rank read its file twice?"."""
