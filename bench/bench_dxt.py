"""DXT trace reading: iodiag's numpy reader against PyDarshan's record-dict path.

For each benchmark log (1 M and 10 M segments, written by `iodiag synth --dxt-segments` and cached
under ~/.cache/iodiag/dxt), each reader runs in a fresh process, several times, alternating; we
report the median wall time, segments per second, peak RSS of that process and, for iodiag, the
resident bytes per segment of the loaded trace. These are measurements, not tests.

    .venv/bin/python bench/bench_dxt.py [--sizes 1000000 10000000] [--reps 3] [--timeout 600]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

IODIAG = """
import importlib.resources, resource, sys, time, json
from iodiag.ingest import load_profile
# Warm up on a small log first, as PyDarshan's timing below starts after `import darshan`.
load_profile(str(importlib.resources.files("darshan") / "tests" / "input" / "sample.darshan"))
t = time.perf_counter()
p = load_profile(sys.argv[1], include=("DXT_POSIX",), timeout_s=3600, memory_limit_bytes=0)
dt = time.perf_counter() - t
tr = p.trace("DXT_POSIX")
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"seconds": dt, "segments": len(tr), "bytes_per_segment": tr.nbytes / max(len(tr), 1),
                  "peak_rss_kib": peak}))
"""

PYDARSHAN = """
import resource, sys, time, json
import darshan
t = time.perf_counter()
r = darshan.DarshanReport(sys.argv[1], read_all=False)
r.mod_read_all_dxt_records("DXT_POSIX", dtype="pandas")
df = r.records["DXT_POSIX"].to_df()
n = sum(len(x["read_segments"]) + len(x["write_segments"]) for x in df)
dt = time.perf_counter() - t
print(json.dumps({"seconds": dt, "segments": n, "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def run(code: str, log: Path, timeout: float) -> dict[str, float] | None:
    try:
        out = subprocess.run(
            [sys.executable, "-c", code, str(log)], capture_output=True, text=True, timeout=timeout, check=True
        )
    except subprocess.TimeoutExpired:
        return None
    except subprocess.CalledProcessError as exc:
        print(f"  failed: {exc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument(
        "--skip-pydarshan-above",
        type=int,
        default=10_000_000,
        help="run PyDarshan only on logs up to this many segments",
    )
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "dxt.json")
    args = ap.parse_args()

    from iodiag.synth.dxt import cached_bench_log

    results = []
    print(f"{'segments':>12} {'reader':>10} {'median s':>9} {'Mseg/s':>7} {'peak RSS':>10} {'B/seg':>6} {'ratio':>6}")
    for n in args.sizes:
        t0 = time.perf_counter()
        log = cached_bench_log(n)
        print(f"  log: {log} ({n:,} segments, ready in {time.perf_counter() - t0:.1f} s)", file=sys.stderr)
        ours: list[dict[str, float]] = []
        theirs: list[dict[str, float]] = []
        for _ in range(args.reps):
            r = run(IODIAG, log, args.timeout)
            if r:
                ours.append(r)
            if n <= args.skip_pydarshan_above and len(theirs) < args.reps:
                p = run(PYDARSHAN, log, args.timeout)
                if p:
                    theirs.append(p)
                else:
                    theirs = []
                    break
        row = {"segments": n}
        if ours:
            s = statistics.median(r["seconds"] for r in ours)
            row.update(
                iodiag_s=s,
                iodiag_mseg_s=n / s / 1e6,
                iodiag_peak_mib=max(r["peak_rss_kib"] for r in ours) / 1024,
                bytes_per_segment=ours[0]["bytes_per_segment"],
            )
            print(
                f"{n:>12,} {'iodiag':>10} {s:>9.2f} {n / s / 1e6:>7.2f} {row['iodiag_peak_mib']:>8.0f}Mi "
                f"{row['bytes_per_segment']:>6.1f} {'':>6}"
            )
        if theirs:
            s2 = statistics.median(r["seconds"] for r in theirs)
            row.update(pydarshan_s=s2, pydarshan_peak_mib=max(r["peak_rss_kib"] for r in theirs) / 1024)
            ratio = s2 / row["iodiag_s"] if ours else float("nan")
            row["speedup"] = ratio
            print(
                f"{n:>12,} {'pydarshan':>10} {s2:>9.2f} {n / s2 / 1e6:>7.2f} {row['pydarshan_peak_mib']:>8.0f}Mi "
                f"{'':>6} {ratio:>5.1f}x"
            )
        else:
            print(f"{n:>12,} {'pydarshan':>10} {'skipped or did not finish':>30}")
        results.append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
