"""STDIO interface checks."""

from __future__ import annotations

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.models import Confidence, Layer, Metric, Severity, Unit
from iodiag.analysis.registry import Hit, check
from iodiag.analysis.views.context import Context, pct
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes, human_seconds
from iodiag.ingest.table import Table


@check(
    "S01",
    title="Bulk data goes through STDIO",
    layer=Layer.STDIO,
    severity=Severity.CRITICAL,
    requires=("STDIO",),
    recommendations=("stdio-larger-buffer", "stdio-to-parallel-io"),
    origin="drishti",
)
def stdio_share(ctx: Context, t: Thresholds) -> Hit | None:
    s = ctx.stdio_records
    stdio = int(s["STDIO_BYTES_READ"].sum()) + int(s["STDIO_BYTES_WRITTEN"].sum())
    posix = mpiio = 0
    p, m = ctx.posix_records, ctx.mpiio_records
    if len(p):
        posix = int(p["POSIX_BYTES_READ"].sum()) + int(p["POSIX_BYTES_WRITTEN"].sum())
    if len(m):
        mpiio = int(m["MPIIO_BYTES_READ"].sum()) + int(m["MPIIO_BYTES_WRITTEN"].sum())
    # POSIX counts the bytes MPI-IO moved on its behalf; count them once.
    if posix > 0 and posix >= mpiio:
        posix -= mpiio
    # Every other data interface counts too (DFS, or DAOS without DFS): never "all of the job's data"
    # while bytes that went elsewhere are left out.
    moved = ctx.interface_bytes()
    other = moved.get("DFS", 0) + moved.get("DAOS", 0)
    total = stdio + posix + mpiio + other
    if not total or not stdio:
        return None
    share = stdio / total
    cost = _stdio_cost(ctx, t, stdio)
    # Drishti's rule counts bytes; a rank that fwrites half a GiB in 4 KiB calls while a thousand ranks read
    # their input through POSIX moves under 1 % of the bytes and still holds the job up for seconds. The time
    # the STDIO calls took beyond the same bytes at a good rate is the reason to report it, whatever the share.
    slow = (cost.seconds or 0.0) >= max(
        t.impact_min_seconds, t.severity_warning_share * (ctx.io_share.runtime_s if ctx.io_share else 0.0)
    )
    if share <= t.interface_stdio and not slow:
        return None
    g = s.group_by("id")
    files, n = ctx.rank_files(
        g.keys, g.sum(s["STDIO_BYTES_READ"] + s["STDIO_BYTES_WRITTEN"]), "stdio_bytes", Unit.BYTES
    )
    own = s.where(s["rank"] >= 0)
    by_rank = own.group_by("rank")
    busy = by_rank.sum((own["STDIO_F_READ_TIME"] + own["STDIO_F_WRITE_TIME"] + own["STDIO_F_META_TIME"]).astype(float))
    order = np.argsort(-busy, kind="stable")
    ranks = [int(by_rank.keys[i]) for i in order[: ctx.top_n] if busy[i] > 0]
    reads, writes = int(s["STDIO_READS"].sum()), int(s["STDIO_WRITES"].sum())
    calls = reads + writes
    # STDIO keeps no request-size histogram: the mean call size is what the log can tell. The calls by kind, as
    # the counters name them (a user checks STDIO_WRITES, not their sum with the reads).
    kinds = f"calls ({writes:,} writes, {reads:,} reads)" if reads and writes else ("writes" if writes else "reads")
    mean = f" in {calls:,} {kinds} of {human_bytes(stdio // calls)} on average" if calls else ""
    # The file that holds most of it, by the name its owner knows it by
    per_id = g.sum(s["STDIO_BYTES_READ"] + s["STDIO_BYTES_WRITTEN"])
    top = int(np.argmax(per_id)) if len(per_id) else -1
    named = (
        f", {'all' if per_id[top] >= stdio else 'mostly'} `{ctx.path(int(g.keys[top])).rsplit('/', 1)[-1]}`,"
        if top >= 0 and per_id[top] >= 0.8 * stdio
        else ""
    )
    # One rank of many moving all of it is the serial bottleneck itself: say which
    own_bytes = by_rank.sum((own["STDIO_BYTES_READ"] + own["STDIO_BYTES_WRITTEN"]).astype(float))
    movers = [int(by_rank.keys[i]) for i in range(len(own_bytes)) if own_bytes[i] > 0]
    alone = (
        f", by rank {movers[0]} alone"
        if ctx.meta.nprocs > 1 and len(movers) == 1 and float(own_bytes.sum()) >= stdio
        else ""
    )
    return Hit(
        subject=f"{human_bytes(stdio)}{named}{mean}{alone}",
        message=f"{pct(share)} of the job's data ({human_bytes(stdio)}) moves through STDIO "
        f"(fread/fwrite/fprintf){mean}, a buffered, serial interface"
        + (
            f"; rank {ranks[0]} spent {human_seconds(float(busy.max()))} in STDIO calls."
            # A shared record's time is every rank's: a rank's own calls would then understate what the cost counts.
            if ranks and not (s.num("STDIO_F_WRITE_TIME") + s.num("STDIO_F_READ_TIME"))[s["rank"] < 0].any()
            else "."
        ),
        ranks=ranks,
        evidence=[
            Metric(name="stdio_bytes", value=stdio, unit=Unit.BYTES),
            Metric(name="total_bytes", value=total, unit=Unit.BYTES),
            Metric(name="stdio_share", value=share, unit=Unit.RATIO),
            *([Metric(name="mean_call_bytes", value=stdio // calls, unit=Unit.BYTES)] if calls else []),
        ],
        files=files,
        files_total=n,
        cost=cost,
    )


def _stdio_cost(ctx: Context, t: Thresholds, stdio: int) -> costs.Cost:
    s = ctx.stdio_records
    time = (s["STDIO_F_READ_TIME"] + s["STDIO_F_WRITE_TIME"] + s["STDIO_F_META_TIME"]).astype(float)
    rate, own = costs.large_request_rate(ctx, "WRITE", t)
    moved = (s["STDIO_BYTES_READ"] + s["STDIO_BYTES_WRITTEN"]).astype(float)
    per_row = (time - moved / rate).clip(min=0)
    priced = costs.on_critical_path(ctx, s, per_row, prefix="STDIO")
    serial = _serial_stdio(ctx, s, time)
    if serial > priced:
        # One rank moving the bulk through fread/fwrite while the others wait: its STDIO time beyond the average
        # rank's is what the serial interface costs, however fast each call ran (8 GiB in 64 KiB fwrites at
        # 1.5 GiB/s is as fast per byte as the job's reads, and still 5 s every other rank waits for).
        return costs.measured(
            serial,
            "STDIO time of the rank that did it alone, beyond the average rank's STDIO time",
            nbytes=stdio,
        )
    calls = int(s["STDIO_READS"].sum()) + int(s["STDIO_WRITES"].sum())
    bulk = stdio >= max(t.stdio_bulk_min_bytes, 1) and calls > 0 and stdio / calls < SMALL_CALL
    spent = costs.on_critical_path(ctx, s, time, prefix="STDIO")
    if bulk and priced < t.impact_min_seconds and spent >= t.impact_min_seconds:
        # Hundreds of MiB in small fread/fwrite calls that ran at a good rate per byte: the time was measured and
        # all of it went to the serial, buffered interface, but how much larger buffers or a parallel library
        # would give back is not in the log. Unlike an unmeasured upper bound (misaligned requests, which
        # Darshan never times) it can be a cause, at low confidence: at most a warning, after measured causes.
        return costs.modelled(
            spent,
            "the STDIO time on the busiest rank, all of it in small buffered calls; its bytes moved at about the "
            f"{'job' if own else 'reference'}'s large-request rate ({costs.rate_text(rate)}), so this is the most "
            "larger buffers or a parallel library can save, and the log cannot tell how much of it they would",
            confidence=Confidence.LOW,
            nbytes=stdio,
        )
    return costs.measured(
        priced,
        f"STDIO time on the busiest rank less its bytes at {'this job' if own else 'the reference'}'s large-request "
        f"rate ({costs.rate_text(rate)})",
        nbytes=stdio,
    )


SMALL_CALL = 1 << 20
"""A mean fread/fwrite size below this is a small buffer: the C library's, not the application's bulk blocks."""


SERIAL_SHARE = 0.5
"""The share of the busiest rank's I/O time its own STDIO calls must take for them to be its holdup."""


def _serial_stdio(ctx: Context, s: Table, time: np.ndarray) -> float:
    """The busiest rank's own STDIO time beyond the average rank's, where STDIO is most of that rank's I/O time
    (a lone writer funnelling bulk data through fwrite); 0 otherwise."""
    share = ctx.io_share
    if share is None or share.slowest_rank is None or share.slowest_rank_io_s <= 0:
        return 0.0
    ranks = np.asarray(s["rank"])
    mine = float(time[ranks == share.slowest_rank].sum())
    if mine < SERIAL_SHARE * share.slowest_rank_io_s:
        return 0.0
    own = ranks >= 0
    mean = float(time[own].sum()) / max(ctx.meta.nprocs, 1)
    return max(mine - mean, 0.0)
