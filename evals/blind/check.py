#!/usr/bin/env python3
"""Check that a generated set's logs hold what construction.yaml says, reading them with PyDarshan only.

    python evals/blind/check.py DIR

For every case it reads DIR/logs/case-NNN.darshan with PyDarshan (never with iodiag) and checks:

* the job: nprocs and run time as the scenario gives them;
* the busiest rank's top-layer I/O time: from the valid records (a file's MPI-IO record when it has one,
  else POSIX; STDIO; DFS; read + write + metadata time), per-rank records summed per rank and shared
  (rank -1) records counted by their slowest rank's time, gives a lower bound (the largest single rank's
  sum or shared file) and an upper bound (the largest rank's sum plus every shared file's slowest rank);
  the construction's number must lie between them, and io_matters must follow from the bounds;
* a signature of the class (partial flag and record count, the 47,008 B requests, collective wait,
  the slow OST's time per byte, invalid records, STDIO volume, ...).

It prints one line per case that fails and a summary; exit status 1 if any case fails.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import darshan
import darshan.backend.cffi_backend as be
import numpy as np
import yaml

TOP = {"MPI-IO": "MPIIO", "POSIX": "POSIX", "STDIO": "STDIO", "DFS": "DFS"}


def frames(rep: darshan.DarshanReport, mod: str):
    if mod not in rep.records or len(rep.records[mod]) == 0:
        return None
    d = rep.records[mod].to_df()
    return d["counters"].merge(d["fcounters"], on=["id", "rank"], suffixes=("", "_f"))


def raw_records(path: Path, mods: list[str]) -> list[tuple[str, int, int]]:
    """(module, id, rank) of every record, named or not (PyDarshan's report hides unnamed ones)."""
    out = []
    log = be.log_open(str(path))
    try:
        for m in mods:
            while True:
                r = be.log_get_record(log, m)
                if r is None:
                    break
                out.append((m, int(r["id"]), int(r["rank"])))
    finally:
        be.log_close(log)
    return out


def check_case(case: dict, log: Path, spec: dict) -> list[str]:
    errs: list[str] = []
    rep = darshan.DarshanReport(str(log), read_all=True)
    job = rep.metadata["job"]
    n = int(job["nprocs"])
    runtime = float(job["run_time"])
    if n != spec["job"]["nprocs"]:
        errs.append(f"nprocs {n} != {spec['job']['nprocs']}")
    if abs(runtime - float(spec["job"]["runtime"])) > 1e-3:
        errs.append(f"run time {runtime} != {spec['job']['runtime']}")
    names = rep.name_records
    mods = [m for m in ("POSIX", "MPI-IO", "STDIO", "DFS") if m in rep.modules]
    per_rank = np.zeros(n)
    shared: list[float] = []
    invalid = 0
    tables = {m: frames(rep, m) for m in mods}
    mpi_ids = set(tables["MPI-IO"]["id"].tolist()) if tables.get("MPI-IO") is not None else set()
    for mod in mods:
        t = tables[mod]
        if t is None:
            continue
        p = TOP[mod]
        time = t[f"{p}_F_READ_TIME"] + t[f"{p}_F_WRITE_TIME"] + t[f"{p}_F_META_TIME"]
        counts = t[[c for c in t.columns if c.startswith(p + "_") and not c.startswith(p + "_F_")]]
        bad = (
            (t["rank"] < -1)
            | (t["rank"] >= n)
            | (time < 0)
            | (time > max(runtime, 1.0) * max(n, 1) * 1.01)
            | (counts < 0).any(axis=1).to_numpy()
        )
        # A per-rank record cannot take longer than the run.
        bad |= (t["rank"] >= 0) & (time > runtime * 1.01)
        invalid += int(bad.sum())
        for rank, rid, tm, b in zip(t["rank"], t["id"], time, bad, strict=True):
            if b or (mod == "POSIX" and rid in mpi_ids):
                continue
            if rank == -1:
                col = f"{p}_F_SLOWEST_RANK_TIME"
                shared.append(float(t.loc[(t["id"] == rid) & (t["rank"] == -1), col].iloc[0]) if col in t else tm)
            else:
                per_rank[rank] += tm
    lo = max(float(per_rank.max()) if n else 0.0, max(shared, default=0.0))
    hi = float(per_rank.max()) + sum(shared)
    t_io = float(case["busiest_rank_io_seconds"])
    if not (lo - 1e-3 - 1e-6 * lo <= t_io <= hi + 1e-3 + 1e-6 * hi):
        errs.append(f"busiest rank's I/O {t_io} s outside the log's bounds [{lo:.4f}, {hi:.4f}]")
    matters = case["io_matters"]
    if matters is True and not (lo >= 0.05 * runtime and lo >= 1.0):
        if hi >= 0.05 * runtime and hi >= 1.0:
            pass  # consistent, but not provable from the log's reduced records alone
        else:
            errs.append(f"io_matters true but at most {hi:.3f} s of {runtime:.1f} s")
    if matters is False and (hi >= 0.05 * runtime and hi >= 1.0) and (lo >= 0.05 * runtime and lo >= 1.0):
        errs.append(f"io_matters false but at least {lo:.3f} s of {runtime:.1f} s")
    cls = case["class"]
    # Class signatures.
    if cls == "partial_log":
        if not rep.modules["POSIX"].get("partial_flag"):
            errs.append("POSIX not flagged partial")
        nrec = len(rep.records["POSIX"])
        if nrec not in (1024, 4096):
            errs.append(f"{nrec} POSIX records, not at a limit")
        ends = tables["POSIX"]["POSIX_F_CLOSE_END_TIMESTAMP"].max()
        if ends > 0.05 * runtime:
            errs.append(f"POSIX activity until {ends:.1f} s of {runtime:.1f} s")
    elif any(rep.modules[m].get("partial_flag") for m in rep.modules):
        errs.append("a module is flagged partial")
    if cls == "corrupt_records":
        raw = raw_records(log, mods)
        unnamed = sum(1 for _, i, _ in raw if i not in names)
        if invalid + unnamed == 0:
            errs.append("no invalid record")
    elif invalid:
        errs.append(f"{invalid} invalid records")
    if cls == "misaligned_shared_writes":
        t = tables["POSIX"]
        if not (t["POSIX_ACCESS1_ACCESS"] == 47008).any():
            errs.append("no 47,008 B requests")
    if cls == "collective_wait":
        t = tables["MPI-IO"]
        mpi = float((t["MPIIO_F_READ_TIME"] + t["MPIIO_F_WRITE_TIME"]).max())
        px = tables["POSIX"]
        posix = float((px["POSIX_F_READ_TIME"] + px["POSIX_F_WRITE_TIME"]).sum())
        ncoll = int((t["MPIIO_COLL_READS"] + t["MPIIO_COLL_WRITES"]).sum())
        if ncoll == 0 or mpi < 2 * posix / max(1, len(px)) or mpi < 10:
            errs.append(f"collective wait not visible (MPI-IO {mpi:.1f} s, POSIX {posix:.1f} s)")
    if cls == "stdio_bulk":
        t = tables["STDIO"]
        if float((t["STDIO_BYTES_WRITTEN"] + t["STDIO_BYTES_READ"]).sum()) < 256 * 2**20:
            errs.append("STDIO moves under 256 MiB")
    if cls in ("slow_ost", "single_ost_shared_file"):
        lus = {r["id"]: [int(o) for c in r["components"] for o in c["ost_ids"]] for r in rep.records["LUSTRE"]}
        px = tables["POSIX"]
        if cls == "single_ost_shared_file":
            big = px[(px["rank"] == -1) & ((px["POSIX_BYTES_WRITTEN"] + px["POSIX_BYTES_READ"]) >= 64 * 2**20)]
            if not any(len(lus.get(i, [])) == 1 for i in big["id"]):
                errs.append("no large shared file on one OST")
        else:
            per_ost_t: dict[int, float] = defaultdict(float)
            per_ost_b: dict[int, float] = defaultdict(float)
            for rid, tm, b in zip(
                px["id"],
                px["POSIX_F_WRITE_TIME"] + px["POSIX_F_READ_TIME"],
                px["POSIX_BYTES_WRITTEN"] + px["POSIX_BYTES_READ"],
                strict=True,
            ):
                osts = lus.get(rid, [])
                if len(osts) == 1 and b > 0:
                    per_ost_t[osts[0]] += tm
                    per_ost_b[osts[0]] += b
            rates = {o: per_ost_t[o] / per_ost_b[o] for o in per_ost_b}
            if len(rates) < 4 or max(rates.values()) < 3 * float(np.median(list(rates.values()))):
                errs.append("no OST several times slower per byte")
    return errs


def main(argv: list[str]) -> int:
    root = Path(argv[1])
    cons = yaml.safe_load((root / "construction.yaml").read_text())
    failed = 0
    for case in cons["cases"]:
        name = case["case"]
        spec = yaml.safe_load((root / "scenarios" / f"{name}.yaml").read_text())
        try:
            errs = check_case(case, root / "logs" / f"{name}.darshan", spec)
        except Exception as exc:  # noqa: BLE001 -- report and go on
            errs = [f"{type(exc).__name__}: {exc}"]
        if errs:
            failed += 1
            print(f"{name} {case['class']}: " + "; ".join(errs))
    print(f"{len(cons['cases']) - failed}/{len(cons['cases'])} cases hold what construction.yaml says")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
