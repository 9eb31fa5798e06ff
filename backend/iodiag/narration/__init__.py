"""Narration: facts and documents into plain answers, every claim checked (issue 6).

The public API is :class:`Narrator` (``iodiag.narration.service``); what crosses the boundary is in
``iodiag.narration.models``. Where things are:

- ``intent/`` classifies the question; ``fact_query/`` answers plain fact questions from the report's
  numbers; ``composer.py`` plans an answer and ``templates.py`` writes it without a model.
- ``checking/`` turns the report into facts, and checks every sentence of an answer against them.
- ``model/`` runs the chat model (bundled llama.cpp or an endpoint); ``budget.py`` fits the prompt to its
  window; ``rephrase.py`` lets it reword a checked answer; ``tools/`` are the typed tools it may call.
- Prompt text lives in ``prompts/`` at the top of the repository (loaded by ``prompts.py``).

``Narrator`` is exported lazily, so importing the models does not import langchain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iodiag.narration.service import Narrator

__all__ = ["Narrator"]


def __getattr__(name: str) -> Any:
    if name == "Narrator":
        from iodiag.narration.service import Narrator

        return Narrator
    raise AttributeError(f"module 'iodiag.narration' has no attribute {name!r}")
