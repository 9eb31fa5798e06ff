"""One self-contained HTML page: inline CSS and SVG, no scripts, fonts or external URLs.

Every string that reaches the page goes through ``e()`` (``core/markup.py``: ``html.escape`` with quotes), numbers
included, so a file called ``<img src=x onerror=alert(1)>`` shows up as text. Commands are the only markup
made from report text: ``rich()`` splits the verdict's prose from its code spans first (``render.code``) and
escapes each piece, so no character of a log string can open or close a tag.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from iodiag.analysis.models import Finding, Report, Severity
from iodiag.core.markup import e
from iodiag.core.units import human_seconds
from iodiag.render import wording
from iodiag.render.code import split_report_text
from iodiag.render.svg_plots import PLOT_CSS, figures, text_width

if TYPE_CHECKING:
    from iodiag.analysis.plots.data import PlotData

SEV_CLASS: dict[Severity, str] = {
    Severity.CRITICAL: "crit",
    Severity.WARNING: "warn",
    Severity.INFO: "info",
    Severity.OK: "ok",
}
MARK: dict[Severity, str] = {
    Severity.CRITICAL: "✖",
    Severity.WARNING: "▲",
    Severity.INFO: "●",
    Severity.OK: "✔",
}

# Read, write and metadata take Okabe-Ito colours, told apart with the common colour-vision deficiencies;
# the plots (svg_plots.PLOT_CSS) use the same ones.
CSS = """
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --card: #f6f8fa; --border: #d1d9e0;
  --bar: #dde3ea; --code: #eff2f5; --link: #0969da;
  --crit: #cf222e; --warn: #9a6700; --info: #0969da; --ok: #1a7f37;
  --crit-bg: #ffebe9; --warn-bg: #fff8c5; --info-bg: #ddf4ff; --ok-bg: #dafbe1;
  --read: #d55e00; --write: #0072b2; --meta: #009e73;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --card: #161b22; --border: #30363d;
    --bar: #30363d; --code: #1f2630; --link: #58a6ff;
    --crit: #ff7b72; --warn: #d29922; --info: #58a6ff; --ok: #3fb950;
    --crit-bg: #3b1518; --warn-bg: #3a2d0c; --info-bg: #0c2d4a; --ok-bg: #0f3019;
    --read: #f28e2b; --write: #56b4e9; --meta: #3fc79a;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1060px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 1.6rem; margin: 0 0 12px; }
h2 { font-size: 1.2rem; margin: 32px 0 12px; padding-bottom: 4px; border-bottom: 1px solid var(--border); }
h2 small { font-weight: normal; color: var(--muted); font-size: .85rem; }
h3 { font-size: 1.05rem; margin: 0 0 6px; }
a { color: var(--link); }
code, .path { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .88em; }
.path, .wrap { overflow-wrap: anywhere; word-break: break-word; }
code { background: var(--code); padding: 1px 4px; border-radius: 4px; }
/* A command is copied as shown: keep its spaces and any line break in a quoted path, and wrap anywhere. */
code.cmd { white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; font-weight: normal; }
ul.actions { margin: 6px 0; padding-left: 20px; }
ul.actions li { margin-bottom: 6px; }
.verdict { font-size: 1.15rem; padding: 12px 16px; border-radius: 8px; margin: 0 0 16px;
  border-left: 6px solid; }
.verdict strong { display: block; font-size: 1.3rem; }
.verdict.crit { border-color: var(--crit); background: var(--crit-bg); }
.verdict.warn { border-color: var(--warn); background: var(--warn-bg); }
.verdict.info { border-color: var(--info); background: var(--info-bg); }
.verdict.ok { border-color: var(--ok); background: var(--ok-bg); }
.overview { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 20px; align-items: start; }
@media (max-width: 800px) { .overview { grid-template-columns: minmax(0, 1fr); } }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 14px; margin: 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; min-width: 0; }
figure { margin: 0; background: var(--card); border: 1px solid var(--border); border-radius: 8px; padding: 12px; }
figcaption { color: var(--muted); font-size: .82rem; margin-top: 6px; }
svg { display: block; width: 100%; height: auto; }
svg text { fill: var(--fg); font: 12px system-ui, sans-serif; } /* SVG_FONT: the bars leave room for labels by it */
svg .muted { fill: var(--muted); }
svg .track { fill: var(--bar); }
svg .crit { fill: var(--crit); } svg .warn { fill: var(--warn); }
svg .info { fill: var(--info); } svg .ok { fill: var(--ok); }
svg .read { fill: var(--read); } svg .write { fill: var(--write); } svg .meta { fill: var(--meta); }
svg .mark { stroke: var(--muted); stroke-dasharray: 3 3; stroke-width: 1; }
nav.counts { display: flex; flex-wrap: wrap; gap: 8px; margin: 20px 0 0; }
.badge { display: inline-block; padding: 3px 10px; border-radius: 999px; font-weight: 600; font-size: .9rem;
  text-decoration: none; border: 1px solid var(--border); color: var(--fg); }
.badge.crit { background: var(--crit-bg); color: var(--crit); }
.badge.warn { background: var(--warn-bg); color: var(--warn); }
.badge.info { background: var(--info-bg); color: var(--info); }
.badge.ok { background: var(--ok-bg); color: var(--ok); }
.badge.none { opacity: .55; }
article.finding { background: var(--card); border: 1px solid var(--border); border-left: 5px solid;
  border-radius: 8px; padding: 12px 16px; margin: 0 0 12px; }
article.crit { border-left-color: var(--crit); } article.warn { border-left-color: var(--warn); }
article.info { border-left-color: var(--info); } article.ok { border-left-color: var(--ok); }
.code { font-family: ui-monospace, monospace; font-weight: 700; margin-right: 6px; }
.crit .code, .mk.crit { color: var(--crit); } .warn .code, .mk.warn { color: var(--warn); }
.info .code, .mk.info { color: var(--info); } .ok .code, .mk.ok { color: var(--ok); }
.layer { font-size: .78rem; font-weight: normal; color: var(--muted); border: 1px solid var(--border);
  border-radius: 4px; padding: 0 5px; margin-left: 6px; vertical-align: 2px; }
article p { margin: 6px 0; }
dl.evidence { display: flex; flex-wrap: wrap; gap: 6px 18px; margin: 8px 0; }
dl.evidence div { display: flex; gap: 6px; align-items: baseline; }
dl.evidence dt { color: var(--muted); font-size: .88rem; }
dl.evidence dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; font-size: .9rem; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--border); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.more, .muted { color: var(--muted); }
ol.recs li { margin-bottom: 8px; }
ol.recs .for { color: var(--muted); font-size: .88rem; }
.problems { border: 1px solid var(--warn); background: var(--warn-bg); border-radius: 8px; padding: 8px 16px; }
details { margin-top: 24px; }
summary { cursor: pointer; font-weight: 600; }
footer { margin-top: 32px; color: var(--muted); font-size: .85rem; }
section.report + section.report { margin-top: 48px; border-top: 3px solid var(--border); padding-top: 8px; }
@media print { .badge, article.finding { break-inside: avoid; } }
"""


SVG_FONT = 12
"""Font size (px) of the header pictures' text, as CSS sets it above."""


def cmd(command: str) -> str:
    """A command as code: escaped, whitespace kept (``code.cmd``), so what is copied is what to type."""
    return f'<code class="cmd">{e(command)}</code>'


def rich(text: str, report: Report) -> str:
    """Report prose with its code spans (the verdict's commands and settings) as ``<code>``; split before
    escaping, every piece escaped, so text from a log never becomes markup."""
    return "".join(cmd(t) if is_code else e(t) for is_code, t in split_report_text(text, report))


def _anchor(*parts: object) -> str:
    raw = "-".join(str(p) for p in parts if str(p))
    return e("".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in raw))


# --- pictures -----------------------------------------------------------------------------

TIME_W, CAUSES_W = 560, 500
"""viewBox widths of the header's bar pictures."""
GAP = 8
"""Between a label and its bar, and between a bar and its value."""


def _bar_geometry(width: int, labels: Sequence[str], values: Sequence[str], *, left: int, bar: int) -> tuple[int, int]:
    """(bar start, full bar width) for rows of "label, bar, value" in a picture ``width`` wide: the labels fit
    left of the bars and the values right of them by a conservative estimate of their width
    (``svg_plots.text_width``); the bars are at most ``bar`` wide and start at ``left`` or further right."""
    x0 = max(left, math.ceil(max((text_width(t, SVG_FONT) for t in labels), default=0.0)) + GAP)
    room = width - x0 - GAP - math.ceil(max((text_width(t, SVG_FONT) for t in values), default=0.0))
    return x0, max(min(bar, room), 40)


def _svg_time(report: Report) -> str | None:
    share = report.io_share
    if share is None or share.runtime_s <= 0:
        return None
    v = wording.verdict(report)
    low = float(report.thresholds.get("io_share_low", 0.05))
    high = float(report.thresholds.get("io_share_high", 0.3))
    rows = [
        ("Run time", 1.0, "track", human_seconds(share.runtime_s)),
        (
            "I/O, busiest rank",
            share.share_slowest,
            SEV_CLASS[v.level],
            f"{human_seconds(share.slowest_rank_io_s)} ({wording.short_percent(share.share_slowest)})",
        ),
        (
            "I/O, average rank",
            share.share_mean,
            SEV_CLASS[v.level],
            f"{human_seconds(share.mean_rank_io_s)} ({wording.short_percent(share.share_mean)})",
        ),
    ]
    # Labels left of the bars, values right of them: the bars take what the text leaves (a value such as
    # "13.0 min (>99%)" ran past the picture's edge when the bars had a fixed width).
    x0, w = _bar_geometry(
        TIME_W, [label for label, *_ in rows] + ["I/O time split"], [v for *_, v in rows], left=130, bar=330
    )
    parts = []
    y = 26
    for label, frac, cls, value in rows:
        frac = min(max(frac, 0.0), 1.0)
        bw = max(frac * w, 1.5 if frac > 0 else 0)
        parts.append(f'<text x="0" y="{y + 13}">{e(label)}</text>')
        parts.append(f'<rect class="track" x="{x0}" y="{y}" width="{w}" height="18" rx="3"/>')
        if cls != "track":
            parts.append(f'<rect class="{e(cls)}" x="{x0}" y="{y}" width="{bw:.1f}" height="18" rx="3"/>')
        parts.append(f'<text x="{x0 + w + GAP}" y="{y + 13}">{e(value)}</text>')
        y += 28
    kinds = [("read", share.read_s), ("write", share.write_s), ("meta", share.meta_s)]
    total = sum(t for _, t in kinds)
    legend = []
    if total > 0:
        parts.append(f'<text x="0" y="{y + 13}">I/O time split</text>')
        parts.append(f'<rect class="track" x="{x0}" y="{y}" width="{w}" height="18" rx="3"/>')
        x = float(x0)
        for cls, t in kinds:
            seg = t / total * w
            if seg > 0:
                parts.append(f'<rect class="{cls}" x="{x:.1f}" y="{y}" width="{seg:.1f}" height="18"/>')
            x += seg
        y += 32
        lx = x0
        names = {"read": "read", "write": "write", "meta": "metadata"}
        for cls, t in kinds:
            text = f"{names[cls]} {wording.short_percent(t / total)}"
            legend.append(f'<rect class="{cls}" x="{lx}" y="{y - 10}" width="10" height="10" rx="2"/>')
            legend.append(f'<text x="{lx + 14}" y="{y}">{e(text)}</text>')
            lx += 14 + 8 * len(text) + 14
        y += 8
    marks = []
    for frac in (low, high):
        if 0 < frac < 1:
            mx = x0 + frac * w
            marks.append(f'<line class="mark" x1="{mx:.1f}" y1="20" x2="{mx:.1f}" y2="{26 + 28 * 3 - 8}"/>')
            marks.append(
                f'<text class="muted" x="{mx:.1f}" y="14" text-anchor="middle">{e(wording.short_percent(frac))}</text>'
            )
    height = y + 6
    desc = (
        f"I/O took {wording.short_percent(share.share_slowest)} of the run time on the busiest rank "
        f"and {wording.short_percent(share.share_mean)} on the average rank."
    )
    return (
        f'<svg viewBox="0 0 {TIME_W} {height}" role="img" aria-label="{e(desc)}">'
        f"<title>{e(desc)}</title>{''.join(parts)}{''.join(marks)}{''.join(legend)}</svg>"
    )


def _causes_list(report: Report) -> str:
    v = report.verdict
    parts = []
    if v.causes:
        items = "".join(
            f'<li><span class="code">{e(cause.code)}</span> <strong>{e(cause.title)}</strong>: '
            f"≈ {e(human_seconds(cause.seconds))} ({e(wording.short_percent(cause.share_of_runtime))} of the run)"
            f'<br><span class="wrap">{rich(cause.summary, report)}</span>'
            + (f'<br><em class="wrap">{rich(cause.action, report)}</em>' if cause.action else "")
            + "</li>"
            for cause in v.causes
        )
        parts.append(f'<h3>Causes, by the run time they cost</h3><ol class="causes">{items}</ol>')
    if v.where_time_went:
        parts.append(f'<p class="wrap muted">{rich(v.where_time_went, report)}</p>')
    if v.caveats:
        items = "".join(f'<li class="wrap">{rich(cav, report)}</li>' for cav in v.caveats)
        parts.append(f'<ul class="caveats" aria-label="Caveats">{items}</ul>')
    return "".join(parts)


def _svg_causes(report: Report) -> str | None:
    v = report.verdict
    s = report.io_share
    if not v.causes or s is None or s.slowest_rank_io_s <= 0:
        return None
    x0, w = _bar_geometry(
        CAUSES_W, [c.code for c in v.causes], [human_seconds(c.seconds) for c in v.causes], left=60, bar=340
    )
    parts = []
    y = 8
    for cause in v.causes:
        frac = min(cause.seconds / s.slowest_rank_io_s, 1.0)
        parts.append(f'<text x="0" y="{y + 13}">{e(cause.code)}</text>')
        parts.append(f'<rect class="track" x="{x0}" y="{y}" width="{w}" height="18" rx="3"/>')
        parts.append(f'<rect class="crit" x="{x0}" y="{y}" width="{max(frac * w, 1.5):.1f}" height="18" rx="3"/>')
        parts.append(f'<text x="{x0 + w + GAP}" y="{y + 13}">{e(human_seconds(cause.seconds))}</text>')
        y += 26
    desc = "Causes by cost: " + "; ".join(f"{x.code} {human_seconds(x.seconds)}" for x in v.causes)
    return (
        f'<svg viewBox="0 0 {CAUSES_W} {y + 4}" role="img" aria-label="{e(desc)}"><title>{e(desc)}</title>'
        f"{''.join(parts)}</svg>"
    )


def _svg_counts(report: Report) -> str:
    counts = wording.severity_counts(report)
    top = max((n for _, n in counts), default=0) or 1
    parts = []
    bw, gap, h = 60, 40, 70
    for i, (sev, n) in enumerate(counts):
        x = 20 + i * (bw + gap)
        bh = n / top * h
        parts.append(f'<rect class="track" x="{x}" y="20" width="{bw}" height="{h}" rx="3"/>')
        if n:
            parts.append(
                f'<rect class="{SEV_CLASS[sev]}" x="{x}" y="{20 + h - bh:.1f}" width="{bw}" height="{bh:.1f}" rx="3"/>'
            )
        parts.append(f'<text x="{x + bw / 2}" y="14" text-anchor="middle">{e(n)}</text>')
        parts.append(
            f'<text class="muted" x="{x + bw / 2}" y="{20 + h + 16}" text-anchor="middle">'
            f"{e(wording.SEVERITY_LABEL[sev])}</text>"
        )
    desc = "Findings by severity: " + wording.counts_line(report)
    return (
        f'<svg viewBox="0 0 420 112" role="img" aria-label="{e(desc)}"><title>{e(desc)}</title>{"".join(parts)}</svg>'
    )


# --- sections ---------------------------------------------------------------------------------


def _header(report: Report, prefix: str, level: int) -> str:
    v = wording.verdict(report)
    h = f"h{level}"
    facts = "".join(
        f'<dt>{e(row.label)}</dt><dd class="{"path" if row.path_like else "wrap"}">{e(row.value)}</dd>'
        for row in wording.header_rows(report)
    )
    time_svg = _svg_time(report)
    pictures = ""
    if time_svg:
        pictures += (
            f"<figure>{time_svg}<figcaption>Bars are shares of the run time; dashed lines mark the thresholds "
            "below which I/O is minor and above which it dominates. The split adds up all ranks.</figcaption></figure>"
        )
    causes_svg = _svg_causes(report)
    if causes_svg:
        pictures += (
            f'<figure style="margin-top:12px">{causes_svg}<figcaption>What each cause costs, in seconds of the '
            "busiest rank's I/O time (the bar's track).</figcaption></figure>"
        )
    pictures += (
        f'<figure style="margin-top:12px">{_svg_counts(report)}<figcaption>Findings by severity.</figcaption></figure>'
    )
    badges = []
    for sev, n in wording.severity_counts(report):
        word = wording.SEVERITY_LABEL[sev].lower() if sev is not Severity.OK else "ok"
        if sev is Severity.WARNING and n != 1:
            word = "warnings"
        if n:
            badges.append(
                f'<a class="badge {SEV_CLASS[sev]}" href="#{_anchor(prefix, sev.value)}">{e(n)} {e(word)}</a>'
            )
        else:
            badges.append(f'<span class="badge {SEV_CLASS[sev]} none">{e(n)} {e(word)}</span>')
    return (
        f"<{h}>I/O diagnosis of job {e(report.job.jobid)}</{h}>"
        f'<p class="verdict {SEV_CLASS[v.level]}"><strong>{e(MARK[v.level])} {rich(v.headline, report)}</strong>'
        f"{rich(v.detail, report)}</p>"
        f"{_causes_list(report)}"
        f'<div class="overview"><dl class="facts">{facts}</dl><div>{pictures}</div></div>'
        f'<nav class="counts" aria-label="Findings by severity">{"".join(badges)}</nav>'
    )


def _files_table(f: Finding) -> str:
    if not f.files:
        return ""
    names: list[str] = []
    units: dict[str, object] = {}
    for fe in f.files:
        for m in fe.metrics:
            if m.name not in units:
                names.append(m.name)
                units[m.name] = m.unit
    head = "<th>File</th>" + "".join(f'<th class="num">{e(wording.metric_label(n))}</th>' for n in names)
    rows = []
    for fe in f.files:
        values = {m.name: wording.format_value(m.value, m.unit, m.name) for m in fe.metrics}
        cells = "".join(f'<td class="num">{e(values.get(n, ""))}</td>' for n in names)
        rows.append(f'<tr><td class="path">{e(fe.path)}</td>{cells}</tr>')
    more = wording.more_files(f)
    more_html = f'<p class="more">… and {e(f"{more:,}")} more</p>' if more else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{more_html}"


def _finding(f: Finding, anchor: str, prefix: str, report: Report) -> str:
    cls = SEV_CLASS[f.severity]
    parts = [
        f'<article class="finding {cls}" id="{anchor}">',
        f'<h3><span class="code">{e(f.code)}</span>{e(f.title)}<span class="layer">{e(f.layer.value)}</span></h3>',
    ]
    cost = wording.cost_text(f)
    if cost is not None:
        note = wording.detected_note(f)
        basis = f.impact.basis if f.impact is not None else ""
        parts.append(
            f'<p class="cost" title="{e(basis)}"><strong>{e(cost)}</strong>'
            + (f' <span class="muted">({e(note)})</span>' if note else "")
            + "</p>"
        )
    parts.append(f'<p class="wrap">{rich(f.message, report)}</p>')
    if f.evidence:
        items = "".join(
            f"<div><dt>{e(label)}</dt><dd>{e(value)}</dd></div>"
            for label, value in map(wording.format_metric, f.evidence)
        )
        parts.append(f'<dl class="evidence">{items}</dl>')
    parts.append(_files_table(f))
    if f.ranks:
        parts.append(f"<p><strong>Ranks:</strong> {e(wording.ranks_text(f.ranks))}</p>")
    if f.source_lines:
        items = "".join(
            f'<li><span class="path">{e(wording.source_line_text(s))}</span><br>'
            f'<span class="chain">{e(wording.call_chain_text(s))}</span></li>'
            for s in f.source_lines
        )
        parts.append(f'<p><strong>Source lines:</strong></p><ul class="source-lines">{items}</ul>')
    if f.actions:
        # This job's concrete settings, as the web UI's card shows them: the command as code, then what it does.
        items = "".join(
            f'<li>{cmd(a.command)}<br><span class="wrap">{e(wording.action_note(a))}</span></li>' for a in f.actions
        )
        parts.append(f'<p><strong>For this job:</strong></p><ul class="actions">{items}</ul>')
    if f.recommendations:
        links = ", ".join(
            f'<a href="#{_anchor(prefix, "rec", r)}">{e(wording.recommendation_title(r))}</a>'
            for r in f.recommendations
        )
        parts.append(f"<p><strong>Try:</strong> {links}</p>")
    parts.append("</article>")
    return "".join(parts)


def _recommendations(report: Report, prefix: str, level: int) -> str:
    recs = wording.all_recommendations(report)
    if not recs:
        return ""
    items = "".join(
        f'<li id="{_anchor(prefix, "rec", rec_id)}"><strong>{e(wording.recommendation_title(rec_id))}</strong> '
        f'<span class="for">(for {e(", ".join(codes))})</span><br>{e(wording.recommendation_summary(rec_id))}</li>'
        for rec_id, codes in recs
    )
    return f'<h{level}>What to try</h{level}><ol class="recs">{items}</ol>'


def _details(report: Report) -> str:
    j = report.job
    mods = "".join(
        f'<tr><td>{e(m.name)}</td><td class="num">{e(m.version)}</td><td class="num">{e(f"{m.records:,}")}</td>'
        f"<td>{e('yes' if m.loaded else 'no')}</td>"
        f'<td class="wrap">{e(m.read_error or ("partial" if m.partial else ""))}</td></tr>'
        for m in j.modules
    )
    changed = {name for name, _, _ in wording.changed_thresholds(report)}
    thr = "".join(
        f'<tr><td><code>{e(name)}</code></td><td class="num">{e(value)}</td>'
        f"<td>{e('changed' if name in changed else '')}</td></tr>"
        for name, value in report.thresholds.items()
    )
    return (
        "<details><summary>Job details, Darshan modules and thresholds</summary>"
        f"<p>User id {e(j.uid)}; started {e(wording.fmt_time(j.start))}, ended {e(wording.fmt_time(j.end))}.</p>"
        '<table><thead><tr><th>Module</th><th class="num">Version</th><th class="num">Records</th>'
        f"<th>Read</th><th>Note</th></tr></thead><tbody>{mods}</tbody></table>"
        '<table><thead><tr><th>Threshold</th><th class="num">Value</th><th></th></tr></thead>'
        f"<tbody>{thr}</tbody></table></details>"
    )


def _crosslayer(report: Report, h2: str) -> str:
    summary, tables, more = wording.crosslayer_tables(report)
    if not tables:
        return ""
    head = "".join(
        (f"<th>{e(h)}</th>" if h in ("Layer", "Collective") else f'<th class="num">{e(h)}</th>')
        for h in wording.CROSSLAYER_HEADERS
    )
    out = [f"<section><{h2}>Cross-layer: what each call became below it</{h2}><p>{e(summary)}</p>"]
    for t in tables:
        rows = "".join(
            "<tr>"
            + "".join(
                (f"<td>{e(cell)}</td>" if i in (0, 8) else f'<td class="num">{e(cell)}</td>')
                for i, cell in enumerate(row)
            )
            + "</tr>"
            for row in t.rows
        )
        out.append(
            f'<p class="wrap"><code>{e(t.path)}</code></p><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )
    if more:
        out.append(f'<p class="muted">… and {e(f"{more:,}")} more file(s).</p>')
    out.append("</section>")
    return "".join(out)


def _plots(plots: PlotData, prefix: str, level: int) -> str:
    """The "Plots" section: one figure per picture the plot data allows (none: a line saying why)."""
    h, h3 = f"h{level}", f"h{level + 1}"
    figs = figures(plots)
    head = f'<section id="{_anchor(prefix, "plots")}"><{h}>Plots</{h}>'
    if not figs:
        return (
            f'{head}<p class="muted">Nothing to plot: no DXT trace was read, and the log has no HEATMAP module and '
            "no Lustre layout.</p></section>"
        )
    body = "".join(
        f'<figure class="plot"><{h3}>{e(f.title)}</{h3}>{f.svg}<figcaption>{e(f.caption)}</figcaption></figure>'
        for f in figs
    )
    return f"{head}{body}</section>"


def _body(report: Report, prefix: str = "", level: int = 1, plots: PlotData | None = None) -> str:
    h2 = f"h{level + 1}"
    parts = [_header(report, prefix, level)]
    if report.problems:
        items = "".join(f'<li class="wrap">{e(p)}</li>' for p in report.problems)
        parts.append(f'<{h2}>Problems reading the log</{h2}><div class="problems"><ul>{items}</ul></div>')
    if not report.findings:
        parts.append('<p class="muted">No findings.</p>')
    for sev, findings in wording.grouped(report):
        n = len(findings)
        parts.append(
            f'<section id="{_anchor(prefix, sev.value)}"><{h2}><span class="mk {SEV_CLASS[sev]}">{e(MARK[sev])}</span> '
            f"{e(wording.SEVERITY_LABEL[sev])}: {e(n)} finding{'s' if n != 1 else ''} "
            f"<small>{e(wording.SEVERITY_BLURB[sev])}</small></{h2}>"
        )
        for i, f in enumerate(findings):
            parts.append(_finding(f, _anchor(prefix, f.code, i), prefix, report))
        parts.append("</section>")
    if plots is not None:
        parts.append(_plots(plots, prefix, level + 1))
    parts.append(_recommendations(report, prefix, level + 1))
    parts.append(_crosslayer(report, h2))
    parts.append(_details(report))
    changed = wording.changed_thresholds(report)
    thresholds = (
        "Thresholds changed from the defaults: "
        + ", ".join(f"{name} = {value} (default {default})" for name, value, default in changed)
        + "."
        if changed
        else "Default thresholds."
    )
    parts.append(
        f"<footer>{e(thresholds)} Report by iodiag {e(report.tool_version)} "
        f"(schema {e(report.schema_version)}).</footer>"
    )
    return "".join(parts)


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light dark">\n'
        f"<title>{e(title)}</title>\n<style>{CSS}{PLOT_CSS}</style>\n</head>\n"
        f"<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def render_html(report: Report, plots: PlotData | None = None) -> str:
    """The report as one page; with ``plots`` (``iodiag.analysis.plots.data.plot_data``) a "Plots" section too."""
    return _page(f"iodiag: I/O diagnosis of job {report.job.jobid}", _body(report, plots=plots))


def render_html_many(
    reports: Sequence[Report],
    names: Sequence[str] | None = None,
    plots: Sequence[PlotData | None] | None = None,
) -> str:
    """Several reports in one page: a summary table linking to each report (``plots[i]`` goes with ``reports[i]``)."""
    rows = []
    for i, r in enumerate(reports):
        row = wording.summary_row(r, names[i] if names else None)
        rows.append(
            f'<tr><td class="path"><a href="#{_anchor("r", i)}">{e(row.log)}</a></td><td>{e(row.jobid)}</td>'
            f'<td class="path">{e(row.exe)}</td><td class="num">{e(row.ranks)}</td>'
            f'<td class="num"><span class="mk {SEV_CLASS[row.level]}">{e(row.io_share)}</span></td>'
            f'<td class="num">{e(row.critical)}</td><td class="num">{e(row.warning)}</td>'
            f'<td class="wrap">{e(row.top)}</td></tr>'
        )
    numeric = wording.SUMMARY_NUMERIC
    head = "".join(
        (f'<th class="num">{e(h)}</th>' if h in numeric else f"<th>{e(h)}</th>") for h in wording.SUMMARY_HEADERS
    )
    body = [
        f"<h1>I/O diagnosis of {e(len(reports))} logs</h1>",
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>",
    ]
    for i, r in enumerate(reports):
        p = plots[i] if plots is not None else None
        body.append(
            f'<section class="report" id="{_anchor("r", i)}">{_body(r, prefix=f"r{i}", level=2, plots=p)}</section>'
        )
    return _page(f"iodiag: I/O diagnosis of {len(reports)} logs", "".join(body))
