"""Markdown report, for pasting into a help-desk ticket or an issue.

Log strings (paths, command lines, hints) go into code spans; prose is backslash-escaped, so
nothing from a log can turn into a link, an HTML tag or a broken table. Commands are code spans too, with
a fence longer than any run of backticks in them (CommonMark), so a command shows, and is copied, exactly
as it must be typed: the verdict's code spans (``render.code``) keep their backticks instead of having
them escaped with the prose around them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from iodiag.analysis.models import Finding, Report
from iodiag.render import wording
from iodiag.render.code import split_report_text

_SPECIAL = re.compile(r"([\\`*\[\]<|~&])")
_BLOCK_START = re.compile(r"^(\s*)(>|[#+=-]+(?=\s|$)|\d+[.)](?=\s|$))")
_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def md_text(text: object) -> str:
    """Inline prose: one line, Markdown punctuation escaped (intra-word underscores left readable)."""
    return _escape(wording.one_line(text))


def _escape(s: str) -> str:
    return _UNDERSCORE.sub(r"\\_", _SPECIAL.sub(r"\\\1", s))


def md_para(text: object) -> str:
    """Prose that starts a line: also keep it from being read as a heading, quote or list item."""
    return _unblock(md_text(text))


def _unblock(s: str) -> str:
    m = _BLOCK_START.match(s)
    if m:
        at = m.end() - 1 if m.group(2)[0].isdigit() else m.start(2)
        s = s[:at] + "\\" + s[at:]
    return s


def md_code(text: object, *, in_table: bool = False) -> str:
    """An inline code span that holds any text literally."""
    s = wording.one_line(text)
    if in_table:
        s = s.replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    if s.startswith("`") or s.endswith("`") or not s.strip():
        s = f" {s} "
    return f"{fence}{s}{fence}"


_BACKTICKS = re.compile(r"`+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
MULTI_LINE = "(the command below: a path in it holds a line break)"


def _fence(text: str, least: int) -> str:
    return "`" * max(least, max((len(m) for m in _BACKTICKS.findall(text)), default=0) + 1)


def md_command(command: str) -> str | None:
    """A command as one inline code span that reads back exactly ``command`` (CommonMark: a fence longer
    than any backtick run inside, and a space inside each fence where the command starts or ends with a
    backtick or with spaces on both ends, which the reader strips). None when it holds a line break (a quoted
    path can): an inline span turns that into a space, so it goes in a block (``md_command_block``)."""
    if _LINE_BREAK.search(command):
        return None
    fence = _fence(command, 1)
    if command[:1] == "`" or command[-1:] == "`" or (command[:1] == command[-1:] == " " and command.strip(" ")):
        command = f" {command} "
    return f"{fence}{command}{fence}"


def md_command_block(command: str, indent: str = "") -> list[str]:
    """A command as a fenced code block (each line indented by ``indent``, to sit in a list item or a quote),
    for one that holds a line break: a block keeps its lines as they are."""
    fence = _fence(command, 3)
    return [f"{indent}{fence}sh", *(f"{indent}{line}" for line in _LINE_BREAK.split(command)), f"{indent}{fence}"]


def md_rich(text: str, report: Report, *, para: bool = False) -> tuple[str, list[str]]:
    """Report prose with its code spans (the verdict's commands and settings) as Markdown code, the rest
    escaped like ``md_text``; with ``para`` also kept from starting a block, like ``md_para``. Returns the line
    and the commands that must follow it as blocks (``md_command_block``)."""
    parts: list[str] = []
    blocks: list[str] = []
    segments = split_report_text(text, report)
    for is_code, t in segments:
        if not is_code:
            parts.append(_escape(re.sub(r"\s+", " ", t)))
        elif (span := md_command(t)) is not None:
            parts.append(span)
        else:
            parts.append(md_text(MULTI_LINE))
            blocks.append(t)
    line = "".join(parts).strip()
    if para and segments and not segments[0][0]:
        line = _unblock(line)
    return line, blocks


def _blocks(commands: list[str], indent: str = "") -> list[str]:
    out: list[str] = []
    for c in commands:
        out += [*md_command_block(c, indent), indent.rstrip()]
    return out


def _header(report: Report) -> list[str]:
    v = wording.verdict(report)
    headline, blocks = md_rich(v.headline, report)
    detail, more = md_rich(v.detail, report)
    lines = [
        f"# I/O diagnosis of job {report.job.jobid}",
        "",
        f"**{headline}**" + (f": {detail}" if detail else ""),
        "",
        *_blocks(blocks + more),
    ]
    causes = wording.cause_lines(report)
    if causes:
        lines += ["Causes, by the run time they cost:", ""]
        lines += [f"{i}\\. {md_text(line.split('. ', 1)[1])}" for i, line in enumerate(causes, 1)]
        lines.append("")
    if report.verdict.where_time_went:
        went, blocks = md_rich(report.verdict.where_time_went, report, para=True)
        lines += [went, "", *_blocks(blocks)]
    for cav in report.verdict.caveats:
        text, blocks = md_rich(cav, report)
        lines += [f"> Caveat: {text}", *(_blocks(blocks, "> ")[:-1]), ""]
    lines += [f"**{md_text(wording.counts_line(report))}**", ""]
    for row in wording.header_rows(report):
        value = md_code(row.value) if row.path_like else md_text(row.value)
        lines.append(f"- **{md_text(row.label)}:** {value}")
    lines.append("")
    return lines


def _evidence(f: Finding) -> str:
    return " · ".join(
        f"{md_text(label)} **{md_text(value)}**" for label, value in map(wording.format_metric, f.evidence)
    )


def _finding(f: Finding, report: Report) -> list[str]:
    message, blocks = md_rich(f.message, report, para=True)
    lines = [
        f"### {md_text(f.code)} · {md_text(f.title)}",
        "",
        f"*{f.severity.value} · {md_text(f.layer.value)}*"
        + (f" · **{md_text(cost)}**" if (cost := wording.cost_text(f)) else "")
        + (f" · {md_text(note)}" if (note := wording.detected_note(f)) else ""),
        "",
        message,
        "",
        *_blocks(blocks),
    ]
    items: list[str] = []
    if f.evidence:
        items.append(f"- **Evidence:** {_evidence(f)}")
    if f.files:
        more = wording.more_files(f)
        title = f"- **Files** ({len(f.files)} of {f.files_total:,}):" if more else "- **Files:**"
        items.append(title)
        for fe in f.files:
            metrics = " · ".join(
                f"{md_text(label)} {md_text(value)}" for label, value in map(wording.format_metric, fe.metrics)
            )
            items.append(f"  - {md_code(fe.path)}" + (f" — {metrics}" if metrics else ""))
        if more:
            items.append(f"  - … and {more:,} more")
    if f.ranks:
        items.append(f"- **Ranks:** {md_text(wording.ranks_text(f.ranks))}")
    if f.source_lines:
        items.append("- **Source lines:**")
        for s in f.source_lines:
            items.append(f"  - {md_text(wording.source_line_text(s))}")
            items.append(f"    - call chain: {md_text(wording.call_chain_text(s))}")
    if f.actions:
        # This job's concrete settings, as the web UI's card shows them: the command as code, then what it does.
        items.append("- **For this job:**")
        for a in f.actions:
            note = md_text(wording.action_note(a))
            span = md_command(a.command)
            if span is not None:
                items.append(f"  - {span} — {note}")
            else:
                items += [f"  - {note} Command:", *md_command_block(a.command, "    ")]
    if f.recommendations:
        items.append("- **Try:** " + "; ".join(md_text(wording.recommendation_title(r)) for r in f.recommendations))
    if items:
        lines += [*items, ""]
    return lines


def _body(report: Report, level: int = 1) -> list[str]:
    lines = _header(report)
    if report.problems:
        lines += ["## Problems reading the log", ""]
        lines += [f"- {md_text(p)}" for p in report.problems]
        lines.append("")
    if not report.findings:
        lines += ["No findings.", ""]
    for sev, findings in wording.grouped(report):
        n = len(findings)
        lines += [
            f"## {wording.SEVERITY_LABEL[sev]}: {n} finding{'s' if n != 1 else ''} ({wording.SEVERITY_BLURB[sev]})",
            "",
        ]
        for f in findings:
            lines += _finding(f, report)
    recs = wording.all_recommendations(report)
    if recs:
        lines += ["## What to try", ""]
        for i, (rec_id, codes) in enumerate(recs, 1):
            lines.append(
                f"{i}. **{md_text(wording.recommendation_title(rec_id))}** (for {md_text(', '.join(codes))}): "
                f"{md_text(wording.recommendation_summary(rec_id))}"
            )
        lines.append("")
    summary, tables, more = wording.crosslayer_tables(report)
    if tables:
        lines += ["## Cross-layer: what each call became below it", "", md_para(summary), ""]
        for t in tables:
            lines += [f"**{md_code(t.path)}**", ""]
            lines.append("| " + " | ".join(wording.CROSSLAYER_HEADERS) + " |")
            lines.append(
                "|"
                + "|".join("---" if h in ("Layer", "Collective") else "---:" for h in wording.CROSSLAYER_HEADERS)
                + "|"
            )
            lines += ["| " + " | ".join(md_text(cell) for cell in row) + " |" for row in t.rows]
            lines.append("")
        if more:
            lines += [f"… and {more:,} more file(s).", ""]
    lines += [_footer(report), ""]
    if level > 1:  # nested under a several-logs document: push every heading down
        prefix = "#" * (level - 1)
        lines = [prefix + ln if ln.startswith("#") else ln for ln in lines]
    return lines


def _footer(report: Report) -> str:
    changed = wording.changed_thresholds(report)
    if changed:
        what = ", ".join(f"{md_text(n)} = {md_text(v)} (default {md_text(d)})" for n, v, d in changed)
        thresholds = f"Thresholds changed from the defaults: {what}."
    else:
        thresholds = "Default thresholds."
    return f"*{thresholds} Report by iodiag {md_text(report.tool_version)} (schema {md_text(report.schema_version)}).*"


def render_markdown(report: Report) -> str:
    return "\n".join(_body(report)).rstrip("\n") + "\n"


def summary_table(rows: Sequence[wording.SummaryRow]) -> list[str]:
    lines = [
        "| " + " | ".join(wording.SUMMARY_HEADERS) + " |",
        "|" + "|".join("---:" if h in wording.SUMMARY_NUMERIC else "---" for h in wording.SUMMARY_HEADERS) + "|",
    ]
    for r in rows:
        cells = [
            md_code(r.log, in_table=True),
            md_text(r.jobid),
            md_code(r.exe, in_table=True) if r.exe else "",
            md_text(r.ranks),
            md_text(r.io_share),
            str(r.critical),
            str(r.warning),
            md_text(r.top),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render_markdown_many(reports: Sequence[Report], names: Sequence[str] | None = None) -> str:
    """Several reports in one document: a summary table, then each report."""
    rows = [wording.summary_row(r, names[i] if names else None) for i, r in enumerate(reports)]
    lines = [f"# I/O diagnosis of {len(reports)} logs", "", *summary_table(rows), ""]
    for r in reports:
        lines += ["---", "", *_body(r, level=2)]
    return "\n".join(lines).rstrip("\n") + "\n"


__all__ = [
    "md_code",
    "md_command",
    "md_command_block",
    "md_para",
    "md_rich",
    "md_text",
    "render_markdown",
    "render_markdown_many",
]
