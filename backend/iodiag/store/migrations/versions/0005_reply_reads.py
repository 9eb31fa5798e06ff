"""How far each person has read each reply thread (unread markers on both sides).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reply_reads",
        sa.Column("analysis_id", sa.String(length=36), nullable=False),
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("last_seen_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["analysis_id"], ["analyses.id"], name=op.f("fk_reply_reads_analysis_id_analyses"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("analysis_id", "user", name=op.f("pk_reply_reads")),
    )


def downgrade() -> None:
    op.drop_table("reply_reads")
