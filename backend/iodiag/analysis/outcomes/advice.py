"""Advice that fits the file system: no `lfs setstripe` for a job whose data lives on GPFS, DAOS or NFS."""

from __future__ import annotations

from iodiag.analysis.models import Workload
from iodiag.analysis.recommendations import RECOMMENDATIONS
from iodiag.analysis.views.context import Context

# What replaces file-system-specific advice on another file system.
_INSTEAD = {
    "gpfs": "gpfs-block-alignment",
    "daos": "daos-chunk-size",
    "nfs": "use-scratch-file-system",
}


_NEEDS_MPI = frozenset(
    {
        "use-parallel-io-library",
        "mpiio-collective-io",
        "romio-hints",
        "mpiio-aggregators-per-node",
        "mpiio-nonblocking",
        "mpiio-collective-wait",
    }
)


def fit_recommendations(ctx: Context, rec_ids: list[str]) -> list[str]:
    """Keep advice that fits the job's file system; swap advice for another file system for its equivalent.

    With the file system unknown (no mount entry, no LUSTRE module) file-system-specific advice is dropped:
    guessing wrong is worse than saying less.
    """
    fs = ctx.file_system
    out: list[str] = []
    if ctx.workload in (Workload.SINGLE_PROCESS, Workload.DATA_LOADER):
        # No communicator to coordinate through: collective I/O and ROMIO hints do not apply.
        rec_ids = [r for r in rec_ids if r not in _NEEDS_MPI]
    files = ctx.files
    if len(files) and not bool(files["shared"].any()):
        # File per process: there is no shared file for MPI-IO to coordinate the ranks' access to.
        rec_ids = [r for r in rec_ids if r != "use-parallel-io-library"]
    for rid in rec_ids:
        rec = RECOMMENDATIONS.get(rid)
        if rec is None or not rec.file_systems or (fs is not None and fs in rec.file_systems):
            out.append(rid)
            continue
        alt = _INSTEAD.get(fs or "")
        if alt is not None:
            out.append(alt)
    return list(dict.fromkeys(out))
