"""Profile load_profile + analyze on one log with cProfile, process already warm.

    .venv/bin/python bench/profile_analyze.py LOG [--reps 20] [--top 10] [--sort cumulative] [--isolate]

By default the log is read inline (``isolate=False``): with the forked reader the parent only
waits on a pipe, and the child's work is invisible to cProfile. Pass --isolate to see the
parent's side of the real path (fork, pipe, unpickling).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log")
    ap.add_argument("--reps", type=int, default=20, help="profiled repetitions (default 20)")
    ap.add_argument("--top", type=int, default=10, help="entries to print (default 10)")
    ap.add_argument("--sort", default="cumulative", help="pstats sort key (default cumulative)")
    ap.add_argument("--isolate", action="store_true", help="read in the forked child, as load_profile does")
    ap.add_argument("--dump", help="also write the raw stats here (for snakeviz and the like)")
    args = ap.parse_args(argv)

    from iodiag.analysis import analyze
    from iodiag.ingest import load_profile

    def once() -> None:
        analyze(load_profile(args.log, isolate=args.isolate))

    once()  # warm-up: imports, the Darshan library, caches
    t0 = time.perf_counter()
    for _ in range(args.reps):
        once()
    per_rep = (time.perf_counter() - t0) / args.reps * 1e3
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.reps):
        once()
    prof.disable()
    mode = "isolated (forked reader)" if args.isolate else "inline reader"
    print(f"{args.log}\n{mode}: {per_rep:.1f} ms per load_profile+analyze without the profiler ({args.reps} reps)")
    stats = pstats.Stats(prof, stream=sys.stdout)
    if args.dump:
        stats.dump_stats(args.dump)
    stats.strip_dirs().sort_stats(args.sort).print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
