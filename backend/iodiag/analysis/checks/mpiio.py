"""MPI-IO checks (Drishti's M codes)."""

from __future__ import annotations

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.context import Context, pct
from iodiag.analysis.models import Confidence, Layer, Metric, Severity, Unit, Workload
from iodiag.analysis.registry import Hit, Kind, check
from iodiag.core.thresholds import Thresholds
from iodiag.ingest.table import Groups

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


def _no_collective(ctx: Context, t: Thresholds, op: str) -> Hit | None:
    coll, indep, total = _collective(ctx, t, op)
    if coll != 0 or not total or total <= t.collective_operations_absolute:
        return None
    m = ctx.mpiio_records
    verb = op.lower()
    indep_op = m[f"MPIIO_INDEP_{op}S"] + m[f"MPIIO_NB_{op}S"]
    both = m["MPIIO_INDEP_READS"] + m["MPIIO_INDEP_WRITES"] + m["MPIIO_NB_READS"] + m["MPIIO_NB_WRITES"]
    share = np.where(both != 0, indep_op / np.where(both != 0, both, 1), 0.0)
    keep = (share > t.collective_operations) & (both > t.collective_operations_absolute)
    g = Groups(m["id"][keep])
    files, n = ctx.rank_files(g.keys, g.sum(indep_op[keep]), f"independent_{verb}s", Unit.COUNT)
    return Hit(
        message=f"The job uses MPI-IO but issues no collective {verb}s: all {indep:,} MPI-IO {verb} calls "
        f"are independent, so each rank hits the file system on its own.",
        evidence=[
            Metric(name=f"independent_{verb}s", value=indep, unit=Unit.COUNT),
            Metric(name=f"collective_{verb}s", value=coll, unit=Unit.COUNT),
            Metric(name=f"independent_{verb}_share", value=indep / total, unit=Unit.RATIO),
        ],
        files=files,
        files_total=n,
        cost=_independent_cost(ctx, t, op, indep),
    )


def _independent_cost(ctx: Context, t: Thresholds, op: str, calls: int) -> costs.Cost:
    """Independent calls under 1 MiB: their share of the MPI-IO time, less their bytes at the job's large rate.

    Collective buffering pays off by turning small pieces into large requests; independent calls that are
    already large (a rank writing 16 MiB blocks) would gain little from it.
    """
    m = ctx.mpiio_records
    small = sum((m.num(f"MPIIO_SIZE_{op}_AGG_{b}") for b in costs.BIN_MEAN_BYTES), np.zeros(len(m)))
    n = (m[f"MPIIO_INDEP_{op}S"] + m[f"MPIIO_NB_{op}S"] + m[f"MPIIO_COLL_{op}S"] + m[f"MPIIO_SPLIT_{op}S"]).astype(
        float
    )
    share = np.where(n > 0, np.clip(small / np.maximum(n, 1), 0, 1), 0.0)
    time = m.num(f"MPIIO_F_{op}_TIME") * share
    nbytes = sum(
        (m.num(f"MPIIO_SIZE_{op}_AGG_{b}") * mean for b, mean in costs.BIN_MEAN_BYTES.items()), np.zeros(len(m))
    )
    rate, own = costs.large_request_rate(ctx, op, t)
    per_row = np.clip(time - nbytes / rate, 0, None)
    return costs.modelled(
        costs.on_critical_path(ctx, m, per_row, prefix="MPIIO"),
        f"time of the independent {op.lower()}s under 1 MiB (what collective buffering would combine) less their "
        f"bytes at {'this job' if own else 'the reference'}'s large-request rate, on the busiest rank",
        confidence=Confidence.MEDIUM if own else Confidence.LOW,
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


@check(
    "M02",
    title="No collective MPI-IO reads",
    layer=Layer.MPIIO,
    severity=Severity.CRITICAL,
    requires=MPIIO,
    recommendations=("mpiio-collective-io", "romio-hints"),
    family="independent",
    applies_to=frozenset({Workload.MPI}),
    origin="drishti",
)
def no_collective_reads(ctx: Context, t: Thresholds) -> Hit | None:
    return _no_collective(ctx, t, "READ")


@check(
    "M03",
    title="No collective MPI-IO writes",
    layer=Layer.MPIIO,
    severity=Severity.CRITICAL,
    requires=MPIIO,
    recommendations=("mpiio-collective-io", "romio-hints"),
    family="independent",
    applies_to=frozenset({Workload.MPI}),
    origin="drishti",
)
def no_collective_writes(ctx: Context, t: Thresholds) -> Hit | None:
    return _no_collective(ctx, t, "WRITE")


@check(
    "M04",
    title="Collective MPI-IO reads",
    layer=Layer.MPIIO,
    severity=Severity.OK,
    requires=MPIIO,
    origin="drishti",
)
def collective_reads(ctx: Context, t: Thresholds) -> Hit | None:
    return _uses_collective(ctx, t, "READ")


@check(
    "M05",
    title="Collective MPI-IO writes",
    layer=Layer.MPIIO,
    severity=Severity.OK,
    requires=MPIIO,
    origin="drishti",
)
def collective_writes(ctx: Context, t: Thresholds) -> Hit | None:
    return _uses_collective(ctx, t, "WRITE")


def _blocking(ctx: Context, op: str) -> Hit | None:
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


@check(
    "M06",
    title="Blocking MPI-IO reads",
    layer=Layer.MPIIO,
    severity=Severity.WARNING,
    requires=MPIIO,
    recommendations=("mpiio-nonblocking",),
    kind=Kind.OPPORTUNITY,
    origin="drishti",
)
def blocking_reads(ctx: Context, t: Thresholds) -> Hit | None:
    return _blocking(ctx, "READ")


@check(
    "M07",
    title="Blocking MPI-IO writes",
    layer=Layer.MPIIO,
    severity=Severity.WARNING,
    requires=MPIIO,
    recommendations=("mpiio-nonblocking",),
    kind=Kind.OPPORTUNITY,
    origin="drishti",
)
def blocking_writes(ctx: Context, t: Thresholds) -> Hit | None:
    return _blocking(ctx, "WRITE")


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
