"""Severity from cost: a finding matters by the run time it costs, not by how many calls tripped a ratio.

Detection (does the rule hold?) stays with each check; the severity shown comes from here:

* critical from ``severity_critical_share`` (10 %) of the run time, warning from ``severity_warning_share``
  (2 %) or, when I/O matters, from ``severity_warning_io_share`` (8 %) of the busiest rank's I/O time and
  2 s; info below; never above info when the cost is under ``impact_min_seconds``, the finding is about
  fewer than ``impact_min_ops`` operations or less than ``impact_min_bytes``, or I/O does not matter for
  this job (``Context.io_matters``);
* a low-confidence cost (an upper bound, a reference rate) is at most a warning;
* descriptive findings keep their info/ok, summaries (J codes) keep their own, data-quality findings are at
  most a warning, opportunities (time that could be hidden) at most info; a check whose advice does not fit
  the workload stays info.
"""

from __future__ import annotations

from iodiag.analysis.costs import Cost
from iodiag.analysis.models import Confidence, Impact, Severity
from iodiag.analysis.registry import CheckSpec, Kind
from iodiag.analysis.views.context import Context
from iodiag.core.thresholds import Thresholds

_NOT_PRICED = "descriptive: how the job does I/O, not a cost"


def impact(ctx: Context, cost: Cost | None, spec: CheckSpec) -> Impact | None:
    """Turn a check's cost into the finding's impact: critical-path seconds, capped at the I/O time."""
    if cost is None:
        if spec.kind in (Kind.DESCRIPTIVE, Kind.QUALITY):
            return None
        return Impact(
            seconds=None, share_of_runtime=None, share_of_io=None, basis="no cost model", confidence=Confidence.LOW
        )
    s = ctx.io_share
    seconds = cost.seconds
    if seconds is not None:
        if cost.summed:
            from iodiag.analysis.costs import critical

            seconds = critical(ctx, seconds)
        if s is not None and spec.kind is not Kind.SUMMARY:
            seconds = min(seconds, s.slowest_rank_io_s)
    runtime = s.runtime_s if s is not None else ctx.meta.runtime_s
    io = s.slowest_rank_io_s if s is not None else 0.0
    return Impact(
        seconds=seconds,
        share_of_runtime=(min(seconds / runtime, 1.0) if runtime > 0 else None) if seconds is not None else None,
        share_of_io=(min(seconds / io, 1.0) if io > 0 else None) if seconds is not None else None,
        basis=cost.basis,
        confidence=cost.confidence,
    )


def grade(
    ctx: Context, spec: CheckSpec, detected: Severity, imp: Impact | None, cost: Cost | None, t: Thresholds
) -> tuple[Severity, str | None]:
    """(severity, why it is lower than detected or None)."""
    if detected is Severity.OK:
        return Severity.OK, None
    if spec.kind == Kind.DESCRIPTIVE:
        return detected, None
    if spec.kind == Kind.SUMMARY:
        return detected, None
    if spec.kind == Kind.QUALITY:
        return (Severity.WARNING if detected is Severity.CRITICAL else detected), None
    if ctx.workload not in spec.applies_to:
        return Severity.INFO, f"the check's advice does not fit a {ctx.workload.value} workload"
    if imp is None or imp.seconds is None or imp.share_of_runtime is None:
        return Severity.INFO, "the log cannot put a number on its cost"
    if spec.kind == Kind.OPPORTUNITY:
        return Severity.INFO, "time that could be hidden, not time lost"
    if ctx.io_matters is False:
        return Severity.INFO, "I/O is not why this job is slow"
    if imp.seconds < t.impact_min_seconds:
        return Severity.INFO, f"costs under {t.impact_min_seconds:g} s"
    if cost is not None and cost.ops is not None and cost.ops < t.impact_min_ops:
        return Severity.INFO, f"about fewer than {t.impact_min_ops:,} operations"
    if cost is not None and cost.nbytes is not None and cost.nbytes < t.impact_min_bytes and not cost.ops:
        return Severity.INFO, "about too little data to matter"
    share = imp.share_of_runtime
    if share >= t.severity_critical_share:
        sev = Severity.CRITICAL
    elif share >= t.severity_warning_share:
        sev = Severity.WARNING
    elif (
        ctx.io_matters is True
        and (imp.share_of_io or 0.0) >= t.severity_warning_io_share
        and imp.seconds >= t.severity_warning_io_min_seconds
    ):
        # I/O matters, so a tenth of it is worth fixing even where that tenth is a small share of a long run.
        sev = Severity.WARNING
    else:
        return Severity.INFO, f"costs under {t.severity_warning_share:.0%} of the run time"
    if imp.basis.startswith("modelled: upper bound"):
        # An upper bound with nothing measured behind it may be far above the real cost: never a cause.
        return Severity.INFO, "its cost is only an upper bound"
    if imp.confidence is Confidence.LOW and sev is Severity.CRITICAL:
        sev = Severity.WARNING
    return sev, None
