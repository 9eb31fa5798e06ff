"""Build small, hand-made ``JobProfile``s for check tests.

Records are plain dicts keyed by Darshan's own counter names; every counter the
real reader would produce is present and zero unless given, with the dtypes the
reader uses (uint64 ids, int64 ranks and counters, float64 fcounters), so checks
see the same frame shapes as on a real log.

    profile = make_profile(
        {"POSIX": [{"id": 1, "rank": 0, "POSIX_READS": 10, "POSIX_F_READ_TIME": 2.0}]},
        nprocs=4, runtime_s=100.0,
    )

LUSTRE records take the reader's column names (``stripe_size``, ``stripe_count``,
``osts`` ...; see ``LUSTRE_COLUMNS``). A typo in a counter name raises KeyError
instead of silently testing a zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from functools import cache
from types import MappingProxyType
from typing import Any

import numpy as np
from darshan.backend import cffi_backend as be

from iodiag.ingest import JobMeta, JobProfile, ModuleInfo, Mount
from iodiag.ingest.table import Table

MiB = 1 << 20
GiB = 1 << 30

GENERIC = ("POSIX", "MPI-IO", "STDIO", "H5F", "H5D", "PNETCDF_FILE", "PNETCDF_VAR")
WITH_FILE_REC = ("H5D", "PNETCDF_VAR")


@cache
def counter_columns(module: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(integer counter names, float counter names) of a module, as the reader names its columns."""
    return tuple(be.counter_names(module)), tuple(be.fcounter_names(module))


@cache
def lustre_component_columns() -> tuple[str, ...]:
    # Same derivation as the reader: LUSTRE_COMP_STRIPE_SIZE -> stripe_size, ...
    return tuple(n.removeprefix("LUSTRE_COMP_").lower() for n in be.counter_names("LUSTRE_COMP"))


LUSTRE_DEFAULTS: dict[str, Any] = {
    "component": 0,
    "stripe_size": MiB,
    "stripe_pattern": 0,
    "flags": 0,
    "ext_start": 0,
    "ext_end": -1,
    "mirror_id": 0,
}
LUSTRE_COLUMNS = ("id", "rank", "component", *lustre_component_columns(), "pool_name", "osts")


def generic_table(module: str, records: Sequence[Mapping[str, Any]]) -> Table:
    ints, floats = counter_columns(module)
    known = {"id", "rank", *ints, *floats} | ({"file_rec_id"} if module in WITH_FILE_REC else set())
    for i, r in enumerate(records):
        bad = sorted(set(r) - known)
        if bad:
            raise KeyError(f"{module} record {i}: unknown counters {bad}")
    cols: dict[str, Any] = {
        "id": np.array([int(r.get("id", i + 1)) for i, r in enumerate(records)], dtype=np.uint64),
        "rank": np.array([int(r.get("rank", 0)) for r in records], dtype=np.int64),
    }
    if module in WITH_FILE_REC:
        cols["file_rec_id"] = np.array([int(r.get("file_rec_id", 0)) for r in records], dtype=np.uint64)
    for name in ints:
        cols[name] = np.array([int(r.get(name, 0)) for r in records], dtype=np.int64)
    for name in floats:
        cols[name] = np.array([float(r.get(name, 0.0)) for r in records], dtype=np.float64)
    return Table(cols, len(records))


def lustre_table(records: Sequence[Mapping[str, Any]]) -> Table:
    comp = lustre_component_columns()
    known = set(LUSTRE_COLUMNS)
    rows = []
    for i, r in enumerate(records):
        bad = sorted(set(r) - known)
        if bad:
            raise KeyError(f"LUSTRE record {i}: unknown columns {bad}")
        osts = tuple(int(o) for o in r.get("osts", (0,)))
        row: dict[str, Any] = {"id": int(r.get("id", i + 1)), "rank": int(r.get("rank", -1))}
        for c in ("component", *comp):
            row[c] = int(r.get(c, LUSTRE_DEFAULTS.get(c, len(osts) if c == "stripe_count" else 0)))
        row["pool_name"] = str(r.get("pool_name", ""))
        row["osts"] = osts
        rows.append(row)
    pools = np.empty(len(rows), dtype=object)
    pools[:] = [r["pool_name"] for r in rows]
    osts = np.empty(len(rows), dtype=object)
    osts[:] = [r["osts"] for r in rows]
    return Table(
        {
            "id": np.array([r["id"] for r in rows], dtype=np.uint64),
            "rank": np.array([r["rank"] for r in rows], dtype=np.int64),
            **{c: np.array([r[c] for r in rows], dtype=np.int64) for c in ("component", *comp)},
            "pool_name": pools,
            "osts": osts,
        },
        len(rows),
    )


def make_profile(
    records: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    *,
    nprocs: int = 4,
    runtime_s: float = 100.0,
    nodes: int | None = None,
    hints: Mapping[str, str] | None = None,
    names: Mapping[int, str] | None = None,
    mounts: Iterable[tuple[str, str]] = (("/scratch", "lustre"),),
    modules: Mapping[str, Mapping[str, Any]] | None = None,
    problems: Sequence[str] = (),
    darshan_version: str = "3.4.4",
) -> JobProfile:
    """A profile with one table per module in ``records``.

    ``modules`` overrides ModuleInfo fields per module (``partial``, ``read_error``,
    ``records``, ``loaded`` ...); a module named there without records is listed
    in the log's module map but has no table (like a module that was not read).
    """
    records = records or {}
    tables: dict[str, Table] = {}
    for module, recs in records.items():
        if module == "LUSTRE":
            tables[module] = lustre_table(recs)
        elif module in GENERIC:
            tables[module] = generic_table(module, recs)
        else:
            raise KeyError(f"make_profile does not build {module} tables")

    infos: dict[str, ModuleInfo] = {}
    for module, table in tables.items():
        count = len(np.unique(table["id"])) if module == "LUSTRE" else len(table)
        infos[module] = ModuleInfo(name=module, version=1, compressed_bytes=0, loaded=True, records=count)
    for module, fields in (modules or {}).items():
        base = infos.get(module) or ModuleInfo(name=module, version=1, compressed_bytes=0)
        infos[module] = base.model_copy(update=dict(fields))

    ids = sorted({int(i) for t in tables.values() for i in t["id"]})
    all_names = {i: f"/scratch/job/file{i}.dat" for i in ids}
    all_names.update({int(k): v for k, v in (names or {}).items()})

    start = datetime(2024, 1, 1, tzinfo=UTC)
    meta = JobMeta(
        jobid=42,
        uid=1000,
        nprocs=nprocs,
        nodes=nodes,
        nodes_source="test" if nodes is not None else None,
        start=start,
        end=start + timedelta(seconds=runtime_s),
        runtime_s=runtime_s,
        exe="/bin/app",
        darshan_version=darshan_version,
        log_format="3.41",
        mounts=tuple(Mount(path=p, fs_type=t) for p, t in mounts),
        hints=MappingProxyType(dict(hints or {})),
        metadata=MappingProxyType({"lib_ver": darshan_version}),
    )
    return JobProfile(
        path="<test profile>",
        meta=meta,
        modules=MappingProxyType(infos),
        names=MappingProxyType(all_names),
        tables=MappingProxyType(tables),
        problems=tuple(problems),
    )
