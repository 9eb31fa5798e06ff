"""Lustre layout and per-OST checks: stripe settings against how the job used each file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from iodiag.analysis import costs
from iodiag.analysis.context import Context, pct
from iodiag.analysis.models import Confidence, Layer, Metric, Severity, Unit
from iodiag.analysis.registry import Hit, Kind, check
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes

NEEDS = ("LUSTRE", "POSIX")


@dataclass(frozen=True)
class FileLayout:
    record_id: int
    stripe_size: int
    stripe_count: int
    osts: tuple[int, ...]
    bytes_written: int
    bytes_read: int
    io_time: float
    extent: int
    writers: int
    common_size: int
    common_share: float
    not_aligned_share: float
    """Share of the file's requests that do not start on a stripe (Darshan's file alignment) boundary."""
    ranks: tuple[int, ...]


def _common_access(posix: pd.DataFrame) -> pd.DataFrame:
    """Per file: the most frequent request size over its records and that size's share of its requests."""
    parts = [
        pd.DataFrame(
            {
                "id": posix["id"].to_numpy(),
                "size": posix[f"POSIX_ACCESS{i}_ACCESS"].to_numpy(),
                "count": posix[f"POSIX_ACCESS{i}_COUNT"].to_numpy(),
            }
        )
        for i in range(1, 5)
    ]
    long = pd.concat(parts, ignore_index=True)
    long = long[(long["size"] > 0) & (long["count"] > 0)]
    if long.empty:
        return pd.DataFrame(columns=["size", "count"])
    sums = long.groupby(["id", "size"])["count"].sum().reset_index()
    # Ties go to the larger size, so the choice does not depend on record order.
    sums = sums.sort_values(["id", "count", "size"], ascending=[True, False, False], kind="stable")
    return sums.drop_duplicates("id").set_index("id")[["size", "count"]]


def layouts(ctx: Context) -> list[FileLayout]:
    cached = ctx.cache.get("lustre_layouts")
    if cached is None:
        cached = ctx.cache["lustre_layouts"] = _build_layouts(ctx)
    return cast(list[FileLayout], cached)


def _build_layouts(ctx: Context) -> list[FileLayout]:
    lus = ctx.table("LUSTRE")
    posix = ctx.posix
    if lus.empty or posix.empty:
        return []
    nprocs = max(ctx.meta.nprocs, 1)
    posix = posix[posix["id"].isin(lus["id"].unique())]
    if posix.empty:
        return []
    files = ctx.posix_files
    files = files[files.index.isin(lus["id"].unique())]
    agg = pd.DataFrame(
        {
            "bytes_written": files["POSIX_BYTES_WRITTEN"],
            "bytes_read": files["POSIX_BYTES_READ"],
            "io_time": files["POSIX_F_READ_TIME"] + files["POSIX_F_WRITE_TIME"],
            "ops": files["POSIX_READS"] + files["POSIX_WRITES"],
            "extent": files[["POSIX_MAX_BYTE_WRITTEN", "POSIX_MAX_BYTE_READ"]].max(axis=1),
            "shared": files["shared"],
            "not_aligned": files["POSIX_FILE_NOT_ALIGNED"],
        }
    )
    wrote = posix.loc[posix["POSIX_WRITES"] > 0, ["id", "rank"]].drop_duplicates()
    agg["writers"] = wrote.groupby("id").size().reindex(agg.index, fill_value=0)
    agg["any_writer"] = agg["writers"] > 0
    p = posix
    common = _common_access(posix)
    comps = lus.sort_values(["id", "component"], kind="stable")
    first = comps.drop_duplicates("id").set_index("id")["stripe_size"]
    counts = comps.groupby("id")["stripe_count"].max()
    table = agg.join(common, how="left").join(first.rename("stripe_size")).join(counts.rename("stripe_count"))
    osts = _grouped_tuples(comps["id"].to_numpy(), comps["osts"].to_numpy(), flatten=True)
    own = p[p["rank"] >= 0][["id", "rank"]].drop_duplicates().sort_values(["id", "rank"])
    ranks = _grouped_tuples(own["id"].to_numpy(), own["rank"].to_numpy(), flatten=False)
    out = []
    for rec in table.reset_index().to_dict("records"):
        rid = int(rec["id"])
        ops = float(rec["ops"])
        size = 0 if pd.isna(rec["size"]) or ops <= 0 else int(rec["size"])
        share = min(float(rec["count"]) / ops, 1.0) if size else 0.0
        out.append(
            FileLayout(
                record_id=rid,
                stripe_size=int(rec["stripe_size"]),
                stripe_count=int(rec["stripe_count"]),
                osts=osts.get(rid, ()),
                bytes_written=int(rec["bytes_written"]),
                bytes_read=int(rec["bytes_read"]),
                io_time=float(rec["io_time"]),
                extent=max(int(rec["extent"]) + 1, 0),
                writers=nprocs if rec["shared"] and rec["any_writer"] else int(rec["writers"]),
                common_size=size,
                common_share=share,
                not_aligned_share=min(float(rec["not_aligned"]) / ops, 1.0) if ops > 0 else 0.0,
                ranks=ranks.get(rid, ()),
            )
        )
    return out


def _grouped_tuples(keys: np.ndarray, values: np.ndarray, flatten: bool) -> dict[int, tuple[int, ...]]:
    """Group ``values`` by sorted ``keys`` into tuples without a Python call per group."""
    if len(keys) == 0:
        return {}
    uniq, starts = np.unique(keys, return_index=True)
    out: dict[int, tuple[int, ...]] = {}
    for k, chunk in zip(uniq.tolist(), np.split(values, starts[1:]), strict=True):
        items = [int(o) for t in chunk for o in t] if flatten else [int(v) for v in chunk]
        out[int(k)] = tuple(dict.fromkeys(items))
    return out


def _layout_metrics(f: FileLayout) -> list[Metric]:
    return [
        Metric(name="stripe_count", value=f.stripe_count, unit=Unit.COUNT),
        Metric(name="stripe_size", value=f.stripe_size, unit=Unit.BYTES),
        Metric(name="writers", value=f.writers, unit=Unit.COUNT),
        Metric(name="bytes_written", value=f.bytes_written, unit=Unit.BYTES),
        Metric(name="common_request", value=f.common_size, unit=Unit.BYTES),
    ]


def _used_osts(f: FileLayout) -> int:
    used = len(f.osts) or f.stripe_count or 1
    if f.stripe_size > 0 and f.extent > 0:
        used = max(1, min(used, -(-f.extent // f.stripe_size)))
    return used


def _file_hit(
    ctx: Context, bad: list[FileLayout], message: str, evidence: list[Metric], cost: costs.Cost | None = None
) -> Hit:
    bad = sorted(bad, key=lambda f: (-(f.bytes_written + f.bytes_read), f.record_id))
    return Hit(
        message=message,
        evidence=evidence,
        files=[ctx.file(f.record_id, *_layout_metrics(f)) for f in bad[: ctx.top_n]],
        files_total=len(bad),
        cost=cost,
    )


@check(
    "L01",
    title="Shared file on a single OST",
    layer=Layer.LUSTRE,
    severity=Severity.CRITICAL,
    requires=NEEDS,
    recommendations=("lustre-stripe-count",),
    family="single-ost",
)
def single_ost_shared_file(ctx: Context, t: Thresholds) -> Hit | None:
    bad = [
        f
        for f in layouts(ctx)
        if f.stripe_count == 1 and f.writers >= t.lustre_many_ranks and f.bytes_written >= t.lustre_min_file_bytes
    ]
    if not bad:
        return None
    worst = max(bad, key=lambda f: f.writers)
    return _file_hit(
        ctx,
        bad,
        f"{len(bad):,} file(s) written by many ranks sit on a single OST (stripe count 1): in the worst, "
        f"{worst.writers:,} ranks wrote {human_bytes(worst.bytes_written)} through one storage server.",
        [
            Metric(name="files", value=len(bad), unit=Unit.COUNT),
            Metric(name="max_writers", value=worst.writers, unit=Unit.COUNT),
        ],
        costs.modelled(
            costs.files_time_cost(
                ctx, {f.record_id: 1 - 1 / min(f.writers, t.lustre_spread_osts) for f in bad}, ("WRITE",)
            ),
            f"the files' write time on the busiest rank, less what it would be spread over up to "
            f"{t.lustre_spread_osts} OSTs (one OST's bandwidth is the limit)",
            nbytes=sum(f.bytes_written for f in bad),
        ),
    )


def _straddles(size: int, stripe: int) -> bool:
    return size > 0 and stripe > 0 and size % stripe != 0 and stripe % size != 0


@check(
    "L02",
    title="Requests straddle stripe boundaries",
    layer=Layer.LUSTRE,
    severity=Severity.WARNING,
    requires=NEEDS,
    recommendations=("lustre-stripe-size", "align-file-requests"),
)
def requests_straddle_stripes(ctx: Context, t: Thresholds) -> Hit | None:
    def straddles(f: FileLayout) -> bool:
        if f.common_size < t.lustre_min_straddle_request or f.common_share < t.lustre_straddle_share:
            return False
        if _straddles(f.common_size, f.stripe_size):
            return True
        # A request size that fits the stripes still crosses boundaries when the offsets are shifted
        # (for example by a 2 KiB HDF5 header): large, mostly misaligned requests straddle.
        # (Requests larger than a stripe cross boundaries anyway; L03 covers stripes that are too small.)
        fits = f.stripe_size >= f.common_size and 2 * f.common_size >= f.stripe_size
        return fits and f.not_aligned_share >= t.lustre_straddle_share

    bad = [f for f in layouts(ctx) if straddles(f) and f.bytes_written + f.bytes_read >= t.lustre_min_file_bytes]
    if not bad:
        return None
    f = bad[0]
    return _file_hit(
        ctx,
        bad,
        f"{len(bad):,} file(s) are accessed mostly in requests that cross stripe boundaries (for example "
        f"{human_bytes(f.common_size)} requests on {human_bytes(f.stripe_size)} stripes, "
        f"{pct(f.not_aligned_share)} of them not starting on a stripe boundary), so many requests span two "
        f"OSTs and lock two stripes.",
        [
            Metric(name="files", value=len(bad), unit=Unit.COUNT),
            Metric(name="example_request", value=f.common_size, unit=Unit.BYTES),
            Metric(name="example_stripe_size", value=f.stripe_size, unit=Unit.BYTES),
            Metric(name="example_request_share", value=f.common_share, unit=Unit.RATIO),
        ],
        costs.modelled(
            costs.files_time_cost(ctx, {b.record_id: b.not_aligned_share for b in bad}),
            "upper bound: the straddling requests' share of the files' read and write time, on the busiest rank",
            confidence=Confidence.LOW,
            nbytes=sum(b.bytes_written + b.bytes_read for b in bad),
        ),
    )


@check(
    "L03",
    title="Stripe size far below the request size",
    layer=Layer.LUSTRE,
    severity=Severity.INFO,
    requires=NEEDS,
    recommendations=("lustre-stripe-size",),
    kind=Kind.CAUSE,
)
def stripes_too_small(ctx: Context, t: Thresholds) -> Hit | None:
    bad = [
        f
        for f in layouts(ctx)
        if f.stripe_size > 0
        and f.stripe_count > 1
        and f.common_size >= t.lustre_large_request_factor * f.stripe_size
        and f.common_share >= t.lustre_straddle_share
        and f.bytes_written + f.bytes_read >= t.lustre_min_file_bytes
    ]
    if not bad:
        return None
    f = max(bad, key=lambda x: x.common_size / x.stripe_size)
    return _file_hit(
        ctx,
        bad,
        f"{len(bad):,} file(s) use stripes far smaller than their typical request: "
        f"{human_bytes(f.common_size)} requests on {human_bytes(f.stripe_size)} stripes split each request "
        f"into {f.common_size // f.stripe_size} pieces.",
        [
            Metric(name="files", value=len(bad), unit=Unit.COUNT),
            Metric(name="max_request_to_stripe", value=f.common_size / f.stripe_size, unit=Unit.RATIO),
        ],
        costs.unknown("a request split over more OSTs also spreads load; the log has no number for the net cost"),
    )


def ost_load(ctx: Context) -> pd.DataFrame:
    """Bytes and I/O time per OST, spreading each file evenly over the OSTs its data reached."""
    cached = ctx.cache.get("ost_load")
    if cached is None:
        cached = ctx.cache["ost_load"] = _ost_load(ctx)
    return cast(pd.DataFrame, cached)


def _ost_load(ctx: Context) -> pd.DataFrame:
    rows: list[tuple[int, float, float, int]] = []
    for f in layouts(ctx):
        if not f.osts:
            continue
        used = len(f.osts)
        if f.stripe_size > 0 and f.extent > 0:
            used = max(1, min(used, -(-f.extent // f.stripe_size)))
        moved = f.bytes_written + f.bytes_read
        for ost in f.osts[:used]:
            rows.append((ost, moved / used, f.io_time, f.record_id))
    if not rows:
        return pd.DataFrame(columns=["bytes", "time", "files"])
    df = pd.DataFrame(rows, columns=["ost", "bytes", "time", "file"])
    g = df.groupby("ost").agg(bytes=("bytes", "sum"), time=("time", "sum"), files=("file", "nunique"))
    return g[g["bytes"] > 0]


def compared_osts(ctx: Context, t: Thresholds) -> pd.DataFrame:
    """OSTs with enough traffic that their speed says something about the OST, not about latency."""
    load = ost_load(ctx)
    return load[load["bytes"] >= t.lustre_min_file_bytes]


def _ost_files(ctx: Context, ost: int) -> list[FileLayout]:
    return [f for f in layouts(ctx) if ost in f.osts]  # called once per finding, not per OST


@check(
    "L04",
    title="Slow OST",
    layer=Layer.LUSTRE,
    severity=Severity.CRITICAL,
    requires=NEEDS,
    recommendations=("lustre-ost-health",),
    family="ost",
)
def slow_ost(ctx: Context, t: Thresholds) -> Hit | None:
    load = compared_osts(ctx, t)
    if len(load) < t.ost_min_count:
        return None
    per_gib = load["time"] / (load["bytes"] / 2**30)
    median = float(np.median(per_gib))
    if median <= 0:
        return None
    slow = per_gib[per_gib >= t.ost_slow_factor * median].sort_values(ascending=False)
    if slow.empty:
        return None
    ost = int(slow.index[0])
    files = sorted(_ost_files(ctx, ost), key=lambda f: -f.io_time)
    ranks = list(dict.fromkeys(r for f in files for r in f.ranks))  # slowest files' ranks first
    return Hit(
        message=f"OST {ost} was {float(slow.iloc[0]) / median:.1f}x slower per byte than the median of the "
        f"{len(load)} OSTs this job used ({float(slow.iloc[0]):.1f} s/GiB against {median:.1f} s/GiB); "
        f"{len(slow)} OST(s) are at least {t.ost_slow_factor:g}x slower. Every rank that wrote there waited on it.",
        evidence=[
            Metric(name="slow_ost", value=ost, unit=Unit.COUNT),
            Metric(name="slow_ost_seconds_per_gib", value=float(slow.iloc[0]), unit=Unit.SECONDS),
            Metric(name="median_seconds_per_gib", value=median, unit=Unit.SECONDS),
            Metric(name="slow_osts", value=len(slow), unit=Unit.COUNT),
            Metric(name="osts_used", value=len(load), unit=Unit.COUNT),
        ],
        files=[
            ctx.file(
                f.record_id,
                Metric(name="io_time", value=f.io_time, unit=Unit.SECONDS),
                Metric(name="bytes", value=f.bytes_written + f.bytes_read, unit=Unit.BYTES),
            )
            for f in files[: ctx.top_n]
        ],
        files_total=len(files),
        ranks=ranks[: ctx.top_n],
        cost=costs.measured(
            costs.files_time_cost(
                ctx, {f.record_id: (1 - median / float(slow.iloc[0])) / _used_osts(f) for f in files}
            ),
            f"time on OST {ost} beyond what its bytes take at the median OST's rate ({median:.1f} s/GiB), spread "
            "over the files striped on it, on the busiest rank",
            nbytes=int(load["bytes"].to_numpy(dtype=float)[list(load.index).index(ost)]),
        ),
    )


@check(
    "L05",
    title="Overloaded OST",
    layer=Layer.LUSTRE,
    severity=Severity.WARNING,
    requires=NEEDS,
    recommendations=("lustre-stripe-count", "lustre-ost-health"),
    family="ost",
)
def busy_ost(ctx: Context, t: Thresholds) -> Hit | None:
    load = compared_osts(ctx, t)
    if len(load) < t.ost_min_count:
        return None
    median = float(np.median(load["bytes"]))
    busy = load["bytes"][load["bytes"] >= t.ost_busy_factor * median].sort_values(ascending=False)
    if median <= 0 or busy.empty:
        return None
    ost = int(busy.index[0])
    total = float(load["bytes"].sum())
    files = sorted(_ost_files(ctx, ost), key=lambda f: -(f.bytes_written + f.bytes_read))
    return Hit(
        message=f"OST {ost} carried {human_bytes(float(busy.iloc[0]))}, {float(busy.iloc[0]) / median:.1f}x the "
        f"median OST and {pct(float(busy.iloc[0]) / total)} of the job's Lustre traffic: the layout concentrates "
        f"load on few OSTs.",
        evidence=[
            Metric(name="busy_ost", value=ost, unit=Unit.COUNT),
            Metric(name="busy_ost_bytes", value=float(busy.iloc[0]), unit=Unit.BYTES),
            Metric(name="median_ost_bytes", value=median, unit=Unit.BYTES),
            Metric(name="busy_osts", value=len(busy), unit=Unit.COUNT),
        ],
        files=[
            ctx.file(f.record_id, Metric(name="bytes", value=f.bytes_written + f.bytes_read, unit=Unit.BYTES))
            for f in files[: ctx.top_n]
        ],
        files_total=len(files),
        cost=costs.modelled(
            costs.files_time_cost(
                ctx, {f.record_id: (1 - median / float(busy.iloc[0])) / _used_osts(f) for f in files}
            ),
            f"the share of OST {ost}'s traffic above the median OST's, as time of the files on it, on the busiest rank",
            confidence=Confidence.LOW,
            nbytes=int(float(busy.iloc[0])),
        ),
    )
