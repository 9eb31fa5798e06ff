"""Narration: facts and documents into plain answers, every claim checked (issue 6).

The public API is :class:`Narrator` (``iodiag.narration.service``); what crosses the boundary is in
``iodiag.narration.models``. Where things are: ``composer.py`` plans an answer (``intents.py`` classifies
the question, ``facts.py`` turns the report into facts, ``fact_query/`` answers plain fact questions from the
report's numbers), ``budget.py`` fits the prompt to the window, ``llm.py`` runs the model, ``verifier.py``
checks the answer against ``grounding.py``, and ``templates.py`` writes answers without a model. Prompt
text lives in ``prompts/`` (``prompts.py``).
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
