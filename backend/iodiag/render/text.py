"""Terminal report (rich). Works without a terminal: no colour, wraps at the console width."""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from iodiag.analysis.models import Finding, Report, Severity
from iodiag.render import wording

STYLE: dict[Severity, str] = {
    Severity.CRITICAL: "bold red",
    Severity.WARNING: "yellow",
    Severity.INFO: "cyan",
    Severity.OK: "green",
}
MARK: dict[Severity, str] = {
    Severity.CRITICAL: "✖",
    Severity.WARNING: "▲",
    Severity.INFO: "●",
    Severity.OK: "✔",
}

DEFAULT_WIDTH = 100


def _t(text: str, style: str = "") -> Text:
    """Log strings go through Text, never markup, so brackets in a path cannot be read as styles."""
    return Text(text, style=style, overflow="fold")


def header(report: Report) -> Panel:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for row in wording.header_rows(report):
        grid.add_row(row.label, _t(row.value, "bright_blue" if row.path_like else ""))
    v = wording.verdict(report)
    verdict = Text.assemble((f"{MARK[v.level]} {v.headline}", STYLE[v.level]), (f": {v.detail}" if v.detail else ""))
    lead: list[RenderableType] = [verdict]
    causes = wording.cause_lines(report)
    if causes:
        lead.append(Text("Causes, by the run time they cost:", style="bold"))
        lead += [Padding(_t(line), (0, 0, 0, 2)) for line in causes]
    if report.verdict.where_time_went and report.verdict.causes:
        lead.append(_t(report.verdict.where_time_went, "dim"))
    for cav in report.verdict.caveats:
        lead.append(_t(f"Caveat: {cav}", "yellow"))
    counts = Text(" · ").join(
        Text(f"{n} {'warnings' if sev is Severity.WARNING and n != 1 else sev.value}", STYLE[sev] if n else "dim")
        for sev, n in wording.severity_counts(report)
    )
    return Panel(
        Group(*lead, Text(""), grid),
        title=Text.assemble(("iodiag", "bold"), f" {report.tool_version} · I/O diagnosis of job {report.job.jobid}"),
        title_align="left",
        subtitle=counts,
        subtitle_align="left",
        border_style=STYLE[v.level] if v.level is not Severity.INFO else "",
        box=box.ROUNDED,
        padding=(1, 2),
    )


def _evidence(f: Finding) -> Text | None:
    if not f.evidence:
        return None
    parts = []
    for m in f.evidence:
        label, value = wording.format_metric(m)
        parts.append(Text.assemble((label, "dim"), " ", (value, "bold")))
    return Text(" · ", style="dim").join(parts)


def _files(f: Finding) -> RenderableType | None:
    if not f.files:
        return None
    more = wording.more_files(f)
    title = f"Files ({len(f.files)} of {f.files_total:,}):" if more else "Files:"
    parts: list[RenderableType] = [Text(title, style="bold")]
    for fe in f.files:
        # The path gets a line of its own so a long one wraps instead of squeezing the numbers.
        parts.append(Padding(Text.assemble(("• ", "dim"), _t(wording.one_line(fe.path), "bright_blue")), (0, 0, 0, 2)))
        if fe.metrics:
            metrics = Text(" · ", style="dim").join(
                Text.assemble((label, "dim"), " ", (value, "bold"))
                for label, value in map(wording.format_metric, fe.metrics)
            )
            parts.append(Padding(metrics, (0, 0, 0, 4)))
    if more:
        parts.append(Padding(Text(f"… and {more:,} more", style="dim"), (0, 0, 0, 2)))
    return Group(*parts)


def finding(f: Finding) -> RenderableType:
    head = Text.assemble(
        (f"{MARK[f.severity]} ", STYLE[f.severity]),
        (f"{f.code}", f"bold {STYLE[f.severity]}"),
        "  ",
        (wording.one_line(f.title), "bold"),
        (f"  [{f.layer.value}]", "dim"),
    )
    body: list[RenderableType] = []
    cost = wording.cost_text(f)
    if cost is not None:
        note = wording.detected_note(f)
        body.append(Text.assemble((wording.one_line(cost), "bold"), (f" ({note})" if note else "", "dim")))
    body.append(_t(wording.one_line(f.message)))
    ev = _evidence(f)
    if ev is not None:
        body.append(ev)
    files = _files(f)
    if files is not None:
        body.append(files)
    if f.ranks:
        body.append(Text.assemble(("Ranks: ", "bold"), wording.ranks_text(f.ranks)))
    if f.source_lines:
        parts: list[RenderableType] = [Text("Source lines:", style="bold")]
        for s in f.source_lines:
            line = Text.assemble(("• ", "dim"), _t(wording.source_line_text(s), "bright_magenta"))
            parts.append(Padding(line, (0, 0, 0, 2)))
            parts.append(Padding(_t(wording.call_chain_text(s), "dim"), (0, 0, 0, 4)))
        body.append(Group(*parts))
    if f.recommendations:
        recs = Text(" · ").join(Text(wording.recommendation_title(r)) for r in f.recommendations)
        body.append(Text.assemble(("Try: ", "bold"), recs))
    return Group(head, Padding(Group(*body), (0, 0, 0, 4)))


def group_panel(sev: Severity, findings: Sequence[Finding]) -> Panel:
    items: list[RenderableType] = []
    for i, f in enumerate(findings):
        if i:
            items.append(Text(""))
        items.append(finding(f))
    n = len(findings)
    title = Text.assemble(
        (f"{wording.SEVERITY_LABEL[sev].upper()} · {n} finding{'s' if n != 1 else ''}", STYLE[sev]),
        (f" · {wording.SEVERITY_BLURB[sev]}", "dim"),
    )
    return Panel(Group(*items), title=title, title_align="left", border_style=STYLE[sev], padding=(1, 1))


def recommendations_panel(report: Report) -> Panel | None:
    recs = wording.all_recommendations(report)
    if not recs:
        return None
    table = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False)
    table.add_column(no_wrap=True, justify="right")
    table.add_column(overflow="fold")
    for i, (rec_id, codes) in enumerate(recs, 1):
        table.add_row(
            f"{i}.",
            Text.assemble(
                (wording.recommendation_title(rec_id), "bold"),
                (f" (for {', '.join(codes)})", "dim"),
                "\n",
                wording.recommendation_summary(rec_id),
            ),
        )
    return Panel(table, title=Text("WHAT TO TRY", style="bold"), title_align="left", padding=(1, 1))


def problems_panel(report: Report) -> Panel | None:
    if not report.problems:
        return None
    lines = [Text.assemble(("• ", "yellow"), _t(wording.one_line(p))) for p in report.problems]
    return Panel(
        Group(*lines),
        title=Text("PROBLEMS READING THE LOG", style="yellow"),
        title_align="left",
        border_style="yellow",
    )


def footer(report: Report) -> Text:
    changed = wording.changed_thresholds(report)
    if changed:
        what = ", ".join(f"{name} = {value} (default {default})" for name, value, default in changed)
        thresholds = f"Thresholds changed from the defaults: {what}."
    else:
        thresholds = "Default thresholds."
    return Text(
        f"{thresholds} Report by iodiag {report.tool_version} (schema {report.schema_version}).",
        style="dim",
        overflow="fold",
    )


def crosslayer_panel(report: Report) -> Panel | None:
    summary, tables, more = wording.crosslayer_tables(report)
    if not tables:
        return None
    from rich.table import Table

    parts: list[RenderableType] = [_t(summary)]
    for t in tables:
        table = Table(title=t.path, title_justify="left", title_style="bold", expand=False, pad_edge=False)
        for h in wording.CROSSLAYER_HEADERS:
            table.add_column(h, justify="left" if h in ("Layer", "Collective") else "right", overflow="fold")
        for row in t.rows:
            table.add_row(*(Text(cell) for cell in row))
        parts += [Text(""), table]
    if more:
        parts.append(_t(f"… and {more:,} more file(s)", "dim"))
    return Panel(Group(*parts), title="CROSS-LAYER · what each call became below it", title_align="left")


def renderables(report: Report) -> list[RenderableType]:
    out: list[RenderableType] = [header(report)]
    problems = problems_panel(report)
    if problems is not None:
        out.append(problems)
    if not report.findings:
        out.append(Text("No findings.", style="dim"))
    for sev, findings in wording.grouped(report):
        out.append(group_panel(sev, findings))
    recs = recommendations_panel(report)
    if recs is not None:
        out.append(recs)
    xl = crosslayer_panel(report)
    if xl is not None:
        out.append(xl)
    out.append(footer(report))
    return out


def print_text(report: Report, console: Console) -> None:
    for r in renderables(report):
        console.print(r)


def render_text(report: Report, *, width: int = DEFAULT_WIDTH, color: bool = False) -> str:
    """The report as text; ``color`` adds ANSI escapes."""
    buf = io.StringIO()
    console = text_console(buf, width, color)
    print_text(report, console)
    return buf.getvalue()


def summary_table(rows: Sequence[wording.SummaryRow], failures: Sequence[tuple[str, str]] = ()) -> RenderableType:
    """The several-logs overview: one row per log; unreadable logs listed under the table."""
    table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, expand=True)
    # Short headers: the numbers are narrow and the names need the room.
    short = {"Executable": "Program", "I/O share": "I/O", "Critical": "Crit", "Warning": "Warn"}
    ratios = {"Log": (3, 12), "Executable": (2, 11), "Top finding": (3, 16)}
    for h in wording.SUMMARY_HEADERS:
        ratio, min_width = ratios.get(h, (None, None))
        table.add_column(
            short.get(h, h),
            justify="right" if h in wording.SUMMARY_NUMERIC else "left",
            overflow="fold",
            no_wrap=ratio is None,
            ratio=ratio,
            min_width=min_width,
        )
    for r in rows:
        table.add_row(
            _t(r.log, "bright_blue"),
            r.jobid,
            _t(r.exe),
            r.ranks,
            Text(r.io_share, style=STYLE[r.level] if r.level is not Severity.INFO else ""),
            Text(str(r.critical), style=STYLE[Severity.CRITICAL] if r.critical else "dim"),
            Text(str(r.warning), style=STYLE[Severity.WARNING] if r.warning else "dim"),
            _t(r.top),
        )
    if not failures:
        return table
    n = len(failures)
    lines: list[RenderableType] = [Text(f"{n} log{'s' if n != 1 else ''} could not be read:", style="bold red")]
    lines += [Text.assemble(("  ✖ ", "red"), _t(f"{name}: {reason}")) for name, reason in failures]
    return Group(table, *lines) if rows else Group(*lines)


def render_text_many(
    reports: Sequence[Report], names: Sequence[str] | None = None, *, width: int = DEFAULT_WIDTH, color: bool = False
) -> str:
    """A summary table, then every report."""
    buf = io.StringIO()
    console = text_console(buf, width, color)
    console.print(summary_table([wording.summary_row(r, names[i] if names else None) for i, r in enumerate(reports)]))
    for r in reports:
        console.print()
        print_text(r, console)
    return buf.getvalue()


def text_console(file: io.StringIO, width: int, color: bool) -> Console:
    """The console every text renderer writes to: a fixed width, colour only when asked, nothing guessed from
    the terminal (so the text is the same in a test, a pipe and a shell)."""
    return Console(
        file=file,
        width=width,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        highlight=False,
        emoji=False,
        legacy_windows=False,
        force_jupyter=False,
    )
