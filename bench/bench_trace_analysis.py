"""Whole trace analysis, process against process: ``iodiag analyze --dxt`` vs ``drishti --backtrace``.

Both read the same DXT benchmark log (1 M and 10 M segments from ``iodiag synth --dxt-segments``,
cached under ~/.cache/iodiag/dxt) and produce their full report. Drishti 0.8 with ``--backtrace``
converts DXT_POSIX to PyDarshan's DataFrames and then, finding no call stacks in a stock log,
drops to its counter checks; that conversion is its trace cost. iodiag reads both DXT modules,
runs every check including T01-T08, builds the cross-layer summary and groups by source line
where stacks exist. Each tool runs in a fresh process, alternating, ``--reps`` times; the table
gives the median wall time, the peak RSS of the process tree, and the ratio.

    .venv/bin/python bench/bench_trace_analysis.py [--sizes 1000000 10000000] [--reps 3]

Drishti comes from bench/.venv-peer (bash bench/setup_peer.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

from timing import timed

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DRISHTI = HERE / ".venv-peer" / "bin" / "drishti"
IODIAG = ROOT / ".venv" / "bin" / "iodiag"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "trace_analysis.json")
    args = ap.parse_args()
    if not DRISHTI.exists():
        sys.exit(f"{DRISHTI} is missing: run bash bench/setup_peer.sh first")

    from iodiag.synth.dxt import cached_bench_log

    rows = []
    print(f"{'segments':>12} {'tool':>20} {'median s':>9} {'peak RSS':>10} {'ratio':>7}")
    for n in args.sizes:
        log = cached_bench_log(n)
        ours_cmd = [str(IODIAG), "analyze", str(log), "--dxt", "-f", "json", "-o", os.devnull]
        theirs_cmd = [str(DRISHTI), "--backtrace", str(log)]
        ours: list[tuple[float, float]] = []
        theirs: list[tuple[float, float]] = []
        for _ in range(args.reps):
            r = timed(ours_cmd, args.timeout)
            if r:
                ours.append((r.wall_s, r.peak_rss_bytes / (1 << 20)))
            d = timed(theirs_cmd, args.timeout)
            if d:
                theirs.append((d.wall_s, d.peak_rss_bytes / (1 << 20)))
        row: dict[str, float | int | None] = {"segments": n}
        if ours:
            s = statistics.median(x[0] for x in ours)
            row.update(iodiag_s=s, iodiag_peak_mib=max(x[1] for x in ours))
            print(f"{n:>12,} {'iodiag analyze --dxt':>20} {s:>9.2f} {row['iodiag_peak_mib']:>8.0f}Mi {'':>7}")
        if theirs:
            s2 = statistics.median(x[0] for x in theirs)
            row.update(drishti_s=s2, drishti_peak_mib=max(x[1] for x in theirs))
            ratio = s2 / float(row["iodiag_s"]) if ours else float("nan")
            row["speedup"] = ratio
            print(f"{n:>12,} {'drishti --backtrace':>20} {s2:>9.2f} {row['drishti_peak_mib']:>8.0f}Mi {ratio:>6.1f}x")
        else:
            print(f"{n:>12,} {'drishti --backtrace':>20} {'failed or timed out':>20}")
        rows.append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
