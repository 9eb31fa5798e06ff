"""The results table every eval prints: a title on the left, label columns left-aligned, numbers right-aligned."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.table import Table


def results_table(title: str, columns: Sequence[str], *, labels: int = 1, simple: bool = False) -> Table:
    """A table titled ``title`` whose first ``labels`` columns are left-aligned text and the rest right-aligned
    numbers; ``simple`` draws only a line under the header (the wide trigger and compare tables)."""
    from rich import box
    from rich.table import Table

    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD if simple else box.HEAVY_HEAD)
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i < labels else "right")
    return table
