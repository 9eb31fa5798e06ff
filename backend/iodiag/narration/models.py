"""What crosses the narration layer's boundary: chat turns, streamed chunks, answers and their provenance."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Provenance = Literal["model", "model-repaired", "template"]


class ChatTurn(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["user", "assistant"]
    text: str


class Citation(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal["finding", "doc"]
    id: str  # a finding code (P08) or a knowledge document id
    title: str = ""


class Violation(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: str  # e.g. unknown-number, unknown-code, unknown-doc, unknown-file, unknown-rank, absent-issue, unsupported
    text: str  # the offending token or sentence
    detail: str = ""


class VerifierReport(BaseModel):
    passed: bool
    violations: list[Violation] = Field(default_factory=list)
    sentences_total: int = 0
    sentences_removed: int = 0
    attempts: int = 0  # model generations tried (0 for the template route)


class Answer(BaseModel):
    text: str
    intent: str  # the composer's classification of the question
    citations: list[Citation] = Field(default_factory=list)
    provenance: Provenance
    model: str | None = None  # the model's name when a model produced the text
    verifier: VerifierReport
    elapsed_s: float = 0.0
    note: str = ""  # why the template answered when a model was configured (timeout, load failure, verification)


class AnswerChunk(BaseModel):
    """One streamed piece of an answer. The last chunk has ``final`` set and carries the whole checked answer.

    Streamed text has passed the verifier sentence by sentence and is never withdrawn; the final answer's text
    is the streamed text (the template's answer follows it when the model's did not answer the question).
    """

    delta: str = ""
    final: bool = False
    answer: Answer | None = None
