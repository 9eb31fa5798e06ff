"""``iodiag knowledge``: build, search, check and evaluate the tuning-knowledge index.

Registered on the main app by ``register(app)``; chromadb, onnxruntime and the documents are only
touched inside the commands, so ``iodiag --help`` stays fast.

Exit codes: 0 success; 1 the eval scored below ``--min-recall``, or an internal error; 2 a bad
document, a broken finding → document map, a bad queries file or a bad setting (one line each).
"""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from iodiag.cli.common import command_group

if TYPE_CHECKING:
    from rich.console import Console

    from iodiag.core.settings import Settings
    from iodiag.knowledge.index import BuildSummary

from iodiag.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE


class Format(StrEnum):
    text = "text"
    json = "json"


class SearchMode(StrEnum):
    hybrid = "hybrid"
    bm25 = "bm25"
    vector = "vector"


def _user_errors() -> tuple[type[Exception], ...]:
    from pydantic import ValidationError  # a bad IODIAG_* setting

    from iodiag.evals.retrieval import EvalCorpusError
    from iodiag.knowledge.embeddings import EmbeddingError
    from iodiag.knowledge.index import KnowledgeIndexError
    from iodiag.knowledge.loader import DocError

    return (DocError, EmbeddingError, KnowledgeIndexError, EvalCorpusError, ValidationError)


def _guard(exc: Exception) -> NoReturn:
    """Bad documents, settings or corpus: one line and exit 2; anything else: the main app's handling."""
    from iodiag.cli.common import CliError, fail

    if isinstance(exc, _user_errors()):
        fail(CliError(str(exc)))
    fail(exc)


def _stdout() -> Console:
    from rich.console import Console

    width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 100
    return Console(highlight=False, width=width, emoji=False)


def _settings() -> Settings:
    from iodiag.core.settings import Settings

    return Settings()


def _build_with_progress(settings: Settings, *, full: bool = False, into: Path | None = None) -> BuildSummary:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from iodiag.knowledge.base import finding_queries
    from iodiag.knowledge.embeddings import get_embedder
    from iodiag.knowledge.index import build_index, write_query_ranks
    from iodiag.knowledge.loader import load_docs

    docs = load_docs(settings.knowledge_dir)
    embedder = get_embedder(settings)
    err = Console(stderr=True)
    with Progress(
        TextColumn("embedding sections"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as bar:
        task = bar.add_task("embed", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        target = into or settings.knowledge_index_dir
        summary = build_index(target, docs, embedder, progress=progress, full=full)
    write_query_ranks(target, embedder, finding_queries())
    return summary


def build(
    full: Annotated[bool, typer.Option("--full", help="Re-embed every document, not only the changed ones.")] = False,
    seed: Annotated[
        bool,
        typer.Option(
            "--seed",
            help="Build the prebuilt index that new data directories start from (knowledge_seed_dir; done at "
            "install), not this data directory's.",
        ),
    ] = False,
) -> None:
    """Index the knowledge documents (incremental: only new and changed documents are embedded)."""
    try:
        settings = _settings()
        if seed and settings.knowledge_seed_dir is None:
            raise ValueError("no knowledge_seed_dir is set (IODIAG_KNOWLEDGE_SEED_DIR)")
        into = settings.knowledge_seed_dir if seed else None
        s = _build_with_progress(settings, full=full, into=into)
    except Exception as exc:
        _guard(exc)
    what = "full rebuild" if s.full_rebuild else "incremental"
    _stdout().print(
        f"knowledge index ({what}, {s.embedder}): {len(s.added)} added, {len(s.updated)} updated, "
        f"{len(s.removed)} removed, {len(s.unchanged)} unchanged; {s.chunks_embedded} of {s.chunks_total} "
        f"sections embedded in {s.seconds:.1f} s -> {into or settings.knowledge_index_dir}",
        soft_wrap=True,
    )


def search(
    query: Annotated[str, typer.Argument(help="A question or keywords.", show_default=False)],
    k: Annotated[int, typer.Option("-k", help="How many passages.", min=1)] = 5,
    layer: Annotated[
        str | None, typer.Option(help="Only documents of this layer (POSIX, MPI-IO, Lustre, ...).")
    ] = None,
    code: Annotated[str | None, typer.Option(help="Only documents that explain this finding code.")] = None,
    facility: Annotated[
        str | None, typer.Option(help="Only this facility's documents and the general ones (NERSC, OLCF, ALCF).")
    ] = None,
    mode: Annotated[SearchMode, typer.Option(help="Ranking.", case_sensitive=False)] = SearchMode.hybrid,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.", case_sensitive=False)] = Format.text,
) -> None:
    """Search the knowledge documents; prints the best passages, best first."""
    try:
        settings = _settings()
        from iodiag.knowledge.base import KnowledgeBase

        if not _fresh(settings):
            _build_with_progress(settings)
        kb = KnowledgeBase.open(settings)  # builds again, quietly, if documents changed meanwhile
        hits = kb.search(query, k, layer=layer, code=code, facility=facility, mode=mode.value)
    except Exception as exc:
        _guard(exc)
    if fmt == Format.json:
        sys.stdout.write(json.dumps([p.model_dump(mode="json") for p in hits], indent=1) + "\n")
        return
    from rich.text import Text

    out = _stdout()
    if not hits:
        out.print("no passage matches")
        return
    for n, p in enumerate(hits, start=1):
        where = f" [{p.facility}]" if p.facility else ""
        out.print(
            Text.assemble(
                (f"{n}. ", "bold"),
                (p.doc_id, "bold cyan"),
                f"  {p.title} › {p.heading}{where}",
                (f"  ({p.score:.4f})", "dim"),
            )
        )
        body = " ".join(p.text.split())
        out.print(Text("   " + (body if len(body) <= 400 else body[:400].rsplit(" ", 1)[0] + " …")))


def _fresh(settings: Settings) -> bool:
    """Whether the index matches the documents; if not, the command builds it with a progress bar."""
    from iodiag.knowledge.embeddings import get_embedder
    from iodiag.knowledge.index import is_fresh
    from iodiag.knowledge.loader import load_docs

    return is_fresh(settings.knowledge_index_dir, load_docs(settings.knowledge_dir), get_embedder(settings).id)


def check() -> None:
    """Validate every document and the finding → document map; one line per problem (exit 2 if any)."""
    try:
        settings = _settings()
        from iodiag.knowledge.consistency import check_knowledge, recommendation_ids, registered_codes

        problems = check_knowledge(settings.knowledge_dir)
    except Exception as exc:
        _guard(exc)
    if problems:
        from iodiag.cli.common import error_line

        for line in problems:
            error_line(line)
        raise typer.Exit(EXIT_USAGE)
    n_docs = len(list(settings.knowledge_dir.glob("*.md")))
    _stdout().print(
        f"ok: {n_docs} documents; all {len(registered_codes())} finding codes and "
        f"{len(recommendation_ids())} recommendation ids have a document",
        soft_wrap=True,
    )


def evaluate(
    queries: Annotated[
        Path | None,
        typer.Option(
            "--queries",
            "-q",
            help="Queries YAML (default: evals/retrieval/queries.yaml).",
            show_default=False,
            metavar="FILE",
        ),
    ] = None,
    k: Annotated[int, typer.Option("-k", help="Cut-off for recall.", min=1)] = 5,
    min_recall: Annotated[float, typer.Option(help="Exit 1 when hybrid recall@k is below this.")] = 0.9,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.", case_sensitive=False)] = Format.text,
) -> None:
    """Score retrieval on the labeled questions: recall@k, MRR and misses for BM25, vector and hybrid."""
    try:
        settings = _settings()
        from iodiag.evals.retrieval import DEFAULT_QUERIES, evaluate, load_queries, print_eval
        from iodiag.knowledge.base import KnowledgeBase

        corpus = load_queries(queries or DEFAULT_QUERIES)
        if not _fresh(settings):
            _build_with_progress(settings)
        kb = KnowledgeBase.open(settings)  # builds again, quietly, if documents changed meanwhile
        result = evaluate(kb, corpus, k)
    except Exception as exc:
        _guard(exc)
    if fmt == Format.json:
        sys.stdout.write(result.model_dump_json(indent=1) + "\n")
    else:
        print_eval(result, _stdout())
    raise typer.Exit(EXIT_OK if result.score("hybrid").recall_at_k >= min_recall else EXIT_FAILED)


def register(app: typer.Typer) -> None:
    """Add the ``knowledge`` command group to ``app``."""
    knowledge_app = command_group(
        app, "knowledge", "The tuning-knowledge index: build it, search it, check the documents, evaluate retrieval."
    )
    knowledge_app.command("build")(build)
    knowledge_app.command("search")(search)
    knowledge_app.command("check")(check)
    knowledge_app.command("eval")(evaluate)
