"""Tuning knowledge: documents, their index, and retrieval.

The public API is :class:`KnowledgeBase` (``iodiag.knowledge.base``); the models that cross the boundary are
:class:`DocMeta` and :class:`Passage` (``iodiag.knowledge.models``). Import them from their modules: importing
the models does not import numpy and the index code.
"""
