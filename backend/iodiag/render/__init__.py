"""Renderers: a ``Report`` as text (rich), Markdown, one self-contained HTML page, or JSON.

``render`` and ``render_many`` pick the renderer by format name; the modules can also be used
directly. Importing this package imports the analysis models (pydantic and numpy, not pandas): callers
that must start fast import it lazily.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import TypeAdapter

from iodiag.analysis.models import Report

if TYPE_CHECKING:
    from iodiag.analysis.plots.data import PlotData

Format = Literal["text", "json", "markdown", "html"]
FORMATS: tuple[Format, ...] = ("text", "json", "markdown", "html")
EXTENSIONS: dict[str, str] = {"text": ".txt", "json": ".json", "markdown": ".md", "html": ".html"}

_REPORTS = TypeAdapter(list[Report])


def render_json(report: Report) -> str:
    return report.model_dump_json(indent=2) + "\n"


def render_json_many(reports: Sequence[Report]) -> str:
    return _REPORTS.dump_json(list(reports), indent=2).decode("utf-8") + "\n"


def render(report: Report, fmt: str, *, width: int = 100, color: bool = False, plots: PlotData | None = None) -> str:
    """One report in ``fmt`` (one of ``FORMATS``). Each renderer is imported only when used.

    ``plots`` (``iodiag.analysis.plots.data.plot_data``) adds the plots to the HTML page; the other formats ignore it.
    """
    if fmt == "text":
        from iodiag.render.text import render_text

        return render_text(report, width=width, color=color)
    if fmt == "json":
        return render_json(report)
    if fmt == "markdown":
        from iodiag.render.markdown import render_markdown

        return render_markdown(report)
    if fmt == "html":
        from iodiag.render.html import render_html

        return render_html(report, plots)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def render_many(
    reports: Sequence[Report],
    fmt: str,
    names: Sequence[str] | None = None,
    *,
    width: int = 100,
    color: bool = False,
    plots: Sequence[PlotData | None] | None = None,
) -> str:
    """Several reports as one document: a JSON array, or a summary table followed by each report.

    ``plots[i]``, the plot data of ``reports[i]``, adds its plots to the HTML document.
    """
    if fmt == "text":
        from iodiag.render.text import render_text_many

        return render_text_many(reports, names, width=width, color=color)
    if fmt == "json":
        return render_json_many(reports)
    if fmt == "markdown":
        from iodiag.render.markdown import render_markdown_many

        return render_markdown_many(reports, names)
    if fmt == "html":
        from iodiag.render.html import render_html_many

        return render_html_many(reports, names, plots)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def report_schema() -> dict[str, object]:
    """The JSON Schema of ``Report`` (checked in as docs/report.schema.json)."""
    return Report.model_json_schema()


__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "Format",
    "render",
    "render_html",
    "render_json",
    "render_many",
    "render_markdown",
    "render_text",
    "report_schema",
]
