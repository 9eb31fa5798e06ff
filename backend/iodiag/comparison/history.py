"""An application's runs over time and the regression flag: is this run's I/O time far above its usual?

"Usual" is the median I/O time of the application's earlier runs (the same user's runs of the same executable),
and "far" is measured in robust standard deviations: the median absolute deviation (MAD) scaled by 1.4826,
which equals the standard deviation for normal data but is not pulled up by the very outliers it is meant to
find. A run is flagged only when all three hold, so that neither a noisy series nor a tiny job raises it:

- its robust z-score is at least ``Z_MIN``,
- its I/O time is at least ``RATIO_MIN`` times the median,
- and at least ``SECONDS_MIN`` above it.

The spread is floored at ``SPREAD_FLOOR`` of the median: a series of identical runs has a MAD of 0, and 1 % of
jitter must not then count as infinitely many deviations. At least ``MIN_HISTORY`` earlier runs are needed;
the baseline is the last ``WINDOW`` of them, so an application that changed for good sets a new usual.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from statistics import median

from pydantic import BaseModel, ConfigDict, Field

Z_MIN = 3.5
RATIO_MIN = 1.5
SECONDS_MIN = 1.0
SPREAD_FLOOR = 0.10
MIN_HISTORY = 3
WINDOW = 20
MAD_TO_SIGMA = 1.4826


class Regression(BaseModel):
    """Why a run's I/O time counts as a regression against its application's earlier runs."""

    model_config = ConfigDict(frozen=True)

    io_time_s: float
    baseline_s: float = Field(description="median I/O time of the earlier runs")
    baseline_runs: int = Field(description="earlier runs the baseline is taken over")
    ratio: float = Field(description="io_time_s / baseline_s")
    robust_z: float = Field(description="(io_time_s - baseline_s) / (1.4826 x MAD), spread floored at 10 % of it")
    explanation: str


class RunPoint(BaseModel):
    """One run of an application, as its history shows it."""

    model_config = ConfigDict(frozen=True)

    id: str
    when: datetime = Field(description="when the run started (from its log; upload time where the log has none)")
    jobid: str | None
    nprocs: int | None
    runtime_s: float | None
    io_time_s: float | None
    io_share: float | None
    verdict_level: str | None
    headline: str | None
    regression: Regression | None = Field(default=None, description="set when this run's I/O time is far above usual")


def _fmt(seconds: float) -> str:
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.3g} s" if seconds < 10 else f"{seconds:.0f} s"


def regression(io_time_s: float | None, earlier: Sequence[float | None]) -> Regression | None:
    """The flag for one run given the I/O times of the application's earlier runs, oldest first."""
    if io_time_s is None:
        return None
    base = [t for t in earlier if t is not None][-WINDOW:]
    if len(base) < MIN_HISTORY:
        return None
    med = median(base)
    mad = median(abs(t - med) for t in base)
    spread = max(MAD_TO_SIGMA * mad, SPREAD_FLOOR * med, 1e-9)
    z = (io_time_s - med) / spread
    ratio = io_time_s / med if med > 0 else float("inf")
    if z < Z_MIN or ratio < RATIO_MIN or io_time_s - med < SECONDS_MIN:
        return None
    times = "time" if ratio == float("inf") else f"{ratio:.1f}×"
    return Regression(
        io_time_s=io_time_s,
        baseline_s=med,
        baseline_runs=len(base),
        ratio=ratio if ratio != float("inf") else 1e9,
        robust_z=z,
        explanation=(
            f"I/O time {_fmt(io_time_s)} is {times} this application's median of {_fmt(med)} over its "
            f"{len(base)} earlier runs ({z:.1f} robust standard deviations above it; flagged from "
            f"{Z_MIN:g} deviations, {RATIO_MIN:g}× the median and {SECONDS_MIN:g} s more)."
        ),
    )


def flag_series(points: Sequence[RunPoint]) -> list[RunPoint]:
    """Each run of a series (oldest first) with its regression flag against the runs before it."""
    out: list[RunPoint] = []
    for i, p in enumerate(points):
        flag = regression(p.io_time_s, [q.io_time_s for q in points[:i]])
        out.append(p.model_copy(update={"regression": flag}))
    return out
