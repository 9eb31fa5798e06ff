"""The REST API (FastAPI): ``create_app(settings)``; routes in ``routes/``, dependencies in ``deps``.

Every request and response body is a pydantic model in ``schemas``; every error is JSON
``{"detail": "one line"}``.
"""

from iodiag.api.app import create_app

__all__ = ["create_app"]
