"""Fuzz the reader and the analysis with damaged records: N real logs rewritten with corrupt records
(``iodiag.synth.fuzz``), each read and analysed, each report checked against the invariants
(``iodiag.analysis.outcomes.invariants``). Prints a table: logs, crashes, invariant breaks, records left out, time.

    .venv/bin/python bench/fuzz_records.py --count 10000 --workers 2
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
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from iodiag.analysis import analyze
from iodiag.analysis.outcomes.invariants import problems
from iodiag.ingest import JobProfile, LogReadError, load_profile
from iodiag.synth.fuzz import write_fuzzed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))
from tests.conftest import all_logs

_BASES: list[JobProfile] = []


def _load_bases(max_bytes: int) -> list[JobProfile]:
    out = []
    for p in all_logs():
        if p.stat().st_size <= max_bytes:
            with contextlib.suppress(LogReadError):
                out.append(load_profile(str(p)))
    return out


def _init(max_bytes: int) -> None:
    _BASES.extend(_load_bases(max_bytes))


def _one(seed: int) -> tuple[str, int, int, float, list[str]]:
    """(outcome, damaged, left out, seconds, problems) for one fuzzed log."""
    base = _BASES[seed % len(_BASES)]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "fuzzed.darshan"
        t = time.perf_counter()
        try:
            what = write_fuzzed(base, out, seed, share=[0.01, 0.1, 0.5, 0.95][seed % 4])
        except Exception:  # the writer refused this damage: not a reader test
            return "refused", 0, 0, 0.0, []
        damaged = sum(what.damaged.values())
        try:
            profile = load_profile(str(out))
            report = analyze(profile)
        except LogReadError:
            return "one-line error", damaged, 0, time.perf_counter() - t, []
        except Exception as exc:
            traceback.print_exc()
            return "crash", damaged, 0, 0.0, [f"{type(exc).__name__}: {exc}"[:120]]
        left = sum(m.corrupt_records for m in profile.modules.values())
        return "analysed", damaged, left, time.perf_counter() - t, problems(report)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--max-base-bytes", type=int, default=2 << 20, help="skip base logs larger than this")
    args = ap.parse_args()
    outcomes: Counter[str] = Counter()
    crashes: Counter[str] = Counter()
    breaks: Counter[str] = Counter()
    damaged = left = 0
    times: list[float] = []
    seeds = range(args.seed, args.seed + args.count)
    with ProcessPoolExecutor(args.workers, initializer=_init, initargs=(args.max_base_bytes,)) as pool:
        for outcome, d, lo, secs, found in pool.map(_one, seeds, chunksize=25):
            outcomes[outcome] += 1
            damaged, left = damaged + d, left + lo
            if outcome == "crash":
                crashes.update(found)
            else:
                breaks.update(p.split(" = ")[0].split(":")[0][:80] for p in found)
                if secs:
                    times.append(secs)
    bases = len(_load_bases(args.max_base_bytes))
    print(
        "| fuzzed logs | bases | analysed | one-line errors | crashes | invariant breaks | damaged records | left out |"
        " median s/log |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    med = statistics.median(times) if times else 0.0
    print(
        f"| {args.count - outcomes['refused']:,} | {bases} | {outcomes['analysed']:,} | "
        f"{outcomes['one-line error']:,} | {outcomes['crash']} | {sum(breaks.values())} | {damaged:,} | "
        f"{left:,} | {med:.3f} |"
    )
    for k, v in (crashes + breaks).most_common(20):
        print(f"  {v:6d}  {k}")
    return 1 if crashes or breaks else 0


if __name__ == "__main__":
    raise SystemExit(main())
