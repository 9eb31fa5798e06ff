"""Tuning knowledge: documents, their index, and retrieval (issue 5)."""
