"""A ``Comparison`` as text (rich), Markdown, one self-contained HTML page, or JSON.

Everything that comes from a log (paths, command lines, finding messages, headlines) is untrusted text: rich
``Text`` (never markup) in the terminal, code spans or backslash-escaped prose in Markdown, ``html.escape`` in
HTML (numbers included), as in ``iodiag.render``.
"""

from __future__ import annotations

import io

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from iodiag.analysis.models import Unit
from iodiag.comparison.compare import MINUS, comparison_schema, signed_percent
from iodiag.comparison.models import Comparison, FindingChange, FindingSide, MetricRow, RunCause, RunSummary
from iodiag.core.units import human_seconds
from iodiag.render.wording import format_value, one_line, percent, short_percent

FORMATS = ("text", "json", "markdown", "html")
DEFAULT_WIDTH = 100


# --- shared wording -----------------------------------------------------------------------------


def direction(c: Comparison) -> int:
    """-1: I/O time fell from A to B; +1: it rose; 0: the same, or unknown."""
    a, b = c.a.io_time_s, c.b.io_time_s
    if a is None or b is None or a == b:
        return 0
    return -1 if b < a else 1


def _sign(x: float) -> str:
    return "+" if x > 0 else MINUS if x < 0 else ""


def value_text(m: MetricRow, v: float | int | None) -> str:
    return "n/a" if v is None else format_value(v, m.unit, m.name)


def delta_text(m: MetricRow) -> str:
    d = m.delta
    if d is None:
        return ""
    if d == 0:
        return "="
    if m.unit is Unit.RATIO:  # a share's change is in percentage points
        return f"{_sign(d)}{percent(abs(d)).removesuffix('%')} pts"
    return _sign(d) + format_value(abs(d), m.unit, m.name)


def change_text(m: MetricRow) -> str:
    if m.change_pct is None:
        return "new" if m.a == 0 and m.b else ""
    if m.change_pct == 0:
        return ""
    return signed_percent(m.change_pct / 100)


def side_text(x: FindingSide | None) -> str:
    """ "critical, ≈ 12.7 min (97.7% of the run), cause 1" for one run's side of a finding; "—" when absent."""
    if x is None:
        return "—"
    if x.seconds is None:
        cost = "cost unknown"
    else:
        bound = "at most " if x.basis.startswith("modelled: upper bound") else ""
        share = f" ({percent(x.share_of_runtime)} of the run)" if x.share_of_runtime is not None else ""
        cost = f"{bound}≈ {human_seconds(x.seconds)}{share}"
    cause = f", cause {x.cause_rank}" if x.cause_rank else ""
    return f"{x.severity.value}, {cost}{cause}"


def finding_delta_text(f: FindingChange) -> str:
    d = f.delta_seconds
    if d is None:
        return ""
    if d == 0:
        return "="
    return f"{_sign(d)}{human_seconds(abs(d))}"


def io_text(r: RunSummary) -> str:
    if r.io_time_s is None:
        return "no I/O recorded"
    share = f" ({short_percent(r.io_share)} of the run)" if r.io_share is not None else ""
    return f"{human_seconds(r.io_time_s)} on the busiest rank{share}"


def run_rows(c: Comparison) -> list[tuple[str, str, str, bool]]:
    """(label, run A, run B, path-like) for the runs side by side."""

    def ranks(r: RunSummary) -> str:
        return f"{r.nprocs:,}" if r.nodes is None else f"{r.nprocs:,} on {r.nodes:,} node{'s' if r.nodes != 1 else ''}"

    a, b = c.a, c.b
    return [
        ("Log", one_line(a.log_path), one_line(b.log_path), True),
        ("Job", str(a.jobid), str(b.jobid), False),
        ("Executable", one_line(a.exe) or "(unknown)", one_line(b.exe) or "(unknown)", True),
        ("Ranks", ranks(a), ranks(b), False),
        ("Darshan", one_line(a.darshan_version), one_line(b.darshan_version), False),
        ("Run time", human_seconds(a.runtime_s), human_seconds(b.runtime_s), False),
        ("I/O time", io_text(a), io_text(b), False),
        ("Verdict", one_line(a.headline), one_line(b.headline), False),
    ]


FINDING_GROUPS = (
    ("findings_resolved", "Resolved", "in run A, gone from run B"),
    ("findings_new", "New", "not in run A, in run B"),
    ("findings_changed", "Changed", "same finding, different severity or cost"),
)


def finding_groups(c: Comparison) -> list[tuple[str, str, str, list[FindingChange]]]:
    return [(key, label, blurb, list(getattr(c, key))) for key, label, blurb in FINDING_GROUPS]


def sections(c: Comparison) -> list[tuple[str, list[MetricRow]]]:
    out: dict[str, list[MetricRow]] = {}
    for m in c.metrics:
        out.setdefault(m.section, []).append(m)
    return list(out.items())


def chart_rows(c: Comparison) -> list[tuple[str, float | None, float | None]]:
    """(label, A seconds, B seconds): I/O time, then the top causes of either run (A's first) with the seconds each
    run's verdict attributes to them; None: no I/O recorded, or not a cause of that run."""
    rows: list[tuple[str, float | None, float | None]] = [("I/O time", c.a.io_time_s, c.b.io_time_s)]
    ca: dict[str, RunCause] = {x.code: x for x in c.a.causes}
    cb: dict[str, RunCause] = {x.code: x for x in c.b.causes}
    for code in list(dict.fromkeys([*ca, *cb]))[:6]:
        a, b = ca.get(code), cb.get(code)
        rows.append((code, a.seconds if a else None, b.seconds if b else None))
    return rows


def title(c: Comparison) -> str:
    return f"Comparison of job {c.a.jobid} (A) with job {c.b.jobid} (B)"


# --- JSON ---------------------------------------------------------------------------------------


def render_json(c: Comparison) -> str:
    return c.model_dump_json(indent=2) + "\n"


def schema_json() -> str:
    import json

    return json.dumps(comparison_schema(), indent=2) + "\n"


# --- text ---------------------------------------------------------------------------------------

_STYLE = {-1: "bold green", 1: "bold red", 0: "bold"}
_GROUP_STYLE = {"findings_resolved": "green", "findings_new": "red", "findings_changed": "yellow"}
_GROUP_MARK = {"findings_resolved": "✔", "findings_new": "✖", "findings_changed": "▲"}


def _t(text: str, style: str = "") -> Text:
    return Text(text, style=style, overflow="fold")


def _header(c: Comparison) -> Panel:
    lead: list[RenderableType] = [_t(c.verdict, _STYLE[direction(c)])]
    lead += [_t(f"Note: {n}", "yellow") for n in c.notes]
    grid = Table(box=None, pad_edge=False, padding=(0, 2), show_header=True, header_style="bold")
    grid.add_column("", style="bold", no_wrap=True)
    grid.add_column("Run A", overflow="fold", ratio=1)
    grid.add_column("Run B", overflow="fold", ratio=1)
    for label, a, b, path_like in run_rows(c):
        style = "bright_blue" if path_like else ""
        grid.add_row(label, _t(a, style), _t(b, style))
    return Panel(
        Group(*lead, Text(""), grid),
        title=Text.assemble(("iodiag", "bold"), f" {c.tool_version} · {title(c)}"),
        title_align="left",
        border_style={-1: "green", 1: "red", 0: ""}[direction(c)],
        box=box.ROUNDED,
        padding=(1, 2),
    )


def _findings_panel(c: Comparison) -> Panel:
    parts: list[RenderableType] = []
    for key, label, blurb, items in finding_groups(c):
        if parts:
            parts.append(Text(""))
        parts.append(
            Text.assemble((f"{label.upper()} · {len(items)}", f"bold {_GROUP_STYLE[key]}"), (f" · {blurb}", "dim"))
        )
        if not items:
            parts.append(Text("  none", style="dim"))
        for f in items:
            change = finding_delta_text(f)
            parts.append(
                Text.assemble(
                    (f"  {_GROUP_MARK[key]} ", _GROUP_STYLE[key]),
                    (f.code, "bold"),
                    "  ",
                    _t(one_line(f.title), "bold"),
                    (f"  [{f.layer.value}]", "dim"),
                    (f"  {change}" if change else "", f"bold {_GROUP_STYLE[key]}"),
                    overflow="fold",
                )
            )
            sides = Text.assemble(("A: ", "dim"), _t(side_text(f.a)), "\n", ("B: ", "dim"), _t(side_text(f.b)))
            parts.append(Padding(sides, (0, 0, 0, 6)))
    if c.findings_unchanged:
        parts += [
            Text(""),
            Text.assemble(
                ("UNCHANGED · ", "bold"), (", ".join(f.code for f in c.findings_unchanged), "dim"), overflow="fold"
            ),
        ]
    return Panel(Group(*parts), title=Text("FINDINGS", style="bold"), title_align="left", padding=(1, 1))


def _metrics_table(c: Comparison) -> Table:
    table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False, expand=True, title_justify="left")
    table.add_column("Metric", overflow="fold", ratio=1)
    for h in ("Run A", "Run B", "Change", "%"):
        table.add_column(h, justify="right", no_wrap=True)
    for i, (section, rows) in enumerate(sections(c)):
        if i:
            table.add_row()
        table.add_row(_t(one_line(section).upper(), "bold"))
        for m in rows:
            table.add_row(_t(one_line(m.name)), value_text(m, m.a), value_text(m, m.b), delta_text(m), change_text(m))
    return table


def print_text(c: Comparison, console: Console) -> None:
    console.print(_header(c))
    console.print(_findings_panel(c))
    console.print(Panel(_metrics_table(c), title=Text("NUMBERS", style="bold"), title_align="left"))
    console.print(
        Text(f"Comparison by iodiag {c.tool_version} (schema {c.schema_version}).", style="dim", overflow="fold")
    )


def render_text(c: Comparison, *, width: int = DEFAULT_WIDTH, color: bool = False) -> str:
    buf = io.StringIO()
    from iodiag.render.text import text_console

    print_text(c, text_console(buf, width, color))
    return buf.getvalue()


# --- Markdown -----------------------------------------------------------------------------------


def render_markdown(c: Comparison) -> str:
    from iodiag.render.markdown import md_code, md_para, md_text

    lines = [f"# {md_text(title(c))}", "", f"**{md_text(c.verdict)}**", ""]
    for n in c.notes:
        lines += [f"> Note: {md_text(n)}", ""]
    lines += ["| | Run A | Run B |", "|---|---|---|"]
    for label, a, b, path_like in run_rows(c):
        if path_like:
            lines.append(f"| **{md_text(label)}** | {md_code(a, in_table=True)} | {md_code(b, in_table=True)} |")
        else:
            lines.append(f"| **{md_text(label)}** | {md_text(a)} | {md_text(b)} |")
    lines.append("")
    for _, label, blurb, items in finding_groups(c):
        lines += [f"## {md_text(label)} findings ({len(items)})", "", md_para(f"{blurb[:1].upper()}{blurb[1:]}."), ""]
        if not items:
            continue
        lines += ["| Code | Finding | Run A | Run B | Change |", "|---|---|---|---|---:|"]
        lines += [
            f"| {md_text(f.code)} | {md_text(f.title)} | {md_text(side_text(f.a))} | {md_text(side_text(f.b))} "
            f"| {md_text(finding_delta_text(f))} |"
            for f in items
        ]
        lines.append("")
    if c.findings_unchanged:
        lines += [f"Unchanged: {md_text(', '.join(f.code for f in c.findings_unchanged))}", ""]
    lines += ["## Numbers", ""]
    for section, rows in sections(c):
        lines += [f"### {md_text(section)}", "", "| Metric | Run A | Run B | Change | % |", "|---|---:|---:|---:|---:|"]
        lines += [
            f"| {md_text(m.name)} | {md_text(value_text(m, m.a))} | {md_text(value_text(m, m.b))} "
            f"| {md_text(delta_text(m))} | {md_text(change_text(m))} |"
            for m in rows
        ]
        lines.append("")
    lines.append(f"*Comparison by iodiag {md_text(c.tool_version)} (schema {md_text(c.schema_version)}).*")
    return "\n".join(lines) + "\n"


# --- HTML ---------------------------------------------------------------------------------------

_EXTRA_CSS = """
svg .run-a { fill: var(--meta); } svg .run-b { fill: var(--info); }
.legend-a { color: var(--meta); } .legend-b { color: var(--info); }
table.runs td:first-child { font-weight: 600; white-space: nowrap; }
tr.section td { font-weight: 700; padding-top: 14px; }
.notes li { margin-bottom: 4px; }
.resolved .code { color: var(--ok); } .new .code { color: var(--crit); } .changed .code { color: var(--warn); }
"""


def _svg_chart(c: Comparison) -> str | None:
    from iodiag.core.markup import e

    rows = chart_rows(c)
    values = [v for _, a, b in rows for v in (a, b) if v is not None]
    top = max(values, default=0.0)
    if top <= 0:
        return None
    x0, w, bar = 90, 330, 14
    parts = []
    y = 6
    for label, a, b in rows:
        parts.append(f'<text x="0" y="{y + bar + 3}">{e(label)}</text>')
        for run, v, cls in (("A", a, "run-a"), ("B", b, "run-b")):
            parts.append(f'<text class="muted" x="{x0 - 14}" y="{y + bar - 3}">{e(run)}</text>')
            parts.append(f'<rect class="track" x="{x0}" y="{y}" width="{w}" height="{bar}" rx="2"/>')
            if v:
                bw = max(v / top * w, 1.5)
                parts.append(f'<rect class="{cls}" x="{x0}" y="{y}" width="{bw:.1f}" height="{bar}" rx="2"/>')
            text = "—" if v is None else human_seconds(v)
            parts.append(f'<text x="{x0 + w + 8}" y="{y + bar - 3}">{e(text)}</text>')
            y += bar + 3
        y += 10
    desc = "Seconds in run A and run B: " + "; ".join(
        f"{label} {'none' if a is None else human_seconds(a)} to {'none' if b is None else human_seconds(b)}"
        for label, a, b in rows
    )
    return (
        f'<svg viewBox="0 0 520 {y}" role="img" aria-label="{e(desc)}"><title>{e(desc)}</title>{"".join(parts)}</svg>'
    )


def render_html(c: Comparison) -> str:
    from iodiag.core.markup import e
    from iodiag.render.html import CSS

    cls = {-1: "ok", 1: "crit", 0: "info"}[direction(c)]
    body = [f"<h1>{e(title(c))}</h1>", f'<p class="verdict {cls}"><strong>{e(c.verdict)}</strong></p>']
    if c.notes:
        body.append('<ul class="notes">' + "".join(f'<li class="wrap">{e(n)}</li>' for n in c.notes) + "</ul>")
    runs = "".join(
        f"<tr><td>{e(label)}</td>"
        + "".join(f'<td class="{"path" if path_like else "wrap"}">{e(v)}</td>' for v in (a, b))
        + "</tr>"
        for label, a, b, path_like in run_rows(c)
    )
    overview = (
        '<table class="runs"><thead><tr><th></th><th>Run A</th><th>Run B</th></tr></thead>'
        f"<tbody>{runs}</tbody></table>"
    )
    chart = _svg_chart(c)
    if chart:
        overview = (
            f'<div class="overview"><div>{overview}</div><figure>{chart}<figcaption>Seconds on the busiest rank: '
            "the I/O time, and what each run's verdict attributes to its top causes (— where a code is not a cause "
            'of that run); <span class="legend-a">run A</span> above <span class="legend-b">run B</span>.'
            "</figcaption></figure></div>"
        )
    body.append(overview)
    for key, label, blurb, items in finding_groups(c):
        body.append(f"<h2>{e(label)} findings: {e(len(items))} <small>{e(blurb)}</small></h2>")
        if not items:
            body.append('<p class="muted">None.</p>')
            continue
        rows = "".join(
            f'<tr class="{e(key.removeprefix("findings_"))}"><td><span class="code">{e(f.code)}</span></td>'
            f'<td class="wrap">{e(f.title)}</td><td class="wrap">{e(side_text(f.a))}</td>'
            f'<td class="wrap">{e(side_text(f.b))}</td><td class="num">{e(finding_delta_text(f))}</td></tr>'
            for f in items
        )
        body.append(
            '<table><thead><tr><th>Code</th><th>Finding</th><th>Run A</th><th>Run B</th><th class="num">Change</th>'
            f"</tr></thead><tbody>{rows}</tbody></table>"
        )
    if c.findings_unchanged:
        body.append(f'<p class="muted">Unchanged: {e(", ".join(f.code for f in c.findings_unchanged))}</p>')
    body.append("<h2>Numbers</h2>")
    rows_html: list[str] = []
    for section, rows_ in sections(c):
        rows_html.append(f'<tr class="section"><td colspan="5">{e(section)}</td></tr>')
        rows_html += [
            f'<tr><td class="wrap">{e(m.name)}</td><td class="num">{e(value_text(m, m.a))}</td>'
            f'<td class="num">{e(value_text(m, m.b))}</td><td class="num">{e(delta_text(m))}</td>'
            f'<td class="num">{e(change_text(m))}</td></tr>'
            for m in rows_
        ]
    body.append(
        '<table><thead><tr><th>Metric</th><th class="num">Run A</th><th class="num">Run B</th>'
        f'<th class="num">Change</th><th class="num">%</th></tr></thead><tbody>{"".join(rows_html)}</tbody></table>'
    )
    body.append(f"<footer>Comparison by iodiag {e(c.tool_version)} (schema {e(c.schema_version)}).</footer>")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        f"<title>iodiag: {e(title(c))}</title>\n<style>{CSS}{_EXTRA_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{''.join(body)}\n</main>\n</body>\n</html>\n"
    )


# --- by format ----------------------------------------------------------------------------------


def render(c: Comparison, fmt: str, *, width: int = DEFAULT_WIDTH, color: bool = False) -> str:
    if fmt == "text":
        return render_text(c, width=width, color=color)
    if fmt == "json":
        return render_json(c)
    if fmt == "markdown":
        return render_markdown(c)
    if fmt == "html":
        return render_html(c)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


__all__ = [
    "FORMATS",
    "print_text",
    "render",
    "render_html",
    "render_json",
    "render_markdown",
    "render_text",
    "schema_json",
]
