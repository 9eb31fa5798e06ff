"""Cross-layer checks (X codes): a transformation between layers that hurts.

They read the cross-layer summary (``analysis/views/stack.py``): per file, the same requests as
HDF5/PnetCDF, MPI-IO and POSIX saw them, the ranks that issued them and the Lustre layout.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.models import (
    Confidence,
    FileCrossLayer,
    FileEvidence,
    FileGroup,
    Layer,
    LayerStats,
    Metric,
    OpStats,
    Severity,
    Unit,
)
from iodiag.analysis.registry import Hit, Kind, check
from iodiag.analysis.views.calls import module_calls
from iodiag.analysis.views.context import TOP_LAYER_BYTES, Context, pct
from iodiag.analysis.views.file_usage import file_groups
from iodiag.analysis.views.stack import all_files, compact_bytes
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes, human_seconds
from iodiag.ingest.table import Groups

MPIIO = ("MPI-IO", "POSIX")


def _mpi_writers(m: LayerStats) -> int:
    """Ranks that wrote through MPI-IO; a shared (reduced) record means every rank opened the file."""
    return m.writer_ranks if m.writer_ranks is not None else (m.ranks or 0)


def _collective_file(f: FileCrossLayer, t: Thresholds) -> tuple[LayerStats, LayerStats] | None:
    """(MPI-IO, POSIX) layers of a file written mostly with collective MPI-IO, big enough to matter."""
    m, p = f.layer("MPI-IO"), f.layer("POSIX")
    if m is None or p is None or not m.writes.ops or not p.writes.ops:
        return None
    coll = m.collective_writes or 0
    if coll * 2 < m.writes.ops or m.writes.bytes < t.xlayer_min_bytes:
        return None
    return m, p


def _evidence_file(ctx: Context, f: FileCrossLayer, *metrics: Metric) -> FileEvidence:
    return ctx.file(int(f.record_id), *metrics)


@check(
    "X01",
    title="Collective MPI-IO writes that did not aggregate",
    layer=Layer.MPIIO,
    severity=Severity.WARNING,
    requires=MPIIO,
    recommendations=("romio-hints", "aggregate-small-requests"),
)
def collective_not_aggregated(ctx: Context, t: Thresholds) -> Hit | None:
    # Two-phase collective buffering exists to turn many per-rank pieces into few large requests
    # from a few aggregator ranks. It failed when (a) the POSIX requests stay small and no larger
    # than the MPI-IO ones (each rank's piece written on its own, e.g. non-interleaved data or
    # collective buffering disabled), or (b) every rank that called MPI-IO also wrote at POSIX
    # (no aggregation at all), unless there are as many nodes as writers (one aggregator per node).
    if _partial(ctx, "POSIX", "MPI-IO"):
        # A partial POSIX module lacks records of some aggregators: "did not combine" cannot be concluded.
        return None
    nodes = ctx.nodes
    bad: list[tuple[FileCrossLayer, LayerStats, LayerStats, str]] = []
    for f in all_files(ctx):
        pair = _collective_file(f, t)
        if pair is None or (pair[0].collective_writes or 0) < t.xlayer_min_collective_writes:
            continue
        m, p = pair
        small = p.writes.mean_bytes < t.xlayer_unaggregated_bytes
        no_gain = p.writes.mean_bytes < t.xlayer_aggregation_gain * m.writes.mean_bytes
        mw = _mpi_writers(m)
        every_rank = (
            p.writer_ranks is not None
            and mw >= t.xlayer_min_ranks
            and p.writer_ranks >= mw
            and (nodes is None or nodes < p.writer_ranks)
        )
        if small and no_gain:
            bad.append((f, m, p, "small"))
        elif every_rank:
            bad.append((f, m, p, "every-rank"))
    if not bad:
        return None
    bad.sort(key=lambda b: (-b[2].writes.ops, b[0].record_id))
    f, m, p, why = bad[0]
    gain = p.writes.mean_bytes / m.writes.mean_bytes if m.writes.mean_bytes else 0.0
    mw = _mpi_writers(m)
    pw = p.writer_ranks
    writers = f"{pw:,} ranks" if pw is not None else "all ranks"
    if why == "small":
        detail = (
            f"they reached POSIX as {p.writes.ops:,} writes on {writers} averaging "
            f"{compact_bytes(p.writes.mean_bytes)}, {gain:.2f}x the mean MPI-IO request "
            f"({compact_bytes(m.writes.mean_bytes)}): collective buffering did not combine the ranks' pieces"
        )
    else:
        detail = (
            f"all {pw:,} ranks that called MPI-IO also wrote at POSIX ({p.writes.ops:,} writes averaging "
            f"{compact_bytes(p.writes.mean_bytes)}): no rank's data went through an aggregator"
        )
    more = f" ({len(bad)} files; the largest shown)" if len(bad) > 1 else ""
    return Hit(
        message=f"{m.collective_writes:,} collective MPI-IO writes from {mw:,} ranks to {f.path}{more}, but "
        f"{detail}. Check the collective-buffering hints (romio_cb_write, cb_nodes, cb_buffer_size) and "
        f"whether the ranks' pieces interleave in the file.",
        evidence=[
            Metric(name="collective_writes", value=m.collective_writes or 0, unit=Unit.COUNT),
            Metric(name="posix_writes", value=p.writes.ops, unit=Unit.COUNT),
            Metric(name="mpiio_mean_write_bytes", value=round(m.writes.mean_bytes), unit=Unit.BYTES),
            Metric(name="posix_mean_write_bytes", value=round(p.writes.mean_bytes), unit=Unit.BYTES),
            Metric(name="size_gain", value=gain, unit=Unit.RATIO, description="mean POSIX write / mean MPI-IO write"),
            Metric(name="mpiio_writer_ranks", value=mw, unit=Unit.COUNT),
            Metric(name="posix_writer_ranks", value=pw if pw is not None else -1, unit=Unit.COUNT),
        ],
        files=[
            _evidence_file(
                ctx,
                b[0],
                Metric(name="collective_writes", value=b[1].collective_writes or 0, unit=Unit.COUNT),
                Metric(name="posix_writes", value=b[2].writes.ops, unit=Unit.COUNT),
                Metric(name="posix_mean_write_bytes", value=round(b[2].writes.mean_bytes), unit=Unit.BYTES),
            )
            for b in bad[: ctx.top_n]
        ],
        files_total=len(bad),
        ranks=p.writer_rank_ids,
        cost=_partial_guard(
            ctx,
            costs.files_time_cost(
                ctx,
                {int(b[0].record_id): 1.0 - min(b[2].writes.mean_bytes / (1 << 20), 1.0) for b in bad},
                ("WRITE",),
            ),
            "the POSIX write time of those files, scaled by how far their mean write falls short of 1 MiB, on the "
            "busiest rank",
        ),
    )


def _per_record(ids: np.ndarray, per_file: dict[int, float]) -> np.ndarray:
    """``per_file`` (record id -> value) for each of ``ids``; 0 for the files it leaves out."""
    if not per_file:
        return np.zeros(len(ids))
    g = Groups(np.fromiter(per_file, dtype=np.uint64, count=len(per_file)))
    values = np.fromiter(per_file.values(), dtype=float, count=len(per_file))
    # The keys are distinct: each group's sum is its file's value, in key order.
    return g.lookup(np.asarray(ids, dtype=np.uint64), g.sum(values), 0.0)


def _partial(ctx: Context, *modules: str) -> list[str]:
    return [m for m in modules if (info := ctx.profile.modules.get(m)) is not None and info.partial]


def _partial_guard(ctx: Context, seconds: float, basis: str, measured: bool = False) -> costs.Cost:
    """A cross-layer cost, with low confidence when a module it compares is partial."""
    gone = _partial(ctx, "POSIX", "MPI-IO", "H5D", "H5F", "PNETCDF_VAR")
    if gone:
        return costs.modelled(
            seconds,
            f"{basis}; low confidence: module {', '.join(gone)} is partial, so a layer's totals are lower bounds",
            confidence=Confidence.LOW,
        )
    return costs.measured(seconds, basis) if measured else costs.modelled(seconds, basis)


@check(
    "X02",
    title="HDF5 metadata writes among the data writes",
    layer=Layer.HDF5,
    severity=Severity.WARNING,
    requires=("H5D", "POSIX"),
    recommendations=("hdf5-metadata-cache", "hdf5-collective-metadata", "hdf5-alignment"),
)
def hdf5_metadata_writes(ctx: Context, t: Thresholds) -> Hit | None:
    # HDF5 metadata (superblock, object headers, B-tree nodes, local/global heaps) is written in
    # pieces of at most a few KiB, Darshan's three smallest bins (<= 10 KiB). H5D counts only the
    # datasets' own writes: the POSIX writes of at most 10 KiB beyond the dataset writes of that size
    # are metadata. When they are a large share of the file's POSIX writes while the datasets are
    # written in large requests, the metadata cache is flushing piecemeal among the data, each piece
    # a small, unaligned request (and, from every rank, a read-modify-write for the file system).
    bad: list[tuple[FileCrossLayer, int, float, LayerStats, LayerStats]] = []
    for f in all_files(ctx):
        h, p = f.layer("HDF5"), f.layer("POSIX")
        if h is None or p is None or not h.writes.ops or not p.writes.ops:
            continue
        if p.writes.bytes < t.xlayer_min_bytes or h.writes.small_ops * 2 >= h.writes.ops:
            continue
        extra = max(p.writes.small_ops - h.writes.small_ops, 0)
        share = extra / p.writes.ops
        if extra >= t.xlayer_meta_min_writes and share >= t.xlayer_meta_write_share:
            bad.append((f, extra, share, h, p))
    if not bad:
        return None
    bad.sort(key=lambda b: (-b[1], b[0].record_id))
    f, extra, share, h, p = bad[0]
    more = f" ({len(bad)} files; the largest shown)" if len(bad) > 1 else ""
    writers = f"{p.writer_ranks:,} ranks" if p.writer_ranks is not None else "all ranks"
    h_size = compact_bytes(h.writes.median_bytes or h.writes.mean_bytes)
    return Hit(
        message=f"{f.path}{more}: {extra:,} of its {p.writes.ops:,} POSIX writes ({pct(share)}, from {writers}) "
        f"are at most 10 KiB and are not dataset writes, while its {h.writes.ops:,} dataset writes are large "
        f"(typically {h_size}). These are HDF5 metadata writes flushed piecemeal among the data.",
        evidence=[
            Metric(
                name="metadata_writes",
                value=extra,
                unit=Unit.COUNT,
                description="small POSIX writes beyond small dataset writes",
            ),
            Metric(name="metadata_write_share", value=share, unit=Unit.RATIO),
            Metric(name="posix_writes", value=p.writes.ops, unit=Unit.COUNT),
            Metric(name="dataset_writes", value=h.writes.ops, unit=Unit.COUNT),
            Metric(name="dataset_mean_write_bytes", value=round(h.writes.mean_bytes), unit=Unit.BYTES),
        ],
        files=[
            _evidence_file(
                ctx,
                b[0],
                Metric(name="metadata_writes", value=b[1], unit=Unit.COUNT),
                Metric(name="metadata_write_share", value=b[2], unit=Unit.RATIO),
            )
            for b in bad[: ctx.top_n]
        ],
        files_total=len(bad),
        ranks=p.writer_rank_ids,
        cost=_partial_guard(
            ctx,
            costs.files_time_cost(ctx, {int(b[0].record_id): b[2] for b in bad}, ("WRITE",)),
            "the metadata writes' share of the files' POSIX write time, on the busiest rank",
        ),
    )


@check(
    "X03",
    title="Stripe count 1 forces a single MPI-IO aggregator",
    layer=Layer.LUSTRE,
    severity=Severity.CRITICAL,
    requires=("MPI-IO", "POSIX", "LUSTRE"),
    recommendations=("lustre-stripe-count", "romio-hints"),
    family="single-ost",
)
def single_stripe_single_aggregator(ctx: Context, t: Thresholds) -> Hit | None:
    # ROMIO's Lustre driver (and Cray MPI-IO) give each stripe its aggregator(s): by default as many
    # aggregators as stripes. A shared file with one stripe then has one aggregator: the MPI-IO layer
    # looks balanced (every rank makes the same collective calls) while one rank does every POSIX
    # write (or read: a restart read collectively goes through the same lone aggregator), to one OST.
    for op in ("writes", "reads"):
        bad = _funnelled(ctx, t, op)
        if bad:
            return _funnel_hit(ctx, t, op, bad)
    return None


def _funnelled(ctx: Context, t: Thresholds, op: str) -> list[tuple[FileCrossLayer, LayerStats, LayerStats, LayerStats]]:
    """Single-stripe files whose collective ``op`` (writes or reads) from many ranks one rank issued at POSIX."""
    found = _few_aggregators(ctx, t, op, lambda lus, spread: 1 if lus is not None and lus.stripe_count == 1 else 0)
    return [(f, m, p, lus) for f, m, p, lus, _ in found if lus is not None]


Funnel = tuple[FileCrossLayer, LayerStats, LayerStats, LayerStats | None, int]
"""A funnelled file: its MPI-IO, POSIX and Lustre layers and how many ranks issued its POSIX requests."""


def _few_aggregators(
    ctx: Context, t: Thresholds, op: str, most: Callable[[LayerStats | None, int], int]
) -> list[Funnel]:
    """Files whose collective ``op`` (writes or reads) from many ranks reached POSIX through at most
    ``most(lustre_layer, spread)`` ranks, where ``spread`` is how many aggregators the job could have used (one
    per node, no more than the ranks or the file's stripes): every byte went through those few aggregators."""
    bad: list[Funnel] = []
    alone = _one_rank_moved_all(ctx)
    spread_of = _participation(ctx)
    for f in all_files(ctx):
        lus = f.layer("Lustre")
        if op == "writes":
            pair = _collective_file(f, t)
            if pair is None:
                continue
            m, p = pair
            callers, issuers = _mpi_writers(m), p.writer_ranks
        else:
            m, p = f.layer("MPI-IO"), f.layer("POSIX")  # type: ignore[assignment]
            if m is None or p is None or not m.reads.ops or not p.reads.ops or m.reads.bytes < t.xlayer_min_bytes:
                continue
            if (m.collective_reads or 0) * 2 < m.reads.ops:
                continue
            callers, issuers = _mpi_readers(m), p.reader_ranks
        if callers < t.xlayer_min_ranks:
            continue
        rid = int(f.record_id)
        if issuers is None:
            # A shared (reduced) record: one rank moved it all, or the ranks' spread of bytes says how many did
            k = spread_of.get(rid)
            issuers = 1 if rid in alone else (max(2, k) if k is not None else None)
        limit = most(lus, _spread(ctx, t, callers, lus))
        if issuers is not None and 1 <= issuers <= limit:
            bad.append((f, m, p, lus, issuers))
    bad.sort(key=lambda b: (-getattr(b[2], op).bytes, b[0].record_id))
    return bad


def _spread(ctx: Context, t: Thresholds, callers: int, lus: LayerStats | None) -> int:
    """The aggregators a file's collective calls could have used: one per node, no more than the ranks calling
    or the file's stripes (a file off Lustre, or of one stripe, counts the default spread)."""
    s = (lus.stripe_count or 0) if lus is not None else 0
    s = s if s > 1 else t.lustre_spread_osts
    return max(1, min(callers, ctx.nodes or callers, s))


def _participation(ctx: Context) -> dict[int, int]:
    """For each shared (reduced) POSIX record that moved data: how many ranks moved it, from Darshan's variance of
    bytes over the ranks. k ranks moving equal parts of B bytes out of n give a sum of squares of B²/k, and the
    variance is that over n less the squared mean, so k = B² / (n·variance + B²/n). Unequal parts count as fewer
    (the participation ratio), which is what a funnel is."""
    p = ctx.posix_records
    n = ctx.meta.nprocs
    if p.empty or "POSIX_F_VARIANCE_RANK_BYTES" not in p or n < 2:
        return {}
    shared = np.asarray(p["rank"]) == -1
    moved = (p.num("POSIX_BYTES_READ") + p.num("POSIX_BYTES_WRITTEN")).astype(float)
    var = p.num("POSIX_F_VARIANCE_RANK_BYTES").astype(float)
    squares = n * var + moved**2 / n
    ok = shared & (moved > 0) & (var >= 0) & (squares > 0) & np.isfinite(squares)
    ids = np.asarray(p["id"])[ok].tolist()
    k = np.rint(moved[ok] ** 2 / squares[ok]).astype(int)
    return {int(i): max(1, int(x)) for i, x in zip(ids, k.tolist(), strict=True)}


def _one_rank_moved_all(ctx: Context) -> set[int]:
    """Files with a shared (reduced) POSIX record whose slowest rank moved all of its bytes: Darshan kept no
    per-rank records, but one rank did every read and write (the others only opened it)."""
    p = ctx.posix_records
    if p.empty or "POSIX_SLOWEST_RANK_BYTES" not in p:
        return set()
    shared = np.asarray(p["rank"]) == -1
    moved = p.num("POSIX_BYTES_READ") + p.num("POSIX_BYTES_WRITTEN")
    slowest = p.num("POSIX_SLOWEST_RANK_BYTES")
    one = shared & (moved > 0) & (slowest >= 0.99 * moved)
    return {int(i) for i in np.asarray(p["id"])[one].tolist()}


def _funnel_metrics(op: str, calls: int, ranks: int, stats: OpStats, issuers: int = 1) -> list[Metric]:
    """The evidence X03 and X07 share: the collective calls above, the POSIX ranks beneath and what they moved."""
    agent = "writer" if op == "writes" else "reader"
    return [
        Metric(name=f"collective_{op}", value=calls, unit=Unit.COUNT),
        Metric(name=f"mpiio_{agent}_ranks", value=ranks, unit=Unit.COUNT),
        Metric(name=f"posix_{agent}_ranks", value=issuers, unit=Unit.COUNT),
        Metric(name=f"posix_{op}", value=stats.ops, unit=Unit.COUNT),
        Metric(name="bytes_written" if op == "writes" else "bytes_read", value=stats.bytes, unit=Unit.BYTES),
    ]


def _funnel_files(
    ctx: Context,
    op: str,
    bad: Sequence[tuple[FileCrossLayer, LayerStats, LayerStats, LayerStats]] | Sequence[Funnel],
) -> list[FileEvidence]:
    """Each funnelled file with what its aggregators moved and how many ranks called collectively above it."""
    writes = op == "writes"
    agent = "writer" if writes else "reader"
    return [
        _evidence_file(
            ctx,
            b[0],
            Metric(name="bytes_written" if writes else "bytes_read", value=getattr(b[2], op).bytes, unit=Unit.BYTES),
            Metric(
                name=f"mpiio_{agent}_ranks", value=_mpi_writers(b[1]) if writes else _mpi_readers(b[1]), unit=Unit.COUNT
            ),
        )
        for b in bad[: ctx.top_n]
    ]


def _mpi_readers(m: LayerStats) -> int:
    return m.reader_ranks if m.reader_ranks is not None else (m.ranks or 0)


@check(
    "X07",
    title="Collective MPI-IO funnelled through one or few aggregators",
    layer=Layer.MPIIO,
    severity=Severity.CRITICAL,
    requires=MPIIO,
    recommendations=("mpiio-spread-aggregators",),
    family="single-ost",
)
def one_aggregator_on_a_striped_file(ctx: Context, t: Thresholds) -> Hit | None:
    # X03's pattern where the layout does not explain it: the file has several stripes (or is not on Lustre), the
    # job runs on several nodes, yet one rank (or a few, at most a quarter of the aggregators the job could have
    # used) issued every POSIX request beneath the ranks' collective calls. That is a hint (cb_nodes=1 or 2, a
    # cb_config_list naming few hosts) or an MPI-IO that picked few aggregators: the file's data crosses those
    # nodes' links and processes. On one node one aggregator is ROMIO's default and the node's link is the limit
    # either way, so that is left alone, except on a Lustre file of several stripes, where ROMIO's Lustre driver
    # and Cray MPI-IO default to one aggregator per stripe however few the nodes.
    one_node = ctx.nodes is not None and ctx.nodes <= 1

    def most(lus: LayerStats | None, spread: int) -> int:
        stripes = (lus.stripe_count or 0) if lus is not None else 0
        if not (stripes > 1 or (lus is None and not one_node)):
            return 0
        if ctx.nodes is None and stripes <= 1:
            # Off Lustre the default is one aggregator per node: without the node count, two could be the default
            return 1
        few = max(1, spread // FEW_AGGREGATORS)
        if ctx.nodes is None:
            # Without the node count, k > 1 aggregators may be one per node of a job on k nodes: they are few only
            # when the job must have run on more nodes than that (at most MAX_RANKS_PER_NODE ranks a node), or when
            # the file could have used FEW_AGGREGATORS² times as many (a shortfall even at four a node). One
            # aggregator on a file of several stripes stays few on any number of nodes.
            fewest_nodes = -(-max(ctx.meta.nprocs, 1) // MAX_RANKS_PER_NODE)
            few = min(few, max(1, fewest_nodes - 1, spread // FEW_AGGREGATORS**2))
        return few

    for op in ("writes", "reads"):
        bad = _few_aggregators(ctx, t, op, most)
        if bad:
            return _one_aggregator_hit(ctx, t, op, bad)
    return None


FEW_AGGREGATORS = 4
"""Aggregators are too few when the job could have used at least this many times as many."""
MAX_RANKS_PER_NODE = 128
"""The most ranks a node runs in practice (128 cores on today's CPU nodes): the fewest nodes a job ran on is its
ranks over this, which is all a log without the node count says about them."""


def _one_aggregator_hit(ctx: Context, t: Thresholds, op: str, bad: list[Funnel]) -> Hit:
    f, m, p, lus, k = bad[0]
    writes = op == "writes"
    noun = "write" if writes else "read"
    calls = (m.collective_writes if writes else m.collective_reads) or 0
    ranks = _mpi_writers(m) if writes else _mpi_readers(m)
    ids = (p.writer_rank_ids if writes else [])[:k]
    if k == 1:
        who = f"rank {ids[0]}" if ids else "one rank"
    else:
        who = f"{k} ranks" + (f" ({', '.join(str(i) for i in ids)})" if len(ids) == k else "")
    stats = getattr(p, op)
    more = f" ({len(bad)} files; the largest shown)" if len(bad) > 1 else ""
    stripes = lus.stripe_count or 0 if lus is not None else 0
    stripes = stripes if stripes > 1 else 0
    layout = f"; the file has {stripes} stripes" if stripes else ""
    nodes = f" on {ctx.nodes:,} nodes" if ctx.nodes else ""
    spread = _spread(ctx, t, ranks, lus)
    what = (
        "One aggregator carries the whole file through one process and one node's link: a cb_nodes=1 hint, or an "
        "MPI-IO that chose one aggregator."
        if k == 1
        else f"{k} aggregators carry the whole file where the job could use {spread}: a cb_nodes hint, or an MPI-IO "
        "that chose few aggregators."
    )

    def gain(b: Funnel) -> float:
        # The time beyond what the job's possible aggregators would take: k of them against the spread
        return max(0.0, 1 - b[4] / _spread(ctx, t, _mpi_writers(b[1]) if writes else _mpi_readers(b[1]), b[3]))

    return Hit(
        message=f"{f.path}{more}: {calls:,} collective MPI-IO {noun}s from {ranks:,} ranks{nodes} all reached "
        f"the file system through {who}, which issued every one of its {stats.ops:,} POSIX {noun}s "
        f"({compact_bytes(stats.bytes)}){layout}. {what}",
        evidence=[
            *_funnel_metrics(op, calls, ranks, stats, k),
            *([Metric(name="stripe_count", value=stripes, unit=Unit.COUNT)] if stripes else []),
            *([Metric(name="aggregators_possible", value=spread, unit=Unit.COUNT)] if k > 1 else []),
        ],
        files=_funnel_files(ctx, op, bad),
        files_total=len(bad),
        ranks=ids,
        cost=_partial_guard(
            ctx,
            costs.files_time_cost(
                ctx, {int(b[0].record_id): gain(b) for b in bad}, ("WRITE",) if writes else ("READ",)
            ),
            f"the aggregators' {noun} time on the file, less what it would be over one aggregator per node "
            "(no more than the file's stripes)",
        ),
    )


def _funnel_hit(
    ctx: Context, t: Thresholds, op: str, bad: list[tuple[FileCrossLayer, LayerStats, LayerStats, LayerStats]]
) -> Hit:
    f, m, p, lus = bad[0]
    writes = op == "writes"
    noun = "write" if writes else "read"
    calls = (m.collective_writes if writes else m.collective_reads) or 0
    ranks = _mpi_writers(m) if writes else _mpi_readers(m)
    rank = p.writer_rank_ids[0] if writes and p.writer_rank_ids else -1
    who = f"rank {rank}" if rank >= 0 else "one rank"
    stats = getattr(p, op)
    more = f" ({len(bad)} files; the largest shown)" if len(bad) > 1 else ""
    ost = f" (OST {lus.osts[0]})" if lus.osts else ""
    return Hit(
        message=f"{f.path}{more} has stripe count 1{ost}: {calls:,} collective MPI-IO {noun}s "
        f"from {ranks:,} ranks all reached the file system through {who}, which issued "
        f"every one of its {stats.ops:,} POSIX {noun}s ({compact_bytes(stats.bytes)}). MPI-IO places its "
        f"aggregators per stripe, so one stripe means one aggregator and one OST for the whole job.",
        evidence=[
            Metric(name="stripe_count", value=1, unit=Unit.COUNT),
            *_funnel_metrics(op, calls, ranks, stats),
        ],
        files=_funnel_files(ctx, op, bad),
        files_total=len(bad),
        ranks=[rank] if rank >= 0 else [],
        cost=_partial_guard(
            ctx,
            costs.files_time_cost(
                ctx,
                {
                    int(b[0].record_id): 1
                    - 1 / min(_mpi_writers(b[1]) if writes else _mpi_readers(b[1]), t.lustre_spread_osts)
                    for b in bad
                },
                ("WRITE",) if writes else ("READ",),
            ),
            f"the lone aggregator's {noun} time on the file, less what it would be over up to "
            f"{t.lustre_spread_osts} stripes and aggregators",
        ),
    )


def _mpi_rw(m: LayerStats) -> float:
    return m.reads.time_s + m.writes.time_s


def _posix_rw(p: LayerStats) -> float:
    return p.reads.time_s + p.writes.time_s


@check(
    "X04",
    title="Time inside MPI-IO above the POSIX calls beneath it",
    layer=Layer.MPIIO,
    severity=Severity.WARNING,
    requires=MPIIO,
    family="mpiio-gap",
)
def mpiio_gap(ctx: Context, t: Thresholds) -> Hit | None:
    # MPI-IO timers contain the POSIX calls ROMIO makes for the rank; the rest is waiting: in collective
    # calls for the other ranks (imbalance before the call), for the two-phase exchange and for the few
    # aggregators doing the POSIX work; in independent calls for file locks (data sieving locks the region
    # it reads and rewrites). Darshan times both layers, so the gap is measured, per file.
    # Detection and cost on the critical path, per file: the MPI-IO time of its slowest rank less the POSIX
    # time of its busiest POSIX rank (under collective I/O an aggregator). Summed over ranks the gap is large
    # under any collective I/O (every rank waits while a few aggregators write): that alone is no finding.
    mp, px = ctx.mpiio_records, ctx.posix_records
    mpi_crit = costs.per_file_on_critical_path(
        ctx, mp, (mp["MPIIO_F_READ_TIME"] + mp["MPIIO_F_WRITE_TIME"]).astype(float), "MPIIO"
    )
    posix_crit = costs.per_file_on_critical_path(
        ctx, px, (px["POSIX_F_READ_TIME"] + px["POSIX_F_WRITE_TIME"]).astype(float)
    )
    s = ctx.io_share
    cap = s.slowest_rank_io_s if s is not None else float("inf")
    runtime = s.runtime_s if s is not None else ctx.meta.runtime_s
    bad: list[tuple[FileCrossLayer, LayerStats, LayerStats, float]] = []
    seconds = 0.0
    for f in all_files(ctx):
        m, p = f.layer("MPI-IO"), f.layer("POSIX")
        if m is None or p is None or _mpi_rw(m) <= 0:
            continue
        rid = int(f.record_id)
        mpi = min(mpi_crit.get(rid, 0.0), cap)
        posix = min(posix_crit.get(rid, 0.0), cap)
        gap = mpi - posix
        # Mostly waiting (half the MPI-IO time), or waiting that is run time worth having back whatever the
        # aggregators' own POSIX time: 314 s of a 651 s MPI-IO read is 48 % of the call, and of the run.
        costly = gap >= t.xlayer_gap_min_seconds and runtime > 0 and gap >= t.xlayer_gap_runtime_share * runtime
        if mpi > 0 and (gap >= t.xlayer_gap_share * mpi or costly):
            bad.append((f, m, p, gap))
            seconds += gap
    if not bad:
        return None
    bad.sort(key=lambda b: (-b[3], b[0].record_id))
    f, m, p, gap = bad[0]
    coll = (m.collective_writes or 0) + (m.collective_reads or 0)
    indep = (m.independent_writes or 0) + (m.independent_reads or 0)
    collective = coll >= indep
    pw = p.writer_ranks if p.writer_ranks is not None else p.ranks
    mw = _mpi_writers(m)
    if collective:
        few = ""
        if pw and mw and pw < mw:
            few = f" Only {pw:,} of the {mw:,} ranks issued POSIX writes (the aggregators)."
        why = (
            f"The calls are collective: ranks waited for each other (some reach the call later than others), for the "
            f"two-phase data exchange, or for too few aggregators.{few}"
        )
        recs: tuple[str, ...] = ("mpiio-collective-wait", "romio-hints")
    else:
        why = (
            "The calls are independent: time inside MPI-IO but outside POSIX calls is mostly waiting on file locks "
            "(ROMIO's data sieving locks the region it reads and rewrites) on a shared file."
        )
        recs = ("avoid-shared-file-locks", "mpiio-collective-io", "romio-hints")
        if ctx.file_system == "nfs":
            # ROMIO's NFS driver locks the file around every independent write: the file system is the problem.
            recs = ("use-scratch-file-system", *recs)
            why += " On NFS, ROMIO locks the file around every write."
    more = f" ({len(bad)} files; the largest shown)" if len(bad) > 1 else ""
    total_gap = sum(_mpi_rw(b[1]) - _posix_rw(b[2]) for b in bad)
    share = 1 - _posix_rw(p) / _mpi_rw(m)
    return Hit(
        message=f"{f.path}{more}: {human_seconds(_mpi_rw(m))} inside MPI-IO reads and writes (summed over ranks) "
        f"over {human_seconds(_posix_rw(p))} of POSIX reads and writes beneath them; on the critical path, MPI-IO "
        f"took {human_seconds(gap)} longer than the POSIX calls of the busiest aggregator"
        # The cost counts every file: say so beside the largest one's, so the card's two numbers are not one fact
        + (f" ({human_seconds(min(seconds, cap))} over all {len(bad)} files)" if len(bad) > 1 else "")
        + f". {why}",
        evidence=[
            Metric(name="mpiio_time", value=_mpi_rw(m), unit=Unit.SECONDS, description="summed over ranks"),
            Metric(name="posix_time", value=_posix_rw(p), unit=Unit.SECONDS, description="summed over ranks"),
            Metric(name="gap_time", value=total_gap, unit=Unit.SECONDS, description="summed over ranks and files"),
            Metric(name="gap_share", value=share, unit=Unit.RATIO, description="summed over ranks"),
            Metric(name="critical_path_gap", value=gap, unit=Unit.SECONDS),
            Metric(name="collective_calls", value=coll, unit=Unit.COUNT),
            Metric(name="independent_calls", value=indep, unit=Unit.COUNT),
        ],
        files=[
            _evidence_file(
                ctx,
                b[0],
                Metric(name="mpiio_time", value=_mpi_rw(b[1]), unit=Unit.SECONDS),
                Metric(name="posix_time", value=_posix_rw(b[2]), unit=Unit.SECONDS),
            )
            for b in bad[: ctx.top_n]
        ],
        files_total=len(bad),
        ranks=p.writer_rank_ids,
        extra_recommendations=recs,
        cost=_partial_guard(
            ctx,
            seconds,
            "per file, the slowest rank's MPI-IO read and write time less the busiest POSIX rank's time beneath it",
            measured=True,
        ),
    )


@check(
    "X05",
    title="Reads beneath MPI-IO that the application never asked for (read-modify-write)",
    layer=Layer.MPIIO,
    severity=Severity.WARNING,
    requires=MPIIO,
    recommendations=("avoid-read-modify-write", "romio-hints"),
    family="rmw",
)
def unrequested_reads(ctx: Context, t: Thresholds) -> Hit | None:
    # ROMIO reads before it writes when a write leaves holes in a region it must write whole (data sieving,
    # and collective buffering of non-contiguous data): POSIX reads, often of zero bytes past the end of a
    # new file, on a file the application only writes, or more bytes read at POSIX than asked at MPI-IO.
    bad: list[tuple[FileCrossLayer, LayerStats, LayerStats, float]] = []
    for f in all_files(ctx):
        m, p = f.layer("MPI-IO"), f.layer("POSIX")
        if m is None or p is None or not p.reads.ops or not m.writes.ops:
            continue
        extra_ops = p.reads.ops - m.reads.ops
        by_ops = 1 - m.reads.ops / p.reads.ops
        by_bytes = 1 - m.reads.bytes / p.reads.bytes if p.reads.bytes else by_ops
        frac = max(min(by_ops, by_bytes), 0.0)
        if extra_ops >= t.impact_min_ops and frac >= 1 - 1 / t.xlayer_amplification:
            bad.append((f, m, p, frac))
    if not bad:
        return None
    bad.sort(key=lambda b: (-(b[2].reads.time_s * b[3]), b[0].record_id))
    f, m, p, frac = bad[0]
    seconds = costs.files_time_cost(ctx, {int(b[0].record_id): b[3] for b in bad}, ("READ",))
    zero = ""
    if p.reads.bytes < p.reads.ops * 64:
        zero = " (most of zero bytes: reads past the end of a file being written)"
    more = f" ({len(bad)} files; the largest shown)" if len(bad) > 1 else ""
    return Hit(
        message=f"{f.path}{more}: the application read {human_bytes(m.reads.bytes)} there through MPI-IO "
        f"({m.reads.ops:,} reads) but {p.reads.ops:,} POSIX reads of {human_bytes(p.reads.bytes)}{zero} took "
        f"{human_seconds(p.reads.time_s)} (summed over ranks) beneath its {m.writes.ops:,} MPI-IO writes: ROMIO "
        f"read regions before rewriting them (read-modify-write).",
        evidence=[
            Metric(name="mpiio_reads", value=m.reads.ops, unit=Unit.COUNT),
            Metric(name="mpiio_bytes_read", value=m.reads.bytes, unit=Unit.BYTES),
            Metric(name="posix_reads", value=p.reads.ops, unit=Unit.COUNT),
            Metric(name="posix_bytes_read", value=p.reads.bytes, unit=Unit.BYTES),
            Metric(name="posix_read_time", value=p.reads.time_s, unit=Unit.SECONDS, description="summed over ranks"),
            Metric(name="mpiio_writes", value=m.writes.ops, unit=Unit.COUNT),
        ],
        files=[
            _evidence_file(
                ctx,
                b[0],
                Metric(name="posix_reads", value=b[2].reads.ops, unit=Unit.COUNT),
                Metric(name="posix_read_time", value=b[2].reads.time_s, unit=Unit.SECONDS),
            )
            for b in bad[: ctx.top_n]
        ],
        files_total=len(bad),
        ranks=p.writer_rank_ids,
        cost=_partial_guard(
            ctx,
            seconds,
            "POSIX read time on those files beyond what MPI-IO asked for, on the busiest rank",
            measured=True,
        ),
    )


@check(
    "X06",
    title="Bytes written grow between layers",
    layer=Layer.HDF5,
    severity=Severity.WARNING,
    requires=("MPI-IO",),
    recommendations=("avoid-byte-amplification",),
    # The extra bytes are also bytes written more than once (P10, T05): one lost time, named once.
    family="redundant",
)
def write_amplification(ctx: Context, t: Thresholds) -> Hit | None:
    # Each layer should pass the application's bytes down once. HDF5 fill values, chunk rewrites or
    # data-sieving rewrites make a lower layer write more than the layer above asked for.
    bad: list[tuple[FileCrossLayer, str, str, int, int, float]] = []
    for f in all_files(ctx):
        layers = [lay for lay in f.layers if lay.layer in ("HDF5", "PnetCDF", "MPI-IO", "POSIX") and lay.writes.bytes]
        for upper, lower in itertools.pairwise(layers):
            if lower.writes.bytes < t.xlayer_min_bytes:
                continue
            ratio = lower.writes.bytes / upper.writes.bytes
            if ratio >= t.xlayer_amplification:
                bad.append((f, upper.layer, lower.layer, upper.writes.bytes, lower.writes.bytes, ratio))
                break
    if not bad:
        return None
    bad.sort(key=lambda b: (-(b[4] - b[3]), b[0].record_id))
    f, up, low, ub, lb, ratio = bad[0]
    frac = {int(b[0].record_id): 1 - 1 / b[5] for b in bad}
    low_module = "MPIIO" if low == "MPI-IO" else "POSIX"
    records = ctx.mpiio_records if low_module == "MPIIO" else ctx.posix_records
    seconds = costs.on_critical_path(
        ctx,
        records,
        records[f"{low_module}_F_WRITE_TIME"].astype(float) * _per_record(records["id"], frac),
        prefix=low_module,
    )
    more = f" ({len(bad)} files; the largest shown)" if len(bad) > 1 else ""
    return Hit(
        message=f"{f.path}{more}: {up} wrote {human_bytes(ub)} but {low} beneath it wrote {human_bytes(lb)} "
        f"({ratio:.2f}x): {human_bytes(lb - ub)} were written that the application never asked for.",
        evidence=[
            Metric(name="upper_layer", value=up, unit=Unit.TEXT),
            Metric(name="lower_layer", value=low, unit=Unit.TEXT),
            Metric(name="upper_bytes_written", value=ub, unit=Unit.BYTES),
            Metric(name="lower_bytes_written", value=lb, unit=Unit.BYTES),
            Metric(name="amplification", value=ratio, unit=Unit.RATIO, description="times"),
        ],
        files=[
            _evidence_file(
                ctx,
                b[0],
                Metric(name="upper_bytes_written", value=b[3], unit=Unit.BYTES),
                Metric(name="lower_bytes_written", value=b[4], unit=Unit.BYTES),
            )
            for b in bad[: ctx.top_n]
        ],
        files_total=len(bad),
        cost=_partial_guard(
            ctx,
            seconds,
            f"the extra bytes' share of {low}'s write time on those files, on the busiest rank",
        ),
    )


@check(
    "J03",
    title="Metadata calls take a large share of the I/O time (metadata storm)",
    layer=Layer.JOB,
    severity=Severity.WARNING,
    recommendations=("reduce-metadata",),
    kind=Kind.CAUSE,
    family="metadata",
)
def metadata_storm(ctx: Context, t: Thresholds) -> Hit | None:
    # Metadata-dominated I/O: opens, stats, seeks, closes and syncs take more of the I/O time than the data. Judged
    # on the job's summed time and on the critical path: the rank with the most metadata time (its own records
    # plus the slowest rank's share of the shared ones), since one rank creating every file while the others
    # write data is metadata-bound where the sum over ranks is not. The cost is that rank's metadata time.
    s = ctx.io_share
    if s is None:
        return None
    total = s.read_s + s.write_s + s.meta_s
    if total <= 0:
        return None
    busiest = costs.busiest_rank_metadata(ctx)
    rank_io = busiest.meta_s + busiest.data_s
    rank_share = busiest.meta_s / rank_io if rank_io > 0 else 0.0
    if s.meta_s < t.metadata_storm_share * total and rank_share < t.metadata_storm_share:
        return None
    calls = _metadata_calls(ctx)
    opens, stats, files = calls["opens"], calls["stats"], calls["files"]
    ranks = max(ctx.meta.nprocs, 1)
    per_rank = calls["rank_files"] / ranks
    who = f"rank {busiest.rank}" if busiest.rank is not None else "the slowest rank"
    per_file = f", {opens / files:.1f} opens" + (f" and {stats / files:.1f} stats" if stats else "") if files else ""
    # What the data was: "32.00 MiB in 65,536 requests of 512 B" says why so little data took so many opens
    data = (
        f" for {human_bytes(calls['bytes'])} in {_n(calls['requests'], 'request')} of "
        f"{human_bytes(calls['bytes'] / calls['requests'])} on average"
        if calls["requests"]
        else ""
    )
    most = _dominant_group(ctx, files, opens + stats)
    if most is None:
        named = ""
    elif most.opens in (0, most.files) or most.opens == opens:
        named = f", {most.files:,} of them `{most.pattern}`"
    else:
        # The files the calls went to, when that is not the same count: 201 files each opened by 512 ranks
        named = f", {most.opens:,} of them on the {most.files:,} `{most.pattern}` files"
    if most is not None and named and most.file_system == "nfs":
        named += " on NFS"  # every open and stat is a round trip to one NFS server: where they go is the lever
    # Opens of the software's own files (Python modules, shared libraries): staging the environment is the lever,
    # combining the job's data files is not
    software = most is not None and bool(_SOFTWARE_FILE.search(most.pattern))
    return Hit(
        # The summed time is what a user adds up from the counters ("1,959 s of metadata for 1.25 s of writes")
        subject=f"{opens:,} opens of {files:,} files{named}; {human_seconds(s.meta_s)} of metadata calls summed over "
        f"ranks against {human_seconds(s.read_s + s.write_s)} of reads and writes",
        message=f"Metadata calls (open, stat, seek, close, sync) took {pct(s.meta_s / total)} of the job's I/O time "
        f"({human_seconds(s.meta_s)} summed over ranks; the data took {human_seconds(s.read_s + s.write_s)}"
        f"{data}) and "
        f"{human_seconds(busiest.meta_s)} on {who}, against {human_seconds(busiest.data_s)} of its reads and writes: "
        f"{_n(opens, 'open')} and {_n(stats, 'stat')} of {_n(files, 'file')}{named} ({per_rank:,.1f} files per rank "
        "on average"
        f"{per_file} per file).",
        evidence=[
            Metric(name="meta_time", value=s.meta_s, unit=Unit.SECONDS, description="summed over ranks"),
            Metric(name="meta_share", value=s.meta_s / total, unit=Unit.RATIO),
            Metric(name="busiest_rank_meta_time", value=busiest.meta_s, unit=Unit.SECONDS),
            Metric(name="busiest_rank_data_time", value=busiest.data_s, unit=Unit.SECONDS),
            Metric(name="busiest_rank_meta_share", value=rank_share, unit=Unit.RATIO),
            Metric(name="opens", value=opens, unit=Unit.COUNT),
            Metric(name="stats", value=stats, unit=Unit.COUNT),
            Metric(name="files", value=files, unit=Unit.COUNT),
            Metric(name="files_written", value=calls["written"], unit=Unit.COUNT),
            Metric(name="files_per_rank", value=round(per_rank, 2), unit=Unit.COUNT, description="mean over ranks"),
        ],
        ranks=[busiest.rank] if busiest.rank is not None else [],
        lead_recommendations=("stage-software-environment",) if software else (),
        cost=costs.measured(
            busiest.meta_s,
            "metadata time of the rank with the most of it, at the top layer (a shared record counts with the "
            "slowest rank's share)",
            ops=(opens + stats) or None,
        ),
    )


_SOFTWARE_FILE = re.compile(r"(\.pyc?|\.so(\.[\d#]+)*|site-packages/.*|dist-packages/.*)$")


def _dominant_group(ctx: Context, files: int, calls: int = 0) -> FileGroup | None:
    """The name pattern the metadata calls went to ("1,116 of them `pkg/mod#.py`"): what the user recognises as
    the files to pack or stage. The group holding most of the opens and stats, where one does (201 shared
    configs every rank opens outweigh 512 files opened once); else the one holding at least half of the files.
    Of patterns holding nearly as many, the narrowest (a numbered name over a folder's files of one extension,
    over every file of the extension)."""
    groups = [g for g in file_groups(ctx) if g.files < files]
    by_calls = [g for g in groups if calls > 0 and 2 * (g.opens + g.stats) >= calls]
    if by_calls:
        top = max(g.opens + g.stats for g in by_calls)
        near = [g for g in by_calls if g.opens + g.stats >= 0.95 * top]
        best = max(near, key=lambda g: (_narrowness(g.pattern), g.opens + g.stats))
        return _short(best)
    found = [g for g in groups if 2 * g.files >= files]
    if not found:
        return None
    most = max(g.files for g in found)
    best = max((g for g in found if g.files >= 0.95 * most), key=lambda g: (_narrowness(g.pattern), g.files))
    return _short(best)


def _short(best: FileGroup) -> FileGroup:
    parts = best.pattern.split("/")
    # "samples/#/sample_#.csv" and "cases/0/case_#.txt", not "#/sample_#.csv" or "0/case_#.txt"
    keep = 3 if len(parts) >= 3 and ("#" in parts[-2] or parts[-2].isdigit()) else 2
    return best.model_copy(update={"pattern": "/".join(parts[-keep:])})


def _narrowness(pattern: str) -> int:
    if pattern.startswith("*."):
        return 0
    if pattern.endswith("/*"):
        return 1
    return 2 if "/*." in pattern or "#" in pattern.rpartition("/")[0] else 3


_OPENS = {
    "POSIX": ("POSIX_OPENS",),
    "STDIO": ("STDIO_OPENS",),
    "MPI-IO": ("MPIIO_INDEP_OPENS", "MPIIO_COLL_OPENS"),
    "DFS": ("DFS_OPENS",),
    "DAOS": ("DAOS_OBJ_OPENS",),
}
_STATS = {"POSIX": ("POSIX_STATS",), "DFS": ("DFS_STATS",)}


def _metadata_calls(ctx: Context) -> dict[str, int]:
    """Opens and stats at each file's top layer, distinct files, files written, and (file, rank) pairs (a shared
    record is every rank's)."""
    opens = stats = 0
    ids: set[int] = set()
    written: set[int] = set()
    rank_files = moved = requests = 0
    nprocs = max(ctx.meta.nprocs, 1)
    for layer, records in ctx.counted_layers:
        if not len(records):
            continue
        br, bw = TOP_LAYER_BYTES[layer]
        moved += int(records[br].sum()) + int(records[bw].sum())
        done = module_calls(layer, records)
        requests += done.reads + done.writes
        opens += sum(int(records[c].sum()) for c in _OPENS.get(layer, ()) if c in records)
        stats += sum(int(records[c].sum()) for c in _STATS.get(layer, ()) if c in records)
        rid = records["id"]
        ids.update(int(i) for i in np.unique(rid).tolist())
        wcol = {"MPI-IO": "MPIIO_BYTES_WRITTEN"}.get(layer, f"{layer}_BYTES_WRITTEN")
        if wcol in records:
            written.update(int(i) for i in np.unique(rid[records[wcol] > 0]).tolist())
        shared = records["rank"] < 0
        rank_files += int((~shared).sum()) + int(shared.sum()) * nprocs
    return {
        "opens": opens,
        "stats": stats,
        "files": len(ids),
        "written": len(written),
        "rank_files": rank_files,
        "bytes": moved,
        "requests": requests,
    }


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"
