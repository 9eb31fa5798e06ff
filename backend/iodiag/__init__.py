"""iodiag: diagnose HPC I/O performance from Darshan logs."""

__version__ = "0.1.0"
