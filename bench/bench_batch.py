"""Benchmark ``iodiag batch``: logs per second on a local Dask cluster of 1 and of 2 workers.

Run with the project's virtualenv (see bench/README.md):

    .venv/bin/python bench/bench_batch.py [--logs 1000] [--workers 1 2] [--store-logs 200]

The corpus is every real log (``shared/logs`` and the darshan wheel, byte-identical copies once) plus
scenario logs (``evals/scenarios``) to make up ``--logs``: each generated log gets its own job id,
user, start day, application name and seed, so every content hash differs. Generated logs are
cached in ``~/.cache/iodiag/batch-logs``.

Measured, per worker count, on the Parquet path (read + analyze, no rendering):
logs/s over the analysis stage (cluster start and helper imports excluded, reported apart),
per-log analysis time inside the helper, and the peak resident memory of each worker's processes.
Then, with the most workers, the store path (every report format rendered, rows written to SQLite)
on ``--store-logs`` logs: its logs/s and the client's time per database write. And, in this
process, what the isolated (forked) Darshan reader costs per log over reading inline.

This is a measurement, not a test. Results go to bench/results/batch.json.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.resources
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
SCENARIOS = REPO_ROOT / "evals" / "scenarios"
CACHE = Path.home() / ".cache" / "iodiag" / "batch-logs"
DEFAULT_OUT = BENCH_DIR / "results" / "batch.json"
APPS = ["lammps", "wrf", "e3sm", "vasp", "cp2k", "nekrs", "hacc", "amrex", "gromacs", "openfoam", "pytorch", "ior"]
USERS = 40
DAYS = 30
FORK_SAMPLE = 40

console = Console(stderr=True, highlight=False)


# --------------------------------------------------------------------------- corpus


def real_logs() -> list[Path]:
    shared = Path(os.environ.get("IODIAG_LOGS_DIR", REPO_ROOT.parent / "shared" / "logs"))
    wheel = Path(str(importlib.resources.files("darshan")))
    seen: set[str] = set()
    out: list[Path] = []
    for p in sorted(shared.rglob("*.darshan")) + sorted(wheel.rglob("*.darshan")):
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            out.append(p)
    return out


def generated_logs(n: int) -> list[Path]:
    """``n`` scenario logs, made once and cached: scenario i mod S, with job i's own identity."""
    from iodiag.synth.build import build_log
    from iodiag.synth.scenario import load_scenario

    CACHE.mkdir(parents=True, exist_ok=True)
    specs = sorted(SCENARIOS.glob("*.yaml"))
    base = datetime(2026, 1, 1, tzinfo=UTC)
    out: list[Path] = []
    broken: set[Path] = set()
    i = made = 0
    t0 = time.perf_counter()
    while len(out) < n:
        spec = specs[i % len(specs)]
        i += 1
        if spec in broken:
            continue
        path = CACHE / f"{i:05d}-{spec.stem}.darshan"
        if not path.is_file():
            app = APPS[i % len(APPS)]
            try:
                sc = load_scenario(spec)
                job = sc.job.model_copy(
                    update={
                        "jobid": 500_000 + i,
                        "uid": 20_000 + i % USERS,
                        "exe": f"/apps/{app}/bin/{app} -i run{i}.in",
                        "start": int((base + timedelta(days=i % DAYS, minutes=i)).timestamp()),
                    }
                )
                build_log(sc.model_copy(update={"job": job, "seed": i}), path)
            except Exception as exc:  # a scenario of the broken-log kind (made elsewhere): use the others
                console.print(f"  skipping scenario {spec.stem}: {type(exc).__name__}: {exc}", style="dim")
                broken.add(spec)
                path.unlink(missing_ok=True)
                continue
            made += 1
            if made % 100 == 0:
                console.print(f"  generated {made} logs ({time.perf_counter() - t0:.0f} s)", style="dim")
        out.append(path)
    return out


def corpus(n: int) -> tuple[list[Path], int]:
    real = real_logs()[:n]
    return real + generated_logs(n - len(real)), len(real)


# --------------------------------------------------------------------------- runs


@dataclass
class Collect:
    """A sink wrapper and reporter: keeps every result and times the sink's writes."""

    inner: Any
    results: list[Any] = field(default_factory=list)
    write_s: list[float] = field(default_factory=list)

    def done(self, shas: list[str]) -> set[str]:
        return set()  # a fresh output every run: measure everything

    def add(self, item: Any, result: Any) -> None:
        t = time.perf_counter()
        self.inner.add(item, result)
        self.write_s.append(time.perf_counter() - t)
        # The store path carries every rendered report: keep only what is measured.
        self.results.append(result.model_copy(update={"outputs": {}, "pipeline": None, "findings": []}))

    def close(self, summary: Any) -> None:
        self.inner.close(summary)

    def stage(self, name: str, total: int) -> None:
        console.print(f"  {name} ({total})" if total else f"  {name}", style="dim")

    def advance(self, result: Any = None) -> None:
        pass


def one_run(paths: list[Path], workers: int, kind: str, work: Path) -> dict[str, Any]:
    from iodiag.batch import engine
    from iodiag.core.settings import Settings
    from iodiag.jobs.cluster import connect

    st = Settings(data_dir=work / "data")
    opts = engine.Options(
        kind=kind,
        read_dxt=st.job_read_dxt,
        timeout_s=st.job_timeout_s,  # type: ignore[arg-type]
        memory_limit_bytes=st.job_memory_limit_bytes,
    )
    run_id = engine.new_run_id()
    if kind == "facts":
        from iodiag.batch.parquet import ParquetSink

        inner: Any = ParquetSink(work / "pq", run_id, uid_names=False)
    else:
        from iodiag.batch.store_sink import StoreSink

        inner = StoreSink(st, run_id, uid_names=False)
    sink = Collect(inner)
    t0 = time.perf_counter()
    with connect(None, workers) as client:
        started = time.perf_counter() - t0
        summary = engine.run(paths, client, opts, sink, sink, output=str(work), run_id=run_id)
    total = time.perf_counter() - t0
    per_log = sorted(r.seconds for r in sink.results if r.ok)
    peaks: dict[str, dict[str, int]] = {}
    for r in sink.results:
        if r.worker:
            m = r.memory
            cur = peaks.setdefault(r.worker, {"worker": 0, "helper": 0, "reader": 0})
            cur["worker"] = max(cur["worker"], m.worker_bytes)
            cur["helper"] = max(cur["helper"], m.helper_bytes)
            cur["reader"] = max(cur["reader"], m.reader_bytes)
    return {
        "kind": kind,
        "workers": workers,
        "logs": len(paths),
        "done": summary.done,
        "failed": summary.failed,
        "failures": [f.model_dump() for f in summary.failures],
        "cluster_start_s": started,
        "hash_and_warm_s": total - started - summary.analysis_seconds,
        "analysis_s": summary.analysis_seconds,
        "logs_per_s": summary.logs_per_s,
        "per_log_s": {
            "mean": statistics.fmean(per_log) if per_log else None,
            "median": statistics.median(per_log) if per_log else None,
            "p90": per_log[int(0.9 * (len(per_log) - 1))] if per_log else None,
            "max": per_log[-1] if per_log else None,
        },
        "sink_write_s": {
            "mean": statistics.fmean(sink.write_s) if sink.write_s else None,
            "median": statistics.median(sink.write_s) if sink.write_s else None,
            "total": sum(sink.write_s),
        },
        "peak_memory_bytes": peaks,
    }


def fork_cost(paths: list[Path]) -> dict[str, Any]:
    """Median per-log cost of reading in a forked child over reading inline, on small real logs."""
    from iodiag.ingest import LogReadError, load_profile

    sample = [p for p in paths if p.stat().st_size < 1_000_000][:FORK_SAMPLE]
    diffs: list[float] = []
    inline_s: list[float] = []
    for p in sample:
        try:
            load_profile(str(p), include=("HEATMAP",))  # warm: library, page cache
            t = time.perf_counter()
            load_profile(str(p), include=("HEATMAP",), isolate=False)
            a = time.perf_counter() - t
            t = time.perf_counter()
            load_profile(str(p), include=("HEATMAP",))
            b = time.perf_counter() - t
        except LogReadError:
            continue
        inline_s.append(a)
        diffs.append(b - a)
    return {
        "logs": len(diffs),
        "inline_read_median_s": statistics.median(inline_s) if inline_s else None,
        "fork_overhead_median_s": statistics.median(diffs) if diffs else None,
    }


# --------------------------------------------------------------------------- main


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", type=int, default=1000, help="corpus size (default 1000)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts (default 1 2)")
    ap.add_argument("--store-logs", type=int, default=200, help="logs for the store run (0: skip; default 200)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

    console.print(f"corpus: {args.logs} logs")
    paths, n_real = corpus(args.logs)
    size = sum(p.stat().st_size for p in paths)
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="iodiag-bench-batch-") as tmp:
        for w in args.workers:
            console.print(f"parquet, {w} worker(s)")
            runs.append(one_run(paths, w, "facts", Path(tmp) / f"pq{w}"))
            shutil.rmtree(Path(tmp) / f"pq{w}", ignore_errors=True)
        if args.store_logs:
            w = max(args.workers)
            console.print(f"store (SQLite), {w} worker(s), {args.store_logs} logs")
            runs.append(one_run(paths[: args.store_logs], w, "pipeline", Path(tmp) / "store"))
    console.print("reader fork cost")
    fork = fork_cost(paths)

    table = Table(
        box=box.SIMPLE_HEAVY,
        title=f"iodiag batch: {len(paths)} logs ({n_real} real), {size / 2**20:,.1f} MiB, {os.cpu_count()} cores",
    )
    for col in (
        "output",
        "workers",
        "logs",
        "failed",
        "logs/s",
        "per-log median s",
        "p90 s",
        "start s",
        "peak MiB / worker (dask + helper + reader)",
        "write ms/log",
    ):
        table.add_column(col, justify="right")
    base = next((r["logs_per_s"] for r in runs if r["kind"] == "facts" and r["workers"] == 1), None)
    for r in runs:
        peak = max(r["peak_memory_bytes"].values(), key=lambda p: p["worker"] + p["helper"], default=None)
        mem = f"{_mib(peak['worker'])} + {_mib(peak['helper'])} + {_mib(peak['reader'])}" if peak else "–"
        ratio = f" (×{r['logs_per_s'] / base:.2f})" if base and r["kind"] == "facts" and r["workers"] > 1 else ""
        table.add_row(
            "parquet" if r["kind"] == "facts" else "store",
            str(r["workers"]),
            str(r["logs"]),
            str(r["failed"]),
            f"{r['logs_per_s']:.2f}{ratio}",
            f"{r['per_log_s']['median']:.3f}",
            f"{r['per_log_s']['p90']:.3f}",
            f"{r['cluster_start_s'] + r['hash_and_warm_s']:.1f}",
            mem,
            f"{1000 * r['sink_write_s']['mean']:.1f}",
        )
    out = Console(width=None if sys.stdout.isatty() else 160, highlight=False)
    out.print(table)
    out.print(
        f"reader fork: {1000 * (fork['fork_overhead_median_s'] or 0):.1f} ms per log over an inline read "
        f"of {1000 * (fork['inline_read_median_s'] or 0):.1f} ms (median of {fork['logs']} small logs)"
    )

    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "when": datetime.now(UTC).isoformat(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "loadavg_at_end": os.getloadavg(),
        },
        "corpus": {"logs": len(paths), "real": n_real, "bytes": size, "cache": str(CACHE)},
        "runs": runs,
        "reader_fork": fork,
    }
    args.out.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    console.print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
