"""Triage by impact (the run's nodes and the seconds its causes cost) and a reply thread per analysis.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("analyses", schema=None) as batch_op:
        batch_op.add_column(sa.Column("run_nodes", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("time_lost_s", sa.Float(), nullable=True))
    op.create_table(
        "replies",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("analysis_id", sa.String(length=36), nullable=False),
        sa.Column("author", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("drafted", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["analysis_id"], ["analyses.id"], name=op.f("fk_replies_analysis_id_analyses"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_replies")),
    )
    with op.batch_alter_table("replies", schema=None) as batch_op:
        batch_op.create_index("ix_replies_analysis_id_id", ["analysis_id", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("replies", schema=None) as batch_op:
        batch_op.drop_index("ix_replies_analysis_id_id")
    op.drop_table("replies")
    with op.batch_alter_table("analyses", schema=None) as batch_op:
        batch_op.drop_column("time_lost_s")
        batch_op.drop_column("run_nodes")
