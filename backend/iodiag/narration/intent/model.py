"""A learned opinion on what a question asks: two logistic regressions over the labelled questions.

The rules in ``intent/classify.py`` are precise where they are sure and wrong where a phrasing nobody wrote a rule for
happens to trip one: the first four blind sets scored 0.81-0.86 on first sight. A classifier trained on the
labelled questions (``prompts/intent-examples.v1.yaml``) generalizes better: trained on all sets but one, it
scores 0.92-0.99 (mean 0.97) on the one left out, without a rule in sight (``evals/intents/README.md``). Two
views of a question vote:

- **n-grams**: character 2-4-grams and words, TF-IDF weighted (pure numpy): tolerant of typos and jargon;
- **meaning**: the sentence embedding of the offline MiniLM (``knowledge/embeddings.py``): tolerant of
  paraphrase. It costs about 0.3 s to load, so it is consulted only when the n-gram view does not
  already agree, confidently, with the rules (``IntentModel.predict``), and skipped when the model files
  are not installed.

Both heads are softmax regressions whose weights are computed at build time (``python -m
iodiag.narration.intent.model``) and stored beside the examples (``prompts/intent-model.v1.npz``, with the
SHA-256 of the examples they were trained on). Same question, same intent: inference is a fixed dot product.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import sys
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt
import yaml

log = logging.getLogger(__name__)

Floats = npt.NDArray[np.float32]

# The labels the model can give (the eval's eight; "triage" never comes from a question), in a fixed order.
LABELS: tuple[str, ...] = (
    "compare-runs",
    "concept",
    "explain-finding",
    "explain-job",
    "facility",
    "file-or-rank",
    "how-to-fix",
    "off-topic",
)
CHAR_NGRAMS = (2, 3, 4)
MIN_DF = 2  # an n-gram seen in one question only says nothing about the next one
C = 10.0  # inverse L2 strength
NGRAM_ITERATIONS = 300  # full-batch Nesterov steps, a fixed number (a rebuild gives the same weights); few,
EMBED_ITERATIONS = 1000  # since early stopping regularizes the n-gram head (measured, leave-one-set-out)
EMBEDDING_WEIGHT = 0.5  # the two heads' probabilities are averaged
HISTORY = "__history__"  # a follow-up (asked after "why is my job slow?") is a feature of its own
_WORD = re.compile(r"[a-z0-9_/']+")


def examples_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_examples(path: Path) -> list[tuple[str, str, bool]]:
    """(question, intent, follow-up) rows of an examples or eval file (``examples:`` or ``questions:``)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    rows = (data.get("examples") or data.get("questions")) if isinstance(data, dict) else None
    if not isinstance(rows, list):
        return []
    return [
        (str(r["q"]), str(r["intent"]), bool(r.get("history", False)))
        for r in rows
        if isinstance(r, dict) and "q" in r and str(r.get("intent")) in LABELS
    ]


def ngram_features(text: str, history: bool = False) -> Counter[str]:
    t = " " + " ".join(text.lower().split()) + " "
    feats: Counter[str] = Counter()
    for n in CHAR_NGRAMS:
        feats.update(f"c{n}:{t[i : i + n]}" for i in range(len(t) - n + 1))
    words = _WORD.findall(t)
    feats.update("w:" + w for w in words)
    feats.update("f:" + " ".join(words[:k]) for k in (1, 2) if len(words) >= k)  # how it opens
    if history:
        feats[HISTORY] += 1
    return feats


class QuestionEmbedder(Protocol):
    def embed(self, texts: Sequence[str]) -> Floats: ...


_EMBEDDER_LOCK = threading.Lock()
_EMBEDDER: list[QuestionEmbedder | None] = []  # [] not tried yet, [None] unavailable


def minilm() -> QuestionEmbedder | None:
    """The project's offline MiniLM (one thread: a question is a dozen word pieces); None if not installed."""
    with _EMBEDDER_LOCK:
        if not _EMBEDDER:
            try:
                from iodiag.knowledge.embeddings import OnnxMiniLM, minilm_files

                minilm_files()
                _EMBEDDER.append(OnnxMiniLM(batch_size=64, threads=1, optimize=False))
            except Exception as exc:  # a missing wheel or file: the n-gram head decides alone
                log.info("intent model without embeddings: %s", exc)
                _EMBEDDER.append(None)
        return _EMBEDDER[0]


def _embedding_rows(embedder: QuestionEmbedder, texts: Sequence[str], history: Sequence[bool]) -> Floats:
    e = np.asarray(embedder.embed(list(texts)), dtype=np.float32)
    h = np.asarray(history, dtype=np.float32).reshape(-1, 1)
    return np.hstack([e, h]).astype(np.float32)


def _softmax(z: Floats) -> Floats:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    out: Floats = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    return out


def train_softmax(x: Floats, y: npt.NDArray[np.int64], iterations: int, c: float = C) -> tuple[Floats, Floats]:
    """Multinomial logistic regression, L2, classes weighted to balance; deterministic (zeros, fixed steps)."""
    n, d = x.shape
    k = len(LABELS)
    onehot = np.zeros((n, k), np.float32)
    onehot[np.arange(n), y] = 1
    counts = np.bincount(y, minlength=k).astype(np.float32)
    weight = (n / (k * np.maximum(counts, 1)))[y].astype(np.float32)
    w = np.zeros((d, k), np.float32)
    b = np.zeros(k, np.float32)
    vw, vb = w.copy(), b.copy()
    lam = np.float32(1.0 / (c * n))
    for _ in range(iterations):
        wl, bl = w + 0.9 * vw, b + 0.9 * vb
        g = (_softmax(x @ wl + bl) - onehot) * weight[:, None] / n
        vw = 0.9 * vw - (x.T @ g + lam * wl)
        vb = 0.9 * vb - g.sum(axis=0)
        w, b = w + vw, b + vb
    return w.astype(np.float32), b.astype(np.float32)


@dataclass(frozen=True)
class Prediction:
    probabilities: dict[str, float]
    embedded: bool  # the meaning head voted too

    @property
    def intent(self) -> str:
        return max(self.probabilities.items(), key=lambda kv: (kv[1], kv[0]))[0]

    @property
    def confidence(self) -> float:
        return self.probabilities[self.intent]


@dataclass(frozen=True)
class IntentModel:
    vocabulary: dict[str, int]
    idf: Floats
    ngram_w: Floats
    ngram_b: Floats
    embed_w: Floats | None  # None: trained without embeddings
    embed_b: Floats | None
    sha256: str  # of the examples it was trained on

    def _ngram_rows(self, texts: Sequence[str], history: Sequence[bool]) -> Floats:
        x = np.zeros((len(texts), len(self.vocabulary)), np.float32)
        for r, (t, h) in enumerate(zip(texts, history, strict=True)):
            for k, n in ngram_features(t, h).items():
                i = self.vocabulary.get(k)
                if i is not None:
                    x[r, i] = (1 + math.log(n)) * self.idf[i]
            norm = float(np.linalg.norm(x[r]))
            if norm > 0:
                x[r] /= norm
        return x

    def ngram_probabilities(self, texts: Sequence[str], history: Sequence[bool]) -> Floats:
        return _softmax(self._ngram_rows(texts, history) @ self.ngram_w + self.ngram_b)

    def embedding_probabilities(self, rows: Floats) -> Floats:
        assert self.embed_w is not None and self.embed_b is not None
        return _softmax(rows @ self.embed_w + self.embed_b)

    def predict(
        self, question: str, history: bool = False, agree: str | None = None, embedder: QuestionEmbedder | None = None
    ) -> Prediction:
        """Both heads' average; the meaning head is skipped when the n-gram head confidently says ``agree``
        (the rules' answer), since then it could not change the outcome. ``embedder`` None: MiniLM if installed.
        """
        p = self.ngram_probabilities([question], [history])[0]
        top = LABELS[int(np.argmax(p))]
        if self.embed_w is not None and not (agree == top and float(p.max()) > AGREE):
            emb = embedder or minilm()
            if emb is not None:
                try:
                    e = self.embedding_probabilities(_embedding_rows(emb, [question], [history]))[0]
                    p = (1 - EMBEDDING_WEIGHT) * p + EMBEDDING_WEIGHT * e
                    return Prediction({lab: float(v) for lab, v in zip(LABELS, p, strict=True)}, True)
                except Exception as exc:  # the embedder failed at run time: the n-gram head alone
                    log.warning("intent embeddings failed: %s", exc)
        return Prediction({lab: float(v) for lab, v in zip(LABELS, p, strict=True)}, False)


AGREE = 0.6  # the n-gram head this sure of the rules' answer: no need to ask the meaning head
OVERRIDE = 0.6  # the model this sure of another answer than the rules': its answer


def train(rows: Sequence[tuple[str, str, bool]], embedder: QuestionEmbedder | None, sha256: str = "") -> IntentModel:
    """Both heads on labelled (question, intent, follow-up) rows; without an embedder, the n-gram head only."""
    texts = [q for q, _, _ in rows]
    history = [h for _, _, h in rows]
    y = np.array([LABELS.index(i) for _, i, _ in rows], dtype=np.int64)
    docs = [ngram_features(q, h) for q, h in zip(texts, history, strict=True)]
    df: Counter[str] = Counter(k for d in docs for k in d)
    kept = sorted(k for k, c in df.items() if c >= MIN_DF)
    vocabulary = {k: i for i, k in enumerate(kept)}
    n = len(docs)
    idf = np.array([math.log((n + 1) / (df[k] + 1)) + 1 for k in kept], dtype=np.float32)
    shell = IntentModel(
        vocabulary,
        idf,
        np.zeros((len(kept), len(LABELS)), np.float32),
        np.zeros(len(LABELS), np.float32),
        None,
        None,
        sha256,
    )
    ngram_w, ngram_b = train_softmax(shell._ngram_rows(texts, history), y, NGRAM_ITERATIONS)
    embed_w = embed_b = None
    if embedder is not None:
        embed_w, embed_b = train_softmax(_embedding_rows(embedder, texts, history), y, EMBED_ITERATIONS)
    return IntentModel(vocabulary, idf, ngram_w, ngram_b, embed_w, embed_b, sha256)


def save(model: IntentModel, path: Path) -> None:
    arrays: dict[str, npt.NDArray[np.generic]] = {
        "vocabulary": np.array(list(model.vocabulary), dtype=np.str_),
        "idf": model.idf,
        "ngram_w": model.ngram_w,
        "ngram_b": model.ngram_b,
        "sha256": np.array(model.sha256, dtype=np.str_),
        "labels": np.array(LABELS, dtype=np.str_),
    }
    if model.embed_w is not None and model.embed_b is not None:
        arrays["embed_w"], arrays["embed_b"] = model.embed_w, model.embed_b
    with path.open("wb") as fh:
        np.savez_compressed(fh, **arrays)  # type: ignore[arg-type]


@lru_cache(maxsize=4)
def load_model(path: Path) -> IntentModel | None:
    """The stored model; None when it is missing, unreadable or for other labels (the rules decide alone)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            if tuple(str(x) for x in z["labels"]) != LABELS:
                return None
            embed_w = z["embed_w"].astype(np.float32) if "embed_w" in z.files else None
            embed_b = z["embed_b"].astype(np.float32) if "embed_b" in z.files else None
            return IntentModel(
                {str(k): i for i, k in enumerate(z["vocabulary"])},
                z["idf"].astype(np.float32),
                z["ngram_w"].astype(np.float32),
                z["ngram_b"].astype(np.float32),
                embed_w,
                embed_b,
                str(z["sha256"]),
            )
    except (OSError, KeyError, ValueError) as exc:
        log.warning("%s: cannot load the intent model: %s", path, exc)
        return None


def model_path(examples: Path) -> Path:
    """``intent-examples.vN.yaml`` -> ``intent-model.vN.npz`` beside it."""
    return examples.with_name(examples.name.replace("intent-examples", "intent-model").rsplit(".", 1)[0] + ".npz")


def build(examples: Path, out: Path | None = None) -> Path:
    """Train on the examples file and store the model beside it."""
    target = out or model_path(examples)
    model = train(load_examples(examples), minilm(), examples_sha256(examples))
    save(model, target)
    return target


if __name__ == "__main__":  # python -m iodiag.narration.intent.model [EXAMPLES.yaml]
    from iodiag.core.settings import REPO_ROOT

    src = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO_ROOT / "prompts" / "intent-examples.v1.yaml"
    print(build(src))
