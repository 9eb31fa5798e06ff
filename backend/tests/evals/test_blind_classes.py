"""How a shown finding maps to the blind rubric's classes."""

from __future__ import annotations

from iodiag.analysis.models import Confidence, Finding, Impact, Layer, Metric, Severity, Unit
from iodiag.evals.blind import classes_of


def _s01(mean: int, seconds: float) -> Finding:
    return Finding(
        code="S01",
        title="Bulk data goes through STDIO",
        layer=Layer.STDIO,
        severity=Severity.CRITICAL,
        detected_severity=Severity.CRITICAL,
        message="m",
        impact=Impact(
            seconds=seconds, share_of_runtime=0.3, share_of_io=0.5, basis="measured: x", confidence=Confidence.HIGH
        ),
        evidence=[Metric(name="mean_call_bytes", value=mean, unit=Unit.BYTES)],
    )


def test_small_priced_stdio_calls_name_small_requests_too() -> None:
    # 1,000,000 fwrite calls of 4 KiB that cost time: the rubric's small requests, as well as STDIO bulk
    assert classes_of(_s01(4096, 12.0)) == ["stdio_bulk", "small_requests"]


def test_large_or_unpriced_stdio_calls_name_stdio_only() -> None:
    assert classes_of(_s01(1 << 20, 12.0)) == ["stdio_bulk"]
    # fast small calls: nothing priced, so no claim that their size cost anything
    assert classes_of(_s01(4096, 0.0)) == ["stdio_bulk"]
