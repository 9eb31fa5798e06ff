"""The registry of checks. Adding a check is one decorated function: metadata here, logic in the body."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iodiag.analysis.models import FileEvidence, Layer, Metric, Severity, Workload
from iodiag.analysis.recommendations import RECOMMENDATIONS

if TYPE_CHECKING:
    import numpy as np

    from iodiag.analysis.costs import Cost
    from iodiag.analysis.views.context import Context
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
    lead_recommendations: tuple[str, ...] = ()
    """Advice that fits this instance better than the check's own: put before it (a metadata storm on Python
    modules leads with staging the environment)."""
    trace: Trace | None = None
    segments: np.ndarray | None = None
    """The trace segments the finding is about (a boolean mask over ``trace``): where the log carries call
    stacks, the engine groups them by source line."""
    cost: Cost | None = None
    """What the finding costs (``analysis/costs.py``); the engine grades the severity from it."""
    subject: str = ""
    """A few words naming this job's instance with its key number ("OST 14", "writes of 32 KiB"): the headline
    puts it beside the title, so the first sentence of an answer carries the job's own numbers."""


class Kind:
    """How a check's severity is decided (``grading.py``)."""

    CAUSE = "cause"
    """A reason I/O is slow: graded from its cost, and a candidate for the verdict's causes."""
    SUMMARY = "summary"
    """About the job as a whole (I/O share): keeps its own severity, never a cause."""
    QUALITY = "quality"
    """About the log (partial, unreadable, empty): a caveat of the verdict, at most a warning."""
    OPPORTUNITY = "opportunity"
    """Time that could be hidden (non-blocking I/O, overlap): priced, but at most info."""
    DESCRIPTIVE = "descriptive"
    """How the job does I/O (intensity, phases, things done well): keeps its info/ok severity."""


ALL_WORKLOADS: frozenset[Workload] = frozenset(Workload)

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
    kind: str = Kind.CAUSE
    applies_to: frozenset[Workload] = ALL_WORKLOADS
    """Workloads the check's advice fits; elsewhere it still fires (detection) but stays info."""
    family: str = ""
    """Findings of one family describe the same lost time; the verdict names a family once."""
    requires_any: tuple[str, ...] = ()
    """Modules of which at least one must have records (the same check over POSIX or DFS)."""


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
    kind: str | None = None,
    applies_to: frozenset[Workload] | None = None,
    family: str = "",
    requires_any: tuple[str, ...] = (),
) -> Callable[[CheckFn], CheckFn]:
    """Register a check. ``requires`` names modules that must have records for it to run; ``requires_any``
    modules of which one must."""

    def register(fn: CheckFn) -> CheckFn:
        if code in CHECKS:
            raise ValueError(f"duplicate check code {code}")
        unknown = [r for r in recommendations if r not in RECOMMENDATIONS]
        if unknown:
            raise ValueError(f"check {code} names unknown recommendations {unknown}")
        k = kind or (Kind.DESCRIPTIVE if severity in (Severity.OK, Severity.INFO) else Kind.CAUSE)
        CHECKS[code] = CheckSpec(
            code,
            title,
            layer,
            severity,
            requires,
            recommendations,
            origin,
            fn,
            kind=k,
            applies_to=applies_to or ALL_WORKLOADS,
            family=family or code,
            requires_any=requires_any,
        )
        return fn

    return register


OpCheckFn = Callable[["Context", "Thresholds", str], "Hit | list[Hit] | None"]
"""A check written once for both operations: called with "READ" or "WRITE"."""


def twins(
    read_code: str,
    write_code: str,
    fn: OpCheckFn,
    *,
    title: str,
    names: tuple[str, str] | None = None,
    **meta: Any,
) -> None:
    """Register a READ and a WRITE check that differ only in the operation (M02/M03, P05/P06, ...): one
    function, two codes. ``title`` holds ``{op}`` ("read" / "write") or ``{ops}`` ("reads" / "writes");
    ``names`` are the two checks' function names (default: ``fn``'s name with ``_reads`` / ``_writes``);
    ``meta`` is ``check``'s metadata."""
    base = fn.__name__.lstrip("_")
    for code, op, name in zip(
        (read_code, write_code), ("READ", "WRITE"), names or (f"{base}_reads", f"{base}_writes"), strict=True
    ):

        def one(ctx: Context, t: Thresholds, _op: str = op) -> Hit | list[Hit] | None:
            return fn(ctx, t, _op)

        one.__name__ = one.__qualname__ = name
        one.__doc__ = fn.__doc__
        check(code, title=title.format(op=op.lower(), ops=op.lower() + "s"), **meta)(one)
