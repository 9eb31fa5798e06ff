"""Trigger thresholds. Defaults for the Drishti-derived checks are Drishti 0.8's own."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

IMPACT_MIN_SECONDS = 0.5
"""A finding costing less than this many seconds is never above info, whatever its share of the run (the cost
floor, ``impact_min_seconds``). docs/costs.md quotes it; tests/analysis/test_cost_floors.py holds the two equal."""

IO_MATTERS_MIN_SECONDS = 1.0
"""I/O matters only when the busiest rank spent at least this many seconds in it (``io_matters_min_seconds``);
docs/costs.md quotes it too."""


class ThresholdError(ValueError):
    """A thresholds file or override is invalid; the message is one line."""


class Thresholds(BaseModel):
    """Drishti's ``small_bytes`` is absent on purpose: counters only have Darshan's fixed size bins,
    so "small" is always "below 1 MiB" (the five bins under it); a setting that changed nothing
    would mislead."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Drishti 0.8 thresholds (same names and defaults).
    imbalance_operations: float = Field(default=0.1, ge=0, le=1, description="read/write imbalance ratio (P01-P04)")
    small_requests: float = Field(default=0.1, ge=0, le=1, description="share of small requests (P05, P06, P15, P16)")
    small_requests_absolute: int = Field(
        default=1000, ge=0, description="number of small requests (P05, P06, P15, P16)"
    )
    misaligned_requests: float = Field(default=0.1, ge=0, le=1, description="share of misaligned requests (P07, P08)")
    metadata_time_rank: float = Field(default=30, ge=0, description="metadata seconds per rank (P17)")
    random_operations: float = Field(default=0.2, ge=0, le=1, description="share of random requests (P11, P13)")
    random_operations_absolute: int = Field(default=1000, ge=0, description="number of random requests (P11, P13)")
    random_cost_share: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="fewer random requests than that still raise P11/P13 when they cost this share of the run",
    )
    imbalance_stragglers: float = Field(default=0.15, ge=0, description="shared-file rank imbalance (P18, P19)")
    imbalance_size: float = Field(default=0.3, ge=0, le=1, description="per-rank size imbalance (P21, P22)")
    interface_stdio: float = Field(default=0.1, ge=0, le=1, description="share of bytes through STDIO (S01)")
    stdio_bulk_min_bytes: int = Field(
        default=256 << 20,
        ge=0,
        description="STDIO bytes from which small calls (under 1 MiB on average) are bulk data whose time is "
        "S01's upper bound, when the same bytes at the reference rate would take about as long (S01)",
    )
    collective_operations: float = Field(
        default=0.5, ge=0, le=1, description="share of independent MPI-IO calls (M02, M03)"
    )
    collective_operations_absolute: int = Field(default=1000, ge=0, description="number of MPI-IO calls (M02, M03)")

    # iodiag's own checks.
    shared_min_bytes: int = Field(
        default=16 << 20,
        ge=0,
        description="files shared by only some ranks count for P18/P19 from this many bytes (Python modules "
        "every rank imports are shared files too, but not I/O worth balancing)",
    )
    redundant_min_bytes: int = Field(
        default=1 << 20, ge=0, description="redundant bytes per file worth reporting (P09, P10)"
    )
    io_share_low: float = Field(
        default=0.05, ge=0, le=1, description="below this share of run time, I/O is not the problem (J01)"
    )
    io_share_high: float = Field(
        default=0.3, ge=0, le=1, description="above this share of run time, I/O dominates (J02)"
    )
    lustre_many_ranks: int = Field(
        default=8, ge=2, description="ranks writing one file that make a single stripe a bottleneck (L01)"
    )
    lustre_min_file_bytes: int = Field(
        default=64 << 20, ge=0, description="files smaller than this are ignored by Lustre layout checks"
    )
    lustre_large_request_factor: float = Field(
        default=8, gt=1, description="typical request / stripe size above which stripes are too small (L03)"
    )
    lustre_min_straddle_request: int = Field(
        default=64 << 10, ge=0, description="smallest common request checked for stripe straddling (L02)"
    )
    lustre_straddle_share: float = Field(
        default=0.5, ge=0, le=1, description="share of a file's requests that straddle stripes (L02)"
    )
    lustre_lock_interleaved_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="share of a shared file's writes that do not follow the same rank's previous write (interleaved "
        "with other ranks' pieces) from which sub-stripe unaligned writes contend for extent locks (L06)",
    )
    lustre_spread_osts: int = Field(
        default=8, ge=2, description="OSTs a shared file on one OST could spread over, to price L01 and X03"
    )
    ost_min_count: int = Field(
        default=4, ge=2, description="OSTs needed before comparing them with each other (L04, L05)"
    )
    ost_slow_factor: float = Field(
        default=2.0, gt=1, description="an OST this many times slower per byte than the median is slow (L04)"
    )
    ost_busy_factor: float = Field(
        default=3.0, gt=1, description="an OST with this many times the median bytes is overloaded (L05)"
    )
    ost_busy_keeps_up: float = Field(
        default=0.9,
        gt=0,
        description="an overloaded OST that moved its bytes faster per byte than this share of the median OST's "
        "time per byte kept up with its load: not a cost (L05)",
    )

    # Severity from cost (every finding's impact; docs/costs.md).
    severity_critical_share: float = Field(
        default=0.10, ge=0, le=1, description="a finding costing this share of the run time or more is critical"
    )
    severity_warning_share: float = Field(
        default=0.02, ge=0, le=1, description="a finding costing this share of the run time or more is a warning"
    )
    severity_warning_io_share: float = Field(
        default=0.08,
        ge=0,
        le=1,
        description="when I/O matters, a finding costing this share of the busiest rank's I/O time or more is a "
        "warning even under severity_warning_share of the run: it is a part of the I/O worth fixing",
    )
    severity_warning_io_min_seconds: float = Field(
        default=2.0,
        ge=0,
        description="...as long as it costs at least this many seconds: a second or so of a short job's I/O is "
        "not worth a warning when it is also under severity_warning_share of the run",
    )
    impact_min_seconds: float = Field(
        default=IMPACT_MIN_SECONDS,
        ge=0,
        description="a finding costing fewer seconds than this stays info, whatever its share (I/O itself must "
        "also reach io_matters_min_seconds before anything is above info)",
    )
    impact_min_ops: int = Field(default=100, ge=0, description="a finding about fewer operations than this stays info")
    impact_min_bytes: int = Field(
        default=1 << 20, ge=0, description="a finding about less data than this stays info (volume minimum)"
    )
    io_matters_min_seconds: float = Field(
        default=IO_MATTERS_MIN_SECONDS,
        ge=0,
        description="I/O matters only when the busiest rank spent at least this long in it (besides io_share_low): "
        "a 50 ms job has nothing to tune",
    )
    reference_rank_bandwidth: float = Field(
        default=float(1 << 30),
        gt=0,
        description="bytes/s one rank gets for large requests, used to price small or random requests when the "
        "job itself made no large ones (modelled costs)",
    )
    rank_io_imbalance_factor: float = Field(
        default=1.5, gt=1, description="busiest rank's I/O time over the mean rank's that counts as imbalance (J04)"
    )
    rank_io_imbalance_runtime_share: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="the busiest rank's I/O time beyond the mean rank's, as a share of the run, that counts as "
        "imbalance whatever the ratio (J04) when that rank did work of its own (files no other rank touched): rank 0 "
        "reading the input alone beside a phase every rank shares",
    )
    rank_io_solo_share: float = Field(
        default=0.08,
        ge=0,
        le=1,
        description="the busiest rank's work of its own (files no other rank touched) beyond the mean rank's I/O, as "
        "a share of that rank's I/O time, that counts as imbalance whatever the ratio or its share of the run (J04): "
        "rank 0 reading the input alone for 25 s beside 150 s every rank spends on its own part",
    )
    xlayer_gap_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="share of a file's MPI-IO time spent above the POSIX calls beneath it (X04)",
    )
    xlayer_gap_min_seconds: float = Field(
        default=5.0,
        ge=0,
        description="seconds above the POSIX calls beneath a file's MPI-IO calls, on the critical path, that are a "
        "finding whatever their share of the MPI-IO time, when they are also xlayer_gap_runtime_share of the run (X04)",
    )
    xlayer_gap_runtime_share: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="share of the run time the MPI-IO wait must reach for xlayer_gap_min_seconds to fire X04 below "
        "xlayer_gap_share",
    )
    xlayer_amplification: float = Field(
        default=1.25, gt=1, description="bytes at a lower layer over the layer above that count as amplified (X05)"
    )
    metadata_storm_share: float = Field(
        default=0.12,
        ge=0,
        le=1,
        description="share of the I/O time spent in metadata calls, summed or on the rank with the most of them, "
        "from which that time is a cost (J03); its seconds decide the severity",
    )

    # DXT trace checks (T01-T05); they run only on logs read with their DXT traces.
    trace_phase_min_gap: float = Field(
        default=0.001,
        ge=0,
        le=1,
        description="share of run time: gaps between busy intervals shorter than this always lie inside an I/O "
        "phase (floor under DXT Explorer's mean + one standard deviation rule)",
    )
    trace_min_window: float = Field(
        default=0.01,
        ge=0,
        le=1,
        description="share of run time: time windows shorter than this are not worth a finding (T01, T04)",
    )
    trace_straggler_share: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description="share of an I/O phase during which one rank alone is still doing I/O (T01)",
    )
    trace_rank0_share: float = Field(
        default=0.5, ge=0, le=1, description="rank 0's share of the traced bytes or operations (T02)"
    )
    trace_rank0_factor: float = Field(
        default=10, gt=1, description="rank 0's bytes or operations over the median rank's (T02)"
    )
    trace_rank0_min_bytes: int = Field(
        default=1 << 20, ge=0, description="rank 0 must move at least this many bytes for T02"
    )
    trace_rank0_min_ops: int = Field(
        default=1000, ge=0, description="rank 0 must issue at least this many operations for T02 by operations"
    )
    trace_small_bytes: int = Field(
        default=1 << 20,
        ge=1,
        description="bytes: traced requests smaller than this are small (T06). The trace has exact sizes, so unlike "
        "the counters' fixed bins this boundary can be set",
    )
    trace_requests_absolute: int = Field(
        default=1000,
        ge=0,
        description="traced small, misaligned or random requests needed for T06, T07 or T08 (besides the share "
        "thresholds small_requests, misaligned_requests and random_operations)",
    )
    trace_unbalanced_margin: float = Field(
        default=0.2,
        ge=0,
        description="an unbalanced rank's operations, bytes and time must also each exceed the rank mean by "
        "this share (T03; the mean + one standard deviation rule alone flags jitter)",
    )
    trace_idle_gap_share: float = Field(
        default=0.1, ge=0, le=1, description="share of run time of an idle gap between I/O phases (T04)"
    )
    trace_hideable_share: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description="share of run time that overlapping I/O phases with the idle gaps could save (T04)",
    )

    # HEATMAP checks (H01, H02); they run only on logs with a HEATMAP and no DXT traces loaded.
    heatmap_imbalance_margin: float = Field(
        default=0.2,
        ge=0,
        description="a heavy rank's bytes in the busiest heatmap phase must also exceed the rank mean by this "
        "share (H02; mirrors trace_unbalanced_margin)",
    )
    heatmap_min_bytes: int = Field(
        default=1 << 20, ge=0, description="bytes a heavy rank (or rank 0) must move before H02 reports it"
    )
    heatmap_rank0_share: float = Field(
        default=0.5, ge=0, le=1, description="rank 0's share of the heatmap's bytes (H02, rank-0 variant)"
    )

    xlayer_min_collective_writes: int = Field(
        default=100, ge=0, description="collective MPI-IO writes to a file before checking their aggregation (X01)"
    )
    xlayer_min_bytes: int = Field(
        default=64 << 20, ge=0, description="files written with fewer bytes are ignored by cross-layer checks (X01-X03)"
    )
    xlayer_unaggregated_bytes: int = Field(
        default=256 << 10,
        gt=0,
        description="collective writes whose POSIX requests average less than this did not aggregate (X01)",
    )
    xlayer_aggregation_gain: float = Field(
        default=2.0,
        gt=0,
        description="collective buffering worked when the mean POSIX write is at least this many times the "
        "mean MPI-IO write (X01)",
    )
    xlayer_min_ranks: int = Field(
        default=8, ge=2, description="MPI-IO writer ranks before rank counts across layers are compared (X01, X03)"
    )
    xlayer_meta_write_share: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="share of an HDF5 file's POSIX writes that are small (<= 10 KiB) beyond its small dataset "
        "writes: metadata writes among the data (X02)",
    )
    xlayer_meta_min_writes: int = Field(
        default=100, ge=0, description="small POSIX writes beyond the small dataset writes of an HDF5 file (X02)"
    )

    def with_overrides(self, overrides: dict[str, Any]) -> Thresholds:
        try:
            return Thresholds.model_validate({**self.model_dump(), **overrides})
        except ValidationError as exc:
            raise ThresholdError(_one_line(exc)) from None


def _one_line(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "thresholds"
        msg = "unknown threshold" if err["type"] == "extra_forbidden" else err["msg"]
        parts.append(f"{loc}: {msg}")
    return "; ".join(parts)


def load_thresholds(path: str | Path | None) -> Thresholds:
    """Defaults, overridden by a TOML file (keys at top level or under ``[thresholds]``)."""
    base = Thresholds()
    if path is None:
        return base
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ThresholdError(f"{path}: no such thresholds file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ThresholdError(f"{path}: cannot read thresholds file ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ThresholdError(f"{path}: invalid TOML ({exc})") from None
    table = data.get("thresholds", data)
    if not isinstance(table, dict):
        raise ThresholdError(f"{path}: [thresholds] must be a table")
    try:
        return base.with_overrides(table)
    except ThresholdError as exc:
        raise ThresholdError(f"{path}: {exc}") from None
