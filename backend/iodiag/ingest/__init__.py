"""Ingest: read a Darshan log into an immutable, typed ``JobProfile``.

``load_profile`` is the only entry point. Optional modules (DXT traces,
HEATMAP, APMPI) are read only when named in ``include``.
"""

from iodiag.ingest.errors import LogReadError
from iodiag.ingest.loader import load_profile
from iodiag.ingest.profile import JobMeta, JobProfile, ModuleInfo, Mount
from iodiag.ingest.trace import Trace

__all__ = ["JobMeta", "JobProfile", "LogReadError", "ModuleInfo", "Mount", "Trace", "load_profile"]
