"""Narration: facts and documents into plain answers, every claim checked (issue 6)."""
