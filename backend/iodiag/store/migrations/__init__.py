"""Alembic migrations, run programmatically at start-up (``iodiag.store.migrate``); no alembic.ini.

New revision (from ``backend/``)::

    ../.venv/bin/python -m iodiag.store.migrate revision "what changed"
"""
