"""Two-phase collective buffering, simply: which POSIX requests the aggregators issue for a call.

For each collective call, the data every rank passes in is merged into contiguous runs; the
call's byte range ``[min, max)`` is split into one equal file domain per aggregator, and each
aggregator accesses the runs in its domain in pieces cut at domain and ``cb_buffer_size``
boundaries. No data sieving: holes make separate requests. Bytes are conserved (overlaps once).
"""

from __future__ import annotations

import numpy as np


def pick_aggregators(ranks: np.ndarray, node_of: np.ndarray, cb_nodes: int | None) -> np.ndarray:
    """ROMIO-like default: one aggregator per node; ``cb_nodes`` of them, spread over the nodes first."""
    ranks = np.sort(ranks)
    nodes = node_of[ranks]
    uniq = np.unique(nodes)
    want = len(uniq) if cb_nodes is None else min(cb_nodes, len(ranks))
    # Order: the lowest rank on every node, then the second lowest on every node, ...
    order = np.lexsort((ranks, _rank_within(nodes)))
    return np.sort(ranks[order][:want])


def _rank_within(groups: np.ndarray) -> np.ndarray:
    """Position of every element within its group, in array order (groups need not be sorted)."""
    idx = np.argsort(groups, kind="stable")
    g = groups[idx]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    counts = np.diff(np.r_[starts, len(g)])
    pos = np.arange(len(g)) - np.repeat(starts, counts)
    out = np.empty_like(pos)
    out[idx] = pos
    return out


def two_phase(
    call: np.ndarray, offset: np.ndarray, length: np.ndarray, n_aggs: int, cb_buffer: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pieces (call, aggregator index, offset, length) for the requests of a set of collective calls."""
    keep = length > 0
    call, offset, length = call[keep], offset[keep], length[keep]
    if len(call) == 0:
        e = np.empty(0, dtype=np.int64)
        return e, e, e, e
    order = np.lexsort((offset, call))
    c, s = call[order], offset[order]
    e = s + length[order]
    # Merge overlapping or touching requests of a call into runs (running max of ends per call).
    new_call = np.r_[True, c[1:] != c[:-1]]
    run_end = _segmented_cummax(e, new_call)
    prev_end = np.r_[0, run_end[:-1]]
    starts_run = new_call | (s > prev_end)
    run_id = np.cumsum(starts_run) - 1
    r_call = c[starts_run]
    r_start = s[starts_run]
    r_end = np.zeros(len(r_call), dtype=np.int64)
    np.maximum.at(r_end, run_id, e)
    # The call's range and its file domains.
    ucall, first = np.unique(r_call, return_index=True)
    last = np.r_[first[1:], len(r_call)] - 1
    lo = r_start[first]
    hi = np.maximum.reduceat(r_end, first)
    dom = np.maximum(-(-(hi - lo) // n_aggs), 1)
    per_run = np.repeat(np.arange(len(ucall)), last - first + 1)
    lo_r, dom_r = lo[per_run], dom[per_run]
    # Cut every run at domain and buffer boundaries, one boundary per pass.
    out_c, out_a, out_s, out_l = [], [], [], []
    cur = r_start - lo_r
    stop = r_end - lo_r
    while len(cur):
        j = cur // dom_r
        within = cur - j * dom_r
        nxt = np.minimum((j + 1) * dom_r, j * dom_r + (within // cb_buffer + 1) * cb_buffer)
        piece_end = np.minimum(nxt, stop)
        out_c.append(r_call)
        out_a.append(np.minimum(j, n_aggs - 1))
        out_s.append(cur + lo_r)
        out_l.append(piece_end - cur)
        more = piece_end < stop
        cur, stop, lo_r, dom_r, r_call = piece_end[more], stop[more], lo_r[more], dom_r[more], r_call[more]
    pc = np.concatenate(out_c)
    pa = np.concatenate(out_a)
    ps = np.concatenate(out_s)
    pl = np.concatenate(out_l)
    order = np.lexsort((ps, pa, pc))
    return pc[order], pa[order], ps[order], pl[order]


def _segmented_cummax(values: np.ndarray, new_group: np.ndarray) -> np.ndarray:
    """Running maximum of ``values`` restarting where ``new_group`` is True."""
    out = values.copy()
    if len(values) == 0:
        return out
    # Shift every group above all earlier groups so one global running max does not leak across.
    gid = np.cumsum(new_group) - 1
    span = int(values.max() - values.min()) + 1
    if span * (int(gid[-1]) + 1) < (1 << 62):
        shifted = values - values.min() + gid.astype(np.int64) * span
        acc: np.ndarray = np.maximum.accumulate(shifted) - gid.astype(np.int64) * span + values.min()
        return acc
    starts = np.flatnonzero(new_group)
    for a, b in zip(starts, np.r_[starts[1:], len(values)], strict=True):
        out[a:b] = np.maximum.accumulate(values[a:b])
    return out
