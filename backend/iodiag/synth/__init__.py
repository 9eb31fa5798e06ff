"""Synthesis: write real Darshan logs whose contents we chose, for ground truth and benchmarks.

``writer.write_log`` takes tables shaped like the ingest's ``JobProfile.tables`` and writes them
through libdarshan-util's own log-writing functions, so the result is a log the real tools read.
"""

from iodiag.synth.writer import JobInfo, write_log

__all__ = ["JobInfo", "write_log"]
