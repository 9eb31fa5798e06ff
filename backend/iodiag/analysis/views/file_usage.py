"""Which files the job's I/O went to: each file's time and bytes at its top layer, largest first.

What "which file is worst?" is answered from when no finding names a file: a job whose one big file takes all
of its I/O time has no finding about that file, but the user still wants its name and its seconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from iodiag.analysis.models import (
    FileGroup,
    FileSystemUsage,
    FileUsage,
    OpCounts,
    RankSeconds,
    ReadReuse,
    SoftwareFiles,
)
from iodiag.analysis.views.calls import call_columns, module_calls
from iodiag.analysis.views.context import TOP_LAYER_BYTES, TOP_LAYER_TIME, Context
from iodiag.ingest.table import Groups, Table

TOP_FILES = 10
EXTRA_FILES = 3  # of the most bytes, and of the longest slowest-rank time, beyond the top by time


@dataclass(frozen=True)
class _Rows:
    """One row per (file, layer) with I/O, layers in counted order and files in the order their records come."""

    ids: np.ndarray
    layers: list[str]
    time: np.ndarray
    meta: np.ndarray
    read_s: np.ndarray
    write_s: np.ndarray
    read: np.ndarray
    written: np.ndarray
    ranks: np.ndarray
    low: np.ndarray
    high: np.ndarray
    slow_rank: np.ndarray
    slow_s: np.ndarray
    calls: dict[str, np.ndarray]


def _rows(ctx: Context) -> _Rows | None:
    return ctx.memo("file_usage.rows", lambda: _build_rows(ctx))


def _build_rows(ctx: Context) -> _Rows | None:
    nprocs = max(ctx.meta.nprocs, 1)
    ids: list[np.ndarray] = []
    layers: list[str] = []
    cols: dict[str, list[np.ndarray]] = {
        k: []
        for k in ("time", "meta", "read_s", "write_s", "read", "written", "ranks", "low", "high", "slow_rank", "slow_s")
    }
    calls: dict[str, list[np.ndarray]] = {}
    for layer, df in ctx.counted_layers:
        if not len(df):
            continue
        rd, wr, md, slowest = TOP_LAYER_TIME[layer]
        br, bw = TOP_LAYER_BYTES[layer]
        g = df.group_by("id")
        order = np.argsort(np.unique(df["id"], return_index=True)[1])  # the files by their first record
        time = _clipped(df[rd]).astype(float) + _clipped(df[wr]).astype(float) + _clipped(df[md]).astype(float)
        shared = df["rank"] < 0
        # A shared record (rank -1) stands for every rank, and keeps the slowest rank's time; a rank's own
        # record is that rank's time.
        ranks = shared * (nprocs - 1) + 1
        slow_s = np.where(shared, _clipped(df.num(slowest)), time)
        slow_col = df.get(slowest.replace("_F_SLOWEST_RANK_TIME", "_SLOWEST_RANK"))
        slow_rank = np.where(shared, slow_col if slow_col is not None else -1, df["rank"]).astype(np.int64)
        # The slowest row of each file: rows sorted by file, then by time, longest first.
        by = np.lexsort((-slow_s, g.inverse))
        first = by[np.r_[True, g.inverse[by][1:] != g.inverse[by][:-1]]]
        ids.append(g.keys[order])
        layers += [layer] * len(order)
        cols["time"].append(g.sum(time)[order])
        cols["meta"].append(g.sum(_clipped(df[md]).astype(float))[order])
        cols["read_s"].append(g.sum(_clipped(df[rd]).astype(float))[order])
        cols["write_s"].append(g.sum(_clipped(df[wr]).astype(float))[order])
        cols["read"].append(g.sum(_clipped(df[br]).astype(np.int64))[order])
        cols["written"].append(g.sum(_clipped(df[bw]).astype(np.int64))[order])
        cols["ranks"].append(g.sum(ranks)[order])
        cols["low"].append(g.min(df["rank"])[order])
        cols["high"].append(g.max(df["rank"])[order])
        cols["slow_rank"].append(slow_rank[first][order])
        cols["slow_s"].append(slow_s[first][order])
        per_kind = call_columns(layer, df)
        for kind in OpCounts.model_fields:
            col = per_kind.get(kind)
            calls.setdefault(kind, []).append(
                g.sum(col)[order] if col is not None else np.zeros(len(order), dtype=np.int64)
            )
    if not ids:
        return None
    c = {k: np.concatenate(v) for k, v in cols.items()}
    return _Rows(
        ids=np.concatenate(ids),
        layers=layers,
        time=c["time"],
        meta=c["meta"],
        read_s=c["read_s"],
        write_s=c["write_s"],
        read=c["read"],
        written=c["written"],
        ranks=c["ranks"],
        low=c["low"],
        high=c["high"],
        slow_rank=c["slow_rank"],
        slow_s=c["slow_s"],
        calls={k: np.concatenate(v) for k, v in calls.items()},
    )


def _used(r: _Rows) -> np.ndarray:
    used: np.ndarray = np.flatnonzero((r.time > 0) | (r.read + r.written > 0))
    return used


def _file_system(ctx: Context, layer: str, path: str, stripe_count: int | None) -> str | None:
    if layer in ("DFS", "DAOS"):
        return "daos"
    if stripe_count is not None:
        # The LUSTRE module saw the file's layout: the path reached Lustre through a link the mount
        # table does not show (a container's overlay root, a /grand -> /lus/grand symlink).
        return "lustre"
    return ctx.meta.fs_type(path)


def busiest_files(ctx: Context, n: int = TOP_FILES, named: frozenset[int] = frozenset()) -> tuple[list[FileUsage], int]:
    """The ``n`` files with the most I/O time (then bytes), and up to ``EXTRA_FILES`` more each by bytes moved and by
    slowest-rank time, most time first; and how many files had any I/O. ``named`` record ids (the files findings
    name) join too, up to ``EXTRA_NAMED`` of them, so a question about any file a finding names finds its row."""
    # The report's file table and the verdict's bandwidth headline both read it: built once per report
    key = f"file_usage.busiest.{n}.{hash(named)}"
    return ctx.memo(key, lambda: _busiest_files(ctx, n, named))


EXTRA_NAMED = 10


def _busiest_files(ctx: Context, n: int, named: frozenset[int] = frozenset()) -> tuple[list[FileUsage], int]:
    nprocs = max(ctx.meta.nprocs, 1)
    r = _rows(ctx)
    if r is None:
        return [], 0
    nbytes = r.read + r.written
    used = _used(r)
    total = float(r.time[used].sum())
    # Most time first, then most bytes; ties keep the order above.
    used = used[np.lexsort((-nbytes[used], -r.time[used]))]
    # Summed over ranks, time favours files every rank touches (16,384 ranks opening a tiny config file); the
    # files that moved the most data, and those whose slowest rank waited longest, are what a question about
    # "the checkpoint" or "the output" means: a few of each join the list, after the busiest by time.
    picked = list(used[:n].tolist())
    for key in (nbytes, r.slow_s):
        extra = [int(i) for i in used[np.argsort(-key[used], kind="stable")] if int(i) not in picked][:EXTRA_FILES]
        picked += [i for i in extra if key[i] > 0]
    if named:
        chosen = set(picked)
        picked += [int(i) for i in used.tolist() if int(r.ids[i]) in named and int(i) not in chosen][:EXTRA_NAMED]
    order = {int(i): k for k, i in enumerate(used.tolist())}
    picked.sort(key=lambda i: order[i])  # still most time first: the extras rank below the ten by time
    out = []
    lustre = ctx.records("LUSTRE") if ctx.profile.has("LUSTRE") else None
    for i in picked:
        rid = int(r.ids[i])
        count, size, osts = _stripes(lustre, rid)
        path = ctx.path(rid)
        t = float(r.time[i])
        slow_s = float(r.slow_s[i])
        out.append(
            FileUsage(
                path=path,
                layer=r.layers[i],
                io_time_s=t,
                meta_time_s=float(r.meta[i]),
                read_time_s=float(r.read_s[i]),
                write_time_s=float(r.write_s[i]),
                share_of_io=t / total if total > 0 else 0.0,
                bytes_read=int(r.read[i]),
                bytes_written=int(r.written[i]),
                ranks=int(min(int(r.ranks[i]), nprocs)),
                # "Who reads restart.h5?": one rank's own records, every layer (a file seen at MPI-IO and POSIX
                # has a row per layer; the top layer's row is the one kept here).
                only_rank=int(r.low[i]) if r.low[i] == r.high[i] and r.low[i] >= 0 else None,
                # DFS and DAOS records name objects in a DAOS container, not paths under the mount table.
                file_system=_file_system(ctx, r.layers[i], path, count),
                calls=OpCounts(**{k: int(v[i]) for k, v in r.calls.items()}),
                posix_calls=_posix_calls(ctx, rid) if r.layers[i] != "POSIX" else None,
                posix_slowest=_posix_slowest(ctx, rid) if r.layers[i] == "MPI-IO" else None,
                **_kept_pair(ctx, r.layers[i], rid),
                slowest_rank=int(r.slow_rank[i]) if r.slow_rank[i] >= 0 and slow_s > 0 else None,
                slowest_s=slow_s if slow_s > 0 else None,
                stripe_count=count,
                stripe_size=size,
                osts=osts,
                **_requests(ctx, r.layers[i], rid),
                **_windows(ctx, r.layers[i], rid),
                read_extent=read_extents(ctx).get(rid),
            )
        )
    # The standard streams (<STDOUT>, <STDERR>) are records, not files: "how many files?" leaves them out.
    streams = sum(1 for i in used.tolist() if _is_stream(ctx.path(int(r.ids[i]))))
    return out, len(used) - streams


_SANE_OFFSET = 1 << 62  # a max byte beyond this is a corrupt counter, not a file (exabytes)


def read_extents(ctx: Context) -> dict[int, int]:
    """Per file id, the bytes from offset 0 to the last byte read: Darshan's max byte read + 1, the largest over
    the file's records, at POSIX (STDIO's for files POSIX did not see). A file whose bytes read are well above
    its extent had some of its data read more than once."""
    return ctx.memo("file_usage.read_extents", lambda: _read_extents(ctx))


def _read_extents(ctx: Context) -> dict[int, int]:
    out: dict[int, int] = {}
    for module, prefix in (("STDIO", "STDIO"), ("POSIX", "POSIX")):  # POSIX last: it wins where both saw a file
        t = ctx.records(module)
        top, moved = f"{prefix}_MAX_BYTE_READ", f"{prefix}_BYTES_READ"
        if t.empty or top not in t.columns or moved not in t.columns:
            continue
        last_byte = t[top].astype(np.int64)
        keep = (t.num(moved) > 0) & (last_byte >= 0) & (last_byte < _SANE_OFFSET)
        if not keep.any():
            continue
        g = Groups(t["id"][keep])
        for rid, last in zip(g.keys.tolist(), g.max(last_byte[keep]).tolist(), strict=True):
            out[int(rid)] = int(last) + 1
    return out


READ_AGAIN = 1.05
"""Bytes read 5 % above a file's extent: more than a header read twice, so some data was read again."""


def read_reuse(ctx: Context) -> ReadReuse | None:
    """The job's bytes read against its read files' extents, each file at the module its extent comes from (POSIX,
    else STDIO); the standard streams left out. None when the job read no byte from a file."""
    extents = read_extents(ctx)
    counted, _ = _ids_by_direction(ctx)  # the files the report counts as read: one number for "files read"
    moved: dict[int, int] = {}
    for module, prefix in (("STDIO", "STDIO"), ("POSIX", "POSIX")):  # POSIX last: it wins, as in read_extents
        t = ctx.records(module)
        col = f"{prefix}_BYTES_READ"
        if t.empty or col not in t.columns:
            continue
        g = t.group_by("id")
        for rid, n in zip(g.keys.astype(np.uint64).tolist(), g.sum(_clipped(t[col])).tolist(), strict=True):
            if n > 0 and int(rid) in counted:
                moved[int(rid)] = int(n)
    if not moved:
        return None
    kept = {rid: n for rid, n in moved.items() if rid in extents}
    least = max(ctx.thresholds.redundant_min_bytes, 1)
    again = {rid: n - extents[rid] for rid, n in kept.items() if n - extents[rid] >= least}
    return ReadReuse(
        bytes_read=sum(kept.values()),
        extent=sum(extents[rid] for rid in kept),
        files=len(kept),
        files_again=len(again),
        bytes_again=sum(again.values()),
        small_again=sum(1 for rid, n in kept.items() if rid not in again and n > READ_AGAIN * extents[rid]),
        min_bytes=least,
        without_extent=len(moved) - len(kept),
    )


def files_per_layer(ctx: Context) -> dict[str, int]:
    """Files with I/O counted at each layer (each file once, at its top layer; the standard streams left out)."""
    r = _rows(ctx)
    out: dict[str, int] = {}
    if r is None:
        return out
    for i in _used(r).tolist():
        if not _is_stream(ctx.path(int(r.ids[i]))):
            out[r.layers[i]] = out.get(r.layers[i], 0) + 1
    return out


def _stripes(lustre: Table | None, rid: int) -> tuple[int | None, int | None, list[int]]:
    """A file's Lustre stripe count (the widest component), size (the first) and OSTs, where recorded."""
    if lustre is None or not len(lustre) or "stripe_count" not in lustre:
        return None, None, []
    rows = lustre.where(lustre.isin("id", [rid]))
    if not len(rows):
        return None, None, []
    osts: list[int] = []
    for o in rows["osts"].tolist() if "osts" in rows else []:
        for x in o if isinstance(o, (list, tuple, np.ndarray)) else []:
            if int(x) not in osts and len(osts) < 64:
                osts.append(int(x))
    return int(rows["stripe_count"].max()), int(rows["stripe_size"][0]), osts


_ACCESS_PREFIX = {"POSIX": "POSIX", "MPI-IO": "MPIIO", "DFS": "DFS"}  # the layers whose records keep ACCESS1..4


def _access_counts(rows: Table, prefix: str) -> dict[int, int]:
    """Request size -> how many requests had it, summed over the rows' ACCESS1-4 pairs (Darshan keeps each
    record's four most common sizes, so this is a floor on each size's count, exact for the leading ones)."""
    sizes: dict[int, int] = {}
    for k in range(1, 5):
        size, count = rows.get(f"{prefix}_ACCESS{k}_ACCESS"), rows.get(f"{prefix}_ACCESS{k}_COUNT")
        if size is None or count is None:
            continue
        for a, c in zip(size.tolist(), count.tolist(), strict=True):
            if a > 0 and c > 0:
                sizes[int(a)] = sizes.get(int(a), 0) + int(c)
    return sizes


def _group_common_size(ctx: Context, layers: set[str], ids: list[int]) -> dict[str, int]:
    """A group's most common request size and its count, where its files are counted at one layer that keeps
    ACCESS1-4 ("most common read size on the npz files?")."""
    prefix = _ACCESS_PREFIX.get(next(iter(layers))) if len(layers) == 1 else None
    table = ctx.records(next(iter(layers))) if prefix else None
    if prefix is None or table is None or not len(table) or not ids:
        return {}
    sizes = _access_counts(table.where(table.isin("id", ids)), prefix)
    if not sizes:
        return {}
    size, count = max(sizes.items(), key=lambda x: (x[1], x[0]))
    return {"common_size": size, "common_count": count}


def _requests(ctx: Context, layer: str, rid: int) -> dict[str, int | None]:
    """A file's most common request size and its count (summed over its records), and at MPI-IO how many of
    its calls were independent and how many collective."""
    out: dict[str, int | None] = {}
    prefix = _ACCESS_PREFIX.get(layer)
    table = ctx.records(layer) if prefix else None
    if prefix is None or table is None or not len(table):
        return out
    mine = table.where(table.isin("id", [rid]))
    if not len(mine):
        return out
    sizes = _access_counts(mine, prefix)
    if sizes:
        size_, count_ = max(sizes.items(), key=lambda x: (x[1], x[0]))
        out.update(common_size=size_, common_count=count_)
    p = ctx.posix_records
    posix = mine if layer == "POSIX" else (p.where(p.isin("id", [rid])) if len(p) else p)
    if len(posix) and "POSIX_FILE_ALIGNMENT" in posix:
        align = int(_clipped(posix.num("POSIX_FILE_ALIGNMENT")).max())
        if align > 0:
            out["alignment"] = align
    if layer == "DFS" and "DFS_CHUNK_SIZE" in mine:
        chunk = int(_clipped(mine.num("DFS_CHUNK_SIZE")).max())
        if chunk > 0:
            out["chunk_size"] = chunk
    if layer == "MPI-IO":
        total = {
            kind: sum(
                int(_clipped(mine.num(f"MPIIO_{kind}_{op}")).sum())
                for op in ("READS", "WRITES")
                if f"MPIIO_{kind}_{op}" in mine
            )
            for kind in ("INDEP", "COLL")
        }
        out.update(independent=total["INDEP"], collective=total["COLL"])
    return out


_TIMESTAMP_PREFIX = {"POSIX": "POSIX", "MPI-IO": "MPIIO", "STDIO": "STDIO", "DFS": "DFS", "DAOS": "DAOS"}


def _windows(ctx: Context, layer: str, rid: int) -> dict[str, float]:
    """When a file was read and written: the first start and last end Darshan timestamped over its records, in
    seconds from the job's start. A timestamp outside the run (a corrupt or missing one) is left out."""
    prefix = _TIMESTAMP_PREFIX.get(layer)
    table = ctx.records(layer) if prefix and ctx.profile.has(layer) else None
    if prefix is None or table is None or not len(table):
        return {}
    mine = table.where(table.isin("id", [rid]))
    limit = ctx.meta.runtime_s * 1.01 + 1.0 if ctx.meta.runtime_s > 0 else np.inf
    out: dict[str, float] = {}
    for op in ("READ", "WRITE"):
        start, end = f"{prefix}_F_{op}_START_TIMESTAMP", f"{prefix}_F_{op}_END_TIMESTAMP"
        if start not in mine or end not in mine:
            continue
        s, e = mine.num(start).astype(float), mine.num(end).astype(float)
        ok = np.isfinite(s) & np.isfinite(e) & (s > 0) & (e >= s) & (e <= limit)
        if ok.any():
            out[f"{op.lower()}_start_s"] = float(s[ok].min())
            out[f"{op.lower()}_end_s"] = float(e[ok].max())
    return out


def _posix_calls(ctx: Context, rid: int) -> OpCounts | None:
    """The POSIX calls beneath a file counted at MPI-IO (seeks, stats and syncs live only there)."""
    p = ctx.posix_records
    if not len(p):
        return None
    mine = p.where(p.isin("id", [rid]))
    return module_calls("POSIX", mine) if len(mine) else None


def _kept_pair(ctx: Context, layer: str, rid: int) -> dict[str, RankSeconds]:
    """The fastest and slowest rank of a file's one shared record at its top layer, with their bytes: "did every
    rank write the same amount to it?" is answered from these two alone."""
    records = next((df for name, df in ctx.counted_layers if name == layer), None)
    prefix = TOP_LAYER_TIME[layer][3].removesuffix("_F_SLOWEST_RANK_TIME") if layer in TOP_LAYER_TIME else ""
    if records is None or not len(records) or f"{prefix}_SLOWEST_RANK_BYTES" not in records.columns:
        return {}
    mine = records.where(records.isin("id", [rid]))
    if len(mine) != 1 or int(mine["rank"][0]) >= 0:
        return {}
    out: dict[str, RankSeconds] = {}
    for which in ("FASTEST", "SLOWEST"):
        cols = (f"{prefix}_{which}_RANK", f"{prefix}_{which}_RANK_BYTES", f"{prefix}_F_{which}_RANK_TIME")
        if any(c not in records.columns for c in cols):
            return {}
        rank = int(mine[f"{prefix}_{which}_RANK"][0])
        moved = int(mine.num(f"{prefix}_{which}_RANK_BYTES")[0])
        seconds = float(mine.num(f"{prefix}_F_{which}_RANK_TIME")[0])
        if rank < 0 or moved < 0 or not seconds >= 0:
            return {}
        out[f"kept_{which.lower()}"] = RankSeconds(rank=rank, seconds=seconds, bytes=moved, path=ctx.path(rid))
    return out


def _posix_slowest(ctx: Context, rid: int) -> RankSeconds | None:
    """The slowest rank of the shared POSIX record beneath a file counted at MPI-IO. Under collective I/O only the
    aggregators reach POSIX, so its bytes against the file's say how few ranks did the file system's work."""
    p = ctx.posix_records
    if not len(p) or "POSIX_SLOWEST_RANK_BYTES" not in p.columns:
        return None
    mine = p.where(p.isin("id", [rid]))
    if len(mine) != 1 or int(mine["rank"][0]) >= 0:
        return None
    rank = int(mine["POSIX_SLOWEST_RANK"][0])
    moved = int(mine.num("POSIX_SLOWEST_RANK_BYTES")[0])
    seconds = float(mine.num("POSIX_F_SLOWEST_RANK_TIME")[0])
    if rank < 0 or moved <= 0 or not seconds > 0:
        return None
    return RankSeconds(rank=rank, seconds=seconds, bytes=moved, path=ctx.path(rid))


MAX_GROUPS = 40
_DIGITS = re.compile(r"\d+")


def file_groups(ctx: Context, n: int = MAX_GROUPS) -> list[FileGroup]:
    """Files sharing a name pattern, the most files first: every extension over the job (``*.json``), each
    directory's files of one extension (``dir/*.py``) and each run of numbered names (``dir/restart.#.bin``,
    also over numbered folders: ``samples/#/sample_#.csv``).
    Patterns that hold exactly the same files keep only the most specific one."""
    return ctx.memo("file_usage.groups", lambda: _file_groups(ctx, n))


def _file_groups(ctx: Context, n: int) -> list[FileGroup]:
    r = _rows(ctx)
    if r is None:
        return []
    per_file: dict[int, _Acc] = {}
    for i in _used(r).tolist():
        acc = per_file.setdefault(int(r.ids[i]), _Acc())
        acc.add_row(r, i)
    groups: dict[str, _Acc] = {}
    members: dict[str, int] = {}  # a cheap fingerprint of the member set, to drop patterns with the same files
    specific: dict[str, int] = {}
    for rid, acc in per_file.items():
        path = ctx.path(rid)
        if _is_stream(path):
            continue
        for key, level in _patterns(path):
            groups.setdefault(key, _Acc()).add_file(acc, rid)
            members[key] = members.get(key, 0) ^ (rid * 0x9E3779B97F4A7C15 & 0xFFFFFFFFFFFFFFFF)
            specific[key] = level
    best: dict[tuple[int, int], str] = {}
    for key, g in groups.items():
        if g.files < 2:
            continue
        seen = (g.files, members[key])
        if seen not in best or specific[key] > specific[best[seen]]:
            best[seen] = key
    keys = sorted(best.values(), key=lambda k: (-groups[k].files, -(groups[k].read + groups[k].written), k))[:n]
    lustre = ctx.records("LUSTRE") if ctx.profile.has("LUSTRE") else None
    layouts = _layouts(lustre)
    out: list[FileGroup] = []
    for k in keys:
        made = groups[k].group(k)
        first = groups[k].first
        if first is not None:
            layer = "DFS" if groups[k].layers & {"DFS", "DAOS"} else ""
            count = _stripes(lustre, first)[0]
            made = made.model_copy(update={"file_system": _file_system(ctx, layer, ctx.path(first), count)})
        extents = read_extents(ctx)
        read_ids = [rid for rid in groups[k].ids if per_file[rid].read > 0]
        if read_ids and all(rid in extents for rid in read_ids):
            made = made.model_copy(update={"read_extent": sum(extents[rid] for rid in read_ids)})
        common = _group_common_size(ctx, groups[k].layers, groups[k].ids)
        if common:
            made = made.model_copy(update=common)
        # "stripe size of the chk*/part.* files?": one layout when every member that has one shares it
        found = {layouts[rid] for rid in groups[k].ids if rid in layouts}
        if len(found) == 1:
            count, size = next(iter(found))
            laid = sum(rid in layouts for rid in groups[k].ids)
            made = made.model_copy(update={"stripe_count": count, "stripe_size": size, "striped_files": laid})
        elif found:
            made = made.model_copy(update={"stripe_layouts": len(found)})
        out.append(made)
    return out


# Paths of the software environment, by what loads them: the interpreter importing packages, the dynamic
# linker loading libraries, the C library reading system configuration.
_SOFTWARE = (
    (
        "python packages",
        re.compile(r"/(site|dist)-packages/|/lib/python\d[\d.]*/|\.dist-info/|\.egg-info/|/pyvenv\.cfg$|\.pth$|\.pyc$"),
    ),
    ("shared libraries", re.compile(r"\.so(\.\d+)*$|/lib(64)?/[^/]+\.so")),
    ("system files", re.compile(r"^/(etc|proc|sys)/")),
)


def software_files(ctx: Context) -> list[SoftwareFiles]:
    """The files of the software environment the log holds, per kind (each file once, at its top layer)."""
    r = _rows(ctx)
    if r is None:
        return []
    acc: dict[str, list[float]] = {}
    example: dict[str, str] = {}
    seen: set[int] = set()
    kinds: dict[int, str | None] = {}
    # Every counted row: a file read through STDIO and POSIX moved bytes through both (counted_layers already
    # leaves out the POSIX rows beneath MPI-IO)
    for i in _used(r).tolist():
        rid = int(r.ids[i])
        if rid not in kinds:
            path = ctx.path(rid)
            kinds[rid] = next((k for k, rx in _SOFTWARE if rx.search(path)), None)
        kind = kinds[rid]
        if kind is None:
            continue
        a = acc.setdefault(kind, [0, 0, 0, 0.0, 0])
        if rid not in seen:
            seen.add(rid)
            a[0] += 1
            example.setdefault(kind, ctx.path(rid))
        a[1] += int(r.read[i])
        a[2] += int(r.written[i])
        a[3] += float(r.time[i])
        a[4] += int(r.calls["opens"][i])
    return [
        SoftwareFiles(
            kind=k,
            files=int(a[0]),
            bytes_read=int(a[1]),
            bytes_written=int(a[2]),
            io_time_s=float(a[3]),
            opens=int(a[4]),
            example=example[k],
        )
        for k, a in sorted(acc.items(), key=lambda kv: -kv[1][0])
    ]


def _layouts(lustre: Table | None) -> dict[int, tuple[int, int]]:
    """Each file's Lustre stripe count (its widest component) and stripe size (its first component's)."""
    if lustre is None or not len(lustre) or "stripe_count" not in lustre or "stripe_size" not in lustre:
        return {}
    out: dict[int, tuple[int, int]] = {}
    for rid, count, size in zip(
        lustre["id"].tolist(), lustre["stripe_count"].tolist(), lustre["stripe_size"].tolist(), strict=True
    ):
        if int(count) <= 0 or int(size) <= 0:
            continue
        had = out.get(int(rid))
        out[int(rid)] = (max(int(count), had[0]), had[1]) if had else (int(count), int(size))
    return out


class _Acc:
    """A file's (or a pattern's) totals over its rows: one row per layer it is counted at."""

    def __init__(self) -> None:
        self.files = 0
        self.read = 0
        self.written = 0
        self.time = 0.0
        self.meta = 0.0
        self.slowest_s = 0.0
        self.files_read = 0
        self.files_written = 0
        self.calls: dict[str, int] = dict.fromkeys(OpCounts.model_fields, 0)
        self.layers: set[str] = set()
        # The ranks that used the files: one-rank files by id, shared ones by their count (a shared record
        # keeps no rank list), so a group's time can be put per rank.
        self.rank_ids: set[int] = set()
        self.wide = 0
        self.first: int | None = None  # a member's record id: where the group's files live
        self.ids: list[int] = []  # its members' record ids

    def add_row(self, r: _Rows, i: int) -> None:
        if int(r.ranks[i]) == 1 and int(r.low[i]) >= 0:
            self.rank_ids.add(int(r.low[i]))
        else:
            self.wide = max(self.wide, int(r.ranks[i]))
        self.read += int(r.read[i])
        self.written += int(r.written[i])
        self.time += float(r.time[i])
        self.meta += float(r.meta[i])
        self.slowest_s = max(self.slowest_s, float(r.slow_s[i]))
        for k, v in r.calls.items():
            self.calls[k] += int(v[i])
        self.layers.add(r.layers[i])

    def add_file(self, f: _Acc, rid: int | None = None) -> None:
        if self.first is None:
            self.first = rid
        if rid is not None:
            self.ids.append(rid)
        self.files += 1
        self.read += f.read
        self.written += f.written
        self.time += f.time
        self.meta += f.meta
        self.slowest_s = max(self.slowest_s, f.slowest_s)
        self.files_read += f.read > 0
        self.files_written += f.written > 0
        for k, v in f.calls.items():
            self.calls[k] += v
        self.layers |= f.layers
        self.rank_ids |= f.rank_ids
        self.wide = max(self.wide, f.wide)

    def group(self, pattern: str) -> FileGroup:
        return FileGroup(
            pattern=pattern,
            files=self.files,
            bytes_read=self.read,
            bytes_written=self.written,
            io_time_s=self.time,
            meta_time_s=self.meta,
            opens=self.calls["opens"],
            stats=self.calls["stats"],
            files_read=self.files_read,
            files_written=self.files_written,
            calls=OpCounts(**self.calls),
            layer=next(iter(self.layers)) if len(self.layers) == 1 else None,
            slowest_s=self.slowest_s,
            ranks=max(len(self.rank_ids), self.wide),
        )


def _patterns(path: str) -> list[tuple[str, int]]:
    """The patterns a file belongs to, with how specific each is (higher: fewer files it could match)."""
    folder, _, base = path.rpartition("/")
    out: list[tuple[str, int]] = []
    stem, dot, ext = base.rpartition(".")
    if dot and stem and 0 < len(ext) <= 8 and ext.isalnum() and not ext.isdigit():
        out.append((f"*.{ext.lower()}", 0))
        out.append((f"{folder}/*.{ext}", 2))
    # An extension is a kind, not a number: "test_3.h5" is "test_#.h5", not "test_#.h#"
    has_ext = dot and stem and 0 < len(ext) <= 8 and ext[:1].isalpha()
    numbered = f"{_DIGITS.sub('#', stem)}.{ext}" if has_ext else _DIGITS.sub("#", base)
    if numbered != base:
        out.append((f"{folder}/{numbered}", 3))
    across = "/".join("#" if part.isdigit() else part for part in folder.split("/"))
    if across != folder:  # samples/0/a_1.csv, samples/1/a_2.csv: one run of numbered names over numbered folders
        out.append((f"{across}/{numbered}", 2))
    if folder:
        out.append((f"{folder}/*", 1))
    return out


def _is_stream(path: str) -> bool:
    return path.startswith("<") and path.endswith(">")


def _clipped(col: np.ndarray) -> np.ndarray:
    """Negative counters (Darshan's -1 for "not recorded") as 0."""
    out: np.ndarray = np.maximum(col, 0)
    return out


def files_by_direction(ctx: Context) -> tuple[int, int]:
    """How many files the job read bytes from, and wrote bytes to (each file once, at its top layer)."""
    read, written = _ids_by_direction(ctx)
    return len(read), len(written)


def _ids_by_direction(ctx: Context) -> tuple[set[int], set[int]]:
    """The ids of the files the job read bytes from, and wrote bytes to, at their top layer (records that only
    waited in open, and the standard streams, left out)."""
    return ctx.memo("file_usage.by_direction", lambda: _build_ids_by_direction(ctx))


def _build_ids_by_direction(ctx: Context) -> tuple[set[int], set[int]]:
    read: set[int] = set()
    written: set[int] = set()
    for layer, df in ctx.counted_layers:
        if not len(df):
            continue
        br, bw = TOP_LAYER_BYTES[layer]
        g = df.group_by("id")
        keys = g.keys.astype(np.uint64).tolist()
        for k, r, w in zip(keys, g.sum(_clipped(df[br])).tolist(), g.sum(_clipped(df[bw])).tolist(), strict=True):
            if _is_stream(ctx.path(int(k))):
                continue
            if r > 0:
                read.add(int(k))
            if w > 0:
                written.add(int(k))
    return read, written


# The modules whose records are files a program opens (HDF5 and PnetCDF records sit on files these already name)
_FILE_MODULES = ("POSIX", "MPI-IO", "STDIO", "DFS")


def files_opened(ctx: Context) -> int:
    """How many files the job opened at least once, at any file layer (each file once; standard streams are not
    opened by the program)."""
    return len(_opened_ids(ctx))


def files_opened_without_data(ctx: Context) -> int:
    """Of the files the job opened, those it read no byte from and wrote no byte to at any layer: opened (and
    perhaps stat'ed) for nothing, each open a metadata round trip."""
    moved: set[int] = set()
    for module, (br, bw) in TOP_LAYER_BYTES.items():
        df = ctx.records(module)
        if df.empty or "id" not in df.columns or br not in df.columns:
            continue
        g = df.group_by("id")
        total = g.sum(_clipped(df[br]).astype(np.int64) + _clipped(df[bw]).astype(np.int64))
        moved.update(int(k) for k, n in zip(g.keys.astype(np.uint64).tolist(), total.tolist(), strict=True) if n > 0)
    return len(_opened_ids(ctx) - moved)


def _opened_ids(ctx: Context) -> set[int]:
    return ctx.memo("file_usage.opened", lambda: _build_opened_ids(ctx))


def _build_opened_ids(ctx: Context) -> set[int]:
    opened: set[int] = set()
    for module in _FILE_MODULES:
        df = ctx.records(module)
        if df.empty or "id" not in df.columns:
            continue
        opens = call_columns(module, df).get("opens")
        if opens is None:
            continue
        g = df.group_by("id")
        for k, n in zip(g.keys.astype(np.uint64).tolist(), g.sum(opens).tolist(), strict=True):
            if n > 0 and not _is_stream(ctx.path(int(k))):
                opened.add(int(k))
    return opened


@dataclass
class _FsAcc:
    files: int = 0
    read: int = 0
    written: int = 0
    time: float = 0.0
    top: tuple[str, int] = ("", -1)
    mounts: list[str] = field(default_factory=list)


def file_system_usage(ctx: Context) -> list[FileSystemUsage]:
    """Bytes and time per kind of file system, each file once at its top layer; the file system of a file is its
    longest mount point's, Lustre where the LUSTRE module saw its layout, DAOS for DFS files."""
    r = _rows(ctx)
    if r is None:
        return []
    lustre = ctx.records("LUSTRE") if ctx.profile.has("LUSTRE") else None
    laid_out = set(np.asarray(lustre["id"]).astype(np.uint64).tolist()) if lustre is not None and len(lustre) else set()
    acc: dict[str, _FsAcc] = {}
    for i in _used(r).tolist():
        rid = int(r.ids[i])
        path = ctx.path(rid)
        if _is_stream(path):
            continue
        fs = _file_system(ctx, r.layers[i], path, 1 if rid in laid_out else None) or "unknown"
        a = acc.setdefault(fs, _FsAcc())
        moved = int(r.read[i]) + int(r.written[i])
        a.files += 1
        a.read += int(r.read[i])
        a.written += int(r.written[i])
        a.time += float(r.time[i])
        if moved > a.top[1]:
            a.top = (path, moved)
        mount = ctx.meta.mount_point(path)
        if mount and mount not in a.mounts and len(a.mounts) < 3:
            a.mounts.append(mount)
    out = [
        FileSystemUsage(
            file_system=fs,
            mounts=a.mounts,
            files=a.files,
            bytes_read=a.read,
            bytes_written=a.written,
            io_time_s=a.time,
            top_path=a.top[0],
        )
        for fs, a in acc.items()
    ]
    return sorted(out, key=lambda u: (-(u.bytes_read + u.bytes_written), -u.io_time_s, u.file_system))
