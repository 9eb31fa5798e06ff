"""Alembic environment: always handed an open connection by ``iodiag.store.migrate``."""

from __future__ import annotations

from alembic import context

from iodiag.store.models import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
