"""The calls Darshan counted in each module, summed into one :class:`OpCounts`.

"How many stat calls?", "how many seeks on index.bin?", "how many read/write switches?" are answered from
these counters as Darshan wrote them, never from a finding's prose.
"""

from __future__ import annotations

import numpy as np

from iodiag.analysis.models import OpCounts
from iodiag.ingest.table import Table

# Darshan's request-size bins under 1 MiB: what "small" requests means here, as in Drishti's checks
SMALL_BINS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M")

# Which counters add up to each kind of call, per module (Darshan's names; a module lacking one counts 0).
CALL_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "POSIX": {
        "opens": ("POSIX_OPENS",),
        "reads": ("POSIX_READS",),
        "writes": ("POSIX_WRITES",),
        "stats": ("POSIX_STATS",),
        "seeks": ("POSIX_SEEKS",),
        "syncs": ("POSIX_FSYNCS",),
        "fdatasyncs": ("POSIX_FDSYNCS",),
        "rw_switches": ("POSIX_RW_SWITCHES",),
        "mmaps": ("POSIX_MMAPS",),
        "consec_reads": ("POSIX_CONSEC_READS",),
        "seq_reads": ("POSIX_SEQ_READS",),
        "consec_writes": ("POSIX_CONSEC_WRITES",),
        "seq_writes": ("POSIX_SEQ_WRITES",),
        "file_not_aligned": ("POSIX_FILE_NOT_ALIGNED",),
        "mem_not_aligned": ("POSIX_MEM_NOT_ALIGNED",),
        "small_reads": tuple(f"POSIX_SIZE_READ_{b}" for b in SMALL_BINS),
        "small_writes": tuple(f"POSIX_SIZE_WRITE_{b}" for b in SMALL_BINS),
    },
    "MPI-IO": {
        "opens": ("MPIIO_INDEP_OPENS", "MPIIO_COLL_OPENS"),
        "reads": ("MPIIO_INDEP_READS", "MPIIO_COLL_READS", "MPIIO_SPLIT_READS", "MPIIO_NB_READS"),
        "writes": ("MPIIO_INDEP_WRITES", "MPIIO_COLL_WRITES", "MPIIO_SPLIT_WRITES", "MPIIO_NB_WRITES"),
        "syncs": ("MPIIO_SYNCS",),
        "rw_switches": ("MPIIO_RW_SWITCHES",),
        "small_reads": tuple(f"MPIIO_SIZE_READ_AGG_{b}" for b in SMALL_BINS),
        "small_writes": tuple(f"MPIIO_SIZE_WRITE_AGG_{b}" for b in SMALL_BINS),
    },
    "STDIO": {
        "opens": ("STDIO_OPENS", "STDIO_FDOPENS"),
        "reads": ("STDIO_READS",),
        "writes": ("STDIO_WRITES",),
        "seeks": ("STDIO_SEEKS",),
        "flushes": ("STDIO_FLUSHES",),
    },
    "DFS": {
        "opens": ("DFS_OPENS", "DFS_GLOBAL_OPENS"),
        "reads": ("DFS_READS", "DFS_READXS", "DFS_NB_READS"),
        "writes": ("DFS_WRITES", "DFS_WRITEXS", "DFS_NB_WRITES"),
        "stats": ("DFS_STATS",),
        "rw_switches": ("DFS_RW_SWITCHES",),
    },
    "DAOS": {
        "opens": ("DAOS_OBJ_OPENS", "DAOS_ARRAY_OPENS", "DAOS_KV_OPENS"),
        "reads": ("DAOS_ARRAY_READS", "DAOS_OBJ_FETCHES", "DAOS_KV_GETS"),
        "writes": ("DAOS_ARRAY_WRITES", "DAOS_OBJ_UPDATES", "DAOS_KV_PUTS"),
        "stats": ("DAOS_ARRAY_STATS",),
        "rw_switches": ("DAOS_RW_SWITCHES",),
    },
    "H5D": {
        "opens": ("H5D_OPENS",),
        "reads": ("H5D_READS",),
        "writes": ("H5D_WRITES",),
        "flushes": ("H5D_FLUSHES",),
        "rw_switches": ("H5D_RW_SWITCHES",),
    },
    "H5F": {"opens": ("H5F_OPENS",), "flushes": ("H5F_FLUSHES",)},
    "PNETCDF_VAR": {
        "opens": ("PNETCDF_VAR_OPENS",),
        "reads": (
            "PNETCDF_VAR_INDEP_READS",
            "PNETCDF_VAR_COLL_READS",
            "PNETCDF_VAR_NB_READS",
        ),
        "writes": (
            "PNETCDF_VAR_INDEP_WRITES",
            "PNETCDF_VAR_COLL_WRITES",
            "PNETCDF_VAR_NB_WRITES",
        ),
        "rw_switches": ("PNETCDF_VAR_RW_SWITCHES",),
    },
    "PNETCDF_FILE": {"opens": ("PNETCDF_FILE_OPENS",), "syncs": ("PNETCDF_FILE_SYNCS",)},
}


def call_columns(module: str, records: Table) -> dict[str, np.ndarray]:
    """Each kind of call as one int64 column over the records (negative "not recorded" counters as 0)."""
    n = len(records)
    out: dict[str, np.ndarray] = {}
    for kind, cols in CALL_COLUMNS.get(module, {}).items():
        total = np.zeros(n, dtype=np.int64)
        for c in cols:
            col = records.get(c)
            if col is not None:
                total += np.maximum(col, 0).astype(np.int64)
        out[kind] = total
    return out


def module_calls(module: str, records: Table) -> OpCounts:
    """The module's calls over all of its records."""
    return OpCounts(**{k: int(v.sum()) for k, v in call_columns(module, records).items()})
