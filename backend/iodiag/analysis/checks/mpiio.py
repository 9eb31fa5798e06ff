"""MPI-IO checks (Drishti's M codes)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.models import Confidence, Layer, Metric, Severity, Unit, Workload
from iodiag.analysis.registry import Hit, Kind, check, twins
from iodiag.analysis.views.context import Context, pct
from iodiag.analysis.views.request_sizes import typical_per_record
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import request_bytes
from iodiag.ingest.table import Table

MIB = 1 << 20

MPIIO = ("MPI-IO",)


@check(
    "M01",
    title="No MPI-IO",
    layer=Layer.MPIIO,
    severity=Severity.WARNING,
    recommendations=("use-parallel-io-library",),
    origin="drishti",
    applies_to=frozenset({Workload.MPI}),
)
def no_mpiio(ctx: Context, t: Thresholds) -> Hit | None:
    # Only meaningful when the job did I/O that MPI-IO could have carried.
    if "MPI-IO" in ctx.profile.modules or not (ctx.profile.has("POSIX") or ctx.profile.has("STDIO")):
        return None
    used = [layer for layer, _ in ctx.counted_layers] or ["POSIX"]
    via = " and ".join(used) if len(used) <= 2 else ", ".join(used[:-1]) + " and " + used[-1]
    return Hit(
        message=f"The job does not use MPI-IO: all of its I/O goes through {via} calls, so ranks "
        "cannot coordinate or aggregate their requests.",
        evidence=[Metric(name="nprocs", value=ctx.meta.nprocs, unit=Unit.COUNT)],
        cost=costs.unknown(
            "not using MPI-IO costs nothing by itself; what it would fix shows as small, random or unbalanced "
            "requests (their own findings)"
            if ctx.meta.nprocs > 1
            else "a single process has no other ranks to coordinate with"
        ),
    )


def _collective(ctx: Context, t: Thresholds, op: str) -> tuple[int, int, int]:
    """(collective, independent, total) MPI-IO calls. Non-blocking calls (MPI_File_iwrite_at...)
    are independent too; Drishti leaves them out and misses jobs that only use them."""
    m = ctx.mpiio_records
    coll = int(m[f"MPIIO_COLL_{op}S"].sum()) + int(m[f"MPIIO_SPLIT_{op}S"].sum())
    indep = int(m[f"MPIIO_INDEP_{op}S"].sum()) + int(m[f"MPIIO_NB_{op}S"].sum())
    return coll, indep, coll + indep


@dataclass(frozen=True)
class _Candidates:
    """Files whose independent ``op`` calls collective buffering would change, per MPI-IO record and per file."""

    rows: np.ndarray
    """Mask over ``ctx.mpiio_records``: the records of those files."""
    ids: np.ndarray
    calls: np.ndarray
    """Independent ``op`` calls per file (``ids``)."""
    small_share: np.ndarray
    """Per record (all rows): the share of its ``op`` calls, or of the POSIX requests beneath, under 1 MiB."""
    typical: dict[int, int]
    """File id -> its most common request size (ACCESS counters), where known."""


def _collective_candidates(ctx: Context, t: Thresholds, op: str) -> _Candidates:
    """Files where collective buffering would change the requests that reach the file system.

    Two-phase collective buffering gathers the pieces the ranks pass in one call and writes them as large
    contiguous requests from a few aggregators. That changes the file system's requests only when (1) several
    ranks access the file (a shared, rank -1 record of a job of several ranks, or records of more than one rank:
    a file per process, or a one-process job, has nothing to gather), (2) the requests are small: more than
    ``small_requests`` of the calls, or of the POSIX requests beneath them (a non-contiguous call split into
    pieces), are strictly under 1 MiB (a request of exactly 1 MiB sits in Darshan's 100K_1M bin but is not
    small: the ACCESS counters settle it), and (3) each rank's requests are not contiguous: more than
    ``random_operations`` of the POSIX requests beneath do not start where the rank's previous one ended
    (interleaved with other ranks' pieces, strided or random). A rank writing its own block front to back gets
    nothing from collective buffering: the ranks' pieces in one call lie far apart, and aggregating within the
    rank is the fix (P06, P16). Without POSIX records beneath, contiguity cannot be judged and (3) is taken as
    true.
    """
    return ctx.memo(f"collective_candidates_{op}", lambda: _candidates(ctx, t, op))


def _candidates(ctx: Context, t: Thresholds, op: str) -> _Candidates:
    m = ctx.mpiio_records
    n_ops = m.num(f"MPIIO_INDEP_{op}S") + m.num(f"MPIIO_NB_{op}S") + m.num(f"MPIIO_COLL_{op}S")
    n_ops = n_ops + m.num(f"MPIIO_SPLIT_{op}S")
    indep = m.num(f"MPIIO_INDEP_{op}S") + m.num(f"MPIIO_NB_{op}S")
    nbytes = m.num("MPIIO_BYTES_READ" if op == "READ" else "MPIIO_BYTES_WRITTEN")
    below = costs.below_mib_counts(m, "MPIIO", op).astype(float)
    tiny = sum(
        (m.num(costs.size_column("MPIIO", op, b)) for b in ("0_100", "100_1K", "1K_10K", "10K_100K")), np.zeros(len(m))
    )
    g = m.group_by("id")
    f_ops, f_bytes = g.sum(n_ops), g.sum(nbytes)
    # A rank -1 record of a one-process job is no shared file: there is no other rank to gather from.
    shared = (g.any(m["rank"] < 0) & (ctx.meta.nprocs > 1)) | (g.nunique(m["rank"]) > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(f_ops > 0, f_bytes / np.maximum(f_ops, 1), 0.0)
        share = np.where(f_ops > 0, g.sum(below) / np.maximum(f_ops, 1), 0.0)
        tiny_share = np.where(f_ops > 0, g.sum(tiny) / np.maximum(f_ops, 1), 0.0)
    # A mean of 1 MiB or more with nothing under 100 KiB: the 100K_1M bin holds 1 MiB requests the ACCESS
    # counters did not name (more than four sizes), not small ones.
    small_mpi = (share > t.small_requests) & ((mean < MIB) | (tiny_share > t.small_requests))
    small_posix, noncontig = _posix_beneath(ctx, t, op, g.keys)
    qualifies = shared & (small_mpi | small_posix) & noncontig & (g.sum(indep) > 0)
    ids = g.keys[qualifies]
    rows = np.isin(m["id"], ids)
    row_share = np.where(n_ops > 0, below / np.maximum(n_ops, 1), 0.0)
    posix_share = g.lookup(m["id"], np.where(small_posix, 1.0, 0.0), 0.0)
    return _Candidates(
        rows=rows,
        ids=ids,
        calls=g.sum(indep)[qualifies],
        small_share=np.clip(np.maximum(row_share, posix_share * _posix_small_share(ctx, op, m["id"])), 0, 1),
        typical=_typical_sizes(m, ids),
    )


def _posix_beneath(ctx: Context, t: Thresholds, op: str, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per file of ``ids``: (its POSIX ``op`` requests are mostly under 1 MiB, they are not contiguous per rank).

    Files without POSIX records beneath are (False, True): sizes as the MPI-IO calls say, contiguity unknown.
    """
    p = ctx.posix_records
    p = p.where(np.isin(p["id"], ids)) if len(p) else p
    if not len(p):
        return np.zeros(len(ids), dtype=bool), np.ones(len(ids), dtype=bool)
    g = p.group_by("id")
    ops = g.sum(p.num(f"POSIX_{op}S"))
    below = g.sum(costs.below_mib_counts(p, "POSIX", op).astype(float))
    # Each rank's first request after an open does not follow a previous one: one break per open is allowed.
    breaks = np.maximum(ops - g.sum(p.num(f"POSIX_CONSEC_{op}S")) - g.sum(p.num("POSIX_OPENS")), 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        small = np.where(ops > 0, below / np.maximum(ops, 1), 0.0) > t.small_requests
        scattered = np.where(ops > 0, breaks / np.maximum(ops, 1), 0.0) > t.random_operations
    found = np.isin(ids, g.keys)
    return (
        g.lookup(ids, small, False).astype(bool) & found,
        np.where(found, g.lookup(ids, scattered, False).astype(bool), True),
    )


def _posix_small_share(ctx: Context, op: str, ids: np.ndarray) -> np.ndarray:
    """Per id, the share of the POSIX ``op`` requests of that file strictly under 1 MiB (0 without records)."""
    p = ctx.posix_records
    if not len(p):
        return np.zeros(len(ids))
    g = p.group_by("id")
    ops = g.sum(p.num(f"POSIX_{op}S"))
    share = np.where(ops > 0, g.sum(costs.below_mib_counts(p, "POSIX", op).astype(float)) / np.maximum(ops, 1), 0.0)
    return g.lookup(np.asarray(ids), share, 0.0)


def _typical_sizes(m: Table, ids: np.ndarray) -> dict[int, int]:
    """Per file, the request size with the largest count over its records' ACCESS1-4 counters."""
    return typical_per_record(m.where(np.isin(m["id"], ids)), "MPIIO")


def _no_collective(ctx: Context, t: Thresholds, op: str) -> Hit | None:
    coll, indep, total = _collective(ctx, t, op)
    if coll != 0 or not total or total <= t.collective_operations_absolute:
        return None
    c = _collective_candidates(ctx, t, op)
    calls = int(c.calls.sum())
    if calls <= t.collective_operations_absolute:
        return None
    verb = op.lower()
    files, n = ctx.rank_files(c.ids, c.calls, f"independent_{verb}s", Unit.COUNT)
    sizes = sorted({c.typical[int(i)] for i in c.ids.tolist() if int(i) in c.typical})
    typical = f" (typically {request_bytes(sizes[0])})" if len(sizes) == 1 else ""
    where = "one shared file" if n == 1 else f"{n:,} shared files"
    return Hit(
        message=f"The job uses MPI-IO but issues no collective {verb}s: {calls:,} of its {indep:,} independent "
        f"MPI-IO {verb} calls are small{typical}, not contiguous per rank, to {where}, so each rank sends its own "
        f"small pieces to the file system where collective buffering would merge them into large requests.",
        evidence=[
            Metric(name=f"independent_{verb}s", value=indep, unit=Unit.COUNT),
            Metric(name=f"collective_{verb}s", value=coll, unit=Unit.COUNT),
            Metric(name=f"independent_{verb}_share", value=indep / total, unit=Unit.RATIO),
            Metric(name=f"mergeable_{verb}s", value=calls, unit=Unit.COUNT),
            Metric(name="shared_files", value=n, unit=Unit.COUNT),
        ],
        files=files,
        files_total=n,
        subject=f"{calls:,} small independent {verb}s" + (f" of {request_bytes(sizes[0])}" if len(sizes) == 1 else ""),
        cost=_independent_cost(ctx, t, op, c, calls),
    )


def _independent_cost(ctx: Context, t: Thresholds, op: str, c: _Candidates, calls: int) -> costs.Cost:
    """The small independent calls of those files: their share of the MPI-IO time, less their bytes at the job's
    large-request rate.

    Collective buffering pays off by turning small pieces into large requests; independent calls that are
    already large (a rank writing 16 MiB blocks, or exactly 1 MiB) would gain little from it.
    """
    m = ctx.mpiio_records
    time = m.num(f"MPIIO_F_{op}_TIME") * c.small_share * c.rows
    nbytes = m.num("MPIIO_BYTES_READ" if op == "READ" else "MPIIO_BYTES_WRITTEN") * c.small_share * c.rows
    rate, own = costs.large_request_rate(ctx, op, t)
    per_row = np.clip(time - nbytes / rate, 0, None)
    seconds = costs.on_critical_path(ctx, m, per_row, prefix="MPIIO")
    floor = None if own else costs.holds_below_reference(ctx, m, time, nbytes, rate, seconds, "MPIIO")
    return costs.modelled(
        seconds,
        f"time of the independent {op.lower()}s under 1 MiB to shared files, not contiguous per rank (what "
        f"collective buffering would merge), less their bytes at {'this job' if own else 'the reference'}'s "
        "large-request rate, on the busiest rank"
        + (f"; still {floor:.3g} s at a tenth of that rate" if floor is not None else ""),
        confidence=Confidence.MEDIUM if own or floor is not None else Confidence.LOW,
        ops=calls,
    )


def _uses_collective(ctx: Context, t: Thresholds, op: str) -> Hit | None:
    coll, _, total = _collective(ctx, t, op)
    if coll == 0:
        return None
    verb = op.lower()
    return Hit(
        message=f"The job {'reads' if op == 'READ' else 'writes'} through collective MPI-IO: {coll:,} collective "
        f"{verb} calls ({pct(coll / total)} of {total:,}).",
        evidence=[
            Metric(name=f"collective_{verb}s", value=coll, unit=Unit.COUNT),
            Metric(name=f"collective_{verb}_share", value=coll / total, unit=Unit.RATIO),
        ],
    )


twins(
    "M02",
    "M03",
    _no_collective,
    title="No collective MPI-IO {ops}",
    layer=Layer.MPIIO,
    severity=Severity.CRITICAL,
    requires=MPIIO,
    recommendations=("mpiio-collective-io", "romio-hints"),
    family="independent",
    applies_to=frozenset({Workload.MPI}),
    origin="drishti",
)
twins(
    "M04",
    "M05",
    _uses_collective,
    title="Collective MPI-IO {ops}",
    names=("collective_reads", "collective_writes"),
    layer=Layer.MPIIO,
    severity=Severity.OK,
    requires=MPIIO,
    origin="drishti",
)


def _blocking(ctx: Context, t: Thresholds, op: str) -> Hit | None:
    # Drishti raises this whenever no non-blocking call is seen, even for a job that never
    # reads (or writes) through MPI-IO; advice about calls the job does not make is noise.
    m = ctx.mpiio_records
    verb = op.lower()
    nb = int(m[f"MPIIO_NB_{op}S"].sum())
    calls = sum(int(m[f"MPIIO_{kind}_{op}S"].sum()) for kind in ("INDEP", "COLL", "SPLIT"))
    if nb != 0 or calls == 0:
        return None
    return Hit(
        message=f"All {calls:,} MPI-IO {verb} calls block: non-blocking or asynchronous {verb}s could overlap "
        f"this I/O with computation.",
        evidence=[
            Metric(name=f"blocking_{verb}s", value=calls, unit=Unit.COUNT),
            Metric(name=f"nonblocking_{verb}s", value=nb, unit=Unit.COUNT),
        ],
        extra_recommendations=("hdf5-async-vol",) if ctx.uses_hdf5 else (),
        cost=_overlap_cost(ctx, op, calls),
    )


def _overlap_cost(ctx: Context, op: str, calls: int) -> costs.Cost:
    m = ctx.mpiio_records
    io = costs.on_critical_path(ctx, m, m.num(f"MPIIO_F_{op}_TIME"), prefix="MPIIO")
    s = ctx.io_share
    compute = max(s.runtime_s - s.slowest_rank_io_s, 0.0) if s is not None else 0.0
    return costs.modelled(
        min(io, compute),
        "upper bound: the blocking calls' time on the busiest rank, as far as computation could hide it",
        confidence=Confidence.LOW,
        ops=calls,
    )


twins(
    "M06",
    "M07",
    _blocking,
    title="Blocking MPI-IO {ops}",
    layer=Layer.MPIIO,
    severity=Severity.WARNING,
    requires=MPIIO,
    recommendations=("mpiio-nonblocking",),
    kind=Kind.OPPORTUNITY,
    origin="drishti",
)


def _aggregators(ctx: Context) -> tuple[int, int] | None:
    """(cb_nodes, nodes) when both are known and the job used collective MPI-IO.

    Drishti takes cb_nodes from the log's "h" metadata, but those are the hints Darshan used to
    write its own log (DARSHAN_LOGHINTS, default cb_nodes=4), not the application's. The
    application's value has to come from the user (JobFacts.cb_nodes).
    """
    cb, nodes = ctx.facts.cb_nodes, ctx.nodes
    if cb is None or nodes is None:
        return None
    m = ctx.mpiio_records
    if int(m["MPIIO_COLL_READS"].sum() + m["MPIIO_COLL_WRITES"].sum()) == 0:
        return None
    return cb, nodes


def _agg_evidence(cb: int, nodes: int) -> list[Metric]:
    return [
        Metric(name="cb_nodes", value=cb, unit=Unit.COUNT),
        Metric(name="nodes", value=nodes, unit=Unit.COUNT),
    ]


@check(
    "M08",
    title="Intra-node MPI-IO aggregators",
    layer=Layer.MPIIO,
    severity=Severity.OK,
    requires=MPIIO,
    origin="drishti",
)
def intra_node_aggregators(ctx: Context, t: Thresholds) -> Hit | None:
    a = _aggregators(ctx)
    if a is None or not a[0] < a[1]:
        return None
    return Hit(
        message=f"cb_nodes={a[0]} aggregators on {a[1]} nodes: fewer aggregators than nodes.",
        evidence=_agg_evidence(*a),
    )


@check(
    "M09",
    title="Inter-node MPI-IO aggregators",
    layer=Layer.MPIIO,
    severity=Severity.CRITICAL,
    requires=MPIIO,
    recommendations=("mpiio-aggregators-per-node", "romio-hints"),
    origin="drishti",
)
def inter_node_aggregators(ctx: Context, t: Thresholds) -> Hit | None:
    a = _aggregators(ctx)
    if a is None or not a[0] > a[1]:
        return None
    return Hit(
        message=f"cb_nodes={a[0]} aggregators on only {a[1]} nodes: several aggregators share a "
        f"node and data crosses the network to reach them; use cb_nodes={a[1]}.",
        evidence=_agg_evidence(*a),
        cost=costs.unknown("Darshan does not time the two-phase exchange between ranks and aggregators"),
    )


@check(
    "M10",
    title="One MPI-IO aggregator per node",
    layer=Layer.MPIIO,
    severity=Severity.OK,
    requires=MPIIO,
    origin="drishti",
)
def one_aggregator_per_node(ctx: Context, t: Thresholds) -> Hit | None:
    a = _aggregators(ctx)
    if a is None or a[0] != a[1]:
        return None
    return Hit(message=f"cb_nodes={a[0]} on {a[1]} nodes: one aggregator per node.", evidence=_agg_evidence(*a))
