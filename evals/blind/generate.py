#!/usr/bin/env python3
"""Seeded generator of randomized, realistic synthetic Darshan logs with ground truth by construction.

    python evals/blind/generate.py --seed S --count N --out DIR [--jobs J]
    python evals/blind/generate.py --rebuild DIR [--logs OUTDIR] [--jobs J]

Generating draws N cases over the classes in ``CLASSES`` (see README.md) and writes

* ``DIR/scenarios/case-NNN.yaml``: a scenario spec (docs/scenario-spec.md) -- job, files, program; the
  cases of two classes also carry the eval-only ``log_faults`` key (evals/README.md): ``partial`` (modules
  Darshan flagged partial) and ``corrupt_records`` (invalid records made from valid ones by
  ``corrupt_tables`` below, before the log is written);
* ``DIR/construction.yaml``: per case the class, io_matters, secondary classes and a one-line why;
* ``DIR/logs/case-NNN.darshan``: the log, built from the YAML file just written.

``--rebuild DIR`` builds the logs again from ``DIR/scenarios`` (into ``DIR/logs``, or ``--logs``).

Only the log writer is used (``iodiag.synth``: simulate, derive, write); nothing here reads or runs
iodiag's analysis. A case's truth is computed from the simulated program itself: the busiest rank's
I/O time is the sum of the durations of its calls at the top layer of every phase (STDIO, POSIX, DFS,
or MPI-IO for MPI-IO/HDF5/PnetCDF phases), open/close/stat/seek/fsync included.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import iodiag.synth.writer as _writer
import numpy as np
import yaml
from iodiag.synth.derive import call_stacks, derive_tables
from iodiag.synth.program import Simulator
from iodiag.synth.scenario import Scenario, parse_scenario
from iodiag.synth.trace import TraceLayer
from iodiag.synth.writer import write_log

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

CLASSES = (
    "small_requests",
    "random_access",
    "misaligned_shared_writes",
    "non_collective",
    "collective_wait",
    "metadata",
    "single_ost_shared_file",
    "slow_ost",
    "rank_imbalance",
    "stdio_bulk",
    "bandwidth_bound",
    "healthy_negligible",
    "partial_log",
    "corrupt_records",
)
HEALTHY_SHARE = 0.15
"""Fraction of the cases drawn as healthy_negligible."""

MATTERS_SHARE, MATTERS_SECONDS = 0.05, 1.0
"""io_matters: the busiest rank's top-layer I/O time is >= 5 % of the run time and >= 1 s."""

REQ_BUDGET = 1_000_000
"""Data requests per phase (all ranks): keeps a case to a few seconds of simulation."""
META_BUDGET = 1_500_000
"""Metadata calls per phase (all ranks)."""

SMALL_SIZES = [1 * KiB, 2 * KiB, 4000, 4 * KiB, 8 * KiB, 12 * KiB, 16 * KiB, 32 * KiB, 47008, 60000, 64 * KiB]
MODERATE_SIZES = [256 * KiB, 512 * KiB, 1 * MiB - 4 * KiB, 1 * MiB, 1 * MiB + 8, 2 * MiB, 4 * MiB]
LARGE_SIZES = [1 * MiB, 2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB]
STDIO_BUFFERS = [4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB]
PPN = [32, 48, 56, 64, 64, 96, 128, 128]

# --- realistic names ------------------------------------------------------------------------------

EXES = [
    "./lmp -in in.rhodo -var steps 20000",
    "./lmp_mpi -in in.lj",
    "./gmx_mpi mdrun -deffnm md -maxh 11.5",
    "/opt/apps/vasp/6.4.2/bin/vasp_std",
    "./nek5000",
    "./wrf.exe",
    "./cp2k.psmp -i md.inp",
    "/sw/qe/7.2/bin/pw.x -nk 4 -in scf.in",
    "./e3sm.exe",
    "./flash4",
    "./castro3d.gnu.MPI.ex inputs.3d",
    "./nyx3d.gnu.MPI.ex inputs",
    "./enzo.exe -d params.enzo",
    "./athena -i athinput.turb",
    "./milc_su3_rhmd",
    "./chroma -i hmc.ini.xml",
    "./nwchem input.nw",
    "./s3d.x",
    "./xgc-es",
    "./pele.ex inputs.2d",
    "./hacc_tpm indat cmbM000.tf m000 INIT ALL_TO_ALL -w -R -N 512",
    "./nekrs --setup turbPipe.par",
    "/usr/bin/python3 train.py --config configs/resnet50.yaml",
    "python -u run_model.py --epochs 40",
    "./openfoam_simpleFoam -parallel",
    "./cesm.exe",
    "./gene_frontier",
    "./amg -n 256 256 256",
    "./quicksilver -i Coral2_P1.inp",
    "./miniWeather",
    "./warpx.3d input_lwfa",
    "./mfix_dem inputs",
    "./hmmsearch --cpu 4 Pfam-A.hmm uniref90.fasta",
    "./ramses3d namelist.nml",
    "./gadget4 param.txt",
]
USERS = [
    "jsmith",
    "alee",
    "mkumar",
    "pchen",
    "rgarcia",
    "tnguyen",
    "kwilson",
    "hmuller",
    "sito",
    "dpatel",
    "u12873",
    "u20455",
    "bjones",
    "lrossi",
    "ywang",
]
PROJECTS = [
    "CSC412",
    "CLI118",
    "FUS127",
    "CHM155",
    "PHY044",
    "MAT201",
    "AST190",
    "BIF105",
    "ENG033",
    "GEO077",
    "climate_ml",
    "turbulence",
    "qcd_lat",
    "materials",
]
LUSTRE_MOUNTS = [
    "/lus/grand",
    "/lus/eagle",
    "/lustre/orion",
    "/pscratch",
    "/lus/flare",
    "/lustre/scratch",
    "/scratch1",
    "/lus/cfs",
]
GPFS_MOUNTS = ["/gpfs/alpine", "/gpfs/scratch", "/gpfs/projects", "/gpfs/wolf", "/gpfs/fs1"]
NFS_MOUNTS = ["/nfs/proj", "/projects", "/nfs/scratch"]
OUTPUT_NAMES = [
    "plt{s:05d}/Cell_D_{r}",
    "restart.{s:04d}.{r}.bin",
    "dump.{s:04d}.{r}.lammpstrj",
    "chk{s:05d}/part.{r}",
    "out/field_{s:04d}.{r}.dat",
    "snap_{s:03d}.{r}",
    "traj/frame{s:04d}.{r}.xtc",
    "state_{s:04d}_{r}.raw",
]
SHARED_OUTPUT_NAMES = [
    "plt{s:05d}.h5",
    "field.{s:04d}.dat",
    "checkpoint_{s:04d}.bin",
    "snapshot_{s:03d}.nc",
    "restart.{s:05d}.h5",
    "dump.{s:04d}",
    "ocean.h0.{s:04d}.nc",
    "particles_{s:04d}.bin",
]
INPUT_NAMES = [
    "input/mesh.bin",
    "data/initial_conditions.dat",
    "inputs/grid.nc",
    "data/ic_{s:04d}.bin",
    "tables/eos_table.h5",
    "input/restart.h5",
    "db/uniref90.fasta",
    "data/train.bin",
]
SMALL_FILE_DIRS = ["samples", "cases", "frames", "tiles", "shards", "events", "patches", "records"]
SMALL_FILE_EXTS = [".json", ".npy", ".txt", ".dat", ".png", ".in", ".csv", ".xyz"]


def rid(rng: random.Random) -> str:
    return rng.choice(["run", "case", "job", "prod", "r", "sim"]) + str(rng.randint(1, 99))


def fmt_size(b: int) -> str:
    """Bytes for a human: exact when a small whole number of units, else one decimal in the largest unit."""
    for unit, n in (("TiB", 1 << 40), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if b >= n:
            if b % n == 0 and b // n < 10_000:
                return f"{b // n:,} {unit}"
            if unit == "KiB" and b < 100 * KiB:
                break
            return f"{b / n:,.1f} {unit}"
    return f"{b:,} B"


def spec_size(b: int) -> int | str:
    for unit, n in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if b >= n and b % n == 0:
            return f"{b // n}{unit}"
    return b


def sig(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}")


def logu(rng: random.Random, lo: float, hi: float) -> float:
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


class Retry(Exception):
    """This draw does not meet its class's construction rules; draw again."""


# --- the job's context: ranks, mounts, paths ------------------------------------------------------


def pick_ranks(rng: random.Random, lo: int, hi: int) -> tuple[int, int]:
    """Log-uniform on [lo, hi], one draw in five from the top three octaves (large jobs are what fails at scale)."""
    if hi >= 64 * lo and rng.random() < 0.2:
        lo = max(lo, hi // 8)
    n = round(logu(rng, lo, hi + 0.999))
    n = max(lo, min(hi, n))
    ppn = rng.choice(PPN)
    if n > ppn:
        if rng.random() < 0.5:
            n = 2 ** round(math.log2(n))
        else:
            n = max(ppn, round(n / ppn) * ppn)
        n = max(lo, min(hi, n))
        return n, math.ceil(n / ppn)
    if n > 8 and rng.random() < 0.3:
        return n, 2 if n >= 2 else 1
    return n, 1


@dataclass
class Ctx:
    rng: random.Random
    fs: str
    nprocs: int
    nodes: int
    mounts: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    data_mount: str = "/"
    base: str = "/"
    home: str = "/home/user"
    ost_count: int = 0

    @classmethod
    def make(cls, rng: random.Random, fs: str, nprocs: int, nodes: int) -> Ctx:
        c = cls(rng=rng, fs=fs, nprocs=nprocs, nodes=nodes)
        user, proj, run = rng.choice(USERS), rng.choice(PROJECTS), rid(rng)
        home_fs = rng.choice(["nfs", "nfs", "gpfs"])
        mounts = [{"path": "/", "fs": rng.choice(["ext4", "xfs", "overlay"])}]
        if fs == "lustre":
            mp = rng.choice(LUSTRE_MOUNTS)
            c.ost_count = rng.choice([16, 24, 32, 48, 64, 96, 128, 160, 256])
            mounts.append({"path": mp, "fs": "lustre", "ost_count": c.ost_count})
            area = rng.choice(["projects", "scratch", "users", "proj-shared"])
            c.base = f"{mp}/{area}/{proj}/{user}/{run}"
        elif fs == "gpfs":
            mp = rng.choice(GPFS_MOUNTS)
            mounts.append({"path": mp, "fs": "gpfs"})
            c.base = f"{mp}/{proj.lower()}/{user}/{run}"
        elif fs == "nfs":
            mp = rng.choice(NFS_MOUNTS)
            mounts.append({"path": mp, "fs": "nfs"})
            c.base = f"{mp}/{proj.lower()}/{user}/{run}"
        elif fs == "daos":
            pool, cont = rng.choice(["pool0", "sc_pool", "tank", "p1"]), rng.choice(["ckpt", "cont0", "data", "sim"])
            mp = f"/daos/{pool}/{cont}"
            mounts.append({"path": mp, "fs": "daos"})
            c.base = f"{mp}/{run}"
        else:
            raise ValueError(fs)
        c.data_mount = mp
        mounts.append({"path": "/home", "fs": home_fs})
        mounts.append({"path": "/tmp", "fs": "tmpfs"})
        if rng.random() < 0.5:
            mounts.append({"path": "/dev/shm", "fs": "tmpfs"})
        rng.shuffle(mounts)
        c.mounts = mounts
        c.home = f"/home/{user}/{run}"
        return c

    @property
    def iface(self) -> str:
        """The interface a plain POSIX-style phase uses on this file system."""
        return "dfs" if self.fs == "daos" else "posix"

    def p(self, rel: str) -> str:
        return f"{self.base}/{rel}"

    def lustre(self, path: str, stripe_count: int = 1, stripe_size: int = MiB, **kw: Any) -> None:
        if self.fs != "lustre":
            return
        lus: dict[str, Any] = {"stripe_size": spec_size(stripe_size), "stripe_count": stripe_count, **kw}
        self.files.append({"path": path, "lustre": lus})

    def pinned(self, path: str, stripe_count: int = 1) -> None:
        """A Lustre file on explicit OSTs (so it does not move the round-robin cursor); per-rank files go round-robin."""
        if self.fs == "lustre" and "{rank}" in path:
            self.lustre(path, stripe_count=1)
        elif self.fs == "lustre":
            start = self.rng.randrange(self.ost_count)
            self.lustre(path, stripe_count=stripe_count, ost_start=start)

    def slow_ost(self, ost: int, factor: float) -> None:
        for m in self.mounts:
            if m["fs"] == "lustre":
                m["slow_osts"] = {ost: factor}


def phase(**kw: Any) -> dict[str, Any]:
    """A program phase; keys starting with '_' are the generator's own tags and never reach the spec."""
    if "size" in kw:
        s = kw["size"]
        kw["size"] = [spec_size(x) for x in s] if isinstance(s, list) else spec_size(s)
    for k in ("seconds_per_op", "meta_seconds", "wait_seconds"):
        if k in kw:
            kw[k] = sig(kw[k])
    kw.setdefault("_role", "bg")
    return kw


def step_name(rng: random.Random, names: list[str], s: int, r: str = "{rank}") -> str:
    return rng.choice(names).format(s=s, r=r)


# --- a drawn case before its timing is settled ----------------------------------------------------


@dataclass
class Draft:
    cls: str
    ctx: Ctx
    phases: list[dict[str, Any]]
    desc: str
    want: bool | None
    secondary: list[str] = field(default_factory=list)
    faults: dict[str, Any] = field(default_factory=dict)
    exe: str = ""
    first_gap: float = 0.02
    """Weight of the compute before the first phase (other phases weigh 1, the tail ``tail``)."""
    tail: float = 0.2
    short: bool = False
    """io_matters false because the I/O is under 1 s (a short job), whatever its share."""


def fs_pick(rng: random.Random, n: int, weights: dict[str, float]) -> str:
    w = dict(weights)
    if n > 64:
        w.pop("nfs", None)
    keys = list(w)
    return rng.choices(keys, [w[k] for k in keys])[0]


def background(rng: random.Random, c: Ctx, budget_s: float) -> list[dict[str, Any]]:
    """Small healthy phases around the main one (input read, log lines); their time is at most ``budget_s``."""
    out = []
    n = c.nprocs
    if rng.random() < 0.6:
        size = rng.choice([4 * MiB, 8 * MiB, 16 * MiB])
        cnt = rng.randint(1, 16)
        spo = min(budget_s / cnt / 2, size / (1.5 * GiB))
        inp = c.p(step_name(rng, INPUT_NAMES, rng.randint(0, 20)))
        c.pinned(inp, stripe_count=rng.choice([1, 4, 8]))
        ranks = "all" if rng.random() < 0.5 or n == 1 else "0"
        iface = c.iface
        if ranks == "0" and n > 1:
            cnt = max(1, cnt // 4)
        out.append(
            phase(
                ranks=ranks, file=inp, interface=iface, op="read", count=cnt, size=size, seconds_per_op=spo, _gap=0.02
            )
        )
    if rng.random() < 0.5:
        out.append(
            phase(
                ranks="0",
                file=f"{c.home}/{rng.choice(['log.txt', 'run.out', 'progress.log', 'stats.csv'])}",
                interface="stdio",
                op="write",
                count=rng.randint(5, 400),
                size=rng.choice([80, 120, 512, 1024]),
                seconds_per_op=2e-5,
            )
        )
    return out


# --- class builders -------------------------------------------------------------------------------
# Each returns a Draft whose main ("problem") phases take about ``t`` seconds on the busiest rank.


def b_small_requests(rng: random.Random, t: float) -> Draft:
    n, nodes = pick_ranks(rng, 1, 4096)
    fs = fs_pick(rng, n, {"lustre": 0.5, "gpfs": 0.25, "nfs": 0.1, "daos": 0.15})
    c = Ctx.make(rng, fs, n, nodes)
    size = rng.choice([s for s in SMALL_SIZES if s != 47008])
    op = "write" if rng.random() < 0.65 else "read"
    shared = n >= 2 and rng.random() < 0.4
    cmax = min(200_000, REQ_BUDGET // n)
    spo = logu(rng, 1e-4, min(0.05, 8e-3 * max(1.0, n / 256) ** 0.5))
    cnt = int(min(max(t / spo, max(200, 1500 // n + 1)), cmax))
    if shared:
        path = c.p(step_name(rng, SHARED_OUTPUT_NAMES, rng.randint(1, 500)))
        c.lustre(path, stripe_count=rng.choice([1, 4, 8, -1]), stripe_size=rng.choice([MiB, 4 * MiB]))
        where = "one shared file (each rank its own block)"
    else:
        path = c.p(step_name(rng, OUTPUT_NAMES, rng.randint(1, 500)))
        c.lustre(path, stripe_count=1)
        where = "a file per rank"
    main = phase(
        ranks="all",
        file=path,
        interface=c.iface,
        op=op,
        count=cnt,
        size=size,
        seconds_per_op=spo,
        _role="problem",
        mem_aligned=rng.random() < 0.8,
    )
    phases = background(rng, c, 0.05 * cnt * spo)
    phases.insert(rng.randint(0, len(phases)), main)
    desc = (
        f"{n} ranks x {cnt:,} {op}s of {fmt_size(size)} ({spo * 1e3:.3g} ms each) to {where} on {fs}, "
        f"{fmt_size(n * cnt * size)} in all"
    )
    return Draft("small_requests", c, phases, desc, True)


def b_random_access(rng: random.Random, t: float) -> Draft:
    n, nodes = pick_ranks(rng, 1, 16384)
    fs = fs_pick(rng, n, {"lustre": 0.45, "gpfs": 0.3, "nfs": 0.1, "daos": 0.15})
    c = Ctx.make(rng, fs, n, nodes)
    size = rng.choice(MODERATE_SIZES)
    op = "read" if rng.random() < 0.7 else "write"
    cmin = max(64, 2000 // n + 1)
    cmax = min(50_000, REQ_BUDGET // n)
    if cmax < cmin:
        raise Retry
    latency = logu(rng, 2e-3, 2.5e-2)
    spo = latency + size / logu(rng, 150e6, 1.5e9)
    cnt = int(min(max(t / spo, cmin), cmax))
    shared = n >= 2 and rng.random() < 0.5
    if shared:
        path = c.p(
            rng.choice(
                ["db/index.bin", "data/train.bin", "input/lookup_table.dat", "db/uniref90.fasta", "data/samples.h5"]
            )
        )
        c.lustre(path, stripe_count=rng.choice([4, 8, 16, -1]), stripe_size=rng.choice([MiB, 4 * MiB]))
        where = "one shared file (each rank its own region)"
    else:
        path = c.p(step_name(rng, OUTPUT_NAMES, rng.randint(1, 500)))
        c.lustre(path, stripe_count=1)
        where = "a file per rank"
    main = phase(
        ranks="all",
        file=path,
        interface=c.iface,
        op=op,
        count=cnt,
        size=size,
        pattern="random",
        seconds_per_op=spo,
        _role="problem",
    )
    phases = background(rng, c, 0.05 * cnt * spo)
    phases.insert(rng.randint(0, len(phases)), main)
    desc = f"{n} ranks x {cnt:,} random-offset {op}s of {fmt_size(size)} ({spo * 1e3:.3g} ms each) in {where} on {fs}"
    return Draft("random_access", c, phases, desc, True)


def b_misaligned(rng: random.Random, t: float) -> Draft:
    n, nodes = pick_ranks(rng, 16, 16384)
    c = Ctx.make(rng, "lustre", n, nodes)
    cmin, cmax = 100, min(20_000, REQ_BUDGET // n)
    if cmax < cmin:
        raise Retry
    spo = logu(rng, 2e-3, 0.03) * max(1.0, n / 64) ** 0.3
    cnt = int(min(max(t / spo, cmin), cmax))
    path = c.p(
        rng.choice(
            ["output/traj.dat", "data/field_all.bin", "out/particles.dat", "restart/state.bin", "results/flux.dat"]
        )
    )
    sc = rng.choice([4, 8, 16, 32, -1])
    c.lustre(path, stripe_count=sc, stripe_size=rng.choice([MiB, 4 * MiB, 16 * MiB]))
    phases = [
        phase(
            ranks="all",
            file=path,
            op="write",
            count=cnt,
            size=47008,
            layout="interleaved",
            seconds_per_op=spo,
            _role="problem",
        )
    ]
    readback = rng.random() < 0.4
    if readback:
        phases.append(
            phase(
                ranks="all",
                file=path,
                op="read",
                count=cnt,
                size=47008,
                layout="interleaved",
                seconds_per_op=spo * rng.uniform(0.1, 0.4),
                _role="problem",
            )
        )
    bg = background(rng, c, 0.05 * cnt * spo)
    phases = bg[:1] + phases + bg[1:]
    desc = (
        f"{n} ranks x {cnt:,} interleaved 47,008 B POSIX writes to one shared file on Lustre "
        f"(stripe count {sc}), {spo * 1e3:.3g} ms each{', then read back the same way' if readback else ''}, "
        f"{fmt_size(n * cnt * 47008)}"
    )
    return Draft("misaligned_shared_writes", c, phases, desc, True, secondary=["small_requests"])


def b_non_collective(rng: random.Random, t: float) -> Draft:
    n, nodes = pick_ranks(rng, 16, 16384)
    fs = rng.choice(["lustre", "lustre", "gpfs"])
    c = Ctx.make(rng, fs, n, nodes)
    iface = rng.choice(["mpiio", "mpiio", "mpiio", "hdf5", "pnetcdf"])
    size = rng.choice([4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB, 128 * KiB, 256 * KiB])
    op = "write" if rng.random() < 0.7 else "read"
    cmin, cmax = max(50, 2000 // n + 1), min(20_000, REQ_BUDGET // (2 * n))
    if cmax < cmin:
        raise Retry
    spo = logu(rng, 5e-4, 0.02) * max(1.0, n / 64) ** 0.3
    cnt = int(min(max(t / spo, cmin), cmax))
    ext = {"mpiio": ".dat", "hdf5": ".h5", "pnetcdf": ".nc"}[iface]
    path = c.p(
        f"{rng.choice(['output/fields', 'data/plotfile', 'out/particles', 'history/hist'])}_{rng.randint(0, 999):04d}{ext}"
    )
    c.lustre(path, stripe_count=rng.choice([4, 8, 16, -1]), stripe_size=rng.choice([MiB, 4 * MiB]))
    main = phase(
        ranks="all",
        file=path,
        interface=iface,
        collective=False,
        op=op,
        count=cnt,
        size=size,
        layout="interleaved",
        seconds_per_op=spo,
        _role="problem",
    )
    if rng.random() < 0.3:
        main["gap"] = spec_size(size * rng.choice([1, 3]))
    phases = background(rng, c, 0.05 * cnt * spo)
    phases.insert(rng.randint(0, len(phases)), main)
    api = {"mpiio": "MPI_File_{}_at", "hdf5": "independent H5D{}", "pnetcdf": "independent ncmpi_{}_vara"}[iface]
    verb = {"mpiio": op, "hdf5": op, "pnetcdf": "put" if op == "write" else "get"}[iface]
    desc = (
        f"{n} ranks x {cnt:,} {api.format(verb)} calls of {fmt_size(size)}, interleaved (non-contiguous per rank) "
        f"in one shared file on {fs}, {spo * 1e3:.3g} ms each, no collective buffering"
    )
    return Draft("non_collective", c, phases, desc, True, secondary=["small_requests"] if size <= 64 * KiB else [])


def b_collective_wait(rng: random.Random, t: float) -> Draft:
    n, nodes = pick_ranks(rng, 64, 65536)
    fs = rng.choice(["lustre", "lustre", "gpfs"])
    c = Ctx.make(rng, fs, n, nodes)
    iface = rng.choice(["mpiio", "mpiio", "hdf5", "pnetcdf"])
    sizes = [s for s in [MiB, 2 * MiB, 4 * MiB, 8 * MiB] if n * s <= 256 * GiB]
    size = rng.choice(sizes)
    op = "write" if rng.random() < 0.75 else "read"
    kmax = min(200, REQ_BUDGET // n)
    k = rng.randint(4, max(4, kmax))
    wait_total = min(max(t * rng.uniform(0.75, 0.95), 20.0), 900.0)
    wait = wait_total / k
    spo = wait / rng.uniform(2.0, 20.0)
    ext = {"mpiio": ".dat", "hdf5": ".h5", "pnetcdf": ".nc"}[iface]
    path = c.p(step_name(rng, SHARED_OUTPUT_NAMES, rng.randint(1, 300)).rsplit(".", 1)[0] + ext)
    ss = rng.choice([MiB, 4 * MiB, 16 * MiB])
    c.lustre(path, stripe_count=rng.choice([8, 16, 32, -1]), stripe_size=ss)
    if iface == "hdf5":
        c.files.append({"path": path, "alignment": spec_size(ss if fs == "lustre" else 8 * MiB)})
    main = phase(
        ranks="all",
        file=path,
        interface=iface,
        collective=True,
        op=op,
        count=k,
        size=size,
        layout=rng.choice(["interleaved", "segmented"]),
        seconds_per_op=spo,
        wait_seconds=wait,
        _role="problem",
    )
    phases = background(rng, c, 0.05 * k * (wait + spo))
    phases.insert(rng.randint(0, len(phases)), main)
    desc = (
        f"{n} ranks x {k} collective {op}s of {fmt_size(size)} per rank ({iface}) to one shared file on {fs}: "
        f"{wait:.3g} s wait + {spo:.3g} s aggregator I/O per call, {wait * k:.0f} s waiting in all"
    )
    return Draft("collective_wait", c, phases, desc, True)


def b_metadata(rng: random.Random, t: float) -> Draft:
    shared = rng.random() < 0.4
    if shared:
        n, nodes = pick_ranks(rng, 16, 2048)
    else:
        n, nodes = pick_ranks(rng, 1, 128)
    fs = fs_pick(rng, n, {"lustre": 0.5, "gpfs": 0.3, "nfs": 0.2})
    c = Ctx.make(rng, fs, n, nodes)
    phases = []
    if shared:
        per_file = 3  # stat; open + close around the read
        m = min(logu(rng, 1e-3, 0.02) * max(1.0, n / 64) ** 0.3, 0.2)
        nf = int(min(max(t / (m * per_file * 1.0), 100), 2000, 2_000_000 // (4 * n)))
        if nf < 50:
            raise Retry
        where = rng.choice(
            [
                "env/lib/python3.10/site-packages/pkg/mod{i}.py",
                "sw/lib/plugins/lib{i}.so",
                "config/species/s{i}.yaml",
                "tables/rate{i}.dat",
            ]
        )
        tmpl = c.p(where)
        phases.append(phase(ranks="all", files=tmpl, count_files=nf, op="stat", meta_seconds=m, _role="problem"))
        phases.append(
            phase(
                ranks="all",
                files=tmpl,
                count_files=nf,
                op="read",
                count=1,
                size=rng.choice([2 * KiB, 8 * KiB, 24 * KiB]),
                meta_seconds=m,
                _role="problem",
            )
        )
        desc = (
            f"{n} ranks each stat, open, read and close the same {nf:,} small shared files on {fs}, "
            f"{m * 1e3:.3g} ms per metadata call ({n * nf * 3:,} metadata calls)"
        )
    else:
        calls = 2 + 1 + 3  # create (open, close), stat, open/fstat/close
        nf = int(min(logu(rng, 1000, 6000), max(100, 64_000 // n)))
        m = min(max(t / (nf * calls), 2e-4), 0.05)
        d = rng.choice(SMALL_FILE_DIRS)
        tmpl = c.p(f"{d}/{{rank}}/{d[:-1]}_{{i}}{rng.choice(SMALL_FILE_EXTS)}")
        data = rng.random() < 0.5
        if data:
            phases.append(
                phase(
                    ranks="all",
                    files=tmpl,
                    count_files=nf,
                    op="write",
                    count=1,
                    size=rng.choice([512, 3901, 4 * KiB]),
                    meta_seconds=m,
                    _role="problem",
                )
            )
        else:
            phases.append(phase(ranks="all", files=tmpl, count_files=nf, op="open", meta_seconds=m, _role="problem"))
        phases.append(phase(ranks="all", files=tmpl, count_files=nf, op="stat", meta_seconds=m, _role="problem"))
        phases.append(phase(ranks="all", files=tmpl, count_files=nf, op="open_stat", meta_seconds=m, _role="problem"))
        desc = (
            f"{n} ranks each create{' (tiny write)' if data else ''}, stat, then open/fstat/close {nf:,} own small "
            f"files on {fs}, {m * 1e3:.3g} ms per metadata call ({n * nf:,} files)"
        )
    bg = background(rng, c, 0.05 * t)
    return Draft("metadata", c, bg[:1] + phases + bg[1:], desc, True)


def b_single_ost(rng: random.Random, t: float) -> Draft:
    n, nodes = pick_ranks(rng, 8, 16384)
    c = Ctx.make(rng, "lustre", n, nodes)
    ost_bw = logu(rng, 0.4e9, 2.5e9)
    path = c.p(step_name(rng, SHARED_OUTPUT_NAMES, rng.randint(1, 400)))
    osts = [rng.randrange(c.ost_count)]
    if rng.random() < 0.5:
        c.lustre(path, stripe_count=1, stripe_size=MiB, osts=osts)
    else:
        c.lustre(path, stripe_count=1, stripe_size=rng.choice([MiB, 4 * MiB]))  # default placement
    variant = rng.choice(["posix", "posix", "mpiio_indep", "collective", "collective_one_agg"])
    op = "write" if rng.random() < 0.8 else "read"
    if variant in ("posix", "mpiio_indep"):
        size = rng.choice([s for s in LARGE_SIZES if n * s <= 64 * GiB] or [MiB])
        spo = n * size / ost_bw
        cnt = int(max(1, min(round(t / spo), REQ_BUDGET // n)))
        iface = "posix" if variant == "posix" else "mpiio"
        main = phase(
            ranks="all", file=path, interface=iface, op=op, count=cnt, size=size, seconds_per_op=spo, _role="problem"
        )
        desc = (
            f"{n} ranks x {cnt} {op}s of {fmt_size(size)} ({iface}, segmented) to one shared file with stripe "
            f"count 1, {fmt_size(n * cnt * size)} through one OST at {ost_bw / 1e9:.2g} GB/s"
        )
    else:
        size = rng.choice([s for s in LARGE_SIZES if n * s <= 64 * GiB] or [MiB])
        spo = n * size / ost_bw
        k = int(max(1, min(round(t / spo), REQ_BUDGET // n, 400)))
        iface = rng.choice(["mpiio", "hdf5"])
        main = phase(
            ranks="all",
            file=path,
            interface=iface,
            collective=True,
            op=op,
            count=k,
            size=size,
            layout="interleaved",
            seconds_per_op=spo,
            _role="problem",
        )
        agg = "one aggregator" if variant == "collective_one_agg" else "one aggregator per node"
        if variant == "collective_one_agg":
            main["cb_nodes"] = 1
        desc = (
            f"{n} ranks x {k} collective {op}s of {fmt_size(size)} per rank ({iface}, {agg}) to one shared file "
            f"with stripe count 1, {fmt_size(n * k * size)} through one OST at {ost_bw / 1e9:.2g} GB/s"
        )
    phases = background(rng, c, 0.05 * t)
    phases.insert(rng.randint(0, len(phases)), main)
    return Draft("single_ost_shared_file", c, phases, desc, True)


def b_slow_ost(rng: random.Random, t: float) -> Draft:
    n, nodes = pick_ranks(rng, 8, 2048)
    c = Ctx.make(rng, "lustre", n, nodes)
    if min(n, c.ost_count) < 4:
        raise Retry
    size = rng.choice([MiB, 4 * MiB, 8 * MiB, 16 * MiB])
    bw = logu(rng, 0.3e9, 2e9)
    spo = size / bw
    factor = round(rng.uniform(4, 30), 1)
    slow = rng.randrange(min(n, c.ost_count))
    cmin = -(-64 * MiB // size)
    # The simulator prices slow-OST requests file by file (time ~ files x requests): fewer requests here.
    cnt = int(min(max(t / (spo * factor), cmin), 150_000 // n))
    if cnt < cmin:
        raise Retry
    c.slow_ost(slow, factor)
    tmpl = c.p(step_name(rng, OUTPUT_NAMES, rng.randint(1, 500)))
    c.lustre(tmpl, stripe_count=1, stripe_size=rng.choice([MiB, 4 * MiB]))
    op = "write" if rng.random() < 0.75 else "read"
    steps = rng.randint(1, 3)
    per = [cnt // steps + (1 if i < cnt % steps else 0) for i in range(steps)]
    mains = [
        phase(ranks="all", file=tmpl, op=op, count=k, size=size, seconds_per_op=spo, _role="problem")
        for k in per
        if k > 0
    ]
    bg = background(rng, c, 0.05 * t)
    on_slow = len(range(slow, n, c.ost_count))
    desc = (
        f"{n} ranks x {cnt} {op}s of {fmt_size(size)} to their own files (stripe count 1, round-robin over "
        f"{c.ost_count} OSTs); OST {slow} is {factor}x slower per byte, {on_slow} rank(s) have their file there "
        f"({fmt_size(cnt * size)} each)"
    )
    return Draft("slow_ost", c, bg[:1] + mains + bg[1:], desc, True)


def b_rank_imbalance(rng: random.Random, t: float) -> Draft:
    n, nodes = pick_ranks(rng, 8, 65536)
    fs = fs_pick(rng, n, {"lustre": 0.5, "gpfs": 0.35, "nfs": 0.15})
    c = Ctx.make(rng, fs, n, nodes)
    size = rng.choice(LARGE_SIZES)
    bw = logu(rng, 0.3e9, 2.5e9)
    spo = size / bw
    variant = rng.choice(["rank0_read", "rank0_read", "rank0_write", "few_heavy"])
    phases: list[dict[str, Any]] = []
    if variant in ("rank0_read", "rank0_write"):
        cnt = int(min(max(t / spo, 1), REQ_BUDGET))
        op = "read" if variant == "rank0_read" else "write"
        path = c.p(
            step_name(rng, INPUT_NAMES, rng.randint(0, 30))
            if op == "read"
            else step_name(rng, SHARED_OUTPUT_NAMES, rng.randint(0, 300))
        )
        c.lustre(path, stripe_count=rng.choice([1, 4, 8]), stripe_size=MiB)
        phases.append(phase(ranks="0", file=path, op=op, count=cnt, size=size, seconds_per_op=spo, _role="problem"))
        heavy = "rank 0"
        desc = (
            f"rank 0 alone {op}s {fmt_size(cnt * size)} ({cnt:,} x {fmt_size(size)}, {bw / 1e9:.2g} GB/s) while "
            f"the other {n - 1} ranks wait"
        )
    else:
        h = rng.randint(1, min(4, n // 4))
        light = rng.randint(1, 4)
        cnt = int(min(max(t / spo, 8 * light), REQ_BUDGET // max(1, h)))
        if (n - h) * light > REQ_BUDGET:
            raise Retry
        path = c.p(step_name(rng, SHARED_OUTPUT_NAMES, rng.randint(0, 300)))
        c.lustre(path, stripe_count=rng.choice([8, 16, -1]), stripe_size=MiB)
        phases.append(
            phase(
                ranks="all",
                file=path,
                op="write",
                count=light,
                count_by_rank={r: cnt for r in range(h)},
                size=size,
                seconds_per_op=spo,
                _role="problem",
            )
        )
        heavy = f"ranks 0-{h - 1}" if h > 1 else "rank 0"
        desc = (
            f"{heavy} write {cnt:,} x {fmt_size(size)} each to a shared file, every other rank {light} x "
            f"{fmt_size(size)} ({n} ranks, {fmt_size(size * (cnt * h + light * (n - h)))} in all)"
        )
    # Everyone then writes a little output, quickly.
    if n <= 4096 and rng.random() < 0.5:
        out = c.p(step_name(rng, OUTPUT_NAMES, rng.randint(1, 99)))
        c.pinned(out)
        phases.append(phase(ranks="all", file=out, op="write", count=rng.randint(1, 4), size=4 * MiB))
    else:
        out = c.p(step_name(rng, SHARED_OUTPUT_NAMES, rng.randint(1, 99)))
        c.pinned(out, stripe_count=-1)
        phases.append(
            phase(
                ranks="all",
                file=out,
                interface="mpiio",
                collective=True,
                op="write",
                count=rng.randint(1, 4),
                size=MiB,
                seconds_per_op=rng.uniform(0.05, 0.5),
            )
        )
    return Draft("rank_imbalance", c, phases, desc + f" ({heavy} busiest)", True)


def b_stdio_bulk(rng: random.Random, t: float) -> Draft:
    variant = rng.choice(["serial", "per_rank", "rank0"])
    if variant == "serial":
        n, nodes = 1, 1
    elif variant == "per_rank":
        n, nodes = pick_ranks(rng, 2, 64)
    else:
        n, nodes = pick_ranks(rng, 8, 4096)
    fs = fs_pick(rng, n, {"lustre": 0.45, "gpfs": 0.35, "nfs": 0.2})
    c = Ctx.make(rng, fs, n, nodes)
    writers = n if variant == "per_rank" else 1
    buf = rng.choice(STDIO_BUFFERS)
    op = "write" if rng.random() < 0.7 else "read"
    lo = -(-256 * MiB // buf)
    hi = min(8 * GiB // buf, REQ_BUDGET // writers)
    if hi < lo:
        raise Retry
    spo = logu(rng, 15e-6, 400e-6)
    cnt = int(min(max(t / spo, lo), hi))
    if variant == "per_rank":
        path = c.p(
            rng.choice(
                ["out/traj_{rank}.xyz", "output/rank{rank}.csv", "dump/atoms.{rank}.txt", "results/part{rank}.dat"]
            )
        )
        c.lustre(path)
        ranks: Any = "all"
    else:
        path = c.p(rng.choice(["traj.xyz", "output.csv", "dump.atom", "results.txt", "reads.fastq", "spectra.dat"]))
        c.lustre(path, stripe_count=rng.choice([1, 4]))
        ranks = "0"
    main = phase(
        ranks=ranks, file=path, interface="stdio", op=op, count=cnt, size=buf, seconds_per_op=spo, _role="problem"
    )
    phases = background(rng, c, 0.05 * t)
    phases.insert(rng.randint(0, len(phases)), main)
    verb = "fwrite" if op == "write" else "fread"
    who = {"serial": "a serial job", "per_rank": f"each of {n} ranks", "rank0": f"rank 0 of {n}"}[variant]
    desc = (
        f"{who} {verb}s {fmt_size(cnt * buf)} in {cnt:,} calls of {fmt_size(buf)} ({spo * 1e6:.3g} us each) "
        f"through STDIO on {fs}"
    )
    return Draft("stdio_bulk", c, phases, desc, True, secondary=["rank_imbalance"] if variant == "rank0" else [])


def b_bandwidth(rng: random.Random, t: float, cls: str = "bandwidth_bound") -> Draft:
    variant = rng.choice(["fpp", "fpp", "collective", "shared_posix"])
    if variant == "fpp":
        n, nodes = pick_ranks(rng, 1, 16384)
        fs = fs_pick(rng, n, {"lustre": 0.45, "gpfs": 0.3, "daos": 0.15, "nfs": 0.1})
    elif variant == "collective":
        n, nodes = pick_ranks(rng, 16, 65536)
        fs = rng.choice(["lustre", "lustre", "gpfs"])
    else:
        n, nodes = pick_ranks(rng, 2, 4096)
        fs = rng.choice(["lustre", "gpfs"])
    c = Ctx.make(rng, fs, n, nodes)
    op = "write" if rng.random() < 0.7 else "read"
    phases: list[dict[str, Any]] = []
    if variant == "fpp":
        size = rng.choice(LARGE_SIZES)
        bw = logu(rng, 0.2e9, 3e9) if fs != "nfs" else logu(rng, 50e6, 4e8)
        spo = size / bw
        steps = rng.randint(1, max(1, min(5, 16384 // n)))
        total = int(min(max(t / spo, steps), REQ_BUDGET // n))
        per = max(1, total // steps)
        for s in range(steps):
            tmpl = c.p(step_name(rng, OUTPUT_NAMES, (s + 1) * rng.choice([10, 100, 500])))
            c.lustre(tmpl, stripe_count=1, stripe_size=rng.choice([MiB, 4 * MiB]))
            phases.append(
                phase(
                    ranks="all",
                    file=tmpl,
                    interface=c.iface,
                    op=op,
                    count=per,
                    size=size,
                    seconds_per_op=spo,
                    _role="problem",
                )
            )
        desc = (
            f"{n} ranks x {per * steps:,} sequential {op}s of {fmt_size(size)} to their own files on {fs} "
            f"({steps} step(s), {bw / 1e9:.2g} GB/s per rank, {fmt_size(n * per * steps * size)} in all)"
        )
    elif variant == "collective":
        iface = rng.choice(["mpiio", "hdf5", "pnetcdf"])
        sizes = [s for s in LARGE_SIZES if n * s <= 256 * GiB]
        size = rng.choice(sizes)
        aggbw = min(nodes, c.ost_count or 64) * logu(rng, 0.5e9, 2.5e9)
        spo = n * size / aggbw
        k = int(min(max(t / spo, 1), REQ_BUDGET // n, 200))
        ext = {"mpiio": ".dat", "hdf5": ".h5", "pnetcdf": ".nc"}[iface]
        path = c.p(step_name(rng, SHARED_OUTPUT_NAMES, rng.randint(1, 300)).rsplit(".", 1)[0] + ext)
        ss = rng.choice([MiB, 4 * MiB, 16 * MiB]) if size >= 4 * MiB else MiB
        c.lustre(path, stripe_count=rng.choice([16, 32, -1]), stripe_size=ss)
        if iface == "hdf5":
            c.files.append({"path": path, "alignment": spec_size(ss if fs == "lustre" else 8 * MiB)})
        phases.append(
            phase(
                ranks="all",
                file=path,
                interface=iface,
                collective=True,
                op=op,
                count=k,
                size=size,
                layout=rng.choice(["interleaved", "segmented"]),
                seconds_per_op=spo,
                _role="problem",
            )
        )
        desc = (
            f"{n} ranks x {k} collective {op}s of {fmt_size(size)} per rank ({iface}) to one well-striped shared "
            f"file on {fs}, {aggbw / 1e9:.3g} GB/s aggregate, {fmt_size(n * k * size)} in all"
        )
    else:
        size = rng.choice([4 * MiB, 8 * MiB, 16 * MiB])
        bw = logu(rng, 0.2e9, 2e9)
        spo = size / bw
        cnt = int(min(max(t / spo, 1), REQ_BUDGET // n))
        path = c.p(step_name(rng, SHARED_OUTPUT_NAMES, rng.randint(1, 300)))
        c.lustre(path, stripe_count=rng.choice([16, 32, 64, -1]), stripe_size=rng.choice([MiB, 4 * MiB]))
        phases.append(phase(ranks="all", file=path, op=op, count=cnt, size=size, seconds_per_op=spo, _role="problem"))
        desc = (
            f"{n} ranks x {cnt:,} sequential POSIX {op}s of {fmt_size(size)}, each rank its own contiguous block "
            f"of one well-striped shared file on {fs}, {bw / 1e9:.2g} GB/s per rank"
        )
    bg = background(rng, c, 0.05 * t)
    return Draft(cls, c, bg[:1] + phases + bg[1:], desc, True)


def b_stdio_text(rng: random.Random, t: float) -> Draft:
    """A few ranks print text results through STDIO (no bulk): healthy_negligible's quiet pattern."""
    n, nodes = pick_ranks(rng, 1, 1024)
    fs = fs_pick(rng, n, {"lustre": 0.4, "gpfs": 0.3, "nfs": 0.3})
    c = Ctx.make(rng, fs, n, nodes)
    spo = logu(rng, 5e-6, 2e-4)
    cnt = int(min(max(t / spo, 1000), 500_000))
    path = c.p(rng.choice(["output.log", "energies.txt", "thermo.dat", "progress.csv"]))
    c.lustre(path)
    phases = [
        phase(
            ranks="0",
            file=path,
            interface="stdio",
            op="write",
            count=cnt,
            size=rng.choice([64, 96, 160, 240]),
            seconds_per_op=spo,
            _role="problem",
        )
    ]
    desc = f"rank 0 prints {cnt:,} text lines through STDIO ({spo * 1e6:.3g} us each)"
    return Draft("healthy_negligible", c, phases, desc, False)


PROBLEM_BUILDERS = {
    "small_requests": b_small_requests,
    "random_access": b_random_access,
    "misaligned_shared_writes": b_misaligned,
    "non_collective": b_non_collective,
    "collective_wait": b_collective_wait,
    "metadata": b_metadata,
    "single_ost_shared_file": b_single_ost,
    "slow_ost": b_slow_ost,
    "rank_imbalance": b_rank_imbalance,
    "stdio_bulk": b_stdio_bulk,
    "bandwidth_bound": b_bandwidth,
}


def add_secondary(rng: random.Random, d: Draft, t: float) -> None:
    """A lesser second cause: its phase costs about ``f`` of the main phases' time."""
    c = d.ctx
    choices = [
        x
        for x in ("metadata", "small_requests", "rank_imbalance", "random_access")
        if x != d.cls and x not in d.secondary
    ]
    if d.cls == "rank_imbalance":
        choices = [x for x in choices if x != "rank_imbalance"]
    if not choices:
        return
    kind = rng.choice(choices)
    f = rng.uniform(0.15, 0.45)
    ts = f * t
    n = c.nprocs
    if kind == "metadata":
        nf = int(min(logu(rng, 200, 3000), META_BUDGET // (3 * n)))
        if nf < 20:
            return
        m = min(max(ts / (3 * nf), 3e-4), 0.2)
        ph = phase(
            ranks="all",
            files=c.p("conf/" + rng.choice(["s{i}.yaml", "param{i}.in", "table{i}.dat"])),
            count_files=nf,
            interface=c.iface,  # on DAOS the conf files are reached through DFS like the rest
            op="open_stat",
            meta_seconds=m,
            _role="sec:metadata",
        )
        what = f"every rank opens/fstats/closes the same {nf:,} small files, {m * 1e3:.3g} ms per call"
    elif kind == "small_requests":
        cnt = int(min(logu(rng, 1000, 20000), REQ_BUDGET // n))
        if cnt < 200:
            return
        size = rng.choice([2 * KiB, 4 * KiB, 8 * KiB])
        spo = min(max(ts / cnt, 4e-5), 0.03)
        path = c.p(rng.choice(["diag/probe_{rank}.dat", "stats/rank{rank}.bin", "monitor/m.{rank}"]))
        c.lustre(path)
        ph = phase(
            ranks="all",
            file=path,
            interface=c.iface,
            op="write",
            count=cnt,
            size=size,
            seconds_per_op=spo,
            _role="sec:small_requests",
        )
        what = f"every rank writes {cnt:,} x {fmt_size(size)} diagnostics to its own file"
    elif kind == "rank_imbalance":
        if n < 8:
            return
        size = rng.choice([4 * MiB, 16 * MiB])
        spo = size / logu(rng, 0.3e9, 2e9)
        cnt = int(min(max(ts / spo, 1), REQ_BUDGET))
        path = c.p(step_name(rng, INPUT_NAMES, rng.randint(0, 20)))
        c.pinned(path)
        ph = phase(
            ranks="0",
            file=path,
            interface=c.iface,
            op="read",
            count=cnt,
            size=size,
            seconds_per_op=spo,
            _role="sec:rank_imbalance",
        )
        what = f"rank 0 alone reads {fmt_size(cnt * size)} of input first"
    else:
        cnt = int(min(max(200, ts / 0.01), REQ_BUDGET // n))
        if cnt < 64 or n * cnt < 2000:
            return
        size = rng.choice([256 * KiB, 1 * MiB])
        spo = min(max(ts / cnt, 1e-3), 0.1)
        path = c.p("db/" + rng.choice(["lookup.bin", "kernels.dat", "coeffs.bin"]))
        c.pinned(path, stripe_count=4)
        ph = phase(
            ranks="all",
            file=path,
            interface=c.iface,
            op="read",
            count=cnt,
            size=size,
            pattern="random",
            seconds_per_op=spo,
            _role="sec:random_access",
        )
        what = f"every rank reads {cnt:,} x {fmt_size(size)} at random offsets of a shared table"
    if kind == "rank_imbalance":
        pos = 0
    elif d.cls == "slow_ost":  # after the per-rank files, so they keep their round-robin OSTs
        pos = len(d.phases)
    else:
        pos = rng.randint(0, len(d.phases))
    d.phases.insert(pos, ph)
    d.secondary.append(kind)
    d.desc += f"; also {what}"


def b_healthy_negligible(rng: random.Random) -> Draft:
    short = rng.random() < 0.12
    t = logu(rng, 0.15, 0.6) if short else logu(rng, 0.3, 120)
    r = rng.random()
    if r < 0.45:
        d = b_bandwidth(rng, t, cls="healthy_negligible")
        pattern: list[str] = []
    elif r < 0.55:
        d = b_stdio_text(rng, t)
        pattern = []
    else:
        inner = rng.choice(
            [
                "small_requests",
                "small_requests",
                "random_access",
                "metadata",
                "non_collective",
                "misaligned_shared_writes",
                "rank_imbalance",
                "stdio_bulk",
            ]
        )
        d = PROBLEM_BUILDERS[inner](rng, t)
        pattern = [inner] + [s for s in d.secondary if s != inner]
    d.cls, d.want, d.short, d.secondary = "healthy_negligible", False, short, pattern
    return d


def b_partial(rng: random.Random) -> Draft:
    limit = rng.choice([1024, 4096])
    shared = rng.random() < 0.5
    if shared:
        n, nodes = pick_ranks(rng, 2, 32)
        n = min(n, 2_000_000 // (5 * limit))
        nodes = min(nodes, n)
    else:
        n, nodes = 1, 1
    fs = fs_pick(rng, n, {"lustre": 0.5, "gpfs": 0.3, "nfs": 0.2})
    c = Ctx.make(rng, fs, n, nodes)
    d = rng.choice(SMALL_FILE_DIRS)
    tmpl = c.p(f"{d}/{d[:-1]}_{{i}}{rng.choice(SMALL_FILE_EXTS)}")
    size = rng.choice([4 * KiB, 64 * KiB, 300 * KiB, MiB])
    phases = [
        phase(
            ranks="all",
            files=tmpl,
            count_files=limit,
            op="read",
            count=1,
            size=size,
            meta_seconds=logu(rng, 1e-4, 2e-3),
            seconds_per_op=logu(rng, 1e-4, 3e-3),
            _role="problem",
        )
    ]
    if rng.random() < 0.6:
        phases.append(
            phase(
                ranks="0",
                file=f"{c.home}/{rng.choice(['log.txt', 'run.out'])}",
                interface="stdio",
                op="write",
                count=rng.randint(10, 200),
                size=rng.choice([80, 200]),
                seconds_per_op=2e-5,
                _gap=0.0,
            )
        )
    who = f"all {n} ranks read the same" if shared else "a serial job reads"
    desc = (
        f"{who} {limit:,} input files ({fmt_size(size)} each) at the start; POSIX flagged partial with {limit:,} "
        f"records, nothing recorded after the first seconds"
    )
    dr = Draft("partial_log", c, phases, desc, None, faults={"partial": ["POSIX"]})
    dr.first_gap, dr.tail = 0.0, 1.0
    return dr


def b_corrupt(rng: random.Random) -> Draft:
    matters = rng.random() < 0.5
    t = logu(rng, 5, 600) if matters else logu(rng, 0.3, 60)
    d = b_bandwidth(rng, t, cls="corrupt_records")
    if d.ctx.nprocs > 4096:
        raise Retry
    kinds = {k: rng.randint(1, 6) for k in ("unnamed", "bad_rank", "absurd") if rng.random() < 0.6}
    if not kinds:
        kinds = {rng.choice(["unnamed", "bad_rank", "absurd"]): rng.randint(1, 6)}
    d.faults = {"corrupt_records": {"seed": rng.randrange(1 << 30), **kinds}}
    d.want = matters
    d.desc += "; then " + ", ".join(f"{v} {k.replace('_', ' ')} record(s)" for k, v in kinds.items())
    return d


def draft_case(cls: str, rng: random.Random) -> Draft:
    if cls == "healthy_negligible":
        return b_healthy_negligible(rng)
    if cls == "partial_log":
        return b_partial(rng)
    if cls == "corrupt_records":
        return b_corrupt(rng)
    t = logu(rng, 4, 1200)
    d = PROBLEM_BUILDERS[cls](rng, t)
    if cls != "bandwidth_bound" and rng.random() < 0.25:
        add_secondary(rng, d, t)
    return d


# --- simulation with per-phase accounting ---------------------------------------------------------

TOP = {"posix": TraceLayer.POSIX, "stdio": TraceLayer.STDIO, "dfs": TraceLayer.DFS, "mpiio": TraceLayer.MPIIO, "pnetcdf": TraceLayer.MPIIO}


class _Sim(Simulator):
    """The writer's simulator, remembering which trace chunks each phase produced."""

    def __init__(self, s: Scenario) -> None:
        super().__init__(s)
        self.spans: list[tuple[int, int, int, int]] = []

    def _phase(self, ph: Any, clock: float) -> float:
        i0, m0 = len(self.trace.io_chunks), len(self.trace.meta_chunks)
        end = super()._phase(ph, clock)
        self.spans.append((i0, len(self.trace.io_chunks), m0, len(self.trace.meta_chunks)))
        return end


def top_layer(ph: Any) -> TraceLayer:
    if ph.interface == "hdf5":
        return TraceLayer.MPIIO if ph.via == "mpiio" else TraceLayer.POSIX
    return TOP[ph.interface]


def phase_times(s: Scenario) -> tuple[Any, np.ndarray, float]:
    """(trace, seconds per phase per rank at the phase's top layer, program end)."""
    sim = _Sim(s)
    trace = sim.run()
    n = s.job.nprocs
    out = np.zeros((len(s.program), n))
    for i, (ph, (i0, i1, m0, m1)) in enumerate(zip(s.program, sim.spans, strict=True)):
        layer = int(top_layer(ph))
        for ch in trace.io_chunks[i0:i1] + trace.meta_chunks[m0:m1]:
            if len(ch["layer"]) and int(ch["layer"][0]) == layer:
                out[i] += np.bincount(ch["rank"], weights=ch["end"] - ch["start"], minlength=n)
    return trace, out, float(trace.end_time)


# --- damaged logs: rewriting records before they are written --------------------------------------


def corrupt_tables(
    tables: dict[str, Any], names: dict[int, str], nprocs: int, runtime: float, spec: dict[str, int]
) -> tuple[dict[str, Any], dict[int, str]]:
    """Add records the program did not make, next to the valid ones (which are left untouched).

    ``unnamed``: copies of valid records under ids that are in no name record; ``bad_rank``: copies of valid
    records with a rank outside 0..nprocs-1; ``absurd``: records for a new (named) file whose counters cannot
    be (negative counts, exabytes moved, times of years or below zero, timestamps far past the job's end).
    """
    import pandas as pd

    rng = np.random.default_rng(int(spec.get("seed", 0)))
    mods = [m for m in ("POSIX", "MPI-IO", "STDIO", "DFS") if m in tables and len(tables[m])]
    if not mods:
        return tables, names
    names = dict(names)
    extra: dict[str, list[Any]] = {m: [] for m in mods}

    def template(mod: str) -> Any:
        t = tables[mod]
        return t.iloc[[int(rng.integers(len(t)))]].copy()

    for _ in range(int(spec.get("unnamed", 0))):
        mod = mods[int(rng.integers(len(mods)))]
        row = template(mod)
        new = int(rng.integers(1 << 40, 1 << 63))
        while new in names:
            new = int(rng.integers(1 << 40, 1 << 63))
        row["id"] = np.array([new], dtype=np.uint64)
        extra[mod].append(row)
    for _ in range(int(spec.get("bad_rank", 0))):
        mod = mods[int(rng.integers(len(mods)))]
        row = template(mod)
        row["rank"] = np.array(
            [rng.choice([nprocs, nprocs + int(rng.integers(1, 1000)), 4 * nprocs + 3, 1 << 20, -2])], dtype=np.int64
        )
        extra[mod].append(row)
    for j in range(int(spec.get("absurd", 0))):
        mod = mods[int(rng.integers(len(mods)))]
        row = template(mod)
        path = names.get(int(row["id"].iloc[0]), "/tmp/x").rsplit("/", 1)[0] + f"/.tmp{j}.{int(rng.integers(1e6))}"
        from iodiag.synth.layout import record_id

        new = record_id(path)
        names[new] = path
        row["id"] = np.array([new], dtype=np.uint64)
        row["rank"] = np.array([rng.integers(nprocs)], dtype=np.int64)
        p = {"POSIX": "POSIX", "MPI-IO": "MPIIO", "STDIO": "STDIO", "DFS": "DFS"}[mod]
        cols = set(row.columns)
        what = rng.choice(["negative", "huge", "time"], size=2, replace=False)
        for w in what:
            if w == "negative":
                for ccol in (f"{p}_WRITES", f"{p}_INDEP_WRITES", f"{p}_OPENS", f"{p}_INDEP_OPENS"):
                    if ccol in cols:
                        row[ccol] = -int(rng.integers(1, 1 << 31))
            elif w == "huge":
                for ccol in (f"{p}_BYTES_WRITTEN", f"{p}_BYTES_READ", f"{p}_MAX_BYTE_WRITTEN"):
                    if ccol in cols:
                        row[ccol] = int(rng.integers(1 << 60, 1 << 62))
            else:
                for ccol in (f"{p}_F_WRITE_TIME", f"{p}_F_READ_TIME", f"{p}_F_META_TIME"):
                    if ccol in cols:
                        row[ccol] = float(rng.choice([-1.0, 1.0])) * float(rng.uniform(1e8, 1e12))
                for ccol in (f"{p}_F_CLOSE_END_TIMESTAMP", f"{p}_F_WRITE_END_TIMESTAMP"):
                    if ccol in cols:
                        row[ccol] = runtime * float(rng.uniform(1e3, 1e6))
        extra[mod].append(row)
    out = dict(tables)
    for mod, rows in extra.items():
        if rows:
            merged = pd.concat([tables[mod], *rows], ignore_index=True).astype(tables[mod].dtypes.to_dict())
            # Interleave: the writer keeps table order, so shuffle the added rows among the valid ones.
            order = rng.permutation(len(merged))
            out[mod] = merged.iloc[order].reset_index(drop=True)
    return out, names


# --- a faster LUSTRE record writer ----------------------------------------------------------------


def _fast_put_lustre(ffi: Any, lib: Any, be: Any, fd: Any, table: Any) -> None:
    """The bytes ``iodiag.synth.writer._put_lustre`` writes, without a pandas group per record.

    The writer's own function groups the table by (id, rank) and takes about 3 ms a record: 100 s for the
    37,000 files of a metadata case. Records here have one component each, so each row is one record, in
    table order (the order ``groupby(sort=False)`` visits them). Anything else goes to the writer's own
    function. ``check_fast_lustre`` compares the two on a scenario (byte for byte).
    """
    if table.duplicated(["id", "rank"]).any():
        _ORIG_PUT_LUSTRE(ffi, lib, be, fd, table)
        return
    comp_names = [n.removeprefix("LUSTRE_COMP_").lower() for n in be.counter_names("LUSTRE_COMP")]
    mod_id, ver = be.mod_name_to_idx("LUSTRE"), _writer.MODULE_VERSIONS["LUSTRE"]
    ids = table["id"].to_numpy(dtype=np.uint64)
    ranks = table["rank"].to_numpy(dtype=np.int64)
    comp = np.stack([table[c].to_numpy(dtype=np.int64) for c in comp_names], axis=1)
    pools = table["pool_name"].tolist() if "pool_name" in table else [""] * len(table)
    osts = table["osts"].tolist()
    for i in range(len(table)):
        o = [int(x) for x in osts[i]]
        data = b"".join(
            (
                ids[i : i + 1].tobytes(),
                np.array([ranks[i], 1, len(o)], dtype=np.int64).tobytes(),
                comp[i].tobytes(),
                str(pools[i]).encode()[:15].ljust(16, b"\0"),
                np.array(o, dtype=np.int64).tobytes(),
            )
        )
        buf = ffi.from_buffer(data)
        rc = lib.darshan_log_put_mod(fd, mod_id, buf, len(data), ver)
        if rc != 0:
            raise _writer.WriteError(f"libdarshan-util failed to write a LUSTRE record (rc={rc})")


_ORIG_PUT_LUSTRE = _writer._put_lustre
_writer._put_lustre = _fast_put_lustre


def check_fast_lustre(data: dict[str, Any], out_dir: Path) -> bool:
    """Write one scenario's log with the writer's own LUSTRE function and with ours: same bytes?"""
    s, _ = parse(data, "check")
    trace, _, _ = phase_times(s)
    job, names, tables = derive_tables(s, trace)
    a, b = out_dir / "orig.darshan", out_dir / "fast.darshan"
    _writer._put_lustre = _ORIG_PUT_LUSTRE
    try:
        write_log(a, job, names, tables)
    finally:
        _writer._put_lustre = _fast_put_lustre
    write_log(b, job, names, tables)
    return a.read_bytes() == b.read_bytes()


# --- spec assembly, truth and logs ----------------------------------------------------------------


def spec_dict(
    d: Draft, name: str, seed: int, computes: list[float] | None, runtime: float | None, jobinfo: dict[str, Any]
) -> dict[str, Any]:
    c = d.ctx
    heatmap = jobinfo.pop("_heatmap", False)
    job: dict[str, Any] = {"nprocs": c.nprocs, "nodes": c.nodes}
    if runtime is not None:
        job["runtime"] = runtime
    job.update(jobinfo)
    job["mounts"] = c.mounts
    program = []
    for i, ph in enumerate(d.phases):
        p = {k: v for k, v in ph.items() if not k.startswith("_")}
        if computes is not None and computes[i] > 0:
            p["compute"] = computes[i]
        program.append(p)
    out: dict[str, Any] = {"name": name, "seed": seed}
    if heatmap:
        out["heatmap"] = True
    out["job"] = job
    # Declarations: one per path (a later one for the same path refines the earlier).
    merged: dict[str, dict[str, Any]] = {}
    for f in c.files:
        merged.setdefault(f["path"], {}).update(f)
    if merged:
        out["files"] = list(merged.values())
    out["program"] = program
    if d.faults:
        out["log_faults"] = d.faults
    return out


def parse(data: dict[str, Any], source: str) -> tuple[Scenario, dict[str, Any]]:
    data = dict(data)
    faults = data.pop("log_faults", None) or {}
    return parse_scenario(data, source), faults


def build(data: dict[str, Any], source: str, out: Path) -> dict[str, Any]:
    """The log of a scenario (with its log faults); returns the truth numbers of the program."""
    s, faults = parse(data, source)
    trace, per_phase, end = phase_times(s)
    job, names, tables = derive_tables(s, trace)
    if "corrupt_records" in faults:
        tables, names = corrupt_tables(
            tables, names, s.job.nprocs, float(s.job.runtime or end), faults["corrupt_records"]
        )
    _, stacks, lines = call_stacks(s)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_log(
        out, job, names, tables, partial=tuple(faults.get("partial", ())), stacks=stacks if s.dxt else None, lines=lines
    )
    return {"per_phase": per_phase, "end": end}


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=120)


def make_case(args: tuple[int, int, str, str]) -> dict[str, Any]:
    seed, idx, cls, out_dir = args
    name = f"case-{idx:03d}"
    rng = random.Random(f"blind-{seed}-{idx}")
    t0 = time.time()
    for _attempt in range(40):
        try:
            out = _make_case(rng, seed, idx, cls, Path(out_dir), name)
        except Retry:
            continue
        print(f"{name} {cls:26s} {out['nprocs']:>6} ranks {time.time() - t0:6.1f} s", file=sys.stderr, flush=True)
        return out
    raise RuntimeError(f"{name} ({cls}): no valid draw in 40 attempts")


def _make_case(rng: random.Random, seed: int, idx: int, cls: str, out_dir: Path, name: str) -> dict[str, Any]:
    d = draft_case(cls, rng)
    sim_seed = rng.randrange(1 << 31)
    n = d.ctx.nprocs
    jobinfo = {
        "start": rng.randint(1_672_531_200, 1_735_603_200),
        "exe": rng.choice(EXES),
        "jobid": rng.randint(100_000, 9_999_999),
        "uid": rng.randint(10_000, 60_000),
        "darshan_version": rng.choice(["3.4.4", "3.4.5", "3.4.6", "3.4.7", "3.5.0"]),
    }
    if n <= 512 and rng.random() < 0.3:
        jobinfo["_heatmap"] = True
    # Pass 1: no compute, no runtime -> each rank's I/O time and the program's length.
    s0, _ = parse(spec_dict(d, name, sim_seed, None, None, dict(jobinfo)), name)
    _, per_phase, e0 = phase_times(s0)
    per_rank = per_phase.sum(axis=0)
    busiest = int(np.argmax(per_rank))
    t_io = float(per_rank[busiest])
    roles = [ph["_role"] for ph in d.phases]
    problem = sum(per_phase[i, busiest] for i, r in enumerate(roles) if r == "problem")
    p_share = problem / t_io if t_io > 0 else 0.0
    if (d.want is not False or d.cls == "healthy_negligible") and d.cls != "partial_log" and p_share < 0.55:
        raise Retry
    sec_keep = []
    for sc in d.secondary:
        idxs = [i for i, r in enumerate(roles) if r == f"sec:{sc}"]
        if not idxs:
            sec_keep.append(sc)  # implied by the main pattern (e.g. 47,008 B requests are small requests)
            continue
        if per_phase[idxs].sum(axis=0).max() >= 0.08 * t_io:
            sec_keep.append(sc)
    d.secondary = sec_keep
    # Run time from the share the class calls for.
    tail_min = rng.uniform(0.5, 20.0)
    if d.want is True:
        if t_io < 2.0:
            raise Retry
        share = logu(rng, 0.08, 0.9)
        runtime = max(t_io / share, e0 + tail_min)
        if t_io / runtime < 0.075:
            raise Retry
    elif d.want is False:
        if d.short:
            if t_io >= 0.7:
                raise Retry
            runtime = max(e0 + 0.2, t_io / logu(rng, 0.06, 0.5))
        else:
            lo = max(0.0015, t_io / 172_800)
            if lo >= 0.025:
                raise Retry
            runtime = max(t_io / logu(rng, lo, 0.025), e0 + tail_min)
            if t_io / runtime > 0.03:
                raise Retry
    else:
        runtime = logu(rng, 1800, 43_200)
    budget = runtime - e0
    weights = [float(ph.get("_gap", 1.0)) for ph in d.phases]
    weights[0] = min(weights[0], d.first_gap)
    if d.cls == "partial_log":
        weights = [0.0] * len(d.phases)
        first = min(rng.uniform(0, 15), budget * 0.01)
    wsum = sum(weights) + d.tail
    computes = [round(budget * w / wsum, 3) for w in weights]
    if d.cls == "partial_log":
        computes[0] = round(first, 3)
    used = e0 + sum(computes)
    runtime = round(max(runtime, used + 0.5), 3)
    spec = spec_dict(d, name, sim_seed, computes, runtime, dict(jobinfo))
    scen_path = out_dir / "scenarios" / f"{name}.yaml"
    scen_path.parent.mkdir(parents=True, exist_ok=True)
    scen_path.write_text(dump_yaml(spec))
    # Pass 2: the log, from the file just written (exactly what --rebuild does).
    truth = build(yaml.safe_load(scen_path.read_text()), str(scen_path), out_dir / "logs" / f"{name}.darshan")
    pp = truth["per_phase"]
    per_rank = pp.sum(axis=0)
    busiest = int(np.argmax(per_rank))
    t_io = float(per_rank[busiest])
    share = t_io / runtime
    problem = sum(pp[i, busiest] for i, r in enumerate(roles) if r == "problem")
    if d.want is None:
        matters: bool | None = None
    else:
        matters = bool(share >= MATTERS_SHARE and t_io >= MATTERS_SECONDS)
        assert matters == d.want, (name, cls, t_io, runtime)
    why = (
        f"busiest rank {busiest}: {t_io:.3g} s top-layer I/O of {runtime:.6g} s run = {share:.2%}"
        f"{' (under 1 s)' if d.short else ''}; main phases {problem / t_io:.0%} of its I/O; {d.desc}"
    )
    if d.cls == "corrupt_records":
        why += " (io_matters from the valid records)"
    if d.cls == "partial_log":
        why += f" (the recorded I/O is {share:.2%} of the run, but the log is incomplete)"
    return {
        "case": name,
        "class": d.cls,
        "io_matters": "unknown" if matters is None else matters,
        "secondary": list(d.secondary),
        "why": why,
        "busiest_rank_io_seconds": round(t_io, 4),
        "runtime_seconds": runtime,
        "io_share": round(share, 5),
        "nprocs": n,
        "fs": d.ctx.fs,
    }


def allocate(seed: int, count: int) -> list[str]:
    rng = random.Random(f"blind-classes-{seed}")
    healthy = max(1, round(HEALTHY_SHARE * count))
    others = [c for c in CLASSES if c != "healthy_negligible"]
    base, rem = divmod(count - healthy, len(others))
    extra = set(rng.sample(others, rem))
    pool = ["healthy_negligible"] * healthy
    for c in others:
        pool += [c] * (base + (1 if c in extra else 0))
    rng.shuffle(pool)
    return pool


def run_jobs(fn: Any, items: list[Any], jobs: int) -> list[Any]:
    if jobs <= 1:
        return [fn(x) for x in items]
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        return list(ex.map(fn, items, chunksize=1))


def _rebuild_one(args: tuple[str, str]) -> str:
    src, dst = args
    build(yaml.safe_load(Path(src).read_text()), src, Path(dst))
    return dst


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int)
    ap.add_argument("--count", type=int)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--rebuild", type=Path, help="build DIR/logs from DIR/scenarios")
    ap.add_argument("--logs", type=Path, help="with --rebuild: write the logs here instead")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    a = ap.parse_args(argv)
    t0 = time.time()
    if a.rebuild:
        dest = a.logs or a.rebuild / "logs"
        items = [(str(p), str(dest / (p.stem + ".darshan"))) for p in sorted((a.rebuild / "scenarios").glob("*.yaml"))]
        run_jobs(_rebuild_one, items, a.jobs)
        print(f"rebuilt {len(items)} logs in {dest} ({time.time() - t0:.1f} s)")
        return 0
    if a.seed is None or not a.count or a.out is None:
        ap.error("give --seed, --count and --out (or --rebuild DIR)")
    a.out.mkdir(parents=True, exist_ok=True)
    classes = allocate(a.seed, a.count)
    items = [(a.seed, i + 1, c, str(a.out)) for i, c in enumerate(classes)]
    cases = run_jobs(make_case, items, a.jobs)
    doc = {
        "generator": "evals/blind/generate.py",
        "seed": a.seed,
        "count": a.count,
        "io_matters_rule": "busiest rank's top-layer I/O time (read + write + metadata) >= 5 % of the run time "
        "and >= 1 s; unknown for partial logs",
        "cases": cases,
    }
    (a.out / "construction.yaml").write_text(dump_yaml(doc))
    counts: dict[str, int] = {}
    for c in cases:
        counts[c["class"]] = counts.get(c["class"], 0) + 1
    print(f"{len(cases)} cases in {a.out} ({time.time() - t0:.1f} s)")
    for k in CLASSES:
        print(f"  {k:26s} {counts.get(k, 0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
