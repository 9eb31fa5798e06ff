"""Checks on Darshan's HEATMAP module: when the job did I/O, and which ranks moved the bytes.

Many production logs carry the heatmap (bytes per rank per time bin) but no DXT trace. These
checks give the trace checks' answers at the heatmap's resolution, and say so in every message.

They are silent when the profile has no HEATMAP, and also when DXT traces are loaded: the T
checks then answer the same questions (phases, stragglers, rank 0, unbalanced ranks) from every
request's own start and end, which is strictly better than bins several seconds wide.
"""

from __future__ import annotations

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.models import Layer, Metric, Severity, Unit, window_metrics
from iodiag.analysis.registry import Hit, check
from iodiag.analysis.views.context import Context, pct
from iodiag.analysis.views.heatmap import (
    HEATMAP,
    Heatmap,
    HeatmapPhases,
    heatmaps,
    job_heatmap,
    phase_imbalance,
    phases,
    rank_bytes,
    top_heatmap,
)
from iodiag.analysis.views.trace import summaries, traces
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes, human_seconds

_MAX_LISTED = 6


def _maps(ctx: Context) -> dict[str, Heatmap]:
    """The profile's heatmaps; empty when DXT traces are loaded (the T checks cover it then)."""
    traced = bool(traces(ctx.profile) or summaries(ctx.profile))  # held or streamed
    return ctx.memo("heatmap.maps", lambda: {} if traced else heatmaps(ctx.profile))


def _runtime(ctx: Context, hm: Heatmap) -> float:
    rt = float(ctx.meta.runtime_s)
    return rt if rt > 0 else max(hm.n_bins * hm.bin_width, 1e-9)


def _phases(ctx: Context, t: Thresholds, key: str, hm: Heatmap) -> HeatmapPhases:
    rt = _runtime(ctx, hm)
    return ctx.memo(f"heatmap.phases.{key}", lambda: phases(hm, t.trace_phase_min_gap * rt, rt))


def _source(hm: Heatmap) -> list[Metric]:
    return [
        Metric(name="heatmap", value=hm.module, unit=Unit.TEXT, description="HEATMAP module(s) the finding reads"),
        Metric(name="bin_width", value=hm.bin_width, unit=Unit.SECONDS, description="heatmap time resolution"),
    ]


def _kind(read: int, write: int) -> str:
    total = read + write
    if total == 0:
        return "idle"
    if write >= 0.9 * total:
        return "write"
    if read >= 0.9 * total:
        return "read"
    return "read/write"


def _caveat(hm: Heatmap, what: str) -> str:
    return (
        f" The heatmap only resolves time to its {human_seconds(hm.bin_width)} bins and holds no files, request "
        f"sizes or offsets: {what} need DXT (DXT_POSIX / DXT_MPIIO) to be sure."
    )


# --- H01 ---------------------------------------------------------------------------------------------


@check(
    "H01",
    title="I/O phases over the run (from the heatmap)",
    layer=Layer.JOB,
    severity=Severity.INFO,
    requires=(HEATMAP,),
)
def heatmap_timeline(ctx: Context, t: Thresholds) -> Hit | None:
    """The job's I/O timeline: phases of busy bins, merged with the same gap rule as the DXT phases."""
    hm = job_heatmap(_maps(ctx))
    if hm is None or hm.bytes == 0:
        return None
    ph = _phases(ctx, t, "job", hm)
    if len(ph) == 0:
        return None
    runtime = _runtime(ctx, hm)
    nbytes = ph.bytes
    main = int(np.argmax(nbytes))
    dur = ph.duration
    kinds = [_kind(int(r), int(w)) for r, w in zip(ph.read, ph.write, strict=True)]
    counts = {k: kinds.count(k) for k in ("write", "read", "read/write") if k in kinds}
    summary = ", ".join(f"{n:,} {k}" for k, n in counts.items())
    listed = "; ".join(
        f"{kinds[i]} {ph.start[i]:.3f}–{ph.end[i]:.3f} s {human_bytes(int(nbytes[i]))} "
        f"({pct(float(dur[i]) / runtime)} of the run time)"
        for i in range(min(len(ph), _MAX_LISTED))
    )
    if len(ph) > _MAX_LISTED:
        listed += f"; and {len(ph) - _MAX_LISTED:,} more"
    busy = float(dur.sum())
    message = (
        f"The heatmap ({hm.module}) shows {len(ph):,} I/O phase(s) ({summary}): {listed}. "
        f"The main phase, {ph.start[main]:.3f}–{ph.end[main]:.3f} s, moves {human_bytes(int(nbytes[main]))} "
        f"({pct(float(nbytes[main]) / max(hm.bytes, 1))} of the bytes) in {pct(float(dur[main]) / runtime)} of the run "
        f"time; all phases together span {human_seconds(busy)} ({pct(min(busy / runtime, 1.0))} of the run time)."
        + _caveat(hm, "when I/O starts and ends within a bin, how long each rank waited in it, and which files")
    )
    return Hit(
        message=message,
        evidence=[
            Metric(name="phases", value=len(ph), unit=Unit.COUNT),
            *(Metric(name=f"{k.replace('/', '_')}_phases", value=n, unit=Unit.COUNT) for k, n in counts.items()),
            Metric(name="bytes", value=hm.bytes, unit=Unit.BYTES),
            Metric(name="main_phase_bytes", value=int(nbytes[main]), unit=Unit.BYTES),
            Metric(name="main_phase_bytes_read", value=int(ph.read[main]), unit=Unit.BYTES),
            Metric(name="main_phase_bytes_written", value=int(ph.write[main]), unit=Unit.BYTES),
            Metric(
                name="main_phase_share",
                value=float(dur[main]) / runtime,
                unit=Unit.RATIO,
                description="share of the run time",
            ),
            Metric(name="phase_time", value=busy, unit=Unit.SECONDS),
            Metric(name="phase_time_share", value=min(busy / runtime, 1.0), unit=Unit.RATIO),
            Metric(name="gap_threshold", value=ph.threshold, unit=Unit.SECONDS),
            *window_metrics(float(ph.start[main]), float(ph.end[main])),
            *_source(hm),
        ],
    )


# --- H02 ---------------------------------------------------------------------------------------------


@check(
    "H02",
    title="Some ranks move much more data than the others (from the heatmap)",
    layer=Layer.JOB,
    severity=Severity.WARNING,
    requires=(HEATMAP,),
    recommendations=("balance-rank-io",),
    family="imbalance",
)
def heatmap_imbalance(ctx: Context, t: Thresholds) -> list[Hit] | None:
    """Two variants. Rank 0 heavy: rank 0 moves more than ``heatmap_rank0_share`` of the bytes of a
    job with more than one rank. Unbalanced: within the busiest phase, ranks whose bytes exceed the
    mean + one std and (1 + margin) x the mean of the ranks moving bytes in it (T03's rule)."""
    hm = top_heatmap(_maps(ctx))
    if hm is None or hm.bytes == 0:
        return None
    hits: list[Hit] = []
    runtime = _runtime(ctx, hm)
    ph = _phases(ctx, t, "top", hm)

    per_rank = rank_bytes(hm)
    total = int(per_rank.sum())
    rank0 = int(per_rank[0]) if len(hm.ranks) and hm.ranks[0] == 0 else 0
    share0 = rank0 / total if total else 0.0
    rank0_heavy = ctx.meta.nprocs > 1 and rank0 >= t.heatmap_min_bytes and share0 > t.heatmap_rank0_share
    if rank0_heavy:
        busy0 = np.flatnonzero(hm.total[0] > 0)
        ws, we = float(busy0[0] * hm.bin_width), float(min((busy0[-1] + 1) * hm.bin_width, max(runtime, 0.0)))
        others = per_rank[hm.ranks != 0]
        median = float(np.median(others)) if len(others) else 0.0
        hits.append(
            Hit(
                message=f"Rank 0 moves {pct(share0)} of the bytes in the heatmap ({hm.module}): "
                f"{human_bytes(rank0)} of {human_bytes(total)}, between {ws:.3f} s and {we:.3f} s, in a job of "
                f"{ctx.meta.nprocs:,} ranks ({len(hm.ranks) - 1:,} other rank(s) with a heatmap record, median "
                f"{human_bytes(median)}): the other ranks likely wait while one rank serializes the I/O."
                + _caveat(hm, "how long the others waited, and whether rank 0 issues many small requests,"),
                evidence=[
                    Metric(name="rank0_bytes", value=rank0, unit=Unit.BYTES),
                    Metric(name="rank0_bytes_share", value=share0, unit=Unit.RATIO),
                    Metric(name="bytes", value=total, unit=Unit.BYTES),
                    Metric(
                        name="median_rank_bytes",
                        value=median,
                        unit=Unit.BYTES,
                        description="median over the other ranks with a heatmap record",
                    ),
                    Metric(name="heatmap_ranks", value=len(hm.ranks), unit=Unit.COUNT),
                    *window_metrics(ws, we),
                    *_source(hm),
                ],
                ranks=[0],
                cost=costs.unknown(
                    "the heatmap holds bytes per time bin, not each rank's time: see the trace or P codes"
                ),
                extra_recommendations=("use-parallel-io-library",),
            )
        )

    if len(ph):
        w = int(np.argmax(ph.bytes))
        imb = phase_imbalance(hm, ph, w, t.heatmap_imbalance_margin)
        over = imb.over[imb.bytes[imb.over] >= t.heatmap_min_bytes] if len(imb.over) else imb.over
        heavy = [int(r) for r in imb.ranks[over]]
        # With rank 0 alone flagged, the rank-0 finding above already says it.
        if len(imb.ranks) >= 3 and heavy and not (rank0_heavy and heavy == [0]):
            top = int(over[0])
            heavy_bytes = int(imb.bytes[over].sum())
            phase_bytes = int(imb.bytes.sum())
            ws, we = float(ph.start[w]), float(ph.end[w])
            shown = ", ".join(
                f"{r} ({human_bytes(int(b))})" for r, b in zip(heavy[:5], imb.bytes[over][:5], strict=False)
            )
            more = f" and {len(heavy) - 5:,} more" if len(heavy) > 5 else ""
            hits.append(
                Hit(
                    message=f"In the busiest I/O phase of the heatmap ({hm.module}), {ws:.3f}–{we:.3f} s with "
                    f"{human_bytes(phase_bytes)}, {len(heavy):,} of the {len(imb.ranks):,} ranks moving bytes each "
                    f"move more than the rank mean plus one standard deviation and "
                    f"{pct(1 + t.heatmap_imbalance_margin)} of the mean: rank(s) {shown}{more}; rank mean "
                    f"{human_bytes(imb.mean)}, standard deviation {human_bytes(imb.std)}. The heavy rank(s) move "
                    f"{pct(heavy_bytes / max(phase_bytes, 1))} of the "
                    f"phase's bytes, {float(imb.bytes[top]) / max(imb.mean, 1e-9):.1f}x the mean for rank "
                    f"{heavy[0]}: the others likely wait for them at the end of the phase."
                    + _caveat(
                        hm,
                        "whether they actually finish last (straggler timing within a bin), and their request sizes,",
                    ),
                    evidence=[
                        Metric(name="unbalanced_ranks", value=len(heavy), unit=Unit.COUNT),
                        Metric(
                            name="phase_ranks",
                            value=len(imb.ranks),
                            unit=Unit.COUNT,
                            description="ranks that moved bytes in the phase",
                        ),
                        Metric(name="phase_bytes", value=phase_bytes, unit=Unit.BYTES),
                        Metric(name="unbalanced_bytes", value=heavy_bytes, unit=Unit.BYTES),
                        Metric(name="unbalanced_bytes_share", value=heavy_bytes / max(phase_bytes, 1), unit=Unit.RATIO),
                        Metric(name="mean_rank_bytes", value=imb.mean, unit=Unit.BYTES),
                        Metric(name="std_rank_bytes", value=imb.std, unit=Unit.BYTES),
                        Metric(name="max_rank_bytes", value=int(imb.bytes[top]), unit=Unit.BYTES),
                        Metric(name="phases", value=len(ph), unit=Unit.COUNT),
                        *window_metrics(ws, we),
                        *_source(hm),
                    ],
                    ranks=heavy[: max(ctx.top_n, 1)],
                    cost=costs.unknown(
                        "the heatmap holds bytes per time bin, not each rank's time: see the trace or P codes"
                    ),
                )
            )
    return hits or None
