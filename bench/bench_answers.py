"""How long a user waits for an answer: the whole `iodiag ask` process, the warm service's chat stream, and the
opt-in bundled model's first verified sentence.

    .venv/bin/python bench/bench_answers.py               # 3 repetitions of each (about 4 minutes on 2 cores)
    .venv/bin/python bench/bench_answers.py --reps 5 --no-model

Measured, per question, median over the repetitions:
- `iodiag ask LOG QUESTION --no-model`, whole process (start, read the log, analyze, answer, exit); goal <= 2 s.
- the warm service (`iodiag serve`, template route, the report already analyzed): time from POSTing the
  question to the first `token` event (first words; goal <= 1 s) and to the `final` event (goal <= 2 s).
- the bundled model (opt-in, `IODIAG_LLM_PROVIDER=llamacpp`), in its model process, loaded before timing: it
  rewords the template's verified sentences one at a time (narration/rephrase.py). Time to the first streamed
  sentence (every streamed sentence has passed the verifier; goal <= 2 s) and to the whole answer (goal <= 15 s),
  and what became of each sentence it tried to reword.
- memory: the server's resident size before and after its first chat with the bundled model, and the model
  process's; beside them, what loading the model into one process costs that process (the old way).
Results go to bench/results/answers.json. A measurement, not a test: nothing fails on a missed target.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "backend"))

from tests.api.test_api_support import Server  # noqa: E402
from tests.conftest import shared_log, wheel_log  # noqa: E402

IODIAG = REPO / ".venv" / "bin" / "iodiag"
QUESTIONS = [
    (wheel_log("sample-badost.darshan"), "Why is my job slow?"),
    (wheel_log("sample-badost.darshan"), "What exact lfs command should I run?"),
    (shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.4.1.darshan"), "Which file is worst?"),
    (
        shared_log("drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan"),
        "How much would fixing the fill values save?",
    ),
]


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ask_process(log: Path, question: str, reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        subprocess.run([str(IODIAG), "ask", str(log), question, "--no-model"], check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return med(times)


def stream_times(c: httpx.Client, aid: str, question: str) -> tuple[float, float]:
    """(first token, final) seconds for one question over SSE."""
    t = time.perf_counter()
    first = final = float("nan")
    event = ""
    with c.stream("POST", f"/api/v1/analyses/{aid}/chat", json={"question": question}, timeout=120) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                if event == "token" and first != first:  # first words
                    first = time.perf_counter() - t
                if event == "final":
                    final = time.perf_counter() - t
    return first, final


def service(reps: int) -> list[dict[str, Any]]:
    data = Path(tempfile.mkdtemp(prefix="iodiag-bench-answers-"))
    server = Server(data, {"IODIAG_WORKERS": "1", "IODIAG_LLM_PROVIDER": "none"})
    token = server.token("bench", "user")
    server.start()
    out = []
    try:
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
            ids: dict[Path, str] = {}
            for log, _ in QUESTIONS:
                if log in ids:
                    continue
                with open(log, "rb") as fh:
                    r = c.post("/api/v1/analyses", files={"file": (log.name, fh, "application/octet-stream")})
                aid = r.json()["id"]
                while c.get(f"/api/v1/analyses/{aid}").json()["status"] not in ("done", "failed"):
                    time.sleep(0.2)
                ids[log] = aid
            stream_times(c, ids[QUESTIONS[0][0]], "warm up")  # the first question builds the narrator
            for log, q in QUESTIONS:
                firsts, finals = [], []
                for _ in range(reps):
                    a, b = stream_times(c, ids[log], q)
                    firsts.append(a)
                    finals.append(b)
                out.append({"question": q, "first_token_s": med(firsts), "final_s": med(finals)})
    finally:
        server.stop()
    return out


def model(reps: int) -> list[dict[str, Any]]:
    from iodiag.analysis import analyze
    from iodiag.core.settings import Settings
    from iodiag.ingest import load_profile
    from iodiag.narration.model.llm import get_model
    from iodiag.narration.rephrase import Rephrasing
    from iodiag.narration.service import Narrator

    settings = Settings(llm_provider="llamacpp", llm_threads=2)
    t = time.perf_counter()
    get_model(settings)
    load_s = time.perf_counter() - t
    narrator = Narrator(settings)
    out = []
    for log, q in QUESTIONS:
        report = analyze(load_profile(str(log)))
        firsts, totals, routes = [], [], []
        outcomes: Counter[str] = Counter()
        for _ in range(reps):
            seen: list[Rephrasing] = []
            t = time.perf_counter()
            first = float("nan")
            answer = None
            for chunk in narrator.answer(report, q, observe=seen.append):
                if chunk.delta.strip() and first != first:
                    first = time.perf_counter() - t
                if chunk.final:
                    answer = chunk.answer
            totals.append(time.perf_counter() - t)
            firsts.append(first)
            routes.append(answer.provenance if answer else "none")
            outcomes.update(r.outcome for r in seen if r.attempted)
        out.append(
            {
                "question": q,
                "first_sentence_s": med(firsts),
                "first_sentence_range_s": [min(firsts), max(firsts)],
                "total_s": med(totals),
                "total_range_s": [min(totals), max(totals)],
                "routes": routes,
                "rewordings": dict(outcomes),
                "model_load_s": load_s,
            }
        )
    return out


def _rss_mib(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _model_children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if ppid == pid and b"iodiag.narration.model.worker" in (entry / "cmdline").read_bytes():
                    out.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return out


# The old way, for comparison: the model loaded into the process that answers.
IN_PROCESS = textwrap.dedent(
    """
    import json, sys, time
    from iodiag.core.settings import Settings
    from iodiag.narration.model.llm import load_llamacpp
    def rss():
        return [int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmRSS:")][0]
    before = rss()
    model = load_llamacpp(Settings(llm_provider="llamacpp", llm_threads=2))
    "".join(model.stream([("user", "Why is my job slow?")], time.monotonic() + 60, max_tokens=32))
    print(json.dumps({"before_mib": before, "after_mib": rss()}))
    """
)


def _server_memory(provider: str) -> dict[str, Any]:
    """One fresh server: its RSS once the log is analyzed, after its first chat and after a second one, and the
    model processes it started. No knowledge documents, so that what is measured is the narrator and the model
    (building the knowledge index in a fresh data directory would add its embedding model to the first chat)."""
    log = QUESTIONS[0][0]
    data = Path(tempfile.mkdtemp(prefix="iodiag-bench-memory-"))
    empty = data / "no-documents"
    empty.mkdir()
    env = {"IODIAG_WORKERS": "1", "IODIAG_LLM_PROVIDER": provider, "IODIAG_LLM_THREADS": "2"}
    server = Server(data, {**env, "IODIAG_KNOWLEDGE_DIR": str(empty)})
    token = server.token("bench", "user")
    server.start()
    assert server.proc is not None
    pid = server.proc.pid
    try:
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
            with open(log, "rb") as fh:
                aid = c.post("/api/v1/analyses", files={"file": (log.name, fh, "application/octet-stream")}).json()[
                    "id"
                ]
            while c.get(f"/api/v1/analyses/{aid}").json()["status"] not in ("done", "failed"):
                time.sleep(0.2)
            before = _rss_mib(pid)
            first, final = stream_times(c, aid, QUESTIONS[0][1])
            after = _rss_mib(pid)
            stream_times(c, aid, QUESTIONS[1][1])
            second, peak = _rss_mib(pid), _rss_mib(pid, "VmHWM")
            children = _model_children(pid)
            return {
                "before_mib": before,
                "after_first_chat_mib": after,
                "after_second_chat_mib": second,
                "peak_mib": peak,
                "model_process_mib": sum(_rss_mib(p) for p in children),
                "model_processes": len(children),
                "llama_mapped": "libllama" in Path(f"/proc/{pid}/maps").read_text(),
                "first_chat_first_s": first,
                "first_chat_final_s": final,
            }
    finally:
        server.stop()


def memory() -> dict[str, Any]:
    """The server's RSS before and after its first chats, template route and bundled model side by side, the
    model process's, and what loading the model into the answering process costs it (the old way)."""
    out = {"template": _server_memory("none"), "model": _server_memory("llamacpp")}
    done = subprocess.run(
        [sys.executable, "-c", IN_PROCESS], capture_output=True, text=True, check=True, cwd=REPO / "backend"
    )
    old = json.loads(done.stdout.strip().splitlines()[-1])
    out["in_process"] = {"before_mib": old["before_mib"], "after_mib": old["after_mib"]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-model", action="store_true", help="skip the bundled model's measurements")
    ap.add_argument("--only-model", action="store_true", help="only the bundled model's measurements and memory")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "answers.json")
    args = ap.parse_args()

    quick = args.only_model
    cli = (
        []
        if quick
        else [
            {"question": q, "log": log.name, "whole_process_s": ask_process(log, q, args.reps)} for log, q in QUESTIONS
        ]
    )
    svc = [] if quick else service(args.reps)
    mdl = [] if args.no_model else model(args.reps)
    mem = {} if args.no_model else memory()

    if cli:
        print(f"\n`iodiag ask --no-model`, whole process (median of {args.reps}); goal <= 2 s")
        print(f"{'question':<46} {'seconds':>8}")
        for row in cli:
            print(f"{row['question']:<46} {row['whole_process_s']:>8.2f}")
        print(f"median {med([r['whole_process_s'] for r in cli]):.2f} s")
    if svc:
        print("\nwarm service, template route: first words (goal <= 1 s) and whole answer (goal <= 2 s)")
        print(f"{'question':<46} {'first':>8} {'final':>8}")
        for row in svc:
            print(f"{row['question']:<46} {row['first_token_s']:>8.3f} {row['final_s']:>8.3f}")
    if mdl:
        print(f"\nbundled model (opt-in), model process ready in {mdl[0]['model_load_s']:.1f} s, rewording the")
        print("template's sentences: first verified sentence (goal <= 2 s), whole answer (goal <= 15 s), medians")
        print(f"of {args.reps} with ranges, and what became of the sentences it tried to reword")
        print(f"{'question':<46} {'first':>8} {'range':>12} {'total':>8} {'range':>12}  rewordings")
        for row in mdl:
            fr, tr = row["first_sentence_range_s"], row["total_range_s"]
            print(
                f"{row['question']:<46} {row['first_sentence_s']:>8.2f} {fr[0]:>5.2f}-{fr[1]:<6.2f}"
                f"{row['total_s']:>8.2f} {tr[0]:>5.2f}-{tr[1]:<6.2f} "
                + ", ".join(f"{k} {v}" for k, v in sorted(row["rewordings"].items()))
            )
        firsts = [r["first_sentence_s"] for r in mdl]
        totals = [r["total_s"] for r in mdl]
        print(f"median over questions: first {med(firsts):.2f} s, whole {med(totals):.2f} s")
    if mem:
        print("\nmemory (MiB): the server once the log is analyzed, after its first and second chat; its model process")
        for name in ("template", "model"):
            m = mem[name]
            print(
                f"{name:<9} server {m['before_mib']:.0f} -> {m['after_first_chat_mib']:.0f} -> "
                f"{m['after_second_chat_mib']:.0f} (peak {m['peak_mib']:.0f}), llama.cpp mapped: {m['llama_mapped']}; "
                f"model process {m['model_process_mib']:.0f} ({m['model_processes']})"
            )
        old = mem["in_process"]
        print(
            f"the old way, the model loaded into the answering process: {old['before_mib']:.0f} -> "
            f"{old['after_mib']:.0f}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"ask": cli, "service": svc, "model": mdl, "memory": mem}, indent=1), encoding="utf-8"
    )
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
