"""Escaping for HTML and SVG: the one place text from a log (file names, executables, hints) becomes safe to put
in a page or a picture. Every renderer of markup uses ``e``."""

from __future__ import annotations

from html import escape


def e(value: object) -> str:
    """Escape anything for HTML or SVG text and attribute values (quotes included)."""
    return escape(str(value), quote=True)
