"""What a user waits for when comparing runs: the CLI, the service's compare and history routes, and combine.

    .venv/bin/python bench/bench_compare.py            # about a minute on 2 cores
    .venv/bin/python bench/bench_compare.py --runs 9

Measured, medians of --runs:
- ``iodiag compare sample-badost sample-goodost --format json``: whole process (imports, two logs read and
  analyzed, run facts, comparison);
- ``GET /api/v1/analyses/{a}/compare/{b}`` on the same two runs, stored: the server reads both reports and run
  facts back and compares (no log is read again);
- ``GET /api/v1/analyses/{id}/history`` for an application with nine runs (regression flags computed);
- ``iodiag analyze --combine`` of the 12 DLIO logs of one job (``shared/logs/darshan-logs/dlio_logs``) against
  ``iodiag analyze`` of one of them, whole process.
A measurement, not a test: nothing fails on a missed target.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "backend"))

from iodiag.evals.history import DEFAULT_SERIES, load_series  # noqa: E402
from iodiag.evals.triggers import build_entry  # noqa: E402
from tests.api.test_api_support import Server, upload, wait_done  # noqa: E402
from tests.conftest import shared_log, wheel_log  # noqa: E402

IODIAG = [sys.executable, "-m", "iodiag"]


def _wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _route(client: object, path: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = client.get(path)  # type: ignore[attr-defined]
        times.append(time.perf_counter() - t0)
        assert r.status_code == 200, r.text
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    bad, good = wheel_log("sample-badost.darshan"), wheel_log("sample-goodost.darshan")
    dlio = sorted(shared_log("darshan-logs/dlio_logs").glob("*.darshan"))
    rows: list[tuple[str, float, str]] = []
    rows.append(
        (
            "iodiag compare badost goodost (process)",
            _wall([*IODIAG, "compare", str(bad), str(good), "--format", "json"], args.runs),
            "s",
        )
    )
    one = _wall([*IODIAG, "analyze", str(dlio[0]), "--format", "json"], args.runs)
    combined = _wall([*IODIAG, "analyze", "--combine", *map(str, dlio), "--format", "json"], args.runs)
    rows.append(("iodiag analyze, 1 DLIO log (process)", one, "s"))
    rows.append((f"iodiag analyze --combine, {len(dlio)} DLIO logs (process)", combined, "s"))

    _, entries = load_series(DEFAULT_SERIES / "file-system-trouble.yaml", DEFAULT_SERIES.parent)
    cache = Path(REPO / "bench" / "results" / "series")
    cache.mkdir(parents=True, exist_ok=True)
    series = [build_entry(e, cache) for e in entries]
    server = Server.start_new(workers=2)
    try:
        with server.client("bench") as c:
            a = wait_done(c, upload(c, bad).json()["id"])["id"]
            b = wait_done(c, upload(c, good).json()["id"])["id"]
            ids = [wait_done(c, upload(c, log, f"day{i}.darshan").json()["id"])["id"] for i, log in enumerate(series)]
            runs = max(args.runs, 5)
            rows.append(
                ("GET compare/{b} (stored runs)", _route(c, f"/api/v1/analyses/{a}/compare/{b}", runs) * 1e3, "ms")
            )
            rows.append(
                (
                    f"GET history ({len(ids)} runs, flags)",
                    _route(c, f"/api/v1/analyses/{ids[-1]}/history", runs) * 1e3,
                    "ms",
                )
            )
    finally:
        server.cleanup()

    width = max(len(r[0]) for r in rows)
    print(f"{'measurement':<{width}}  {'median':>9}")
    for name, value, unit in rows:
        print(f"{name:<{width}}  {value:>7.3g} {unit}")
    print(f"combine / one log: {combined / one:.2f}x for {len(dlio)} logs")


if __name__ == "__main__":
    main()
