"""The gate between a model's stream and the user: sentences pass one at a time, each only once verified.

A model's draft arrives token by token. Showing tokens as they come means showing inventions and then taking
them back; waiting for the whole draft means seconds of nothing. The gate holds the sentence being written,
checks it against the facts the moment it is complete, and lets it through only if it passes. A failing
sentence is never shown; its violations are kept for the answer's verifier report.
"""

from __future__ import annotations

import re

from iodiag.narration.checking.grounding import Grounding
from iodiag.narration.checking.verifier import check_sentence, split_sentences
from iodiag.narration.models import Violation

MIN_WORDS = 3
_WORD = re.compile(r"[A-Za-z]{2,}")


class SentenceGate:
    def __init__(self, g: Grounding, max_lines: int | None = None) -> None:
        self._g = g
        self.max_lines = max_lines
        self._buf = ""  # the line being written, not yet ended by a newline
        self._judged = 0  # sentences of that line already let through or dropped
        self._kept: list[str] = []  # its sentences let through
        self._prefix = ""
        self._lines: list[str] = []  # lines let through ("" for a paragraph break)
        self._seen: set[str] = set()  # small models loop: a sentence said before is said once
        self._break = False
        self.dropped: list[Violation] = []

    @property
    def full(self) -> bool:
        """The answer has all the lines it may have (a help-desk summary is short)."""
        return self.max_lines is not None and sum(1 for ln in self._lines if ln) >= self.max_lines

    def feed(self, piece: str) -> list[str]:
        """The text to show for this piece of the stream (possibly nothing yet)."""
        out: list[str] = []
        self._buf += piece
        while "\n" in self._buf and not self.full:
            line, self._buf = self._buf.split("\n", 1)
            out += self._judge(line, ended=True)
        if not self.full:
            out += self._judge(self._buf, ended=False)
        return out

    def finish(self) -> list[str]:
        """The end of the stream: the last sentence is complete whatever follows it."""
        if self.full or not self._buf.strip():
            return []
        line, self._buf = self._buf, ""
        return self._judge(line, ended=True)

    def text(self) -> str:
        lines = [*self._lines]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines).strip()

    def _judge(self, raw: str, ended: bool) -> list[str]:
        if not raw.strip():
            if ended:
                self._break = bool(self._lines)
            return []
        prefix, sentences = split_sentences(raw)[0]
        complete = sentences if ended else sentences[:-1]
        out: list[str] = []
        for sentence in complete[self._judged :]:
            self._judged += 1
            key = " ".join(sentence.split()).lower()
            if key in self._seen:
                continue
            check = check_sentence(sentence, self._g, len(self._lines))
            if not check.ok:
                self.dropped += check.violations
                continue
            if not check.checked and len(_WORD.findall(sentence)) < MIN_WORDS:
                continue  # a fragment ("1.", "Slow OST") says nothing: not worth showing

            self._seen.add(key)
            if not self._kept:
                self._prefix = prefix
                lead = "\n" if self._break else ""
                if self._break:
                    self._lines.append("")
                    self._break = False
                out.append(lead + prefix + sentence)
            else:
                out.append(" " + sentence)
            self._kept.append(sentence)
        if ended:
            if self._kept:
                out.append("\n")
                self._lines.append(self._prefix + " ".join(self._kept))
            self._kept, self._judged, self._prefix = [], 0, ""
        return out
