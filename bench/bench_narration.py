"""Narration latency: time to first token and total answer time, bundled model against the template route.

Each question is asked of its log through ``Narrator.answer`` on two CPU cores (the process is pinned to two,
its model process inherits the pinning, and llama.cpp runs two threads). The bundled model rewords the
template's verified sentences one at a time (``narration/rephrase.py``); time to first token is the first
streamed (verified) sentence, total is the final, checked answer, and the rewordings are counted by outcome.
The model process starts once, before timing (its start is reported apart). These are measurements, not tests.

    .venv/bin/python bench/bench_narration.py [--reps 3] [--cores 2] [--out bench/results/narration.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

QUESTIONS = [
    (
        "shared:drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan",
        "Why is my job slow?",
    ),
    (
        "shared:drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan",
        "Which file is the problem?",
    ),
    ("wheel:sample-badost.darshan", "How do I fix it?"),
    ("shared:darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan", "What is P08?"),
    ("shared:darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan", "What is collective buffering?"),
    ("scenario:evals/scenarios/io-one-percent-of-runtime.yaml", "Is I/O the reason my job is slow?"),
]


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(round(q * (len(s) - 1)), len(s) - 1)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--reps", type=int, default=3, help="times each question is asked per route (default 3)")
    ap.add_argument("--cores", type=int, default=2, help="CPU cores to pin to and llama.cpp threads (default 2)")
    ap.add_argument("--out", type=Path, help="write every timing here as JSON")
    args = ap.parse_args()

    try:
        cores = sorted(os.sched_getaffinity(0))[: args.cores]
        os.sched_setaffinity(0, cores)
    except (AttributeError, OSError):
        cores = []
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))
    from iodiag.core.settings import Settings
    from iodiag.evals.answers import report_for
    from iodiag.narration.model.llm import get_model
    from iodiag.narration.rephrase import Rephrasing
    from iodiag.narration.service import Narrator

    reports = {ref: report_for(ref) for ref, _ in QUESTIONS}
    model_settings = Settings(llm_provider="llamacpp", llm_threads=args.cores)
    t0 = time.perf_counter()
    model = get_model(model_settings)
    load_s = time.perf_counter() - t0
    narrators = {"model": Narrator(model_settings), "template": Narrator(Settings(llm_provider="none"))}
    # Open the knowledge base and warm both routes once, untimed.
    for n in narrators.values():
        list(n.answer(reports[QUESTIONS[0][0]], "Why is my job slow?"))

    rows: dict[str, dict[str, list[float]]] = {r: {"ttft": [], "total": []} for r in narrators}
    provenance: dict[str, Counter[str]] = {r: Counter() for r in narrators}
    rewordings: Counter[str] = Counter()
    timings = []
    for rep in range(args.reps):
        for ref, question in QUESTIONS:
            for route, narrator in narrators.items():
                seen: list[Rephrasing] = []
                start = time.perf_counter()
                first = None
                answer = None
                for chunk in narrator.answer(reports[ref], question, observe=seen.append):
                    if first is None and chunk.delta.strip():
                        first = time.perf_counter() - start
                    if chunk.final:
                        answer = chunk.answer
                total = time.perf_counter() - start
                assert answer is not None
                ttft = first if first is not None else total
                rows[route]["ttft"].append(ttft)
                rows[route]["total"].append(total)
                provenance[route][answer.provenance] += 1
                rewordings.update(r.outcome for r in seen if r.attempted)
                timings.append(
                    {
                        "rep": rep,
                        "log": ref,
                        "question": question,
                        "route": route,
                        "ttft_s": ttft,
                        "total_s": total,
                        "provenance": answer.provenance,
                        "attempts": answer.verifier.attempts,
                        "rewordings": dict(Counter(r.outcome for r in seen if r.attempted)),
                    }
                )
                print(f"  {route:8} {total:6.2f} s  {answer.provenance:14} {question}", file=sys.stderr)

    name = model.name if model else "none"
    print(
        f"\nNarration latency, {len(QUESTIONS)} questions x {args.reps} reps, pinned to cores {cores or '?'} "
        f"({args.cores} llama.cpp threads); model {name} loaded in {load_s:.2f} s\n"
    )
    head = (
        f"{'route':<10}{'TTFT median':>13}{'TTFT range':>14}{'TTFT p90':>10}{'total median':>14}{'total range':>14}"
        f"{'total p90':>11}  provenance"
    )
    print(head)
    print("-" * len(head))
    for route, r in rows.items():
        prov = ", ".join(f"{k} {v}" for k, v in provenance[route].most_common())
        print(
            f"{route:<10}{statistics.median(r['ttft']):>12.2f}s{min(r['ttft']):>7.2f}-{max(r['ttft']):<5.2f}s"
            f"{pct(r['ttft'], 0.9):>9.2f}s{statistics.median(r['total']):>13.2f}s"
            f"{min(r['total']):>7.2f}-{max(r['total']):<5.2f}s{pct(r['total'], 0.9):>10.2f}s  {prov}"
        )
    tried = sum(rewordings.values())
    if tried:
        kept = rewordings["rephrased"] + rewordings["unchanged"]
        print(
            f"\nmodel rewordings: {tried} sentences tried, {kept / tried:.0%} verified with every fact kept "
            f"({rewordings['rephrased'] / tried:.0%} shown reworded, the rest copies); "
            + ", ".join(f"{k} {v}" for k, v in rewordings.most_common())
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps({"model": name, "load_s": load_s, "cores": cores, "timings": timings}, indent=2) + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
