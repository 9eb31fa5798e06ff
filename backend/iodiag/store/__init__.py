"""Persistence: the database (SQLAlchemy 2 models, Alembic migrations, repository functions) and the
content-addressed store of uploaded logs.

Routes and workers never build queries themselves; they call the repository modules
(``analyses``, ``queue``, ``tokens``, ``chat``) with a session from ``Database``.
"""

from iodiag.store.blobs import BlobStore, BlobTooLarge
from iodiag.store.db import Database

__all__ = ["BlobStore", "BlobTooLarge", "Database"]
