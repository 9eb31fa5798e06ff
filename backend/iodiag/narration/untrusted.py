"""Text that comes from the log (file paths, the command line, MPI-IO hints) is data, never instructions.

Anyone who can name a file can put words in a log. Before such text reaches a prompt or an answer it is
cleaned (control and formatting characters removed, whitespace collapsed, backticks replaced so it cannot
close its own quotes), shortened, and wrapped in backticks; the system prompt tells the model that
backticked text is data. The verifier (``verifier.py``) never lets quoted text support a claim.
"""

from __future__ import annotations

import re
import unicodedata

MAX_LOG_TEXT = 120
ELLIPSIS = "…"

_QUOTED = re.compile(r"`[^`\n]*`")


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


def strip_quoted(text: str) -> str:
    """The text with every backticked span removed: what is left is ours (or the model's) to check."""
    return _QUOTED.sub(" ", text)


def quoted_spans(text: str) -> list[str]:
    """The contents of every backticked span, in order."""
    return [m.group(0)[1:-1] for m in _QUOTED.finditer(text)]
