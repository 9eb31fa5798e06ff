"""Numbers as people write them ("11.3 s", "8,448", "94.5%", "128 GiB", "2.07×"), parsed so they compare.

Every quantity is kept in a base unit (bytes, seconds, percent, times) with the tolerance its shown
precision implies: "11.3 s" stands for anything from 11.25 to 11.35 s, so it matches a fact of 11.34 s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Dim = Literal["bytes", "seconds", "percent", "times", "rate", "bare"]

_BIN = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}
_DEC = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15}

# unit text -> (dimension, multiplier to the base unit); sizes are resolved separately (binary or decimal)
_TIME = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "hrs": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
}
_SIZE = r"(?:[KMGTP]i?B|[KMGTP](?![a-z])|bytes?|B)"
_UNIT = (
    rf"(?P<size>{_SIZE})(?P<rate>/s)?"
    r"|(?P<pct>%|\s?percent)"
    r"|(?P<times>×|x(?![a-z])|\s?times)"
    r"|(?P<time>" + "|".join(sorted((re.escape(u) for u in _TIME), key=len, reverse=True)) + r")(?![a-z])"
)
# A number that stands alone: not part of an identifier (P08, x86_64, H5Pset), a path (run1/, ckpt.3.dat),
# a version or a date/time fragment. A leading list marker ("1. ") is removed before parsing.
_NUMBER = re.compile(
    r"(?<![\w.\-/:#])(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?(?![\d.,]*\d)"
    rf"(?:\s?(?:{_UNIT}))?(?![\w/])",
    re.IGNORECASE,
)
_LIST_MARKER = re.compile(r"^(\s*)\d+[.)](?=\s)", re.MULTILINE)


@dataclass(frozen=True)
class Quantity:
    value: float  # in the base unit of ``dim``
    dim: Dim
    tolerance: float  # half a step of the last shown digit, in the base unit
    shown: float  # the number as written, before the unit
    shown_tolerance: float
    text: str
    alt: float | None = None  # sizes written "MB"/"KB"/"GB": also the decimal reading

    def matches(self, known: Quantity) -> bool:
        """Whether this number (as written in an answer) can be the ``known`` one, rounded as shown.

        A number with a unit matches only a known number of the same kind ("10 MB" is not the 9 of
        "9 ranks"); a bare number matches any known number by its shown digits or its raw value.
        """
        if self.dim != "bare" and known.dim == "bare":
            return False
        if self.dim == "bare":
            b, tb = (known.shown, known.shown_tolerance) if known.dim != "bare" else (known.value, known.tolerance)
            return _close(self.value, b, self.tolerance, tb) or _close(self.value, known.value, self.tolerance, 0.0)
        if self.dim != known.dim:
            return False
        mine = [self.value] + ([self.alt] if self.alt is not None else [])
        theirs = [known.value] + ([known.alt] if known.alt is not None else [])
        return any(_close(a, b, self.tolerance, known.tolerance) for a in mine for b in theirs)


def _close(a: float, b: float, ta: float, tb: float) -> bool:
    """Two rounded numbers can be the same value when their rounding intervals overlap.

    Against an exact value the interval is closed ("95%" may be 94.5 %); between two rounded ones it is
    open ("10" and "9" only touch at 9.5, which neither would show).
    """
    d = abs(a - b)
    eps = 1e-9 * max(abs(a), abs(b), 1.0)
    if ta == 0.0 or tb == 0.0:
        return d <= ta + tb + eps
    return d < ta + tb - eps


def parse_quantities(text: str) -> list[Quantity]:
    """Every stand-alone number in ``text``, with its unit when one follows."""
    text = _LIST_MARKER.sub(r"\1", text)
    out = []
    for m in _NUMBER.finditer(text):
        whole = m.group("int").replace(",", "")
        frac = m.group("frac") or ""
        shown = float(f"{whole}.{frac}" if frac else whole)
        step = 10.0 ** -len(frac) / 2
        out.append(_quantity(m, shown, step))
    return out


def _quantity(m: re.Match[str], shown: float, step: float) -> Quantity:
    text = m.group(0)
    size = m.group("size")
    if size:
        prefix = size[0].lower() if size[0].upper() in "KMGTP" else ""
        binary = _BIN[prefix]
        decimal = _DEC[prefix] if prefix and "i" not in size.lower() else None
        dim: Dim = "rate" if m.group("rate") else "bytes"
        return Quantity(
            shown * binary,
            dim,
            step * binary,
            shown,
            step,
            text,
            alt=shown * decimal if decimal is not None else None,
        )
    if m.group("pct"):
        return Quantity(shown, "percent", step, shown, step, text)
    if m.group("times"):
        return Quantity(shown, "times", step, shown, step, text)
    unit = m.group("time")
    if unit:
        mult = _TIME[unit.lower()] if unit.lower() in _TIME else _TIME[unit]
        return Quantity(shown * mult, "seconds", step * mult, shown, step, text)
    return Quantity(shown, "bare", step, shown, step, text)


def strip_quantities(text: str) -> str:
    """The text without its numbers and their units (checked on their own, they are not words to attribute)."""
    return _NUMBER.sub(" ", _LIST_MARKER.sub(r"\1", text))


def exact(value: float, dim: Dim) -> Quantity:
    """A raw fact value (a metric as measured): no rounding of its own."""
    return Quantity(float(value), dim, 0.0, float(value), 0.0, str(value))
