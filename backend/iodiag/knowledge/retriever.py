"""The knowledge base as a LangChain retriever (hybrid search, one ``Document`` per passage)."""

from __future__ import annotations

from typing import Any, Protocol

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from iodiag.knowledge.models import Passage


class Searchable(Protocol):
    """What the retriever needs of a knowledge base (``KnowledgeBase`` is one; base.py builds retrievers)."""

    def search(
        self, query: str, k: int = ..., *, layer: str | None = ..., code: str | None = ..., facility: str | None = ...
    ) -> list[Passage]: ...


def passage_document(p: Passage) -> Document:
    return Document(
        page_content=f"{p.title} — {p.heading}\n\n{p.text}",
        id=p.chunk_id,
        metadata={
            "doc_id": p.doc_id,
            "chunk_id": p.chunk_id,
            "title": p.title,
            "heading": p.heading,
            "layer": p.layer,
            "codes": list(p.codes),
            "facility": p.facility,
            "sources": list(p.sources),
            "score": p.score,
            "why": p.why,
        },
    )


class KnowledgeRetriever(BaseRetriever):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    kb: Any  # a Searchable (KnowledgeBase); Any because pydantic cannot build a schema for it
    k: int = 5
    layer: str | None = None
    code: str | None = None
    facility: str | None = None

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        kb: Searchable = self.kb
        hits = kb.search(query, self.k, layer=self.layer, code=self.code, facility=self.facility)
        return [passage_document(p) for p in hits]
