"""The lock-contention findings L06 (Lustre extent locks) and P23 (GPFS byte-range tokens) as ``Hit``s.

Both find the same pattern: ranks writing interleaved pieces of one shared file, smaller than the unit the file
system locks (a stripe, a block) and not starting on its boundaries, so each write first takes the lock another
rank holds. They differ in what the unit is called and which lock is waited on; the message, the metrics, the
files listed and the cost (the files' POSIX write time on their slowest rank) are the same, and live here once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.models import Metric, Unit
from iodiag.analysis.registry import Hit
from iodiag.analysis.views.context import Context, pct
from iodiag.core.units import human_bytes, request_bytes


@dataclass(frozen=True)
class Contended:
    """One shared file whose writers contend for its locks."""

    record_id: int
    bytes_written: int
    writers: int
    mean_write: float
    not_aligned_share: float
    interleaved: float
    """Share of the file's writes that do not follow the same rank's previous write."""
    unit: int
    """The size the file system locks in: the stripe (Lustre) or the block (GPFS)."""


@dataclass(frozen=True)
class LockWords:
    """How one file system names what is locked and the lock itself."""

    where: str  # ", on GPFS" or ""
    unit: str  # "stripe", "block"
    of: str  # what the misaligned share is of: "them" (the pieces), "requests"
    share: str  # what neighbouring pieces do to a unit: "share (and straddle)", "share"
    wait: str  # "waits for", "first takes"
    lock: str  # "the Lustre extent lock", "the byte-range token"
    holder: str  # "another rank holds", "another node holds"
    lock_short: str  # in the cost's words: "the extent lock", "the byte-range token"
    unit_metric: str  # "stripe_size", "block_size"


def contention_hit(ctx: Context, bad: list[Contended], words: LockWords, extra: tuple[Metric, ...] = ()) -> Hit:
    """The finding for the files in ``bad`` (largest first): the largest in the message, each listed with its
    writers, piece size and misaligned share, priced at their POSIX write time on the slowest rank."""
    bad = sorted(bad, key=lambda b: (-b.bytes_written, b.record_id))
    f = bad[0]
    p = ctx.posix_records
    ids = np.array([b.record_id for b in bad], dtype=np.uint64)
    seconds = costs.on_critical_path(ctx, p, p.num("POSIX_F_WRITE_TIME") * np.isin(p["id"], ids))
    more = f" ({len(bad)} files; the largest shown)" if len(bad) > 1 else ""
    return Hit(
        message=f"{ctx.path(f.record_id)}{more}{words.where}: {f.writers:,} ranks wrote {human_bytes(f.bytes_written)} "
        f"in interleaved pieces of {request_bytes(f.mean_write)} on average, smaller than its "
        f"{human_bytes(f.unit)} {words.unit}s, {pct(f.not_aligned_share)} of {words.of} not starting on a "
        f"{words.unit} boundary and {pct(f.interleaved)} not following the rank's previous write. Neighbouring "
        f"ranks' pieces {words.share} {words.unit}s, so each write {words.wait} {words.lock} {words.holder}.",
        subject=f"{f.writers:,} ranks writing {request_bytes(f.mean_write)} pieces",
        evidence=[
            Metric(name="writers", value=f.writers, unit=Unit.COUNT),
            Metric(name="mean_write", value=round(f.mean_write), unit=Unit.BYTES),
            Metric(name=words.unit_metric, value=f.unit, unit=Unit.BYTES),
            *extra,
            Metric(name="not_aligned_share", value=f.not_aligned_share, unit=Unit.RATIO),
            Metric(name="interleaved_share", value=f.interleaved, unit=Unit.RATIO),
            Metric(name="bytes_written", value=f.bytes_written, unit=Unit.BYTES),
        ],
        files=[
            ctx.file(
                b.record_id,
                Metric(name="writers", value=b.writers, unit=Unit.COUNT),
                Metric(name="mean_write", value=round(b.mean_write), unit=Unit.BYTES),
                Metric(name="not_aligned_share", value=b.not_aligned_share, unit=Unit.RATIO),
            )
            for b in bad[: ctx.top_n]
        ],
        files_total=len(bad),
        cost=costs.measured(
            seconds,
            f"the POSIX write time of those files on their slowest rank: each write waits for {words.lock_short} of a "
            f"{words.unit} other ranks write too",
            nbytes=sum(b.bytes_written for b in bad),
        ),
    )


# The words of each file system whose locks these findings are about.
LUSTRE_EXTENT_LOCKS = LockWords(
    where="",
    unit="stripe",
    of="them",
    share="share (and straddle)",
    wait="waits for",
    lock="the Lustre extent lock",
    holder="another rank holds",
    lock_short="the extent lock",
    unit_metric="stripe_size",
)

GPFS_TOKENS = LockWords(
    where=", on GPFS",
    unit="block",
    of="requests",
    share="share",
    wait="first takes",
    lock="the byte-range token",
    holder="another node holds",
    lock_short="the byte-range token",
    unit_metric="block_size",
)
