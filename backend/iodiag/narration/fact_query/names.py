"""Files a question names: a file name, a placeholder pattern ("rankN.csv"), a glob, or a group of files by a word."""

from __future__ import annotations

import re
from typing import NamedTuple

from iodiag.analysis.models import (
    FileGroup,
    Report,
)
from iodiag.narration.fact_query.vocabulary import NAMED, NOT_A_NAME


def loose_name(q: str, report: Report, plural: bool = True) -> str | None:
    """A word of the question that is part of the name of a file the report holds ("restart", "particle")."""
    paths = report_paths(report)
    bases = {p.rsplit("/", 1)[-1].lower() for p in paths}
    for numbered in re.findall(r"(?<![\w.])([a-z][\w-]*\.\d+)(?![\w.])", q):
        if numbered in bases:
            return str(numbered)  # "why is writing part.0 so slow": a name whose extension is a number
    for word in re.findall(r"[a-z][a-z0-9_]{3,}", q):
        if word in NOT_A_NAME:
            continue
        # "the restarts" names restart.0463.0.bin; without ``plural``, a plural names many files, not one
        for w in (word, word[:-1]) if plural and word.endswith("s") and len(word) > 4 else (word,):
            if any(w in b for b in bases):
                return str(w)
    for word in re.findall(r"\b([a-z][a-z0-9]{2}) (?:files?|dumps?|outputs?)\b", q):
        # "the plt file": a short word names a file only right before "file", and only as the start of its name
        if word not in NOT_A_NAME and word not in _SHORT_NOT_A_NAME and any(b.startswith(word) for b in bases):
            return str(word)
    for word in re.findall(r"[a-z][a-z0-9_]{3,}", q):
        if word in NOT_A_NAME:
            continue
        # "the history file" names history/hist_0283.dat: the one file in a folder of that name
        inside = {p for p in paths if word in p.lower().split("/")[:-1]}
        if len(inside) == 1:
            return next(iter(inside)).rsplit("/", 1)[-1]
    for word in re.findall(r"[a-z]{4,}", q):
        # "the checkpoint" of a job whose checkpoint is restart.00176.dat: the names codes give the same thing
        for other in _SAME_THING.get(word.removesuffix("s"), ()):
            if any(other in b for b in bases):
                return other
    return None


# What users call a file, and what codes name it
_SAME_THING: dict[str, tuple[str, ...]] = {
    "checkpoint": ("restart", "chk", "ckpt", "chkpt"),
    "restart": ("checkpoint", "chk", "ckpt"),
    "snapshot": ("snap", "plt", "dump"),
    "trajectory": ("traj", "xtc", "dcd"),
}


def activity_name(q: str, report: Report) -> str | None:
    """A word for what the job does that names its files by their stem ("the logging" names output.log, "the
    checkpointing" chk.h5's "checkpoint" files): the word without its "-ing", a whole part of some file's name."""
    parts = {t for p in report_paths(report) for t in re.split(r"[^a-z0-9]+", p.rsplit("/", 1)[-1].lower()) if t}
    for word in re.findall(r"\b([a-z]{3,})ing\b", q):
        for stem in (word, word[:-1] if len(word) >= 4 and word[-1] == word[-2] else word, word + "e"):
            if len(stem) >= 3 and stem not in NOT_A_NAME and stem in parts:
                return str(stem)
    return None


_SHORT_NOT_A_NAME = frozenset({"the", "any", "one", "two", "all", "big", "new", "old", "our", "its", "log", "raw"})


def report_paths(report: Report) -> list[str]:
    paths = [f.path for f in report.top_files]
    paths += [fe.path for f in report.findings for fe in f.files]
    return list(dict.fromkeys(paths))


def is_named(path: str, target: str | None) -> bool:
    """Whether ``path`` is the file (or one of the files, for ``.npz``) the question names; a name with a
    placeholder ("rankN.csv", "atoms.*.txt", "field_XXXX.dat") names every file it fits."""
    if not target:
        return True
    base = path.rsplit("/", 1)[-1]
    if base == target or (target.startswith(".") and base.endswith(target)) or _contains(base, target):
        return True
    if target.islower() and _contains(base.lower(), target):
        return True  # "each cell_d file" names Cell_D_3: a name typed in lower case
    pattern = name_pattern(target)
    return bool(pattern and pattern.fullmatch(base))


def _contains(base: str, target: str) -> bool:
    """``target`` inside ``base``, not as part of a longer number: part.1 is not part.118, rank7 not rank17."""
    for m in re.finditer(re.escape(target), base):
        after = base[m.end() : m.end() + 1]
        before = base[m.start() - 1 : m.start()] if m.start() else ""
        if (target[-1].isdigit() and after.isdigit()) or (target[0].isdigit() and before.isdigit()):
            continue
        return True
    return False


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


# Words before "files" that name no pattern ("how many output files?" is every written file).
_NOT_A_KIND = frozenset({"the", "of", "all", "any", "many", "much", "different", "unique", "distinct", "separate"})


FILE_NOUNS = (
    r"(?:files?|shards?|records?|chunks?|tables?|images?|frames?|dumps?|snapshots?|checkpoints?|tiles?|samples?"
    r"|patch(?:es)?|events?|slices?|libs?|librar(?:y|ies))"
)


def group_named(report: Report, question: str) -> FileGroup | None:
    """The file group a question names by the word(s) before "files" ("json files", "restart files", ".npz
    files", "config files"): the group with the most files whose extension, name or folder the word is."""
    globbed = glob_group(report, question)
    if globbed is not None:
        return globbed
    found = [g for _, g in _phrase_groups(report, question)]
    if not found:
        # The noun can be the name itself: "reading snapshots" names the snap_#.# files, "the shards" shard_#.npy
        for m in re.finditer(rf"\b({FILE_NOUNS})(?:ing)?\b", question.lower()):  # "checkpointing" too
            noun = m.group(1).removesuffix("s")
            if noun != "file":
                found += [g for g in report.file_groups if g.files > 1 and group_has(g, noun)]
    return max(found, key=lambda g: (g.files, g.bytes_read + g.bytes_written), default=None)


def groups_named(report: Report, question: str) -> list[FileGroup]:
    """Every group the question names, in the order it names them ("the plt01000/Cell_D files, and the traj
    frame files"): for each phrase, the group with the most files it fits."""

    def size(g: FileGroup) -> tuple[int, int]:
        return g.files, g.bytes_read + g.bytes_written

    best: dict[int, FileGroup] = {}
    for at, g in _phrase_groups(report, question):
        if at not in best or size(g) > size(best[at]):
            best[at] = g
    out: list[FileGroup] = []
    for _, g in sorted(best.items()):
        if g not in out:
            out.append(g)
    return out


# File types people use as nouns for the files themselves ("the shard csvs", "each rank's h5")
_EXT_NOUNS = (
    r"(?:csvs?|h5s?|hdf5|ncs?|nc4|jsons?|npys?|npzs?|xyzs?|vtks?|vtus?|parquets?|pngs?|tfrecords?|fastqs?|fasta"
    r"|bins?|dats?)"
)


def _phrase_groups(report: Report, question: str) -> list[tuple[int, FileGroup]]:
    """(where the phrase starts, a group it fits) for each "<word(s)> files" phrase of the question."""
    found: list[tuple[int, FileGroup]] = []
    settled: set[int] = set()
    # A lookahead, so "of the shard files" is tried at "the shard files" too (matches overlap).
    # "the config-file overhead" names the config files as "the config file overhead" does
    spaced = re.sub(r"(?<=[a-z0-9])-(?=(?:files?|shards?|records?|tables?|tiles?|samples?)\b)", " ", question.lower())
    for m in re.finditer(rf"(?=\b((?:\.?[a-z0-9_]+ ){{1,2}})({FILE_NOUNS}|{_EXT_NOUNS})\b)", spaced):
        words = [
            w for w in m.group(1).split() if w not in NOT_A_NAME and w not in _NOT_A_KIND and len(w.lstrip(".")) > 1
        ]
        if words and re.fullmatch(_EXT_NOUNS, m.group(2)):
            # "each shard csv": the extension is the noun, and a second word the group must fit
            words.append(m.group(2).removesuffix("s") if m.group(2) != "xyzs" else "xyz")
        at = m.start() + len(m.group(1))
        if at in settled:
            continue  # "csv files" inside "case csv files", which named its groups already
        # "the case csv files": the groups every word fits (cases/#/case_#.csv) before those one word fits (*.csv)
        every = [g for g in report.file_groups if len(words) > 1 and all(group_has(g, w) for w in words)]
        if every:
            found += [(at, g) for g in every]
            settled.add(at)
            continue
        before = len(found)
        for w in words:
            found += [(at, g) for g in report.file_groups if group_has(g, w)]
        last = m.group(1).split()[-1]
        if len(found) == before and last in NOT_A_NAME and last not in _NOT_A_KIND and len(last) >= 4:
            # "part files": a word that is not a name elsewhere ("a big part of the run") is one right before
            # "files", where nothing else names them
            found += [(at, g) for g in report.file_groups if group_has(g, last)]
    return found


# Extensions that are also everyday words in a question about a job ("the log", "the output", "data")
_WORD_EXTENSIONS = frozenset({"log", "out", "in", "data", "dat", "run", "job", "all", "new", "old", "bin", "tmp"})


def ext_group(report: Report, question: str) -> FileGroup | None:
    """The job-wide group of one extension a question names by the bare extension ("the csv output", "h5
    writes"), where no noun like "files" follows it."""
    words = set(re.findall(r"\b\.?([a-z][a-z0-9]{1,5})\b", question.lower())) - _WORD_EXTENSIONS
    found = [g for g in report.file_groups if g.pattern.startswith("*.") and g.pattern[2:].lower() in words]
    return max(found, key=lambda g: g.files, default=None)


def group_of_name(report: Report, target: str) -> FileGroup | None:
    """The group a partial name stands for when it fits several files ("its restart.0379 file" where each rank
    has restart.0379.<rank>.bin): the smallest numbered group holding every listed file the name fits."""
    paths = [p for p in report_paths(report) if is_named(p, target)]
    if len(paths) < 2:
        return None
    fits = [g for g in report.file_groups if "#" in g.pattern and all(group_regex(g).fullmatch(p) for p in paths)]
    return min(fits, key=lambda g: g.files, default=None)


def folder_group(report: Report, question: str) -> FileGroup | None:
    """The group whose files sit in a folder the question names by its own name ("total checkpoint size
    (chk00392)?" for chk00392/part.#): a word with a digit or an underscore equal to a group's last folder."""
    words = {w for w in re.findall(r"[a-z][a-z0-9_.-]*[0-9_][a-z0-9_.-]*", question.lower())}
    found = [
        g
        for g in report.file_groups
        if g.files > 1 and g.pattern.rsplit("/", 2)[-2:-1] and g.pattern.rsplit("/", 2)[-2].lower() in words
    ]
    return max(found, key=lambda g: (g.files, g.bytes_read + g.bytes_written), default=None)


def group_holding(report: Report, base: str) -> FileGroup | None:
    """The numbered family a file named by its base name belongs to ("restart.0379.3.bin" in restart.#.#.bin),
    for a file the report lists no numbers of its own for: the smallest family whose name pattern fits it."""
    fits = []
    for g in report.file_groups:
        name = g.pattern.rsplit("/", 1)[-1]
        if "#" not in name:
            continue
        rx = "".join(r"\d+" if p == "#" else r"[^/]*" if p == "*" else re.escape(p) for p in re.split(r"(#|\*)", name))
        if re.fullmatch(rx, base, re.IGNORECASE):
            fits.append(g)
    return min(fits, key=lambda g: g.files, default=None)


def glob_group(report: Report, question: str) -> FileGroup | None:
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
            # "snap_463.*" names snap_463.0 ... snap_463.1023, whose group pattern is snap_#.#: digits as "#"
            fits = all(w == ext or w in pattern or re.sub(r"\d+", "#", w) in pattern for w in words)
            if fits and (best is None or g.files > best.files):
                best = g
    return best


# A kind of file named by its format rather than its extension: "the python files" are *.py
KIND_EXTENSIONS = {
    "python": ("py", "pyc"),
    "yaml": ("yaml", "yml"),
    "hdf5": ("h5", "hdf5", "he5"),
    "hdf": ("h5", "hdf5", "hdf"),
    "netcdf": ("nc", "nc4", "cdf"),
    "numpy": ("npy", "npz"),
    "text": ("txt",),
    "pickle": ("pkl", "pickle"),
    "jpeg": ("jpg", "jpeg"),
    "tiff": ("tif", "tiff"),
    "fortran": ("f", "f90"),
}


def group_has(g: FileGroup, word: str) -> bool:
    folder, _, base = g.pattern.rpartition("/")
    ext = base.rsplit(".", 1)[-1].lower() if "." in base else ""
    w = word.lstrip(".")
    if w == ext or ext in KIND_EXTENSIONS.get(w, ()):
        return True
    if folder and w == folder.rsplit("/", 1)[-1].lower() and base in ("*", "*." + ext):
        return True  # "the db files": every file in db/, however short the folder's name
    if word.startswith(".") or len(w) < 4:
        return False
    words = [t for t in re.split(r"[^a-z0-9]+", (folder.rsplit("/", 1)[-1] + " " + base).lower()) if t]
    short = ABBREVIATIONS.get(w.removesuffix("s"), ())
    if short and any(re.sub(r"\d+", "", t) in short for t in words):
        return True  # "the checkpoint write" names chk00220/part.#: the short form codes use for the word
    tokens = {t for t in words if len(t) >= 4}
    return any(t.startswith(w) or w.startswith(t) for t in tokens)


# The short forms codes write for what people call their files ("chk00220/", "plt01000/", "traj/").
ABBREVIATIONS = {
    "checkpoint": ("chk", "ckpt", "chkpt", "cp", "checkpoint", "restart", "rst"),
    "restart": ("rst", "restart", "chk", "ckpt", "chkpt"),
    "snapshot": ("snap", "snapshot", "snp"),
    "plotfile": ("plt", "plotfile"),
    "plot": ("plt",),
    "trajectory": ("traj", "trj"),
    "history": ("hist", "history"),
    "diagnostic": ("diag", "diags"),
    "statistic": ("stat", "stats"),
}


def group_regex(g: FileGroup) -> re.Pattern[str]:
    """The paths a group's pattern stands for ("dir/s#.yaml": digit runs; "*.json": any name)."""
    parts = re.split(r"(#|\*)", g.pattern)
    body = "".join(r"\d+" if p == "#" else r"[^/]*" if p == "*" else re.escape(p) for p in parts)
    return re.compile(("(?:.*/)?" if "/" not in g.pattern else "") + body)


def named_in(path: str, question: str) -> bool:
    """Whether the question names this file (its base name, as written)."""
    base = path.rsplit("/", 1)[-1]
    return bool(base) and base.lower() in question.lower()


_SOFTWARE_WORDS = re.compile(r"\b(python|imports?|importing|packages?|modules?|site-packages|librar\w*|\.so)\b")
_SPLIT_SIDES = re.compile(r"\s(?:or|vs\.?|versus|than|compared (?:to|with)|against)\s", re.I)


class Side(NamedTuple):
    label: str
    per_rank: float  # the time one rank spends on it: a shared file's slowest rank, a family's mean per rank
    summed: float
    paths: list[str]


def _side(report: Report, text: str) -> Side | None:
    """One side of "which costs more, X or Y?": a named file, a family of files, or the Python packages."""
    low = text.lower()
    named = NAMED.search(text)
    word = named.group(1) if named else None
    f = next((x for x in report.top_files if word and is_named(x.path, word)), None)
    if f is None and (not named or "*" in text):
        g = glob_group(report, text) or group_named(report, text)
        if g is not None and g.files > 1:
            each = g.io_time_s / max(g.ranks, 1)
            return Side(f"the {g.files:,} `{g.pattern}` files", each, g.io_time_s, [])
        soft = [s for s in report.software_files if s.io_time_s > 0]
        if soft and _SOFTWARE_WORDS.search(low):
            kept = max(soft, key=lambda s: s.io_time_s)
            each = kept.io_time_s / max(report.job.nprocs, 1)
            return Side(f"the {kept.kind} ({kept.files:,} files, e.g. `{kept.example}`)", each, kept.io_time_s, [])
        loose = loose_name(low, report, plural=True)
        f = next((x for x in report.top_files if loose and is_named(x.path, loose)), None)
    if f is None:
        return None
    return Side(f"`{f.path}`", f.slowest_s or f.io_time_s, f.io_time_s, [f.path])


def compared_sides(report: Report, question: str) -> tuple[Side, Side] | None:
    """The two things "which costs more, X or Y?" weighs, each one the log holds; None when either side names
    nothing it holds, or both the same."""
    head = re.split(r"[:,]\s", question, maxsplit=1)
    body = head[1] if len(head) > 1 and _SPLIT_SIDES.search(head[1]) else question
    parts = _SPLIT_SIDES.split(body, maxsplit=1)
    if len(parts) != 2:
        return None
    a, b = _side(report, parts[0]), _side(report, parts[1])
    if a is None or b is None or a.label == b.label:
        return None
    return a, b
