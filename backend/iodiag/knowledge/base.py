"""``KnowledgeBase``: the documents, their index, and the searches the narrator and the service use.

Opening is cheap when the index is fresh: the Markdown is parsed (milliseconds) and compared with
the index manifest; chromadb and the embedding model are loaded on the first query that needs
them, and the embedder is shared by every ``KnowledgeBase`` in the process.

Filters (``layer``, ``code``, ``facility``) restrict BM25 and the vector search alike, to the same
documents. ``layer`` and ``code`` match case-insensitively; ``facility="NERSC"`` keeps NERSC's
documents *and* the general ones (no facility), since general advice applies at every site while
another facility's does not.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from iodiag.knowledge.bm25 import BM25, tokenize
from iodiag.knowledge.embeddings import Embedder, Vectors, get_embedder
from iodiag.knowledge.index import (
    KnowledgeIndexError,
    build_index,
    get_collection,
    is_fresh,
    read_manifest,
    read_query_ranks,
    write_query_ranks,
)
from iodiag.knowledge.loader import Chunk, Doc, load_docs
from iodiag.knowledge.models import DocMeta, Passage
from iodiag.knowledge.retrieval import Mode, rrf

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection
    from langchain_core.retrievers import BaseRetriever

    from iodiag.core.settings import Settings

# Candidates each ranking contributes to the fusion: far more than k, so a chunk ranked well by
# one method and moderately by the other still surfaces.
CANDIDATES = 50

# A name with an underscore or an inner capital after a lower-case prefix: DARSHAN_MODMEM, POSIX_SEQ_WRITES,
# romio_cb_write, H5Pset_alignment, ncmpi_set_fill, MPI_File_write_all, cb_nodes.
_IDENTIFIER = re.compile(r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9]\b|\bH5[A-Z][a-z]*[a-z_]+\b")


_DEFINITION = re.compile(
    r"(?:so |ok |and )?what(?:'s| is| are| does| do)\s+(?:a |an |the )?(?P<term>[^?]{2,60}?)"
    r"(?:\s+(?:mean|means|do|does|stand for|in general))?\s*\??$",
    re.IGNORECASE,
)
_DEFINITION_STOP = frozenset({"a", "an", "the", "exactly", "really", "actually", "this", "that", "it"})


def identifiers(query: str) -> list[str]:
    """The identifiers a query names, as written (at least 5 characters, so 'io_x' noise stays out)."""
    return sorted({m.group(0) for m in _IDENTIFIER.finditer(query) if len(m.group(0)) >= 5})


FILTERS = ("layer", "code", "facility")
QUERY_CACHE = 256


class UnknownDocError(KeyError):
    """No knowledge document has this id."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else "unknown document"


class KnowledgeBase:
    def __init__(self, settings: Settings, docs: list[Doc], embedder: Embedder) -> None:
        self.settings = settings
        self.embedder = embedder
        self._docs: dict[str, Doc] = {d.meta.id: d for d in sorted(docs, key=lambda d: d.meta.id)}
        self._chunks: list[Chunk] = [ch for d in self._docs.values() for ch in d.chunks]
        self._chunk_pos: dict[str, int] = {ch.chunk_id: i for i, ch in enumerate(self._chunks)}
        self._doc_chunks: dict[str, list[int]] = {}
        for i, ch in enumerate(self._chunks):
            self._doc_chunks.setdefault(ch.doc_id, []).append(i)
        self._lock = threading.Lock()
        self._bm25: BM25 | None = None
        self._collection: Collection | None = None
        self._query_cache: dict[str, Vectors] = {}
        self._ranked: dict[str, list[tuple[str, float]]] | None = None

    # --- opening ---------------------------------------------------------------------------------

    @classmethod
    def open(cls, settings: Settings | None = None, *, build_if_missing: bool = True) -> KnowledgeBase:
        """The documents of ``settings.knowledge_dir`` and their index.

        A missing or out-of-date index is brought up to date (incrementally) when
        ``build_if_missing``; otherwise it raises :class:`KnowledgeIndexError`. A bad document
        raises :class:`~iodiag.knowledge.loader.DocError` naming the file and the field.
        """
        if settings is None:
            from iodiag.core.settings import get_settings

            settings = get_settings()
        docs = load_docs(settings.knowledge_dir)
        embedder = get_embedder(settings)
        index_dir = settings.knowledge_index_dir
        if not is_fresh(index_dir, docs, embedder.id):
            if not build_if_missing:
                state = "out of date" if read_manifest(index_dir) else "missing"
                raise KnowledgeIndexError(f"knowledge index at {index_dir} is {state}: run `iodiag knowledge build`")
            build_index(index_dir, docs, embedder)
            write_query_ranks(index_dir, embedder, finding_queries())
        elif read_query_ranks(index_dir) is None and build_if_missing:  # built before ranks were kept
            write_query_ranks(index_dir, embedder, finding_queries())
        return cls(settings, docs, embedder)

    @staticmethod
    def ensure_index(settings: Settings) -> Literal["fresh", "copied", "built"]:
        """Make ``settings.knowledge_index_dir`` fresh now, before anything is served from it: as it is,
        from a copy of the prebuilt seed (``knowledge_seed_dir``) when that one is fresh, or built."""
        docs = load_docs(settings.knowledge_dir)
        embedder = get_embedder(settings)
        target = settings.knowledge_index_dir

        def ready(index_dir: Path) -> bool:
            return is_fresh(index_dir, docs, embedder.id) and read_query_ranks(index_dir) is not None

        if ready(target):
            return "fresh"
        seed = settings.knowledge_seed_dir
        if seed is not None and seed.resolve() != target.resolve() and ready(seed):
            # Copied beside the target and renamed into place: a copy cut short is never taken for an index.
            tmp = target.with_name(f"{target.name}.copy-{os.getpid()}")
            old = target.with_name(f"{target.name}.old-{os.getpid()}")
            shutil.rmtree(tmp, ignore_errors=True)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(seed, tmp)
            if target.exists():
                os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
            return "copied"
        build_index(target, docs, embedder)
        write_query_ranks(target, embedder, finding_queries())
        return "built"

    # --- documents -------------------------------------------------------------------------------

    def get(self, doc_id: str) -> DocMeta:
        doc = self._docs.get(doc_id)
        if doc is None:
            raise UnknownDocError(f"unknown knowledge document {doc_id!r} ({len(self._docs)} documents known)")
        return doc.meta

    def docs(self) -> list[DocMeta]:
        return [d.meta for d in self._docs.values()]

    def docs_for_finding(self, code: str) -> list[DocMeta]:
        c = code.strip().upper()
        return [d.meta for d in self._docs.values() if c in (x.upper() for x in d.meta.codes)]

    def docs_for_recommendation(self, rec_id: str) -> list[DocMeta]:
        return [d.meta for d in self._docs.values() if rec_id in d.meta.recommendations]

    def sections(self, doc_id: str) -> list[Passage]:
        """Every chunk of one document, in order (why="document")."""
        self.get(doc_id)
        return [self._passage(i, 0.0, "document") for i in self._doc_chunks.get(doc_id, [])]

    # --- search ----------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        layer: str | None = None,
        code: str | None = None,
        facility: str | None = None,
        mode: Mode = "hybrid",
    ) -> list[Passage]:
        """The ``k`` best chunks for ``query`` (why="retrieved"); ``mode`` picks BM25, vector or both (RRF).

        ``Passage.score`` is the RRF score in hybrid mode (comparable only within one ranking),
        the BM25 score, or the cosine similarity.
        """
        allowed = self._allowed_docs(layer, code, facility)
        return [self._passage(i, s, "retrieved") for i, s in self._rank(query, allowed, mode)[: max(k, 0)]]

    def passages_for_finding(
        self, code: str, query: str | None = None, k: int = 4, *, facility: str | None = None
    ) -> list[Passage]:
        """The finding's own documents first (their best section, why="mapped"), then retrieved ones.

        At most one passage per document, so ``k`` passages cover ``k`` documents. Without a
        ``query`` the finding's registered title stands in for it. ``facility`` (the job's site)
        leaves out other facilities' documents, mapped or retrieved.
        """
        q = query if query and query.strip() else _finding_query(code)
        site = self._allowed_docs(None, None, facility)
        mapped = {d.id for d in self.docs_for_finding(code) if site is None or d.id in site}
        out: list[Passage] = []
        seen: set[str] = set()
        if mapped:
            ranked = self._rank(q, mapped, "hybrid")
            # A mapped document that no ranking reached still appears, with its first section.
            ranked += [(self._doc_chunks[d][0], 0.0) for d in sorted(mapped)]
            for i, score in ranked:
                doc_id = self._chunks[i].doc_id
                if doc_id not in seen:
                    seen.add(doc_id)
                    out.append(self._passage(i, score, "mapped"))
            # The job's own facility's guide first when the site is known; when it is not,
            # general advice before any one facility's.
            out.sort(key=lambda p: (p.facility is None) if facility else (p.facility is not None))
        out = out[:k]
        if len(out) < k:
            for i, score in self._rank(q, site, "hybrid"):
                doc_id = self._chunks[i].doc_id
                if doc_id not in seen:
                    seen.add(doc_id)
                    out.append(self._passage(i, score, "retrieved"))
                    if len(out) == k:
                        break
        return out

    def as_retriever(self, k: int = 5, **filters: Any) -> BaseRetriever:
        """A LangChain retriever over this knowledge base (filters: layer, code, facility)."""
        unknown = sorted(set(filters) - set(FILTERS))
        if unknown:
            raise TypeError(f"unknown filter(s) {unknown}; use {list(FILTERS)}")
        from iodiag.knowledge.retriever import KnowledgeRetriever

        return KnowledgeRetriever(kb=self, k=k, **filters)

    # --- internals -------------------------------------------------------------------------------

    def _allowed_docs(self, layer: str | None, code: str | None, facility: str | None) -> set[str] | None:
        if layer is None and code is None and facility is None:
            return None
        out = set()
        for doc_id, d in self._docs.items():
            m = d.meta
            if layer is not None and m.layer.lower() != layer.lower():
                continue
            if code is not None and code.strip().upper() not in (c.upper() for c in m.codes):
                continue
            if facility is not None and m.facility is not None and m.facility.lower() != facility.lower():
                continue
            out.add(doc_id)
        return out

    def _rank(self, query: str, allowed_docs: set[str] | None, mode: Mode) -> list[tuple[int, float]]:
        if not query.strip() or (allowed_docs is not None and not allowed_docs):
            return []
        allowed = None if allowed_docs is None else {i for d in allowed_docs for i in self._doc_chunks.get(d, [])}
        bm = self._bm25_rank(query, allowed) if mode != "vector" else []
        n_allowed = len(allowed) if allowed is not None else None
        vec = self._vector_rank(query, allowed_docs, n_allowed) if mode != "bm25" else []
        if mode == "bm25":
            return bm
        if mode == "vector":
            return vec
        return self._exact_first(query, rrf([[i for i, _ in bm], [i for i, _ in vec]]), allowed)

    def _exact_first(
        self, query: str, ranked: list[tuple[int, float]], allowed: set[int] | None
    ) -> list[tuple[int, float]]:
        """Chunks that spell an identifier of the query exactly (a counter, a call, an environment variable:
        ``DARSHAN_MODMEM``, ``POSIX_SEQ_WRITES``, ``H5Pset_alignment``) ahead of the fused ranking.

        Neither ranking knows such a name is one thing: BM25 splits it into common words ("darshan",
        "posix", "writes") and the embedding into subwords, so a page that merely mentions Darshan outranks
        the one section that defines the variable. A question naming it wants that section.
        """
        names = identifiers(query)
        hits: list[int] = []
        # The exact name first; failing that its family (POSIX_SEQ_WRITES -> POSIX_SEQ_), as documents write
        # "POSIX_SEQ_READS / _WRITES" or "POSIX_SEQ_*".
        for spelled in (names, [f"{n.rsplit('_', 1)[0]}_" for n in names if n.count("_") >= 2]):
            hits = [
                i
                for i, c in enumerate(self._chunks)
                if (allowed is None or i in allowed) and any(n in c.text or n in c.heading for n in spelled)
            ]
            if hits:
                break
        if not hits:
            hits = self._defining(query, allowed)
        if not hits:
            return ranked
        order = {i: r for r, (i, _) in enumerate(ranked)}
        # Among the exact hits, the fused order decides; a hit that neither ranking reached comes after them.
        hits.sort(key=lambda i: (order.get(i, len(order)), i))
        first = set(hits)
        top = ranked[0][1] if ranked else 1.0
        return [(i, top) for i in hits] + [(i, s) for i, s in ranked if i not in first]

    def _defining(self, query: str, allowed: set[int] | None) -> list[int]:
        """For "what is X?", the sections written to define X: a heading "What X is" / "What X does" holding
        every word of X. The term itself is too common to rank on ("what is darshan?": every page says
        Darshan), but a page's own definition section says exactly what was asked."""
        m = _DEFINITION.match(query.strip())
        if m is None:
            return []
        words = set(tokenize(m.group("term"))) - _DEFINITION_STOP
        if not words:
            return []
        return [
            i
            for i, c in enumerate(self._chunks)
            if (allowed is None or i in allowed)
            and c.heading.lower().startswith("what ")
            and words <= set(tokenize(c.heading))
        ]

    def _bm25_rank(self, query: str, allowed: set[int] | None) -> list[tuple[int, float]]:
        with self._lock:
            if self._bm25 is None:
                self._bm25 = BM25([tokenize(f"{c.title} {c.heading} {c.text}") for c in self._chunks])
            bm25 = self._bm25
        return bm25.rank(tokenize(query), allowed, CANDIDATES)

    def _vector_rank(self, query: str, allowed_docs: set[str] | None, n_allowed: int | None) -> list[tuple[int, float]]:
        n = min(CANDIDATES, len(self._chunks) if n_allowed is None else n_allowed)
        if n == 0:
            return []
        with self._lock:
            if self._ranked is None:
                self._ranked = read_query_ranks(self.settings.knowledge_index_dir) or {}
            ranked = self._ranked.get(query)
        if ranked is not None:  # a finding's fixed query, ranked when the index was built
            out = []
            for cid, sim in ranked:
                pos = self._chunk_pos.get(cid)
                if pos is not None and (allowed_docs is None or self._chunks[pos].doc_id in allowed_docs):
                    out.append((pos, sim))
                    if len(out) == n:
                        break
            return out
        with self._lock:
            if self._collection is None:
                self._collection = get_collection(self.settings.knowledge_index_dir)
            col = self._collection
        vec = self._query_vector(query)
        where: Any = None if allowed_docs is None else {"doc_id": {"$in": sorted(allowed_docs)}}
        res = col.query(query_embeddings=vec, n_results=n, where=where, include=["distances"])
        ids = res["ids"][0]
        dists = (res["distances"] or [[1.0] * len(ids)])[0]
        # Chunks the index holds but these documents do not (a build running beside us) are skipped.
        pairs = zip(ids, dists, strict=True)
        return [(self._chunk_pos[cid], 1.0 - float(d)) for cid, d in pairs if cid in self._chunk_pos]

    def _query_vector(self, query: str) -> Vectors:
        # passages_for_finding ranks the same query twice (mapped documents, then all of them).
        with self._lock:
            vec = self._query_cache.get(query)
        if vec is None:
            vec = self.embedder.embed([query])
            with self._lock:
                if len(self._query_cache) >= QUERY_CACHE:
                    self._query_cache.pop(next(iter(self._query_cache)))
                self._query_cache[query] = vec
        return vec

    def _passage(self, i: int, score: float, why: str) -> Passage:
        ch = self._chunks[i]
        m = self._docs[ch.doc_id].meta
        return Passage(
            doc_id=m.id,
            chunk_id=ch.chunk_id,
            title=m.title,
            heading=ch.heading,
            text=ch.text,
            score=score,
            layer=m.layer,
            codes=m.codes,
            facility=m.facility,
            sources=m.sources,
            why=why,
        )


def finding_queries() -> list[str]:
    """The query each registered finding asks when it is given none: ranked ahead of time at build."""
    try:
        import iodiag.analysis.checks  # noqa: F401  (registers the checks)
        from iodiag.analysis.registry import CHECKS
    except ImportError:
        return []
    return sorted({_finding_query(code) for code in CHECKS})


def _finding_query(code: str) -> str:
    """ "P08 Misaligned file requests": the code with its registered title, when the registry knows it."""
    try:
        import iodiag.analysis.checks  # noqa: F401  (registers the checks)
        from iodiag.analysis.registry import CHECKS
    except ImportError:
        return code
    spec = CHECKS.get(code.strip().upper())
    return f"{code} {spec.title}" if spec else code
