"""Lock contention on shared files outside Lustre (GPFS byte-range tokens); Lustre's extent locks are L06."""

from __future__ import annotations

import numpy as np

from iodiag.analysis.hits.locks import GPFS_TOKENS, Contended, contention_hit
from iodiag.analysis.models import Layer, Severity
from iodiag.analysis.registry import Hit, check
from iodiag.analysis.views.context import Context
from iodiag.core.thresholds import Thresholds

# File systems whose writers to one file take byte-range locks (tokens) in file-system blocks
_TOKEN_FS = frozenset({"gpfs"})
# Of a file's writes, the share that must land past the rank's previous one for the pieces to be interleaved
# strides rather than random offsets (random offsets go forward about half the time)
_STRIDED_FORWARD = 0.8


@check(
    "P23",
    title="Interleaved unaligned writes to a shared file contend for GPFS byte-range tokens",
    layer=Layer.POSIX,
    severity=Severity.CRITICAL,
    requires=("POSIX",),
    recommendations=("avoid-shared-file-locks", "align-file-requests"),
    family="lock-contention",
)
def token_contention(ctx: Context, t: Thresholds) -> Hit | None:
    # GPFS grants write tokens for byte ranges rounded out to its blocks. Ranks writing interleaved pieces
    # smaller than a block that do not start on block boundaries share blocks with their neighbours, so each
    # write first takes the token from another node: the writes wait on each other, as on Lustre's extent
    # locks, and their time is the contention, measured on the slowest rank.
    p = ctx.posix_records
    if p.empty or "POSIX_FILE_ALIGNMENT" not in p:
        return None
    g = p.group_by("id")
    writes = g.sum(p.num("POSIX_WRITES"))
    written = g.sum(p.num("POSIX_BYTES_WRITTEN"))
    # the requests a rank made out of order: not following its previous write, less one per open
    breaks = np.maximum(writes - g.sum(p.num("POSIX_CONSEC_WRITES")) - g.sum(p.num("POSIX_OPENS")), 0)
    # Interleaved pieces move forward through the file (each rank's next piece a stride further on); writes at
    # random offsets inside each rank's own region break the same "consecutive" count without sharing blocks
    forward = g.sum(p.num("POSIX_SEQ_WRITES"))
    not_aligned = g.sum(p.num("POSIX_FILE_NOT_ALIGNED"))
    ops = g.sum(p.num("POSIX_WRITES") + p.num("POSIX_READS"))
    block = g.max(p.num("POSIX_FILE_ALIGNMENT").astype(np.int64))
    shared = g.any(p["rank"] < 0)
    ranks = g.sum(np.ones(len(p), dtype=np.int64))  # one POSIX record per (file, rank)
    collective = ctx.collective_write_files
    nprocs = max(ctx.meta.nprocs, 1)
    bad: list[Contended] = []
    for i, rid in enumerate(g.keys.tolist()):
        w = int(writes[i])
        if w <= 0 or int(written[i]) < t.lustre_min_file_bytes or int(rid) in collective:
            continue
        writers = nprocs if shared[i] else int(ranks[i])
        if writers < 2 or ctx.meta.fs_type(ctx.path(int(rid))) not in _TOKEN_FS:
            continue
        size = int(block[i])
        mean = int(written[i]) / w
        off_block = float(not_aligned[i]) / max(float(ops[i]), 1.0)
        interleaved = float(breaks[i]) / w
        if (
            size > 0
            and mean < size
            and off_block >= t.lustre_straddle_share
            and interleaved >= t.lustre_lock_interleaved_share
            and float(forward[i]) >= _STRIDED_FORWARD * w
        ):
            bad.append(Contended(int(rid), int(written[i]), writers, mean, off_block, interleaved, size))
    return contention_hit(ctx, bad, GPFS_TOKENS) if bad else None
