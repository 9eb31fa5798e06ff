"""What an answer may rest on: the facts and documents it was given, indexed for the verifier.

Known numbers (parsed from the fact and passage texts, plus the raw values behind the facts), files,
ranks, finding codes, document ids, and the text units a sentence can be attributed to.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from iodiag.knowledge.models import Passage
from iodiag.narration.checking.facts import Fact
from iodiag.narration.checking.quantities import Quantity, parse_quantities
from iodiag.narration.checking.untrusted import clean, quoted_spans, strip_quoted

CODE = re.compile(r"\b[DHJLMPSTX]\d{2}\b")
RANKS = re.compile(r"\branks?\s+(\d+(?:\s*(?:,|and|or|to|-|–)\s*\d+)*)", re.IGNORECASE)
_RANK_NUMBER = re.compile(r"\d+")

_STOP = frozenset(
    {
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "than",
        "so",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "without",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "it's",
        "they",
        "them",
        "their",
        "there",
        "here",
        "which",
        "who",
        "whom",
        "what",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "each",
        "every",
        "some",
        "such",
        "more",
        "most",
        "much",
        "many",
        "few",
        "less",
        "least",
        "very",
        "can",
        "could",
        "should",
        "would",
        "may",
        "might",
        "must",
        "will",
        "shall",
        "not",
        "no",
        "nor",
        "only",
        "also",
        "just",
        "too",
        "out",
        "up",
        "down",
        "off",
        "again",
        "further",
        "once",
        "both",
        "other",
        "own",
        "same",
        "you",
        "your",
        "yours",
        "we",
        "our",
        "i",
        "me",
        "my",
        "he",
        "she",
        "his",
        "her",
        "one",
        "per",
        "via",
        "while",
        "because",
        "whose",
        "whether",
        "within",
        "across",
        "between",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "get",
        "got",
        "make",
        "makes",
        "made",
        "use",
        "uses",
        "used",
        "using",
        "like",
        "e.g",
        "cannot",
        "can't",
        "i.e",
        "etc",
    }
)
_WORD = re.compile(r"[a-z][a-z0-9_]*(?:[-'][a-z0-9_]+)*|\d+(?:\.\d+)?")


def _stem(w: str) -> str:
    if w.isdigit() or len(w) <= 3:
        return w
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            return w[: -len(suffix)] + repl
    return w


def content_tokens(text: str) -> list[str]:
    """Lower-cased, stemmed words and numbers, stop words left out."""
    words = _WORD.findall(text.lower().replace("i/o", "io"))
    return [_stem(w) for w in words if w not in _STOP]


@dataclass(frozen=True)
class GroundingUnit:
    """A text a sentence can be attributed to: a fact, a passage, or one of our own phrase-book sentences."""

    source: str  # fact id, "doc:<id>", or "phrase"
    code: str | None  # the finding a fact belongs to
    doc_id: str | None
    tokens: frozenset[str]


_TITLE_CODES = re.compile(r"\s*\((?:[A-Z]\d{2}(?:,\s*)?)+\)\s*$")


@dataclass
class Grounding:
    facts: Sequence[Fact]
    passages: Sequence[Passage]
    report_codes: frozenset[str]  # every finding code the report holds
    problem_codes: frozenset[str] = frozenset()  # the critical and warning ones
    phrases: Sequence[str] = ()  # our own connecting sentences (the template route's)
    echo: Sequence[str] = ()  # the prompt's own words and the question: repeating them answers nothing
    quantities: list[Quantity] = field(default_factory=list)
    files: set[str] = field(default_factory=set)
    quoted: set[str] = field(default_factory=set)
    ranks: set[int] = field(default_factory=set)
    codes: set[str] = field(default_factory=set)
    doc_codes: set[str] = field(default_factory=set)
    absent_codes: set[str] = field(default_factory=set)  # codes the facts say the report does not have
    doc_ids: set[str] = field(default_factory=set)
    units: list[GroundingUnit] = field(default_factory=list)
    idf: dict[str, float] = field(default_factory=dict)
    default_idf: float = 1.0
    texts: list[str] = field(default_factory=list)
    vocabulary: set[str] = field(default_factory=set)  # every word of every unit
    kinds: dict[str, str] = field(default_factory=dict)  # fact id -> fact kind; "doc:<id>" -> "doc"
    echo_tokens: set[str] = field(default_factory=set)
    titles: set[str] = field(default_factory=set)  # the given documents' titles, as a reference names them

    def __post_init__(self) -> None:
        for f in self.facts:
            self.kinds[f.id] = f.kind
            self.texts.append(f.text)
            self.quantities += parse_quantities(strip_quoted(f.text))
            self.quantities += f.values
            self.quoted.update(quoted_spans(f.text))
            self.files.update(f.files)
            self.ranks.update(f.ranks)
            self.ranks.update(ranks_in(f.text))
            named = CODE.findall(strip_quoted(f.text))
            if f.kind == "absent":
                self.absent_codes.update(named)
            else:
                self.codes.update(named)
            if f.code:
                self.codes.add(f.code)
            self.units.append(GroundingUnit(f.id, f.code, None, frozenset(content_tokens(strip_quoted(f.text)))))
        for p in self.passages:
            text = f"{p.title}. {p.heading}. {p.text}"
            self.texts.append(text)
            self.quantities += parse_quantities(strip_quoted(p.text))
            self.quoted.update(quoted_spans(p.text))
            self.doc_codes.update(CODE.findall(p.text))
            self.doc_codes.update(p.codes)
            self.doc_ids.add(p.doc_id)
            self.titles.add(p.title)
            self.titles.add(_TITLE_CODES.sub("", p.title).strip())  # as a reference shows it, without "(P09, P10)"
            self.kinds[f"doc:{p.doc_id}"] = "doc"
            self.units.append(GroundingUnit(f"doc:{p.doc_id}", None, p.doc_id, frozenset(content_tokens(text))))
        for s in self.phrases:
            self.units.append(GroundingUnit("phrase", None, None, frozenset(content_tokens(s))))
        self.quoted = {clean(q) for q in self.quoted}
        df: Counter[str] = Counter()
        for u in self.units:
            df.update(u.tokens)
            self.vocabulary |= u.tokens
        for e in self.echo:
            self.echo_tokens.update(content_tokens(strip_quoted(e)))
        n = max(len(self.units), 1)
        # BM25's idf: a word most units share says little about which unit supports a sentence.
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        self.default_idf = math.log(1 + (n + 0.5) / 0.5)

    # --- membership tests ------------------------------------------------------------------------

    def knows_number(self, q: Quantity) -> bool:
        return any(q.matches(k) for k in self.quantities)

    def knows_file(self, name: str) -> bool:
        """A file named in an answer: a known path, its cleaned (shown) form, a tail of it, or quoted text."""
        name = name.strip().strip("'\"")
        if not name:
            return True
        if name in self.quoted or clean(name) in self.quoted:
            return True
        for path in self.files:
            shown = clean(path)
            if name in (path, shown, PurePosixPath(path).name) or path.endswith(name) or shown.endswith(name):
                return True
        return any(name in t for t in self.texts)

    def knows_text(self, token: str) -> bool:
        return any(token in t for t in self.texts) or any(token in f for f in self.files)


def ranks_in(text: str) -> set[int]:
    out: set[int] = set()
    for m in RANKS.finditer(strip_quoted(text)):
        out.update(int(n) for n in _RANK_NUMBER.findall(m.group(1)))
    return out
