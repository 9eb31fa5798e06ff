"""The classifier's fallback when no trained intent model is stored: the labelled question most like this one.

Since the learned model (``intent/model.py``, trained on the same examples) this is used only when its weights
file is missing; it is kept because it needs nothing but the examples.

The rules in ``intent/classify.py`` are precise where they fire, and silent on phrasings nobody wrote a rule for; a
question they cannot place would fall to "why is my job slow?". Here such a question is compared with the
labelled examples (``prompts/intent-examples.v1.yaml``: questions people asked, with their intent) by
character and word n-grams, which tolerate typos and new wording, and takes the intent of its nearest
examples when they are close enough. Deterministic, pure Python, a few milliseconds: no model to load.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

K = 7  # neighbours that vote, weighted by similarity
MIN_SIMILARITY = 0.2  # below this the nearest example is not like the question at all
_WORD = re.compile(r"[a-z0-9_/']+")


def _features(text: str) -> Counter[str]:
    t = " " + " ".join(text.lower().split()) + " "
    feats: Counter[str] = Counter(t[i : i + 4] for i in range(len(t) - 3))
    words = _WORD.findall(t)
    feats.update("w:" + w for w in words)
    feats.update(f"b:{a} {b}" for a, b in itertools.pairwise(words))
    return feats


@dataclass(frozen=True)
class ExampleIndex:
    intents: tuple[str, ...]
    vectors: tuple[dict[str, float], ...]
    idf: dict[str, float]
    unseen_idf: float

    def _vector(self, feats: Counter[str]) -> dict[str, float]:
        v = {k: (1 + math.log(n)) * self.idf.get(k, self.unseen_idf) for k, n in feats.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {k: x / norm for k, x in v.items()}

    def nearest(self, question: str) -> tuple[str, float] | None:
        """The intent its nearest examples vote for, and the best similarity; None when nothing is close."""
        v = self._vector(_features(question))
        sims = sorted(
            ((sum(v.get(k, 0.0) * x for k, x in ex.items()), i) for i, ex in enumerate(self.vectors)),
            reverse=True,
        )[:K]
        if not sims or sims[0][0] < MIN_SIMILARITY:
            return None
        votes: dict[str, float] = {}
        for sim, i in sims:
            votes[self.intents[i]] = votes.get(self.intents[i], 0.0) + sim
        best = max(votes.items(), key=lambda kv: (kv[1], kv[0]))  # ties broken by name: deterministic
        return best[0], sims[0][0]


def build_index(examples: list[tuple[str, str]]) -> ExampleIndex:
    feats = [_features(q) for q, _ in examples]
    df: Counter[str] = Counter(k for f in feats for k in f)
    n = len(feats)
    idf = {k: math.log((n + 1) / (c + 1)) + 1 for k, c in df.items()}
    unseen = math.log(n + 1) + 1
    index = ExampleIndex(tuple(i for _, i in examples), (), idf, unseen)
    vectors = tuple(index._vector(f) for f in feats)
    return ExampleIndex(index.intents, vectors, idf, unseen)


@lru_cache(maxsize=4)
def load_index(path: Path) -> ExampleIndex | None:
    """The examples beside the phrase book; None when the file is missing or unreadable (rules only)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    rows = data.get("examples") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        return None
    examples = [
        (str(r["q"]), str(r["intent"]))
        for r in rows
        if isinstance(r, dict) and "q" in r and "intent" in r and not r.get("history")  # a follow-up needs its turn
    ]
    return build_index(examples) if examples else None
