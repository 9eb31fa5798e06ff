"""Benchmark iodiag's analysis speed, in-process and as a whole command next to Drishti.

Run with the project's virtualenv (see bench/README.md):

    .venv/bin/python bench/bench_analyze.py [--quick] [--reps N] [--peer PATH] [--logs GLOB ...]

Part A (in-process, warm): ``load_profile`` + ``analyze`` timed per log after a warm-up pass;
the target is a median of per-log medians (and its p90) of at most 50 ms over logs under 1 MB.

Part B (whole process): ``iodiag analyze --format json LOG`` against ``drishti --csv LOG``,
run alternately (A B A B ...) so that machine noise falls on both; the targets (issue 20) are a median
iodiag wall time of at most 0.3 s and a median iodiag/drishti ratio of at most 1/3 (3x faster).
Before part B iodiag's sources are byte-compiled, as a regular ``pip install`` does for Drishti: an
editable install under PYTHONDONTWRITEBYTECODE would otherwise compile every module on every run.

This is a measurement, not a test: it never fails on a missed target. Results go to
bench/results/analyze.json (raw times included).
"""

from __future__ import annotations

import argparse
import gc
import glob
import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
DEFAULT_PEER = BENCH_DIR / ".venv-peer" / "bin" / "drishti"
DEFAULT_OUT = BENCH_DIR / "results" / "analyze.json"
SMALL_LIMIT = 1_000_000  # "under 1 MB"
TARGET_INPROC_MS = 50.0
TARGET_RATIO = 1 / 3
TARGET_PROCESS_S = 0.3
QUICK_LOGS = 6
BIGGEST_N = 5


# --------------------------------------------------------------------------- corpus


@dataclass
class Log:
    path: str
    label: str
    size: int
    duplicates: list[str] = field(default_factory=list)


def _shared_logs_dir() -> Path:
    env = os.environ.get("IODIAG_LOGS_DIR")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "logs"


def _wheel_logs_dir() -> Path | None:
    try:
        return Path(str(importlib.resources.files("darshan")))
    except ModuleNotFoundError:
        return None


def _label(path: Path) -> str:
    roots = [("shared:", _shared_logs_dir())]
    wheel = _wheel_logs_dir()
    if wheel is not None:
        roots.append(("darshan:", wheel))
    for prefix, root in roots:
        try:
            return prefix + str(path.resolve().relative_to(root.resolve()))
        except ValueError:
            continue
    return "/".join(path.parts[-2:])


def _expand(pattern: str) -> list[Path]:
    p = Path(pattern)
    if p.is_dir():
        return sorted(p.rglob("*.darshan"))
    return sorted(Path(x) for x in glob.glob(pattern, recursive=True) if Path(x).is_file())


def discover(patterns: list[str] | None) -> tuple[list[Log], list[str]]:
    """The corpus, one entry per distinct file content (byte-identical copies are merged)."""
    if patterns:
        paths = [q for pat in patterns for q in _expand(pat)]
    else:
        paths = _expand(str(_shared_logs_dir()))
        wheel = _wheel_logs_dir()
        if wheel is not None:
            paths += sorted(wheel.rglob("*.darshan"))
    by_hash: dict[str, Log] = {}
    notes: list[str] = []
    for p in paths:
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        if digest in by_hash:
            by_hash[digest].duplicates.append(str(p))
            continue
        by_hash[digest] = Log(path=str(p), label=_label(p), size=p.stat().st_size)
    dups = sum(len(log.duplicates) for log in by_hash.values())
    if dups:
        notes.append(f"{dups} byte-identical copies skipped")
    return sorted(by_hash.values(), key=lambda x: (x.size, x.label)), notes


def quick_subset(logs: list[Log], n: int = QUICK_LOGS) -> list[Log]:
    """``n`` logs spread evenly over the size range, smallest and biggest included."""
    if len(logs) <= n:
        return logs
    idx = sorted({round(i * (len(logs) - 1) / (n - 1)) for i in range(n)})
    return [logs[i] for i in idx]


# --------------------------------------------------------------------------- statistics


def _progress(console: Console, text: str) -> None:
    """A one-line progress note, only on a terminal (a log file would keep every line)."""
    if console.is_terminal:
        console.print(f"  {text}"[: console.width - 1].ljust(console.width - 1), style="dim", highlight=False, end="\r")


def _progress_done(console: Console) -> None:
    if console.is_terminal:
        console.print(" " * (console.width - 1), end="\r")


def median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def p90(xs: list[float]) -> float | None:
    if not xs:
        return None
    if len(xs) == 1:
        return xs[0]
    return statistics.quantiles(xs, n=10, method="inclusive")[8]


# --------------------------------------------------------------------------- part A: in-process


@dataclass
class InprocResult:
    label: str
    path: str
    size: int
    ok: bool = True
    error: str | None = None
    load_ms: list[float] = field(default_factory=list)
    analyze_ms: list[float] = field(default_factory=list)
    total_ms: list[float] = field(default_factory=list)
    findings: int | None = None

    def med(self, attr: str) -> float | None:
        return median(getattr(self, attr))


def bench_inprocess(logs: list[Log], reps: int, console: Console) -> list[InprocResult]:
    from iodiag.analysis import analyze
    from iodiag.ingest import load_profile

    results = [InprocResult(label=log.label, path=log.path, size=log.size) for log in logs]
    # Warm-up: imports, the Darshan library, lazily built tables, the OS page cache.
    for r in results:
        try:
            r.findings = len(analyze(load_profile(r.path)).findings)
        except Exception as exc:
            r.ok, r.error = False, f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    # Rounds over the whole corpus (every other one reversed) rather than all reps of one log
    # in a row: a burst of machine noise then spreads over many logs' samples instead of
    # landing on every sample of the one log being timed.
    todo = [r for r in results if r.ok]
    for rep in range(reps):
        _progress(console, f"round {rep + 1}/{reps}")
        for r in todo if rep % 2 == 0 else reversed(todo):
            gc.collect()
            t0 = time.perf_counter()
            profile = load_profile(r.path)
            t1 = time.perf_counter()
            analyze(profile)
            t2 = time.perf_counter()
            r.load_ms.append((t1 - t0) * 1e3)
            r.analyze_ms.append((t2 - t1) * 1e3)
            r.total_ms.append((t2 - t0) * 1e3)
    _progress_done(console)
    return results


def summarize_inprocess(results: list[InprocResult]) -> dict[str, Any]:
    small = [r for r in results if r.ok and r.size < SMALL_LIMIT]
    meds = [m for r in small if (m := r.med("total_ms")) is not None]
    med, q90 = median(meds), p90(meds)
    return {
        "small_limit_bytes": SMALL_LIMIT,
        "small_logs": len(small),
        "failed_logs": [r.label for r in results if not r.ok],
        "median_of_medians_ms": med,
        "p90_of_medians_ms": q90,
        "max_of_medians_ms": max(meds) if meds else None,
        "median_load_ms": median([m for r in small if (m := r.med("load_ms")) is not None]),
        "median_analyze_ms": median([m for r in small if (m := r.med("analyze_ms")) is not None]),
        "target_ms": TARGET_INPROC_MS,
        "median_meets_target": med is not None and med <= TARGET_INPROC_MS,
        "p90_meets_target": q90 is not None and q90 <= TARGET_INPROC_MS,
    }


# --------------------------------------------------------------------------- part B: whole process


@dataclass
class RunOutcome:
    ok: bool
    rc: int | None
    wall_s: float
    note: str = ""


@dataclass
class ProcessResult:
    label: str
    path: str
    size: int
    iodiag_s: list[float] = field(default_factory=list)
    drishti_s: list[float] = field(default_factory=list)
    iodiag_ok: bool = True
    drishti_ok: bool = True
    iodiag_note: str = ""
    drishti_note: str = ""

    @property
    def ratio(self) -> float | None:
        a, b = median(self.iodiag_s), median(self.drishti_s)
        if not (self.iodiag_ok and self.drishti_ok) or a is None or not b:
            return None
        return a / b


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:160] if lines else ""


def _run(cmd: list[str], cwd: str, timeout: float, check_json: bool) -> RunOutcome:
    """Run once; the wall time covers the whole process, start-up included."""
    out = subprocess.PIPE if check_json else subprocess.DEVNULL
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.PIPE, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return RunOutcome(False, None, time.perf_counter() - t0, f"timed out after {timeout:.0f} s")
    wall = time.perf_counter() - t0
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode < 0:
        return RunOutcome(False, proc.returncode, wall, f"killed by signal {-proc.returncode}")
    if check_json:
        # iodiag: the JSON report is the product; its exit status may also encode the findings.
        try:
            json.loads(proc.stdout)
        except ValueError:
            why = _last_line(err) or "no JSON on stdout"
            return RunOutcome(False, proc.returncode, wall, f"rc={proc.returncode}: {why}")
        return RunOutcome(True, proc.returncode, wall, "" if proc.returncode == 0 else f"rc={proc.returncode}")
    if proc.returncode != 0:
        return RunOutcome(False, proc.returncode, wall, f"rc={proc.returncode}: {_last_line(err)}")
    return RunOutcome(True, 0, wall)


def bench_process(
    logs: list[Log], reps: int, iodiag_cmd: list[str], peer: str, timeout: float, console: Console
) -> list[ProcessResult]:
    results = [ProcessResult(label=log.label, path=log.path, size=log.size) for log in logs]

    def cmds(r: ProcessResult) -> tuple[list[str], list[str]]:
        return [*iodiag_cmd, "analyze", "--format", "json", r.path], [peer, "--csv", r.path]

    # Drishti writes its CSV into the current directory: give each tool a scratch one.
    with tempfile.TemporaryDirectory(prefix="iodiag-bench-") as tmp:
        a_dir, b_dir = os.path.join(tmp, "iodiag"), os.path.join(tmp, "drishti")
        os.mkdir(a_dir)
        os.mkdir(b_dir)
        # One untimed run of each tool per log: checks that it works (iodiag must print JSON,
        # drishti must exit 0) and warms the page cache and the interpreters' imports.
        first_rc: dict[str, int | None] = {}
        for i, r in enumerate(results, 1):
            _progress(console, f"check {i}/{len(results)}: {r.label}")
            a_cmd, b_cmd = cmds(r)
            a0 = _run(a_cmd, a_dir, timeout, check_json=True)
            b0 = _run(b_cmd, b_dir, timeout, check_json=False)
            r.iodiag_ok, r.iodiag_note, first_rc[r.path] = a0.ok, a0.note, a0.rc
            r.drishti_ok, r.drishti_note = b0.ok, b0.note
        # Rounds over the corpus; within a round each log runs iodiag then drishti, so the
        # two tools alternate (A B A B ...) and share whatever the machine is doing.
        for rep in range(reps):
            for i, r in enumerate(results if rep % 2 == 0 else reversed(results), 1):
                _progress(console, f"round {rep + 1}/{reps}, log {i}/{len(results)}: {r.label}")
                a_cmd, b_cmd = cmds(r)
                if r.iodiag_ok:
                    a = _run(a_cmd, a_dir, timeout, check_json=False)
                    if a.rc is not None and a.rc >= 0 and a.rc == first_rc[r.path]:
                        r.iodiag_s.append(a.wall_s)
                    else:
                        r.iodiag_ok, r.iodiag_note = False, a.note or f"exit status changed to {a.rc}"
                if r.drishti_ok:
                    b = _run(b_cmd, b_dir, timeout, check_json=False)
                    if b.ok:
                        r.drishti_s.append(b.wall_s)
                    else:
                        r.drishti_ok, r.drishti_note = False, b.note
    _progress_done(console)
    return results


def summarize_process(results: list[ProcessResult]) -> dict[str, Any]:
    ratios = [x for r in results if (x := r.ratio) is not None]
    med = median(ratios)
    both = [r for r in results if r.ratio is not None]
    return {
        "logs": len(results),
        "compared_logs": len(ratios),
        "drishti_failed": [r.label for r in results if not r.drishti_ok],
        "iodiag_failed": [r.label for r in results if not r.iodiag_ok],
        "median_ratio": med,
        "p90_ratio": p90(ratios),
        "geomean_ratio": statistics.geometric_mean(ratios) if ratios else None,
        "iodiag_faster_on": sum(1 for x in ratios if x < 1.0),
        "median_iodiag_s": median([m for r in both if (m := median(r.iodiag_s)) is not None]),
        "median_drishti_s": median([m for r in both if (m := median(r.drishti_s)) is not None]),
        "target_ratio": TARGET_RATIO,
        "meets_target": med is not None and med <= TARGET_RATIO,
        "target_seconds": TARGET_PROCESS_S,
        "meets_seconds_target": (m := median([x for r in both if (x := median(r.iodiag_s)) is not None])) is not None
        and m <= TARGET_PROCESS_S,
    }


# --------------------------------------------------------------------------- output


def _size(n: int) -> str:
    x = float(n)
    for unit in ("B", "KB", "MB"):
        if x < 1000:
            return f"{x:.0f} {unit}" if unit == "B" else f"{x:.1f} {unit}"
        x /= 1000
    return f"{x:.1f} GB"


def _short(label: str, stem_width: int = 40) -> str:
    """``folder/file`` without the suffix; long file names keep their start, where logs differ."""
    parts = label.split(":", 1)[-1].split("/")
    stem = parts[-1].removesuffix(".darshan")
    if len(stem) > stem_width:
        stem = stem[: stem_width - 1] + "…"
    return "/".join([*parts[-2:-1], stem])


def _ms(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"


def _s(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _verdict(ok: bool) -> str:
    return "[green]met[/]" if ok else "[red]not met[/]"


def print_inprocess(console: Console, results: list[InprocResult], summary: dict[str, Any], reps: int) -> None:
    t = Table(
        title=f"A. In-process, warm: load_profile + analyze (median of {reps} reps, ms)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    t.add_column("log")
    t.add_column("size", justify="right")
    t.add_column("load", justify="right")
    t.add_column("analyze", justify="right")
    t.add_column("total", justify="right")
    t.add_column("note")
    for r in results:
        total = r.med("total_ms")
        style = "red" if total is not None and total > TARGET_INPROC_MS else None
        note = r.error or ("≥ 1 MB, not in summary" if r.size >= SMALL_LIMIT else "")
        t.add_row(
            _short(r.label),
            _size(r.size),
            _ms(r.med("load_ms")),
            _ms(r.med("analyze_ms")),
            f"[{style}]{_ms(total)}[/]" if style else _ms(total),
            note,
        )
    console.print(t)
    s = summary
    console.print(
        f"  logs < 1 MB: {s['small_logs']}   median of per-log medians: {_ms(s['median_of_medians_ms'])} ms "
        f"({_verdict(s['median_meets_target'])})   p90: {_ms(s['p90_of_medians_ms'])} ms "
        f"({_verdict(s['p90_meets_target'])})   max: {_ms(s['max_of_medians_ms'])} ms   "
        f"target ≤ {TARGET_INPROC_MS:.0f} ms",
        highlight=False,
    )
    console.print(
        f"  of which load: {_ms(s['median_load_ms'])} ms, analyze: {_ms(s['median_analyze_ms'])} ms "
        "(medians over logs)",
        highlight=False,
    )
    if s["failed_logs"]:
        console.print(f"  could not be read: {', '.join(s['failed_logs'])}", highlight=False)
    console.print()

    big = sorted((r for r in results if r.ok), key=lambda r: r.size, reverse=True)[:BIGGEST_N]
    b = Table(title=f"A'. The {len(big)} biggest logs (ms)", box=box.SIMPLE_HEAD, title_justify="left")
    b.add_column("log")
    for col in ("size", "load", "analyze", "total", "min total"):
        b.add_column(col, justify="right")
    for r in big:
        b.add_row(
            _short(r.label),
            _size(r.size),
            _ms(r.med("load_ms")),
            _ms(r.med("analyze_ms")),
            _ms(r.med("total_ms")),
            _ms(min(r.total_ms) if r.total_ms else None),
        )
    console.print(b)


def print_process(console: Console, results: list[ProcessResult], summary: dict[str, Any], reps: int) -> None:
    t = Table(
        title=f"B. Whole process: iodiag analyze --format json vs drishti --csv (median of {reps} reps, s)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
    )
    t.add_column("log")
    t.add_column("size", justify="right")
    t.add_column("iodiag", justify="right")
    t.add_column("drishti", justify="right")
    t.add_column("ratio", justify="right")
    t.add_column("note")
    for r in results:
        notes = []
        if not r.drishti_ok:
            notes.append(f"drishti crashed ({r.drishti_note}); excluded")
        if not r.iodiag_ok:
            notes.append(f"iodiag failed ({r.iodiag_note}); excluded")
        elif r.iodiag_note:
            notes.append(f"iodiag {r.iodiag_note}")
        ratio = r.ratio
        ratio_txt = "—" if ratio is None else f"[{'green' if ratio < 1 else 'red'}]{ratio:.2f}[/]"
        t.add_row(
            _short(r.label),
            _size(r.size),
            _s(median(r.iodiag_s)) if r.iodiag_ok else "failed",
            _s(median(r.drishti_s)) if r.drishti_ok else "crashed",
            ratio_txt,
            "; ".join(notes),
        )
    console.print(t)
    s = summary
    geo = "—" if s["geomean_ratio"] is None else f"{s['geomean_ratio']:.2f}"
    med = "—" if s["median_ratio"] is None else f"{s['median_ratio']:.2f}"
    console.print(
        f"  compared on {s['compared_logs']}/{s['logs']} logs   median ratio iodiag/drishti: {med} "
        f"({_verdict(s['meets_target'])}, target <= {TARGET_RATIO:.2f}, 3x faster)   geometric mean: {geo}   "
        f"iodiag faster on {s['iodiag_faster_on']}/{s['compared_logs']}",
        highlight=False,
    )
    console.print(
        f"  median wall time: iodiag {_s(s['median_iodiag_s'])} s ({_verdict(s['meets_seconds_target'])}, target "
        f"<= {TARGET_PROCESS_S} s), drishti {_s(s['median_drishti_s'])} s",
        highlight=False,
    )
    if s["drishti_failed"]:
        console.print(
            f"  drishti crashed on {len(s['drishti_failed'])} log(s); excluded from the ratio",
            highlight=False,
        )


# --------------------------------------------------------------------------- main


def _byte_compile(console: Console) -> None:
    """Byte-compile iodiag's sources, as pip does at install time for the peer's."""
    spec = importlib.util.find_spec("iodiag")
    if spec is None or not spec.submodule_search_locations:
        return
    for where in spec.submodule_search_locations:
        subprocess.run([sys.executable, "-m", "compileall", "-q", where], check=False, capture_output=True)
    console.print("  (iodiag byte-compiled, as an installed package is)", highlight=False)


def _default_iodiag() -> list[str]:
    script = Path(sys.executable).parent / "iodiag"
    return [str(script)] if script.exists() else [sys.executable, "-m", "iodiag"]


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _peer_version(peer: str) -> str | None:
    """Drishti has no --version: ask the peer's own interpreter for its installed version."""
    python = Path(peer).parent / "python"
    if not python.exists():
        return None
    code = "import importlib.metadata as m; print(m.version('drishti-io'))"
    try:
        out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", default=str(DEFAULT_PEER), help="drishti executable (default: %(default)s)")
    ap.add_argument(
        "--reps",
        type=int,
        default=None,
        help="whole-process repetitions per tool and log (default 5; 3 with --quick)",
    )
    ap.add_argument(
        "--inproc-reps",
        type=int,
        default=None,
        help="in-process repetitions per log (default 10; 5 with --quick)",
    )
    ap.add_argument("--quick", action="store_true", help=f"only {QUICK_LOGS} logs spread over the size range")
    ap.add_argument(
        "--logs",
        action="append",
        metavar="GLOB",
        help="logs to use (glob, file or directory; repeatable). Default: shared/logs and the "
        "logs shipped in the darshan package",
    )
    ap.add_argument("--part", choices=("all", "inprocess", "process"), default="all", help="what to run")
    ap.add_argument(
        "--iodiag",
        default=None,
        help="iodiag command (default: the iodiag script next to this python, else python -m iodiag)",
    )
    ap.add_argument("--timeout", type=float, default=300.0, help="per-run timeout, seconds (default 300)")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="JSON results file (default: %(default)s)")
    args = ap.parse_args(argv)
    if args.reps is None:
        args.reps = 3 if args.quick else 5
    if args.inproc_reps is None:
        args.inproc_reps = 5 if args.quick else 10
    if args.reps < 1 or args.inproc_reps < 1:
        ap.error("repetitions must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 170)
    logs, notes = discover(args.logs)
    if not logs:
        console.print("no logs found", style="red")
        return 2
    if args.quick:
        logs = quick_subset(logs)
    iodiag_cmd = shlex.split(args.iodiag) if args.iodiag else _default_iodiag()
    peer = shutil.which(args.peer) or args.peer

    meta: dict[str, Any] = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": list(os.getloadavg()),
        "python": platform.python_version(),
        "iodiag": _version("iodiag"),
        "darshan": _version("darshan"),
        "iodiag_cmd": iodiag_cmd,
        "peer": peer,
        "peer_version": None,
        "reps": args.reps,
        "inproc_reps": args.inproc_reps,
        "quick": args.quick,
        "logs": len(logs),
        "corpus_notes": notes,
    }
    console.print(
        f"iodiag bench: {len(logs)} logs ({'; '.join(notes) or 'no duplicates'}), {meta['cpus']} CPUs, "
        f"load average {meta['loadavg_at_start'][0]:.2f}",
        highlight=False,
    )
    out: dict[str, Any] = {"meta": meta}

    if args.part in ("all", "inprocess"):
        console.print(f"A. in-process: warm-up, then {args.inproc_reps} reps per log …", highlight=False)
        t0 = time.perf_counter()
        inproc = bench_inprocess(logs, args.inproc_reps, console)
        summary = summarize_inprocess(inproc)
        out["inprocess"] = {
            "summary": summary,
            "seconds": time.perf_counter() - t0,
            "logs": [
                asdict(r)
                | {
                    "median_total_ms": r.med("total_ms"),
                    "median_load_ms": r.med("load_ms"),
                    "median_analyze_ms": r.med("analyze_ms"),
                }
                for r in inproc
            ],
        }
        print_inprocess(console, inproc, summary, args.inproc_reps)
        console.print()

    if args.part in ("all", "process"):
        if not (Path(peer).exists() and os.access(peer, os.X_OK)):
            console.print(f"drishti not found at {peer}: run bash bench/setup_peer.sh or pass --peer", style="red")
            return 2
        meta["peer_version"] = _peer_version(peer)
        console.print(
            f"B. whole process: {' '.join(iodiag_cmd)} vs {peer} (drishti-io {meta['peer_version'] or '?'}), "
            f"{args.reps} alternating reps per log …",
            highlight=False,
        )
        _byte_compile(console)
        t0 = time.perf_counter()
        proc = bench_process(logs, args.reps, iodiag_cmd, peer, args.timeout, console)
        psummary = summarize_process(proc)
        out["process"] = {
            "summary": psummary,
            "seconds": time.perf_counter() - t0,
            "logs": [
                asdict(r)
                | {
                    "median_iodiag_s": median(r.iodiag_s),
                    "median_drishti_s": median(r.drishti_s),
                    "ratio": r.ratio,
                }
                for r in proc
            ],
        }
        print_process(console, proc, psummary, args.reps)

    meta["loadavg_at_end"] = list(os.getloadavg())
    dest = Path(args.out)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=2) + "\n")
    console.print(f"\nwrote {dest}", highlight=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
