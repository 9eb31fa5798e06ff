"""What goes wrong with a model, shared by ``llm.py`` and the model process's client (``model/process.py``)."""

from __future__ import annotations

from typing import Literal

Role = Literal["system", "user", "assistant"]


class LLMError(RuntimeError):
    """The model could not answer: not loadable, failed mid-stream, busy, or out of time."""


class LLMTimeout(LLMError):
    pass


class ModelCrashed(RuntimeError):
    """The model's process died while it answered. Not an :class:`LLMError`: the question gets an error of its
    own instead of a quiet fallback, and the process is started again for the next question."""
