"""POSIX checks (Drishti's P codes). Thresholds and semantics follow Drishti 0.8 except where noted."""

from __future__ import annotations

import numpy as np

from iodiag.analysis import costs
from iodiag.analysis.models import Confidence, FileEvidence, Layer, Metric, Severity, Unit, Workload
from iodiag.analysis.registry import Hit, check, twins
from iodiag.analysis.views.context import Context, pct
from iodiag.analysis.views.request_sizes import most_common, size_counts
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes, request_bytes
from iodiag.ingest.table import Groups, Table

POSIX = ("POSIX",)


def _sum(t: Table, col: str) -> int:
    """Exact sum of an integer column."""
    return int(t[col].sum())


def _ops(ctx: Context) -> tuple[int, int]:
    p = ctx.posix_records
    return _sum(p, "POSIX_READS"), _sum(p, "POSIX_WRITES")


def _hdf5_recs(ctx: Context, *ids: str) -> tuple[str, ...]:
    return ids if ctx.uses_hdf5 else ()


def _intensive(ctx: Context, t: Thresholds, by: str, major: str) -> Hit | None:
    """P01-P04: one direction dominates, by operation count or by volume (Drishti's 10 % rule)."""
    p = ctx.posix_records
    minor = "read" if major == "write" else "write"
    if by == "count":
        names = {"read": "reads", "write": "writes"}
        values = {"read": _sum(p, "POSIX_READS"), "write": _sum(p, "POSIX_WRITES")}
    else:
        names = {"read": "bytes_read", "write": "bytes_written"}
        values = {"read": _sum(p, "POSIX_BYTES_READ"), "write": _sum(p, "POSIX_BYTES_WRITTEN")}
    hi, lo = values[major], values[minor]
    total = hi + lo
    if not (hi > lo and total and (hi - lo) / total > t.imbalance_operations):
        return None
    if by == "count":
        message = (
            f"The job is {major}-intensive: {pct(hi / total)} of its {total:,} POSIX operations are "
            f"{major}s, {pct(lo / total)} {minor}s."
        )
        unit = Unit.COUNT
    else:
        past = {"read": "read", "write": "written"}
        message = (
            f"The job is {major}-intensive by volume: {human_bytes(hi)} {past[major]} ({pct(hi / total)}) "
            f"against {human_bytes(lo)} {past[minor]}."
        )
        unit = Unit.BYTES
    return Hit(
        message=message,
        evidence=[
            Metric(name=names[major], value=hi, unit=unit),
            Metric(name=names[minor], value=lo, unit=unit),
            Metric(name=f"{major}_share", value=hi / total, unit=Unit.RATIO),
        ],
    )


def _intensity_check(code: str, title: str, by: str, major: str) -> None:
    @check(code, title=title, layer=Layer.POSIX, severity=Severity.INFO, requires=POSIX, origin="drishti")
    def run(ctx: Context, t: Thresholds) -> Hit | None:
        return _intensive(ctx, t, by, major)


_intensity_check("P01", "Write-intensive by operation count", "count", "write")
_intensity_check("P02", "Read-intensive by operation count", "count", "read")
_intensity_check("P03", "Write-intensive by volume", "volume", "write")
_intensity_check("P04", "Read-intensive by volume", "volume", "read")


def _small_counts(frame: Table, op: str, prefix: str = "POSIX") -> np.ndarray:
    """Requests under 1 MiB per row (a request of exactly 1 MiB is not small: ``costs.below_mib_counts``)."""
    return costs.below_mib_counts(frame, prefix, op)


def _calls(frame: Table, prefix: str, op: str) -> np.ndarray:
    """``op`` (READ/WRITE) calls per row; DFS counts dfs_readx/dfs_writex calls apart from dfs_read/dfs_write."""
    n = frame.num(f"{prefix}_{op}S")
    if prefix == "DFS":
        n = n + frame.num(f"DFS_{op}XS")
    return n


def small_request_cost(ctx: Context, t: Thresholds, op: str, frame: Table, prefix: str = "POSIX") -> costs.Cost:
    """Time in the small requests beyond the same bytes at this job's own large-request rate.

    Per record, the small requests' time is their share of the record's requests times its read (write)
    time: small requests are latency-bound, so time follows the number of calls more than the bytes. Only
    requests under 100 KiB are priced: from 100 KiB a request is bandwidth-bound (collective-buffer pieces of
    0.8-1 MiB are not what aggregation would fix), although detection keeps Drishti's 1 MiB boundary.
    """
    verb = "read" if op == "READ" else "write"
    if op == "READ" and ctx.unrequested_read_ids and prefix == "POSIX":
        frame = frame.where(~frame.isin("id", ctx.unrequested_read_ids))
    n_small = sum(
        (frame[f"{prefix}_SIZE_{op}_{b}"] for b in ("0_100", "100_1K", "1K_10K", "10K_100K")),
        np.zeros(len(frame), np.int64),
    ).astype(float)
    n_all = _calls(frame, prefix, op).astype(float)
    time = frame[f"{prefix}_F_{op}_TIME"].astype(float)
    share = np.where(n_all > 0, np.minimum(n_small / np.maximum(n_all, 1), 1.0), 0.0)
    small_time_rows = time * share
    small_time = float(small_time_rows.sum())
    moved = frame[f"{prefix}_BYTES_READ" if op == "READ" else f"{prefix}_BYTES_WRITTEN"].astype(float)
    est = (
        costs.small_bytes(frame, prefix, op)
        - frame[f"{prefix}_SIZE_{op}_100K_1M"].astype(float) * (costs.BIN_MEAN_BYTES["100K_1M"])
    )
    small_b = float(np.clip(est, 0, moved).sum())
    rate, own = costs.large_request_rate(ctx, op, t)
    ideal_rows = np.clip(est, 0, moved) / rate if rate > 0 else np.zeros(len(frame))
    excess_rows = np.clip(small_time_rows - ideal_rows, 0, None)
    seconds = costs.on_critical_path(ctx, frame, excess_rows, prefix=prefix)
    where = (
        "this job's own large-request rate"
        if own
        else "the reference rank bandwidth (no large request of this job to measure it by)"
    )
    floor = (
        None
        if own
        else costs.holds_below_reference(ctx, frame, small_time_rows, np.clip(est, 0, moved), rate, seconds, prefix)
    )
    sure = f"; still {floor:.3g} s at a tenth of that rate" if floor is not None else ""
    return costs.modelled(
        seconds,
        f"{small_time:.3g} s (summed over ranks) in {int(n_small.sum()):,} {verb}s under 100 KiB, less their "
        f"{human_bytes(small_b)} at {where} ({costs.rate_text(rate)}), on the busiest rank{sure}",
        confidence=Confidence.MEDIUM if own or sure else Confidence.LOW,
        ops=int(n_small.sum()),
    )


def _per_rank(ctx: Context, frame: Table, per_row: np.ndarray, count: int) -> str:
    """ " (15,873 per rank on average)" where many ranks made the requests: the count a user sees in one rank's
    file or trace, beside the job's total."""
    ranks = np.asarray(frame["rank"])[np.asarray(per_row) > 0]
    n = max(ctx.meta.nprocs, 1) if (ranks < 0).any() else len(np.unique(ranks))
    return f" ({count / n:,.0f} per rank on average)" if n > 1 and count >= 2 * n else ""


def _common_small_size(frame: Table, prefix: str, op: str, per_row: np.ndarray) -> int | None:
    """The most frequent request size under 1 MiB over the ACCESS1-4 counters of the records that made these
    small requests, or None where the module has no such counters. Darshan keeps one size table for reads and
    writes together, so records that made only this kind of call come first: 16 KiB reads of one file are not
    "mostly 1 KiB" because other files took 1 KiB writes."""
    other = _calls(frame, prefix, "WRITE" if op == "READ" else "READ")
    made = np.asarray(per_row) > 0
    only = made & (np.asarray(other) == 0)
    rows = frame.where(only) if only.any() else frame.where(made) if made.any() else frame
    top = most_common(size_counts(rows, prefix, below=1 << 20) or {})
    return top[0][0] if top else None


def _many_small(t: Thresholds, small: int, total: int) -> bool:
    """Drishti's rule for P05/P06: small requests are most of them, and many."""
    return bool(small and total and small / total > t.small_requests and small > t.small_requests_absolute)


def _small_evidence(verb: str, small: int, total: int) -> list[Metric]:
    return [
        Metric(name=f"small_{verb}s", value=small, unit=Unit.COUNT),
        Metric(name=f"total_{verb}s", value=total, unit=Unit.COUNT),
        Metric(name=f"small_{verb}_share", value=small / total, unit=Unit.RATIO),
    ]


def _small(ctx: Context, t: Thresholds, op: str, frame: Table, shared_only: bool, prefix: str = "POSIX") -> Hit | None:
    verb = "read" if op == "READ" else "write"
    total = int(_calls(frame, prefix, op).sum())
    per_row = _small_counts(frame, op, prefix)
    small = int(per_row.sum())
    if not _many_small(t, small, total):
        return None
    g = frame.group_by("id")
    per_file = g.sum(per_row)
    share = per_file / total
    files, n = ctx.rank_files(g.keys, per_file, f"small_{verb}s", Unit.COUNT, share, f"share_of_{verb}s")
    where = " to shared files" if shared_only else ""
    through = " through DAOS's DFS API" if prefix == "DFS" else ""
    size = _common_small_size(frame, prefix, op, per_row)
    common = f"; the most common request size is {request_bytes(size)}" if size else ""
    return Hit(
        message=f"{small:,} small {verb} requests (under 1 MiB){where}{through} make up {pct(small / total)} of "
        f"all {total:,} {verb} requests{common}.",
        subject=f"{small:,} {verb}s{_per_rank(ctx, frame, per_row, small)}"
        + (f", mostly {request_bytes(size)}" if size else ""),
        evidence=_small_evidence(verb, small, total),
        files=files,
        files_total=n,
        extra_recommendations=(
            *ctx.collective_advice(op),
            *_hdf5_recs(ctx, "hdf5-alignment"),
        ),
        cost=small_request_cost(ctx, t, op, frame, prefix),
    )


def _small_any(ctx: Context, t: Thresholds, op: str) -> Hit | None:
    """P05/P06 at the layer the job's requests reached storage through: POSIX, or DFS on DAOS (the same size
    histogram and timers; a DAOS job without the DFS mount issues no POSIX calls to count). The costlier of
    the two when a job used both."""
    hits = [
        h
        for prefix, frame in (("POSIX", ctx.posix_records), ("DFS", ctx.records("DFS")))
        if len(frame) and (h := _small(ctx, t, op, frame, shared_only=False, prefix=prefix)) is not None
    ]
    stdio = _small_stdio(ctx, t, op)
    hits += [stdio] if stdio is not None else []
    return max(hits, key=lambda h: (h.cost.seconds or 0.0) if h.cost else 0.0) if hits else None


STDIO_SMALL_CALL = 64 << 10
"""A STDIO call at most this size on average is small: it pays a library call (and, past the stream's buffer,
a system call) for little data."""


def _small_stdio(ctx: Context, t: Thresholds, op: str) -> Hit | None:
    """Many small fread/fwrite calls. STDIO keeps no size histogram, so a record's calls are small when their
    mean is: bytes over calls. Bulk data through STDIO (S01) is usually the same time, and the verdict leads
    with S01 where both cost it (``verdict.ROOTS``)."""
    s = ctx.stdio_records
    if not len(s):
        return None
    verb = "read" if op == "READ" else "write"
    calls = s.num(f"STDIO_{op}S").astype(float)
    moved = s.num("STDIO_BYTES_READ" if op == "READ" else "STDIO_BYTES_WRITTEN").astype(float)
    small_rows = (calls > 0) & (moved <= calls * STDIO_SMALL_CALL)
    small, total = int(calls[small_rows].sum()), int(calls.sum())
    if not _many_small(t, small, total):
        return None
    time = s.num(f"STDIO_F_{op}_TIME").astype(float) * small_rows
    rate, own = costs.large_request_rate(ctx, op, t)
    ideal = np.where(small_rows, moved, 0.0) / rate if rate > 0 else np.zeros(len(s))
    seconds = costs.on_critical_path(ctx, s, np.clip(time - ideal, 0, None), prefix="STDIO")
    mean = float(moved[small_rows].sum()) / small
    per_row = np.where(small_rows, calls, 0.0)
    g = s.group_by("id")
    per_file = g.sum(per_row)
    files, n = ctx.rank_files(g.keys, per_file, f"small_{verb}s", Unit.COUNT, per_file / total, f"share_of_{verb}s")
    where = "this job's own large-request rate" if own else "the reference rank bandwidth"
    return Hit(
        message=f"{small:,} small STDIO {verb} calls (f{verb}, {human_bytes(mean)} on average) make up "
        f"{pct(small / total)} of all {total:,} STDIO {verb} calls.",
        subject=f"{small:,} STDIO {verb}s{_per_rank(ctx, s, per_row, small)} of {human_bytes(mean)} on average",
        evidence=_small_evidence(verb, small, total),
        files=files,
        files_total=n,
        cost=costs.modelled(
            seconds,
            f"{float(time.sum()):.3g} s (summed over ranks) in {small:,} STDIO {verb}s of {human_bytes(mean)} on "
            f"average, less their bytes at {where} ({costs.rate_text(rate)}), on the busiest rank",
            confidence=Confidence.MEDIUM if own else Confidence.LOW,
            ops=small,
        ),
    )


twins(
    "P05",
    "P06",
    _small_any,
    title="Many small {op} requests",
    names=("small_reads", "small_writes"),
    layer=Layer.POSIX,
    severity=Severity.CRITICAL,
    requires_any=("POSIX", "DFS", "STDIO"),
    recommendations=("aggregate-small-requests",),
    family="small-requests",
    origin="drishti",
)


@check(
    "P07",
    title="Misaligned memory buffers",
    layer=Layer.POSIX,
    severity=Severity.CRITICAL,
    requires=POSIX,
    recommendations=("align-memory-buffers",),
    origin="drishti",
)
def misaligned_memory(ctx: Context, t: Thresholds) -> Hit | None:
    reads, writes = _ops(ctx)
    total = reads + writes
    p = ctx.posix_records
    bad = _sum(p, "POSIX_MEM_NOT_ALIGNED")
    if total and bad / total > t.misaligned_requests:
        align = int(p["POSIX_MEM_ALIGNMENT"].max())
        return Hit(
            message=f"{pct(bad / total)} of POSIX requests ({bad:,} of {total:,}) use memory buffers "
            f"not aligned to {align} bytes.",
            evidence=[
                Metric(name="mem_not_aligned", value=bad, unit=Unit.COUNT),
                Metric(name="total_requests", value=total, unit=Unit.COUNT),
                Metric(name="mem_not_aligned_share", value=bad / total, unit=Unit.RATIO),
                Metric(name="mem_alignment", value=align, unit=Unit.BYTES),
            ],
            cost=costs.unknown(
                "no timer covers memory alignment: an unaligned buffer costs the kernel a copy, rarely a measurable "
                "share of the I/O time",
                ops=bad,
            ),
        )
    return None


@check(
    "P08",
    title="Misaligned file requests",
    layer=Layer.POSIX,
    severity=Severity.CRITICAL,
    requires=POSIX,
    recommendations=("align-file-requests",),
    family="misaligned",
    origin="drishti",
)
def misaligned_file(ctx: Context, t: Thresholds) -> Hit | None:
    p = ctx.posix_records
    reads, writes = _ops(ctx)
    total = reads + writes
    bad = _sum(p, "POSIX_FILE_NOT_ALIGNED")
    if not (total and bad / total > t.misaligned_requests):
        return None
    per_file = ctx.files
    files, n = ctx.rank_files(per_file["id"], per_file["POSIX_FILE_NOT_ALIGNED"], "file_not_aligned", Unit.COUNT)
    align = int(p["POSIX_FILE_ALIGNMENT"].max())
    recs: tuple[str, ...] = _hdf5_recs(ctx, "hdf5-alignment")
    if ctx.profile.has("LUSTRE"):
        recs = (*recs, "lustre-stripe-size")
    return Hit(
        message=f"{pct(bad / total)} of POSIX requests ({bad:,} of {total:,}) do not start on a "
        f"{align}-byte file-system block boundary.",
        evidence=[
            Metric(name="file_not_aligned", value=bad, unit=Unit.COUNT),
            Metric(name="total_requests", value=total, unit=Unit.COUNT),
            Metric(name="file_not_aligned_share", value=bad / total, unit=Unit.RATIO),
            Metric(name="file_alignment", value=align, unit=Unit.BYTES),
        ],
        files=files,
        files_total=n,
        extra_recommendations=recs,
        cost=_misaligned_cost(ctx, bad),
    )


def _misaligned_cost(ctx: Context, bad: int) -> costs.Cost:
    # Darshan counts misaligned requests, not their time: price them at most at their share of the
    # records' read and write time (an upper bound: aligned requests of the same size cost time too).
    p = ctx.posix_records
    ops = (p["POSIX_READS"] + p["POSIX_WRITES"]).astype(float)
    rw = (p["POSIX_F_READ_TIME"] + p["POSIX_F_WRITE_TIME"]).astype(float)
    share = np.where(ops > 0, p["POSIX_FILE_NOT_ALIGNED"].astype(float) / np.maximum(ops, 1), 0.0)
    seconds = costs.on_critical_path(ctx, p, rw * np.clip(share, 0, 1))
    return costs.modelled(
        seconds,
        "upper bound: the misaligned requests' share of the read and write time, on the busiest rank "
        "(Darshan counts misaligned requests but does not time them)",
        confidence=Confidence.LOW,
        ops=bad,
    )


def _redundant(ctx: Context, t: Thresholds, op: str) -> Hit | None:
    # Drishti compares the largest offset of any file with the bytes moved across all files,
    # which flags sparse access, not redundancy. Redundant traffic is per file: more bytes moved
    # than the file's extent means some bytes moved more than once.
    verb, col, maxcol = (
        ("read", "POSIX_BYTES_READ", "POSIX_MAX_BYTE_READ")
        if op == "READ"
        else ("written", "POSIX_BYTES_WRITTEN", "POSIX_MAX_BYTE_WRITTEN")
    )
    files = ctx.files
    if files.empty:
        return None
    extent = files[maxcol] + 1
    excess = np.where(files[maxcol] >= 0, np.maximum(files[col] - extent, 0), 0)
    sel = excess >= max(t.redundant_min_bytes, 1)
    if not sel.any():
        return None
    ids, excess, extent, file_moved = files["id"][sel], excess[sel], extent[sel], files[col][sel]
    total_excess = int(excess.sum())
    moved = int(file_moved.sum())
    ratio = file_moved / extent
    top, n = ctx.rank_files(ids, excess, f"redundant_bytes_{verb}", Unit.BYTES, ratio, "times_extent", Unit.RATIO)
    time_col = "POSIX_F_READ_TIME" if op == "READ" else "POSIX_F_WRITE_TIME"
    p = ctx.posix_records
    # Per file (all of ``files``), the share of its bytes moved again; each record takes its file's.
    redo = np.zeros(len(files))
    redo[sel] = np.minimum(excess / file_moved, 1.0)
    per_row = p[time_col].astype(float) * redo[np.searchsorted(files["id"], p["id"])]
    cost = costs.modelled(
        costs.on_critical_path(ctx, p, per_row),
        f"the {'write' if op == 'WRITE' else 'read'} time of those files times the share of their bytes "
        "moved again, on the busiest rank",
        nbytes=total_excess,
    )
    return Hit(
        cost=cost,
        message=f"{n:,} file(s) had more bytes {verb} than their extent: {human_bytes(total_excess)} of "
        f"{human_bytes(moved)} {verb} were transferred more than once.",
        evidence=[
            Metric(name=f"redundant_bytes_{verb}", value=total_excess, unit=Unit.BYTES),
            Metric(name=f"bytes_{verb}_in_those_files", value=moved, unit=Unit.BYTES),
            Metric(name="files", value=n, unit=Unit.COUNT),
        ],
        files=top,
        files_total=n,
    )


# Not twins: rereading input fits single-process and DAOS jobs too; rewriting the same bytes is judged for MPI only.
@check(
    "P09",
    title="Redundant read traffic",
    layer=Layer.POSIX,
    severity=Severity.WARNING,
    requires=POSIX,
    recommendations=("avoid-redundant-io",),
    family="redundant",
    applies_to=frozenset({Workload.MPI, Workload.SINGLE_PROCESS, Workload.DAOS}),
    origin="drishti",
)
def redundant_reads(ctx: Context, t: Thresholds) -> Hit | None:
    return _redundant(ctx, t, "READ")


@check(
    "P10",
    title="Redundant write traffic",
    layer=Layer.POSIX,
    severity=Severity.WARNING,
    requires=POSIX,
    recommendations=("avoid-redundant-io",),
    family="redundant",
    origin="drishti",
)
def redundant_writes(ctx: Context, t: Thresholds) -> Hit | None:
    return _redundant(ctx, t, "WRITE")


def _first_accesses(ctx: Context, op: str) -> np.ndarray:
    """Per record (row of ``posix_records``), how many of its requests were some rank's first request to the file.

    Darshan compares each request with the end of the previous one, starting from offset 0, so a
    rank's first request can never count as sequential. Drishti counts it as random ("total minus
    sequential"), which makes a file read once from the start look 100 % random.
    """
    p = ctx.posix_records
    ranks_per_record = np.where(p["rank"] >= 0, 1, max(ctx.meta.nprocs, 1))
    # Each open starts over at offset 0 while Darshan keeps the previous request's end: a file read again
    # from the start after a reopen (a data loader's next epoch) is not random access either.
    starts = np.maximum(ranks_per_record, p["POSIX_OPENS"])
    out: np.ndarray = np.minimum(p[f"POSIX_{op}S"], starts)
    return out


def _pattern(ctx: Context, op: str) -> tuple[int, int, int, int]:
    p = ctx.posix_records
    total = _sum(p, f"POSIX_{op}S")
    consec = _sum(p, f"POSIX_CONSEC_{op}S")
    seq = _sum(p, f"POSIX_SEQ_{op}S") - consec  # sequential but not consecutive
    first = int(_first_accesses(ctx, op).sum())
    return total, consec, seq, max(total - consec - seq - first, 0)


def _backward_per_row(ctx: Context, op: str) -> np.ndarray:
    """Per POSIX record, the ``op`` requests that went backwards (neither sequential nor a file's first)."""
    p = ctx.posix_records
    back: np.ndarray = np.maximum(p[f"POSIX_{op}S"] - p[f"POSIX_SEQ_{op}S"] - _first_accesses(ctx, op), 0)
    return back


def _random_files(ctx: Context, op: str) -> tuple[list[FileEvidence], int]:
    p = ctx.posix_records
    per_row = _backward_per_row(ctx, op)
    g = p.group_by("id")
    return ctx.rank_files(g.keys, g.sum(per_row), f"random_{op.lower()}s", Unit.COUNT)


def _random_hit(ctx: Context, t: Thresholds, op: str) -> Hit | None:
    total, consec, seq, rand = _pattern(ctx, op)
    verb = op.lower()
    if not (total and rand and rand / total > t.random_operations):
        return None
    cost = _random_cost(ctx, t, op, rand)
    # Cost before count: Drishti's absolute count gate (1,000 random requests) stands unless the random
    # requests, however few, cost a real share of the run (998 random 4 MiB reads taking 44 s of 96 s).
    s = ctx.io_share
    priced = cost.seconds or 0.0
    worth = s is not None and s.runtime_s > 0 and priced >= max(1.0, t.random_cost_share * s.runtime_s)
    if rand > t.random_operations_absolute or worth:
        files, n = _random_files(ctx, op)
        # The size those jumps move: 4 KiB pages and 4 MiB blocks read at random are different problems.
        p = ctx.posix_records
        jumped = p.where(_backward_per_row(ctx, op) > 0)
        top = most_common(size_counts(jumped, "POSIX") or {})
        size = top[0][0] if top else None
        common = f"; the most common request size on those files is {human_bytes(size)}" if size else ""
        return Hit(
            cost=cost,
            message=f"{rand:,} of {total:,} {verb} requests ({pct(rand / total)}) go backwards in the file "
            f"(random access); {pct(consec / total)} are consecutive and {pct(seq / total)} sequential{common}.",
            subject=f"{rand:,} backward {verb}s" + (f" of {human_bytes(size)}" if size else ""),
            evidence=[
                Metric(name=f"random_{verb}s", value=rand, unit=Unit.COUNT),
                Metric(name=f"total_{verb}s", value=total, unit=Unit.COUNT),
                Metric(name=f"random_{verb}_share", value=rand / total, unit=Unit.RATIO),
            ],
            files=files,
            files_total=n,
            extra_recommendations=ctx.collective_advice(op) if ctx.profile.has("MPI-IO") else (),
        )
    return None


def _random_cost(ctx: Context, t: Thresholds, op: str, rand: int) -> costs.Cost:
    """The random requests' share of the time, less their bytes at this job's large-request rate."""
    p = ctx.posix_records
    first = _first_accesses(ctx, op)
    if op == "READ" and ctx.unrequested_read_ids:
        keep = ~p.isin("id", ctx.unrequested_read_ids)
        p, first = p.where(keep), first[keep]
    n = p[f"POSIX_{op}S"].astype(float)
    back = np.maximum(p[f"POSIX_{op}S"] - p[f"POSIX_SEQ_{op}S"] - first, 0).astype(float)
    # Random order jumps forward about as often as backward, and Darshan files the forward jumps as
    # "sequential". Count as many forward jumps as backward ones (never more than there are): strided and
    # multi-pass readers, whose forward jumps are not random, rarely go backwards, so they gain little.
    jumps = np.maximum(p[f"POSIX_SEQ_{op}S"] - p[f"POSIX_CONSEC_{op}S"], 0).astype(float)
    r = back + np.minimum(jumps, back)
    share = np.where(n > 0, r / np.maximum(n, 1), 0.0)
    time = p[f"POSIX_F_{op}_TIME"].astype(float) * share
    nbytes = p["POSIX_BYTES_READ" if op == "READ" else "POSIX_BYTES_WRITTEN"].astype(float) * share
    rate, own = costs.large_request_rate(ctx, op, t)
    per_row = np.clip(time - nbytes / rate, 0, None)
    seconds = costs.on_critical_path(ctx, p, per_row)
    # As for small requests: without a rate of its own, a cost that holds at a tenth of the reference is no mere
    # upper bound, so it ranks beside the other modelled causes rather than after them.
    floor = None if own else costs.holds_below_reference(ctx, p, time, nbytes, rate, seconds, "POSIX")
    return costs.modelled(
        seconds,
        f"the random requests' share of the {op.lower()} time (those going backwards and as many forward "
        f"jumps) less their bytes at "
        f"{'this job' if own else 'the reference'}'s large-request rate ({costs.rate_text(rate)}), on the busiest rank"
        + (f"; still {floor:.3g} s at a tenth of that rate" if floor is not None else ""),
        confidence=Confidence.MEDIUM if own or floor is not None else Confidence.LOW,
        ops=rand,
    )


def _sequential_hit(ctx: Context, t: Thresholds, op: str) -> Hit | None:
    total, consec, seq, rand = _pattern(ctx, op)
    verb = op.lower()
    # "Mostly in order" needs the random share within the threshold, not merely too few random
    # requests to raise P11/P13.
    if not total or rand / total > t.random_operations:
        return None
    return Hit(
        message=f"{verb.capitalize()} requests are mostly in order: {pct(consec / total)} consecutive and "
        f"{pct(seq / total)} sequential of {total:,}.",
        evidence=[
            Metric(name=f"consecutive_{verb}s", value=consec, unit=Unit.COUNT),
            Metric(name=f"sequential_{verb}s", value=seq, unit=Unit.COUNT),
            Metric(name=f"total_{verb}s", value=total, unit=Unit.COUNT),
        ],
    )


twins(
    "P11",
    "P13",
    _random_hit,
    title="Random {op} access",
    names=("random_reads", "random_writes"),
    layer=Layer.POSIX,
    severity=Severity.CRITICAL,
    requires=POSIX,
    recommendations=("sequential-access",),
    family="random",
    origin="drishti",
)
twins(
    "P12",
    "P14",
    _sequential_hit,
    title="Sequential {op} access",
    names=("sequential_reads", "sequential_writes"),
    layer=Layer.POSIX,
    severity=Severity.OK,
    requires=POSIX,
    origin="drishti",
)


def _shared(ctx: Context) -> Table:
    """Records of files that several ranks access.

    Darshan reduces a file to one rank -1 record only when every rank opened it; a file shared by
    all but one rank keeps one record per rank. Both are shared files.
    """

    def shared() -> Table:
        p = ctx.posix_records
        # Files with more than one per-rank record (records are per (file, rank)).
        ids, counts = np.unique(p["id"][p["rank"] >= 0], return_counts=True)
        return p.where((p["rank"] < 0) | np.isin(p["id"], ids[counts > 1]))

    return ctx.memo("posix_shared", shared)


@check(
    "P15",
    title="Small reads to shared files",
    layer=Layer.POSIX,
    severity=Severity.CRITICAL,
    requires=POSIX,
    recommendations=("aggregate-small-requests", "mpiio-collective-io"),
    family="small-requests",
    origin="drishti",
)
def shared_small_reads(ctx: Context, t: Thresholds) -> Hit | None:
    shared = _shared(ctx)
    return _small(ctx, t, "READ", shared, shared_only=True) if len(shared) else None


@check(
    "P16",
    title="Small writes to shared files",
    layer=Layer.POSIX,
    severity=Severity.CRITICAL,
    requires=POSIX,
    recommendations=("aggregate-small-requests", "mpiio-collective-io"),
    family="small-requests",
    origin="drishti",
)
def shared_small_writes(ctx: Context, t: Thresholds) -> Hit | None:
    shared = _shared(ctx)
    return _small(ctx, t, "WRITE", shared, shared_only=True) if len(shared) else None


@check(
    "P17",
    title="Slow metadata operations",
    layer=Layer.POSIX,
    severity=Severity.CRITICAL,
    requires=POSIX,
    recommendations=("reduce-metadata",),
    origin="drishti",
    family="metadata",
)
def long_metadata(ctx: Context, t: Thresholds) -> Hit | None:
    # Drishti counts records over the threshold and calls them ranks. We sum each rank's
    # metadata time over its files, spreading a shared record's (summed) time evenly over ranks.
    p = ctx.posix_records
    nprocs = max(ctx.meta.nprocs, 1)
    meta = p["POSIX_F_META_TIME"]
    own = p["rank"] >= 0
    by_rank = Groups(p["rank"][own])
    shared_each = float(meta[~own].sum()) / nprocs
    per_rank = by_rank.sum(meta[own]) + shared_each
    over = per_rank > t.metadata_time_rank
    slow_ranks, slow = _descending(by_rank.keys[over], per_rank[over])
    # Ranks with no file of their own still carry their share of the shared files' time.
    silent = max(nprocs - len(by_rank), 0) if shared_each > t.metadata_time_rank else 0
    count = len(slow) + silent
    if count == 0:
        return None
    worst = float(slow[0]) if len(slow) else shared_each
    return Hit(
        message=f"{count:,} rank(s) spent more than {t.metadata_time_rank:g} s in POSIX metadata "
        f"operations (open, stat, seek, close, sync); the worst spent {worst:.1f} s.",
        evidence=[
            Metric(name="ranks_over_threshold", value=count, unit=Unit.COUNT),
            Metric(name="max_rank_meta_time", value=worst, unit=Unit.SECONDS),
            Metric(name="total_meta_time", value=float(meta.sum()), unit=Unit.SECONDS),
        ],
        ranks=[int(r) for r in slow_ranks[: ctx.top_n]],
        extra_recommendations=_hdf5_recs(ctx, "hdf5-collective-metadata", "hdf5-metadata-cache"),
        cost=_metadata_cost(ctx, worst),
    )


def _metadata_cost(ctx: Context, worst: float) -> costs.Cost:
    """The metadata time on the critical path (as J03 prices it: a shared record counts with the slowest rank's
    share of it, not an even share), or the busiest rank's POSIX metadata time if more (files opened through
    MPI-IO count at that layer in the former)."""
    return costs.measured(
        max(costs.busiest_rank_metadata(ctx).meta_s, worst),
        "metadata time (open, stat, seek, close, sync) of the rank with the most of it; a shared record counts with "
        "the slowest rank's share",
    )


def _descending(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``keys`` and ``values`` by ``values`` descending, ties ordered as pandas' default (quicksort)
    ``sort_values(ascending=False)`` orders them: the order the ranks were reported in before the port."""
    rev = values[::-1].argsort(kind="quicksort")
    order = np.arange(len(values))[::-1][rev][::-1]
    return keys[order], values[order]


def _per_file_extremes(ctx: Context, t: Thresholds) -> Table:
    return ctx.memo("posix_shared_extremes", lambda: _compute_extremes(ctx, t))


_EXTREMES = (
    "POSIX_SLOWEST_RANK",
    "POSIX_SLOWEST_RANK_BYTES",
    "POSIX_FASTEST_RANK_BYTES",
    "POSIX_F_SLOWEST_RANK_TIME",
    "POSIX_F_FASTEST_RANK_TIME",
    "POSIX_BYTES_WRITTEN",
    "POSIX_BYTES_READ",
    "POSIX_F_WRITE_TIME",
    "POSIX_F_READ_TIME",
    "POSIX_F_META_TIME",
)
_EXTREME_SUMS = (
    "POSIX_BYTES_WRITTEN",
    "POSIX_BYTES_READ",
    "POSIX_F_WRITE_TIME",
    "POSIX_F_READ_TIME",
    "POSIX_F_META_TIME",
)


def _compute_extremes(ctx: Context, t: Thresholds) -> Table:
    """One row per shared file with Darshan's slowest/fastest-rank fields.

    Rank -1 records carry them; for files shared by only some ranks they are computed the same
    way from the per-rank records (slowest and fastest rank by I/O time): the rank -1 records first, in
    record order, then those files by id.
    """
    shared = _shared(ctx)
    reduced = shared.where(shared["rank"] < 0)
    per_rank = shared.where(shared["rank"] >= 0)
    g = per_rank.group_by("id")
    moved = g.sum(per_rank["POSIX_BYTES_READ"] + per_rank["POSIX_BYTES_WRITTEN"])
    per_rank = per_rank.where(np.isin(per_rank["id"], g.keys[moved >= t.shared_min_bytes]))
    cols = ("id", *_EXTREMES)
    if not len(per_rank):
        return Table({c: reduced[c] for c in cols}, len(reduced))
    io_time = per_rank["POSIX_F_READ_TIME"] + per_rank["POSIX_F_WRITE_TIME"] + per_rank["POSIX_F_META_TIME"]
    nbytes = per_rank["POSIX_BYTES_READ"] + per_rank["POSIX_BYTES_WRITTEN"]
    g = per_rank.group_by("id")
    slow, fast = g.argmax(io_time), g.argmin(io_time)
    computed = {
        "id": g.keys,
        "POSIX_SLOWEST_RANK": per_rank["rank"][slow],
        "POSIX_SLOWEST_RANK_BYTES": nbytes[slow],
        "POSIX_FASTEST_RANK_BYTES": nbytes[fast],
        "POSIX_F_SLOWEST_RANK_TIME": io_time[slow],
        "POSIX_F_FASTEST_RANK_TIME": io_time[fast],
        **{c: g.sum(per_rank[c]) for c in _EXTREME_SUMS},
    }
    return Table({c: np.concatenate([reduced[c], computed[c]]) for c in cols}, len(reduced) + len(g))


def _straggler_hit(ctx: Context, t: Thresholds, kind: str) -> Hit | None:
    shared = _per_file_extremes(ctx, t)
    if shared.empty:
        return None
    if kind == "bytes":
        spread = np.abs(shared["POSIX_SLOWEST_RANK_BYTES"] - shared["POSIX_FASTEST_RANK_BYTES"])
        total = shared["POSIX_BYTES_WRITTEN"] + shared["POSIX_BYTES_READ"]
    else:
        spread = np.abs(shared["POSIX_F_SLOWEST_RANK_TIME"] - shared["POSIX_F_FASTEST_RANK_TIME"])
        total = shared["POSIX_F_WRITE_TIME"] + shared["POSIX_F_READ_TIME"] + shared["POSIX_F_META_TIME"]
    ratio = _ratio(spread, total)
    hit = ratio > t.imbalance_stragglers
    if not hit.any():
        return None
    files, n = ctx.rank_files(shared["id"][hit], ratio[hit], f"{kind}_imbalance", Unit.RATIO)
    ranks = sorted({int(r) for r in shared["POSIX_SLOWEST_RANK"][hit].tolist()})[: ctx.top_n]
    what = "data" if kind == "bytes" else "time"
    message = (
        f"{n:,} shared file(s) show {what} imbalance between ranks: the slowest and fastest rank "
        f"differ by up to {pct(float(ratio.max()))} of the file's total {what}."
    )
    severity = None
    cost = _straggler_cost(ctx, shared, hit)
    if max(ctx.collective_share("WRITE"), ctx.collective_share("READ")) >= 0.5:
        # Under collective buffering only aggregators do POSIX I/O, so ranks differ by design.
        severity = Severity.INFO
        message += (
            " The job uses collective MPI-IO, so the busy ranks are most likely its aggregators: expected, "
            "unless the aggregators are too few."
        )
        cost = costs.unknown(
            "under collective MPI-IO the aggregators do the POSIX I/O by design; the time other ranks wait is "
            "MPI-IO time above POSIX (X04)"
        )
    return Hit(
        cost=cost,
        message=message,
        evidence=[
            Metric(name="files", value=n, unit=Unit.COUNT),
            Metric(name=f"max_{kind}_imbalance", value=float(ratio.max()), unit=Unit.RATIO),
        ],
        files=files,
        files_total=n,
        ranks=ranks,
        severity=severity,
    )


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den``, 0 where ``den`` is 0."""
    nonzero = den != 0
    out: np.ndarray = np.where(nonzero, num / np.where(nonzero, den, 1), 0.0)
    return out


def _straggler_cost(ctx: Context, shared: Table, hit: np.ndarray) -> costs.Cost:
    """Per flagged file, the slowest rank's time less the mean rank's: what the others waited."""
    rows = shared.where(hit)
    per_rank = _shared(ctx)
    per_rank = per_rank.where(per_rank["rank"] >= 0)
    g = per_rank.group_by("id")
    nprocs = max(ctx.meta.nprocs, 1)
    total = rows["POSIX_F_WRITE_TIME"] + rows["POSIX_F_READ_TIME"] + rows["POSIX_F_META_TIME"]
    ranks = np.maximum(g.lookup(rows["id"], g.nunique(per_rank["rank"]), fill=nprocs), 1)
    wait = np.maximum(rows["POSIX_F_SLOWEST_RANK_TIME"] - total / ranks, 0)
    return costs.measured(
        float(wait.sum()), "per shared file, the slowest rank's I/O time less the mean rank's (what the others waited)"
    )


@check(
    "P18",
    title="Data imbalance on shared files (stragglers)",
    layer=Layer.POSIX,
    severity=Severity.CRITICAL,
    requires=POSIX,
    recommendations=("balance-rank-io",),
    family="imbalance",
    origin="drishti",
)
def shared_data_imbalance(ctx: Context, t: Thresholds) -> Hit | None:
    return _straggler_hit(ctx, t, "bytes")


@check(
    "P19",
    title="Time imbalance on shared files (stragglers)",
    layer=Layer.POSIX,
    severity=Severity.CRITICAL,
    requires=POSIX,
    recommendations=("balance-rank-io",),
    family="imbalance",
    origin="drishti",
)
def shared_time_imbalance(ctx: Context, t: Thresholds) -> Hit | None:
    return _straggler_hit(ctx, t, "time")


def _rank_size_imbalance(ctx: Context, t: Thresholds, op: str) -> Hit | None:
    p = ctx.posix_records
    own = p.where(p["rank"] >= 0)
    if own.empty:
        return None
    col = "POSIX_BYTES_WRITTEN" if op == "WRITE" else "POSIX_BYTES_READ"
    g = own.group_by("id")
    most = g.max(own[col])
    ratio = _ratio(most - g.min(own[col]), most)
    uneven = ratio > t.imbalance_size
    if not uneven.any():
        return None
    ids, ratio = g.keys[uneven], ratio[uneven]
    verb = "written" if op == "WRITE" else "read"
    files, n = ctx.rank_files(ids, ratio, f"bytes_{verb}_imbalance", Unit.RATIO)
    worst = ids[int(np.argmax(ratio))]
    rows = own.where(own["id"] == worst)
    rank_ids, moved = rows["rank"], rows[col]
    heavy, light = int(rank_ids[moved.argmax()]), int(rank_ids[moved.argmin()])
    message = (
        f"{n:,} file(s) have uneven bytes {verb} per rank: in the worst, rank {heavy} moved "
        f"{human_bytes(int(moved.max()))} and rank {light} {human_bytes(int(moved.min()))} "
        f"({pct(float(ratio.max()))} difference)."
    )
    severity = None
    tcol = "POSIX_F_WRITE_TIME" if op == "WRITE" else "POSIX_F_READ_TIME"
    flagged = own.where(np.isin(own["id"], ids))
    time = own[tcol]
    cost = costs.measured(
        float(np.maximum(g.max(time)[uneven] - g.mean(time)[uneven], 0).sum()),
        f"per uneven file, the busiest rank's {verb[:-1] if op == 'WRITE' else 'read'} time less the mean rank's",
    )
    if op == "READ" and ctx.collective_share("WRITE") >= 0.5 and _reads_beneath_writes(ctx, flagged):
        # Reads the application never made: the aggregators' read-modify-write under collective writes.
        cost = costs.unknown("the uneven reads are the aggregators' read-modify-write under collective writes (X05)")
        severity = Severity.INFO
        message += " The reads are the aggregators' read-modify-write beneath collective MPI-IO writes (see X05)."
    elif ctx.collective_share(op) >= 0.5:
        # With collective buffering only the aggregator ranks touch the file at the POSIX level,
        # so this imbalance is how ROMIO works, not a defect of the application.
        cost = costs.unknown("under collective MPI-IO the aggregators do the POSIX I/O by design (see X04)")
        severity = Severity.INFO
        message += (
            f" The job {'writes' if op == 'WRITE' else 'reads'} through collective MPI-IO, so the heavy "
            f"ranks are most likely its aggregators: expected, unless the aggregators are too few."
        )
    return Hit(
        message=message,
        evidence=[
            Metric(name="files", value=n, unit=Unit.COUNT),
            Metric(name="max_imbalance", value=float(ratio.max()), unit=Unit.RATIO),
            Metric(name="collective_share", value=ctx.collective_share(op), unit=Unit.RATIO),
        ],
        files=files,
        files_total=n,
        ranks=[heavy, light],
        severity=severity,
        cost=cost,
        extra_recommendations=ctx.collective_advice(op) if ctx.profile.has("MPI-IO") else (),
    )


def _reads_beneath_writes(ctx: Context, rows: Table) -> bool:
    """Most POSIX read bytes of these files were not asked for at MPI-IO (read-modify-write beneath writes)."""
    m = ctx.mpiio_records
    if m.empty:
        return False
    asked = float(m["MPIIO_BYTES_READ"][np.isin(m["id"], rows["id"])].sum())
    read = float(rows["POSIX_BYTES_READ"].sum())
    return read > 0 and asked < 0.5 * read


twins(
    "P22",
    "P21",
    _rank_size_imbalance,
    title="Uneven {op} sizes across ranks",
    names=("rank_read_imbalance", "rank_write_imbalance"),
    layer=Layer.POSIX,
    severity=Severity.CRITICAL,
    requires=POSIX,
    recommendations=("balance-rank-io",),
    family="imbalance",
    origin="drishti",
)
