"""The real knowledge documents (``knowledge/docs``): valid, mapped to every finding and
recommendation, and retrievable by the questions of ``evals/retrieval/queries.yaml``.

The index is built once for the module, in a temporary data directory, with the real ONNX
embedder and chromadb; the ``iodiag knowledge`` commands then run as subprocesses against it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iodiag.core.settings import REPO_ROOT, Settings
from iodiag.evals.retrieval import DEFAULT_QUERIES, evaluate, load_queries
from iodiag.knowledge.base import KnowledgeBase
from iodiag.knowledge.consistency import map_problems, recommendation_ids, registered_codes
from iodiag.knowledge.loader import Doc, load_docs, scan_docs
from tests.conftest import TESTS

DOCS = REPO_ROOT / "knowledge" / "docs"
FIXTURES = TESTS / "data" / "knowledge" / "docs"


@pytest.fixture(scope="module")
def docs() -> list[Doc]:
    good, problems = scan_docs(DOCS)
    assert problems == [], "\n".join(problems)
    return good


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("knowledge-data")


@pytest.fixture(scope="module")
def kb(data_dir: Path) -> KnowledgeBase:
    settings = Settings(data_dir=data_dir, knowledge_dir=DOCS, _env_file=None)  # type: ignore[call-arg]
    return KnowledgeBase.open(settings)


# --- the finding -> document map ------------------------------------------------------------------


def test_every_registered_finding_has_a_document(docs: list[Doc]) -> None:
    covered = {c for d in docs for c in d.meta.codes}
    missing = sorted(registered_codes() - covered)
    assert missing == [], f"finding codes no document lists: {missing}"


def test_documents_name_only_existing_codes_and_recommendations(docs: list[Doc]) -> None:
    codes, recs = registered_codes(), recommendation_ids()
    bad = [f"{d.meta.id}: {c}" for d in docs for c in d.meta.codes if c not in codes]
    bad += [f"{d.meta.id}: {r}" for d in docs for r in d.meta.recommendations if r not in recs]
    assert bad == [], f"documents name codes or recommendation ids that do not exist: {bad}"


def test_every_recommendation_resolves_to_a_document(kb: KnowledgeBase) -> None:
    unresolved = sorted(r for r in recommendation_ids() if not kb.docs_for_recommendation(r))
    assert unresolved == [], f"recommendation ids no document explains: {unresolved}"


def test_every_finding_recommendation_has_a_document_too(docs: list[Doc]) -> None:
    # A finding's recommendations are what the narrator cites for it; each must be explained.
    import iodiag.analysis.checks  # noqa: F401
    from iodiag.analysis.registry import CHECKS

    explained = {r for d in docs for r in d.meta.recommendations}
    missing = sorted({f"{c}: {r}" for c, spec in CHECKS.items() for r in spec.recommendations if r not in explained})
    assert missing == []


def test_the_map_check_catches_each_kind_of_break() -> None:
    fixtures = load_docs(FIXTURES)  # codes L01, P06; recommendations lustre-stripe-count, aggregate-small-requests
    problems = map_problems(
        fixtures,
        codes={"P06", "X99"},  # L01 "unregistered", X99 undocumented
        recommendations={"aggregate-small-requests", "orphan-rec"},
    )
    assert any("lustre-stripe-count.md: field 'codes': L01 is not a registered finding code" in p for p in problems)
    assert any("perlmutter-scratch.md: field 'codes': L01 is not a registered finding code" in p for p in problems)
    assert any("field 'recommendations': lustre-stripe-count is not a recommendation id" in p for p in problems)
    assert "finding X99: no document lists it in 'codes'" in problems
    assert "recommendation orphan-rec: no document lists it in 'recommendations'" in problems
    assert len(problems) == 5


# --- retrieval on the real documents ---------------------------------------------------------------


def test_retrieval_eval_hybrid_recall_at_5(kb: KnowledgeBase) -> None:
    queries = load_queries(DEFAULT_QUERIES)
    assert len(queries) >= 40
    result = evaluate(kb, queries, k=5)
    hybrid = result.score("hybrid")
    misses = [(m.q, m.missing, m.retrieved) for m in hybrid.misses]
    assert hybrid.recall_at_k >= 0.9, misses
    assert hybrid.mrr >= 0.7


def test_passages_for_every_finding_start_with_its_own_documents(kb: KnowledgeBase) -> None:
    for code in sorted(registered_codes()):
        passages = kb.passages_for_finding(code, k=4)
        mapped = {d.id for d in kb.docs_for_finding(code)}
        assert passages, code
        n_mapped = min(len(mapped), 4)
        assert [p.why for p in passages[:n_mapped]] == ["mapped"] * n_mapped, code
        assert {p.doc_id for p in passages[:n_mapped]} <= mapped, code
        assert all(p.why == "retrieved" and p.doc_id not in mapped for p in passages[n_mapped:]), code
        assert len({p.doc_id for p in passages}) == len(passages) == 4, code


def test_filters_on_the_real_documents(kb: KnowledgeBase) -> None:
    hits = kb.search("stripe count for a very large shared file", 10, facility="NERSC")
    assert {h.facility for h in hits} <= {"NERSC", None}
    assert any(h.facility == "NERSC" for h in hits)
    for h in kb.search("collective buffering", 10, code="X01"):
        assert "X01" in h.codes
    assert {h.layer for h in kb.search("chunk size", 10, layer="hdf5")} == {"HDF5"}


# --- the commands ----------------------------------------------------------------------------------


def iodiag(data_dir: Path, *args: str, knowledge_dir: Path = DOCS) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "IODIAG_DATA_DIR": str(data_dir), "IODIAG_KNOWLEDGE_DIR": str(knowledge_dir), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "iodiag", "knowledge", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )


def test_cli_build_is_a_no_op_on_a_fresh_index(kb: KnowledgeBase, data_dir: Path) -> None:
    r = iodiag(data_dir, "build")
    assert r.returncode == 0, r.stderr
    assert "0 added, 0 updated, 0 removed" in r.stdout and f"{len(kb.docs())} unchanged" in r.stdout


def test_cli_search_prints_ranked_passages(kb: KnowledgeBase, data_dir: Path) -> None:
    r = iodiag(data_dir, "search", "what does romio_cb_write do", "-k", "3")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln[:3] in ("1. ", "2. ", "3. ")]
    assert len(lines) == 3 and lines[0].startswith("1. romio-hints")
    j = iodiag(data_dir, "search", "stripe settings", "--facility", "OLCF", "--layer", "facility", "-f", "json")
    hits = json.loads(j.stdout)
    assert hits and {h["doc_id"] for h in hits} <= {d.id for d in kb.docs() if d.facility in ("OLCF", None)}


def test_cli_check_passes_on_the_real_documents(data_dir: Path) -> None:
    r = iodiag(data_dir, "check")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok: ")


def test_cli_check_reports_one_line_per_problem(tmp_path: Path) -> None:
    bad = tmp_path / "docs"
    bad.mkdir()
    (bad / "x.md").write_text("---\nid: x\ntitle: X\nlayer: POSIX\ncodes: [Q42]\nupdated: 2025-01-01\n---\n\ntext\n")
    (bad / "y.md").write_text("---\nid: y\nlayer: POSIX\nupdated: 2025-01-01\n---\n\ntext\n")
    r = iodiag(tmp_path / "data", "check", knowledge_dir=bad)
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert any("y.md" in ln and "field 'title'" in ln for ln in lines)
    assert any("x.md" in ln and "Q42 is not a registered finding code" in ln for ln in lines)
    assert sum("no document lists it in 'codes'" in ln for ln in lines) == len(registered_codes())
    assert all(ln.startswith("iodiag: error: ") for ln in lines)


def test_cli_eval(data_dir: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.yaml"
    queries.write_text(
        "queries:\n"
        "  - {q: 'how do I turn on DXT tracing', expect: [darshan-dxt-tracing]}\n"
        "  - {q: 'what does romio_cb_write do', expect: [romio-hints]}\n"
    )
    r = iodiag(data_dir, "eval", "-q", str(queries), "-f", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [m["mode"] for m in out["modes"]] == ["bm25", "vector", "hybrid"]
    assert out["queries"] == 2 and out["modes"][2]["recall_at_k"] == 1.0
    # A question expecting a document that does not exist is an error in the corpus: exit 2.
    queries.write_text("queries:\n  - {q: 'anything at all', expect: [no-such-doc]}\n")
    r = iodiag(data_dir, "eval", "-q", str(queries))
    assert r.returncode == 2 and "no-such-doc" in r.stderr and len(r.stderr.splitlines()) == 1


def test_cli_eval_retrieval_is_listed_with_the_other_evals(data_dir: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.yaml"
    queries.write_text(
        "queries:\n  - {q: 'what stripe count for a shared file on 64 Perlmutter nodes', "
        "expect: [facility-nersc-perlmutter]}\n"
    )
    env = {**os.environ, "IODIAG_DATA_DIR": str(data_dir), "IODIAG_KNOWLEDGE_DIR": str(DOCS)}
    r = subprocess.run(
        [sys.executable, "-m", "iodiag", "eval", "retrieval", "-q", str(queries), "-f", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == json.loads(iodiag(data_dir, "eval", "-q", str(queries), "-f", "json").stdout)
