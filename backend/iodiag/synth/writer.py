"""Write a Darshan log from tables shaped like the ingest's ``JobProfile.tables``.

Why libdarshan-util and not our own encoder: the library is the format's reference
implementation (header, region map, compression, per-module record layout and versions), it ships
in the darshan wheel we already depend on, and whatever it writes its own reader and Drishti read.
Our part is only to lay records out in the library's structs, which PyDarshan's bindings define.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from iodiag.ingest.stacks import SourceLocation
from iodiag.ingest.stacks import encode as encode_stacks
from iodiag.ingest.stacks import record_id as callstack_id
from iodiag.ingest.table import Table
from iodiag.synth._lib import MODULE_VERSIONS, library

GENERIC = ("POSIX", "MPI-IO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "STDIO", "DFS")
# The library writes module regions in this order (its module ids), and each exactly once.
MODULE_ORDER = (
    "POSIX",
    "MPI-IO",
    "H5F",
    "H5D",
    "PNETCDF_FILE",
    "PNETCDF_VAR",
    "LUSTRE",
    "STDIO",
    "DXT_POSIX",
    "DXT_MPIIO",
    "HEATMAP",
    "DFS",
)


class WriteError(Exception):
    """The library refused to write (bad path, full disk, invalid input)."""


@dataclass(frozen=True)
class JobInfo:
    jobid: int = 1
    uid: int = 1000
    nprocs: int = 1
    start_sec: int = 1_700_000_000
    start_nsec: int = 0
    end_sec: int = 1_700_000_060
    end_nsec: int = 0
    exe: str = "./app"
    darshan_version: str = "3.5.0"
    mounts: Sequence[tuple[str, str]] = (("/", "ext4"),)
    """(mount point, file-system type) pairs."""
    metadata: Mapping[str, str] = field(default_factory=dict)
    """Extra job metadata key=value pairs (lib_ver is set from darshan_version)."""


def write_log(
    path: str | os.PathLike[str],
    job: JobInfo,
    names: Mapping[int, str],
    profile_tables: Mapping[str, pd.DataFrame | Table],
    partial: Sequence[str] = (),
    stacks: Mapping[int, tuple[int, ...]] | None = None,
    lines: Mapping[int, SourceLocation] | None = None,
) -> None:
    """Write a log. ``tables`` use the ingest's columns; modules named in ``partial`` are flagged partial.

    With ``stacks`` (stack id -> addresses), DXT tables with a ``stack`` column (stack id per segment,
    -1 for none) also get their call stacks, and ``lines`` the address-to-line table, in the form
    ``iodiag.ingest.stacks`` describes.
    """
    ffi, lib, be = library()
    # A profile's tables (ingest) or frames built here (synth): the writer works on frames.
    tables = {k: v.to_pandas() if isinstance(v, Table) else v for k, v in profile_tables.items()}
    unknown = set(tables) - set(MODULE_ORDER)
    if unknown:
        raise ValueError(f"cannot write modules {sorted(unknown)}")
    out = os.fspath(path)
    if os.path.exists(out):
        os.remove(out)  # the library refuses to overwrite
    flags = 0
    for name in partial:
        flags |= 1 << be.mod_name_to_idx(name)
    fd = lib.darshan_log_create(out.encode(), 0, flags)
    if fd == ffi.NULL:
        raise WriteError(f"{out}: cannot create log file")
    keep: list[Any] = []  # cffi buffers that must outlive the calls using them
    try:
        put_job(ffi, lib, fd, job)
        if stacks:
            names = {**names, **_stack_names(tables, stacks, lines or {})}
        put_names(ffi, lib, fd, names, keep)
        for name in MODULE_ORDER:
            table = tables.get(name)
            if table is None or table.empty:
                continue
            if name in GENERIC:
                _put_generic(ffi, lib, be, fd, name, table)
            elif name == "LUSTRE":
                _put_lustre(ffi, lib, be, fd, table)
            elif name == "HEATMAP":
                _put_heatmap(ffi, lib, be, fd, table)
            else:
                _put_dxt(ffi, lib, be, fd, name, table)
    except BaseException:
        lib.darshan_log_close(fd)
        if os.path.exists(out):
            os.remove(out)
        raise
    lib.darshan_log_close(fd)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise WriteError(f"libdarshan-util failed to write {what} (rc={rc})")


def put_job(ffi: Any, lib: Any, fd: Any, job: JobInfo) -> None:
    rec = ffi.new("struct darshan_job *")
    rec.uid, rec.nprocs, rec.jobid = job.uid, job.nprocs, job.jobid
    rec.start_time_sec, rec.start_time_nsec = job.start_sec, job.start_nsec
    rec.end_time_sec, rec.end_time_nsec = job.end_sec, job.end_nsec
    meta = {"lib_ver": job.darshan_version, **job.metadata}
    text = "".join(f"{k}={v}\n" for k, v in meta.items()).encode()
    if len(text) >= 1024:
        raise ValueError("job metadata longer than Darshan's 1024 bytes")
    ffi.memmove(rec.metadata, text, len(text))
    _check(lib.darshan_log_put_job(fd, rec), "the job record")
    _check(lib.darshan_log_put_exe(fd, ffi.new("char[]", job.exe.encode()[:4095])), "the executable")
    mounts = ffi.new("struct darshan_mnt_info[]", max(len(job.mounts), 1))
    # The library stores the table last entry first; reverse so a reader sees the given order.
    for i, (point, kind) in enumerate(reversed(job.mounts)):
        p, k = point.encode()[:3014], kind.encode()[:3014]
        ffi.memmove(mounts[i].mnt_path, p, len(p))
        ffi.memmove(mounts[i].mnt_type, k, len(k))
    _check(lib.darshan_log_put_mounts(fd, mounts, len(job.mounts)), "the mount table")


def put_names(ffi: Any, lib: Any, fd: Any, names: Mapping[int, str], keep: list[Any]) -> None:
    # put_namehash walks a uthash table only through each entry's hlink.next, so a linked array
    # of entries is all it needs.
    items = list(names.items())
    if not items:
        items = []
    refs = ffi.new("struct darshan_name_record_ref[]", max(len(items), 1))
    keep.append(refs)
    for i, (rid, name) in enumerate(items):
        raw = name.encode()[:4095]
        buf = ffi.new("char[]", 8 + len(raw) + 1)
        keep.append(buf)
        rec = ffi.cast("struct iodiag_name_record *", buf)
        rec.id = int(rid)
        ffi.memmove(ffi.cast("char *", buf) + 8, raw, len(raw))
        refs[i].name_record = rec
        refs[i].hlink.next = ffi.addressof(refs[i + 1]) if i + 1 < len(items) else ffi.NULL
    _check(lib.darshan_log_put_namehash(fd, refs if items else ffi.NULL), "the name records")


def _put_generic(ffi: Any, lib: Any, be: Any, fd: Any, name: str, table: pd.DataFrame) -> None:
    ctype = be._structdefs[name].removesuffix(" **")
    cnames = list(be.counter_names(name))
    fnames = list(be.fcounter_names(name))
    missing = [c for c in cnames + fnames if c not in table.columns]
    if missing:
        raise ValueError(f"{name} table lacks columns {missing[:5]}{'...' if len(missing) > 5 else ''}")
    counters = table[cnames].to_numpy(dtype=np.int64)
    fcounters = table[fnames].to_numpy(dtype=np.float64)
    ids = table["id"].to_numpy(dtype=np.uint64)
    ranks = table["rank"].to_numpy(dtype=np.int64)
    file_recs = table["file_rec_id"].to_numpy(dtype=np.uint64) if "file_rec_id" in table else None
    # DFS records name their DAOS pool and container (16-byte UUIDs).
    uuids = [(c, table[c].tolist()) for c in ("pool_uuid", "cont_uuid") if c in table.columns]
    rec = ffi.new(f"{ctype} *")
    size = ffi.sizeof(rec[0])
    cview = np.frombuffer(ffi.buffer(rec.counters), dtype=np.int64)
    fview = np.frombuffer(ffi.buffer(rec.fcounters), dtype=np.float64)
    mod_id, ver = be.mod_name_to_idx(name), MODULE_VERSIONS[name]
    for i in range(len(table)):
        rec.base_rec.id = int(ids[i])
        rec.base_rec.rank = int(ranks[i])
        if file_recs is not None:
            rec.file_rec_id = int(file_recs[i])
        for col, values in uuids:
            raw = bytes(values[i])
            if len(raw) != 16:
                raise ValueError(f"{name} {col} must be 16 bytes, not {len(raw)}")
            ffi.memmove(getattr(rec, col), raw, 16)
        cview[:] = counters[i]
        fview[:] = fcounters[i]
        _check(lib.darshan_log_put_mod(fd, mod_id, rec, size, ver), f"a {name} record")


def _put_lustre(ffi: Any, lib: Any, be: Any, fd: Any, table: pd.DataFrame) -> None:
    # On disk a LUSTRE (v2) record is base record, component and stripe counts, the components,
    # then every component's OST ids; the struct's two pointers are not stored.
    comp_names = [n.removeprefix("LUSTRE_COMP_").lower() for n in be.counter_names("LUSTRE_COMP")]
    mod_id, ver = be.mod_name_to_idx("LUSTRE"), MODULE_VERSIONS["LUSTRE"]
    for _, group in table.groupby(["id", "rank"], sort=False):
        comps = group.sort_values("component", kind="stable")
        rid, rank = int(comps["id"].iloc[0]), int(comps["rank"].iloc[0])
        osts = [int(o) for t in comps["osts"] for o in t]
        parts = [
            np.array([rid], dtype=np.uint64).tobytes(),
            np.array([rank, len(comps), len(osts)], dtype=np.int64).tobytes(),
        ]
        for row in comps.to_dict("records"):
            parts.append(np.array([int(row[c]) for c in comp_names], dtype=np.int64).tobytes())
            pool = str(row.get("pool_name", "")).encode()[:15]
            parts.append(pool.ljust(16, b"\0"))
        parts.append(np.array(osts, dtype=np.int64).tobytes())
        data = b"".join(parts)
        buf = ffi.from_buffer(data)
        _check(lib.darshan_log_put_mod(fd, mod_id, buf, len(data), ver), "a LUSTRE record")


_SEGMENT = np.dtype([("offset", "<i8"), ("length", "<i8"), ("start", "<f8"), ("end", "<f8")])


def _put_heatmap(ffi: Any, lib: Any, be: Any, fd: Any, table: pd.DataFrame) -> None:
    # On disk: the struct (its two pointer fields unused), then the write bins, then the read bins.
    head = ffi.sizeof("struct darshan_heatmap_record")
    mod_id, ver = be.mod_name_to_idx("HEATMAP"), MODULE_VERSIONS["HEATMAP"]
    for row in table.to_dict("records"):
        w = np.asarray(row["write_bins"], dtype=np.int64)
        r = np.asarray(row["read_bins"], dtype=np.int64)
        if len(w) != len(r):
            raise ValueError("HEATMAP write_bins and read_bins differ in length")
        payload = w.tobytes() + r.tobytes()
        buf = ffi.new("char[]", head + len(payload))
        rec = ffi.cast("struct darshan_heatmap_record *", buf)
        rec.base_rec.id = int(row["id"])
        rec.base_rec.rank = int(row["rank"])
        rec.bin_width_seconds = float(row["bin_width"])
        rec.nbins = len(w)
        ffi.memmove(buf + head, payload, len(payload))
        _check(lib.darshan_log_put_mod(fd, mod_id, buf, head + len(payload), ver), "a HEATMAP record")


def _dxt_order(table: pd.DataFrame) -> pd.DataFrame:
    # Within a record Darshan stores the writes first, then the reads, each in time order.
    t = table.assign(_read=(table["op"] == "read").astype(np.int8))
    return t.sort_values(["id", "rank", "_read", "start"], kind="stable")


def _stack_names(
    tables: Mapping[str, pd.DataFrame], stacks: Mapping[int, tuple[int, ...]], lines: Mapping[int, SourceLocation]
) -> dict[int, str]:
    segments = []
    for module in ("DXT_POSIX", "DXT_MPIIO"):
        table = tables.get(module)
        if table is None or table.empty or "stack" not in table:
            continue
        t = _dxt_order(table)
        ids, ranks, reads = (t[c].to_numpy(dtype=np.int64) for c in ("id", "rank", "_read"))
        sids = t["stack"].to_numpy(dtype=np.int64)
        cut = np.flatnonzero((np.diff(ids) != 0) | (np.diff(ranks) != 0) | (np.diff(reads) != 0)) + 1
        for a, b in zip(np.r_[0, cut].tolist(), np.r_[cut, len(t)].tolist(), strict=True):
            rid = int(np.uint64(ids[a].astype(np.uint64)))
            segments.append((module, rid, int(ranks[a]), int(reads[a]), sids[a:b]))
    return {callstack_id(text): text for text in encode_stacks(stacks, lines, segments)}


def _put_dxt(ffi: Any, lib: Any, be: Any, fd: Any, name: str, table: pd.DataFrame) -> None:
    mod_id, ver = be.mod_name_to_idx(name), MODULE_VERSIONS[name]
    head = ffi.sizeof("struct dxt_file_record")
    t = _dxt_order(table)
    ids = t["id"].to_numpy(dtype=np.uint64)
    ranks = t["rank"].to_numpy(dtype=np.int64)
    key_change = np.flatnonzero((np.diff(ids.astype(np.int64)) != 0) | (np.diff(ranks) != 0)) + 1
    starts = np.concatenate([[0], key_change])
    ends = np.concatenate([key_change, [len(t)]])
    seg = np.empty(len(t), dtype=_SEGMENT)
    seg["offset"] = t["offset"].to_numpy(dtype=np.int64)
    seg["length"] = t["length"].to_numpy(dtype=np.int64)
    seg["start"] = t["start"].to_numpy(dtype=np.float64)
    seg["end"] = t["end"].to_numpy(dtype=np.float64)
    is_read = t["_read"].to_numpy()
    hosts = t["hostname"].to_numpy() if "hostname" in t else np.full(len(t), "localhost", dtype=object)
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        reads = int(is_read[a:b].sum())
        payload = seg[a:b].tobytes()
        buf = ffi.new("char[]", head + len(payload))
        rec = ffi.cast("struct dxt_file_record *", buf)
        rec.base_rec.id = int(ids[a])
        rec.base_rec.rank = int(ranks[a])
        rec.shared_record = 0
        host = str(hosts[a]).encode()[:63]
        ffi.memmove(rec.hostname, host, len(host))
        rec.write_count = (b - a) - reads
        rec.read_count = reads
        ffi.memmove(buf + head, payload, len(payload))
        _check(lib.darshan_log_put_mod(fd, mod_id, buf, head + len(payload), ver), f"a {name} record")
