"""The registry of checks. Adding a check is one decorated function: metadata here, logic in the body."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from iodiag.analysis.models import FileEvidence, Layer, Metric, Severity
from iodiag.analysis.recommendations import RECOMMENDATIONS

if TYPE_CHECKING:
    import numpy as np

    from iodiag.analysis.context import Context
    from iodiag.core.thresholds import Thresholds
    from iodiag.ingest.trace import Trace


@dataclass
class Hit:
    """What a check found. The engine adds code, title, layer and recommendations from the metadata."""

    message: str
    evidence: list[Metric] = field(default_factory=list)
    files: list[FileEvidence] = field(default_factory=list)
    files_total: int = 0
    ranks: list[int] = field(default_factory=list)
    severity: Severity | None = None
    """Overrides the registered severity (for checks whose severity depends on the numbers)."""
    extra_recommendations: tuple[str, ...] = ()
    trace: Trace | None = None
    segments: np.ndarray | None = None
    """The trace segments the finding is about (a boolean mask over ``trace``): where the log carries call
    stacks, the engine groups them by source line."""


CheckFn = Callable[["Context", "Thresholds"], "Hit | list[Hit] | None"]


@dataclass(frozen=True)
class CheckSpec:
    code: str
    title: str
    layer: Layer
    severity: Severity
    requires: tuple[str, ...]
    recommendations: tuple[str, ...]
    origin: str
    fn: CheckFn


CHECKS: dict[str, CheckSpec] = {}


def check(
    code: str,
    *,
    title: str,
    layer: Layer,
    severity: Severity,
    requires: tuple[str, ...] = (),
    recommendations: tuple[str, ...] = (),
    origin: str = "iodiag",
) -> Callable[[CheckFn], CheckFn]:
    """Register a check. ``requires`` names modules that must have records for it to run."""

    def register(fn: CheckFn) -> CheckFn:
        if code in CHECKS:
            raise ValueError(f"duplicate check code {code}")
        unknown = [r for r in recommendations if r not in RECOMMENDATIONS]
        if unknown:
            raise ValueError(f"check {code} names unknown recommendations {unknown}")
        CHECKS[code] = CheckSpec(code, title, layer, severity, requires, recommendations, origin, fn)
        return fn

    return register
