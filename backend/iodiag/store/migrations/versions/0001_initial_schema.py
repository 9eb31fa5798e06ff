"""Initial schema: analyses, their findings and outputs, the job queue, API tokens, chat messages.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "analyses",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("submitted_by", sa.String(length=64), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("source", sa.String(length=8), nullable=False),
        sa.Column("source_path", sa.Text(), nullable=True),
        sa.Column("job_id", sa.String(length=64), nullable=True),
        sa.Column("exe", sa.Text(), nullable=True),
        sa.Column("nodes", sa.Integer(), nullable=True),
        sa.Column("cb_nodes", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("stage", sa.String(length=16), nullable=False),
        sa.Column("progress", sa.Float(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("analysis_s", sa.Float(), nullable=True),
        sa.Column("n_critical", sa.Integer(), nullable=False),
        sa.Column("n_warning", sa.Integer(), nullable=False),
        sa.Column("n_info", sa.Integer(), nullable=False),
        sa.Column("n_ok", sa.Integer(), nullable=False),
        sa.Column("max_severity", sa.String(length=16), nullable=True),
        sa.Column("triage_status", sa.String(length=16), nullable=False),
        sa.Column("triage_assignee", sa.String(length=64), nullable=True),
        sa.Column("triage_note", sa.Text(), nullable=True),
        sa.Column("triage_updated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("triage_updated_by", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_analyses")),
        sa.UniqueConstraint("owner", "sha256", name="uq_analyses_owner_sha256"),
    )
    with op.batch_alter_table("analyses", schema=None) as batch_op:
        batch_op.create_index("ix_analyses_created_at_id", ["created_at", "id"], unique=False)
        batch_op.create_index(batch_op.f("ix_analyses_job_id"), ["job_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_analyses_owner"), ["owner"], unique=False)
        batch_op.create_index(batch_op.f("ix_analyses_sha256"), ["sha256"], unique=False)
        batch_op.create_index(batch_op.f("ix_analyses_status"), ["status"], unique=False)
        batch_op.create_index(batch_op.f("ix_analyses_triage_status"), ["triage_status"], unique=False)

    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("note", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_api_tokens_user"), ["user"], unique=False)

    op.create_table(
        "analysis_findings",
        sa.Column("analysis_id", sa.String(length=36), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(length=8), nullable=False),
        sa.Column("severity", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["analysis_id"], ["analyses.id"], name=op.f("fk_analysis_findings_analysis_id_analyses"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("analysis_id", "position", name=op.f("pk_analysis_findings")),
    )
    with op.batch_alter_table("analysis_findings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_analysis_findings_code"), ["code"], unique=False)

    op.create_table(
        "analysis_outputs",
        sa.Column("analysis_id", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["analysis_id"], ["analyses.id"], name=op.f("fk_analysis_outputs_analysis_id_analyses"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("analysis_id", "kind", name=op.f("pk_analysis_outputs")),
    )
    op.create_table(
        "chat_messages",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("analysis_id", sa.String(length=36), nullable=False),
        sa.Column("user", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("answer_json", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["analysis_id"], ["analyses.id"], name=op.f("fk_chat_messages_analysis_id_analyses"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_messages")),
    )
    with op.batch_alter_table("chat_messages", schema=None) as batch_op:
        batch_op.create_index("ix_chat_messages_analysis_id_user", ["analysis_id", "user", "id"], unique=False)

    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("analysis_id", sa.String(length=36), nullable=False),
        sa.Column("lease_owner", sa.String(length=128), nullable=True),
        sa.Column("lease_expires", sa.Float(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("enqueued_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(
            ["analysis_id"], ["analyses.id"], name=op.f("fk_jobs_analysis_id_analyses"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
        sa.UniqueConstraint("analysis_id", name=op.f("uq_jobs_analysis_id")),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index("ix_jobs_lease_owner_id", ["lease_owner", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_jobs_lease_owner_id")

    op.drop_table("jobs")
    with op.batch_alter_table("chat_messages", schema=None) as batch_op:
        batch_op.drop_index("ix_chat_messages_analysis_id_user")

    op.drop_table("chat_messages")
    op.drop_table("analysis_outputs")
    with op.batch_alter_table("analysis_findings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_analysis_findings_code"))

    op.drop_table("analysis_findings")
    with op.batch_alter_table("api_tokens", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_tokens_user"))

    op.drop_table("api_tokens")
    with op.batch_alter_table("analyses", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_analyses_triage_status"))
        batch_op.drop_index(batch_op.f("ix_analyses_status"))
        batch_op.drop_index(batch_op.f("ix_analyses_sha256"))
        batch_op.drop_index(batch_op.f("ix_analyses_owner"))
        batch_op.drop_index(batch_op.f("ix_analyses_job_id"))
        batch_op.drop_index("ix_analyses_created_at_id")

    op.drop_table("analyses")
