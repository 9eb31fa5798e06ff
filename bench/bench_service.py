"""Load bench of the REST service: 200 logs from 20 concurrent clients, with a server restart mid-run.

    .venv/bin/python bench/bench_service.py                 # SQLite, 2 workers (about 2 minutes on 2 cores)
    .venv/bin/python bench/bench_service.py --postgres URL  # a PostgreSQL database (an empty one is made)
    .venv/bin/python bench/bench_service.py --logs 400 --clients 40 --restart term
    .venv/bin/python bench/bench_service.py --runs 5        # five runs and their median (noisy machines)
    .venv/bin/python bench/bench_service.py --mode flood    # no polling: every client resubmits at once

The logs are the real ones (shared/logs and the darshan wheel) and scenario logs written from
evals/scenarios/*.yaml; each copy gets different bytes (real logs: a trailer after the last region,
which the reader ignores; scenarios: another job id), so every submission is a new analysis. When
half of the logs are in, the server is killed (SIGKILL; --restart term for a clean stop) and started
again on the same database; the clients retry through the outage like ``iodiag submit``. By default
(``--mode poll``) each client then polls its analysis every second until it is done before it submits the
next log, as job-completion hooks that wait for the verdict do: submissions arrive among 20 pollers while
the workers analyse. ``--mode flood`` resubmits at once instead: a saturating loop whose median latency is
about clients / throughput whatever the server does per request.

``--scenario auth-flood``: a valid client's request latency alone, then while 4 threads send invalid
tokens as fast as they can (6,000 in all); how many of those got 401, 429 and anything else.

``--scenario neighbour`` measures something else: a victim's small log (submit to verdict) alone, then
behind 6 decompression bombs and behind 6 heavy logs (a million DXT segments each) sent by another user
just before it; on SQLite, and on PostgreSQL too with --postgres. Goal: at most 2 s over its quiet
latency behind the bombs (they are refused at submission), and at most one heavy job's time behind the
heavy logs (owners take turns for the workers; first come, first served would make it wait for all six).

Reported: lost analyses (must be 0), 5xx answers (must be 0), submission latency p50/p99 (target p99
< 200 ms; accepted submissions only, retries through the outage excluded; also the p99 outside the
restart and the two seconds after it, when the new server is still starting its workers), analyses
per minute. Each client connects and authenticates once before the clock starts. Results go to
bench/results/service.json. A measurement, not a test: nothing fails on a missed target.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "backend"))

from tests.api.test_api_support import Server, fresh_postgres_url  # noqa: E402
from tests.conftest import all_logs  # noqa: E402


def _scenario_log(args: tuple[str, int, str]) -> str | None:
    spec, jobid, out = args
    from iodiag.synth.build import build_log
    from iodiag.synth.scenario import Scenario

    data = yaml.safe_load(Path(spec).read_text())
    data["job"]["jobid"] = jobid
    try:
        build_log(Scenario.model_validate(data), out)
    except Exception:
        return None
    return out


def make_logs(n: int, out: Path) -> list[Path]:
    """Half real logs (with distinct trailers), half scenario logs (with distinct job ids)."""
    real = sorted({p.read_bytes(): p for p in all_logs()}.values())  # byte-identical copies once
    logs: list[Path] = []
    for i in range(n // 2):
        src = real[i % len(real)]
        dst = out / f"real-{i:03d}-{src.name}"
        dst.write_bytes(src.read_bytes() + i.to_bytes(8, "little"))
        logs.append(dst)
    specs = sorted((REPO / "evals" / "scenarios").glob("*.yaml"))
    jobs = [(str(specs[i % len(specs)]), 100_000 + i, str(out / f"scn-{i:03d}.darshan")) for i in range(n - n // 2)]
    with ProcessPoolExecutor(os.cpu_count() or 2) as ex:
        logs += [Path(p) for p in ex.map(_scenario_log, jobs) if p]
    i = 0
    while len(logs) < n:  # a scenario the writer refused: another real copy instead
        src = real[i % len(real)]
        dst = out / f"extra-{i:03d}-{src.name}"
        dst.write_bytes(src.read_bytes() + (10_000 + i).to_bytes(8, "little"))
        logs.append(dst)
        i += 1
    return logs


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    when: list[tuple[float, float]] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)  # log -> analysis id
    status: dict[int, int] = field(default_factory=dict)
    connect_errors: int = 0
    polls: int = 0
    poll_5xx: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, code: int) -> None:
        with self.lock:
            self.status[code] = self.status.get(code, 0) + 1


def wait_done(c: httpx.Client, analysis_id: str, tally: Tally, every_s: float) -> None:
    """Poll the analysis every ``every_s`` seconds until it is done or failed, as a job-completion hook that
    waits for the verdict (or a user watching the page) does; polls through the restart's outage too."""
    while True:
        time.sleep(every_s)
        try:
            r = c.get(f"/api/v1/analyses/{analysis_id}")
        except httpx.TransportError:
            continue
        with tally.lock:
            tally.polls += 1
            if r.status_code >= 500:
                tally.poll_5xx += 1
        if r.status_code == 200 and r.json()["status"] in ("done", "failed"):
            return


def client_loop(
    url: str,
    token: str,
    work: Iterator[Path],
    work_lock: threading.Lock,
    tally: Tally,
    submitted: list[int],
    ready: threading.Barrier,
    poll_s: float,
) -> None:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
        # Connected and known before the clock starts, as a client of a running server would be.
        c.get("/api/v1/me").raise_for_status()
        ready.wait()
        while True:
            with work_lock:
                log = next(work, None)
            if log is None:
                return
            data = log.read_bytes()
            delay = 0.2
            while True:
                t0 = time.perf_counter()
                try:
                    r = c.post("/api/v1/analyses", files={"file": (log.name, data, "application/octet-stream")})
                except httpx.TransportError:
                    with tally.lock:
                        tally.connect_errors += 1
                    time.sleep(delay)
                    delay = min(delay * 2, 2.0)
                    continue
                took = time.perf_counter() - t0
                tally.count(r.status_code)
                if r.status_code >= 500:
                    time.sleep(delay)
                    continue
                with tally.lock:
                    if r.status_code in (200, 202):
                        tally.latencies.append(took)
                        tally.when.append((t0, took))
                        tally.ids[str(log)] = r.json()["id"]
                    submitted[0] += 1
                if poll_s > 0 and r.status_code in (200, 202):
                    wait_done(c, r.json()["id"], tally, poll_s)
                break


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", type=int, default=200)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--restart", choices=("kill", "term", "none"), default="kill")
    ap.add_argument(
        "--mode",
        choices=("poll", "flood"),
        default="poll",
        help="poll: each client submits, polls its analysis every --poll-s until done, then submits the next "
        "(the issue's hooks with pollers); flood: each client submits the next log as soon as the last is "
        "accepted (a saturating closed loop: its p50 is about clients / throughput)",
    )
    ap.add_argument("--poll-s", type=float, default=1.0)
    ap.add_argument("--postgres", metavar="URL", default="", help="a PostgreSQL URL (an empty database is made)")
    ap.add_argument(
        "--runs",
        type=int,
        default=1,
        help="repeat the whole run (a fresh server and database each time); prints each and the median",
    )
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "service.json")
    ap.add_argument("--scenario", choices=("load", "neighbour", "auth-flood"), default="load")
    args = ap.parse_args()
    if args.scenario == "neighbour":
        neighbour(args)
        return
    if args.scenario == "auth-flood":
        auth_flood(args)
        return

    tmp = Path(tempfile.mkdtemp(prefix="iodiag-bench-"))
    (tmp / "logs").mkdir()
    t = time.perf_counter()
    logs = make_logs(args.logs, tmp / "logs")
    print(f"{len(logs)} logs ({sum(p.stat().st_size for p in logs) / 1e6:.1f} MB) in {time.perf_counter() - t:.0f} s")
    try:
        results = [one_run(args, logs, tmp / f"data-{i}") for i in range(args.runs)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if len(results) == 1:
        args.out.write_text(json.dumps(results[0], indent=2) + "\n")
        return
    keys = ("submit_p50_ms", "submit_p99_ms", "submit_p99_steady_ms", "submit_max_ms", "analyses_per_min")
    median = {k: statistics.median(float(r[k]) for r in results) for k in keys}
    worst = {k: max(int(r[k]) for r in results) for k in ("lost", "http_5xx")}
    args.out.write_text(json.dumps({"runs": results, "median": median, "worst": worst}, indent=2) + "\n")
    print(f"\n{len(results)} runs ({results[0]['database']}): lost {worst['lost']}, 5xx {worst['http_5xx']} at worst")
    print(f"{'run':<8}{'p50 ms':>10}{'p99 ms':>10}{'p99 steady':>12}{'max ms':>10}{'analyses/min':>14}")
    for i, r in enumerate([*results, median]):
        print(
            f"{'median' if i == len(results) else i + 1!s:<8}"
            + "".join(f"{float(r[k]):>{w}.1f}" for k, w in zip(keys, (10, 10, 12, 10, 14), strict=True))
        )


def one_run(args: argparse.Namespace, logs: list[Path], data: Path) -> dict[str, Any]:
    """One server on a new database: the clients, the restart, the wait for every analysis; printed and returned."""
    db_url = fresh_postgres_url(args.postgres) if args.postgres else ""
    data.mkdir()
    server = Server(
        data,
        {"IODIAG_WORKERS": str(args.workers), "IODIAG_LEASE_S": "5", "IODIAG_HEARTBEAT_S": "1", "IODIAG_POLL_S": "0.5"},
        db_url,
    )
    token = server.token("bench", "user")
    admin = server.token("bench-admin", "admin")
    server.start()

    tally = Tally()
    submitted = [0]
    work, work_lock = iter(logs), threading.Lock()
    ready = threading.Barrier(args.clients + 1)
    poll_s = args.poll_s if args.mode == "poll" else 0.0
    threads = [
        threading.Thread(target=client_loop, args=(server.url, token, work, work_lock, tally, submitted, ready, poll_s))
        for _ in range(args.clients)
    ]
    for th in threads:
        th.start()
    ready.wait()
    started = time.perf_counter()
    restart_s = None
    outage = (float("inf"), float("inf"))
    if args.restart != "none":
        while submitted[0] < len(logs) // 2:
            time.sleep(0.01)
        t, at = time.perf_counter(), submitted[0]
        server.stop(signal.SIGKILL if args.restart == "kill" else signal.SIGTERM)
        server.start()
        restart_s = time.perf_counter() - t
        outage = (t, time.perf_counter() + 2.0)  # down, then the first seconds of a cold server
        print(f"restarted the server ({args.restart}) after {at} submissions; down {restart_s:.1f} s")
    for th in threads:
        th.join()
    submit_done = time.perf_counter()

    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {admin}"}, timeout=30) as c:
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            page = c.get("/api/v1/analyses", params={"owner": "bench", "limit": 1})
            pending = sum(
                c.get("/api/v1/analyses", params={"owner": "bench", "status": s, "limit": 1}).json()["total"]
                for s in ("queued", "running")
            )
            if pending == 0:
                break
            time.sleep(0.5)
        all_done = time.perf_counter()
        rows: dict[str, dict[str, object]] = {}
        offset = 0
        while True:
            page = c.get("/api/v1/analyses", params={"owner": "bench", "limit": 500, "offset": offset}).json()
            rows.update({str(i["id"]): i for i in page["items"]})
            offset += 500
            if offset >= page["total"]:
                break
        metrics = c.get("/metrics").text
    server.stop()

    ids = set(tally.ids.values())
    lost = len([i for i in ids if i not in rows or rows[i]["status"] not in ("done", "failed")])
    failed = [rows[i] for i in ids if i in rows and rows[i]["status"] == "failed"]
    retried = sum(1 for i in ids if i in rows and int(str(rows[i]["attempts"])) > 1)
    finished = [rows[i] for i in ids if i in rows and rows[i]["finished_at"]]
    wall = all_done - started
    n5xx = sum(n for code, n in tally.status.items() if code >= 500)
    result = {
        "logs": len(logs),
        "clients": args.clients,
        "workers": args.workers,
        "database": "postgresql" if db_url else "sqlite",
        "restart": args.restart,
        "mode": args.mode,
        "polls": tally.polls,
        "poll_5xx": tally.poll_5xx,
        "accepted": len(ids),
        "lost": lost + (len(logs) - len(tally.ids)),
        "failed": len(failed),
        "interrupted_then_finished": retried,
        "http_5xx": n5xx,
        "http_status": {str(k): v for k, v in sorted(tally.status.items())},
        "connect_errors_during_restart": tally.connect_errors,
        "restart_downtime_s": restart_s,
        "submit_p50_ms": 1000 * statistics.median(tally.latencies),
        "submit_p99_ms": 1000 * pct(tally.latencies, 0.99),
        "submit_max_ms": 1000 * max(tally.latencies),
        "submit_p99_steady_ms": 1000 * pct([d for w, d in tally.when if not outage[0] <= w <= outage[1]], 0.99),
        "submission_wall_s": submit_done - started,
        "total_wall_s": wall,
        "analyses_per_min": 60 * len(finished) / wall,
    }
    print()
    print(f"{'metric':<34}{'value':>14}")
    print("-" * 48)
    for key in (
        "logs",
        "clients",
        "workers",
        "database",
        "restart",
        "mode",
        "accepted",
        "polls",
        "poll_5xx",
        "lost",
        "failed",
        "interrupted_then_finished",
        "http_5xx",
        "connect_errors_during_restart",
    ):
        print(f"{key:<34}{result[key]!s:>14}")
    print(f"{'submit latency p50 (ms)':<34}{result['submit_p50_ms']:>14.1f}")
    print(f"{'submit latency p99 (ms)':<34}{result['submit_p99_ms']:>14.1f}")
    print(f"{'submit latency max (ms)':<34}{result['submit_max_ms']:>14.1f}")
    print(f"{'p99 outside the restart (ms)':<34}{result['submit_p99_steady_ms']:>14.1f}")
    print(f"{'restart downtime (s)':<34}{(restart_s or 0):>14.1f}")
    print(f"{'all analyzed after (s)':<34}{wall:>14.1f}")
    print(f"{'analyses per minute':<34}{result['analyses_per_min']:>14.1f}")
    if failed:
        print("\nfailed:", *{str(f["error"]) for f in failed}, sep="\n  ")
    t_first = min(w for w, _ in tally.when)
    slowest = sorted(tally.when, key=lambda x: -x[1])[:8]
    print(
        "\nslowest submissions (seconds after the first, ms):",
        ", ".join(f"{w - t_first:.2f} s: {1000 * d:.0f}" for w, d in slowest),
    )
    hist = [line for line in metrics.splitlines() if line.startswith("iodiag_analysis_seconds_count")]
    print("\n" + "\n".join(hist))
    return result


def _post(c: httpx.Client, path: Path, name: str) -> httpx.Response:
    return c.post("/api/v1/analyses", files={"file": (name, path.read_bytes(), "application/octet-stream")})


def _latency(c: httpx.Client, log: Path) -> float:
    """Seconds from sending ``log`` to its analysis being done."""
    t = time.perf_counter()
    r = _post(c, log, log.name)
    assert r.status_code == 202, r.text
    aid = r.json()["id"]
    while True:
        body = c.get(f"/api/v1/analyses/{aid}").json()
        if body["status"] in ("done", "failed"):
            assert body["status"] == "done", body
            return time.perf_counter() - t
        time.sleep(0.05)


def neighbour(args: argparse.Namespace) -> None:
    """A victim's latency alone, behind 6 bombs and behind 6 heavy logs from another user."""
    import subprocess

    from iodiag.synth.hostile import decompression_bomb
    from tests.conftest import wheel_log

    tmp = Path(tempfile.mkdtemp(prefix="iodiag-neighbour-"))
    try:
        small_src = (
            REPO.parent / "shared" / "logs" / "darshan-logs" / "release_logs" / "mpi-io-test-x86_64-3.4.1.darshan"
        )
        victims = []
        for i in range(12):
            v = tmp / f"victim-{i}.darshan"
            v.write_bytes(small_src.read_bytes() + i.to_bytes(8, "little"))
            victims.append(v)
        bombs = []
        for i in range(6):
            b = tmp / f"bomb-{i}.darshan"
            decompression_bomb(wheel_log("sample.darshan"), b, (1 << 30) + 4096 * i)
            bombs.append(b)
        heavy_src = tmp / "heavy.darshan"
        subprocess.run(
            [sys.executable, "-m", "iodiag", "synth", "--dxt-segments", "1000000", "-o", str(heavy_src)],
            check=True,
            capture_output=True,
        )
        heavy = []
        for i in range(6):
            h = tmp / f"heavy-{i}.darshan"
            h.write_bytes(heavy_src.read_bytes() + i.to_bytes(8, "little"))
            heavy.append(h)
        print(
            f"victim {small_src.stat().st_size / 1e3:.0f} kB; bombs {bombs[0].stat().st_size / 1e6:.2f} MB "
            f"(1 GiB inflated); heavy {heavy[0].stat().st_size / 1e6:.1f} MB (1M DXT segments)"
        )
        results = []
        for db in ["sqlite"] + (["postgresql"] if args.postgres else []):
            url = fresh_postgres_url(args.postgres) if db == "postgresql" else ""
            data = tmp / f"data-{db}"
            data.mkdir()
            env = {
                "IODIAG_WORKERS": str(args.workers),
                "IODIAG_POLL_S": "0.2",
                "IODIAG_MAX_UPLOAD_BYTES": str(64 << 20),
            }
            server = Server(data, env, url)
            tokens = {who: server.token(who, "user") for who in ("victim", "mallory")}
            server.start()
            try:
                clients = {
                    who: httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {t}"}, timeout=60)
                    for who, t in tokens.items()
                }
                v, m = clients["victim"], clients["mallory"]
                quiet = [_latency(v, victims[i]) for i in range(5)]
                codes = [_post(m, b, b.name).status_code for b in bombs]
                after_bombs = [_latency(v, victims[5])]
                heavy_ids = [_post(m, h, h.name).json()["id"] for h in heavy]
                after_heavy = _latency(v, victims[6])
                heavy_s = []
                for aid in heavy_ids:
                    while (body := m.get(f"/api/v1/analyses/{aid}").json())["status"] not in ("done", "failed"):
                        time.sleep(0.2)
                    heavy_s.append(float(body["analysis_s"] or 0))
                for c in clients.values():
                    c.close()
            finally:
                server.stop()
            q = statistics.median(quiet)
            results.append(
                {
                    "database": db,
                    "workers": args.workers,
                    "victim_quiet_s": q,
                    "bombs_refused": sum(1 for code in codes if code == 422),
                    "victim_after_6_bombs_s": after_bombs[0],
                    "victim_after_6_heavy_s": after_heavy,
                    "heavy_job_median_s": statistics.median(heavy_s),
                    "heavy_jobs_total_s": sum(heavy_s),
                }
            )
        print(
            f"\n{'database':<12}{'quiet s':>9}{'6 bombs s':>11}{'refused':>9}{'over':>7}"
            f"{'6 heavy s':>11}{'one heavy s':>13}{'FIFO would':>12}"
        )
        for r in results:
            print(
                f"{r['database']:<12}{r['victim_quiet_s']:>9.2f}{r['victim_after_6_bombs_s']:>11.2f}"
                f"{r['bombs_refused']:>7}/6{r['victim_after_6_bombs_s'] - r['victim_quiet_s']:>7.2f}"
                f"{r['victim_after_6_heavy_s']:>11.2f}{r['heavy_job_median_s']:>13.2f}"
                f"{r['heavy_jobs_total_s'] / args.workers:>11.1f}+"
            )
        out = args.out.with_name("service_neighbour.json") if args.out.name == "service.json" else args.out
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def auth_flood(args: argparse.Namespace) -> None:
    """p50/p99 of a valid token's GET /me alone and during a flood of invalid tokens from the same address."""
    tmp = Path(tempfile.mkdtemp(prefix="iodiag-authflood-"))
    try:
        server = Server(tmp, {"IODIAG_WORKERS": "0"})
        good = server.token("steady")
        server.start()

        def timed(c: httpx.Client, n: int) -> list[float]:
            out = []
            for _ in range(n):
                t = time.perf_counter()
                assert c.get("/api/v1/me").status_code == 200
                out.append(time.perf_counter() - t)
                time.sleep(0.01)
            return out

        codes: dict[int, int] = {}
        lock = threading.Lock()
        sent = [0]

        def flood() -> None:
            with httpx.Client(base_url=server.url, timeout=30) as c:
                while True:
                    with lock:
                        if sent[0] >= 6000:
                            return
                        sent[0] += 1
                        i = sent[0]
                    code = c.get("/api/v1/me", headers={"Authorization": f"Bearer iod_bad{i}"}).status_code
                    with lock:
                        codes[code] = codes.get(code, 0) + 1

        try:
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {good}"}, timeout=30) as c:
                timed(c, 20)  # warm
                quiet = timed(c, 300)
                threads = [threading.Thread(target=flood) for _ in range(4)]
                t0 = time.perf_counter()
                for th in threads:
                    th.start()
                during = timed(c, 300)
                for th in threads:
                    th.join()
                flood_s = time.perf_counter() - t0
        finally:
            server.stop()
        rate = sum(codes.values()) / flood_s
        print(f"\n{'valid GET /me':<22}{'p50 ms':>9}{'p99 ms':>9}")
        for name, lat in (("alone", quiet), ("during the flood", during)):
            print(f"{name:<22}{1000 * statistics.median(lat):>9.1f}{1000 * pct(lat, 0.99):>9.1f}")
        print(f"\nflood: {sum(codes.values())} invalid tokens at {rate:.0f}/s; answers {dict(sorted(codes.items()))}")
        out = args.out.with_name("service_auth_flood.json") if args.out.name == "service.json" else args.out
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(
            json.dumps(
                {
                    "valid_p50_ms_alone": 1000 * statistics.median(quiet),
                    "valid_p99_ms_alone": 1000 * pct(quiet, 0.99),
                    "valid_p50_ms_during_flood": 1000 * statistics.median(during),
                    "valid_p99_ms_during_flood": 1000 * pct(during, 0.99),
                    "flood_rate_per_s": rate,
                    "flood_answers": {str(k): v for k, v in sorted(codes.items())},
                },
                indent=2,
            )
            + "\n"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
