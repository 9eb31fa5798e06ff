"""Tuning knowledge: documents, their index, and retrieval (issue 5).

The public API is :class:`KnowledgeBase` (``iodiag.knowledge.base``); the models that cross the
boundary are :class:`DocMeta` and :class:`Passage` (``iodiag.knowledge.models``). Names are
exported lazily so that importing the models does not import numpy and the index code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iodiag.knowledge.base import KnowledgeBase, UnknownDocError
    from iodiag.knowledge.embeddings import EmbeddingError
    from iodiag.knowledge.index import KnowledgeIndexError
    from iodiag.knowledge.loader import DocError
    from iodiag.knowledge.models import DocMeta, Passage

__all__ = [
    "DocError",
    "DocMeta",
    "EmbeddingError",
    "KnowledgeBase",
    "KnowledgeIndexError",
    "Passage",
    "UnknownDocError",
]

_WHERE = {
    "KnowledgeBase": "base",
    "UnknownDocError": "base",
    "EmbeddingError": "embeddings",
    "KnowledgeIndexError": "index",
    "DocError": "loader",
    "DocMeta": "models",
    "Passage": "models",
}


def __getattr__(name: str) -> Any:
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'iodiag.knowledge' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"iodiag.knowledge.{mod}"), name)
