"""What the narration layer needs from the knowledge base, as a protocol.

``iodiag.knowledge.KnowledgeBase`` satisfies it; so does any other source of :class:`Passage` objects
(the tests use a small in-memory one). Opening the real base is lazy and may fail (no index built yet):
then answers are written from the report alone and cite no documents.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from iodiag.knowledge.models import DocMeta, Passage

if TYPE_CHECKING:
    from iodiag.core.settings import Settings

log = logging.getLogger(__name__)


@runtime_checkable
class KnowledgeSource(Protocol):
    def search(
        self,
        query: str,
        k: int = 4,
        *,
        layer: str | None = None,
        code: str | None = None,
        facility: str | None = None,
    ) -> list[Passage]: ...

    def passages_for_finding(
        self, code: str, query: str | None = None, k: int = 4, *, facility: str | None = None
    ) -> list[Passage]: ...

    def docs_for_finding(self, code: str) -> list[DocMeta]: ...

    def get(self, doc_id: str) -> DocMeta: ...


def open_knowledge(settings: Settings) -> KnowledgeSource | None:
    """The real knowledge base, or None when it cannot be opened (the reason is logged once)."""
    try:
        from iodiag.knowledge.base import KnowledgeBase

        kb: KnowledgeSource = KnowledgeBase.open(settings)
    except Exception as exc:  # no index yet, or a broken one: answer from the report alone
        log.warning("knowledge base unavailable, answers will cite no documents: %s: %s", type(exc).__name__, exc)
        return None
    return kb
