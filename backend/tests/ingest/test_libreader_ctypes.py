"""The ctypes reader (``iodiag.ingest.libreader``) against the cffi reader it replaced.

Every real log (the shared set and the darshan wheel's), with every optional module: the two
readers must yield the same messages, key for key, with the same dtypes and values, and DXT
chunks byte for byte. The cffi reader is kept in ``_cffi_reference_reader`` for this test only.
"""

from __future__ import annotations

import ctypes
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iodiag.ingest import libreader
from iodiag.ingest.isolation import RawPayload, run_isolated
from iodiag.synth._lib import MODULE_VERSIONS
from tests.conftest import BACKEND, all_logs, log_id, shared_log
from tests.ingest import _cffi_reference_reader as reference

INCLUDE = frozenset(libreader.OPTIONAL_MODULES)
MAX_COMPARED_SEGMENTS = 4_000_000
"""Above this many DXT segments in one log, only the trace chunks' record lists are compared (the
raw bytes too would hold both readers' whole traces in memory); none of today's logs comes close."""
SEGMENT = 32

MPI_IO_TEST = shared_log(
    "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
)
COVERAGE_LOGS = [
    MPI_IO_TEST,  # POSIX, MPI-IO, STDIO, LUSTRE, DXT_POSIX, DXT_MPIIO
    shared_log("darshan-logs/apmpi/darshan-apmpi-2nodes-64mpi.darshan"),
    shared_log("darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan"),  # HEATMAP, PNETCDF
    shared_log("darshan-logs/hdf5_diagonal_write_only/hdf5_diagonal_write_bytes_range_dxt.darshan"),  # H5F, H5D
]


def _same(a: Any, b: Any, where: str, raw_bytes: bool = True) -> None:
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} != {list(b)}"
        for k in a:
            _same(a[k], b[k], f"{where}.{k}", raw_bytes)
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), f"{where}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]", raw_bytes)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype, f"{where}: dtype {a.dtype} != {b.dtype}"
        assert a.shape == b.shape, f"{where}: shape {a.shape} != {b.shape}"
        assert a.flags.c_contiguous == b.flags.c_contiguous, f"{where}: contiguity differs"
        assert a.flags.writeable == b.flags.writeable, f"{where}: writeable differs"
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), f"{where}: values differ"
    elif isinstance(a, RawPayload | bytearray):
        da, db = (a.data, b.data) if isinstance(a, RawPayload) and isinstance(b, RawPayload) else (a, b)
        assert len(da) == len(db), f"{where}: {len(da)} raw bytes != {len(db)}"
        if raw_bytes:
            assert bytes(da) == bytes(db), f"{where}: raw bytes differ"
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), f"{where}: nan != {b!r}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _announced_segments(messages: list[tuple[str, Any]]) -> int:
    """DXT segments in the messages (a chunk's raw part is a RawPayload here, bytes once through a pipe)."""
    raws = [p["raw"] for kind, p in messages if kind == "dxt_chunk"]
    return sum(len(r.data if isinstance(r, RawPayload) else r) for r in raws) // SEGMENT


def _modules(path: Path) -> set[str]:
    """The log's modules, from its first message alone (no module's records are read)."""
    kind, meta = next(iter(libreader.read_log(str(path), INCLUDE)))
    return set(meta["modules"]) if kind == "meta" else set()


def _isolated(read_log: Any, path: Path) -> list[tuple[str, Any]]:
    outcome = run_isolated(lambda: read_log(str(path), INCLUDE), 60.0, 2 << 30)
    assert not outcome.crashed, outcome.stderr
    return outcome.messages


@pytest.mark.parametrize("path", all_logs(), ids=log_id)
def test_same_messages_as_cffi_reader(path: Path) -> None:
    if "APMPI" in _modules(path):
        # libdarshan-util tells APMPI's header record from the others by a static flag, set once per
        # process: only the first APMPI module a process reads comes out right. Each reader therefore
        # reads such a log in a child of its own (as the loader runs it), and this process never does.
        new = _isolated(libreader.read_log, path)
        old = _isolated(reference.read_log, path)
    else:
        new = list(libreader.read_log(str(path), INCLUDE))
        old = list(reference.read_log(str(path), INCLUDE))
    assert [k for k, _ in new] == [k for k, _ in old]
    assert new[0][0] in ("meta", "open_failed")
    raw_bytes = _announced_segments(old) <= MAX_COMPARED_SEGMENTS
    for i, (a, b) in enumerate(zip(new, old, strict=True)):
        _same(a, b, f"{path.name}#{i}:{a[0]}", raw_bytes)


def test_small_dxt_chunks_are_cut_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 5 segments: records are packed, flushed, and sent alone when bigger than a chunk."""
    monkeypatch.setattr(libreader, "DXT_CHUNK_SEGMENTS", 5)
    monkeypatch.setattr(reference, "DXT_CHUNK_SEGMENTS", 5)
    traced = [p for p in all_logs() if {"DXT_POSIX", "DXT_MPIIO"} & _modules(p) and "APMPI" not in _modules(p)]
    assert len(traced) >= 10
    for path in traced:
        new = [m for m in libreader.read_log(str(path), INCLUDE) if m[0] == "dxt_chunk"]
        old = [m for m in reference.read_log(str(path), INCLUDE) if m[0] == "dxt_chunk"]
        assert len(new) > 1
        _same(new, old, path.name)


def _outcome(read_log: Any, path: Path) -> tuple[list[tuple[str, Any]], int | None, int | None]:
    o = run_isolated(lambda: read_log(str(path), INCLUDE), 20.0, 2 << 30)
    return o.messages, o.exit_code, o.signal


def _equal(a: Any, b: Any) -> bool:
    try:
        _same(a, b, "")
    except AssertionError:
        return False
    return True


DAMAGED = [MPI_IO_TEST, shared_log("darshan-logs/hdf5_diagonal_write_only/hdf5_file_opens_only.darshan")]


@pytest.mark.parametrize("log", DAMAGED, ids=log_id)
def test_damaged_logs_read_the_same(log: Path, tmp_path: Path) -> None:
    """Cut short and with flipped bytes: the same messages up to where the library gave up, the same end.

    The library may read uninitialized memory or corrupt its heap on such input, so a case counts only
    where the cffi reader ended cleanly, twice in the same way."""
    data = log.read_bytes()
    rng = np.random.default_rng(7)
    cases: list[bytes] = [data[:cut] for cut in np.linspace(len(data) // 3, len(data) - 1, 8).astype(int)]
    for _ in range(8):
        flipped = bytearray(data)
        for at in rng.integers(1024, len(data), 4):
            flipped[at] ^= 0xFF
        cases.append(bytes(flipped))
    compared = 0
    for i, body in enumerate(cases):
        path = tmp_path / f"case{i}.darshan"
        path.write_bytes(body)
        old = _outcome(reference.read_log, path)
        if old[1:] != (0, None) or not _equal(old, _outcome(reference.read_log, path)):
            continue  # a crash: the library had gone astray in memory, which differs with the heap's layout
        new = _outcome(libreader.read_log, path)
        _same(new, old, f"case {i}")
        compared += 1
    print(f"{log.name}: {compared} of {len(cases)} damaged cases compared")
    assert compared >= len(cases) // 2


def _write_generic_log(path: Path) -> None:
    """A log with random records for every generic module, DFS and DAOS included (no real log has those)."""
    from iodiag.synth._lib import library
    from iodiag.synth.writer import JobInfo, put_job, put_names

    ffi, lib, be = library()
    rng = np.random.default_rng(11)
    fd = lib.darshan_log_create(str(path).encode(), 0, 0)
    assert fd != ffi.NULL
    keep: list[Any] = []
    try:
        put_job(ffi, lib, fd, JobInfo(nprocs=4))
        put_names(ffi, lib, fd, {1: "/a", 2: "/b"}, keep)
        # Written in module id order, as the library requires; every byte random (NaNs included).
        for mod in sorted(libreader.GENERIC_MODULES, key=be.mod_name_to_idx):
            size = ffi.sizeof(be._structdefs[mod].removesuffix(" **"))
            ver = {"DAOS": 1}.get(mod) or MODULE_VERSIONS[mod]
            at = ffi.offsetof(be._structdefs[mod].removesuffix(" **"), "fcounters")
            for _ in range(5):
                body = bytearray(rng.bytes(size))
                body[at : at + 16] = np.array([np.nan, -np.inf]).tobytes()
                rec = ffi.new("char[]", bytes(body))
                rc = lib.darshan_log_put_mod(fd, be.mod_name_to_idx(mod), rec, size, ver)
                assert rc == 0, mod
    finally:
        lib.darshan_log_close(fd)


def test_every_generic_module_reads_the_same(tmp_path: Path) -> None:
    path = tmp_path / "generic.darshan"
    _write_generic_log(path)
    new = list(libreader.read_log(str(path), INCLUDE))
    old = list(reference.read_log(str(path), INCLUDE))
    read = {p["name"]: p for kind, p in new if kind == "module"}
    assert set(read) == set(libreader.GENERIC_MODULES)
    assert all(p["error"] is None and len(p["id"]) == 5 for p in read.values())
    assert all(np.isnan(p["fcounters"][:, 0]).all() for p in read.values())
    assert "file_rec_id" in read["H5D"] and "file_rec_id" in read["PNETCDF_VAR"]
    _same(new, old, "generic")


def test_missing_file_fails_to_open(tmp_path: Path) -> None:
    missing = str(tmp_path / "nothing.darshan")
    assert list(libreader.read_log(missing, INCLUDE)) == [("open_failed", None)]
    assert list(reference.read_log(missing, INCLUDE)) == [("open_failed", None)]


def test_record_layouts_match_cffi() -> None:
    """Every structure the reader overlays on the library's buffers has cffi's size and field offsets."""
    from darshan.backend.cffi_backend import ffi

    named: dict[str, type[ctypes.Structure]] = {
        "struct darshan_job": libreader._Job,
        "struct darshan_mnt_info": libreader._MntInfo,
        "struct darshan_mod_info": libreader._ModInfo,
        "struct darshan_base_record": libreader._BaseRecord,
        "struct darshan_name_record": libreader._NameRecord,
        "struct darshan_lustre_component": libreader._LustreComponent,
        "struct darshan_lustre_record": libreader._LustreRecord,
        "struct darshan_heatmap_record": libreader._HeatmapRecord,
        "struct dxt_file_record": libreader._DxtFileRecord,
        "struct segment_info": libreader._SegmentInfo,
        "struct darshan_apmpi_perf_record": libreader._ApmpiPerfRecord,
    }
    for mod in libreader.GENERIC_MODULES:
        named[_cffi_struct(mod)] = libreader._STRUCTS[mod]
    for cname, struct in named.items():
        assert ctypes.sizeof(struct) == ffi.sizeof(cname), cname
        for field, _ in struct._fields_:
            assert getattr(struct, field).offset == ffi.offsetof(cname, field), f"{cname}.{field}"


def _cffi_struct(mod: str) -> str:
    import darshan.backend.cffi_backend as be

    name: str = be._structdefs[mod]
    return name.removesuffix(" **")


def test_counter_names_match_pydarshan() -> None:
    import darshan.backend.cffi_backend as be

    libreader.warm()
    lib = libreader._lib()
    for mod in libreader.GENERIC_MODULES:
        assert lib.counter_names[mod] == (be.counter_names(mod), be.fcounter_names(mod)), mod
    assert lib.lustre_names == be.counter_names("LUSTRE_COMP")


def test_isolated_child_reads_the_same() -> None:
    """Through the forked reader, as the loader runs it: the messages survive the pipe unchanged."""
    libreader.warm()
    outcome = run_isolated(lambda: libreader.read_log(str(MPI_IO_TEST), INCLUDE), 60.0, 2 << 30)
    assert not outcome.crashed, outcome.stderr
    old = list(reference.read_log(str(MPI_IO_TEST), INCLUDE))
    assert [k for k, _ in outcome.messages] == [k for k, _ in old]
    for (_, a), (_, b) in zip(outcome.messages, old, strict=True):
        if isinstance(b, dict) and isinstance(b.get("raw"), RawPayload):
            assert bytes(a.pop("raw")) == bytes(b["raw"].data)
            assert a.pop("raw_bytes") == len(b["raw"].data)
            b = {k: v for k, v in b.items() if k != "raw"}
        assert list(a) == list(b)


_NO_HEAVY_IMPORTS = """
import json, sys, types
from pathlib import Path
# Import libreader without iodiag.ingest's __init__ (which imports the loader, and so pandas): what is
# checked is what the reader itself pulls in.
pkg = types.ModuleType("iodiag.ingest")
pkg.__path__ = [str(Path(sys.argv[1]) / "iodiag" / "ingest")]
sys.modules["iodiag.ingest"] = pkg
from iodiag.ingest import libreader
libreader.warm()
kinds = []
for log in sys.argv[2:]:
    for kind, payload in libreader.read_log(log, frozenset(libreader.OPTIONAL_MODULES)):
        kinds.append(payload.get("name", kind) if isinstance(payload, dict) else kind)
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("darshan", "pandas", "cffi", "_cffi_backend"))
print(json.dumps({"heavy": heavy, "kinds": sorted(set(kinds))}))
"""


def test_reader_never_imports_darshan_pandas_or_cffi() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _NO_HEAVY_IMPORTS, str(BACKEND), *map(str, COVERAGE_LOGS)],
        cwd=BACKEND,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out = json.loads(proc.stdout)
    assert out["heavy"] == []
    # The logs did exercise every kind of module the reader handles.
    assert {"meta", "POSIX", "MPI-IO", "LUSTRE", "DXT_POSIX", "DXT_MPIIO", "HEATMAP", "APMPI", "H5D"} <= set(
        out["kinds"]
    )
