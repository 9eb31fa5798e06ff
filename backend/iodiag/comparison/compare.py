"""Compare two runs' reports: "did my change help?".

``compare`` is pure and deterministic: two reports (and, optionally, the ``RunFacts`` read from their
profiles for request sizes, Lustre layout and per-OST time) in, one ``Comparison`` out. It refuses runs
of different executables with ``NotComparable`` unless ``force``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import PurePath
from statistics import median
from typing import TYPE_CHECKING

from iodiag import __version__
from iodiag.analysis.models import Finding, Report, Severity, Unit
from iodiag.comparison.models import (
    Comparison,
    FindingChange,
    FindingSide,
    LayoutSummary,
    MetricRow,
    OstTime,
    RunCause,
    RunFacts,
    RunSummary,
    SizeHistogram,
)
from iodiag.core.units import human_seconds
from iodiag.render.wording import one_line, percent, short_percent

if TYPE_CHECKING:
    from iodiag.ingest import JobProfile

OSTS_SHOWN = 12
"""Per-OST time rows: the OSTs with the most time in either run."""
CHANGE_SHARE = 0.1
"""A finding present in both runs has changed when its severity differs, or its cost moved by at least this share
of the larger cost and by at least ``impact_min_seconds``."""
MINUS = "−"


class NotComparable(ValueError):
    """The two logs are not runs of the same program; the message is one line."""


# --- facts the report does not carry -------------------------------------------------------------


def run_facts(profile: JobProfile) -> RunFacts:
    """Request-size histograms, Lustre layout and per-OST time of one run, from its profile."""
    from iodiag.analysis.views.context import Context
    from iodiag.analysis.views.lustre import layouts, ost_load
    from iodiag.analysis.views.stack import BINS, SPECS

    ctx = Context(profile)
    hists: list[SizeHistogram] = []
    for layer in ("HDF5", "PnetCDF", "MPI-IO", "POSIX"):
        spec = SPECS[layer]
        df = profile.table(spec.module)
        if df is None or df.empty:
            continue
        for op in ("read", "write"):
            cols = [spec.hist.format(op=op.upper()) + b for b in BINS]
            if not all(col in df.columns for col in cols):
                continue
            counts = [int(df[col].clip(0).sum()) for col in cols]
            if any(counts):
                hists.append(SizeHistogram(layer=layer, op=op, counts=counts))
    files = layouts(ctx)
    lustre = None
    if files:
        counts = [f.stripe_count for f in files]
        lustre = LayoutSummary(
            files=len(files),
            osts_used=len({o for f in files for o in f.osts}),
            stripe_count_median=float(median(counts)),
            stripe_count_max=int(max(counts)),
            stripe_size_median=float(median(f.stripe_size for f in files)),
        )
    load = ost_load(ctx)
    osts = [
        OstTime(ost=int(ost), bytes=float(nbytes), time_s=float(t), files=int(n))
        for ost, nbytes, t, n in zip(
            load["ost"].tolist(), load["bytes"].tolist(), load["share"].tolist(), load["files"].tolist(), strict=True
        )
    ]
    return RunFacts(size_histograms=hists, lustre=lustre, osts=osts)


# --- comparability ------------------------------------------------------------------------------


def executable(exe: str) -> str:
    """The program a command line ran: the basename of its first word ("" when unknown)."""
    words = exe.split()
    return PurePath(words[0]).name if words else ""


def _comparability(a: Report, b: Report, force: bool) -> tuple[bool, list[str]]:
    """(forced, notes); raises ``NotComparable`` for different executables without ``force``."""
    notes: list[str] = []
    ea, eb = executable(a.job.exe), executable(b.job.exe)
    forced = False
    if ea and eb and ea != eb:
        if not force:
            raise NotComparable(
                f"not comparable: run A ran {one_line(ea)}, run B ran {one_line(eb)} (different executables); "
                "compare anyway with --force"
            )
        forced = True
        notes.append(f"Different executables: run A ran {one_line(ea)}, run B ran {one_line(eb)}; compared anyway.")
    elif not ea or not eb:
        which = "A" if not ea else "B"
        notes.append(f"Run {which}'s log does not name its executable: the runs may be different programs.")
    elif one_line(a.job.exe) != one_line(b.job.exe):
        notes.append(f"Both runs ran {one_line(ea)}, with different arguments.")
    if a.job.nprocs != b.job.nprocs:
        notes.append(
            f"Different process counts: run A had {a.job.nprocs:,}, run B {b.job.nprocs:,}; totals over all ranks "
            "are not like for like."
        )
    if a.job.darshan_version != b.job.darshan_version:
        notes.append(
            f"Different Darshan versions ({one_line(a.job.darshan_version)}, {one_line(b.job.darshan_version)}): "
            "counters can differ between versions."
        )
    if a.file_system and b.file_system and a.file_system != b.file_system:
        notes.append(f"Different file systems: {one_line(a.file_system)} in run A, {one_line(b.file_system)} in run B.")
    coarse = [n for n, r in (("A", a), ("B", b)) if r.io_share is not None and r.io_share.runtime_resolution_s > 0]
    if len(coarse) == 2:
        notes.append("Both logs store whole seconds: run times and I/O shares are approximate.")
    elif coarse:
        notes.append(f"Run {coarse[0]}'s log stores whole seconds: its run time and I/O share are approximate.")
    return forced, notes


# --- metrics ------------------------------------------------------------------------------------


def _row(section: str, name: str, unit: Unit, a: float | int | None, b: float | int | None) -> MetricRow:
    delta: float | int | None = None
    pct: float | None = None
    if a is not None and b is not None:
        delta = b - a
        if a != 0:
            pct = delta / abs(a) * 100
        elif b == 0:
            pct = 0.0
    return MetricRow(section=section, name=name, unit=unit, a=a, b=b, delta=delta, change_pct=pct)


def _nonzero(rows: Iterable[MetricRow]) -> list[MetricRow]:
    return [r for r in rows if r.a or r.b]


def _job_rows(a: Report, b: Report) -> list[MetricRow]:
    rows = [
        _row("job", "run time", Unit.SECONDS, a.job.runtime_s, b.job.runtime_s),
        _row("job", "ranks", Unit.COUNT, a.job.nprocs, b.job.nprocs),
    ]
    if a.job.nodes is not None or b.job.nodes is not None:
        rows.append(_row("job", "nodes", Unit.COUNT, a.job.nodes, b.job.nodes))
    rows.append(_row("job", "files", Unit.COUNT, a.job.files, b.job.files))
    for fs in _union(a.job.file_systems, b.job.file_systems):
        rows.append(
            _row(
                "job",
                f"files on {one_line(fs)}",
                Unit.COUNT,
                a.job.file_systems.get(fs, 0),
                b.job.file_systems.get(fs, 0),
            )
        )
    return rows


def _union(*keys: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(k for ks in keys for k in ks))


def _io_rows(a: Report, b: Report) -> list[MetricRow]:
    sa, sb = a.io_share, b.io_share

    def get(s: object, attr: str) -> float | int | None:
        return None if s is None else getattr(s, attr)

    spec: Sequence[tuple[str, Unit, str]] = (
        ("I/O time, busiest rank", Unit.SECONDS, "slowest_rank_io_s"),
        ("I/O time, average rank", Unit.SECONDS, "mean_rank_io_s"),
        ("I/O share, busiest rank", Unit.RATIO, "share_slowest"),
        ("I/O share, average rank", Unit.RATIO, "share_mean"),
        ("read time, all ranks", Unit.SECONDS, "read_s"),
        ("write time, all ranks", Unit.SECONDS, "write_s"),
        ("metadata time, all ranks", Unit.SECONDS, "meta_s"),
        ("bytes read", Unit.BYTES, "bytes_read"),
        ("bytes written", Unit.BYTES, "bytes_written"),
    )
    return [_row("I/O", name, unit, get(sa, attr), get(sb, attr)) for name, unit, attr in spec]


def _layer_rows(a: Report, b: Report) -> list[MetricRow]:
    ia = {i.name: i for i in a.interfaces}
    ib = {i.name: i for i in b.interfaces}
    rows: list[MetricRow] = []
    spec: Sequence[tuple[str, Unit, str]] = (
        ("read time", Unit.SECONDS, "read_s"),
        ("write time", Unit.SECONDS, "write_s"),
        ("metadata time", Unit.SECONDS, "meta_s"),
        ("bytes read", Unit.BYTES, "bytes_read"),
        ("bytes written", Unit.BYTES, "bytes_written"),
        ("operations", Unit.COUNT, "operations"),
        ("records", Unit.COUNT, "records"),
    )
    for name in _union(ia, ib):
        x, y = ia.get(name), ib.get(name)
        section = one_line(name)
        rows += _nonzero(
            _row(section, label, unit, getattr(x, attr) if x else 0, getattr(y, attr) if y else 0)
            for label, unit, attr in spec
        )
    return rows


def _size_rows(fa: RunFacts, fb: RunFacts) -> list[MetricRow]:
    from iodiag.analysis.views.stack import BIN_LABELS

    ha = {(h.layer, h.op): h.counts for h in fa.size_histograms}
    hb = {(h.layer, h.op): h.counts for h in fb.size_histograms}
    rows: list[MetricRow] = []
    zero = [0] * len(BIN_LABELS)
    for key in sorted(set(ha) | set(hb), key=lambda k: (_LAYERS.index(k[0]) if k[0] in _LAYERS else 99, k)):
        ca, cb = ha.get(key, zero), hb.get(key, zero)
        layer, op = key
        rows += _nonzero(
            _row("request sizes", f"{layer} {op}s of {label}", Unit.COUNT, ca[i], cb[i])
            for i, label in enumerate(BIN_LABELS)
        )
    return rows


_LAYERS = ("HDF5", "PnetCDF", "MPI-IO", "POSIX")


def _lustre_rows(fa: RunFacts, fb: RunFacts) -> list[MetricRow]:
    la, lb = fa.lustre, fb.lustre
    if la is None and lb is None:
        return []
    spec: Sequence[tuple[str, Unit, str]] = (
        ("files with a Lustre layout", Unit.COUNT, "files"),
        ("OSTs used", Unit.COUNT, "osts_used"),
        ("median stripe count", Unit.COUNT, "stripe_count_median"),
        ("largest stripe count", Unit.COUNT, "stripe_count_max"),
        ("median stripe size", Unit.BYTES, "stripe_size_median"),
    )
    return [
        _row("Lustre", name, unit, getattr(la, attr) if la else None, getattr(lb, attr) if lb else None)
        for name, unit, attr in spec
    ]


def _rates(osts: Sequence[OstTime]) -> list[float]:
    return sorted(o.bytes / o.time_s for o in osts if o.time_s > 0 and o.bytes > 0)


def _ost_rows(fa: RunFacts, fb: RunFacts) -> tuple[list[MetricRow], int]:
    """(rows, OSTs left out)."""
    if not fa.osts and not fb.osts:
        return [], 0
    ra, rb = _rates(fa.osts), _rates(fb.osts)
    rows = [
        _row("OSTs", "slowest OST rate", Unit.BYTES_PER_SECOND, ra[0] if ra else None, rb[0] if rb else None),
        _row(
            "OSTs",
            "median OST rate",
            Unit.BYTES_PER_SECOND,
            float(median(ra)) if ra else None,
            float(median(rb)) if rb else None,
        ),
    ]
    ta = {o.ost: o.time_s for o in fa.osts}
    tb = {o.ost: o.time_s for o in fb.osts}
    busiest = sorted(set(ta) | set(tb), key=lambda o: (-max(ta.get(o, 0.0), tb.get(o, 0.0)), o))
    shown = sorted(busiest[:OSTS_SHOWN])
    rows += [_row("OSTs", f"OST {o} I/O time", Unit.SECONDS, ta.get(o, 0.0), tb.get(o, 0.0)) for o in shown]
    return rows, len(busiest) - len(shown)


def _finding_rows(a: Report, b: Report) -> list[MetricRow]:
    return [
        _row("findings", "critical findings", Unit.COUNT, a.counts.critical, b.counts.critical),
        _row("findings", "warnings", Unit.COUNT, a.counts.warning, b.counts.warning),
        _row("findings", "ranked causes", Unit.COUNT, len(a.verdict.causes), len(b.verdict.causes)),
    ]


# --- findings -----------------------------------------------------------------------------------


def _sides(report: Report) -> dict[str, tuple[Finding, FindingSide]]:
    """Per finding code (findings graded 'ok' left out): its first finding and its side of the comparison."""
    groups: dict[str, list[Finding]] = {}
    for f in report.findings:
        if f.severity is not Severity.OK:
            groups.setdefault(f.code, []).append(f)
    causes = {c.code: (i, c) for i, c in enumerate(report.verdict.causes, 1)}
    out: dict[str, tuple[Finding, FindingSide]] = {}
    for code, fs in groups.items():
        first = min(fs, key=lambda f: f.severity.rank)  # stable: the report lists the costliest first
        priced = [f.impact for f in fs if f.impact is not None and f.impact.seconds is not None]
        seconds = sum(i.seconds or 0.0 for i in priced) if priced else None
        share = sum(i.share_of_runtime or 0.0 for i in priced) if priced else None
        rank, cause = causes.get(code, (None, None))
        out[code] = (
            first,
            FindingSide(
                severity=first.severity,
                seconds=seconds,
                share_of_runtime=share,
                basis=first.impact.basis if first.impact is not None else "",
                confidence=first.impact.confidence if first.impact is not None else None,
                cause_rank=rank,
                cause_seconds=cause.seconds if cause is not None else None,
                occurrences=len(fs),
                message=first.message,
            ),
        )
    return out


def _differs(x: FindingSide, y: FindingSide, min_seconds: float) -> bool:
    if x.severity is not y.severity or (x.seconds is None) != (y.seconds is None):
        return True
    if x.seconds is None or y.seconds is None:
        return False
    d = abs(y.seconds - x.seconds)
    return d >= min_seconds and d >= CHANGE_SHARE * max(abs(x.seconds), abs(y.seconds))


def _cost(side: FindingSide | None) -> float:
    return side.seconds if side is not None and side.seconds is not None else -1.0


def _findings(
    a: Report, b: Report
) -> tuple[list[FindingChange], list[FindingChange], list[FindingChange], list[FindingChange]]:
    sa, sb = _sides(a), _sides(b)
    min_seconds = float(b.thresholds.get("impact_min_seconds", 1.0))
    resolved, new, changed, same = [], [], [], []
    for code in sorted(set(sa) | set(sb)):
        fa, xa = sa.get(code, (None, None))
        fb, xb = sb.get(code, (None, None))
        f = fb if fb is not None else fa
        assert f is not None
        if xa is not None and xb is not None:
            delta = None if xa.seconds is None or xb.seconds is None else xb.seconds - xa.seconds
        elif xa is not None:
            delta = None if xa.seconds is None else -xa.seconds
        else:
            delta = None if xb is None or xb.seconds is None else xb.seconds
        item = FindingChange(code=code, title=f.title, layer=f.layer, a=xa, b=xb, delta_seconds=delta)
        if xb is None:
            resolved.append(item)
        elif xa is None:
            new.append(item)
        elif _differs(xa, xb, min_seconds):
            changed.append(item)
        else:
            same.append(item)
    resolved.sort(key=lambda x: (-_cost(x.a), x.code))
    new.sort(key=lambda x: (-_cost(x.b), x.code))
    changed.sort(key=lambda x: (-abs(x.delta_seconds or 0.0), x.code))
    return resolved, new, changed, same


# --- the verdict --------------------------------------------------------------------------------


def _lower_first(text: str) -> str:
    text = one_line(text)
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


def signed_percent(ratio: float) -> str:
    """ "+12.5%", "−99.5%"; where ``percent`` would say ">99.9%" or "<0.1%", two more digits instead."""
    sign = "+" if ratio > 0 else MINUS if ratio < 0 else ""
    text = percent(abs(ratio))
    if text.startswith(">"):
        text = f"{math.floor(abs(ratio) * 10000) / 100:.2f}%"
    elif text.startswith("<"):
        text = f"{abs(ratio) * 100:.2g}%"
    return sign + text


def _io_lead(ia: float | None, ib: float | None, changed: bool) -> str:
    if ia is None and ib is None:
        return "Neither run recorded I/O"
    if ia is None or ib is None:
        which = "A" if ia is None else "B"
        other = human_seconds(ib if ia is None else ia)  # type: ignore[arg-type]
        return f"Run {which} recorded no I/O (the other run: {other} on the busiest rank)"
    if not changed:
        return f"No change: I/O time {human_seconds(ia)} in both runs, the same findings at the same costs"
    if ia == ib:
        return f"I/O time did not change ({human_seconds(ia)})"
    if ia > 0 and human_seconds(ia) == human_seconds(ib):
        return f"I/O time stayed at {human_seconds(ib)} ({signed_percent((ib - ia) / ia)})"
    verb = "fell" if ib < ia else "rose"
    change = ""
    if ia > 0:
        change = f" ({ib / ia:,.0f} times as much)" if ib >= 10 * ia else f" ({signed_percent((ib - ia) / ia)})"
    return f"I/O time {verb} from {human_seconds(ia)} to {human_seconds(ib)}{change}"


def _name(title: str, code: str) -> str:
    return f"{_lower_first(title)} ({code})"


def _verdict(
    a: Report,
    b: Report,
    resolved: list[FindingChange],
    new: list[FindingChange],
    everything: list[FindingChange],
    changed: bool,
) -> str:
    sa, sb = a.io_share, b.io_share
    lead = _io_lead(sa.slowest_rank_io_s if sa else None, sb.slowest_rank_io_s if sb else None, changed)
    clauses: list[str] = []
    by_code = {x.code: x for x in everything}
    top_a = a.verdict.causes[0] if a.verdict.causes else None
    top_b = b.verdict.causes[0] if b.verdict.causes else None
    b_causes = {c.code for c in b.verdict.causes}
    if top_a is not None:
        name = _name(top_a.title, top_a.code)
        now = by_code.get(top_a.code)
        if top_a.code in {x.code for x in resolved} or now is None or now.b is None:
            clauses.append(f"the top cause, {name}, is gone")
        elif top_b is not None and top_b.code == top_a.code:
            if top_b.seconds != top_a.seconds:
                clauses.append(
                    f"the top cause, {name}, now costs ≈ {human_seconds(top_b.seconds)} "
                    f"(was ≈ {human_seconds(top_a.seconds)})"
                )
            else:
                clauses.append(f"the top cause is still {name}, ≈ {human_seconds(top_b.seconds)}")
        else:
            cost = f"≈ {human_seconds(now.b.seconds)}" if now.b.seconds is not None else "cost unknown"
            where = "no longer a cause" if top_a.code not in b_causes else "no longer the top cause"
            clauses.append(f"{name} is {where}: {cost} (was ≈ {human_seconds(top_a.seconds)})")
    if top_b is not None and (top_a is None or top_b.code != top_a.code):
        name = _name(top_b.title, top_b.code)
        if top_b.code in {x.code for x in new}:
            clauses.append(f"new top cause: {name}, ≈ {human_seconds(top_b.seconds)}")
        else:
            clauses.append(f"the top cause is now {name}, ≈ {human_seconds(top_b.seconds)}")
    ma, mb = a.verdict.io_matters, b.verdict.io_matters
    share = short_percent(sb.share_slowest) if sb is not None and sb.runtime_s > 0 else None
    if mb is False:
        if ma is False:
            min_io = float(b.thresholds.get("io_matters_min_seconds", 1.0))
            if sb is not None and sb.slowest_rank_io_s < min_io:
                clauses.append(f"I/O still does not matter ({human_seconds(sb.slowest_rank_io_s)} on the busiest rank)")
            else:
                clauses.append(
                    f"I/O still does not matter ({share} of the run)" if share else "I/O still does not matter"
                )
        else:
            clauses.append("the run is now compute-bound")
    elif mb is True and share is not None:
        if ma is False:
            clauses.append(f"I/O now matters: {share} of the run")
        elif not b.verdict.causes:
            still = "still " if ma else ""
            clauses.append(f"I/O is {still}{share} of the run, with no single cause standing out")
        elif not changed:
            clauses.append(f"I/O is {share} of the run")
    elif mb is None:
        clauses.append("run B's log cannot tell whether I/O matters")
    if not clauses:
        return f"{lead}."
    return f"{lead}{': ' if changed else '; '}{'; '.join(clauses)}."


# --- the comparison -----------------------------------------------------------------------------


def run_summary(r: Report) -> RunSummary:
    """One run as its own report describes it: job, run and I/O time, verdict and ranked causes."""
    s = r.io_share
    return RunSummary(
        log_path=r.log_path,
        jobid=r.job.jobid,
        exe=r.job.exe,
        executable=executable(r.job.exe),
        nprocs=r.job.nprocs,
        nodes=r.job.nodes,
        darshan_version=r.job.darshan_version,
        runtime_s=r.job.runtime_s,
        io_time_s=s.slowest_rank_io_s if s is not None else None,
        io_share=s.share_slowest if s is not None and s.runtime_s > 0 else None,
        io_matters=r.verdict.io_matters,
        level=r.verdict.level,
        headline=r.verdict.headline,
        causes=[
            RunCause(
                code=x.code,
                title=x.title,
                seconds=x.seconds,
                share_of_runtime=x.share_of_runtime,
                confidence=x.confidence,
            )
            for x in r.verdict.causes
        ],
    )


def compare(
    report_a: Report,
    report_b: Report,
    force: bool = False,
    *,
    facts_a: RunFacts | None = None,
    facts_b: RunFacts | None = None,
) -> Comparison:
    """What changed from run A to run B. Raises ``NotComparable`` (one line) for different executables unless
    ``force``. Without both runs' ``facts`` the request-size, Lustre and per-OST rows are left out."""
    forced, notes = _comparability(report_a, report_b, force)
    metrics = _job_rows(report_a, report_b) + _io_rows(report_a, report_b) + _layer_rows(report_a, report_b)
    if facts_a is not None and facts_b is not None:
        metrics += _size_rows(facts_a, facts_b) + _lustre_rows(facts_a, facts_b)
        ost_rows, more = _ost_rows(facts_a, facts_b)
        metrics += ost_rows
        if more:
            notes.append(f"Per-OST time is shown for the {OSTS_SHOWN} busiest OSTs; {more:,} more are left out.")
    metrics += _finding_rows(report_a, report_b)
    resolved, new, changed_findings, same = _findings(report_a, report_b)
    changed = bool(resolved or new or changed_findings) or any(m.a != m.b for m in metrics)
    everything = resolved + new + changed_findings + same
    return Comparison(
        tool_version=__version__,
        verdict=_verdict(report_a, report_b, resolved, new, everything, changed),
        changed=changed,
        forced=forced,
        notes=notes,
        a=run_summary(report_a),
        b=run_summary(report_b),
        metrics=metrics,
        findings_resolved=resolved,
        findings_new=new,
        findings_changed=changed_findings,
        findings_unchanged=same,
    )


def comparison_schema() -> dict[str, object]:
    """The JSON Schema of ``Comparison`` (checked in as docs/compare.schema.json)."""
    return Comparison.model_json_schema()
