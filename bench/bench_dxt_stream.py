"""Streaming trace analysis: time and memory of ``iodiag analyze --dxt`` on 1 M, 10 M and 100 M segments,
next to a bare PyDarshan read of the same log, in the same run, alternating.

Per log size and repetition, each in a fresh process:

1. ``iodiag analyze LOG --dxt -f json``: wall time from spawn to exit (imports included), and the peak
   RSS of the process (``wait4``; the forked reader is counted when it is the larger);
2. a bare PyDarshan read of DXT_POSIX (``DarshanReport(read_all=False)``, ``mod_read_all_dxt_records``,
   ``to_df``): wall time from spawn to exit, peak RSS. Not run above ``--pydarshan-max`` segments (at
   100 M it needs more memory than the machine has: the table says so);
3. in-process: after the imports and a warm-up on a small log, the process tree's memory (PSS of the
   analysing process and of its reader child, sampled every 10 ms) is the baseline; then
   ``load_profile`` + ``analyze`` + ``plot_data``. Peak above the baseline, divided by the segments,
   is the bytes per segment of the goal.

Goals (issue 20): at 10 M, iodiag's wall time <= 0.25 x PyDarshan's, measured alternating in this run,
and <= 48 B/segment above the baseline; at 100 M, the whole analysis under 2 GB.

    .venv/bin/python bench/bench_dxt_stream.py [--sizes 1000000 10000000 100000000] [--reps 3]

Logs are cached under ~/.cache/iodiag/dxt (never in the repository); the 100 M log (about 0.7 GB) is
written here record by record, since ``iodiag synth`` builds the whole table in memory first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from timing import PYDARSHAN_DXT_READ, timed

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
IODIAG = ROOT / ".venv" / "bin" / "iodiag"
GOAL_RATIO = 0.25
GOAL_BYTES_PER_SEGMENT = 48.0
GOAL_100M_BYTES = 2 << 30


INPROC = """
import importlib.resources, json, os, sys, threading, time
from iodiag.analysis import analyze
from iodiag.analysis.plots.data import plot_data
from iodiag.ingest import load_profile

def pss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0

def tree():
    me = os.getpid()
    total = pss(me)
    try:
        with open(f"/proc/{me}/task/{me}/children") as fh:
            kids = [int(x) for x in fh.read().split()]
    except OSError:
        kids = []
    return total + sum(pss(k) for k in kids)

small = str(importlib.resources.files("darshan") / "tests" / "input" / "sample.darshan")
analyze(load_profile(small, include=("DXT", "HEATMAP")))
base = tree()
peak = [base]
done = threading.Event()
def poll():
    while not done.is_set():
        peak[0] = max(peak[0], tree())
        time.sleep(0.01)
th = threading.Thread(target=poll, daemon=True)
th.start()
t = time.perf_counter()
p = load_profile(sys.argv[1], include=("DXT", "HEATMAP"), timeout_s=3600)
t_load = time.perf_counter() - t
r = analyze(p)
plot_data(p)
dt = time.perf_counter() - t
done.set()
th.join()
peak[0] = max(peak[0], tree())
n = sum(s.segments for s in p.trace_summaries.values()) + sum(len(x) for x in p.traces.values())
print(json.dumps({"seconds": dt, "load_seconds": t_load, "segments": n, "baseline": base, "peak": peak[0],
                  "streamed": bool(p.trace_summaries), "codes": sorted(r.codes())}))
"""


def write_streamed_log(n: int, path: Path) -> None:
    """The same log as ``iodiag.synth.dxt.bench_tables(n)``, written one record at a time (bounded memory)."""
    import numpy as np
    import pandas as pd
    from iodiag.synth import dxt, writer
    from iodiag.synth.layout import record_id

    nprocs, files = dxt.bench_layout(n)
    nrec = nprocs * files
    per = np.full(nrec, n // nrec, dtype=np.int64)
    per[: n % nrec] += 1
    paths = [f"/scratch/bench/rank{r}/file{f}.dat" for f in range(files) for r in range(nprocs)]
    ids = np.array([record_id(p) for p in paths], dtype=np.uint64)
    end = float((per.max() - 1) * dxt.SEGMENT_SECONDS + 1.0 + dxt.SEGMENT_SECONDS)
    job = dxt.bench_job(nprocs, end)
    posix = dxt._posix_from(ids, nprocs, files, per)
    names = {int(ids[i]): paths[i] for i in range(nrec)}
    placeholder = pd.DataFrame({"id": ids[:1], "rank": [0]})

    def put_dxt(ffi: Any, lib: Any, be: Any, fd: Any, name: str, table: pd.DataFrame) -> None:
        mod_id, ver = be.mod_name_to_idx(name), writer.MODULE_VERSIONS[name]
        head = ffi.sizeof("struct dxt_file_record")
        for i in np.argsort(ids, kind="stable").tolist():  # the order bench_tables' writer sorts them in
            k = int(per[i])
            half = (k + 1) // 2
            pos = np.arange(k, dtype=np.int64)
            seg = np.empty(k, dtype=writer._SEGMENT)
            seg["offset"] = np.where(pos >= half, pos - half, pos) * dxt.SEGMENT_BYTES
            seg["length"] = dxt.SEGMENT_BYTES
            seg["start"] = pos.astype(np.float64) * dxt.SEGMENT_SECONDS + 1.0
            seg["end"] = seg["start"] + dxt.SEGMENT_SECONDS
            payload = seg.tobytes()
            buf = ffi.new("char[]", head + len(payload))
            rec = ffi.cast("struct dxt_file_record *", buf)
            rec.base_rec.id = int(ids[i])
            rec.base_rec.rank = i % nprocs
            host = b"nid00000"
            ffi.memmove(rec.hostname, host, len(host))
            rec.write_count, rec.read_count = half, k - half
            ffi.memmove(buf + head, payload, len(payload))
            writer._check(lib.darshan_log_put_mod(fd, mod_id, buf, head + len(payload), ver), "a DXT record")

    original = writer._put_dxt
    writer._put_dxt = put_dxt
    try:
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        writer.write_log(tmp, job, names, {"POSIX": posix, "DXT_POSIX": placeholder})
        os.replace(tmp, path)
    finally:
        writer._put_dxt = original


def bench_log(n: int) -> Path:
    from iodiag.synth.dxt import BENCH_LOG_VERSION, cache_dir, cached_bench_log

    if n <= 20_000_000:
        return cached_bench_log(n)
    path = cache_dir() / f"dxt-{n}-v{BENCH_LOG_VERSION}.darshan"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_streamed_log(n, path)
    return path


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000, 100_000_000])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--pydarshan-max", type=int, default=10_000_000, help="largest log PyDarshan reads")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "dxt_stream.json")
    args = ap.parse_args()
    py = sys.executable
    rows: list[dict[str, Any]] = []
    for n in args.sizes:
        t0 = time.perf_counter()
        log = bench_log(n)
        print(f"log {log.name}: {log.stat().st_size / 1e6:,.0f} MB, ready in {time.perf_counter() - t0:.1f} s")
        ours: list[tuple[float, float]] = []
        theirs: list[tuple[float, float, float]] = []
        inproc: list[dict[str, Any]] = []
        for rep in range(args.reps):
            r = timed([str(IODIAG), "analyze", str(log), "--dxt", "-f", "json", "-o", os.devnull], args.timeout)
            if r:
                ours.append((r.wall_s, r.peak_rss_bytes))
            if n <= args.pydarshan_max:
                p = timed([py, "-c", PYDARSHAN_DXT_READ, str(log)], args.timeout)
                if p:
                    read_s = json.loads(p.stdout.strip().splitlines()[-1])["seconds"]
                    theirs.append((p.wall_s, p.peak_rss_bytes, read_s))
            q = timed([py, "-c", INPROC, str(log)], args.timeout)
            if q:
                inproc.append(json.loads(q.stdout.strip().splitlines()[-1]))
            print(
                f"  rep {rep + 1}: iodiag {r.wall_s if r else float('nan'):.2f} s"
                + (f", pydarshan {theirs[-1][0]:.2f} s" if n <= args.pydarshan_max and theirs else "")
                + (f", in-process {inproc[-1]['seconds']:.2f} s" if inproc else ""),
                flush=True,
            )
        row: dict[str, Any] = {"segments": n, "log_bytes": log.stat().st_size}
        row["iodiag_wall_s"] = med([o[0] for o in ours])
        row["iodiag_peak_rss"] = max((o[1] for o in ours), default=float("nan"))
        row["iodiag_wall_all"] = [o[0] for o in ours]
        row["inproc_s"] = med([q["seconds"] for q in inproc])
        row["inproc_load_s"] = med([q["load_seconds"] for q in inproc])
        above = [(q["peak"] - q["baseline"]) for q in inproc]
        row["peak_above_baseline"] = med(above)
        row["bytes_per_segment"] = row["peak_above_baseline"] / n
        row["tree_peak"] = max((q["peak"] for q in inproc), default=float("nan"))
        row["streamed"] = bool(inproc and inproc[0]["streamed"])
        row["codes"] = inproc[0]["codes"] if inproc else []
        if theirs:
            row["pydarshan_wall_s"] = med([x[0] for x in theirs])
            row["pydarshan_peak_rss"] = max(x[1] for x in theirs)
            row["pydarshan_read_s"] = med([x[2] for x in theirs])
            row["pydarshan_wall_all"] = [x[0] for x in theirs]
            # Ratio per alternating pair, then the median: both ran under the same load.
            pairs = [o[0] / x[0] for o, x in zip(ours, theirs, strict=False)]
            row["ratio"] = med(pairs)
        rows.append(row)

    print()
    print(
        f"{'segments':>12} | {'iodiag s':>8} | {'Mseg/s':>6} | {'B/seg':>6} | {'peak tree':>9} | "
        f"{'PyDarshan s':>11} | {'PyD peak':>8} | {'ratio':>5} | goals"
    )
    ref = next((r for r in rows if r["segments"] == 10_000_000 and "pydarshan_wall_s" in r), None)
    for r in rows:
        n = r["segments"]
        goals = []
        if n == 10_000_000:
            ratio = r.get("ratio", float("nan"))
            goals.append(f"ratio <= {GOAL_RATIO}: {'met' if ratio <= GOAL_RATIO else 'NOT met'}")
            bps = r["bytes_per_segment"]
            verdict = "met" if bps <= GOAL_BYTES_PER_SEGMENT else "NOT met"
            goals.append(f"<= {GOAL_BYTES_PER_SEGMENT:.0f} B/seg: {verdict}")
        if n == 100_000_000:
            peak = max(r["tree_peak"], r["iodiag_peak_rss"])
            goals.append(f"< 2 GB: {'met' if peak < GOAL_100M_BYTES else 'NOT met'} ({peak / 2**30:.2f} GiB)")
        pyd = (
            f"{r['pydarshan_wall_s']:>11.2f} | {r['pydarshan_peak_rss'] / 2**20:>6.0f}Mi | {r['ratio']:>5.2f}"
            if "pydarshan_wall_s" in r
            else f"{'not run':>11} | {'':>8} | {'':>5}"
        )
        if "pydarshan_wall_s" not in r and ref is not None:
            goals.append(f"PyDarshan not run: {n / 1e6:.0f} M segments do not fit in memory")
        print(
            f"{n:>12,} | {r['iodiag_wall_s']:>8.2f} | {n / r['iodiag_wall_s'] / 1e6:>6.2f} | "
            f"{r['bytes_per_segment']:>6.1f} | {r['tree_peak'] / 2**20:>7.0f}Mi | {pyd} | {'; '.join(goals)}"
        )
    print(
        "\niodiag s: whole `iodiag analyze --dxt -f json`, spawn to exit, median; B/seg: peak PSS of the analysing "
        "process and its reader above the baseline after imports, in-process load+analyze+plots, median; "
        "ratio: median over alternating pairs of iodiag wall / PyDarshan wall (both whole processes)."
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
