"""Formatting numbers for people."""

from __future__ import annotations

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def human_bytes(n: float) -> str:
    """Bytes in the largest binary unit under 1024: a whole number of units as people write it ("128 KiB",
    "4 MiB"), anything else to two decimals ("45.91 KiB"), so ".00" never poses as exact."""
    v = float(n)
    for unit in _UNITS:
        if abs(v) < 1024 or unit == _UNITS[-1]:
            # A sum of float counters drifts by far less than 1e-9 of a unit: still a whole number of units
            whole = abs(v - round(v)) <= 1e-9
            return f"{int(v)} {unit}" if unit == "B" else f"{round(v)} {unit}" if whole else f"{v:.2f} {unit}"
        v /= 1024
    return f"{v:.2f} PiB"


def request_bytes(n: float) -> str:
    """A request size: as :func:`human_bytes`, with the exact count where the unit rounds it ("45.91 KiB
    (47,008 B)"), because an odd size such as IOR's 47,008 bytes is itself the diagnosis."""
    text = human_bytes(n)
    if abs(n) >= 1024 and float(n).is_integer() and "." in text:
        return f"{text} ({int(n):,} B)"
    return text


def human_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    if s < 120:
        return f"{s:.2f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.2f} h"
