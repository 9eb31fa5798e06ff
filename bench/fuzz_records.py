"""Fuzz the reader and the analysis with damaged records: N real logs rewritten with corrupt records
(``iodiag.synth.fuzz``), each read and analysed in-process, each report checked against the invariants
(``iodiag.analysis.invariants``). Prints a table: logs, crashes, invariant breaks, records left out, time.

    .venv/bin/python bench/fuzz_records.py --count 10000
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from iodiag.analysis import analyze
from iodiag.analysis.invariants import problems
from iodiag.ingest import LogReadError, load_profile
from iodiag.synth.fuzz import write_fuzzed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))
from tests.conftest import all_logs


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-base-bytes", type=int, default=2 << 20, help="skip base logs larger than this")
    args = ap.parse_args()
    bases = []
    for p in all_logs():
        if p.stat().st_size <= args.max_base_bytes:
            with contextlib.suppress(LogReadError):
                bases.append(load_profile(str(p)))
    crashes: Counter[str] = Counter()
    breaks: Counter[str] = Counter()
    refused = dropped = damaged = 0
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "fuzzed.darshan"
        for i in range(args.count):
            seed = args.seed + i
            base = bases[seed % len(bases)]
            t = time.perf_counter()
            try:
                what = write_fuzzed(base, out, seed, share=[0.01, 0.1, 0.5, 0.95][seed % 4])
            except Exception as exc:  # the writer refused this damage: not a reader test
                refused += 1
                print(f"seed {seed}: writer refused: {exc}", file=sys.stderr)
                continue
            damaged += sum(what.damaged.values())
            try:
                profile = load_profile(str(out))
                report = analyze(profile)
            except LogReadError:
                continue  # a one-line refusal is a valid outcome
            except Exception as exc:
                crashes[f"{type(exc).__name__}: {exc}"[:120]] += 1
                traceback.print_exc()
                continue
            times.append(time.perf_counter() - t)
            dropped += sum(m.corrupt_records for m in profile.modules.values())
            for p in problems(report):
                breaks[p.split(" = ")[0].split(":")[0][:80]] += 1
    print("| fuzzed logs | bases | crashes | invariant breaks | damaged records | left out | median s/log |")
    print("|---|---|---|---|---|---|---|")
    med = statistics.median(times) if times else 0.0
    print(
        f"| {args.count - refused:,} | {len(bases)} | {sum(crashes.values())} | {sum(breaks.values())} | "
        f"{damaged:,} | {dropped:,} | {med:.3f} |"
    )
    for k, v in (crashes + breaks).most_common(20):
        print(f"  {v:6d}  {k}")
    return 1 if crashes or breaks else 0


if __name__ == "__main__":
    raise SystemExit(main())
