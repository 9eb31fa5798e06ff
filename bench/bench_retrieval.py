"""Knowledge index and retrieval: build time, query latency, embedding throughput.

On the real documents (``knowledge/docs``) in a temporary data directory, with the configured
embedder (the bundled int8 MiniLM unless ``IODIAG_EMBEDDING_PROVIDER`` says otherwise):

* cold build: empty index to complete (every section embedded and written to chromadb);
* incremental no-op build: the same documents again (hash comparison only);
* open: ``KnowledgeBase.open`` on the fresh index in a new process, and that process's first
  hybrid query (which loads chromadb and the ONNX model);
* query latency: every question of ``evals/retrieval/queries.yaml``, ``--reps`` times, per mode
  (query embedding included: no repetition reuses a cached query vector);
* embedding throughput: every section embedded again outside the index (sections per second).

These are measurements, not tests. ``.venv/bin/python bench/bench_retrieval.py [--reps 5] [--out FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OPEN_AND_QUERY = """
import json, sys, time
t0 = time.perf_counter()
from iodiag.core.settings import Settings
from iodiag.knowledge.base import KnowledgeBase
kb = KnowledgeBase.open(Settings(data_dir=sys.argv[1]), build_if_missing=False)
t1 = time.perf_counter()
kb.search("what stripe count should I use for a large shared file?")
t2 = time.perf_counter()
print(json.dumps({"open_s": t1 - t0, "first_query_s": t2 - t1}))
"""


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5, help="repetitions of the query set per mode (default 5)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "retrieval.json")
    args = ap.parse_args()

    from iodiag.core.settings import Settings
    from iodiag.evals.retrieval import load_queries
    from iodiag.knowledge.base import KnowledgeBase
    from iodiag.knowledge.embeddings import get_embedder
    from iodiag.knowledge.index import build_index
    from iodiag.knowledge.loader import load_docs
    from iodiag.knowledge.retrieval import MODES

    with tempfile.TemporaryDirectory(prefix="iodiag-bench-") as tmp:
        settings = Settings(data_dir=Path(tmp))
        docs = load_docs(settings.knowledge_dir)
        embedder = get_embedder(settings)
        n_chunks = sum(len(d.chunks) for d in docs)
        embedder.embed(["warm-up: load the model before timing"])

        cold = build_index(settings.knowledge_index_dir, docs, embedder)
        noop = build_index(settings.knowledge_index_dir, load_docs(settings.knowledge_dir), embedder)
        assert noop.chunks_embedded == 0

        fresh = json.loads(
            subprocess.run(
                [sys.executable, "-c", OPEN_AND_QUERY, tmp],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "PYDANTIC_DISABLE_PLUGINS": "__all__"},
            )
            .stdout.strip()
            .splitlines()[-1]
        )

        questions = [q.q for q in load_queries()]
        latency: dict[str, list[float]] = {m: [] for m in MODES}
        for _ in range(args.reps):
            for mode in MODES:  # modes interleaved, so a busy spell on the machine hits them alike
                # A new instance per repetition: each keeps recent query vectors, which would
                # otherwise turn every repetition after the first into a cache hit.
                kb = KnowledgeBase.open(settings, build_if_missing=False)
                kb.search("warm-up: BM25 statistics and the chromadb collection", mode=mode)
                for q in questions:
                    t = time.perf_counter()
                    kb.search(q, 5, mode=mode)
                    latency[mode].append(time.perf_counter() - t)

        texts = [c.embedding_text() for d in docs for c in d.chunks]
        t, cpu = time.perf_counter(), time.process_time()
        embedder.embed(texts)
        embed_s, embed_cpu_s = time.perf_counter() - t, time.process_time() - cpu

    query_ms = {
        m: {"median": statistics.median(v) * 1e3, "p90": pct(v, 0.9) * 1e3, "n": len(v)} for m, v in latency.items()
    }
    result = {
        "embedder": embedder.id,
        "docs": len(docs),
        "chunks": n_chunks,
        "cpu_count": os.cpu_count(),
        "load_avg_1m": os.getloadavg()[0],
        "cold_build_s": cold.seconds,
        "noop_build_s": noop.seconds,
        "open_fresh_process_s": fresh["open_s"],
        "first_query_fresh_process_s": fresh["first_query_s"],
        "query_ms": query_ms,
        "embed_chunks_per_s": n_chunks / embed_s,
        # CPU seconds are what a busy machine does not distort: sections per second of one core.
        "embed_chunks_per_cpu_s": n_chunks / embed_cpu_s,
    }

    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"Retrieval bench: {len(docs)} documents, {n_chunks} sections, {embedder.id}", title_justify="left"
    )
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("cold build", f"{cold.seconds:.2f} s ({n_chunks / cold.seconds:.1f} sections/s)")
    table.add_row("incremental no-op build", f"{noop.seconds * 1e3:.0f} ms")
    table.add_row("open (fresh process, fresh index)", f"{fresh['open_s'] * 1e3:.0f} ms")
    table.add_row("first hybrid query in that process", f"{fresh['first_query_s'] * 1e3:.0f} ms")
    for m in MODES:
        q = query_ms[m]
        table.add_row(f"{m} query, median / p90", f"{q['median']:.1f} / {q['p90']:.1f} ms")
    table.add_row("embedding throughput", f"{n_chunks / embed_s:.1f} sections/s")
    table.add_row("embedding per CPU-second", f"{n_chunks / embed_cpu_s:.1f} sections")
    table.add_row("CPUs / load average (1 min)", f"{os.cpu_count()} / {result['load_avg_1m']:.1f}")
    Console().print(table)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
