"""Is I/O why the job is slow? Share of the run time spent in I/O."""

from __future__ import annotations

from iodiag.analysis import costs
from iodiag.analysis.models import IOShare, Layer, Metric, Severity, Unit
from iodiag.analysis.registry import Hit, Kind, check
from iodiag.analysis.views.context import Context, pct
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes, human_seconds


def _evidence(s: IOShare) -> list[Metric]:
    return [
        Metric(name="runtime", value=s.runtime_s, unit=Unit.SECONDS),
        Metric(
            name="slowest_rank_io_time",
            value=s.slowest_rank_io_s,
            unit=Unit.SECONDS,
            description="read + write + metadata time of the slowest rank, each file counted at its top layer",
        ),
        Metric(name="mean_rank_io_time", value=s.mean_rank_io_s, unit=Unit.SECONDS),
        Metric(name="io_share_slowest_rank", value=s.share_slowest, unit=Unit.RATIO),
        Metric(name="io_share_mean_rank", value=s.share_mean, unit=Unit.RATIO),
    ]


@check(
    "J01",
    title="I/O is not why this job is slow",
    layer=Layer.JOB,
    severity=Severity.OK,
    recommendations=("io-not-bottleneck",),
    kind=Kind.SUMMARY,
)
def io_not_bottleneck(ctx: Context, t: Thresholds) -> Hit | None:
    # The verdict decides (Context.io_matters); this finding states it, so the two cannot disagree.
    s = ctx.io_share
    if s is None or ctx.io_matters is not False:
        return None
    small = (
        f" Under {human_seconds(t.io_matters_min_seconds)} of I/O leaves nothing worth tuning."
        if s.slowest_rank_io_s < t.io_matters_min_seconds and s.share_slowest >= t.io_share_low
        else ""
    )
    return Hit(
        message=f"I/O took {human_seconds(s.slowest_rank_io_s)} on the busiest rank, {pct(s.share_slowest)} of "
        f"the {human_seconds(s.runtime_s)} run time (average rank: {pct(s.share_mean)}).{small} I/O is not why "
        f"this job is slow; look at computation and communication.",
        evidence=_evidence(s),
        ranks=[s.slowest_rank] if s.slowest_rank is not None else [],
    )


@check(
    "J02",
    title="I/O takes a large share of the run time",
    layer=Layer.JOB,
    severity=Severity.WARNING,
    kind=Kind.SUMMARY,
)
def io_dominates(ctx: Context, t: Thresholds) -> Hit | None:
    s = ctx.io_share
    if s is None or s.runtime_s <= 0 or s.share_slowest < t.io_share_high or not ctx.io_matters:
        return None
    return Hit(
        message=f"I/O took {human_seconds(s.slowest_rank_io_s)} on the busiest rank, {pct(s.share_slowest)} of "
        f"the {human_seconds(s.runtime_s)} run time (average rank: {pct(s.share_mean)}): I/O is a main "
        f"reason for the run time, so the I/O findings below matter.",
        evidence=_evidence(s),
        ranks=[s.slowest_rank] if s.slowest_rank is not None else [],
        severity=Severity.CRITICAL if s.share_slowest >= min(2 * t.io_share_high, 0.9) else None,
        cost=costs.measured(s.slowest_rank_io_s, "the busiest rank's I/O time"),
    )


@check(
    "J04",
    title="The busiest rank spends far longer in I/O than the average rank",
    layer=Layer.JOB,
    severity=Severity.WARNING,
    recommendations=("balance-rank-io",),
    kind=Kind.CAUSE,
    family="imbalance",
)
def rank_io_imbalance(ctx: Context, t: Thresholds) -> Hit | None:
    # Every rank waits for the slowest at the next synchronization, so the busiest rank's I/O time beyond
    # the mean rank's is run time lost, whatever made it slow (more data, a slow OST, a straggling node).
    # Measured on the same per-rank times as the I/O share; Drishti's P19 divides the spread by the time
    # summed over all ranks, which cannot fire on thousands of ranks however slow one of them is.
    s = ctx.io_share
    if s is None or ctx.meta.nprocs < 2 or s.mean_rank_io_s <= 0:
        return None
    gap = s.slowest_rank_io_s - s.mean_rank_io_s
    if gap < t.io_matters_min_seconds:
        return None
    # A ratio alone misses one rank's serial phase beside a long phase all ranks share (1.3x can be minutes);
    # an absolute share alone would flag noise on short runs, so either suffices.
    lost_share = gap / s.runtime_s if s.runtime_s > 0 else 0.0
    by_ratio = s.slowest_rank_io_s >= t.rank_io_imbalance_factor * s.mean_rank_io_s
    by_share = lost_share >= t.rank_io_imbalance_runtime_share
    # Work the busiest rank did alone is worth naming when it is a real part of that rank's I/O, even where a
    # long phase every rank shares hides it in the ratio and a long run hides it in the share of the run
    by_solo = gap >= t.rank_io_solo_share * s.slowest_rank_io_s
    if not by_ratio and not by_share and not by_solo:
        return None
    who = f"rank {s.slowest_rank}" if s.slowest_rank is not None else "the busiest rank"
    message = (
        f"{who.capitalize()} spent {human_seconds(s.slowest_rank_io_s)} in I/O, "
        f"{s.slowest_rank_io_s / s.mean_rank_io_s:.1f}x the average rank's {human_seconds(s.mean_rank_io_s)}: the "
        f"other ranks waited about {human_seconds(gap)} for it."
    )
    solo_s, files, solo_files = 0.0, [], 0
    subject = who
    if s.slowest_rank is not None:
        solo_bytes, solo_s, by_id, median = ctx.solo_work(s.slowest_rank)
        if solo_s >= 0.5 * gap and solo_bytes >= 2 * median:
            # Extra work of its own, not the same work done slower: say which files, so the fix is obvious.
            ranked = sorted(by_id.items(), key=lambda kv: -kv[1])
            solo_files = len(ranked)
            files = [
                ctx.file(i, Metric(name="rank_io_time", value=v, unit=Unit.SECONDS)) for i, v in ranked[: ctx.top_n]
            ]
            message += (
                f" {human_seconds(solo_s)} of it went to {len(by_id):,} file(s) no other rank touched "
                f"({human_bytes(solo_bytes)}): work this rank did alone while the others waited."
            )
            # The headline names what the rank did alone: "rank 0 alone on 700.00 GiB in 1 file"
            subject = f"{who} alone on {human_bytes(solo_bytes)} in {solo_files:,} file(s)"
        else:
            solo_s = 0.0
    heavy = ctx.shared_heavy(s.slowest_rank) if s.slowest_rank is not None and not solo_s else None
    heavy_bytes = 0
    if heavy is not None:
        rid, mine, total = heavy
        even = total / max(ctx.meta.nprocs, 1)
        if mine >= 2 * even and mine >= 0.25 * total:
            # More data, not slower storage: the shared record's slowest rank carried most of the file
            heavy_bytes = mine
            base = ctx.path(rid).rsplit("/", 1)[-1]
            message += (
                f" On the shared file {base}, Darshan kept it as the slowest rank with {human_bytes(mine)} of the "
                f"file's {human_bytes(total)} ({pct(mine / total)}), where an even share is {human_bytes(even)}."
            )
            subject = f"{who}: {human_bytes(mine)} of the shared {base}"
            files = [ctx.file(rid, Metric(name="rank_bytes", value=mine, unit=Unit.BYTES))]
    if not by_ratio and not solo_s:
        # A modest spread with no work of the busiest rank's own behind it is how collective buffering looks
        # (the aggregators write, the others hand over their data) or noise: not a cause to name.
        return None
    if not by_ratio and not by_share and solo_s < t.rank_io_solo_share * s.slowest_rank_io_s:
        return None  # named for its own work alone, and that work is too small a part of the rank's I/O
    return Hit(
        message=message,
        evidence=[
            Metric(name="slowest_rank_io_time", value=s.slowest_rank_io_s, unit=Unit.SECONDS),
            Metric(name="mean_rank_io_time", value=s.mean_rank_io_s, unit=Unit.SECONDS),
            Metric(
                name="imbalance", value=s.slowest_rank_io_s / s.mean_rank_io_s, unit=Unit.RATIO, description="times"
            ),
            Metric(name="solo_io_time", value=solo_s, unit=Unit.SECONDS),
            Metric(name="shared_rank_bytes", value=heavy_bytes, unit=Unit.BYTES),
        ],
        files=files,
        files_total=solo_files,
        subject=subject,
        ranks=[s.slowest_rank] if s.slowest_rank is not None else [],
        cost=costs.measured(gap, "the busiest rank's I/O time less the mean rank's"),
    )
