"""The verdict: is I/O why the job is slow, and if so which causes cost the most. Computed once, here.

Renderers, the web UI, the narrator and the system report only display ``Report.verdict``.
"""

from __future__ import annotations

from collections.abc import Callable

from iodiag.analysis.models import Cause, Confidence, Finding, Severity, Verdict
from iodiag.analysis.recommendations import RECOMMENDATIONS
from iodiag.analysis.registry import CHECKS, Kind
from iodiag.analysis.views.context import Context, pct
from iodiag.analysis.views.file_usage import busiest_files
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes, human_seconds
from iodiag.ingest.truncation import COPY_AGAIN, CUT_READ_ERROR

MAX_CAUSES = 5
SYMPTOMS = frozenset({"J04", "P19", "T01"})
"""Findings that say some ranks took longer, not why: ranked as causes only when nothing else explains them."""
EXPLAINS = 0.5
"""Share of the largest cost a non-symptom cause must reach to explain a symptom."""


def percent(ratio: float) -> str:
    """Whole percent for headlines; never rounds a non-zero share down to 0 % or a partial one up to 100 %."""
    pct = ratio * 100
    if 0 < pct < 1:
        return "<1%"
    if 99 < pct < 100:
        return ">99%"
    return f"{pct:.0f}%"


def build(ctx: Context, findings: list[Finding], t: Thresholds) -> Verdict:
    s = ctx.io_share
    caveats = _caveats(ctx, findings)
    matters = ctx.io_matters
    if s is not None and s.runtime_s > 0 and matters is None and ctx.incomplete is not None:
        return Verdict(
            io_matters=None,
            io_share=s.share_slowest,
            level=Severity.INFO,
            headline=unknown_headline(ctx),
            causes=rank_causes(findings, s.slowest_rank_io_s, s.runtime_s),
            where_time_went=where_time_went(ctx),
            caveats=caveats,
        )
    if s is None or s.runtime_s <= 0 or matters is None:
        empty = any(f.code == "D03" for f in findings) or s is None
        if empty and ctx.incomplete is not None:
            # Nothing recorded because the data modules could not be read, not because there was no I/O.
            inc = ctx.incomplete
            return Verdict(
                io_matters=None,
                level=Severity.INFO,
                headline=f"Unknown whether I/O is why this job is slow: Darshan's {inc.module} module {inc.reason}, "
                f"so the log holds none of the job's I/O. {_how_to_complete(ctx)}.",
                caveats=caveats,
            )
        if empty:
            # A job that recorded no I/O at all did not lose its run time to I/O (unless Darshan was off,
            # which the caveat says).
            return Verdict(
                io_matters=False if ctx.meta.runtime_s > 0 and not ctx.profile.problems else None,
                level=Severity.INFO,
                headline="No I/O was recorded: this log cannot explain a slow run.",
                caveats=[
                    *caveats,
                    "If the job did read or write files, Darshan was not instrumenting them (not linked or "
                    "preloaded, or the modules disabled).",
                ],
            )
        return Verdict(
            io_matters=None,
            io_share=None,
            level=Severity.INFO,
            headline="The log has no usable run time, so the I/O share of the run is unknown.",
            where_time_went=where_time_went(ctx),
            caveats=caveats,
        )
    run = human_seconds(s.runtime_s)
    io = human_seconds(s.slowest_rank_io_s)
    went = where_time_went(ctx)
    if not matters:
        # Under 1 % of the run, "<1%" alone reads like a rounding; the word says what it means for the job
        share = ("a negligible " if s.share_slowest < 0.01 else "") + percent(s.share_slowest)
        why = (
            f"it took {share} of the {run} run ({io} on the busiest rank)"
            if s.slowest_rank_io_s >= t.io_matters_min_seconds
            else f"the busiest rank spent {io} in it, {share} of the {run} run"
            + (", too little time to matter however large its share" if s.share_slowest >= t.io_share_high else "")
        )
        return Verdict(
            io_matters=False,
            io_share=s.share_slowest,
            level=Severity.OK,
            headline=f"I/O is not why this job is slow: {why}; look at computation and communication.",
            where_time_went=went,
            caveats=caveats,
        )
    causes = rank_causes(findings, s.slowest_rank_io_s, s.runtime_s)
    level = Severity.CRITICAL if s.share_slowest >= t.io_share_high else Severity.WARNING
    lead = f"I/O takes {percent(s.share_slowest)} of this {run} run ({io} on the busiest rank)"
    if causes:
        top = causes[0]
        # One action: the recommendation's title with this job's concrete setting, else its summary.
        f_top = next(f for f in findings if f.code == top.code)
        title = action_title(f_top)
        action = f" {top.action}" if top.action else ""
        if top.command and title:
            action = f" {title}: `{top.command}`."
        said, below = lead_words(causes)
        symptom_only = top.code in SYMPTOMS
        named = f"{top.code}: {top.subject}" if top.subject else top.code
        if top.confidence is Confidence.LOW:
            headline = (
                f"{lead}; no measured cause stands out; the likeliest is {_lower_first(top.title)} ({named}), "
                "at most "
                f"≈ {human_seconds(top.seconds)} ({percent(top.share_of_runtime)} of the run, an upper bound).{action}"
            )
        elif symptom_only and _solo_share(f_top) >= 0.5:
            headline = (
                f"{lead}; {said} {_lower_first(top.title)} ({named}), ≈ "
                f"{human_seconds(top.seconds)} ({percent(top.share_of_runtime)} of the run{below}): I/O that rank "
                f"{f_top.ranks[0]} did alone on files no other rank touched, while the others waited.{action}"
            )
        elif symptom_only and f_top.metric("shared_rank_bytes"):
            headline = (
                f"{lead}; {said} {_lower_first(top.title)} ({named}), ≈ "
                f"{human_seconds(top.seconds)} ({percent(top.share_of_runtime)} of the run{below}): rank "
                f"{f_top.ranks[0]} moved far more of a shared file than an even share, while the others "
                f"waited.{action}"
            )
        elif symptom_only:
            headline = (
                f"{lead}; {said} {_lower_first(top.title)} ({named}), ≈ "
                f"{human_seconds(top.seconds)} ({percent(top.share_of_runtime)} of the run{below}), and nothing in the "
                f"log's counters explains why those ranks were slower.{action}"
            )
        else:
            headline = (
                f"{lead}; {said} {_lower_first(top.title)} ({named}), ≈ "
                f"{human_seconds(top.seconds)} ({percent(top.share_of_runtime)} of the run{below}).{action}"
            )
    else:
        headline = f"{lead}; {bandwidth_bound(ctx)}"
    return Verdict(
        io_matters=True,
        io_share=s.share_slowest,
        level=level,
        headline=headline,
        causes=causes,
        where_time_went=went,
        caveats=caveats,
    )


def lead_words(causes: list[Cause]) -> tuple[str, str]:
    """How a headline introduces ``causes[0]`` ("the largest cost is"), and what it adds to the cost's bracket.

    "Largest" only where no listed cause costs more. A root cause leads the symptom that measures the same time
    one layer down even when that measure is a little higher; the headline then says "root cause" and gives the
    other number, so the first cause and the list below it never disagree. An upper bound that exceeds a measured
    cost makes the first "the largest measured"."""
    top = causes[0]
    shown = human_seconds(top.seconds)
    higher = next(
        (
            c
            for c in causes[1:]
            if c.confidence is not Confidence.LOW and c.seconds > top.seconds and human_seconds(c.seconds) != shown
        ),
        None,
    )
    if higher is not None:  # only _roots_first puts a cheaper measured cause first
        return (
            "the root cause is",
            f"; {higher.code} measures the same time one layer down as ≈ {human_seconds(higher.seconds)}",
        )
    if any(c.seconds * SAME_COST > top.seconds for c in causes[1:]):
        return "the largest measured cost is", ""
    return "the largest cost is", ""


def _solo_share(f: Finding) -> float:
    """Share of a symptom's cost that its rank spent on files no other rank touched (J04's evidence)."""
    solo = next((m.value for m in f.evidence if m.name == "solo_io_time"), 0.0)
    cost = f.impact.seconds if f.impact is not None and f.impact.seconds else 0.0
    return float(solo) / cost if cost > 0 and f.ranks else 0.0


WORK_IMBALANCE = 2.0
"""A slow rank that moved this many times the mean rank's bytes was slow because it had more work."""


def settle_symptoms(ctx: Context, findings: list[Finding]) -> list[Finding]:
    """Symptom findings (some ranks took longer) shown as info when a cause on the same ranks explains them.

    A slow OST makes the ranks with files on it the slowest at the same work: shown as a second critical
    problem, the symptom would send the user after the imbalance instead of its cause. Explained means: a
    cause (not itself a symptom, not an upper bound) worth at least ``EXPLAINS`` of the symptom's seconds names
    one of the symptom's ranks, and the slow rank did not have much more work than the others
    (``WORK_IMBALANCE``): rank 0 writing everyone's output is a problem of its own, whatever interface it
    used. Causes that name no ranks explain nothing here.
    """
    causes = [
        f
        for f in findings
        if f.code not in SYMPTOMS
        and f.severity in (Severity.CRITICAL, Severity.WARNING)
        and f.ranks
        and f.impact is not None
        and f.impact.seconds
        and f.impact.confidence is not Confidence.LOW
        and CHECKS.get(f.code) is not None
        and CHECKS[f.code].kind == Kind.CAUSE
    ]
    out: list[Finding] = []
    for f in findings:
        if f.code in SYMPTOMS and f.severity in (Severity.CRITICAL, Severity.WARNING) and f.impact and f.ranks:
            own = f.impact.seconds or 0.0
            by = next(
                (g for g in causes if (g.impact.seconds or 0.0) >= EXPLAINS * own and set(g.ranks) & set(f.ranks)),  # type: ignore[union-attr]
                None,
            )
            ratio = ctx.rank_work_ratio(f.ranks[0])
            if by is not None and ratio is not None and ratio < WORK_IMBALANCE:
                note = f" (Shown as info: explained by {_lower_first(by.title)} ({by.code}) on the same ranks.)"
                f = f.model_copy(
                    update={"severity": Severity.INFO, "message": f.message + note, "explained_by": by.code}
                )
        out.append(f)
    return out


# Causes that are how another cause costs time on the same files: small fread/fwrite calls (P05/P06 counting
# STDIO's calls) are the bulk-data-through-STDIO problem (S01) itself, whose fix (a parallel I/O library, or
# larger buffers) is theirs too; shown twice, one file's seconds would be priced twice.
EXPLAINED_ON_FILE = {"P05": ("S01",), "P06": ("S01",)}


def settle_same_file(findings: list[Finding]) -> list[Finding]:
    """A cause shown as info when another cause naming every one of its files, worth at least ``EXPLAINS`` of
    its seconds, explains it (``EXPLAINED_ON_FILE``): one file's time is priced once, under its root cause."""
    out: list[Finding] = []
    for f in findings:
        by_codes = EXPLAINED_ON_FILE.get(f.code, ())
        if by_codes and f.severity in (Severity.CRITICAL, Severity.WARNING) and f.impact and f.files:
            own = f.impact.seconds or 0.0
            paths = {fe.path for fe in f.files}
            by = next(
                (
                    g
                    for g in findings
                    if g.code in by_codes
                    and g.severity in (Severity.CRITICAL, Severity.WARNING)
                    and g.impact is not None
                    and (g.impact.seconds or 0.0) >= EXPLAINS * own
                    and f.files_total <= g.files_total
                    and paths <= {fe.path for fe in g.files}
                ),
                None,
            )
            if by is not None:
                note = f" (Shown as info: it is how {_lower_first(by.title)} ({by.code}) costs time on the same files.)"
                f = f.model_copy(
                    update={"severity": Severity.INFO, "message": f.message + note, "explained_by": by.code}
                )
        out.append(f)
    return out


def settle_roots(findings: list[Finding], t: Thresholds) -> list[Finding]:
    """A low-confidence root cause (``ROOTS``) whose lower-layer finding on the same files was measured or
    modelled with confidence, and costs no more than twice the root's time, is backed by it: the time is known
    to be spent there, so the root is a modelled cost like any other, and can lead it (``_roots_first``)."""
    by_code = {f.code: f for f in findings}
    backed: dict[str, str] = {}
    for root, below in ROOTS.items():
        r = by_code.get(root)
        if r is None or r.impact is None or not r.impact.seconds or r.impact.confidence is not Confidence.LOW:
            continue
        for code in sorted(below):
            f = by_code.get(code)
            if f is not None and f.explained_by is None and backs(f, r):
                backed[root] = code
                break
    return [_backed_by(f, backed[f.code], t) if f.code in backed else f for f in findings]


def backs(symptom: Finding, root: Finding) -> bool:
    """``symptom`` is a confident cost on files ``root`` names too, of at most 1 / ``EXPLAINS`` its seconds."""
    a, b = symptom.impact, root.impact
    if a is None or b is None or not a.seconds or not b.seconds or a.confidence is Confidence.LOW:
        return False
    if symptom.severity not in (Severity.CRITICAL, Severity.WARNING) or b.seconds < EXPLAINS * a.seconds:
        return False
    paths = {fe.path for fe in symptom.files}
    return bool(paths) and paths <= {fe.path for fe in root.files}


def _backed_by(root: Finding, mechanism: str, t: Thresholds) -> Finding:
    """A low-confidence root cause whose mechanism on the same files was measured or modelled with confidence
    (independent writes whose lock contention L06 timed): its saving is still a model, but no longer a guess, so
    it grades as a modelled cost does (critical from ``severity_critical_share`` of the run, where its rule
    allows)."""
    imp = root.impact
    if imp is None or imp.confidence is not Confidence.LOW or imp.basis.startswith("modelled: upper bound"):
        return root
    basis = f"{imp.basis}; the time on those files is confirmed by {mechanism}, which it explains"
    update: dict[str, object] = {"impact": imp.model_copy(update={"confidence": Confidence.MEDIUM, "basis": basis})}
    spec = CHECKS.get(root.code)
    if (
        root.severity is Severity.WARNING
        and (imp.share_of_runtime or 0.0) >= t.severity_critical_share
        and spec is not None
        and spec.severity is Severity.CRITICAL
    ):
        update["severity"] = Severity.CRITICAL
    return root.model_copy(update=update)


def rank_causes(findings: list[Finding], io_seconds: float, runtime: float) -> list[Cause]:
    """Critical and warning causes by cost, one per family, each at its finding's own cost (one number per
    fact: the card, the verdict and the chat read the same seconds)."""
    candidates = [
        f
        for f in findings
        if f.severity in (Severity.CRITICAL, Severity.WARNING)
        and f.impact is not None
        and f.impact.seconds
        and CHECKS.get(f.code) is not None
        and CHECKS[f.code].kind == Kind.CAUSE
    ]
    # Measured and modelled costs lead; an upper bound (low confidence) follows them whatever its size.
    candidates.sort(
        key=lambda f: (
            f.impact.confidence is Confidence.LOW,  # type: ignore[union-attr]
            -round(f.impact.seconds or 0.0, 3),  # type: ignore[union-attr]
            # On a tie the more specific diagnosis leads: a cross-layer root cause over its symptom.
            not f.code.startswith("X"),
            f.severity.rank,
            f.code,
        )
    )
    candidates = _roots_first(candidates)
    # A symptom (one rank slower than the rest) is a cause only when no pattern in the log explains it: a
    # cause worth at least half the symptom's time is taken to be why those ranks were slow; a smaller one
    # cannot account for the wait.
    explained = any(
        f.code not in SYMPTOMS
        and f.impact is not None
        and f.impact.confidence is not Confidence.LOW
        and (f.impact.seconds or 0.0) >= EXPLAINS * max((g.impact.seconds or 0.0) for g in candidates if g.impact)
        for f in candidates
    )
    seen: set[str] = set()
    out: list[Cause] = []
    for f in candidates:
        family = CHECKS[f.code].family
        if family in seen or (explained and f.code in SYMPTOMS and not _worked_alone(f, candidates)):
            continue
        seen.add(family)
        assert f.impact is not None and f.impact.seconds is not None
        # The finding's own cost, as its card shows it (already capped at the busiest rank's I/O time):
        # causes may overlap, and each says how much of the run it alone explains.
        seconds = min(f.impact.seconds, io_seconds)
        out.append(
            Cause(
                code=f.code,
                title=f.title,
                seconds=seconds,
                share_of_runtime=min(seconds / runtime, 1.0) if runtime > 0 else 0.0,
                summary=f.message,
                subject=f.subject,
                action=action_for(f),
                # The concrete setting of the finding's first advice only: a setting for a lesser advice would
                # read as the fix.
                command=f.actions[0].command
                if f.actions and f.recommendations and f.actions[0].recommendation == f.recommendations[0]
                else "",
                confidence=f.impact.confidence,
            )
        )
        if len(out) >= MAX_CAUSES:
            break
    return out


ROOTS = {
    "M03": frozenset({"P06", "P16", "L06", "P23"}),
    "M02": frozenset({"P05", "P15"}),
    "S01": frozenset({"P05", "P06"}),
}
"""A cause and the findings that measure the same lost time one layer down: small POSIX requests that
independent MPI-IO calls issued are the missing collective call's doing, and its fix is the one to lead with."""
SAME_COST = 0.95
"""Costs within this ratio are the same time measured at two layers."""


def _worked_alone(f: Finding, causes: list[Finding]) -> bool:
    """An imbalance whose time is work the busiest rank did alone (rank 0 reading the input while the others
    wait), on files no other cause names: a cause of its own, not a symptom another pattern explains. (Rank 0
    fwriting the output alone is the STDIO finding's to name.)"""
    solo = next((m.value for m in f.evidence if m.name == "solo_io_time"), 0.0)
    if not isinstance(solo, int | float) or f.impact is None or not solo >= 0.5 * (f.impact.seconds or 0.0) > 0:
        return False
    mine = {fe.path for fe in f.files}
    return bool(mine) and not any(g is not f and mine & {fe.path for fe in g.files} for g in causes)


def _roots_first(ranked: list[Finding]) -> list[Finding]:
    """``ranked`` with each root cause moved ahead of the lower-layer finding it explains, when both cost
    the same time (their seconds differ only by where they were measured), or when that finding sits on the
    root's files and costs at most twice the root's time (its fix is the root's: collective buffering ends the
    lock contention of interleaved independent writes)."""
    out = list(ranked)
    for root, below in ROOTS.items():
        r = next((i for i, f in enumerate(out) if f.code == root), None)
        first = next((i for i, f in enumerate(out[:r]) if f.code in below), None) if r is not None else None
        if r is None or first is None:
            continue
        a, b = out[first].impact, out[r].impact
        backed = backs(out[first], out[r])
        # A measured symptom and a modelled root price the same time two ways; an upper bound leads nothing
        if (
            a
            and b
            and a.seconds
            and b.seconds
            and (b.seconds >= SAME_COST * a.seconds or backed)
            and (b.confidence is not Confidence.LOW or a.confidence is Confidence.LOW)
        ):
            out.insert(first, out.pop(r))
    return out


def unknown_headline(ctx: Context) -> str:
    """What is known, what is missing and how to get a complete log, for a log that cannot bound the run."""
    inc = ctx.incomplete
    s = ctx.io_share
    assert inc is not None and s is not None
    window = ""
    if inc.activity_end_s is not None and inc.runtime_s > 0:
        window = f", whose recorded I/O ends {human_seconds(inc.activity_end_s)} into the run"
    # One sentence holds what was measured and why it is only part: the first sentence is the answer.
    return (
        f"Unknown whether I/O is why this job is slow: the recorded I/O took "
        f"{'a negligible ' if s.share_slowest < 0.01 else ''}{percent(s.share_slowest)} of the "
        f"{human_seconds(inc.runtime_s or s.runtime_s)} run ({human_seconds(s.slowest_rank_io_s)} on the busiest "
        f"rank), a lower bound, because Darshan's {inc.module} module {inc.reason} ({inc.records:,} records kept) "
        f"and the log holds only part of the job's I/O{window}. {_how_to_complete(ctx)}."
    )


def _how_to_complete(ctx: Context) -> str:
    inc = ctx.incomplete
    info = ctx.profile.modules.get(inc.module) if inc is not None else None
    if info is not None and info.read_error == CUT_READ_ERROR:
        return COPY_AGAIN
    if info is not None and info.read_error:
        return "Collect the log again: this copy is damaged"
    return f"For a complete log, {darshan_memory_setting(ctx.meta.darshan_version)}"


def darshan_memory_setting(version: str) -> str:
    """The setting that lifts Darshan's record limits, as the job's Darshan version documents it."""
    try:
        major, minor = (int(x) for x in version.split(".")[:2])
    except ValueError:
        major, minor = 0, 0
    if (major, minor) >= (3, 4):
        return (
            "rerun with `export DARSHAN_MODMEM=64` and a config file named by DARSHAN_CONFIG_PATH holding "
            "`MAX_RECORDS 16384 POSIX,STDIO,MPI-IO` (Darshan 3.4 and later)"
        )
    return f"rerun with `export DARSHAN_MODMEM=64` (Darshan {version} sizes its record memory from it, in MiB)"


def bandwidth_bound(ctx: Context) -> str:
    """No pattern is at fault: what the job achieved, what bounds it, and whether more parallelism would help."""
    s = ctx.io_share
    assert s is not None
    moved = s.bytes_read + s.bytes_written
    busy = s.read_s + s.write_s
    if moved <= 0 or s.slowest_rank_io_s <= 0:
        return "no pattern in the log is at fault, and it moved almost no data: " + (
            f"the time went to metadata ({human_seconds(s.meta_s)} summed over ranks)."
            if s.meta_s > 0
            else "nothing to tune."
        )
    rate = moved / s.slowest_rank_io_s
    parts = [
        f"no pattern in the log is at fault: it moved {human_bytes(moved)}{_mostly_one_file(ctx, moved)} at "
        f"{human_bytes(rate)}/s "
        f"(over the busiest rank's {human_seconds(s.slowest_rank_io_s)} of I/O"
        + (f"; {human_bytes(moved / busy)}/s per rank while moving data" if busy > 0 else "")
        + ")"
    ]
    bound = _what_bounds(ctx)
    if bound:
        parts.append(bound)
    blind = _order_unknown(ctx)
    if blind:
        parts.append(blind)
    return "; ".join(parts) + "."


def _mostly_one_file(ctx: Context, moved: int) -> str:
    """ "(nearly all of it `particles_0266.bin`)": the file the bytes went to, where one holds most of them, so
    "why is my run spending its time in I/O?" names what it was moving."""
    from iodiag.analysis.views.file_usage import busiest_files

    files, _ = busiest_files(ctx)
    top = max(files, key=lambda f: f.bytes_read + f.bytes_written, default=None)
    if top is None or moved <= 0:
        return ""
    share = (top.bytes_read + top.bytes_written) / moved
    if share < 0.5:
        return ""
    name = top.path.rsplit("/", 1)[-1]
    return f" (nearly all of it `{name}`)" if share >= 0.99 else f" ({pct(share)} of it `{name}`)"


_NO_OFFSETS = ("DFS", "DAOS", "STDIO")
"""Modules that keep no offset counters: from them alone, sequential and random access look the same."""


def _order_unknown(ctx: Context) -> str:
    """Where most bytes went through modules that keep no offsets, "no pattern at fault" cannot cover the access
    order: say the log cannot tell, rather than let the reader assume sequential."""
    from iodiag.analysis.views.context import TOP_LAYER_BYTES

    per: dict[str, float] = {}
    for layer, df in ctx.counted_layers:
        if len(df) and layer in TOP_LAYER_BYTES:
            br, bw = TOP_LAYER_BYTES[layer]
            per[layer] = per.get(layer, 0.0) + float(df.num(br).clip(min=0).sum() + df.num(bw).clip(min=0).sum())
    total = sum(per.values())
    blind = [name for name in _NO_OFFSETS if per.get(name, 0.0) >= 0.1 * total > 0]
    if total <= 0 or sum(per[name] for name in blind) < 0.5 * total:
        return ""
    return (
        f"whether its requests were sequential or random is unknown: {' and '.join(blind)} "
        f"{'keeps' if len(blind) == 1 else 'keep'} no offset counters"
    )


def _what_bounds(ctx: Context) -> str:
    """The resources the job's bandwidth came from, and whether adding to them would help."""
    nodes = ctx.nodes
    fs = ctx.file_system
    ranks = ctx.meta.nprocs
    if ranks <= 1:
        return (
            f"one process moved it all on {fs or 'an unknown file system'}: the rate is one client's, and more "
            "processes or workers moving data in parallel would raise it"
        )
    where = f"{ranks:,} ranks" + (f" on {nodes:,} node{'s' if nodes != 1 else ''}" if nodes else "")
    if fs == "lustre":
        try:
            from iodiag.analysis.outcomes.actions import lustre_layouts
            from iodiag.analysis.views.lustre import ost_load

            osts = len(ost_load(ctx))
            narrow = [lay for lay in lustre_layouts(ctx) if not lay.fits and lay.suggested_count > lay.stripe_count]
        except Exception:  # the headline stands without the layout facts
            osts, narrow = 0, []
        if narrow and narrow[0].command:
            lay = narrow[0]
            return (
                f"bounded by {lay.stripe_count} stripe(s) on {lay.path} for {lay.writers:,} writers: more stripes "
                f"would spread it over more OSTs (`{lay.command}`)"
            )
        if osts:
            return (
                f"the data was spread over {osts:,} OST{'s' if osts != 1 else ''} by {where}: the rate is what those "
                "targets delivered; more stripes would not help, more nodes moving data in parallel or a faster "
                "storage tier would"
            )
    if fs == "nfs":
        # NFS serves every client through one server: the lever is where the data goes, not how it is written.
        return (
            f"{where} on nfs: the rate is what that one NFS server delivered; the site's parallel scratch file "
            "system would carry it faster"
        )
    return (
        f"{where} on {fs or 'an unknown file system'}: the rate is what that storage delivered to them; moving less "
        "data (reading only what is needed, compressing) or more nodes moving it in parallel would cut the time"
    )


def action_title(f: Finding) -> str:
    rec_id = f.actions[0].recommendation if f.actions else (f.recommendations[0] if f.recommendations else "")
    rec = RECOMMENDATIONS.get(rec_id)
    return rec.title if rec else ""


def by_verdict(verdict: Verdict) -> Callable[[str], int]:
    """A sort key for finding codes: their place in the verdict's ranking, codes it does not rank after them.
    Lists of fixes or causes use it so they agree with the headline above them."""
    place = {c.code: i for i, c in enumerate(verdict.causes)}
    return lambda code: place.get(code, len(place))


def action_for(f: Finding) -> str:
    for rec_id in f.recommendations:
        rec = RECOMMENDATIONS.get(rec_id)
        if rec is not None:
            return rec.summary
    return ""


def where_time_went(ctx: Context) -> str:
    """One sentence: reads/writes/metadata split of the I/O time and the file that took the most."""
    s = ctx.io_share
    if s is None:
        return ""
    total = s.read_s + s.write_s + s.meta_s
    if total <= 0:
        return "The log recorded no I/O time."
    parts = [
        (s.write_s, f"writes {percent(s.write_s / total)} ({human_bytes(s.bytes_written)})"),
        (s.read_s, f"reads {percent(s.read_s / total)} ({human_bytes(s.bytes_read)})"),
        (s.meta_s, f"metadata {percent(s.meta_s / total)}"),
    ]
    parts.sort(key=lambda p: -p[0])
    text = "I/O time went to " + ", ".join(p[1] for p in parts if p[0] > 0)
    top = _top_file(ctx)
    if top is not None:
        path, seconds = top
        text += f"; the file with the most I/O time is {path} ({percent(seconds / total)} of it)"
    return text + "."


def _top_file(ctx: Context) -> tuple[str, float] | None:
    """The first row of the report's file table: the headline, the table and the chat name the same file, ties
    included (most time, then most bytes)."""
    files, _ = busiest_files(ctx)
    if not files or files[0].io_time_s <= 0:
        return None
    return files[0].path, files[0].io_time_s


def _caveats(ctx: Context, findings: list[Finding]) -> list[str]:
    from iodiag.analysis.views.context import CONTEXT_MODULES, DATA_MODULES

    out: list[str] = []
    damaged = [f for f in findings if f.code == "D04"]
    if damaged:
        # First: every number below comes from what survived, and the reader must know it before reading them
        left = sum(int(f.metric("corrupt_records") or 0) for f in damaged)
        kept = sum(int(f.metric("records_kept") or 0) for f in damaged)
        mods = ", ".join(str(next((m.value for m in f.evidence if m.name == "module"), "")) for f in damaged)
        out.append(
            f"{left:,} corrupt record(s) ({mods}) were left out (D04); the numbers come from the {kept:,} valid "
            "record(s) and are lower bounds."
        )
    for info in ctx.profile.modules.values():
        if info.partial:
            out.append(
                f"Module {info.name} is partial (Darshan ran out of memory for it): its totals are lower bounds, "
                "and checks that compare it with other layers stand down or lower their confidence."
            )
        if info.read_error == CUT_READ_ERROR:
            continue  # one caveat for the whole cut, below
        if info.read_error:
            out.append(f"Module {info.name} could not be read completely ({info.read_error}).")
        if info.reset_note:
            out.append(info.reset_note + ".")
        if (
            info.name not in DATA_MODULES
            and info.name not in CONTEXT_MODULES
            and (info.records or info.compressed_bytes)
            and not info.read_error
        ):
            out.append(f"Module {info.name} is in the log but not analyzed: its I/O is not in these numbers.")
    cut = next((p for p in ctx.profile.problems if p.startswith("cut short: ")), None)
    if cut is not None:
        # The note and how to get a whole log; the headline gives the latter itself when it is "unknown".
        body = cut.removeprefix("cut short: ")
        if ctx.incomplete is not None and ctx.profile.modules[ctx.incomplete.module].read_error == CUT_READ_ERROR:
            body = body.removesuffix(f". {COPY_AGAIN}")
        out.append(body[:1].upper() + body[1:] + ("" if body.endswith(".") else "."))
    waits = ctx.waiting_rows
    if waits.any():
        waited = float(ctx.posix_records["POSIX_F_META_TIME"][waits].sum())
        out.append(
            f"{int(waits.sum()):,} file record(s) spent {human_seconds(waited)} blocked "
            "in open or close while moving under 1 MiB (named pipes, devices or lock files waited on, not storage "
            "I/O): left out of the I/O time."
        )
    s = ctx.io_share
    if s is not None and s.runtime_resolution_s > 0:
        out.append(
            f"This log format stores whole seconds: the {human_seconds(s.runtime_s)} run time may be up to "
            f"{human_seconds(s.runtime_resolution_s)} too long, so shares of it are approximate."
        )
    for i in ctx.interfaces:
        if i.name == "DAOS" and not i.counted:
            out.append(f"{i.note}; DAOS records are shown but not added to the totals.")
    if (
        any(f.code in ("X01", "X03", "X04", "X07", "M08", "M09", "M10") for f in findings)
        and ctx.facts.cb_nodes is None
    ):
        out.append(
            "Darshan does not record the MPI-IO aggregator count (cb_nodes); give it with --cb-nodes to settle "
            "the aggregator findings."
        )
    if ctx.file_system is None and ctx.io_share is not None and (s.bytes_read + s.bytes_written if s else 0):
        out.append("The log's mount table does not say which file system the data was on; advice is generic.")
    return out


def _lower_first(text: str) -> str:
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


__all__ = ["Confidence", "build", "percent", "rank_causes", "where_time_went"]
