"""The cffi reader that ``iodiag.ingest.libreader`` replaced (its last version, by PyDarshan's cffi bindings).

Kept only as the reference that ``test_libreader_ctypes`` checks the ctypes reader against, message
for message: it imports ``darshan`` (and so pandas), which the reader itself must not.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

# Modules whose records are a base record plus fixed integer and float counter arrays.
GENERIC_MODULES = ("POSIX", "MPI-IO", "STDIO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "DFS", "DAOS")
DXT_MODULES = ("DXT_POSIX", "DXT_MPIIO")
OPTIONAL_MODULES = (*DXT_MODULES, "HEATMAP")
"""Read only when asked for: traces and heatmaps can be large. APMPI is small and gives the node count."""

Message = tuple[str, Any]


def type_strings() -> list[str]:
    """Every cffi type this reader casts to, so a parent process can parse them once before forking."""
    import darshan.backend.cffi_backend as be

    generic = [be._structdefs[m] for m in GENERIC_MODULES]
    return [
        *generic,
        "struct darshan_job *",
        "struct darshan_mnt_info **",
        "struct darshan_name_record **",
        "struct darshan_mod_info **",
        "struct darshan_lustre_record **",
        "struct dxt_file_record **",
        "struct darshan_heatmap_record **",
        "struct darshan_apmpi_perf_record **",
        "int64_t *",
        "int *",
        "double *",
        "void **",
        "char *",
        "char[]",
    ]


def _text(raw: bytes) -> str:
    # Log strings are untrusted bytes; never let a bad byte stop the read.
    return raw.decode("utf-8", "replace")


def read_log(path: str, include: frozenset[str]) -> Iterator[Message]:
    """Yield ("meta", dict) first, then ("module", dict) per module read."""
    import darshan.backend.cffi_backend as be
    from darshan.backend.cffi_backend import ffi, libdutil

    handle = libdutil.darshan_log_open(path.encode())
    if handle == ffi.NULL:
        yield ("open_failed", None)
        return
    try:
        yield ("meta", _read_meta(be, ffi, libdutil, handle))
        modules = _modules(ffi, libdutil, handle)
        for name, info in modules.items():
            if name in OPTIONAL_MODULES and name not in include:
                continue
            if name in DXT_MODULES:
                yield from _stream_dxt(ffi, libdutil, handle, name, info["idx"])
                continue
            yield ("module", _read_module(be, ffi, libdutil, handle, name, info))
    finally:
        libdutil.darshan_log_close(handle)


def _modules(ffi: Any, libdutil: Any, handle: Any) -> dict[str, dict[str, Any]]:
    mods = ffi.new("struct darshan_mod_info **")
    cnt = ffi.new("int *")
    libdutil.darshan_log_get_modules(handle, mods, cnt)
    out: dict[str, dict[str, Any]] = {}
    for i in range(cnt[0]):
        m = mods[0][i]
        out[_text(ffi.string(m.name))] = {
            "len": int(m.len),
            "ver": int(m.ver),
            "idx": int(m.idx),
            "partial": bool(m.partial_flag),
        }
    libdutil.darshan_free(mods[0])
    return out


def _read_meta(be: Any, ffi: Any, libdutil: Any, handle: Any) -> dict[str, Any]:
    jobrec = ffi.new("struct darshan_job *")
    job_ok = libdutil.darshan_log_get_job(handle, jobrec) >= 0
    runtime = ffi.new("double *")
    libdutil.darshan_log_get_job_runtime(handle, jobrec[0], runtime)
    metadata: dict[str, str] = {}
    if job_ok:
        for line in _text(ffi.string(jobrec[0].metadata)).split("\n"):
            if "=" in line:
                k, v = line.split("=", 1)
                metadata[k] = v

    exe = ffi.new("char[]", 4096)
    exe_ok = libdutil.darshan_log_get_exe(handle, exe) >= 0

    mounts: list[tuple[str, str]] = []
    mnts = ffi.new("struct darshan_mnt_info **")
    cnt = ffi.new("int *")
    if libdutil.darshan_log_get_mounts(handle, mnts, cnt) >= 0:
        for i in range(cnt[0]):
            mounts.append((_text(ffi.string(mnts[0][i].mnt_path)), _text(ffi.string(mnts[0][i].mnt_type))))
        libdutil.darshan_free(mnts[0])

    names: dict[int, str] = {}
    nrecs = ffi.new("struct darshan_name_record **")
    ncnt = ffi.new("int *")
    # This wrapper returns nothing; a corrupted name region shows up as records without names.
    libdutil.darshan_log_get_name_records(handle, nrecs, ncnt)
    names_ok = nrecs[0] != ffi.NULL
    if names_ok:
        for i in range(ncnt[0]):
            names[int(nrecs[0][i].id)] = _text(ffi.string(nrecs[0][i].name))
            libdutil.darshan_free(nrecs[0][i].name)
        libdutil.darshan_free(nrecs[0])

    j = jobrec[0]
    return {
        "job_ok": job_ok,
        "exe_ok": exe_ok,
        "names_ok": names_ok,
        "uid": int(j.uid),
        "start_sec": int(j.start_time_sec),
        "start_nsec": int(j.start_time_nsec),
        "end_sec": int(j.end_time_sec),
        "end_nsec": int(j.end_time_nsec),
        "nprocs": int(j.nprocs),
        "jobid": int(j.jobid),
        "runtime": float(runtime[0]),
        "log_ver": _text(ffi.string(ffi.cast("char *", handle))),
        "metadata": metadata,
        "exe": _text(ffi.string(exe)),
        "mounts": mounts,
        "names": names,
        "modules": _modules(ffi, libdutil, handle),
        "lib_version": _text(ffi.string(libdutil.darshan_log_get_lib_version())),
    }


def _read_module(be: Any, ffi: Any, libdutil: Any, handle: Any, name: str, info: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {"name": name, "error": None}
    try:
        if name in GENERIC_MODULES:
            result.update(_read_generic(be, ffi, libdutil, handle, name, info["idx"]))
        elif name == "LUSTRE":
            result.update(_read_lustre(be, ffi, libdutil, handle, info["idx"]))
        elif name == "HEATMAP":
            result.update(_read_heatmap(be, ffi, libdutil, handle, info["idx"]))
        elif name == "APMPI":
            result.update(_read_apmpi(be, ffi, libdutil, handle, info["idx"]))
        else:
            result["unsupported"] = True
    except _RecordError as exc:
        result.update(exc.partial)
        result["error"] = str(exc)
    return result


class _RecordError(Exception):
    def __init__(self, message: str, partial: dict[str, Any]) -> None:
        super().__init__(message)
        self.partial = partial


def _records(ffi: Any, libdutil: Any, handle: Any, idx: int) -> Iterator[Any]:
    """Yield raw record buffers; raise _RecordError when the library reports corruption."""
    buf = ffi.new("void **")
    count = 0
    while True:
        r = libdutil.darshan_log_get_record(handle, idx, buf)
        if r == 0:
            return
        if r < 0:
            raise _RecordError(f"corrupted record data after {count} records", {})
        try:
            yield buf
        finally:
            libdutil.darshan_free(buf[0])
            buf[0] = ffi.NULL
        count += 1


def _read_generic(be: Any, ffi: Any, libdutil: Any, handle: Any, name: str, idx: int) -> dict[str, Any]:
    ctype = be._structdefs[name]
    cnames = list(be.counter_names(name))
    fnames = list(be.fcounter_names(name))
    has_file_rec = name in ("H5D", "PNETCDF_VAR")
    ids: list[int] = []
    ranks: list[int] = []
    file_recs: list[int] = []
    cbufs: list[bytes] = []
    fbufs: list[bytes] = []

    def payload() -> dict[str, Any]:
        n = len(ids)
        out: dict[str, Any] = {
            "id": np.array(ids, dtype=np.uint64),
            "rank": np.array(ranks, dtype=np.int64),
            "counters": np.frombuffer(b"".join(cbufs), dtype=np.int64).reshape(n, len(cnames)),
            "fcounters": np.frombuffer(b"".join(fbufs), dtype=np.float64).reshape(n, len(fnames)),
            "counter_names": cnames,
            "fcounter_names": fnames,
        }
        if has_file_rec:
            out["file_rec_id"] = np.array(file_recs, dtype=np.uint64)
        return out

    try:
        for buf in _records(ffi, libdutil, handle, idx):
            rec = ffi.cast(ctype, buf)[0]
            ids.append(rec.base_rec.id)
            ranks.append(rec.base_rec.rank)
            if has_file_rec:
                file_recs.append(rec.file_rec_id)
            cbufs.append(ffi.buffer(rec.counters)[:])
            fbufs.append(ffi.buffer(rec.fcounters)[:])
    except _RecordError as exc:
        raise _RecordError(str(exc), payload()) from None
    return payload()


def _read_lustre(be: Any, ffi: Any, libdutil: Any, handle: Any, idx: int) -> dict[str, Any]:
    comp_names = list(be.counter_names("LUSTRE_COMP"))
    rows: list[dict[str, Any]] = []

    def payload() -> dict[str, Any]:
        return {"components": rows, "counter_names": comp_names}

    try:
        for buf in _records(ffi, libdutil, handle, idx):
            rec = ffi.cast("struct darshan_lustre_record **", buf)[0]
            ost_ids = ffi.cast("int64_t *", rec.ost_ids)
            pos = 0
            for i in range(rec.num_comps):
                comp = rec.comps[i]
                counters = np.frombuffer(ffi.buffer(comp.counters), dtype=np.int64).copy()
                values = dict(zip(comp_names, counters.tolist(), strict=True))
                count = max(int(values.get("LUSTRE_COMP_STRIPE_COUNT", 0)), 0)
                osts = list(ffi.unpack(ost_ids + pos, count)) if count else []
                pos += count
                rows.append(
                    {
                        "id": int(rec.base_rec.id),
                        "rank": int(rec.base_rec.rank),
                        "component": i,
                        "counters": counters,
                        "pool_name": _text(ffi.string(comp.pool_name)),
                        "osts": tuple(int(o) for o in osts),
                    }
                )
    except _RecordError as exc:
        raise _RecordError(str(exc), payload()) from None
    return payload()


DXT_CHUNK_SEGMENTS = 1 << 18
"""Segments per message from the reader: bounds the child's memory whatever the trace size, and the
streamed analysis' per-chunk temporaries (about 250 bytes per chunk segment: 65 MB at 2**18; at 2**20
the 10 M-segment bench peaked 90 MB higher for no gain in speed)."""


def _stream_dxt(ffi: Any, libdutil: Any, handle: Any, name: str, idx: int) -> Iterator[Message]:
    """Yield ("dxt_chunk", ...) messages of whole records, then the module's closing message.

    Segments are copied once, from the library's record buffer into the chunk that is sent.
    """
    from iodiag.ingest.isolation import RawPayload

    seg_size = ffi.sizeof("struct segment_info")
    head_size = ffi.sizeof("struct dxt_file_record")
    capacity = DXT_CHUNK_SEGMENTS * seg_size
    chunk = bytearray(capacity)
    dest = ffi.from_buffer(chunk)
    used = 0
    recs: list[tuple[int, int, str, int, int]] = []
    error: str | None = None

    def flush() -> Message:
        nonlocal chunk, dest, used, recs
        msg: Message = ("dxt_chunk", {"name": name, "records": recs, "raw": RawPayload(memoryview(chunk)[:used])})
        chunk = bytearray(capacity)
        dest = ffi.from_buffer(chunk)
        used, recs = 0, []
        return msg

    try:
        for buf in _records(ffi, libdutil, handle, idx):
            rec = ffi.cast("struct dxt_file_record **", buf)[0]
            w, r = int(rec.write_count), int(rec.read_count)
            size = seg_size * (w + r)
            src = ffi.cast("char *", buf[0]) + head_size
            if used + size > capacity and recs:
                yield flush()
            if size > capacity:  # one record bigger than a chunk travels alone
                yield (
                    "dxt_chunk",
                    {
                        "name": name,
                        "records": [
                            (int(rec.base_rec.id), int(rec.base_rec.rank), _text(ffi.string(rec.hostname)), w, r)
                        ],
                        "raw": RawPayload(ffi.buffer(src, size)[:]),
                    },
                )
                continue
            ffi.memmove(dest + used, src, size)
            used += size
            recs.append((int(rec.base_rec.id), int(rec.base_rec.rank), _text(ffi.string(rec.hostname)), w, r))
    except _RecordError as exc:
        error = str(exc)
    if recs:
        yield flush()
    yield ("module", {"name": name, "error": error, "trace": True})


def _read_heatmap(be: Any, ffi: Any, libdutil: Any, handle: Any, idx: int) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    try:
        for buf in _records(ffi, libdutil, handle, idx):
            rec = ffi.cast("struct darshan_heatmap_record **", buf)[0]
            nbins = int(rec.nbins)
            size = ffi.sizeof("int64_t") * nbins
            rows.append(
                {
                    "id": int(rec.base_rec.id),
                    "rank": int(rec.base_rec.rank),
                    "bin_width": float(rec.bin_width_seconds),
                    "write_bins": np.frombuffer(ffi.buffer(rec.write_bins, size), dtype=np.int64).copy(),
                    "read_bins": np.frombuffer(ffi.buffer(rec.read_bins, size), dtype=np.int64).copy(),
                }
            )
    except _RecordError as exc:
        raise _RecordError(str(exc), {"rows": rows}) from None
    return {"rows": rows}


def _read_apmpi(be: Any, ffi: Any, libdutil: Any, handle: Any, idx: int) -> dict[str, Any]:
    """APMPI: a header record, then one record per rank with MPI call counters and the node name."""
    cnames = [_text(ffi.string(libdutil.apmpi_counter_names[i])) for i in range(396)]
    fnames = [_text(ffi.string(libdutil.apmpi_f_mpiop_totaltime_counter_names[i])) for i in range(222)]
    ranks: list[int] = []
    nodes: list[str] = []
    cbufs: list[bytes] = []
    fbufs: list[bytes] = []

    def payload() -> dict[str, Any]:
        n = len(ranks)
        return {
            "rank": np.array(ranks, dtype=np.int64),
            "node_name": nodes,
            "counters": np.frombuffer(b"".join(cbufs), dtype=np.uint64).reshape(n, len(cnames)),
            "fcounters": np.frombuffer(b"".join(fbufs), dtype=np.float64).reshape(n, len(fnames)),
            "counter_names": cnames,
            "fcounter_names": fnames,
        }

    try:
        for i, buf in enumerate(_records(ffi, libdutil, handle, idx)):
            if i == 0:
                continue  # the header record: job-wide variances only
            rec = ffi.cast("struct darshan_apmpi_perf_record **", buf)[0]
            ranks.append(int(rec.base_rec.rank))
            nodes.append(_text(ffi.string(rec.node_name)))
            cbufs.append(ffi.buffer(rec.counters)[:])
            fbufs.append(ffi.buffer(rec.fcounters)[:])
    except _RecordError as exc:
        raise _RecordError(str(exc), payload()) from None
    return payload()
