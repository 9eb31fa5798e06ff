"""Run stats on each analysis (executable, start, run and I/O time, verdict): history, regressions, triage.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("analyses", schema=None) as batch_op:
        batch_op.add_column(sa.Column("executable", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("run_start", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("nprocs", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("runtime_s", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("io_time_s", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("io_share", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("verdict_level", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("headline", sa.Text(), nullable=True))
        batch_op.create_index(batch_op.f("ix_analyses_executable"), ["executable"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("analyses", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_analyses_executable"))
        for name in (
            "headline",
            "verdict_level",
            "io_share",
            "io_time_s",
            "runtime_s",
            "nprocs",
            "run_start",
            "executable",
        ):
            batch_op.drop_column(name)
