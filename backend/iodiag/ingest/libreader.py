"""Reads a Darshan log through libdarshan-util (the library inside the darshan wheel), by ctypes.

This module runs inside the isolated reader process (see ``isolation``): the C
library can crash on corrupted input, so nothing here may assume it survives.
It yields plain Python/numpy payloads, one message per piece, so that the
parent keeps everything read before a crash.

The library is called through ctypes, not through PyDarshan's cffi bindings: importing the
``darshan`` package costs about 0.3 s (it imports pandas, then cffi parses its C declarations), more
than reading most logs takes. This
module never imports ``darshan``, pandas or cffi; it finds the library file beside the installed
package (``importlib.util.find_spec`` does not run the package). The structures below copy
PyDarshan's C declarations (``darshan/backend/api_def_c.py`` and ``apmpi.py``, darshan 3.5.0);
``warm`` checks their counter arrays against the library's own counter name tables.
"""

from __future__ import annotations

import ctypes
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

# Modules whose records are a base record plus fixed integer and float counter arrays.
GENERIC_MODULES = ("POSIX", "MPI-IO", "STDIO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR", "DFS", "DAOS")
DXT_MODULES = ("DXT_POSIX", "DXT_MPIIO")
OPTIONAL_MODULES = (*DXT_MODULES, "HEATMAP")
"""Read only when asked for: traces and heatmaps can be large. APMPI is small and gives the node count."""

Message = tuple[str, Any]

_i64 = ctypes.c_int64
_u64 = ctypes.c_uint64
_f64 = ctypes.c_double
_int = ctypes.c_int
_ptr = ctypes.c_void_p


# --- C structures (darshan-logutils.h, darshan-log-format.h and the modules' log-format headers) ---


class _Job(ctypes.Structure):
    _fields_ = [
        ("uid", _i64),
        ("start_time_sec", _i64),
        ("start_time_nsec", _i64),
        ("end_time_sec", _i64),
        ("end_time_nsec", _i64),
        ("nprocs", _i64),
        ("jobid", _i64),
        ("metadata", ctypes.c_char * 1024),
    ]


class _MntInfo(ctypes.Structure):
    _fields_ = [("mnt_type", ctypes.c_char * 3015), ("mnt_path", ctypes.c_char * 3015)]


class _ModInfo(ctypes.Structure):
    _fields_ = [("name", _ptr), ("len", _int), ("ver", _int), ("idx", _int), ("partial_flag", _int)]


class _BaseRecord(ctypes.Structure):
    _fields_ = [("id", _u64), ("rank", _i64)]


class _NameRecord(ctypes.Structure):
    _fields_ = [("id", _u64), ("name", _ptr)]


_WIDTHS: dict[str, tuple[str, int, int]] = {
    "POSIX": ("darshan_posix_file", 69, 17),
    "MPI-IO": ("darshan_mpiio_file", 51, 17),
    "STDIO": ("darshan_stdio_file", 14, 15),
    "H5F": ("darshan_hdf5_file", 3, 5),
    "H5D": ("darshan_hdf5_dataset", 94, 17),
    "PNETCDF_FILE": ("darshan_pnetcdf_file", 9, 8),
    "PNETCDF_VAR": ("darshan_pnetcdf_var", 120, 17),
    "DFS": ("darshan_dfs_file", 52, 15),
    "DAOS": ("darshan_daos_object", 64, 15),
}
"""The generic modules' C record structure, integer and float counter counts."""
_FILE_REC = ("H5D", "PNETCDF_VAR")
"""Modules whose record carries ``file_rec_id`` (its file's record) after the base record."""
_UUIDS: list[tuple[str, Any]] = [("pool_uuid", ctypes.c_ubyte * 16), ("cont_uuid", ctypes.c_ubyte * 16)]
_TAILS: dict[str, list[tuple[str, Any]]] = {"DFS": _UUIDS, "DAOS": [*_UUIDS, ("oid_hi", _u64), ("oid_lo", _u64)]}


def _generic(mod: str) -> type[ctypes.Structure]:
    cname, counters, fcounters = _WIDTHS[mod]
    fields: list[tuple[str, Any]] = [("base_rec", _BaseRecord)]
    if mod in _FILE_REC:
        fields.append(("file_rec_id", _u64))
    fields += [("counters", _i64 * counters), ("fcounters", _f64 * fcounters), *_TAILS.get(mod, [])]
    return type(cname, (ctypes.Structure,), {"_fields_": fields})


_STRUCTS: dict[str, type[ctypes.Structure]] = {mod: _generic(mod) for mod in _WIDTHS}
"""The generic modules' record structures, by module name."""


_LUSTRE_COUNTERS = 7


class _LustreComponent(ctypes.Structure):
    _fields_ = [("counters", _i64 * _LUSTRE_COUNTERS), ("pool_name", ctypes.c_char * 16)]


class _LustreRecord(ctypes.Structure):
    _fields_ = [
        ("base_rec", _BaseRecord),
        ("num_comps", _i64),
        ("num_stripes", _i64),
        ("comps", ctypes.POINTER(_LustreComponent)),
        ("ost_ids", ctypes.POINTER(_i64)),
    ]


class _HeatmapRecord(ctypes.Structure):
    _fields_ = [
        ("base_rec", _BaseRecord),
        ("bin_width_seconds", _f64),
        ("nbins", _i64),
        ("write_bins", _ptr),
        ("read_bins", _ptr),
    ]


class _DxtFileRecord(ctypes.Structure):
    _fields_ = [
        ("base_rec", _BaseRecord),
        ("shared_record", _i64),
        ("hostname", ctypes.c_char * 64),
        ("write_count", _i64),
        ("read_count", _i64),
    ]


class _SegmentInfo(ctypes.Structure):
    """What a DXT record's trailing segments are; they are sent raw, as the parent's ``SEGMENT_DTYPE``."""

    _fields_ = [("offset", _i64), ("length", _i64), ("start_time", _f64), ("end_time", _f64)]


class _ApmpiPerfRecord(ctypes.Structure):
    _fields_ = [
        ("base_rec", _BaseRecord),
        ("counters", _u64 * 396),
        ("fcounters", _f64 * 222),
        ("fsynccounters", _f64 * 16),
        ("fglobalcounters", _f64 * 2),
        ("node_name", ctypes.c_char * 128),
    ]


_APMPI_NAMES = ("apmpi_counter_names", 396), ("apmpi_f_mpiop_totaltime_counter_names", 222)

_SIGNATURES: dict[str, tuple[list[Any], Any]] = {
    "darshan_log_open": ([ctypes.c_char_p], _ptr),
    "darshan_log_close": ([_ptr], None),
    "darshan_log_get_job": ([_ptr, ctypes.POINTER(_Job)], _int),
    "darshan_log_get_job_runtime": ([_ptr, _Job, ctypes.POINTER(_f64)], _int),
    "darshan_log_get_exe": ([_ptr, ctypes.c_char_p], _int),
    "darshan_log_get_mounts": ([_ptr, ctypes.POINTER(ctypes.POINTER(_MntInfo)), ctypes.POINTER(_int)], _int),
    "darshan_log_get_modules": ([_ptr, ctypes.POINTER(ctypes.POINTER(_ModInfo)), ctypes.POINTER(_int)], None),
    "darshan_log_get_name_records": (
        [_ptr, ctypes.POINTER(ctypes.POINTER(_NameRecord)), ctypes.POINTER(_int)],
        None,
    ),
    "darshan_log_get_record": ([_ptr, _int, ctypes.POINTER(_ptr)], _int),
    "darshan_log_get_lib_version": ([], ctypes.c_char_p),
    "darshan_free": ([_ptr], None),
}


class _Library:
    """The loaded library with its functions typed, and its counter name tables read once."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.dll = ctypes.CDLL(path)
        for fn, (argtypes, restype) in _SIGNATURES.items():
            func = getattr(self.dll, fn)
            func.argtypes = argtypes
            func.restype = restype
        self.open = self.dll.darshan_log_open
        self.close = self.dll.darshan_log_close
        self.get_record = self.dll.darshan_log_get_record
        self.free = self.dll.darshan_free
        # A table the library lacks is None: reading that module then fails, as PyDarshan's would.
        self.counter_names: dict[str, tuple[list[str], list[str]] | None] = {}
        for mod in _STRUCTS:
            ints, floats = self._table(mod, ""), self._table(mod, "f_")
            if ints is not None and floats is not None:
                _check_width(mod, ints, floats)
                self.counter_names[mod] = (ints, floats)
            else:
                self.counter_names[mod] = None
        self.lustre_names = self._table("LUSTRE_COMP", "")
        if self.lustre_names is not None and len(self.lustre_names) != _LUSTRE_COUNTERS:
            raise RuntimeError(f"{path}: LUSTRE_COMP has {len(self.lustre_names)} counters, expected 7")
        self.apmpi_names: tuple[list[str], list[str]] | None = None
        try:
            ints, floats = (self._fixed_table(var, n) for var, n in _APMPI_NAMES)
            self.apmpi_names = (ints, floats)
        except (ValueError, RuntimeError):
            pass  # reading APMPI then fails, as the cffi reader's look-up of the names did

    def _table_start(self, var: str) -> Any:
        """The library's ``char *var[]`` as a pointer to its first entry; ValueError when not exported."""
        first = ctypes.c_char_p.in_dll(self.dll, var)
        return ctypes.cast(ctypes.addressof(first), ctypes.POINTER(ctypes.c_char_p))

    def _table(self, mod: str, f: str) -> list[str] | None:
        """Counter names up to the ``<MOD>_<F>NUM_INDICES`` entry that ends every table (as PyDarshan reads them)."""
        mod = "MPIIO" if mod == "MPI-IO" else mod
        try:
            table = self._table_start(f"{mod.lower()}_{f.lower()}counter_names")
        except ValueError:
            return None
        end = f"{mod.upper()}_{f.upper()}NUM_INDICES"
        names: list[str] = []
        for i in range(_MAX_COUNTERS):
            raw = table[i]
            if raw is None:
                break
            name = raw.decode("utf-8")
            if name == end:
                return names
            names.append(name)
        raise RuntimeError(f"{self.path}: no {end} entry in its counter name table")

    def _fixed_table(self, var: str, n: int) -> list[str]:
        table = self._table_start(var)
        out: list[str] = []
        for i in range(n):
            raw = table[i]
            if raw is None:
                raise RuntimeError(f"{self.path}: {var} has fewer than {n} names")
            out.append(_text(raw))
        return out


_MAX_COUNTERS = 4096
"""Bound on the search for a table's end entry (the largest table, APMPI's, has a few hundred)."""


def _check_width(mod: str, ints: list[str], floats: list[str]) -> None:
    want = _WIDTHS[mod][1:]
    if (len(ints), len(floats)) != want:
        raise RuntimeError(
            f"{mod}: the library names {len(ints)}+{len(floats)} counters, the record layout has {want[0]}+{want[1]}"
            " (a libdarshan-util this reader was not written for)"
        )


def library_path() -> str:
    """libdarshan-util's file: in the wheel's ``darshan.libs`` folder beside the package, or inside the package.

    Found without importing ``darshan``; falls back on the dynamic loader's search (``libdarshan-util.so``).
    """
    spec = importlib.util.find_spec("darshan")
    folders: list[Path] = []
    if spec is not None and spec.submodule_search_locations:
        pkg = Path(next(iter(spec.submodule_search_locations)))
        folders = [pkg.parent / "darshan.libs", pkg, pkg / "lib"]
    for folder in folders:
        found = sorted(folder.glob("libdarshan-util*.so*"))
        if found:
            return str(found[0])
    return "libdarshan-util.so"


_LIB: _Library | None = None


def warm() -> None:
    """Load the library, type its functions and read its counter name tables, once per process.

    Call it in a parent before forking readers: each child then inherits the work (otherwise every
    log pays for it again).
    """
    _lib()


def _lib() -> _Library:
    global _LIB
    if _LIB is None:
        _LIB = _Library(library_path())
    return _LIB


def _text(raw: bytes) -> str:
    # Log strings are untrusted bytes; never let a bad byte stop the read.
    return raw.decode("utf-8", "replace")


def _cstring(addr: int | None) -> bytes:
    """The NUL-terminated string at ``addr``; a NULL pointer is an error (as cffi's ``ffi.string`` has it)."""
    if not addr:
        raise RuntimeError("cannot read a string at a NULL pointer")
    return ctypes.string_at(addr)


def _address(ptr: Any) -> int | None:
    """The address a ctypes pointer holds (None for NULL)."""
    value: int | None = ctypes.cast(ptr, _ptr).value
    return value


def read_log(path: str, include: frozenset[str]) -> Iterator[Message]:
    """Yield ("meta", dict) first, then ("module", dict) per module read."""
    lib = _lib()
    handle = lib.open(path.encode())
    if not handle:
        yield ("open_failed", None)
        return
    try:
        yield ("meta", _read_meta(lib, handle))
        modules = _modules(lib, handle)
        for name, info in modules.items():
            if name in OPTIONAL_MODULES and name not in include:
                continue
            if name in DXT_MODULES:
                yield from _stream_dxt(lib, handle, name, info["idx"])
                continue
            yield ("module", _read_module(lib, handle, name, info))
    finally:
        lib.close(handle)


def _modules(lib: _Library, handle: int) -> dict[str, dict[str, Any]]:
    mods = ctypes.POINTER(_ModInfo)()
    cnt = _int(0)
    lib.dll.darshan_log_get_modules(handle, ctypes.byref(mods), ctypes.byref(cnt))
    out: dict[str, dict[str, Any]] = {}
    for i in range(cnt.value):
        m = mods[i]
        out[_text(_cstring(m.name))] = {
            "len": int(m.len),
            "ver": int(m.ver),
            "idx": int(m.idx),
            "partial": bool(m.partial_flag),
        }
    lib.free(_address(mods))
    return out


def _read_meta(lib: _Library, handle: int) -> dict[str, Any]:
    dll = lib.dll
    job = _Job()
    job_ok = dll.darshan_log_get_job(handle, ctypes.byref(job)) >= 0
    runtime = _f64(0.0)
    dll.darshan_log_get_job_runtime(handle, job, ctypes.byref(runtime))
    metadata: dict[str, str] = {}
    if job_ok:
        for line in _text(job.metadata).split("\n"):
            if "=" in line:
                k, v = line.split("=", 1)
                metadata[k] = v

    exe = ctypes.create_string_buffer(4096)
    exe_ok = dll.darshan_log_get_exe(handle, exe) >= 0

    mounts: list[tuple[str, str]] = []
    mnts = ctypes.POINTER(_MntInfo)()
    cnt = _int(0)
    if dll.darshan_log_get_mounts(handle, ctypes.byref(mnts), ctypes.byref(cnt)) >= 0:
        for i in range(cnt.value):
            mounts.append((_text(mnts[i].mnt_path), _text(mnts[i].mnt_type)))
        lib.free(_address(mnts))

    names: dict[int, str] = {}
    nrecs = ctypes.POINTER(_NameRecord)()
    ncnt = _int(0)
    # This wrapper returns nothing; a corrupted name region shows up as records without names.
    dll.darshan_log_get_name_records(handle, ctypes.byref(nrecs), ctypes.byref(ncnt))
    names_ok = bool(nrecs)
    if names_ok:
        for i in range(ncnt.value):
            rec = nrecs[i]
            names[int(rec.id)] = _text(_cstring(rec.name))
            lib.free(rec.name)
        lib.free(_address(nrecs))

    return {
        "job_ok": job_ok,
        "exe_ok": exe_ok,
        "names_ok": names_ok,
        "uid": int(job.uid),
        "start_sec": int(job.start_time_sec),
        "start_nsec": int(job.start_time_nsec),
        "end_sec": int(job.end_time_sec),
        "end_nsec": int(job.end_time_nsec),
        "nprocs": int(job.nprocs),
        "jobid": int(job.jobid),
        "runtime": float(runtime.value),
        # The log format version: the first bytes of the library's log handle (PyDarshan reads it so too).
        "log_ver": _text(_cstring(handle)),
        "metadata": metadata,
        "exe": _text(exe.value),
        "mounts": mounts,
        "names": names,
        "modules": _modules(lib, handle),
        "lib_version": _text(dll.darshan_log_get_lib_version()),
    }


def _read_module(lib: _Library, handle: int, name: str, info: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {"name": name, "error": None}
    try:
        if name in GENERIC_MODULES:
            result.update(_read_generic(lib, handle, name, info["idx"]))
        elif name == "LUSTRE":
            result.update(_read_lustre(lib, handle, info["idx"]))
        elif name == "HEATMAP":
            result.update(_read_heatmap(lib, handle, info["idx"]))
        elif name == "APMPI":
            result.update(_read_apmpi(lib, handle, info["idx"]))
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


def _records(lib: _Library, handle: int, idx: int) -> Iterator[int]:
    """Yield the address of each record the library reads; raise _RecordError when it reports corruption.

    The record is freed when the caller asks for the next one: copy what is kept.
    """
    buf = _ptr(None)
    count = 0
    get_record, free = lib.get_record, lib.free
    while True:
        r = get_record(handle, idx, ctypes.byref(buf))
        if r == 0:
            return
        if r < 0:
            raise _RecordError(f"corrupted record data after {count} records", {})
        try:
            yield buf.value or 0
        finally:
            free(buf)
            buf.value = None
        count += 1


def _field_dtype(mod: str) -> np.dtype[Any]:
    """A numpy view of a generic record: the fields this reader keeps, at their C offsets."""
    struct = _STRUCTS[mod]
    _, ncounters, nfcounters = _WIDTHS[mod]
    base = struct.base_rec.offset
    names = ["id", "rank", "counters", "fcounters"]
    formats: list[Any] = [np.uint64, np.int64, (np.int64, ncounters), (np.float64, nfcounters)]
    offsets = [
        base + _BaseRecord.id.offset,
        base + _BaseRecord.rank.offset,
        struct.counters.offset,
        struct.fcounters.offset,
    ]
    if mod in _FILE_REC:
        names.append("file_rec_id")
        formats.append(np.uint64)
        offsets.append(struct.file_rec_id.offset)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": ctypes.sizeof(struct)})


def _read_generic(lib: _Library, handle: int, name: str, idx: int) -> dict[str, Any]:
    tables = lib.counter_names[name]
    if tables is None:
        raise TypeError(f"libdarshan-util has no counter names for {name}")
    cnames, fnames = list(tables[0]), list(tables[1])
    struct = _STRUCTS[name]
    size = ctypes.sizeof(struct)
    dtype = _field_dtype(name)
    has_file_rec = name in _FILE_REC
    raws: list[bytes] = []

    def payload() -> dict[str, Any]:
        recs = np.frombuffer(b"".join(raws), dtype=dtype)
        counters = np.ascontiguousarray(recs["counters"])
        fcounters = np.ascontiguousarray(recs["fcounters"])
        # As numpy.frombuffer(bytes) gave them before: read-only.
        counters.flags.writeable = False
        fcounters.flags.writeable = False
        out: dict[str, Any] = {
            "id": recs["id"].copy(),
            "rank": recs["rank"].copy(),
            "counters": counters,
            "fcounters": fcounters,
            "counter_names": cnames,
            "fcounter_names": fnames,
        }
        if has_file_rec:
            out["file_rec_id"] = recs["file_rec_id"].copy()
        return out

    string_at = ctypes.string_at
    try:
        for addr in _records(lib, handle, idx):
            raws.append(string_at(addr, size))
    except _RecordError as exc:
        raise _RecordError(str(exc), payload()) from None
    return payload()


def _read_lustre(lib: _Library, handle: int, idx: int) -> dict[str, Any]:
    if lib.lustre_names is None:
        raise TypeError("libdarshan-util has no counter names for LUSTRE_COMP")
    comp_names = list(lib.lustre_names)
    rows: list[dict[str, Any]] = []

    def payload() -> dict[str, Any]:
        return {"components": rows, "counter_names": comp_names}

    try:
        for addr in _records(lib, handle, idx):
            rec = _LustreRecord.from_address(addr)
            ost_ids = rec.ost_ids
            pos = 0
            for i in range(rec.num_comps):
                comp = rec.comps[i]
                counters = np.frombuffer(comp.counters, dtype=np.int64).copy()
                values = dict(zip(comp_names, counters.tolist(), strict=True))
                count = max(int(values.get("LUSTRE_COMP_STRIPE_COUNT", 0)), 0)
                osts = ost_ids[pos : pos + count] if count else []
                pos += count
                rows.append(
                    {
                        "id": int(rec.base_rec.id),
                        "rank": int(rec.base_rec.rank),
                        "component": i,
                        "counters": counters,
                        "pool_name": _text(comp.pool_name),
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


def _stream_dxt(lib: _Library, handle: int, name: str, idx: int) -> Iterator[Message]:
    """Yield ("dxt_chunk", ...) messages of whole records, then the module's closing message.

    Segments (``struct segment_info``, as the library lays them after each record's header) are
    copied once, from the library's record buffer into the chunk that is sent.
    """
    from iodiag.ingest.isolation import RawPayload

    seg_size = ctypes.sizeof(_SegmentInfo)
    head_size = ctypes.sizeof(_DxtFileRecord)
    capacity = DXT_CHUNK_SEGMENTS * seg_size
    chunk = bytearray(capacity)
    # Where the next segments go: the address of chunk's storage, which stays put (chunk never grows).
    dest = ctypes.addressof((ctypes.c_char * capacity).from_buffer(chunk))
    used = 0
    recs: list[tuple[int, int, str, int, int]] = []
    error: str | None = None

    def flush() -> Message:
        nonlocal chunk, dest, used, recs
        msg: Message = ("dxt_chunk", {"name": name, "records": recs, "raw": RawPayload(memoryview(chunk)[:used])})
        chunk = bytearray(capacity)
        dest = ctypes.addressof((ctypes.c_char * capacity).from_buffer(chunk))
        used, recs = 0, []
        return msg

    try:
        for addr in _records(lib, handle, idx):
            rec = _DxtFileRecord.from_address(addr)
            w, r = int(rec.write_count), int(rec.read_count)
            size = seg_size * (w + r)
            src = addr + head_size
            if used + size > capacity and recs:
                yield flush()
            head = (int(rec.base_rec.id), int(rec.base_rec.rank), _text(rec.hostname), w, r)
            if size > capacity:  # one record bigger than a chunk travels alone
                yield ("dxt_chunk", {"name": name, "records": [head], "raw": RawPayload(ctypes.string_at(src, size))})
                continue
            if size < 0:
                raise ValueError("negative size")  # corrupt counts: the read stops here, as cffi's memmove did
            ctypes.memmove(dest + used, src, size)
            used += size
            recs.append(head)
    except _RecordError as exc:
        error = str(exc)
    if recs:
        yield flush()
    yield ("module", {"name": name, "error": error, "trace": True})


def _read_heatmap(lib: _Library, handle: int, idx: int) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    try:
        for addr in _records(lib, handle, idx):
            rec = _HeatmapRecord.from_address(addr)
            nbins = int(rec.nbins)
            # A negative count read one bin through cffi (its buffer's default size): keep that.
            size = 8 * (nbins if nbins >= 0 else 1)
            rows.append(
                {
                    "id": int(rec.base_rec.id),
                    "rank": int(rec.base_rec.rank),
                    "bin_width": float(rec.bin_width_seconds),
                    "write_bins": np.frombuffer(ctypes.string_at(rec.write_bins or 0, size), dtype=np.int64).copy(),
                    "read_bins": np.frombuffer(ctypes.string_at(rec.read_bins or 0, size), dtype=np.int64).copy(),
                }
            )
    except _RecordError as exc:
        raise _RecordError(str(exc), {"rows": rows}) from None
    return {"rows": rows}


def _read_apmpi(lib: _Library, handle: int, idx: int) -> dict[str, Any]:
    """APMPI: a header record, then one record per rank with MPI call counters and the node name."""
    if lib.apmpi_names is None:
        raise TypeError("libdarshan-util has no APMPI counter names")
    cnames, fnames = list(lib.apmpi_names[0]), list(lib.apmpi_names[1])
    counters, fcounters = _ApmpiPerfRecord.counters, _ApmpiPerfRecord.fcounters
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
        for i, addr in enumerate(_records(lib, handle, idx)):
            if i == 0:
                continue  # the header record: job-wide variances only
            rec = _ApmpiPerfRecord.from_address(addr)
            ranks.append(int(rec.base_rec.rank))
            nodes.append(_text(rec.node_name))
            cbufs.append(ctypes.string_at(addr + counters.offset, counters.size))
            fbufs.append(ctypes.string_at(addr + fcounters.offset, fcounters.size))
    except _RecordError as exc:
        raise _RecordError(str(exc), payload()) from None
    return payload()
