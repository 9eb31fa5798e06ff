"""The floors docs/costs.md quotes are the code's: one constant each, read back from the document."""

from __future__ import annotations

import re

import pytest

from iodiag.core.thresholds import IMPACT_MIN_SECONDS, IO_MATTERS_MIN_SECONDS, Thresholds
from tests.conftest import REPO

COSTS_MD = (REPO / "docs" / "costs.md").read_text(encoding="utf-8")


def _documented(name: str) -> tuple[float, str]:
    """The seconds and the constant docs/costs.md gives for threshold ``name``: "`name` (0.5 s, `CONSTANT` in"."""
    m = re.search(rf"`{name}` \(([0-9.]+) s, `([A-Z_]+)` in", COSTS_MD)
    assert m is not None, f"docs/costs.md does not quote {name} with its seconds and constant"
    return float(m.group(1)), m.group(2)


@pytest.mark.parametrize(
    ("name", "constant", "value"),
    [
        ("impact_min_seconds", "IMPACT_MIN_SECONDS", IMPACT_MIN_SECONDS),
        ("io_matters_min_seconds", "IO_MATTERS_MIN_SECONDS", IO_MATTERS_MIN_SECONDS),
    ],
)
def test_documented_floor_is_the_code_constant(name: str, constant: str, value: float) -> None:
    seconds, named = _documented(name)
    assert named == constant
    assert seconds == value
    assert getattr(Thresholds(), name) == value


def test_every_quoted_default_in_costs_md_matches_the_thresholds() -> None:
    # Every "`threshold` (N unit)" the document quotes is the default in force.
    t = Thresholds()
    quoted = re.findall(r"`([a-z_]+)` \(([0-9.]+) ?(s|%|MiB|GiB/s)?[,)]", COSTS_MD)
    assert len(quoted) >= 6
    scale = {"s": 1.0, "%": 0.01, "MiB": float(1 << 20), "GiB/s": float(1 << 30), "": 1.0}
    for name, number, unit in quoted:
        assert hasattr(t, name), f"docs/costs.md quotes unknown threshold {name}"
        assert float(number) * scale[unit] == pytest.approx(float(getattr(t, name))), name
