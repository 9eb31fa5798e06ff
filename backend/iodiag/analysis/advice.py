"""Advice that fits the file system: no `lfs setstripe` for a job whose data lives on GPFS, DAOS or NFS."""

from __future__ import annotations

from iodiag.analysis.context import Context
from iodiag.analysis.recommendations import RECOMMENDATIONS

# What replaces file-system-specific advice on another file system.
_INSTEAD = {
    "gpfs": "gpfs-block-alignment",
    "daos": "daos-chunk-size",
    "nfs": "use-scratch-file-system",
}


def fit_recommendations(ctx: Context, rec_ids: list[str]) -> list[str]:
    """Keep advice that fits the job's file system; swap advice for another file system for its equivalent.

    With the file system unknown (no mount entry, no LUSTRE module) file-system-specific advice is dropped:
    guessing wrong is worse than saying less.
    """
    fs = ctx.file_system
    out: list[str] = []
    for rid in rec_ids:
        rec = RECOMMENDATIONS.get(rid)
        if rec is None or not rec.file_systems or (fs is not None and fs in rec.file_systems):
            out.append(rid)
            continue
        alt = _INSTEAD.get(fs or "")
        if alt is not None:
            out.append(alt)
    return list(dict.fromkeys(out))
