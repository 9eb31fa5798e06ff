"""Importing this package registers every check."""

from iodiag.analysis.checks import data_quality, io_share, lustre, mpiio, posix, stdio

__all__ = ["data_quality", "io_share", "lustre", "mpiio", "posix", "stdio"]
