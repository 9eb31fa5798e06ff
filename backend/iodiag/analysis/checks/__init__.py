"""Importing this package registers every check."""

from iodiag.analysis.checks import (
    crosslayer,
    data_quality,
    heatmap,
    io_share,
    locks,
    lustre,
    mpiio,
    posix,
    stdio,
    trace,
    trace_requests,
)

__all__ = [
    "crosslayer",
    "data_quality",
    "heatmap",
    "io_share",
    "locks",
    "lustre",
    "mpiio",
    "posix",
    "stdio",
    "trace",
    "trace_requests",
]
