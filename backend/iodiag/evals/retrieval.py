"""Retrieval eval: do realistic questions find the documents that answer them?

The corpus (``evals/retrieval/queries.yaml``) pairs user questions with the document id(s) that
must be retrieved. Each question runs in three modes (BM25 only, vector only, hybrid) and is scored
on the top ``k`` passages: recall@k is the share of a question's expected documents among the
documents of those passages (averaged over questions); MRR is the mean of 1/rank of the first
passage from an expected document within the top :data:`MRR_DEPTH` (0 when none is there).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from iodiag.core.settings import REPO_ROOT
from iodiag.knowledge.retrieval import MODES, Mode

if TYPE_CHECKING:
    from rich.console import Console

    from iodiag.knowledge.base import KnowledgeBase

DEFAULT_QUERIES = REPO_ROOT / "evals" / "retrieval" / "queries.yaml"
MRR_DEPTH = 10


class EvalCorpusError(ValueError):
    """The queries file is unreadable, malformed, or expects documents that do not exist."""


class EvalQuery(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    q: str = Field(min_length=3)
    expect: tuple[str, ...] = Field(min_length=1)
    layer: str | None = None
    code: str | None = None
    facility: str | None = None


class QueryCorpus(BaseModel):
    model_config = ConfigDict(extra="forbid")

    queries: list[EvalQuery] = Field(min_length=1)


class QueryResult(BaseModel):
    q: str
    expect: tuple[str, ...]
    retrieved: list[str]  # document ids of the top-k passages, in rank order (repeats kept)
    missing: list[str]
    recall: float
    reciprocal_rank: float


class ModeScore(BaseModel):
    mode: Mode
    recall_at_k: float
    mrr: float
    misses: list[QueryResult]


class RetrievalEval(BaseModel):
    k: int
    queries: int
    docs: int
    modes: list[ModeScore]

    def score(self, mode: Mode) -> ModeScore:
        return next(m for m in self.modes if m.mode == mode)


def load_queries(path: Path = DEFAULT_QUERIES) -> list[EvalQuery]:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvalCorpusError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise EvalCorpusError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    try:
        return QueryCorpus.model_validate(raw).queries
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise EvalCorpusError(f"{path}: {where}: {err['msg']}") from None


def _score_one(kb: KnowledgeBase, query: EvalQuery, mode: Mode, k: int) -> QueryResult:
    hits = kb.search(query.q, max(k, MRR_DEPTH), layer=query.layer, code=query.code, facility=query.facility, mode=mode)
    ranked = [p.doc_id for p in hits]
    top = ranked[:k]
    missing = [d for d in query.expect if d not in top]
    rank = next((i for i, d in enumerate(ranked[:MRR_DEPTH], start=1) if d in query.expect), None)
    return QueryResult(
        q=query.q,
        expect=query.expect,
        retrieved=top,
        missing=missing,
        recall=1 - len(missing) / len(query.expect),
        reciprocal_rank=1 / rank if rank else 0.0,
    )


def evaluate(kb: KnowledgeBase, queries: list[EvalQuery], k: int = 5) -> RetrievalEval:
    known = {d.id for d in kb.docs()}
    unknown = sorted({d for q in queries for d in q.expect if d not in known})
    if unknown:
        raise EvalCorpusError(f"queries expect documents that do not exist: {', '.join(unknown)}")
    modes = []
    for mode in MODES:
        results = [_score_one(kb, q, mode, k) for q in queries]
        modes.append(
            ModeScore(
                mode=mode,
                recall_at_k=sum(r.recall for r in results) / len(results),
                mrr=sum(r.reciprocal_rank for r in results) / len(results),
                misses=[r for r in results if r.missing],
            )
        )
    return RetrievalEval(k=k, queries=len(queries), docs=len(known), modes=modes)


def print_eval(result: RetrievalEval, console: Console, *, show_misses: bool = True) -> None:
    from rich.text import Text

    from iodiag.evals.tables import results_table

    table = results_table(
        f"Retrieval: {result.queries} questions, {result.docs} documents",
        ("mode", f"recall@{result.k}", f"MRR@{MRR_DEPTH}", "questions missed"),
    )
    for m in result.modes:
        table.add_row(m.mode, f"{m.recall_at_k:.3f}", f"{m.mrr:.3f}", str(len(m.misses)))
    console.print(table)
    if not show_misses:
        return
    for m in result.modes:
        if not m.misses:
            continue
        console.print(Text(f"\n{m.mode} misses:", style="bold"))
        for r in m.misses:
            console.print(Text(f"  {r.q!r}: missing {', '.join(r.missing)}; got {', '.join(r.retrieved) or 'nothing'}"))
