"""Wording and number formatting shared by every renderer.

Everything here returns plain (unescaped) text: each renderer escapes for its own format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath

from iodiag.analysis.models import Action, Finding, Metric, Report, Severity, SourceLine, Unit
from iodiag.analysis.outcomes.verdict import percent as verdict_percent
from iodiag.analysis.recommendations import RECOMMENDATIONS
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes, human_seconds

SEVERITY_ORDER: tuple[Severity, ...] = (Severity.CRITICAL, Severity.WARNING, Severity.INFO, Severity.OK)

SEVERITY_LABEL: dict[Severity, str] = {
    Severity.CRITICAL: "Critical",
    Severity.WARNING: "Warning",
    Severity.INFO: "Info",
    Severity.OK: "OK",
}

# What each group means, shown under its heading.
SEVERITY_BLURB: dict[Severity, str] = {
    Severity.CRITICAL: "likely costing run time: fix these first",
    Severity.WARNING: "worth a look",
    Severity.INFO: "how the job does I/O, for context",
    Severity.OK: "things the job already does well",
}

MAX_RANKS_SHOWN = 16

# Words that read better capitalised when a metric name is turned into a label.
_WORDS = {
    "io": "I/O",
    "ost": "OST",
    "osts": "OSTs",
    "stdio": "STDIO",
    "mpiio": "MPI-IO",
    "posix": "POSIX",
    "nprocs": "processes",
}


def one_line(text: object) -> str:
    """Collapse any whitespace (newlines included) so a log string cannot break a layout."""
    return " ".join(str(text).split())


def metric_label(name: str) -> str:
    return " ".join(_WORDS.get(w, w) for w in name.split("_"))


def format_value(value: float | int | str, unit: Unit, name: str = "") -> str:
    """A metric value for people: sizes in KiB/MiB, shares in percent, counts with separators."""
    if isinstance(value, str) or unit is Unit.TEXT:
        return one_line(value)
    if isinstance(value, bool):
        return str(value)
    if unit is Unit.BYTES:
        return human_bytes(value)
    if unit is Unit.BYTES_PER_SECOND:
        return f"{human_bytes(value)}/s"
    if unit is Unit.SECONDS:
        return human_seconds(value)
    if unit is Unit.RATIO:
        if "times" in name:
            return f"{value:.2f}×"
        return percent(value)
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.3g}"


def format_metric(m: Metric) -> tuple[str, str]:
    """(label, value) for one metric."""
    return metric_label(m.name), format_value(m.value, m.unit, m.name)


def percent(ratio: float) -> str:
    pct = ratio * 100
    if pct == 0:
        return "0%"
    if abs(pct) < 0.05:
        return "<0.1%"
    text = f"{pct:.1f}"
    if text == "100.0" and pct < 100:
        return ">99.9%"
    return f"{text.removesuffix('.0')}%"


# Whole percent for headlines, as the verdict writes them (one definition, in the analysis layer).
short_percent = verdict_percent


@dataclass(frozen=True)
class VerdictLine:
    """The one-line answer to "is I/O why this job is slow?"."""

    level: Severity  # critical: I/O dominates; warning: I/O matters; ok: I/O is minor; info: unknown
    headline: str
    detail: str

    @property
    def line(self) -> str:
        return f"{self.headline}: {self.detail}" if self.detail else self.headline


def verdict(report: Report) -> VerdictLine:
    """The report's own verdict (computed once, in ``analysis/outcomes/verdict.py``), for display."""
    v = report.verdict
    return VerdictLine(v.level, v.headline, "")


def cost_text(f: Finding) -> str | None:
    """ "costs ≈ 7.2 min (59% of the run), measured" for a priced finding; None for a descriptive one."""
    imp = f.impact
    if imp is None:
        return None
    if imp.seconds is None:
        return f"cost unknown: {imp.basis}"
    share = f" ({percent(imp.share_of_runtime)} of the run)" if imp.share_of_runtime is not None else ""
    kind = imp.basis.split(":", 1)[0] if ":" in imp.basis else imp.basis
    bound = "at most " if imp.basis.startswith("modelled: upper bound") else ""
    return f"costs {bound}≈ {human_seconds(imp.seconds)}{share}, {kind}"


def cause_lines(report: Report) -> list[str]:
    """One line per ranked cause: "1. X04 Time inside MPI-IO ... ≈ 7.2 min (59% of the run)"."""
    out = []
    for i, cause in enumerate(report.verdict.causes, 1):
        out.append(
            f"{i}. {cause.code} {cause.title}: ≈ {human_seconds(cause.seconds)} "
            f"({percent(cause.share_of_runtime)} of the run)"
        )
    return out


def action_note(a: Action) -> str:
    """What an action changes and where it goes, after its command, as the web UI's card says it:
    "… spreads over 8 OSTs. Where: shell, …"."""
    effect = one_line(a.effect).rstrip(".")
    return (f"{effect}. " if effect else "") + f"Where: {one_line(a.where).rstrip('.')}."


def detected_note(f: Finding) -> str | None:
    if f.detected_severity is f.severity:
        return None
    return f"detection rule alone: {f.detected_severity.value}"


def severity_counts(report: Report) -> list[tuple[Severity, int]]:
    c = report.counts
    return [
        (Severity.CRITICAL, c.critical),
        (Severity.WARNING, c.warning),
        (Severity.INFO, c.info),
        (Severity.OK, c.ok),
    ]


def counts_line(report: Report) -> str:
    names = {Severity.CRITICAL: "critical", Severity.WARNING: "warning", Severity.INFO: "info", Severity.OK: "ok"}
    parts = []
    for sev, n in severity_counts(report):
        word = names[sev]
        if sev is Severity.WARNING and n != 1:
            word = "warnings"
        parts.append(f"{n} {word}")
    return " · ".join(parts)


def grouped(report: Report) -> list[tuple[Severity, list[Finding]]]:
    """Findings by severity, most severe first; empty groups left out; order inside a group kept."""
    out = []
    for sev in SEVERITY_ORDER:
        group = [f for f in report.findings if f.severity is sev]
        if group:
            out.append((sev, group))
    return out


def recommendation_title(rec_id: str) -> str:
    rec = RECOMMENDATIONS.get(rec_id)
    return rec.title if rec else rec_id


def recommendation_summary(rec_id: str) -> str:
    rec = RECOMMENDATIONS.get(rec_id)
    return rec.summary if rec else ""


def all_recommendations(report: Report) -> list[tuple[str, list[str]]]:
    """Each recommendation once, with the finding codes that point to it; most severe first."""
    seen: dict[str, list[str]] = {}
    for f in sorted(report.findings, key=lambda f: f.severity.rank):
        if f.severity is Severity.OK:
            continue
        for rec_id in f.recommendations:
            codes = seen.setdefault(rec_id, [])
            if f.code not in codes:
                codes.append(f.code)
    return list(seen.items())


def ranks_text(ranks: list[int]) -> str:
    shown = ", ".join(str(r) for r in ranks[:MAX_RANKS_SHOWN])
    more = len(ranks) - MAX_RANKS_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def more_files(f: Finding) -> int:
    return max(f.files_total - len(f.files), 0)


def fmt_time(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S %Z").strip()


def runtime_text(report: Report) -> str:
    j = report.job
    end = fmt_time(j.end)
    if j.start.date() == j.end.date():
        end = j.end.strftime("%H:%M:%S %Z").strip()
    span = f"{fmt_time(j.start)} to {end}"
    return f"{human_seconds(j.runtime_s)} ({span})"


def files_text(report: Report) -> str:
    j = report.job
    text = f"{j.files:,}"
    if j.file_systems:
        text += " (" + ", ".join(f"{one_line(k)}: {v:,}" for k, v in j.file_systems.items()) + ")"
    return text


def data_text(report: Report) -> str | None:
    s = report.io_share
    if s is None:
        return None
    return f"{human_bytes(s.bytes_written)} written, {human_bytes(s.bytes_read)} read by the application"


def io_time_text(report: Report) -> str | None:
    s = report.io_share
    if s is None:
        return None
    rank = f" (rank {s.slowest_rank})" if s.slowest_rank is not None else ""
    return (
        f"{human_seconds(s.slowest_rank_io_s)} on the busiest rank{rank}, "
        f"{human_seconds(s.mean_rank_io_s)} on the average rank"
    )


def hints_text(report: Report) -> str | None:
    if not report.job.hints:
        return None
    return " ".join(f"{one_line(k)}={one_line(v)}" for k, v in report.job.hints.items())


def modules_text(report: Report) -> str:
    parts = []
    for m in report.job.modules:
        if not m.loaded and m.read_error is None and not m.partial:
            continue  # optional module not asked for (DXT, HEATMAP): nothing to say
        note = ""
        if m.read_error:
            note = f" (unreadable: {one_line(m.read_error)})"
        elif m.partial:
            note = " (partial)" if m.loaded else " (partial, not read)"
        parts.append(f"{one_line(m.name)}{note}")
    return ", ".join(parts) if parts else "none"


def changed_thresholds(report: Report) -> list[tuple[str, float | int, float | int]]:
    """(name, value used, default) for thresholds that differ from the defaults."""
    defaults = Thresholds().model_dump()
    out = []
    for name, value in report.thresholds.items():
        default = defaults.get(name)
        if default is None or value != default:
            out.append((name, value, default if default is not None else value))
    return out


@dataclass(frozen=True)
class HeaderRow:
    label: str
    value: str
    path_like: bool = False  # long, unbreakable text (paths, command lines): render in code style


def header_rows(report: Report) -> list[HeaderRow]:
    j = report.job
    ranks = f"{j.nprocs:,}" if j.nodes is None else f"{j.nprocs:,} on {j.nodes:,} node{'s' if j.nodes != 1 else ''}"
    rows = [
        HeaderRow("Job", f"{j.jobid}"),
        HeaderRow("Executable", one_line(j.exe) or "(unknown)", path_like=True),
        HeaderRow("Ranks", ranks),
        HeaderRow("Run time", runtime_text(report)),
        HeaderRow("Darshan", f"{one_line(j.darshan_version)} (log format {one_line(j.log_format)})"),
        HeaderRow("Files", files_text(report)),
    ]
    data = data_text(report)
    if data:
        rows.append(HeaderRow("Data", data))
    io_time = io_time_text(report)
    if io_time:
        rows.append(HeaderRow("I/O time", io_time))
    hints = hints_text(report)
    if hints:
        rows.append(HeaderRow("Darshan log hints", hints, path_like=True))
    rows.append(HeaderRow("Modules", modules_text(report)))
    rows.append(HeaderRow("Log", one_line(report.log_path), path_like=True))
    return rows


def top_finding(report: Report) -> Finding | None:
    """The finding to name in a one-row summary: the most severe one that is not the I/O share itself."""
    pool = [f for f in report.findings if not f.code.startswith("J")] or report.findings
    return min(pool, key=lambda f: f.severity.rank) if pool else None


@dataclass(frozen=True)
class SummaryRow:
    """One line of the several-logs summary table."""

    log: str
    jobid: str
    exe: str
    ranks: str
    io_share: str
    critical: int
    warning: int
    top: str
    level: Severity


def summary_row(report: Report, log: str | None = None) -> SummaryRow:
    top = top_finding(report)
    share = report.io_share
    io = "n/a" if share is None or share.runtime_s <= 0 else short_percent(share.share_slowest)
    exe = one_line(report.job.exe)
    return SummaryRow(
        log=(log or PurePath(report.log_path).name).removesuffix(".darshan"),
        jobid=str(report.job.jobid),
        exe=PurePath(exe.split(" ")[0]).name if exe else "",
        ranks=f"{report.job.nprocs:,}",
        io_share=io,
        critical=report.counts.critical,
        warning=report.counts.warning,
        top=f"{top.code} {one_line(top.title)}" if top else "",
        level=verdict(report).level,
    )


SUMMARY_HEADERS = ("Log", "Job", "Executable", "Ranks", "I/O share", "Critical", "Warning", "Top finding")
SUMMARY_NUMERIC = frozenset({"Ranks", "I/O share", "Critical", "Warning"})


# --- cross-layer ---------------------------------------------------------------------------------

CROSSLAYER_HEADERS = ("Layer", "Writes", "Written", "Write size", "Reads", "Read", "Time", "Ranks", "Collective")
CROSSLAYER_FILES_SHOWN = 5


@dataclass(frozen=True)
class CrossLayerTable:
    path: str
    summary: str
    rows: Sequence[tuple[str, ...]]


def crosslayer_tables(report: Report) -> tuple[str, list[CrossLayerTable], int]:
    """(job summary text, one table per shown file, files not shown) for the cross-layer section."""
    x = report.cross_layer
    if x is None or not x.files:
        return "", [], 0
    tables = []
    for f in x.files[:CROSSLAYER_FILES_SHOWN]:
        rows = []
        for layer in f.layers:
            size = layer.writes.median_bytes or layer.writes.typical_bytes
            coll = ""
            if layer.collective_writes is not None or layer.independent_writes is not None:
                coll = f"{layer.collective_writes or 0:,} / {layer.independent_writes or 0:,}"
            elif layer.stripe_count:
                coll = f"{layer.stripe_count} x {human_bytes(layer.stripe_size or 0)} stripes"
            ranks = layer.writer_ranks if layer.writer_ranks is not None else layer.ranks
            rows.append(
                (
                    layer.layer,
                    f"{layer.writes.ops:,}",
                    human_bytes(layer.writes.bytes),
                    human_bytes(size) if size else "",
                    f"{layer.reads.ops:,}",
                    human_bytes(layer.reads.bytes),
                    human_seconds(layer.writes.time_s + layer.reads.time_s + layer.meta_time_s),
                    "" if ranks is None else f"{ranks:,}",
                    coll,
                )
            )
        tables.append(CrossLayerTable(f.path, f.summary_text, rows))
    return x.summary_text, tables, max(x.files_total - len(tables), 0)


def source_line_text(s: SourceLine) -> str:
    """``src/io.c:120 in write_row — 1,600 requests, 6.2 MiB, 4 ranks``."""
    return (
        f"{one_line(s.file)}:{s.line} in {one_line(s.function)} — {s.segments:,} "
        f"request{'s' if s.segments != 1 else ''}, {human_bytes(s.bytes)}, "
        f"{s.ranks:,} rank{'s' if s.ranks != 1 else ''}"
    )


def call_chain_text(s: SourceLine) -> str:
    """``write_row (src/io.c:120) ← checkpoint (src/app.c:88) ← main (src/main.c:42)``."""
    return " ← ".join(
        f"{one_line(fr.function)} ({one_line(fr.file)}:{fr.line})"
        if fr.line
        else f"{one_line(fr.function)} [{fr.address}]"
        for fr in s.call_chain
    )
