"""The knowledge layer on small fixture documents: loader, BM25, fusion, embedders, incremental index.

Everything runs for real: the int8 MiniLM ONNX model, chromadb on a temporary directory, and an
OpenAI-compatible HTTP server on loopback (which embeds with the ONNX model). The real documents
are tested in ``test_knowledge_docs.py``.
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from iodiag.core.settings import Settings
from iodiag.knowledge.base import KnowledgeBase, UnknownDocError
from iodiag.knowledge.bm25 import BM25, tokenize
from iodiag.knowledge.embeddings import (
    EmbeddingError,
    OnnxMiniLM,
    OpenAIEmbedder,
    SentenceTransformersEmbedder,
    embeddings_endpoint,
    minilm_files,
)
from iodiag.knowledge.index import KnowledgeIndexError, build_index, get_collection, read_manifest
from iodiag.knowledge.loader import MAX_CHUNK_WORDS, DocError, chunk_body, load_doc, load_docs, scan_docs
from iodiag.knowledge.retrieval import rrf
from tests.conftest import TESTS

FIXTURES = TESTS / "data" / "knowledge" / "docs"

GOOD_FRONT = """---
id: {id}
title: "A title"
layer: POSIX
codes: [P06]
recommendations: [aggregate-small-requests]
facility: null
sources: []
updated: 2025-01-01
---
"""


@pytest.fixture(scope="module")
def onnx() -> OnnxMiniLM:
    return OnnxMiniLM()


def settings_for(data_dir: Path, docs: Path, **kw: Any) -> Settings:
    return Settings(data_dir=data_dir, knowledge_dir=docs, _env_file=None, **kw)  # type: ignore[call-arg]


def copy_fixtures(dst: Path) -> Path:
    shutil.copytree(FIXTURES, dst)
    return dst


# --- loader ----------------------------------------------------------------------------------------


def test_fixture_docs_load_with_their_sections() -> None:
    docs = {d.meta.id: d for d in load_docs(FIXTURES)}
    assert sorted(docs) == ["lustre-stripe-count", "perlmutter-scratch", "small-writes"]
    lustre = docs["lustre-stripe-count"]
    assert [c.chunk_id for c in lustre.chunks] == [
        "lustre-stripe-count#overview",
        "lustre-stripe-count#why-one-ost-is-a-bottleneck",
        "lustre-stripe-count#setting-the-stripe-count",
    ]
    assert all(c.title == "Lustre stripe count for shared files" for c in lustre.chunks)
    # The H1 repeats the title and is not part of the overview.
    assert not lustre.chunks[0].text.startswith("#")
    # A "## " line inside a code fence is code, not a heading.
    setting = lustre.chunks[2]
    assert "## this line is inside a code block" in setting.text
    assert "lfs getstripe" in setting.text
    assert setting.embedding_text().startswith("Lustre stripe count for shared files: Setting the stripe count\n")
    assert docs["perlmutter-scratch"].meta.facility == "NERSC"


def test_long_section_is_split_on_paragraph_boundaries() -> None:
    doc = load_doc(FIXTURES / "small-writes.md")
    parts = [c for c in doc.chunks if c.heading == "Aggregating writes"]
    assert len(parts) == 2
    assert [c.chunk_id for c in parts] == ["small-writes#aggregating-writes", "small-writes#aggregating-writes-2"]
    body = (FIXTURES / "small-writes.md").read_text().split("## Aggregating writes\n", 1)[1]
    paragraphs = [p.strip() for p in body.split("\n\n") if p.strip()]
    for part in parts:
        assert len(part.text.split()) <= MAX_CHUNK_WORDS
        assert all(p in paragraphs for p in part.text.split("\n\n"))  # whole paragraphs only
    assert sum(len(p.text.split("\n\n")) for p in parts) == len(paragraphs)


def test_a_single_huge_paragraph_is_cut_on_words() -> None:
    chunks = chunk_body("d", "T", "## H\n\n" + "word " * (2 * MAX_CHUNK_WORDS + 10))
    assert [len(c.text.split()) for c in chunks] == [MAX_CHUNK_WORDS, MAX_CHUNK_WORDS, 10]
    assert len({c.chunk_id for c in chunks}) == 3


def test_chunk_ids_are_unique_even_when_headings_collide() -> None:
    body = "## Foo\n\n" + "\n\n".join(["x " * 200] * 2) + "\n\n## Foo 2\n\ntext\n\n## Foo\n\nagain\n"
    ids = [c.chunk_id for c in chunk_body("d", "T", body)]
    assert len(ids) == len(set(ids)) == 4


def test_editing_one_section_keeps_the_other_chunk_ids(tmp_path: Path) -> None:
    docs = copy_fixtures(tmp_path / "docs")
    before = load_doc(docs / "lustre-stripe-count.md")
    path = docs / "lustre-stripe-count.md"
    path.write_text(path.read_text().replace("queue on one", "wait on one"))
    after = load_doc(path)
    assert [c.chunk_id for c in after.chunks] == [c.chunk_id for c in before.chunks]
    assert after.content_hash != before.content_hash
    assert after.chunks[1].text != before.chunks[1].text and after.chunks[2] == before.chunks[2]


@pytest.mark.parametrize(
    ("front", "expected"),
    [
        (GOOD_FRONT.replace("updated: 2025-01-01\n", ""), "field 'updated': Field required"),
        (GOOD_FRONT.replace("layer: POSIX\n", "layer: POSIX\ncolour: red\n"), "field 'colour'"),
        (GOOD_FRONT.replace("codes: [P06]", "codes: P06"), "field 'codes'"),
        (GOOD_FRONT.replace("id: {id}", "id: Not_An_Id"), "field 'id'"),
        (GOOD_FRONT.replace("id: {id}", "id: another-id"), "field 'id': 'another-id' does not match the file name"),
        (GOOD_FRONT.replace('title: "A title"', "title: [unclosed"), "not valid YAML"),
        ("no front matter here\n", "no front matter"),
        (GOOD_FRONT.replace("---\n", "", 2).replace("id:", "---\nid:"), "not closed"),
    ],
)
def test_a_bad_document_is_one_clear_error_naming_file_and_field(tmp_path: Path, front: str, expected: str) -> None:
    path = tmp_path / "bad-doc.md"
    path.write_text(front.replace("{id}", "bad-doc") + "\n## Section\n\nSome text.\n")
    with pytest.raises(DocError) as err:
        load_docs(tmp_path)
    msg = str(err.value)
    assert str(path) in msg and expected in msg
    assert "\n" not in msg


def test_scan_reports_every_bad_document_and_keeps_the_good_ones(tmp_path: Path) -> None:
    docs = copy_fixtures(tmp_path / "docs")
    (docs / "one.md").write_text(GOOD_FRONT.replace("{id}", "one").replace("layer: POSIX\n", "") + "text\n")
    (docs / "two.md").write_text(GOOD_FRONT.replace("{id}", "two"))  # front matter only
    good, problems = scan_docs(docs)
    assert len(good) == 3
    assert len(problems) == 2
    assert "one.md" in problems[0] and "field 'layer'" in problems[0]
    assert "two.md" in problems[1] and "no text" in problems[1]
    with pytest.raises(DocError, match=r"and 1 more problem"):
        load_docs(docs)


def test_missing_knowledge_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DocError, match="knowledge directory does not exist"):
        load_docs(tmp_path / "nowhere")


# --- BM25 and fusion -------------------------------------------------------------------------------


def test_tokenize_keeps_identifiers_and_folds_plurals() -> None:
    toks = tokenize("What does romio_cb_write do? Writes, writing and stripes on MPI-IO")
    assert "romio_cb_write" in toks and {"romio", "cb"} <= set(toks)
    assert toks.count("writ") == 3  # write (from romio_cb_write), writes, writing
    assert "strip" in toks and "what" not in toks and "mpi" in toks


def test_bm25_prefers_rare_terms_and_shorter_documents() -> None:
    docs = [
        tokenize("lustre stripe count for shared files"),
        tokenize("the stripe size of lustre files, the stripe size"),
        tokenize("hdf5 alignment of datasets " + "padding " * 30),
        tokenize("hdf5 alignment"),
    ]
    bm = BM25(docs)
    ranked = bm.rank(tokenize("stripe count"))
    assert [i for i, _ in ranked] == [0, 1]  # "count" is rarer than "stripe"
    assert [i for i, _ in bm.rank(tokenize("hdf5 alignment"))] == [3, 2]  # same terms, shorter wins
    assert bm.rank(tokenize("stripe count"), allowed={1, 2}) == [ranked[1]]
    assert bm.rank(tokenize("nothing matches")) == []


def test_rrf_matches_the_formula_and_breaks_ties_deterministically() -> None:
    fused = dict(rrf([[1, 2, 3], [3, 1]]))
    assert fused[1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2] == pytest.approx(1 / 62)
    assert [i for i, _ in rrf([[1, 2, 3], [3, 1]])] == [1, 3, 2]
    # 5 and 9 tie exactly; both were ranked first once, so the lower id goes first.
    assert [i for i, _ in rrf([[9], [5]])] == [5, 9]


# --- embedders -------------------------------------------------------------------------------------


def test_onnx_model_inputs_and_vectors(onnx: OnnxMiniLM) -> None:
    vecs = onnx.embed(["Stripe the shared file over eight OSTs.", "Aggregate small writes."])
    assert vecs.shape == (2, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    session, _ = onnx._load()
    assert {i.name for i in session.get_inputs()} == {"input_ids", "attention_mask", "token_type_ids"}


def test_onnx_similar_sentences_score_higher_than_unrelated(onnx: OnnxMiniLM) -> None:
    a, b, c, d = onnx.embed(
        [
            "How many OSTs should a big shared file be striped across?",
            "Use lfs setstripe -c to spread a large shared file over more object storage targets.",
            "The recipe needs two cups of flour and a pinch of salt.",
            "My job spends its time issuing millions of tiny write calls.",
        ]
    )
    assert float(a @ b) > 0.4
    assert float(a @ b) > float(a @ c) + 0.3
    assert float(a @ b) > float(a @ d)
    assert float(d @ b) > float(d @ c)


def test_onnx_pooling_ignores_padding(onnx: OnnxMiniLM) -> None:
    short = "collective buffering"
    alone = onnx.embed([short])[0]
    padded = onnx.embed([short, "a much longer sentence " * 20])[0]  # same batch: padded to the longest
    assert np.allclose(alone, padded, atol=1e-4)


def test_onnx_truncates_long_inputs(onnx: OnnxMiniLM) -> None:
    long = "stripe " * 1000
    v = onnx.embed([long, long + "extra words beyond the limit"])
    assert np.allclose(v[0], v[1], atol=1e-5)  # only the first 256 tokens count


def test_onnx_refuses_a_model_file_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    model, _ = minilm_files()
    altered = tmp_path / "model.onnx"
    data = bytearray(model.read_bytes())
    data[-1] ^= 0xFF
    altered.write_bytes(bytes(data))
    with pytest.raises(EmbeddingError, match=r"SHA-256 [0-9a-f]{64} is not the pinned"):
        OnnxMiniLM(model_path=altered).embed(["x"])


def test_onnx_refuses_a_tokenizer_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    _, zip_path = minilm_files()
    with zipfile.ZipFile(zip_path) as zf:
        tok = json.loads(zf.read("tokenizer.json"))
    tok["truncation"]["max_length"] = 64
    other = tmp_path / "model.zip"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("tokenizer.json", json.dumps(tok))
    with pytest.raises(EmbeddingError, match=r"tokenizer\.json SHA-256"):
        OnnxMiniLM(tokenizer_zip=other).embed(["x"])
    with pytest.raises(EmbeddingError, match="cannot read"):
        OnnxMiniLM(model_path=tmp_path / "missing.onnx").embed(["x"])


def test_sentence_transformers_missing_is_a_clear_error() -> None:
    import importlib.util

    if importlib.util.find_spec("sentence_transformers") is not None:
        pytest.skip("sentence-transformers is installed")
    with pytest.raises(EmbeddingError, match="needs the sentence-transformers package"):
        SentenceTransformersEmbedder("all-MiniLM-L6-v2").embed(["x"])
    with pytest.raises(EmbeddingError, match="IODIAG_EMBEDDING_MODEL"):
        SentenceTransformersEmbedder("")


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """A tiny OpenAI-compatible /v1/embeddings server; the vectors come from the ONNX model."""

    embedder: ClassVar[OnnxMiniLM]
    batches: ClassVar[list[int]] = []

    def do_POST(self) -> None:
        if self.path != "/v1/embeddings":
            return self._reply(404, {"error": {"message": "not found"}})
        if self.headers.get("Authorization") != "Bearer sekrit":
            return self._reply(401, {"error": {"message": "bad key"}})
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"]
        type(self).batches.append(len(texts))
        vecs = self.embedder.embed(texts) * 3.0  # unnormalized, as some servers return them
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)]
        self._reply(200, {"object": "list", "model": body["model"], "data": data[::-1]})  # out of order

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def embeddings_server(onnx: OnnxMiniLM) -> Iterator[str]:
    _EmbeddingsHandler.embedder = onnx
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_openai_provider_over_real_http(embeddings_server: str, onnx: OnnxMiniLM) -> None:
    texts = ["stripe count", "small writes", "collective buffering", "HDF5 alignment", "DXT tracing"]
    _EmbeddingsHandler.batches.clear()
    emb = OpenAIEmbedder(embeddings_server, "minilm", api_key="sekrit", batch_size=2)
    got = emb.embed(texts)
    assert _EmbeddingsHandler.batches == [2, 2, 1]
    assert np.allclose(got, onnx.embed(texts), atol=1e-5)  # order restored, normalized
    with pytest.raises(EmbeddingError, match="HTTP 401"):
        OpenAIEmbedder(embeddings_server, "minilm", api_key="wrong").embed(["x"])
    with pytest.raises(EmbeddingError, match="HTTP 404"):
        OpenAIEmbedder(embeddings_server + "/v2/embeddings", "minilm", api_key="sekrit").embed(["x"])
    with pytest.raises(EmbeddingError, match="IODIAG_EMBEDDING_MODEL"):
        OpenAIEmbedder(embeddings_server, "")


def test_openai_provider_unreachable_endpoint_is_a_clear_error() -> None:
    import socket

    with socket.socket() as s:  # a loopback port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(EmbeddingError, match=f"127.0.0.1:{port}/v1/embeddings: ConnectError"):
        OpenAIEmbedder(f"http://127.0.0.1:{port}", "m", timeout_s=5).embed(["x"])


def test_embeddings_endpoint_accepts_base_urls() -> None:
    assert embeddings_endpoint("http://h:8000") == "http://h:8000/v1/embeddings"
    assert embeddings_endpoint("http://h:8000/v1/") == "http://h:8000/v1/embeddings"
    assert embeddings_endpoint("http://h/api/v1/embeddings") == "http://h/api/v1/embeddings"


# --- the index -------------------------------------------------------------------------------------


def test_incremental_build(tmp_path: Path, onnx: OnnxMiniLM) -> None:
    docs_dir = copy_fixtures(tmp_path / "docs")
    index = tmp_path / "index"
    first = build_index(index, load_docs(docs_dir), onnx)
    assert first.full_rebuild and sorted(first.added) == ["lustre-stripe-count", "perlmutter-scratch", "small-writes"]
    n_chunks = sum(len(d.chunks) for d in load_docs(docs_dir))
    assert first.chunks_embedded == first.chunks_total == n_chunks
    col = get_collection(index)
    assert col.count() == n_chunks
    meta = col.get(ids=["lustre-stripe-count#setting-the-stripe-count"], include=["metadatas"])["metadatas"]
    assert meta is not None
    assert meta[0]["doc_id"] == "lustre-stripe-count" and meta[0]["layer"] == "Lustre"
    assert meta[0]["codes"] == "L01" and meta[0]["facility"] == "" and meta[0]["embedder"] == onnx.id
    assert meta[0]["content_hash"] == load_doc(docs_dir / "lustre-stripe-count.md").content_hash

    again = build_index(index, load_docs(docs_dir), onnx)
    assert not again.changed and again.chunks_embedded == 0 and len(again.unchanged) == 3

    path = docs_dir / "lustre-stripe-count.md"
    path.write_text(path.read_text().replace("## Setting the stripe count", "## Choosing the stripe count"))
    (docs_dir / "perlmutter-scratch.md").unlink()
    changed = build_index(index, load_docs(docs_dir), onnx)
    assert changed.updated == ["lustre-stripe-count"] and changed.removed == ["perlmutter-scratch"]
    assert changed.unchanged == ["small-writes"] and changed.chunks_embedded == 3
    ids = set(col.get()["ids"])
    assert "lustre-stripe-count#choosing-the-stripe-count" in ids
    assert not any(i.startswith("perlmutter-scratch#") or i.endswith("#setting-the-stripe-count") for i in ids)
    assert col.count() == sum(len(d.chunks) for d in load_docs(docs_dir))
    manifest = read_manifest(index)
    assert manifest is not None and sorted(manifest.docs) == ["lustre-stripe-count", "small-writes"]


def test_a_new_embedder_rebuilds_everything(tmp_path: Path, onnx: OnnxMiniLM, embeddings_server: str) -> None:
    docs_dir = copy_fixtures(tmp_path / "docs")
    kw: dict[str, Any] = {
        "embedding_model": "minilm",
        "embedding_url": embeddings_server,
        "embedding_api_key": "sekrit",
    }
    s = settings_for(tmp_path / "data", docs_dir)
    KnowledgeBase.open(s)
    s2 = settings_for(tmp_path / "data", docs_dir, embedding_provider="openai", **kw)
    with pytest.raises(KnowledgeIndexError, match="out of date"):
        KnowledgeBase.open(s2, build_if_missing=False)
    kb = KnowledgeBase.open(s2)
    col = get_collection(s2.knowledge_index_dir)
    metas = col.get(include=["metadatas"])["metadatas"] or []
    assert {m["embedder"] for m in metas} == {kb.embedder.id} and kb.embedder.id.startswith("openai:minilm@")
    assert kb.search("how many OSTs for a shared file", 1, mode="vector")[0].doc_id == "lustre-stripe-count"


def test_open_is_cheap_when_fresh_and_strict_when_asked(tmp_path: Path) -> None:
    docs_dir = copy_fixtures(tmp_path / "docs")
    s = settings_for(tmp_path / "data", docs_dir, embedding_batch_size=7)  # its own embedder instance
    with pytest.raises(KnowledgeIndexError, match="missing: run `iodiag knowledge build`"):
        KnowledgeBase.open(s, build_if_missing=False)
    build_index(s.knowledge_index_dir, load_docs(docs_dir), OnnxMiniLM())
    kb = KnowledgeBase.open(s, build_if_missing=False)
    assert isinstance(kb.embedder, OnnxMiniLM) and kb.embedder._session is None  # model not loaded yet
    kb.search("stripe count", mode="bm25")
    assert kb.embedder._session is None  # BM25 needs no model
    kb.search("stripe count")
    assert kb.embedder._session is not None


def test_knowledge_base_on_fixtures(tmp_path: Path) -> None:
    kb = KnowledgeBase.open(settings_for(tmp_path / "data", FIXTURES))
    assert [d.id for d in kb.docs()] == ["lustre-stripe-count", "perlmutter-scratch", "small-writes"]
    assert kb.get("small-writes").codes == ("P06",)
    with pytest.raises(KeyError, match="unknown knowledge document 'nope'"):
        kb.get("nope")
    with pytest.raises(UnknownDocError):
        kb.sections("nope")
    assert [d.id for d in kb.docs_for_finding("l01")] == ["lustre-stripe-count", "perlmutter-scratch"]
    assert [d.id for d in kb.docs_for_recommendation("aggregate-small-requests")] == ["small-writes"]
    assert kb.docs_for_finding("P99") == []

    hits = kb.search("How many OSTs should my shared output file use?", k=3)
    assert hits[0].doc_id == "lustre-stripe-count" and hits[0].why == "retrieved"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert kb.search("hdf5 alignment", mode="bm25") == []  # no fixture mentions either word
    assert kb.search("   ") == []

    # Filters apply to both rankings: only the allowed documents come back, in every mode.
    for mode in ("bm25", "vector", "hybrid"):
        assert {h.doc_id for h in kb.search("stripe", 10, layer="lustre", mode=mode)} == {"lustre-stripe-count"}
        assert {h.doc_id for h in kb.search("stripe", 10, code="P06", mode=mode)} <= {"small-writes"}
        nersc = {h.doc_id for h in kb.search("file system stripes", 10, facility="NERSC", mode=mode)}
        assert "perlmutter-scratch" in nersc
        assert "perlmutter-scratch" not in {h.doc_id for h in kb.search("stripes", 10, facility="OLCF", mode=mode)}
    assert kb.search("stripe", layer="HDF5") == []

    passages = kb.passages_for_finding("P06", "shared file stripes", k=3)
    assert passages[0].doc_id == "small-writes" and passages[0].why == "mapped"
    assert [p.why for p in passages[1:]] == ["retrieved", "retrieved"]
    assert len({p.doc_id for p in passages}) == 3
    # Without a query the finding's registered title ("Many small write requests") is used.
    assert kb.passages_for_finding("P06", k=1)[0].chunk_id.startswith("small-writes#")

    # The site's own guide comes first when the facility is known; general advice first when not;
    # another facility's guide never.
    def order(**kw: Any) -> list[tuple[str, str]]:
        return [(p.doc_id, p.why) for p in kb.passages_for_finding("L01", "stripe count", k=3, **kw)]

    assert order(facility="NERSC") == [
        ("perlmutter-scratch", "mapped"),
        ("lustre-stripe-count", "mapped"),
        ("small-writes", "retrieved"),
    ]
    assert order()[:2] == [("lustre-stripe-count", "mapped"), ("perlmutter-scratch", "mapped")]
    assert order(facility="OLCF") == [("lustre-stripe-count", "mapped"), ("small-writes", "retrieved")]


def test_langchain_retriever(tmp_path: Path) -> None:
    from langchain_core.documents import Document

    kb = KnowledgeBase.open(settings_for(tmp_path / "data", FIXTURES))
    docs = kb.as_retriever(k=2, facility="NERSC").invoke("Perlmutter scratch striping for big files")
    assert len(docs) == 2 and all(isinstance(d, Document) for d in docs)
    assert docs[0].metadata["doc_id"] == "perlmutter-scratch"
    assert docs[0].page_content.startswith("Perlmutter scratch file system — ")
    with pytest.raises(TypeError, match="unknown filter"):
        kb.as_retriever(colour="red")


_NET: dict[str, Any] = {"on": False, "attempts": []}


def _no_network(event: str, args: tuple[Any, ...]) -> None:
    if not _NET["on"]:
        return
    host = None
    if event == "socket.connect" and isinstance(args[1], tuple):
        host = str(args[1][0])
    elif event == "socket.getaddrinfo":
        host = str(args[0])
    if host is not None and host not in ("127.0.0.1", "::1", "localhost"):
        _NET["attempts"].append((event, host))
        raise OSError(f"network access to {host} during an offline test")


def test_default_stack_never_touches_the_network(tmp_path: Path) -> None:
    if not _NET.get("hooked"):
        sys.addaudithook(_no_network)  # audit hooks cannot be removed; this one is inert when off
        _NET["hooked"] = True
    _NET["on"] = True
    try:
        import socket

        with pytest.raises(OSError, match="during an offline test"):  # the guard is live
            socket.getaddrinfo("example.org", 443)
        _NET["attempts"] = []
        s = settings_for(tmp_path / "data", FIXTURES, embedding_batch_size=5)  # a fresh embedder: loads here
        kb = KnowledgeBase.open(s)
        assert kb.search("stripe count for a shared file")
        assert kb.passages_for_finding("L01")
    finally:
        _NET["on"] = False
    assert _NET["attempts"] == []


def test_cli_and_models_import_no_heavy_modules() -> None:
    import subprocess

    code = (
        "import sys, iodiag.cli.main, iodiag.knowledge.models\n"
        "print(sorted(m for m in ('chromadb', 'onnxruntime', 'langchain_core', 'numpy', 'tokenizers') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_finding_queries_are_ranked_at_build_as_chromadb_ranks_them(tmp_path: Path) -> None:
    """A finding's own query is answered from ranks written at build time (no chromadb import, no model load in a
    one-shot ``iodiag ask``), and those ranks are the ones chromadb gives."""
    from iodiag.knowledge.base import finding_queries
    from iodiag.knowledge.index import read_query_ranks

    s = settings_for(tmp_path / "data", FIXTURES)
    fresh = KnowledgeBase.open(s)  # builds the index and the ranks
    ranks = read_query_ranks(s.knowledge_index_dir)
    assert ranks is not None and set(ranks) == set(finding_queries())
    chunks = {ch.chunk_id for d in load_docs(FIXTURES) for ch in d.chunks}
    for query in ("L01 Shared file on too few OSTs", *sorted(ranks)[:5]):
        if query not in ranks:
            continue
        assert {cid for cid, _ in ranks[query]} == chunks
        via_ranks = [(i, round(sc, 4)) for i, sc in fresh._vector_rank(query, None, None)]
        fresh._ranked = {}  # the same question through chromadb
        via_chroma = [(i, round(sc, 4)) for i, sc in fresh._vector_rank(query, None, None)]
        fresh._ranked = None
        assert [i for i, _ in via_ranks] == [i for i, _ in via_chroma]
        assert [sc for _, sc in via_ranks] == pytest.approx([sc for _, sc in via_chroma], abs=1e-3)
    # A rebuilt index (changed documents) makes the old ranks stale: they are not used.
    docs_dir = copy_fixtures(tmp_path / "docs2")
    s2 = settings_for(tmp_path / "data2", docs_dir)
    KnowledgeBase.open(s2)
    assert read_query_ranks(s2.knowledge_index_dir) is not None
    (docs_dir / "small-writes.md").write_text(
        (docs_dir / "small-writes.md").read_text(encoding="utf-8") + "\nMore words.\n", encoding="utf-8"
    )
    build_index(s2.knowledge_index_dir, load_docs(docs_dir), OnnxMiniLM())
    assert read_query_ranks(s2.knowledge_index_dir) is None


def test_ask_without_a_model_needs_neither_chromadb_nor_langchain() -> None:
    """`iodiag ask --no-model` on "why is my job slow?" answers from the report and the prebuilt ranks."""
    import subprocess

    from tests.conftest import wheel_log

    code = (
        "import sys\n"
        "import iodiag.cli.main\n"
        "from iodiag.cli.common import app\n"
        "try:\n"
        f"    app([\"ask\", {str(wheel_log('sample-badost.darshan'))!r}, 'Why is my job slow?', '--no-model'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('chromadb', 'langchain_core', 'llama_cpp') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout[-2000:] + out.stderr[-2000:]


def _doc(root: Path, doc_id: str, body: str) -> None:
    (root / f"{doc_id}.md").write_text(GOOD_FRONT.format(id=doc_id) + body)


def test_a_named_counter_or_a_definition_question_finds_the_section_that_defines_it(tmp_path: Path) -> None:
    """'What does DARSHAN_MODMEM do?' and 'what is darshan?' name something every page mentions in common
    words; the section that spells the name, or is headed "What X is", answers them."""
    from iodiag.knowledge.base import identifiers

    assert identifiers("what does DARSHAN_MODMEM do? and H5Pset_alignment, cb_nodes") == [
        "DARSHAN_MODMEM",
        "H5Pset_alignment",
        "cb_nodes",
    ]
    assert identifiers("what is darshan? file-per-process, io_x") == []
    docs = tmp_path / "docs"
    docs.mkdir()
    talk = "Darshan logs show darshan counters; read the darshan log with darshan-parser. " * 6
    _doc(docs, "reading", f"# Reading logs\n\n## Reading a Darshan log\n\n{talk}\n\n## Darshan versions\n\n{talk}\n")
    _doc(
        docs,
        "instrumenting",
        "# Instrumenting\n\n## What Darshan is\n\nA lightweight I/O characterization library that records how "
        "each process used each file.\n\n## Memory\n\nRaise DARSHAN_MODMEM (MiB of module memory) when records "
        "run out.\n",
    )
    _doc(
        docs,
        "access",
        "# Access order\n\n## Sequential requests\n\nSequential requests (`POSIX_SEQ_READS` / `_WRITES`) start at "
        "or after the end of the previous one.\n\n## Darshan and order\n\n" + talk + "\n",
    )
    kb = KnowledgeBase.open(settings_for(tmp_path / "data", docs))
    first = kb.search("what is darshan?", k=1)[0]
    assert (first.doc_id, first.heading) == ("instrumenting", "What Darshan is")
    modmem = kb.search("what does DARSHAN_MODMEM do?", k=1)[0]
    assert (modmem.doc_id, modmem.heading) == ("instrumenting", "Memory")
    # No section spells POSIX_SEQ_WRITES; the one naming its family (POSIX_SEQ_) does.
    seq = kb.search("what does POSIX_SEQ_WRITES mean?", k=1)[0]
    assert (seq.doc_id, seq.heading) == ("access", "Sequential requests")
    # A question that defines nothing and names nothing keeps the fused ranking.
    assert kb.search("darshan log counters", k=1)[0].doc_id == "reading"


def test_a_new_data_directory_starts_from_the_prebuilt_seed_and_a_stale_seed_is_not_used(tmp_path: Path) -> None:
    docs_dir = copy_fixtures(tmp_path / "docs")
    seed = tmp_path / "seed"
    # What `iodiag knowledge build --seed` does at install: the seed is a data directory's index of its own.
    assert (
        KnowledgeBase.ensure_index(settings_for(tmp_path / "installer", docs_dir, knowledge_seed_dir=None)) == "built"
    )
    shutil.copytree(tmp_path / "installer" / "knowledge-index", seed)
    fresh = settings_for(tmp_path / "new", docs_dir, knowledge_seed_dir=seed)
    assert KnowledgeBase.ensure_index(fresh) == "copied"
    assert KnowledgeBase.ensure_index(fresh) == "fresh"
    kb = KnowledgeBase.open(fresh, build_if_missing=False)  # usable as it is: nothing left to build
    assert kb.search("small writes", k=1)
    assert not list(tmp_path.glob("new/knowledge-index.*"))  # no copy left beside it
    # Documents changed since the install: the seed is stale, so this data directory is built instead.
    (docs_dir / "small-writes.md").write_text(
        (docs_dir / "small-writes.md").read_text(encoding="utf-8") + "\nMore words.\n", encoding="utf-8"
    )
    assert KnowledgeBase.ensure_index(settings_for(tmp_path / "newer", docs_dir, knowledge_seed_dir=seed)) == "built"
