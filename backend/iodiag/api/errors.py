"""Every error the API sends is JSON ``{"detail": "one line"}``, whatever raised it."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from iodiag.services.intake import Rejected

log = logging.getLogger("iodiag.api")


def one_line(text: object, limit: int = 500) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _loc(loc: tuple[object, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body",)] or ["body"]
    return ".".join(parts)


def validation_detail(errors: list[object]) -> str:
    msgs = []
    for err in errors[:3]:
        if isinstance(err, dict):
            msgs.append(f"{_loc(tuple(err.get('loc', ())))}: {err.get('msg', 'invalid')}")
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return one_line("; ".join(msgs) + more or "invalid request")


def install(app: FastAPI) -> None:
    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"detail": one_line(exc.detail)}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": validation_detail(list(exc.errors()))}, status_code=422)

    @app.exception_handler(Rejected)
    async def _rejected(_: Request, exc: Rejected) -> JSONResponse:
        return JSONResponse({"detail": one_line(exc.detail)}, status_code=exc.status)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error on %s %s", request.method, request.url.path)
        return JSONResponse({"detail": "internal error"}, status_code=500)
