"""Small, misaligned and random requests, resolved from the DXT trace to files, ranks and time windows.

The counter-based checks (P05-P08, P11-P14) say *that* a job issues such requests; these say
*where and when*: which files, which ranks, between which times, and (when the log carries call
stacks) from which source lines. They read DXT_POSIX only, the requests that reach the file
system; a log traced at MPI-IO alone has no segments that show alignment to the file system.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.hits import streamed as trace_streamed
from iodiag.analysis.hits import trace as trace_hits
from iodiag.analysis.models import Layer, Metric, Severity, Unit
from iodiag.analysis.registry import Hit, check
from iodiag.analysis.views.context import Context
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes
from iodiag.ingest.trace import READ, Trace
from iodiag.ingest.trace_stream import SMALL_BYTES


def _posix_trace(ctx: Context) -> Trace | None:
    t = ctx.profile.trace("DXT_POSIX")
    return t if t is not None and len(t) > 0 else None


def _flagged(tr: Trace, bad: np.ndarray) -> trace_hits.Flagged:
    """The flagged segments ``bad``, per file and per rank."""
    f = tr.file[bad]
    first = np.full(len(tr.file_ids), np.inf)
    last = np.full(len(tr.file_ids), -np.inf)
    np.minimum.at(first, f, tr.start[bad])
    np.maximum.at(last, f, tr.end[bad])
    # ranks per file: unique (file, rank) pairs among flagged segments
    rmax = int(tr.rank.max()) + 1
    pairs = np.unique(f.astype(np.int64) * rmax + tr.rank[bad])
    return trace_hits.Flagged(
        module=tr.module,
        file_ids=tr.file_ids,
        requests=int(bad.sum()),
        traced=len(tr),
        per_file=np.bincount(f, minlength=len(tr.file_ids)),
        all_file=np.bincount(tr.file, minlength=len(tr.file_ids)),
        first=first,
        last=last,
        nbytes=np.bincount(f, weights=tr.length[bad], minlength=len(tr.file_ids)),
        ranks_per_file=np.bincount(pairs // rmax, minlength=len(tr.file_ids)),
        per_rank=np.bincount(tr.rank[bad]),
    )


def _by_op(
    ctx: Context, t: Thresholds, share: float, flag: Callable[[Trace], np.ndarray], what: str, why: str
) -> list[Hit] | None:
    tr = _posix_trace(ctx)
    if tr is None:
        return None
    bad_all = flag(tr)
    hits = []
    for op, verb in ((0, "writes"), (READ, "reads")):
        bad = bad_all & (tr.op == op)
        mine = tr.op == op
        n_bad = int(bad.sum())
        if not trace_hits.fires(n_bad, int(mine.sum()), share, t):
            continue
        extra = [Metric(name="op", value=verb, unit=Unit.TEXT)]
        hit = trace_hits.flagged_hit(ctx, _flagged(tr, bad), what, f"{why} {verb}", extra, trace=tr, segments=bad)
        seconds, own = costs.trace_segments_cost(ctx, tr, bad, t)
        hit.cost = trace_hits.request_cost(seconds, own, what, verb, n_bad)
        hits.append(hit)
    return hits or None


@check(
    "T06",
    title="Small requests, resolved to files, ranks and time windows",
    layer=Layer.POSIX,
    severity=Severity.WARNING,
    recommendations=("aggregate-small-requests",),
    family="small-requests",
)
def small_traced_requests(ctx: Context, t: Thresholds) -> list[Hit] | None:
    """Requests under ``trace_small_bytes`` (1 MiB, Drishti's boundary), counted from exact traced sizes."""
    if trace_streamed.streamed(ctx):
        # A streamed trace was tested against the reader's boundary (the default) as it went by.
        why = f"smaller than {human_bytes(SMALL_BYTES)}:"
        return trace_streamed.by_op(ctx, t, t.small_requests, "small", "small", why)
    return _by_op(
        ctx,
        t,
        t.small_requests,
        lambda tr: (tr.length < t.trace_small_bytes) & (tr.length > 0),
        "small",
        f"smaller than {human_bytes(t.trace_small_bytes)}:",
    )


def _file_index(tr: Trace, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each record id's file index in ``tr`` and whether it has one. A trace's files are in the order the
    reader met them, not sorted: search through a sorter (a plain searchsorted missed most files)."""
    n = len(tr.file_ids)
    if n == 0:
        return np.zeros(len(ids), dtype=np.int64), np.zeros(len(ids), dtype=bool)
    sorter = np.argsort(tr.file_ids, kind="stable")
    at = np.minimum(np.searchsorted(tr.file_ids, ids, sorter=sorter), n - 1)
    pos = sorter[at]
    return pos, tr.file_ids[pos] == ids


def _alignment(ctx: Context, tr: Trace) -> np.ndarray:
    """Alignment per file index: the Lustre stripe size where known, else Darshan's POSIX_FILE_ALIGNMENT."""
    align = np.zeros(len(tr.file_ids), dtype=np.int64)
    posix = ctx.posix_records
    if len(posix) and "POSIX_FILE_ALIGNMENT" in posix:
        ids = posix["id"].astype(np.uint64)
        vals = posix["POSIX_FILE_ALIGNMENT"].astype(np.int64)
        pos, ok = _file_index(tr, ids)
        np.maximum.at(align, pos[ok], vals[ok])
    lus = ctx.records("LUSTRE")
    if len(lus) and "stripe_size" in lus:
        g = lus.group_by("id")
        first = g.argmin(lus["component"])  # each file's first component (then its first record)
        pos, ok = _file_index(tr, g.keys.astype(np.uint64))
        align[pos[ok]] = lus["stripe_size"][first].astype(np.int64)[ok]
    return align


@check(
    "T07",
    title="Misaligned requests, resolved to files, ranks and time windows",
    layer=Layer.POSIX,
    severity=Severity.WARNING,
    recommendations=("align-file-requests",),
    family="misaligned",
)
def misaligned_traced_requests(ctx: Context, t: Thresholds) -> list[Hit] | None:
    """Requests whose offset is not a multiple of the file's alignment (the Lustre stripe size, else the
    file system's block size as Darshan recorded it), Darshan's own definition of POSIX_FILE_NOT_ALIGNED."""
    if trace_streamed.streamed(ctx):
        why = "not aligned to the file's stripe or block:"
        return trace_streamed.by_op(ctx, t, t.misaligned_requests, "misaligned", "misaligned", why)
    tr = _posix_trace(ctx)
    if tr is None:
        return None
    align = _alignment(ctx, tr)

    def flag(tr: Trace) -> np.ndarray:
        a = align[tr.file]
        known = a > 1
        out = np.zeros(len(tr), dtype=bool)
        out[known] = (tr.offset[known] % a[known]) != 0
        return out & (tr.length > 0)

    return _by_op(ctx, t, t.misaligned_requests, flag, "misaligned", "not aligned to the file's stripe or block:")


def random_mask(tr: Trace) -> np.ndarray:
    """Segments that start before the end of the same rank's previous request of that kind to the file.

    Darshan's own sequential test (offset past the previous request's last byte), per file, rank and
    operation, in time order; a rank's first request to a file is never random (the counters count it,
    see the P11-P14 divergence).
    """
    n = len(tr)
    if n == 0:
        return np.zeros(0, dtype=bool)
    key = (tr.file.astype(np.int64) * (int(tr.rank.max()) + 1) + tr.rank) * 2 + tr.op
    same = key[1:] == key[:-1]
    # The reader yields each (file, rank) record's writes then reads, each in time order; check rather than
    # assume, since a full sort of ten million segments costs seconds.
    ordered = bool(np.all(~same | (tr.start[1:] >= tr.start[:-1])))
    if ordered and np.unique(key[np.r_[True, ~same]]).size == int((~same).sum()) + 1:
        order = None
        k, off, ln = key, tr.offset, tr.length
    else:
        order = np.lexsort((tr.start, key))
        k, off, ln = key[order], tr.offset[order], tr.length[order]
    prev_end = np.r_[0, (off + ln)[:-1]]
    cont = np.r_[False, k[1:] == k[:-1]]
    bad: np.ndarray = cont & (off < prev_end)
    if order is None:
        return bad
    out = np.zeros(n, dtype=bool)
    out[order] = bad
    return out


@check(
    "T08",
    title="Random-access requests, resolved to files, ranks and time windows",
    layer=Layer.POSIX,
    severity=Severity.WARNING,
    recommendations=("sequential-access",),
    family="random",
)
def random_traced_requests(ctx: Context, t: Thresholds) -> list[Hit] | None:
    if trace_streamed.streamed(ctx):
        why = "random (each starts before the end of the rank's previous one):"
        return trace_streamed.by_op(ctx, t, t.random_operations, "random", "random", why)
    return _by_op(
        ctx,
        t,
        t.random_operations,
        random_mask,
        "random",
        "random (each starts before the end of the rank's previous one):",
    )
