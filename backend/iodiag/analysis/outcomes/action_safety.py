"""Action safety as code: the rules every concrete action (``Action``) must pass before a report shows it.

An action is what a user copies into a shell, a job script or the code. A wrong one does harm: ``lfs setstripe``
on a file system's mount point changes every user's new files, ``-o 0`` on a directory sends every new file to
one OST, a measurement shown as the fix fixes nothing. ``check_action`` returns the problems of one action
(empty: safe) from the facts of the log it was computed for (``ActionFacts``); each rule is one small function in
``RULES``. ``actions.py`` builds the safe forms and drops what still fails (``safe_actions``); docs/actions.md lists
the rules.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from iodiag.analysis.models import Action, Layer
from iodiag.analysis.outcomes.shell import expands_outside_quotes, shell_quote
from iodiag.analysis.views.context import Context

# --- the facts a rule needs -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class KnownDefault:
    """A setting a library already has unless the job changed it: presenting it as a fix changes nothing."""

    pattern: str
    """Regular expression (case-insensitive) that finds the setting in a command."""
    what: str
    hint: str | None = None
    """The MPI-IO hint it sets: when the log shows the job set that hint to something else, going back to the
    default is a real change, not a default presented as a fix."""


KNOWN_DEFAULTS: tuple[KnownDefault, ...] = (
    KnownDefault(r"ncmpi_set_fill\s*\([^)]*\bNC_NOFILL\b", "NC_NOFILL is PnetCDF's default fill mode"),
    KnownDefault(r"\bromio_cb_write=automatic\b", "automatic is ROMIO's default for romio_cb_write", "romio_cb_write"),
    KnownDefault(r"\bromio_cb_read=automatic\b", "automatic is ROMIO's default for romio_cb_read", "romio_cb_read"),
    KnownDefault(r"\bromio_ds_write=automatic\b", "automatic is ROMIO's default for romio_ds_write", "romio_ds_write"),
    KnownDefault(r"\bromio_ds_read=automatic\b", "automatic is ROMIO's default for romio_ds_read", "romio_ds_read"),
    KnownDefault(r"\bcb_buffer_size=16777216\b", "16 MiB is ROMIO's default collective buffer size", "cb_buffer_size"),
    KnownDefault(r"\bromio_no_indep_rw=false\b", "false is ROMIO's default for romio_no_indep_rw", "romio_no_indep_rw"),
    KnownDefault(r"\bH5FD_MPIO_INDEPENDENT\b", "independent transfers are HDF5's default"),
    KnownDefault(r"\bH5D_FILL_TIME_IFSET\b", "H5D_FILL_TIME_IFSET is HDF5's default fill time"),
)


_NEEDS_QUOTES = re.compile(r"[^\w@%+=:,./-]", re.ASCII).search
"""What ``shlex.quote`` quotes."""


class ActionFacts(BaseModel):
    """What the rules need to know about the job an action was computed for, all from its log."""

    model_config = ConfigDict(frozen=True)

    mounts: tuple[str, ...] = Field(default=(), description="mount points from the log's mount table")
    hints: dict[str, str] = Field(
        default_factory=dict,
        description="MPI-IO hints the log shows in effect (its recorded hints, and collective buffering for writes "
        "where the counters show aggregators), keys and values lower-cased",
    )
    job_dirs: frozenset[str] = Field(default=frozenset(), description="directories holding the job's files")
    job_files: frozenset[str] = Field(default=frozenset(), description="the job's file paths from the log")
    files_per_dir: dict[str, int] = Field(
        default_factory=dict, description="files the job wrote per directory in one run"
    )
    cost_layer: Layer | None = Field(default=None, description="the layer the finding's cost is in")
    interfaces: frozenset[str] = Field(
        default=frozenset(), description="interfaces the job used: STDIO, POSIX, MPI-IO, HDF5, PnetCDF"
    )
    lustre: bool = Field(default=False, description="the job has files on Lustre")
    hdf5_metadata_writes: bool = Field(
        default=False,
        description="the job's independent MPI-IO writes under HDF5 are its metadata: every dataset is "
        "already written collectively",
    )
    defaults: tuple[KnownDefault, ...] = KNOWN_DEFAULTS

    @field_validator("hints")
    @classmethod
    def _lower(cls, v: dict[str, str]) -> dict[str, str]:
        return {str(k).lower(): str(x).lower() for k, x in v.items()}

    @cached_property
    def quoted_paths(self) -> list[str]:
        """Paths from the log that a POSIX shell would split or expand unless quoted (computed once)."""
        return [p for p in self.job_files | self.job_dirs if _NEEDS_QUOTES(p)]


def facts_for(ctx: Context, layer: Layer | None) -> ActionFacts:
    """The facts of ``ctx``'s log for a finding whose cost is in ``layer`` (the job's part is computed once)."""
    return ctx.memo("action_facts", lambda: _job_facts(ctx)).model_copy(update={"cost_layer": layer})


def _job_facts(ctx: Context) -> ActionFacts:
    meta = ctx.meta
    names = frozenset(n for n in ctx.profile.names.values() if n.startswith("/"))
    per_dir: dict[str, int] = {}
    for path in _written_paths(ctx):
        d = path.rsplit("/", 1)[0] or "/"
        per_dir[d] = per_dir.get(d, 0) + 1
    has = ctx.profile.has
    interfaces = {
        name
        for name, present in (
            ("STDIO", has("STDIO")),
            ("POSIX", has("POSIX")),
            ("MPI-IO", has("MPI-IO")),
            ("HDF5", ctx.uses_hdf5),
            ("PnetCDF", has("PNETCDF_FILE") or has("PNETCDF_VAR")),
        )
        if present
    }
    return ActionFacts(
        mounts=tuple(m.path for m in meta.mounts),
        hints=_in_effect(ctx),
        job_dirs=frozenset(n.rsplit("/", 1)[0] or "/" for n in names),
        job_files=names,
        files_per_dir=per_dir,
        interfaces=frozenset(interfaces),
        lustre=has("LUSTRE") or ctx.on_file_system("lustre"),
        hdf5_metadata_writes=hdf5_metadata_writes(ctx),
    )


def _in_effect(ctx: Context) -> dict[str, str]:
    """The MPI-IO hints the log shows in effect: those it records, and collective buffering for writes where the
    counters show it (collective writes reached the file system from fewer ranks than made them)."""
    hints = {str(k).lower(): str(v).lower() for k, v in ctx.meta.hints.items()}
    m = ctx.mpiio_records
    seen = aggregators_seen(ctx)
    if len(m) and float(m["MPIIO_COLL_WRITES"].sum()) > 0 and seen is not None and seen < ctx.meta.nprocs:
        hints.setdefault("romio_cb_write", "enable")
    return hints


def aggregators_seen(ctx: Context) -> int | None:
    """Ranks that wrote at the POSIX layer to files the job opened through MPI-IO: the aggregators when the
    writes were collective. None when a reduced (every-rank) record hides who wrote."""
    ids = ctx.mpiio_ids
    p = ctx.posix_records
    if not ids or not len(p):
        return None
    ranks = p["rank"][p.isin("id", ids) & (p["POSIX_WRITES"] > 0)]
    if not len(ranks) or (ranks < 0).any():
        return None
    return len(np.unique(ranks))


def _written_paths(ctx: Context) -> set[str]:
    ids: set[int] = set()
    for module, col in (("POSIX", "POSIX_BYTES_WRITTEN"), ("STDIO", "STDIO_BYTES_WRITTEN")):
        t = ctx.records(module)
        if len(t) and col in t.columns:
            ids.update(np.unique(t["id"][t[col] > 0]).tolist())
    names = ctx.profile.names
    return {p for i in ids if (p := names.get(int(i), "")).startswith("/")}


def hdf5_metadata_writes(ctx: Context) -> bool:
    """True when a job writing through HDF5 made independent MPI-IO writes although every dataset it wrote was
    written collectively (``H5D_USE_MPIIO_COLLECTIVE``): those independent writes are HDF5's own metadata (a few
    hundred bytes each), which a collective data transfer list does not touch."""
    if not ctx.uses_hdf5:
        return False
    m, d = ctx.mpiio_records, ctx.records("H5D")
    if not len(m) or not len(d) or float(m["MPIIO_INDEP_WRITES"].sum()) <= 0:
        return False
    if not {"H5D_WRITES", "H5D_USE_MPIIO_COLLECTIVE"} <= set(d.columns):
        return False  # an older H5D module: the log cannot tell
    wrote = d["H5D_WRITES"] > 0
    return bool(wrote.any() and (d["H5D_USE_MPIIO_COLLECTIVE"][wrote] > 0).all())


# --- reading a command -----------------------------------------------------------------------------------------

_SHELL_WORDS = frozenset(
    {"lfs", "export", "tar", "srun", "mpiexec", "mpirun", "mkdir", "cd", "cp", "mv", "rm", "lctl", "env"}
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def is_shell(command: str) -> bool:
    """A command typed into a shell or job script (not a line of C, Fortran or an HDF5/PnetCDF call)."""
    first = command.strip().split(maxsplit=1)[0] if command.strip() else ""
    return first in _SHELL_WORDS or first.startswith("darshan-") or bool(_ASSIGNMENT.match(first))


def _shell_words(command: str) -> list[str] | None:
    """The command's words and operators as a POSIX shell reads them (quotes removed); None when it does not
    parse (an unbalanced quote)."""
    lex = shlex.shlex(command, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    try:
        return list(lex)
    except ValueError:
        return None


_OPERATORS = frozenset({"&&", "||", ";", "|", "&", ">", ">>", "<", "(", ")", ";;", "<<", "|&", "&>"})


def _simple_commands(command: str) -> list[list[str]]:
    words = _shell_words(command) or []
    out: list[list[str]] = [[]]
    for w in words:
        if w in _OPERATORS:
            out.append([])
        else:
            out[-1].append(w)
    return [c for c in out if c]


@dataclass(frozen=True)
class LfsCommand:
    sub: str
    options: dict[str, str]
    target: str | None


_LFS_ARGS = {
    "-c": "count", "--stripe-count": "count", "--count": "count",
    "-S": "size", "--stripe-size": "size", "--size": "size", "-s": "size",
    "-i": "index", "--stripe-index": "index", "--index": "index",
    "-o": "ost", "--ost": "ost", "--ost-list": "ost",
    "-p": "pool", "--pool": "pool", "-E": "end", "--component-end": "end", "-L": "layout", "--layout": "layout",
}  # fmt: skip


def lfs_commands(command: str) -> list[LfsCommand]:
    """Every ``lfs`` command in a shell command, with its options and its target (the last plain word)."""
    out: list[LfsCommand] = []
    if not is_shell(command):
        return out
    for words in _simple_commands(command):
        if words[0] != "lfs" or len(words) < 2:
            continue
        opts: dict[str, str] = {}
        plain: list[str] = []
        rest = iter(words[2:])
        for w in rest:
            name, eq, value = w.partition("=")
            if name in _LFS_ARGS:
                opts[_LFS_ARGS[name]] = value if eq else next(rest, "")
            elif not w.startswith("-"):
                plain.append(w)
        out.append(LfsCommand(words[1], opts, plain[-1] if plain else None))
    return out


def ost_list(spec: str) -> list[int]:
    """``1,2-4,7`` -> [1, 2, 3, 4, 7] (lfs's OST list syntax); unreadable parts are skipped."""
    osts: list[int] = []
    for part in spec.split(","):
        lo, dash, hi = part.strip().partition("-")
        try:
            osts.extend(range(int(lo, 0), int(hi, 0) + 1) if dash else [int(lo, 0)])
        except ValueError:
            continue
    return osts


_HINT_PAIR = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)=([^\s:;\"',=]+)")


def hint_pairs(command: str) -> list[tuple[str, str]]:
    """The ``key=value`` settings a command makes (ROMIO hints, environment variables), lower-cased."""
    return [(k.lower(), v.lower()) for k, v in _HINT_PAIR.findall(command)]


_MEASURES = re.compile(
    r"MPICH_MPIIO_(?:X?STATS|TIMERS|HINTS_DISPLAY|AGGREGATOR_PLACEMENT_DISPLAY)|DXT_ENABLE_IO_TRACE|"
    r"(?<![\w/.-])DARSHAN_[A-Z_]+=|(?<![\w/.-])darshan-[a-z-]+\s|\blfs\s+(?:getstripe|df|osts|check)\b|I_MPI_STATS"
)


def is_measurement(action: Action) -> bool:
    """The command only measures (timers, statistics, traces, Darshan settings): it changes no run time."""
    return bool(_MEASURES.search(action.command))


MEASURE_LABEL = "measure first"


# --- the rules -------------------------------------------------------------------------------------------------

Rule = Callable[[Action, ActionFacts, bool], list[str]]
"""(action, facts, shown first) -> problems, each a sentence."""

RULES: dict[str, Rule] = {}


def rule(name: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        RULES[name] = fn
        return fn

    return register


def _norm(path: str) -> str:
    return posixpath.normpath(path) if path.startswith("/") else path


@rule("lfs-target")
def lfs_target(action: Action, facts: ActionFacts, first: bool) -> list[str]:
    """(a) An ``lfs`` command acts on the job's own directory or file: never ``/``, a mount point, or a path
    above one (the default layout of a file system root applies to every user's new files)."""
    problems: list[str] = []
    mounts = {_norm(m) for m in facts.mounts}
    for cmd in lfs_commands(action.command):
        if cmd.sub not in ("setstripe", "migrate", "mirror") or cmd.target is None:
            continue
        t = _norm(cmd.target)
        if t == "/":
            problems.append(f"lfs {cmd.sub} targets the root directory /")
        elif t in mounts:
            problems.append(f"lfs {cmd.sub} targets {t}, a mount point in the log's mount table")
        elif above := sorted(m for m in mounts if m.startswith(t.rstrip("/") + "/")):
            problems.append(f"lfs {cmd.sub} targets {t}, above the mount point {above[0]}")
        elif (facts.job_dirs or facts.job_files) and t not in facts.job_dirs and t not in facts.job_files:
            problems.append(f"lfs {cmd.sub} targets {t}, which holds none of this job's files")
    return problems


@rule("ost-pinning")
def ost_pinning(action: Action, facts: ActionFacts, first: bool) -> list[str]:
    """(b) ``lfs setstripe -o``/``-i`` fixes the OSTs of every new file under a directory: never one OST, and
    never a fixed set for a directory the job writes many files into (to avoid a slow OST, report it; a file
    striped over many OSTs may name healthy ones)."""
    problems: list[str] = []
    for cmd in lfs_commands(action.command):
        if cmd.sub != "setstripe":
            continue
        target = _norm(cmd.target or "")
        many = facts.files_per_dir.get(target, 0) > 1
        if "ost" in cmd.options:
            osts = sorted(set(ost_list(cmd.options["ost"])))
            count = cmd.options.get("count")
            if len(osts) <= 1:
                problems.append(f"lfs setstripe -o {cmd.options['ost']} pins every new file to one OST")
            elif many:
                problems.append(
                    f"lfs setstripe -o {cmd.options['ost']} on {target} puts all {facts.files_per_dir[target]:,} "
                    "files it gets per run on the same OSTs"
                )
            if count is not None and count.lstrip("-").isdigit() and int(count) not in (len(osts), 0):
                problems.append(f"lfs setstripe -c {count} disagrees with the {len(osts)} OSTs of -o (lfs refuses)")
        index = cmd.options.get("index", "-1")
        if index.lstrip("-").isdigit() and int(index) >= 0 and (many or cmd.options.get("count") == "1"):
            problems.append(f"lfs setstripe -i {index} starts every new file on OST {index}")
    return problems


@rule("hint-in-effect")
def hint_in_effect(action: Action, facts: ActionFacts, first: bool) -> list[str]:
    """(c) A hint or setting the log shows already in effect is not a change."""
    pairs = hint_pairs(action.command)
    return [f"{k}={v} is already in effect (the log's hints)" for k, v in pairs if facts.hints.get(k) == v]


@rule("default-as-fix")
def default_as_fix(action: Action, facts: ActionFacts, first: bool) -> list[str]:
    """(d) A library's default presented as a fix: unless the log shows the job changed it, it changes nothing."""
    problems: list[str] = []
    for d in facts.defaults:
        if not re.search(d.pattern, action.command, re.IGNORECASE):
            continue
        if d.hint is not None and d.hint in facts.hints and not re.search(d.pattern, f"{d.hint}={facts.hints[d.hint]}"):
            continue  # the job set it otherwise: going back to the default is a change
        problems.append(f"{d.what}: presented as a fix it changes nothing")
    return problems


_ADVICE_LAYER = (
    (re.compile(r"\bsetvbuf\b|GFORTRAN_UNFORMATTED_BUFFER_SIZE"), "STDIO"),
    (re.compile(r"\bH5[A-Z][A-Za-z_]*\(|\bH5FD_"), "HDF5"),
    (re.compile(r"\bncmpi_|PNETCDF_HINTS"), "PnetCDF"),
    (re.compile(r"MPICH_MPIIO_HINTS|ROMIO_HINTS"), "MPI-IO"),
)
"""Settings that tune an interface the job already uses. Calls that move I/O to another interface (MPI-IO's
collective calls for a POSIX-only MPI job) are a change of layer, not a setting of one, and are not listed."""


def advice_layers(action: Action) -> set[str]:
    """The interfaces whose settings an action changes (Lustre for lfs)."""
    layers = {layer for pattern, layer in _ADVICE_LAYER if pattern.search(action.command)}
    if lfs_commands(action.command):
        layers.add("Lustre")
    return layers


@rule("wrong-layer")
def wrong_layer(action: Action, facts: ActionFacts, first: bool) -> list[str]:
    """(e) Advice for a layer the cost is not in: STDIO stream buffers when the cost is in POSIX calls, an HDF5
    collective data transfer when the independent HDF5 writes are its small metadata writes, a library or file
    system the job does not use."""
    problems: list[str] = []
    layers = advice_layers(action)
    if "STDIO" in layers and facts.cost_layer is not None and facts.cost_layer is not Layer.STDIO:
        problems.append(f"STDIO buffer advice for a cost in {facts.cost_layer.value}, not in STDIO calls")
    if facts.hdf5_metadata_writes and re.search(r"H5Pset_dxpl_mpio\s*\([^)]*COLLECTIVE", action.command):
        problems.append(
            "a collective HDF5 data transfer for independent writes that are HDF5 metadata (the datasets are "
            "already written collectively)"
        )
    if facts.interfaces:
        for layer in sorted(layers - {"Lustre"}):
            if layer not in facts.interfaces:
                problems.append(f"{layer} advice for a job that does not use {layer}")
    if "Lustre" in layers and not facts.lustre:
        problems.append("an lfs command for a job with no file on Lustre")
    return problems


@rule("measurement")
def measurement(action: Action, facts: ActionFacts, first: bool) -> list[str]:
    """(f) A step that only measures says so ("measure first") and is never a finding's first action, which the
    verdict shows as the fix."""
    if not is_measurement(action):
        return []
    problems: list[str] = []
    if MEASURE_LABEL not in f"{action.where} {action.effect}".lower():
        problems.append(f"a measurement not labelled as one ('{MEASURE_LABEL}' in where or effect)")
    if first:
        problems.append("a measurement as the finding's first action: the verdict would show it as the fix")
    if action.saves_s:
        problems.append("a measurement that claims to save time")
    return problems


_WHERE_PLACES = ("shell", "job script", "code", "hints", "mpi_info", "environment")
_WHERE_TIMES = ("before", "after", "when", "each", "every", "once", "then", "first", "while", "during")


@rule("where")
def where(action: Action, facts: ActionFacts, first: bool) -> list[str]:
    """(g) Every action names where it goes (shell, job script, code, hints file) and when."""
    text = action.where.lower()
    if not text.strip():
        return ["no 'where': the action does not say where it goes"]
    problems: list[str] = []
    if not any(p in text for p in _WHERE_PLACES):
        problems.append("'where' names no place (shell, job script, code, hints file)")
    if not any(re.search(rf"\b{t}\b", text) for t in _WHERE_TIMES):
        problems.append("'where' does not say when (before, after, each ...)")
    return problems


@rule("shell-quoting")
def shell_quoting(action: Action, facts: ActionFacts, first: bool) -> list[str]:
    """(h) Paths from the log reach a shell only quoted (``shell_quote``): spaces, quotes, ``$``, ``;`` or
    backticks in a file name must not split a word, expand or start a command."""
    if not is_shell(action.command):
        return []
    cmd = action.command
    problems: list[str] = []
    if _shell_words(cmd) is None:
        return ["the shell command does not parse (unbalanced quotes)"]
    if expands_outside_quotes(cmd):
        problems.append("the shell command expands $ or backticks outside single quotes")
    ops = {w for w in _shell_words(cmd) or [] if w in _OPERATORS} - {"&&"}
    if ops:
        problems.append(f"the shell command has operators {sorted(ops)} (only && joins steps)")
    for p in facts.quoted_paths:
        if p in cmd and shell_quote(p) not in cmd:
            problems.append(f"the log's path {p!r} reaches the shell unquoted")
    return problems


# --- checking and keeping -------------------------------------------------------------------------------------


def check_action(action: Action, facts: ActionFacts, *, first: bool = False) -> list[str]:
    """The problems of one action (empty: safe), each prefixed by its rule's name. ``first``: the action is its
    finding's first, the one the verdict shows."""
    return [f"{name}: {p}" for name, fn in RULES.items() for p in fn(action, facts, first)]


def check_actions(actions: Iterable[Action], facts: ActionFacts) -> list[str]:
    """The problems of a finding's actions in their order."""
    return [f"{a.command!r}: {p}" for i, a in enumerate(actions) for p in check_action(a, facts, first=i == 0)]


LAYOUT_WHERE = "shell, on the file's directory before the job creates the file (an existing file keeps its layout)"


def layout_action(command: str) -> Action:
    """A layout suggestion's command (``LustreLayout.command``) as an action, to check it by the same rules."""
    return Action(recommendation="lustre-layout", command=command, where=LAYOUT_WHERE, effect="")


def safe_actions(actions: Iterable[Action], facts: ActionFacts) -> list[Action]:
    """The actions that pass every rule, measurements after the changes they help to choose (and dropped when
    nothing else is left to show first)."""
    ordered = sorted(actions, key=is_measurement)  # stable: the changes keep their order
    out: list[Action] = []
    for a in ordered:
        if not check_action(a, facts, first=not out):
            out.append(a)
    return out
