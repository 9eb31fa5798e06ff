"""The log-writing half of libdarshan-util, which PyDarshan's bindings do not declare."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

# Module versions the bundled library writes and reads without conversion. A log that states an
# older version gets up-converted on read, which would scramble records laid out in the current
# structs; tests/synth/test_synth_writer.py round-trips every module to keep this table honest.
MODULE_VERSIONS = {
    "POSIX": 4,
    "MPI-IO": 3,
    "H5F": 3,
    "H5D": 2,
    "PNETCDF_FILE": 3,
    "PNETCDF_VAR": 1,
    "LUSTRE": 2,
    "STDIO": 2,
    "DXT_POSIX": 1,
    "DXT_MPIIO": 2,
    "HEATMAP": 1,
    "DFS": 1,
}

_CDEF = """
typedef struct UT_hash_handle {
   void *tbl; void *prev; void *next; void *hh_prev; void *hh_next; void *key; unsigned keylen; unsigned hashv;
} UT_hash_handle;
struct iodiag_name_record { darshan_record_id id; char name[1]; };
struct darshan_name_record_ref { struct iodiag_name_record *name_record; UT_hash_handle hlink; };
void* darshan_log_create(char *name, int comp_type, int partial_flag);
int darshan_log_put_job(void *fd, struct darshan_job *job);
int darshan_log_put_exe(void *fd, char *buf);
int darshan_log_put_mounts(void *fd, struct darshan_mnt_info *mnt_data_array, int count);
int darshan_log_put_namehash(void *fd, struct darshan_name_record_ref *hash);
int darshan_log_put_mod(void *fd, int mod_id, void *mod_buf, int mod_buf_sz, int ver);
void darshan_log_close(void *fd);
"""


@functools.cache
def library() -> tuple[Any, Any, Any]:
    """(ffi, lib, backend): an FFI that extends PyDarshan's record structs with the writer calls."""
    import darshan.backend.cffi_backend as be
    from cffi import FFI

    ffi = FFI()
    ffi.include(be.ffi)
    ffi.cdef(_CDEF)
    libs = Path(be.__file__).resolve().parents[2] / "darshan.libs"
    candidates = sorted(libs.glob("libdarshan-util*"))
    if not candidates:
        raise RuntimeError(f"libdarshan-util not found next to the darshan package ({libs})")
    return ffi, ffi.dlopen(str(candidates[0])), be
