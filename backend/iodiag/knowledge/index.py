"""The persistent vector index: one chromadb collection of chunk embeddings, built incrementally.

chromadb holds the vectors and, per chunk, its metadata (doc_id, layer, codes, facility, content
hash, embedder id); the vectors are computed here and handed over, so chromadb never loads an
embedding model of its own (and never downloads one). A ``manifest.json`` beside the database
records what the last complete build indexed, so opening a fresh index needs neither chromadb nor
the model. The collection itself stays the truth for builds: a build interrupted after some
writes is finished by the next one, which compares against what chromadb actually holds.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from iodiag.knowledge.loader import Chunk, Doc

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

    from iodiag.knowledge.embeddings import Embedder, Vectors

COLLECTION = "iodiag-knowledge"
MANIFEST = "manifest.json"
SCHEMA_VERSION = 1
CODES_SEP = ","
UPSERT_BATCH = 256

Progress = Callable[[int, int], None]  # (chunks embedded so far, chunks to embed)


class KnowledgeIndexError(RuntimeError):
    """The index cannot be opened or built (missing, locked, written by something else)."""


class Manifest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    schema_version: int
    embedder: str
    docs: dict[str, str]  # doc id -> content hash


class BuildSummary(BaseModel):
    added: list[str]
    updated: list[str]
    removed: list[str]
    unchanged: list[str]
    chunks_embedded: int
    chunks_total: int
    embedder: str
    full_rebuild: bool
    seconds: float

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


def read_manifest(index_dir: Path) -> Manifest | None:
    try:
        return Manifest.model_validate_json((index_dir / MANIFEST).read_bytes())
    except (OSError, ValidationError):
        return None


def is_fresh(index_dir: Path, docs: list[Doc], embedder_id: str) -> bool:
    m = read_manifest(index_dir)
    return (
        m is not None
        and m.schema_version == SCHEMA_VERSION
        and m.embedder == embedder_id
        and m.docs == {d.meta.id: d.content_hash for d in docs}
    )


def _write_manifest(index_dir: Path, manifest: Manifest) -> None:
    tmp = index_dir / (MANIFEST + ".tmp")
    tmp.write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
    os.replace(tmp, index_dir / MANIFEST)


_CLIENTS: dict[Path, ClientAPI] = {}
_CLIENTS_LOCK = threading.Lock()


def client(index_dir: Path) -> ClientAPI:
    """One chromadb client per index directory and process; telemetry off."""
    path = index_dir.resolve()
    with _CLIENTS_LOCK:
        c = _CLIENTS.get(path)
        if c is None:
            import chromadb
            from chromadb.config import Settings as ChromaSettings

            path.mkdir(parents=True, exist_ok=True)
            c = chromadb.PersistentClient(
                path=str(path), settings=ChromaSettings(anonymized_telemetry=False, allow_reset=False)
            )
            _CLIENTS[path] = c
        return c


def get_collection(index_dir: Path) -> Collection:
    """The existing collection; :class:`KnowledgeIndexError` if the index has never been built."""
    from chromadb.errors import NotFoundError

    try:
        return client(index_dir).get_collection(COLLECTION, embedding_function=None)
    except (NotFoundError, ValueError):
        raise KnowledgeIndexError(f"no knowledge index at {index_dir}: run `iodiag knowledge build`") from None


def _create_collection(c: ClientAPI, embedder_id: str) -> Collection:
    return c.create_collection(
        COLLECTION,
        embedding_function=None,  # vectors come from iodiag's embedder, never chromadb's default
        configuration={"hnsw": {"space": "cosine"}},
        metadata={"embedder": embedder_id, "schema_version": SCHEMA_VERSION},
    )


@contextmanager
def _build_lock(index_dir: Path) -> Iterator[None]:
    # Two processes (two service workers, a CLI build) must not write the collection at once.
    index_dir.mkdir(parents=True, exist_ok=True)
    with (index_dir / ".build.lock").open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def chunk_metadata(doc: Doc, chunk: Chunk, embedder_id: str) -> dict[str, str | int]:
    m = doc.meta
    return {
        "doc_id": m.id,
        "title": m.title,
        "heading": chunk.heading,
        "position": chunk.position,
        "layer": m.layer,
        # chromadb metadata values are scalars; codes are matched in iodiag, not by chromadb.
        "codes": CODES_SEP.join(m.codes),
        "facility": m.facility or "",
        "content_hash": doc.content_hash,
        "embedder": embedder_id,
    }


def _existing(col: Collection) -> dict[str, tuple[set[str], set[str]]]:
    """doc id -> (chunk ids, (content hash, embedder) pairs) as the collection holds them."""
    got = col.get(include=["metadatas"])
    out: dict[str, tuple[set[str], set[str]]] = {}
    for cid, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
        doc_id = str(meta.get("doc_id", ""))
        ids, stamps = out.setdefault(doc_id, (set(), set()))
        ids.add(cid)
        stamps.add(f"{meta.get('content_hash', '')}|{meta.get('embedder', '')}")
    return out


def build_index(
    index_dir: Path, docs: list[Doc], embedder: Embedder, *, progress: Progress | None = None, full: bool = False
) -> BuildSummary:
    """Bring the collection in line with ``docs``: embed new and changed documents, drop deleted ones.

    A different embedder than the collection was built with (or ``full``) rebuilds everything.
    """
    t0 = time.perf_counter()
    with _build_lock(index_dir):
        c = client(index_dir)
        from chromadb.errors import NotFoundError

        try:
            col: Collection | None = c.get_collection(COLLECTION, embedding_function=None)
        except (NotFoundError, ValueError):
            col = None
        old_embedder = str((col.metadata or {}).get("embedder", "")) if col is not None else ""
        rebuild = full or col is None or old_embedder != embedder.id
        if col is not None and rebuild:
            c.delete_collection(COLLECTION)
            col = None
        if col is None:
            col = _create_collection(c, embedder.id)
        existing = {} if rebuild else _existing(col)

        added, updated, unchanged, todo = [], [], [], []
        for doc in docs:
            have = existing.get(doc.meta.id)
            if have is None:
                added.append(doc.meta.id)
                todo.append(doc)
            elif have[1] != {f"{doc.content_hash}|{embedder.id}"} or have[0] != {ch.chunk_id for ch in doc.chunks}:
                updated.append(doc.meta.id)
                todo.append(doc)
            else:
                unchanged.append(doc.meta.id)
        current = {d.meta.id for d in docs}
        removed = sorted(d for d in existing if d not in current)
        stale = [cid for d in [*removed, *updated] for cid in sorted(existing[d][0])]
        for start in range(0, len(stale), UPSERT_BATCH):
            col.delete(ids=stale[start : start + UPSERT_BATCH])

        # Similar lengths side by side pad less in each embedding batch.
        pending = sorted(((doc, ch) for doc in todo for ch in doc.chunks), key=lambda p: len(p[1].embedding_text()))
        total = len(pending)
        if progress:
            progress(0, total)
        done = 0
        for start in range(0, total, UPSERT_BATCH):
            batch = pending[start : start + UPSERT_BATCH]
            vecs = _embed_with_progress(embedder, [ch.embedding_text() for _, ch in batch], done, total, progress)
            col.add(
                ids=[ch.chunk_id for _, ch in batch],
                embeddings=vecs,
                documents=[ch.text for _, ch in batch],
                metadatas=[chunk_metadata(doc, ch, embedder.id) for doc, ch in batch],
            )
            done += len(batch)
        _write_manifest(
            index_dir,
            Manifest(
                schema_version=SCHEMA_VERSION, embedder=embedder.id, docs={d.meta.id: d.content_hash for d in docs}
            ),
        )
        return BuildSummary(
            added=added,
            updated=updated,
            removed=removed,
            unchanged=unchanged,
            chunks_embedded=total,
            chunks_total=sum(len(d.chunks) for d in docs),
            embedder=embedder.id,
            full_rebuild=rebuild,
            seconds=time.perf_counter() - t0,
        )


def _embed_with_progress(
    embedder: Embedder, texts: list[str], done: int, total: int, progress: Progress | None
) -> Vectors:
    # Embed in slices so the progress bar moves.
    step = 16
    parts = []
    for i in range(0, len(texts), step):
        parts.append(embedder.embed(texts[i : i + step]))
        if progress:
            progress(done + min(i + step, len(texts)), total)
    return np.concatenate(parts, axis=0)


# --- fixed queries, ranked ahead of time ------------------------------------------------------------
#
# Every finding asks the index the same question ("P08 Misaligned file requests"). Ranking those at build
# time, over the vectors chromadb holds, lets a one-shot process (``iodiag ask``) answer without importing
# chromadb or loading the embedding model: seconds it would otherwise spend before its first word.

QUERY_RANKS = "query_ranks.json"


class QueryRanks(BaseModel):
    model_config = ConfigDict(extra="ignore")

    manifest: Manifest  # the build these ranks belong to
    ranks: dict[str, list[tuple[str, float]]]  # query -> (chunk id, cosine similarity), best first, every chunk


def write_query_ranks(index_dir: Path, embedder: Embedder, queries: list[str]) -> None:
    """Rank every chunk for each of ``queries`` by exact cosine similarity (what the index approximates)."""
    manifest = read_manifest(index_dir)
    if manifest is None or not queries:
        return
    got = get_collection(index_dir).get(include=["embeddings"])
    ids = list(got["ids"])
    if not ids:
        return
    chunks = np.asarray(got["embeddings"], dtype=np.float32)
    sims = embedder.embed(queries) @ chunks.T  # rows are L2-normalized: the dot product is the cosine
    ranks = {}
    for q, row in zip(queries, sims, strict=True):
        order = np.argsort(-row, kind="stable")
        ranks[q] = [(ids[i], round(float(row[i]), 6)) for i in order]
    tmp = index_dir / (QUERY_RANKS + ".tmp")
    tmp.write_text(QueryRanks(manifest=manifest, ranks=ranks).model_dump_json(), encoding="utf-8")
    os.replace(tmp, index_dir / QUERY_RANKS)


def read_query_ranks(index_dir: Path) -> dict[str, list[tuple[str, float]]] | None:
    """The ranks written for the index's current build, or None (none written, or an older build's)."""
    try:
        stored = QueryRanks.model_validate_json((index_dir / QUERY_RANKS).read_bytes())
    except (OSError, ValidationError):
        return None
    return stored.ranks if stored.manifest == read_manifest(index_dir) else None
