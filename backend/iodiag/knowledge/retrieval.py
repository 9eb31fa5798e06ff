"""Hybrid ranking: BM25 and vector rankings fused by reciprocal rank fusion.

RRF (Cormack et al., 2009) adds ``1 / (k + rank)`` over the rankings a chunk appears in. It needs
no score calibration between BM25 (unbounded) and cosine similarity, which is why it is used
here rather than a weighted sum; ``k = 60`` is the paper's constant, and it keeps one ranking's
top hit from drowning a chunk that both rankings place well.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

RRF_K = 60
Mode = Literal["hybrid", "bm25", "vector"]
MODES: tuple[Mode, ...] = ("bm25", "vector", "hybrid")


def rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Fused (item, score), best first; ties go to the item with the better best rank, then the lower id."""
    scores: dict[int, float] = {}
    best: dict[int, int] = {}
    for ranking in rankings:
        for pos, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + pos)
            best[item] = min(best.get(item, pos), pos)
    return sorted(scores.items(), key=lambda kv: (-kv[1], best[kv[0]], kv[0]))
