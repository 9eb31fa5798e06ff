"""Scenario specs: a YAML description of an I/O program, and the Darshan log it produces.

The format is documented in ``docs/scenario-spec.md``. ``load_scenario`` validates a spec;
``iodiag.synth.build.build_log`` simulates the program (``program.py``), derives what Darshan would
record (``derive.py``) and writes the log with ``writer.write_log``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator

from iodiag.synth.layout import DEFAULT_BLOCK, MountInfo, find_mount, parse_size


class ScenarioError(ValueError):
    """A scenario file is missing, not YAML, or not a valid spec; the message is one line."""


Size = Annotated[int, BeforeValidator(parse_size)]


def _sizes(value: object) -> list[int]:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise ValueError("size list is empty")
    out = [parse_size(v) for v in items]
    if any(s <= 0 for s in out):
        raise ValueError("request sizes must be positive")
    return out


Sizes = Annotated[list[int], BeforeValidator(_sizes)]


def _offset(value: object) -> int | Literal["append"] | None:
    if value is None or value == "append":
        return value
    return parse_size(value)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MountSpec(_Model):
    path: str
    fs: str
    block_size: Size | None = None
    ost_count: int = Field(default=16, ge=1)
    slow_osts: dict[int, float] = Field(default_factory=dict)

    @field_validator("path")
    @classmethod
    def _abs(cls, v: str) -> str:
        if not v.startswith("/"):
            raise ValueError("mount path must be absolute")
        return v

    @field_validator("slow_osts")
    @classmethod
    def _slow(cls, v: dict[int, float]) -> dict[int, float]:
        if any(f <= 0 for f in v.values()):
            raise ValueError("slow OST factors must be positive")
        return v


class JobSpec(_Model):
    nprocs: int = Field(ge=1, le=1_000_000)
    nodes: int = Field(default=1, ge=1)
    nodes_known: bool = Field(
        default=True,
        description="whether the user tells iodiag the node count (--nodes); the log itself never holds it, so "
        "false evaluates a job whose node count the analysis must do without",
    )
    runtime: float | None = Field(default=None, gt=0)
    start: int = 1_700_000_000
    exe: str = "./app"
    jobid: int = Field(default=1, ge=0)
    uid: int = Field(default=1000, ge=0)
    darshan_version: str = "3.4.4"
    hostname: str = "nid{node:05d}"
    mounts: list[MountSpec] = Field(default_factory=lambda: [MountSpec(path="/", fs="ext4")])
    metadata: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _nodes(self) -> JobSpec:
        if self.nodes > self.nprocs:
            raise ValueError(f"nodes ({self.nodes}) exceeds nprocs ({self.nprocs})")
        try:
            self.hostname.format(node=0)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"hostname template {self.hostname!r}: {exc}") from None
        return self


class Hints(_Model):
    cb_nodes: int | None = Field(default=None, ge=1)
    cb_buffer_size: Size = 16 << 20

    @field_validator("cb_buffer_size")
    @classmethod
    def _pos(cls, v: int) -> int:
        if v <= 0:
            raise ValueError("cb_buffer_size must be positive")
        return v


class LustreSpec(_Model):
    stripe_size: Size = 1 << 20
    stripe_count: int = Field(default=1, ge=-1)
    osts: list[int] | None = None
    ost_start: int | None = Field(default=None, ge=0)
    pool: str = ""

    @model_validator(mode="after")
    def _check(self) -> LustreSpec:
        if self.stripe_count == 0:
            raise ValueError("stripe_count must be -1 (all OSTs) or >= 1")
        if self.stripe_size <= 0 or self.stripe_size % 65536:
            raise ValueError("stripe_size must be a positive multiple of 64 KiB")
        if self.osts is not None:
            if self.ost_start is not None:
                raise ValueError("give osts or ost_start, not both")
            if self.stripe_count not in (-1, len(self.osts)) and "stripe_count" in self.model_fields_set:
                raise ValueError(f"stripe_count {self.stripe_count} but {len(self.osts)} OSTs listed")
            if len(set(self.osts)) != len(self.osts) or any(o < 0 for o in self.osts):
                raise ValueError("osts must be distinct non-negative OST indices")
        return self


class FileSpec(_Model):
    path: str
    lustre: LustreSpec | None = None
    header: Size | None = None
    alignment: Size | None = None
    chunk_size: Size | None = Field(default=None, description="DFS files: the DAOS array chunk size (default 1 MiB)")
    shared: bool | None = None
    per_rank: bool | None = None

    @field_validator("path")
    @classmethod
    def _abs(cls, v: str) -> str:
        if not v.startswith("/"):
            raise ValueError("file path must be absolute")
        return v

    @field_validator("alignment", "chunk_size")
    @classmethod
    def _align(cls, v: int | None) -> int | None:
        if v is not None and v <= 0:
            raise ValueError("alignment and chunk_size must be positive")
        return v


RankSet = int | str | list[int]
Op = Literal["write", "read", "open", "stat", "open_stat"]
Interface = Literal["posix", "stdio", "mpiio", "hdf5", "pnetcdf", "dfs"]


class FrameSpec(_Model):
    """One frame of a call stack: ``"function file:line"`` or a mapping (optionally with the address)."""

    function: str = "??"
    file: str = "??"
    line: int = Field(default=0, ge=0)
    address: int | None = Field(default=None, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, v: Any) -> Any:
        if isinstance(v, str):
            func, _, where = v.strip().partition(" ")
            src, _, line = where.strip().rpartition(":")
            if not func or not src or not line.isdigit():
                raise ValueError(f"frame {v!r}: expected 'function file:line'")
            return {"function": func, "file": src, "line": int(line)}
        if isinstance(v, dict) and isinstance(v.get("address"), str):
            try:
                return {**v, "address": int(v["address"], 0)}
            except ValueError:
                raise ValueError(f"frame address {v['address']!r} is not a number") from None
        return v


class Phase(_Model):
    ranks: RankSet = "all"
    file: str | None = None
    files: str | None = None
    count_files: int | None = Field(default=None, ge=1)
    interface: Interface = "posix"
    via: Literal["mpiio", "posix"] = "mpiio"
    collective: bool = False
    nonblocking: bool = False
    op: Op = "write"
    count: int = Field(default=1, ge=0)
    count_by_rank: dict[int, int] = Field(default_factory=dict)
    size: Sizes = Field(default_factory=lambda: [1 << 20])
    pattern: Literal["sequential", "random"] = "sequential"
    layout: Literal["segmented", "interleaved", "overlapping"] = "segmented"
    gap: Size = 0
    offset: Annotated[int | Literal["append"] | None, BeforeValidator(_offset)] = None
    passes: int = Field(default=1, ge=1)
    seconds_per_op: float | None = Field(default=None, ge=0)
    meta_seconds: float = Field(default=1e-4, ge=0)
    wait_seconds: float = Field(
        default=0.0, ge=0, description="collective phases: seconds each call waits before the aggregators' POSIX I/O"
    )
    read_modify_write: bool = Field(
        default=False, description="collective writes: the aggregators read every piece before writing it (ROMIO)"
    )
    fill_values: bool = Field(
        default=False,
        description="HDF5 write phases that create their dataset: H5Dcreate first writes the dataset's whole extent "
        "with fill values, from the communicator's first rank (H5D__contig_fill), before the data",
    )
    slow_ranks: dict[int, float] = Field(default_factory=dict)
    mem_aligned: bool = True
    fsync: bool = False
    compute: float = Field(default=0.0, ge=0)
    cb_nodes: int | None = Field(default=None, ge=1)
    cb_buffer_size: Size | None = None
    dataset: str = "/data"
    variable: str = "var"
    stack: list[FrameSpec] = Field(
        default_factory=list,
        description="call stack of the phase's requests, innermost frame first (written only with dxt: true)",
    )
    note: str = ""

    @model_validator(mode="after")
    def _check(self) -> Phase:
        if (self.file is None) == (self.files is None):
            raise ValueError("a phase needs exactly one of 'file' or 'files'")
        if self.files is not None:
            if self.count_files is None:
                raise ValueError("'files' needs 'count_files'")
            if "{i}" not in self.files:
                raise ValueError("'files' template must contain {i}")
        elif self.count_files is not None:
            raise ValueError("'count_files' goes with 'files', not 'file'")
        path = self.file if self.file is not None else self.files
        assert path is not None
        if not path.startswith("/"):
            raise ValueError("file path must be absolute")
        try:
            path.format(rank=0, i=0)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"bad path template {path!r}: only {{rank}} and {{i}} are allowed ({exc})") from None
        data = self.op in ("read", "write")
        if self.interface in ("posix", "stdio", "dfs") and (self.collective or self.nonblocking):
            raise ValueError(f"collective/nonblocking need an MPI interface, not {self.interface}")
        if self.interface == "pnetcdf" and self.via == "posix" and "via" in self.model_fields_set:
            raise ValueError("PnetCDF always runs on MPI-IO (via: mpiio)")
        if self.interface == "hdf5" and self.via == "posix" and (self.collective or self.nonblocking):
            raise ValueError("HDF5 via posix (sec2) has no collective or nonblocking I/O")
        if self.interface == "hdf5" and self.nonblocking:
            raise ValueError("HDF5 has no nonblocking dataset I/O here; use mpiio or pnetcdf")
        if not data and self.interface not in ("posix", "stdio", "mpiio", "dfs"):
            raise ValueError(f"op {self.op} is a POSIX/STDIO/MPI-IO/DFS operation, not {self.interface}")
        if not data and self.interface in ("stdio", "mpiio") and self.op != "open":
            raise ValueError(f"op {self.op} is only defined for the posix interface")
        if self.interface == "dfs" and self.op == "stat":
            raise ValueError(
                "op stat: Darshan does not instrument dfs_stat (no object id); use open_stat (dfs_ostat on an "
                "open object)"
            )
        if self.interface == "dfs" and self.fsync:
            raise ValueError("fsync: Darshan's DFS module records no sync calls")
        if self.read_modify_write and not (self.collective and self.op == "write"):
            raise ValueError("read_modify_write is ROMIO's read before a collective write: it needs collective writes")
        if self.wait_seconds and not self.collective:
            raise ValueError("wait_seconds is the wait inside collective calls: it needs collective: true")
        if self.fill_values and not (self.interface == "hdf5" and self.op == "write"):
            raise ValueError("fill_values is HDF5 writing fill values at H5Dcreate: it needs interface hdf5, op write")
        if self.fill_values and self.via != "mpiio":
            raise ValueError("fill_values is modeled for parallel HDF5 (via: mpiio) only")
        if self.fill_values and self.files is not None:
            raise ValueError("fill_values takes one 'file', not 'files'")
        if self.collective and self.count_by_rank:
            raise ValueError("collective phases need the same count on every rank (no count_by_rank)")
        if any(f <= 0 for f in self.slow_ranks.values()):
            raise ValueError("slow_ranks factors must be positive")
        if any(c < 0 for c in self.count_by_rank.values()):
            raise ValueError("count_by_rank values must be >= 0")
        if self.cb_buffer_size is not None and self.cb_buffer_size <= 0:
            raise ValueError("cb_buffer_size must be positive")
        return self

    @property
    def path(self) -> str:
        p = self.file if self.file is not None else self.files
        assert p is not None
        return p

    @property
    def is_data(self) -> bool:
        return self.op in ("read", "write")


class Expect(_Model):
    findings: list[str] = Field(default_factory=list)
    absent: list[str] = Field(default_factory=list)
    # Ranking labels (scored by ``iodiag eval ranking``): what an expert would put first.
    io_matters: bool | None = Field(default=None, description="the verdict's io_matters")
    top_cause: str | None = Field(
        default=None, description="code of the verdict's first cause; 'none' when no cause should be named"
    )
    top_cause_any: list[str] = Field(default_factory=list, description="other codes acceptable as the first cause")
    quiet: list[str] = Field(default_factory=list, description="codes that must not be above info")
    no_warnings: bool = Field(default=False, description="nothing above info at all (a healthy job)")

    @field_validator("findings", "absent", "quiet", "top_cause_any")
    @classmethod
    def _codes(cls, v: list[str]) -> list[str]:
        for c in v:
            if not re.fullmatch(r"[A-Z][0-9]{2}", c):
                raise ValueError(f"not a finding code: {c!r}")
        return v

    @field_validator("top_cause")
    @classmethod
    def _top(cls, v: str | None) -> str | None:
        if v is not None and v != "none" and not re.fullmatch(r"[A-Z][0-9]{2}", v):
            raise ValueError(f"not a finding code: {v!r}")
        return v


class Scenario(_Model):
    name: str = Field(pattern=r"^[A-Za-z0-9._-]+$")
    description: str = ""
    seed: int = 0
    job: JobSpec
    hints: Hints = Field(default_factory=Hints)
    dxt: bool = False
    heatmap: bool = False
    stacks: Literal["table", "addresses"] = Field(
        default="table",
        description="with phase stacks: also write the address-to-line table ('table'), or only the addresses, "
        "to be mapped later with --binary ('addresses')",
    )
    files: list[FileSpec] = Field(default_factory=list)
    program: list[Phase] = Field(min_length=1)
    expect: Expect = Field(default_factory=Expect)

    @model_validator(mode="after")
    def _check(self) -> Scenario:
        mounts = mount_infos(self)
        seen = set()
        for f in self.files:
            if f.path in seen:
                raise ValueError(f"file {f.path} declared twice")
            seen.add(f.path)
            m = find_mount(mounts, f.path)
            if m is None:
                raise ValueError(f"file {f.path} is under no mount")
            if f.chunk_size is not None and m.fs != "daos":
                raise ValueError(f"file {f.path} has a DFS chunk_size but is on {m.fs} ({m.path})")
            if f.lustre is not None and m.fs != "lustre":
                raise ValueError(f"file {f.path} has a lustre layout but is on {m.fs} ({m.path})")
            if f.lustre is not None and f.lustre.osts and max(f.lustre.osts) >= m.ost_count:
                raise ValueError(f"file {f.path}: OST index >= the mount's ost_count ({m.ost_count})")
        for i, ph in enumerate(self.program):
            where = f"program[{i}]"
            try:
                resolve_ranks(ph.ranks, self.job.nprocs, self.job.nodes)
            except ValueError as exc:
                raise ValueError(f"{where}.ranks: {exc}") from None
            mount = find_mount(mounts, ph.path)
            if mount is None:
                raise ValueError(f"{where}: file {ph.path} is under no mount")
            if (mount.fs == "daos") != (ph.interface == "dfs"):
                raise ValueError(
                    f"{where}: interface dfs goes with files on an fs: daos mount (a DAOS container), and files "
                    f"there are accessed through dfs ({ph.path} is on {mount.fs}, interface {ph.interface})"
                )
            for r in (*ph.count_by_rank, *ph.slow_ranks):
                if not 0 <= r < self.job.nprocs:
                    raise ValueError(f"{where}: rank {r} is not in 0..{self.job.nprocs - 1}")
        return self


def _one_line(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        msg = msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return " ".join("; ".join(parts).split())


def parse_scenario(data: Any, source: str = "scenario") -> Scenario:
    """Validate an already-parsed spec (a dict)."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario must be a YAML mapping")
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(f"{source}: invalid scenario: {_one_line(exc)}") from None


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file; every failure is a one-line ``ScenarioError``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{p}: no such scenario file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{p}: is a directory, not a scenario file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{p}: cannot read scenario file ({exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{p}: invalid YAML ({' '.join(str(exc).split())})") from None
    return parse_scenario(data, str(p))


# --- reading the spec ------------------------------------------------------------------------------


def mount_infos(s: Scenario) -> list[MountInfo]:
    out = []
    for m in s.job.mounts:
        block = m.block_size if m.block_size else DEFAULT_BLOCK.get(m.fs, 4096)
        out.append(
            MountInfo(path=m.path, fs=m.fs, block_size=block, ost_count=m.ost_count, slow_osts=dict(m.slow_osts))
        )
    return out


def node_of(nprocs: int, nodes: int) -> np.ndarray:
    """Block placement: rank r is on node r * nodes // nprocs."""
    return (np.arange(nprocs, dtype=np.int64) * nodes) // nprocs


def resolve_ranks(spec: RankSet, nprocs: int, nodes: int) -> np.ndarray:
    """Sorted distinct ranks of a rank set (see docs/scenario-spec.md)."""
    out: set[int] = set()
    if isinstance(spec, bool):
        raise ValueError(f"not a rank set: {spec!r}")
    if isinstance(spec, int):
        out.add(spec)
    elif isinstance(spec, list):
        out.update(int(r) for r in spec)
    else:
        text = spec.strip().lower()
        if text == "all":
            return np.arange(nprocs, dtype=np.int64)
        if text in ("even", "odd"):
            return np.arange(0 if text == "even" else 1, nprocs, 2, dtype=np.int64)
        if text == "first_per_node":
            node = node_of(nprocs, nodes)
            return np.flatnonzero(np.r_[True, node[1:] != node[:-1]]).astype(np.int64)
        for part in text.split(","):
            m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
            if not m:
                raise ValueError(f"not a rank set: {spec!r} (use all, 5, '0-15', '0,2,8-11', even, odd)")
            a = int(m.group(1))
            b = int(m.group(2)) if m.group(2) is not None else a
            if b < a:
                raise ValueError(f"empty rank range {part.strip()!r}")
            if b >= nprocs:
                raise ValueError(f"rank {b} is not in 0..{nprocs - 1}")
            out.update(range(a, b + 1))
    if not out:
        raise ValueError("empty rank set")
    bad = [r for r in out if not 0 <= r < nprocs]
    if bad:
        raise ValueError(f"rank {bad[0]} is not in 0..{nprocs - 1}")
    return np.array(sorted(out), dtype=np.int64)
