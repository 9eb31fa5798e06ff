"""The system report as one self-contained HTML page: inline CSS and SVG, no script, no external file.

Every string that can come from a log or the store (application, user, titles) goes through
``_e``: a log's command line is chosen by whoever ran the job, and this page is opened by staff.
"""

from __future__ import annotations

from collections.abc import Iterable

from iodiag.batch.system_report import CodeStats, DayTotal, SystemReport
from iodiag.core.markup import e

_SEV_COLOR = {"critical": "#c62828", "warning": "#ef6c00", "info": "#1565c0", "ok": "#2e7d32"}
_BAR_CODES = 15
_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d232a;max-width:1400px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px} .meta{color:#5b6570;margin-bottom:16px}
.cards{display:flex;flex-wrap:wrap;gap:12px} .card{border:1px solid #d8dee4;border-radius:6px;padding:10px 14px;
min-width:140px} .card b{display:block;font-size:20px} table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #e4e8ec;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f5f7f9;position:sticky;top:0} td.n{text-align:right;white-space:nowrap}
.sev{display:inline-block;padding:1px 6px;border-radius:3px;color:#fff;font-size:11px;text-transform:uppercase}
.small{color:#5b6570;font-size:12px} svg text{font:11px system-ui,sans-serif}
ul.top{margin:0;padding-left:16px;white-space:nowrap}
"""


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} PiB"


def fmt_seconds(s: float) -> str:
    if s >= 3600:
        return f"{s / 3600:,.1f} h"
    if s >= 60:
        return f"{s / 60:,.1f} min"
    return f"{s:,.1f} s"


def fmt_hours(h: float) -> str:
    """Node-hours: small values keep two significant digits rather than rounding to 0.0."""
    if h == 0 or h >= 10:
        return f"{h:,.0f}" if h >= 100 else f"{h:,.1f}"
    return f"{h:.2g}" if h < 1 else f"{h:.1f}"


def fmt_pct(p: float | None) -> str:
    return "–" if p is None else f"{p:.1f} %"


def _card(label: str, value: str) -> str:
    return f'<div class="card"><span class="small">{e(label)}</span><b>{e(value)}</b></div>'


def _days_chart(days: list[DayTotal], width: int = 900, height: int = 160) -> str:
    if not days:
        return '<p class="small">No jobs in this window.</p>'
    top = max(d.jobs for d in days) or 1
    pad_l, pad_b = 40, 22
    w = (width - pad_l) / len(days)
    parts = [
        f'<svg role="img" aria-label="jobs per day" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    parts.append(f'<text x="0" y="12">{top:,}</text><text x="0" y="{height - pad_b}">0</text>')
    for i, d in enumerate(days):
        x = pad_l + i * w
        h_all = (height - pad_b - 4) * d.jobs / top
        h_crit = (height - pad_b - 4) * d.jobs_with_critical / top
        y0 = height - pad_b
        tip = f"{d.day}: {d.jobs:,} jobs, {d.jobs_with_critical:,} with a critical finding, {d.node_hours:,.1f} node-h"
        parts.append(
            f"<g><title>{e(tip)}</title>"
            f'<rect x="{x:.1f}" y="{y0 - h_all:.1f}" width="{max(w - 1, 1):.1f}" height="{h_all:.1f}" '
            f'fill="#90a4ae"/><rect x="{x:.1f}" y="{y0 - h_crit:.1f}" width="{max(w - 1, 1):.1f}" '
            f'height="{h_crit:.1f}" fill="{_SEV_COLOR["critical"]}"/></g>'
        )
    for i in sorted({0, len(days) // 2, len(days) - 1}):
        # The last label ends at the chart's edge instead of running past it.
        anchor, x = ("end", width) if i == len(days) - 1 and i > 0 else ("start", pad_l + i * w)
        label = e(days[i].day.isoformat())
        parts.append(f'<text x="{x:.1f}" y="{height - 6}" text-anchor="{anchor}">{label}</text>')
    parts.append("</svg>")
    legend = (
        f'<p class="small"><span style="color:#90a4ae">■</span> jobs started per day (UTC) '
        f'<span style="color:{_SEV_COLOR["critical"]}">■</span> of which with a critical finding</p>'
    )
    return "".join(parts) + legend


def _stake_chart(codes: list[CodeStats], width: int = 900) -> str:
    shown = [c for c in codes if c.node_hours_lost > 0]
    shown = sorted(shown, key=lambda c: -c.node_hours_lost)[:_BAR_CODES]
    if not shown:
        return '<p class="small">No finding with a cost on jobs with a run time.</p>'
    row_h, label_w = 20, 60
    height = row_h * len(shown) + 4
    top = max(c.node_hours_lost for c in shown)
    parts = [
        f'<svg role="img" aria-label="node-hours lost per finding" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, c in enumerate(shown):
        y = i * row_h + 2
        w = (width - label_w - 160) * c.node_hours_lost / top
        tip = f"{c.code} {c.title}: {c.node_hours_lost:,.2f} node-h lost on {c.jobs:,} jobs"
        parts.append(
            f'<g><title>{e(tip)}</title><text x="0" y="{y + 13}">{e(c.code)}</text>'
            f'<rect x="{label_w}" y="{y}" width="{max(w, 1):.1f}" height="{row_h - 5}" '
            f'fill="{_SEV_COLOR.get(c.severity, "#777")}"/>'
            f'<text x="{label_w + w + 6:.1f}" y="{y + 13}">'
            f"{e(fmt_hours(c.node_hours_lost))} node-h lost</text>"
            "</g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _sparkline(c: CodeStats, width: int = 120, height: int = 28) -> str:
    if len(c.trend) < 2:
        return ""
    shares = [p.jobs / p.all_jobs if p.all_jobs else 0.0 for p in c.trend]
    top = max(shares) or 1.0
    step = width / (len(shares) - 1)
    pts = " ".join(f"{i * step:.1f},{height - 2 - (height - 4) * s / top:.1f}" for i, s in enumerate(shares))
    tip = "; ".join(f"{p.day}: {p.jobs}/{p.all_jobs}" for p in c.trend[-14:])
    return (
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{e(tip)}</title>'
        f'<polyline fill="none" stroke="{_SEV_COLOR.get(c.severity, "#777")}" stroke-width="1.5" '
        f'points="{pts}"/></svg>'
    )


def _top_list(entries: Iterable[object]) -> str:
    items = [
        f"<li>{e(getattr(t, 'name', ''))} <span class='small'>· {getattr(t, 'jobs', 0):,}</span></li>" for t in entries
    ]
    return f'<ul class="top">{"".join(items)}</ul>' if items else ""


def _code_row(c: CodeStats) -> str:
    color = _SEV_COLOR.get(c.severity, "#777")
    iface = " + ".join(c.requires) if c.requires else "any"
    return (
        "<tr>"
        f"<td><b>{e(c.code)}</b></td>"
        f'<td><span class="sev" style="background:{color}">{e(c.severity)}</span></td>'
        f"<td>{e(c.title)}<div class='small'>{e(c.layer)}</div></td>"
        f'<td class="n">{c.jobs:,}</td>'
        f'<td class="n">{e(fmt_pct(c.pct_all_jobs))}</td>'
        f'<td class="n">{e(fmt_pct(c.pct_interface_jobs))}<div class="small">of {c.interface_jobs:,} '
        f"({e(iface)})</div></td>"
        f'<td class="n">{e(fmt_hours(c.node_hours_lost))}<div class="small">of '
        f"{e(fmt_hours(c.node_hours_at_stake))} at stake</div></td>"
        f'<td class="n">{e(fmt_bytes(c.bytes_at_stake))}</td>'
        f'<td class="n">{e(fmt_seconds(c.io_time_s_at_stake))}</td>'
        f"<td>{_top_list(c.top_apps)}</td>"
        f"<td>{_top_list(c.top_users)}</td>"
        f"<td>{_sparkline(c)}</td>"
        "</tr>"
    )


def _regressions(report: SystemReport) -> str:
    if not report.regressions:
        return '<p class="small">No job in this window has an I/O time far above its application\'s usual.</p>'
    rows = "".join(
        "<tr>"
        f"<td>{e(r.app)}</td><td>{e(r.user)}</td><td>{e(r.jobid)}</td>"
        f"<td>{e(f'{r.start:%Y-%m-%d %H:%M}')}</td>"
        f'<td class="n">{e(fmt_seconds(r.io_time_s))}</td><td class="n">{e(fmt_seconds(r.baseline_s))}</td>'
        f'<td class="n">{e(f"{r.ratio:.1f}×")}</td>'
        f"<td>{e(', '.join(r.new_findings) or 'none')}</td>"
        f'<td class="small">{e(r.explanation)}</td>'
        "</tr>"
        for r in report.regressions
    )
    return (
        "<table><thead><tr><th>application</th><th>user</th><th>job</th><th>started (UTC)</th><th>I/O time</th>"
        "<th>usual</th><th>ratio</th><th>findings that appeared</th><th>why flagged</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def render(report: SystemReport) -> str:
    window = (
        (f"{report.since:%Y-%m-%d %H:%M} UTC" if report.since else "the beginning")
        + " to "
        + (f"{report.until:%Y-%m-%d %H:%M} UTC (exclusive)" if report.until else "now")
    )
    cards = "".join(
        [
            _card("jobs", f"{report.jobs:,}"),
            _card("logs that failed", f"{report.failed_logs:,}"),
            _card("node-hours", fmt_hours(report.node_hours)),
            _card("bytes moved", fmt_bytes(report.bytes)),
            _card("I/O time (slowest ranks)", fmt_seconds(report.io_time_s)),
        ]
    )
    ifaces = ", ".join(f"{e(k)}: {v:,}" for k, v in report.interfaces.items()) or "none"
    rows = "".join(_code_row(c) for c in report.codes)
    notes = "".join(f"<li>{e(n)}</li>" for n in report.notes)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>iodiag system report</title><style>{_CSS}</style></head><body>
<h1>I/O problems across the facility</h1>
<div class="meta">Jobs started from {e(window)} · source: {e(report.source)} ·
generated {e(f"{report.generated_at:%Y-%m-%d %H:%M} UTC")}</div>
<div class="cards">{cards}</div>
<p class="small">Jobs per interface: {ifaces}</p>
<h2>Jobs per day</h2>{_days_chart(report.days)}
<h2>Node-hours lost to each finding (its cost times the job's nodes)</h2>{_stake_chart(report.codes)}
<h2>Findings</h2>
<p class="small">Jobs affected, their share of all jobs and of the jobs using the interface the check is about;
bytes, I/O time and node-hours summed over the affected jobs; trend: share of each day's jobs.</p>
<table><thead><tr><th>code</th><th>severity</th><th>finding</th><th>jobs</th><th>% of jobs</th>
<th>% of interface jobs</th><th>node-h lost</th><th>bytes</th><th>I/O time</th><th>top applications</th>
<th>top users</th><th>trend</th></tr></thead><tbody>{rows}</tbody></table>
<h2>Regressions: jobs far slower at I/O than their application's usual</h2>
<p class="small">Usual: the median I/O time of the same user's earlier runs of the application. Flagged from 3.5
robust standard deviations (1.4826 × the median absolute deviation) and 1.5× the median and 1 s above it.</p>
{_regressions(report)}
{f"<h2>Notes</h2><ul>{notes}</ul>" if notes else ""}
</body></html>
"""
