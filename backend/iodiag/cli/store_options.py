"""The options that point a command at the service's store, shared by ``serve``, ``token``, ``batch``…"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from iodiag.core.settings import Settings

DataDir = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Database and stored logs (default: IODIAG_DATA_DIR).", show_default=False),
]
DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        help="SQLAlchemy URL (default: IODIAG_DATABASE_URL, else SQLite in the data dir).",
        show_default=False,
    ),
]


def settings_for(data_dir: Path | None = None, database_url: str | None = None, **overrides: Any) -> Settings:
    """Settings from the environment, with the options the user gave (None: not given) on top."""
    from iodiag.core.settings import Settings

    given: dict[str, Any] = {k: v for k, v in overrides.items() if v is not None}
    if data_dir is not None:
        given["data_dir"] = data_dir
    if database_url is not None:
        given["database_url"] = database_url
    return Settings(**given)
