"""A small Okapi BM25 over chunk tokens: the lexical half of hybrid retrieval.

Exact names matter in this corpus (``romio_cb_write``, ``lfs setstripe``, ``DXT_ENABLE_IO_TRACE``,
finding codes such as P08) and embeddings blur them; BM25 catches them. Deterministic: ties are
broken by chunk order, so the same query always gives the same ranking.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

K1 = 1.5
B = 0.75

_TOKEN = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "my",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "too",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


def _stem(word: str) -> str:
    # Just enough folding that "writes"/"write"/"writing" and "stripes"/"striping" meet; applied to
    # the query and the documents alike, so an odd stem costs nothing.
    w = word
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("ed", "sses", "xes", "ches", "shes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def tokenize(text: str) -> list[str]:
    """Lowercased word tokens, stop words dropped; ``romio_cb_write`` also yields its parts."""
    out: list[str] = []
    for tok in _TOKEN.findall(text.lower()):
        parts = tok.split("_")
        if len(parts) > 1:
            out.append(tok)
        out.extend(_stem(p) for p in parts if p not in _STOP)
    return out


class BM25:
    def __init__(self, docs: Sequence[Iterable[str]], k1: float = K1, b: float = B) -> None:
        self.k1, self.b = k1, b
        self.tf: list[Counter[str]] = [Counter(d) for d in docs]
        self.lengths = [sum(c.values()) for c in self.tf]
        self.n = len(self.tf)
        self.avgdl = (sum(self.lengths) / self.n) if self.n else 0.0
        df: Counter[str] = Counter()
        for c in self.tf:
            df.update(c.keys())
        self.idf = {t: math.log(1.0 + (self.n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.postings: dict[str, list[int]] = {}
        for i, c in enumerate(self.tf):
            for t in c:
                self.postings.setdefault(t, []).append(i)

    def scores(self, query: Sequence[str], allowed: set[int] | None = None) -> dict[int, float]:
        out: dict[int, float] = {}
        for term in dict.fromkeys(query):  # each query term counts once, in order
            idf = self.idf.get(term)
            if idf is None:
                continue
            for i in self.postings[term]:
                if allowed is not None and i not in allowed:
                    continue
                f = self.tf[i][term]
                norm = f + self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avgdl)
                out[i] = out.get(i, 0.0) + idf * f * (self.k1 + 1) / norm
        return out

    def rank(
        self, query: Sequence[str], allowed: set[int] | None = None, n: int | None = None
    ) -> list[tuple[int, float]]:
        """(document index, score), best first, only documents that match a query term."""
        ranked = sorted(self.scores(query, allowed).items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked if n is None else ranked[:n]
