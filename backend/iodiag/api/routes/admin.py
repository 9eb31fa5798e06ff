"""Settings view (admin), secrets redacted."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter

from iodiag.api import rows, schemas
from iodiag.api.deps import Admin, Ctx

router = APIRouter(prefix=rows.API, tags=["admin"])
_SECRET = ("key", "password", "secret", "token")


@router.get(
    "/settings",
    response_model=schemas.SettingsOut,
    summary="Service settings (secrets redacted)",
    responses={401: {"model": schemas.ErrorOut}, 403: {"model": schemas.ErrorOut}},
)
def settings_view(ctx: Ctx, who: Admin) -> schemas.SettingsOut:
    values: dict[str, str | int | float | bool | list[str] | None] = {}
    for name, value in ctx.settings.model_dump().items():
        if any(word in name for word in _SECRET):
            values[name] = "<redacted>" if value else ""
        elif name == "database_url":
            values[name] = ctx.db.redacted_url()
        elif isinstance(value, Path):
            values[name] = str(value)
        elif isinstance(value, list):
            values[name] = [str(v) for v in value]
        elif value is None or isinstance(value, str | int | float | bool):
            values[name] = value
        else:
            values[name] = str(value)
    return schemas.SettingsOut(values=values)
