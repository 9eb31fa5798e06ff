"""Inline code in report text: where a command sits inside the verdict's prose, for each format to show as code.

The verdict writes a command into its sentences between backticks ("Stripe shared files over more OSTs:
`lfs setstripe -c 8 -S 4M /lus/scratch/run`."), and a few settings likewise (`export DARSHAN_MODMEM=64`).
The renderers show those spans as code (``<code>`` in HTML, a code span in Markdown) and everything else
as escaped prose. Two things make a plain CommonMark reading of the backticks wrong, and are handled here:

* A command holds a log path, and a path can hold backticks (``'/lus/a `b`'`` is a correctly quoted shell
  word): the single backticks around it would close early. The report's own commands are known, so an
  occurrence of one between backticks is taken whole, whatever it contains.
* Prose around the spans names files from the log, and a file name can hold a backtick: it must not open
  or close a span. The report's log strings (paths, the command line) are known too, and taken as prose.

What is left is read by CommonMark's rule: a run of N backticks opens a span that the next run of exactly
N backticks closes; an unmatched run is literal text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from iodiag.analysis.models import Report

__all__ = ["Segment", "log_strings", "report_commands", "split_code", "split_report_text"]

Segment = tuple[bool, str]
"""(is code, text): a piece of prose, or the exact content of a code span."""

_RUN = re.compile(r"`+")


def report_commands(report: Report) -> list[str]:
    """Every concrete command the report carries: findings' actions, the causes', the layouts'."""
    out = [a.command for f in report.findings for a in f.actions]
    out += [c.command for c in report.verdict.causes]
    out += [lay.command for lay in report.lustre_layouts if lay.command]
    return [c for c in dict.fromkeys(out) if c]


def log_strings(report: Report) -> list[str]:
    """Text from the log that the verdict's prose may quote: file paths and the command line."""
    out = [fe.path for f in report.findings for fe in f.files]
    out += [fu.path for fu in report.top_files]
    out += [lay.path for lay in report.lustre_layouts]
    if report.cross_layer is not None:
        out += [x.path for x in report.cross_layer.files]
    out += [report.job.exe, report.log_path]
    # Only those with a backtick can be misread as code; the rest are prose whatever happens.
    return [s for s in dict.fromkeys(out) if "`" in s]


def split_report_text(text: str, report: Report) -> list[Segment]:
    """``split_code`` with the report's commands and log strings."""
    if "`" not in text:
        return [(False, text)] if text else []
    return split_code(text, report_commands(report), log_strings(report))


def split_code(text: str, commands: Iterable[str] = (), prose: Iterable[str] = ()) -> list[Segment]:
    """``text`` as prose and code segments, in order (adjacent prose merged).

    ``commands``: known code; an occurrence of one between single backticks is one code segment.
    ``prose``: known untrusted text; an occurrence of one is prose, its backticks literal.
    """
    marks: list[tuple[int, int, Segment]] = []

    def claim(needle: str, seg: Segment) -> None:
        start = 0
        while (i := text.find(needle, start)) >= 0:
            end = i + len(needle)
            if all(end <= s or i >= e for s, e, _ in marks):
                marks.append((i, end, seg))
            start = i + 1

    # Commands first (a command quotes a path, not the other way round), longest first so a command that
    # extends another is taken whole.
    for c in sorted({c for c in commands if c}, key=len, reverse=True):
        claim(f"`{c}`", (True, c))
    for p in sorted({p for p in prose if p}, key=len, reverse=True):
        claim(p, (False, p))
    marks.sort()
    out: list[Segment] = []
    pos = 0
    for start, end, seg in marks:
        out += _commonmark(text[pos:start])
        out.append(seg)
        pos = end
    out += _commonmark(text[pos:])
    merged: list[Segment] = []
    for is_code, s in out:
        if merged and not is_code and not merged[-1][0]:
            merged[-1] = (False, merged[-1][1] + s)
        elif s or is_code:
            merged.append((is_code, s))
    return merged


def _commonmark(text: str) -> list[Segment]:
    """Code spans by CommonMark's rule (a run of N backticks up to the next run of exactly N)."""
    out: list[Segment] = []
    pos = 0  # start of the prose not yet emitted
    i = 0
    while (m := _RUN.search(text, i)) is not None:
        n = len(m.group())
        close = next((c for c in _RUN.finditer(text, m.end()) if len(c.group()) == n), None)
        if close is None:
            i = m.end()  # no closer: the run is literal prose
            continue
        content = text[m.end() : close.start()].replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
        if len(content) >= 2 and content[0] == " " and content[-1] == " " and content.strip(" "):
            content = content[1:-1]
        if m.start() > pos:
            out.append((False, text[pos : m.start()]))
        out.append((True, content))
        pos = i = close.end()
    if pos < len(text):
        out.append((False, text[pos:]))
    return out
