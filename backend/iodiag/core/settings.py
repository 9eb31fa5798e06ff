"""Typed service settings, read from the environment (``IODIAG_*``) or a ``.env`` file.

Every component (embeddings, vector store, model, database) is chosen here, so a site changes a
setting rather than code. The defaults are embedded and offline: SQLite, chromadb on disk, the
bundled ONNX embedder and the bundled GGUF model.
"""

from __future__ import annotations

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

    data_dir: Path = Field(default_factory=_default_data_dir, description="Where the database, the uploaded logs "
                           "and the knowledge index live.")
    knowledge_dir: Path = Field(default=REPO_ROOT / "knowledge" / "docs",
                                description="The Markdown tuning documents the index is built from.")
    prompts_dir: Path = Field(default=REPO_ROOT / "prompts", description="Versioned prompt templates.")

    # Embeddings: the bundled int8 all-MiniLM-L6-v2 through onnxruntime; or a sentence-transformers model
    # name/path; or an OpenAI-compatible /v1/embeddings endpoint.
    embedding_provider: Literal["onnx-minilm", "sentence-transformers", "openai"] = "onnx-minilm"
    embedding_model: str = ""
    embedding_url: str = ""
    embedding_api_key: str = ""

    # The narrating model: the bundled GGUF, any local GGUF, an OpenAI-compatible chat endpoint, or none.
    llm_provider: Literal["llamacpp", "openai", "none"] = "llamacpp"
    llm_model_path: str = ""
    llm_url: str = ""
    llm_api_key: str = ""
    llm_model_name: str = ""
    llm_context_tokens: int = 4096
    llm_max_answer_tokens: int = 400
    llm_timeout_s: float = 60.0
    llm_threads: int = 0

    @property
    def knowledge_index_dir(self) -> Path:
        return self.data_dir / "knowledge-index"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
