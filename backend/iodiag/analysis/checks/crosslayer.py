"""Cross-layer checks (X codes): a transformation between layers that hurts.

They read the cross-layer summary (``analysis/crosslayer.py``): per file, the same requests as
HDF5/PnetCDF, MPI-IO and POSIX saw them, the ranks that issued them and the Lustre layout.
"""

from __future__ import annotations

from iodiag.analysis.context import Context, pct
from iodiag.analysis.crosslayer import FileCrossLayer, LayerStats, all_files, compact_bytes
from iodiag.analysis.models import FileEvidence, Layer, Metric, Severity, Unit
from iodiag.analysis.registry import Hit, check
from iodiag.core.thresholds import Thresholds

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
    )


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
    )


@check(
    "X03",
    title="Stripe count 1 forces a single MPI-IO aggregator",
    layer=Layer.LUSTRE,
    severity=Severity.CRITICAL,
    requires=("MPI-IO", "POSIX", "LUSTRE"),
    recommendations=("lustre-stripe-count", "romio-hints"),
)
def single_stripe_single_aggregator(ctx: Context, t: Thresholds) -> Hit | None:
    # ROMIO's Lustre driver (and Cray MPI-IO) give each stripe its aggregator(s): by default as many
    # aggregators as stripes. A shared file with one stripe then has one aggregator: the MPI-IO layer
    # looks balanced (every rank makes the same collective calls) while one rank does every POSIX
    # write, to one OST.
    bad: list[tuple[FileCrossLayer, LayerStats, LayerStats, LayerStats]] = []
    for f in all_files(ctx):
        pair = _collective_file(f, t)
        lus = f.layer("Lustre")
        if pair is None or lus is None or lus.stripe_count != 1:
            continue
        m, p = pair
        if _mpi_writers(m) >= t.xlayer_min_ranks and p.writer_ranks == 1:
            bad.append((f, m, p, lus))
    if not bad:
        return None
    bad.sort(key=lambda b: (-b[2].writes.bytes, b[0].record_id))
    f, m, p, lus = bad[0]
    rank = p.writer_rank_ids[0] if p.writer_rank_ids else -1
    more = f" ({len(bad)} files; the largest shown)" if len(bad) > 1 else ""
    ost = f" (OST {lus.osts[0]})" if lus.osts else ""
    return Hit(
        message=f"{f.path}{more} has stripe count 1{ost}: {m.collective_writes:,} collective MPI-IO writes "
        f"from {_mpi_writers(m):,} ranks all reached the file system through rank {rank}, which issued "
        f"every one of its {p.writes.ops:,} POSIX writes ({compact_bytes(p.writes.bytes)}). MPI-IO places its "
        f"aggregators per stripe, so one stripe means one aggregator and one OST for the whole job.",
        evidence=[
            Metric(name="stripe_count", value=1, unit=Unit.COUNT),
            Metric(name="collective_writes", value=m.collective_writes or 0, unit=Unit.COUNT),
            Metric(name="mpiio_writer_ranks", value=_mpi_writers(m), unit=Unit.COUNT),
            Metric(name="posix_writer_ranks", value=1, unit=Unit.COUNT),
            Metric(name="posix_writes", value=p.writes.ops, unit=Unit.COUNT),
            Metric(name="bytes_written", value=p.writes.bytes, unit=Unit.BYTES),
        ],
        files=[
            _evidence_file(
                ctx,
                b[0],
                Metric(name="bytes_written", value=b[2].writes.bytes, unit=Unit.BYTES),
                Metric(name="mpiio_writer_ranks", value=_mpi_writers(b[1]), unit=Unit.COUNT),
            )
            for b in bad[: ctx.top_n]
        ],
        files_total=len(bad),
        ranks=[rank] if rank >= 0 else [],
    )
