"""Typed service settings, read from the environment (``IODIAG_*``) or a ``.env`` file.

Every component (embeddings, vector store, model, database) is chosen here, so a site changes a
setting rather than code. The defaults are embedded and offline: SQLite, chromadb on disk, the
bundled ONNX embedder and the bundled GGUF model.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[3]


def _default_data_dir() -> Path:
    return Path.home() / ".local" / "share" / "iodiag"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="IODIAG_", env_nested_delimiter="__", env_file=".env", extra="ignore")

    data_dir: Path = Field(
        default_factory=_default_data_dir,
        description="Where the database, the uploaded logs and the knowledge index live.",
    )
    knowledge_dir: Path = Field(
        default=REPO_ROOT / "knowledge" / "docs", description="The Markdown tuning documents the index is built from."
    )
    knowledge_seed_dir: Path | None = Field(
        default=Path(sys.prefix) / "share" / "iodiag" / "knowledge-index",
        description="A prebuilt knowledge index (made at install by `iodiag knowledge build --seed`): a new data "
        "directory starts from a copy of it instead of embedding every document before the first answer",
    )
    prompts_dir: Path = Field(default=REPO_ROOT / "prompts", description="Versioned prompt templates.")

    # Embeddings: the bundled int8 all-MiniLM-L6-v2 through onnxruntime; or a sentence-transformers model
    # name/path; or an OpenAI-compatible /v1/embeddings endpoint.
    embedding_provider: Literal["onnx-minilm", "sentence-transformers", "openai"] = "onnx-minilm"
    embedding_model: str = ""
    embedding_url: str = ""
    embedding_api_key: str = ""
    embedding_batch_size: int = Field(default=16, ge=1, description="Texts per embedding call.")
    embedding_threads: int = Field(default=0, ge=0, description="onnxruntime threads (0: its default).")
    embedding_timeout_s: float = Field(default=30.0, gt=0, description="Per-request limit of the openai provider.")

    # The narrating model: the bundled GGUF, any local GGUF, an OpenAI-compatible chat endpoint, or none.
    # "none" (the template route) by default: measured on evals/answers/, no first draft of the bundled
    # SmolLM2-135M answered the question and passed the verifier (0 of 37; 43 % invented something, all
    # caught), at a median of 15 s against 0.02 s. A larger model is opt-in.
    llm_provider: Literal["llamacpp", "openai", "none"] = "none"
    llm_model_path: str = ""
    llm_url: str = ""
    llm_api_key: str = ""
    llm_model_name: str = ""
    llm_context_tokens: int = 4096
    llm_max_answer_tokens: int = 400
    llm_timeout_s: float = 60.0
    llm_threads: int = 0
    llm_temperature: float = Field(
        default=0.2,
        ge=0.0,
        le=2.0,
        description="Sampling temperature; low keeps a small model close to the facts it is given.",
    )
    llm_seed: int = Field(default=0, description="Sampling seed, so the same question gets the same answer.")

    # The REST service (``iodiag serve``).
    database_url: str = Field(
        default="",
        description="SQLAlchemy URL; empty means SQLite at data_dir/iodiag.db. "
        "PostgreSQL: postgresql+psycopg://user:pass@host/db",
    )
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    max_upload_bytes: int = Field(default=1 << 30, ge=1, description="largest accepted log (bytes)")
    allowed_log_dirs: list[Path] = Field(
        default_factory=list,
        description="directories hook tokens may name server-side paths under (symlinks resolved); empty: none",
    )
    workers: int = Field(default=2, ge=0, le=256, description="analysis worker processes (0: submit only)")
    job_timeout_s: float = Field(default=600.0, gt=0, description="wall-clock limit of one analysis")
    job_memory_limit_bytes: int = Field(
        default=4 << 30, ge=64 << 20, description="resident memory limit of one analysis worker"
    )
    job_max_attempts: int = Field(default=3, ge=1, description="a job whose worker dies this often fails")
    max_inflation_ratio: float = Field(
        default=150.0, gt=1, description="a log may inflate to this many times its size (decompression bombs)"
    )
    min_inflation_mib: float = Field(
        default=32.0, gt=0, description="inflated size any log may reach, whatever its size"
    )
    token_cache_s: float = Field(
        default=5.0, ge=0, description="how long a checked token is believed without asking the database"
    )
    auth_failure_burst: int = Field(
        default=20, ge=1, description="failed authentications a client address may make at once"
    )
    auth_failures_per_s: float = Field(
        default=2.0, gt=0, description="then this many a second; beyond, 429 with Retry-After"
    )
    user_concurrency: int = Field(
        default=1, ge=1, description="running analyses per owner while other owners' logs wait (fair share)"
    )
    thresholds_file: Path | None = Field(default=None, description="site thresholds (TOML) for every analysis")
    job_read_dxt: bool = Field(default=True, description="read DXT traces (T findings, timeline plots)")
    lease_s: float = Field(default=30.0, gt=0, description="a running job not heartbeated for this long is re-queued")
    heartbeat_s: float = Field(default=5.0, gt=0)
    poll_s: float = Field(default=1.0, gt=0, description="how often idle workers look for queued jobs")
    chat_timeout_s: float = Field(default=120.0, gt=0, description="limit of one chat answer")
    chat_concurrency: int = Field(default=2, ge=1, description="chat answers computed at once")
    chat_per_user: int = Field(
        default=1, ge=1, description="answers one user may have computed at once; their other questions wait their turn"
    )
    trust_proxy_header: bool = Field(default=False, description="take the user from proxy_user_header (SSO)")
    proxy_user_header: str = "X-Remote-User"
    trusted_proxies: list[str] = Field(
        default_factory=list, description="peer addresses or CIDRs whose proxy_user_header is believed; empty: none"
    )
    metrics_public: bool = Field(default=True, description="serve /metrics without a token (aggregates only)")

    @property
    def knowledge_index_dir(self) -> Path:
        return self.data_dir / "knowledge-index"

    dask_scheduler: str = Field(
        default="",
        description="tcp://host:8786: run the service's analyses on this Dask "
        "cluster (empty: in the service's own worker processes)",
    )

    @property
    def effective_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.data_dir / 'iodiag.db'}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
