"""Text that comes from the log (file paths, the command line, MPI-IO hints) is data, never instructions.

Anyone who can name a file can put words in a log. Before such text reaches a prompt or an answer it is
cleaned (control and formatting characters removed, whitespace collapsed, backticks replaced so it cannot
close its own quotes), shortened, and wrapped in backticks; the system prompt tells the model that
backticked text is data. The verifier (``verifier.py``) never lets quoted text support a claim.

A command is the exception to cleaning (``quote_command``): it is there to be pasted, and a path in it is
already quoted for the shell (``analysis.shell``), so it is shown whole and exact, in a code span whose fence
is longer than any run of backticks inside it.
"""

from __future__ import annotations

import re
import unicodedata

MAX_LOG_TEXT = 120
ELLIPSIS = "…"
UNSHOWN_COMMAND = (
    "not exact here: a path in it is very long or holds a line break or control character; copy it from the report"
)

# A code span as CommonMark reads it on one line: a run of N backticks, then text, then the next run of
# exactly N (so a command quoted with a longer fence is one span, backticks inside and all).
_QUOTED = re.compile(r"(?<!`)(`+)(?!`)([^\n]*?)(?<!`)\1(?!`)")
_UNSHOWABLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def clean(text: object, limit: int = MAX_LOG_TEXT) -> str:
    """One line of printable text, at most ``limit`` characters.

    Over-long text keeps its head and its tail: for a path the file name at the end is what tells files
    apart, and the start tells where it lives.
    """
    chars = []
    for ch in str(text):
        cat = unicodedata.category(ch)
        if ch in "\t\n\r\v\f":
            chars.append(" ")
        elif cat in ("Cc", "Cf", "Cs", "Co", "Cn"):  # control, bidi overrides, zero-width, unassigned
            continue
        elif ch == "`":
            chars.append("'")
        else:
            chars.append(ch)
    s = " ".join("".join(chars).split())
    if len(s) <= limit:
        return s
    head = limit // 3
    tail = limit - head - len(ELLIPSIS)
    return s[:head] + ELLIPSIS + s[-tail:]


def quote(text: object, limit: int = MAX_LOG_TEXT) -> str:
    """``clean`` text in backticks: how every log string appears in prompts and answers."""
    return f"`{clean(text, limit)}`"


def quote_command(command: str, limit: int = MAX_LOG_TEXT) -> str:
    """A command in a code span, exact, so that it can be pasted: a path in it is shell-quoted already
    (``'it'"'"'s.h5'``), and cleaning would break that quoting (a backtick made a quote) or change the path
    (spaces collapsed, the middle cut out).

    The fence is a run of backticks longer than any inside the command, padded with a space where the
    command starts or ends with a backtick (CommonMark strips one). A command longer than ``limit`` (log
    text stays short in prompts) or holding a character no line can show (a line break, a control or bidi
    character: a path can) is not shown exact: it is ``quote``d (cleaned, shortened) and said to be so, since
    such a command must not be pasted.
    """
    if len(command) > limit or any(unicodedata.category(ch) in _UNSHOWABLE for ch in command):
        return f"{quote(command, limit)} ({UNSHOWN_COMMAND})"
    fence = "`" * (max((len(m) for m in re.findall(r"`+", command)), default=0) + 1)
    if command[:1] == "`" or command[-1:] == "`" or (command[:1] == command[-1:] == " " and command.strip(" ")):
        command = f" {command} "
    return f"{fence}{command}{fence}"


def strip_quoted(text: str) -> str:
    """The text with every backticked span removed: what is left is ours (or the model's) to check."""
    return _QUOTED.sub(" ", text)


def quoted_spans(text: str) -> list[str]:
    """The contents of every backticked span, in order (without the space that pads a fenced one)."""
    out = []
    for m in _QUOTED.finditer(text):
        body = m.group(2)
        if body[:1] == body[-1:] == " " and body.strip(" "):
            body = body[1:-1]
        out.append(body)
    return out
