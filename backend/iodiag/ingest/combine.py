"""Merge the logs of one job or workflow into one profile (``iodiag analyze --combine``).

A workflow of several steps, or a Python job whose processes each wrote their own log (DLIO's data
loader workers), leaves many logs that together are one run. Combined, every log's ranks become
distinct ranks of one job and every log's times sit on one timeline, so the checks see the whole run.

What it does, per piece of the profile:

- ranks: log ``i``'s rank ``r`` becomes ``offset_i + r``, the offset being the earlier logs' process
  counts; rank -1 (a record Darshan reduced over all of one log's ranks) stays -1, as the loader has it;
  the counters that hold a rank number (``*_FASTEST_RANK``, ``*_SLOWEST_RANK``) move with the ranks;
- times: the job spans the earliest start to the latest end; the timestamps relative to a log's start
  (``*_TIMESTAMP`` counters, DXT segment times, HEATMAP bins) move by that log's start minus the
  combined start. HEATMAP bins move by whole bins (the nearest), so they may sit up to half a bin off,
  and are added into wider bins (powers of two, as Darshan does) should the span need over 1024;
- records: Darshan's record id is a hash of the file name, so one file has one id in every log: names
  merge by id and the tables are concatenated;
- what cannot be merged honestly is dropped, with a note in ``meta.metadata["combine_notes"]``.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from datetime import datetime
from pathlib import PurePath
from types import MappingProxyType

import numpy as np

from iodiag.ingest.profile import JobMeta, JobProfile, ModuleInfo
from iodiag.ingest.stacks import CallStacks, SourceLocation
from iodiag.ingest.table import Table
from iodiag.ingest.trace import Trace

HEATMAP = "HEATMAP"
MAX_HEATMAP_BINS = 1024
"""Bins a combined heatmap row may hold: logs hours apart would otherwise need millions of small bins."""
_RANK_COUNTERS = ("_FASTEST_RANK", "_SLOWEST_RANK")
"""Counters whose value is a rank number (of a shared record's fastest or slowest rank)."""
_NO_RANK_COUNTERS = frozenset({"APMPI"})
"""Tables whose counter names are not Darshan's file-record counters: only their ``rank`` column moves."""


class CombineError(ValueError):
    """Logs that cannot be combined into one profile. The message is one line, written for a person."""


def combine_profiles(profiles: Sequence[JobProfile], *, force: bool = False) -> JobProfile:
    """One profile over ``profiles`` (in the order given: it decides the rank numbering).

    Raises ``CombineError`` with fewer than two profiles, for a log given twice (its I/O would count
    twice), for logs of different users (unless ``force``), and for logs whose counters differ (written
    by Darshan versions with different counter sets).
    """
    if len(profiles) < 2:
        raise CombineError(f"combining needs at least 2 logs, got {len(profiles)}")
    _refuse_duplicates(profiles)
    uids = sorted({p.meta.uid for p in profiles})
    if len(uids) > 1 and not force:
        raise CombineError(
            f"the logs belong to different users (uids {', '.join(map(str, uids))}): they are not one job"
        )
    _refuse_different_counters(profiles)

    notes: list[str] = []
    start = min(p.meta.start for p in profiles)
    end = max(p.meta.end for p in profiles)
    shifts = [(p.meta.start - start).total_seconds() for p in profiles]
    widths = [_rank_span(p) for p in profiles]
    offsets = np.cumsum([0, *widths[:-1]]).tolist()

    tables = _merge_tables(profiles, offsets, shifts, (end - start).total_seconds(), notes)
    stacks, stack_maps = _merge_stacks(profiles, notes)
    traces = _merge_traces(profiles, offsets, shifts, stack_maps)
    names: dict[int, str] = {}
    for p in profiles:
        for rid, name in p.names.items():
            names.setdefault(int(rid), name)  # the same id is the same file name (Darshan hashes the path)
    _note_partial_coverage(profiles, notes)

    meta = _meta(profiles, start, end, sum(widths), offsets, widths, notes)
    first = profiles[0].path
    return JobProfile(
        path=f"{first} + {len(profiles) - 1} more log{'s' if len(profiles) > 2 else ''}",
        meta=meta,
        modules=MappingProxyType(_merge_modules(profiles)),
        names=MappingProxyType(names),
        tables=MappingProxyType(tables),
        traces=MappingProxyType(traces),
        stacks=stacks,
        problems=tuple(f"{_short(p.path)}: {msg}" for p in profiles for msg in p.problems)
        + tuple(
            f"{_short(p.path)}: its DXT traces were too large to hold and are left out of the combined traces"
            for p in profiles
            if p.trace_summaries
        ),
    )


def combine_notes(profile: JobProfile) -> list[str]:
    """The notes ``combine_profiles`` left on a combined profile (empty for any other profile)."""
    text = profile.meta.metadata.get("combine_notes", "")
    return [line for line in text.split("\n") if line]


# --- checks before merging ------------------------------------------------------------------------------


def _short(path: str) -> str:
    return PurePath(path).name or path


def _fingerprint(p: JobProfile) -> str:
    """Same header and same counters: the same log (two processes never match in every timestamp)."""
    h = hashlib.blake2b(digest_size=16)
    m = p.meta
    h.update(repr((m.jobid, m.uid, m.nprocs, m.start, m.end, m.exe)).encode())
    for name in sorted(p.tables):
        t = p.tables[name]
        h.update(name.encode())
        for col in t.columns:
            if t[col].dtype.kind in "iufb":
                h.update(np.ascontiguousarray(t[col]).tobytes())
    for name in sorted(p.traces):
        tr = p.traces[name]
        h.update(name.encode())
        h.update(tr.start.tobytes())
        h.update(tr.end.tobytes())
    return h.hexdigest()


def _refuse_duplicates(profiles: Sequence[JobProfile]) -> None:
    seen: dict[str, str] = {}
    for p in profiles:
        key = _fingerprint(p)
        if key in seen:
            raise CombineError(
                f"{_short(p.path)} is the same log as {_short(seen[key])}: combining it twice would count its I/O twice"
            )
        seen[key] = p.path


def _refuse_different_counters(profiles: Sequence[JobProfile]) -> None:
    # Concatenating tables with different columns would leave NaN counters that the checks read as data.
    columns: dict[str, tuple[str, list[str]]] = {}
    for p in profiles:
        for name, t in p.tables.items():
            cols = [str(c) for c in t.columns]
            if name not in columns:
                columns[name] = (p.path, cols)
            elif set(columns[name][1]) != set(cols):
                raise CombineError(
                    f"{_short(p.path)} and {_short(columns[name][0])} have different {name} counters "
                    "(different Darshan versions): they cannot be combined"
                )


def _rank_span(p: JobProfile) -> int:
    """Ranks a log takes in the combined numbering: its process count, or more should a record say so."""
    top = -1
    for t in p.tables.values():
        if "rank" in t and len(t):
            top = max(top, int(t["rank"].max()))
    for tr in p.traces.values():
        if len(tr):
            top = max(top, int(tr.rank.max()))
    return max(p.meta.nprocs, top + 1, 1)


# --- merging --------------------------------------------------------------------------------------------


def _moved_ranks(values: np.ndarray, offset: int) -> np.ndarray:
    out: np.ndarray = np.where(values >= 0, values + offset, values).astype(values.dtype, copy=False)
    return out


def _shift_table(name: str, t: Table, offset: int, shift: float, span: float) -> Table:
    out = {c: t[c] for c in t.columns}
    if "rank" in out:
        out["rank"] = _moved_ranks(out["rank"], offset)
    if name == HEATMAP:
        return _shift_heatmap(out, shift, span, len(t))
    if name in _NO_RANK_COUNTERS:
        return Table(out, len(t))
    for c, v in out.items():
        if c.endswith(_RANK_COUNTERS):
            out[c] = _moved_ranks(v, offset)
        elif c.endswith("_TIMESTAMP") and shift:
            out[c] = np.where(v > 0, v + shift, v)  # 0 means "never happened": it stays 0
    return Table(out, len(t))


def _shift_heatmap(t: dict[str, np.ndarray], shift: float, span: float, n: int) -> Table:
    """Heatmap rows moved ``shift`` seconds later, to the nearest whole bin, and coarsened (bins added in
    powers of two, as Darshan itself does) where the combined span would need over ``MAX_HEATMAP_BINS``."""
    write, read, widths = [], [], []
    for wb, rb, w in zip(t["write_bins"], t["read_bins"], t["bin_width"], strict=True):
        w = float(w)
        if w <= 0:
            write.append(wb)
            read.append(rb)
            widths.append(w)
            continue
        f = _coarsening(w, span, len(wb))
        k = round(shift / w)
        write.append(_place(np.asarray(wb, dtype=np.int64), k, f))
        read.append(_place(np.asarray(rb, dtype=np.int64), k, f))
        widths.append(w * f)
    t["write_bins"], t["read_bins"], t["bin_width"] = _objects(write), _objects(read), np.asarray(widths, dtype=float)
    return Table(t, n)


def _objects(values: list[np.ndarray]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _coarsening(width: float, span: float, length: int) -> int:
    cap = max(MAX_HEATMAP_BINS, length)
    f = 1
    while span / (width * f) > cap:
        f *= 2
    return f


def _place(bins: np.ndarray, k: int, f: int) -> np.ndarray:
    """``bins`` moved ``k`` bins later, every ``f`` of them added into one."""
    out = np.zeros((k + len(bins) + f - 1) // f, dtype=np.int64)
    np.add.at(out, (np.arange(len(bins)) + k) // f, bins)
    return out


def _merge_tables(
    profiles: Sequence[JobProfile], offsets: list[int], shifts: list[float], span: float, notes: list[str]
) -> dict[str, Table]:
    parts: dict[str, list[Table]] = {}
    for p, off, dt in zip(profiles, offsets, shifts, strict=True):
        for name, t in p.tables.items():
            parts.setdefault(name, []).append(_shift_table(name, t, off, dt, span))
    out: dict[str, Table] = {}
    for name, tabs in parts.items():
        out[name] = Table({c: np.concatenate([t[c] for t in tabs]) for c in tabs[0].columns}, sum(len(t) for t in tabs))
    before = sorted({float(w) for p in profiles if (h := p.tables.get(HEATMAP)) is not None for w in h["bin_width"]})
    after = sorted({float(w) for t in parts.get(HEATMAP, []) for w in t["bin_width"]})
    if after and after[-1] > before[-1]:
        notes.append(
            f"the logs span {span:.0f} s: HEATMAP bins were added into {after[-1]:g} s bins to keep the timeline "
            f"within {MAX_HEATMAP_BINS} bins"
        )
    elif len(after) > 1:
        notes.append(
            f"the logs' HEATMAP bins are {after[0]:g} s to {after[-1]:g} s wide: "
            f"the combined timeline uses {after[-1]:g} s bins"
        )
    return out


def _merge_traces(
    profiles: Sequence[JobProfile], offsets: list[int], shifts: list[float], stack_maps: list[dict[int, int]] | None
) -> dict[str, Trace]:
    by_module: dict[str, list[tuple[int, Trace, int, float]]] = {}
    for i, (p, off, dt) in enumerate(zip(profiles, offsets, shifts, strict=True)):
        for name, tr in p.traces.items():
            by_module.setdefault(name, []).append((i, tr, off, dt))
    return {name: _merge_trace(name, parts, stack_maps) for name, parts in by_module.items()}


def _merge_trace(
    name: str, parts: list[tuple[int, Trace, int, float]], stack_maps: list[dict[int, int]] | None
) -> Trace:
    file_ids = np.unique(np.concatenate([tr.file_ids for _, tr, _, _ in parts])).astype(np.uint64)
    hosts: dict[int, str] = {}
    for _, tr, off, _ in parts:
        hosts.update({int(r) + off: h for r, h in tr.hostnames.items()})
    # Each log numbers its files from 0: map its indices onto the union of record ids.
    files = [np.searchsorted(file_ids, tr.file_ids)[tr.file].astype(np.int32) for _, tr, _, _ in parts]
    stack: np.ndarray | None = None
    if stack_maps is not None and any(tr.stack is not None for _, tr, _, _ in parts):
        stack = np.concatenate([_remap_stacks(tr.stack, len(tr), stack_maps[i]) for i, tr, _, _ in parts])
    return Trace(
        module=name,
        rank=np.concatenate([_moved_ranks(tr.rank, off) for _, tr, off, _ in parts]),
        file=np.concatenate(files),
        op=np.concatenate([tr.op for _, tr, _, _ in parts]),
        offset=np.concatenate([tr.offset for _, tr, _, _ in parts]),
        length=np.concatenate([tr.length for _, tr, _, _ in parts]),
        start=np.concatenate([tr.start + dt for _, tr, _, dt in parts]),
        end=np.concatenate([tr.end + dt for _, tr, _, dt in parts]),
        file_ids=file_ids,
        hostnames=hosts,
        records=sum(tr.records for _, tr, _, _ in parts),
        stack=stack,
    )


def _merge_stacks(
    profiles: Sequence[JobProfile], notes: list[str]
) -> tuple[CallStacks | None, list[dict[int, int]] | None]:
    """The logs' call stacks, and per log the map from its stack ids to the combined ones.

    One stack (the same return addresses) gets one id whatever log it comes from, so a source line
    counts the segments and ranks of every log. Addresses map to source lines per executable: when
    two logs map one address to different lines (different programs, or address randomization), no
    merge is honest and the stacks are dropped.
    """
    have = [p.stacks for p in profiles if p.stacks]
    if not have:
        return None, None
    lines: dict[int, SourceLocation] = {}
    for s in have:
        for addr, loc in s.lines.items():
            if lines.setdefault(addr, loc) != loc:
                notes.append("the logs' call stacks map one address to different source lines: call stacks dropped")
                return None, None
    ids: dict[tuple[int, ...], int] = {}
    stacks: dict[int, tuple[int, ...]] = {}
    runs: dict[tuple[str, int, int, int], tuple[tuple[int, int, int], ...]] = {}
    maps: list[dict[int, int]] = []
    fresh = itertools.count()
    rank_offset = 0
    for p in profiles:
        m: dict[int, int] = {}
        if p.stacks:
            for sid, addrs in p.stacks.stacks.items():
                if addrs not in ids:
                    ids[addrs] = next(fresh)
                    stacks[ids[addrs]] = addrs
                m[sid] = ids[addrs]
            for (mod, rec, rank, op), rr in p.stacks.runs.items():
                for _, sid, _ in rr:
                    if sid not in m:  # a run whose stack the log lacks: keep it apart from every other
                        m[sid] = next(fresh)
                key = (mod, rec, rank + rank_offset if rank >= 0 else rank, op)
                runs[key] = tuple((first, m[sid], n) for first, sid, n in rr)
        maps.append(m)
        rank_offset += _rank_span(p)
    return CallStacks(stacks, lines, runs), maps


def _remap_stacks(col: np.ndarray | None, n: int, m: dict[int, int]) -> np.ndarray:
    if col is None or not m:
        return np.full(n, -1, dtype=np.int32)
    lut = np.full(max(max(m), int(col.max(initial=-1))) + 1, -1, dtype=np.int32)
    for k, v in m.items():
        lut[k] = v
    out: np.ndarray = np.where(col >= 0, lut[np.clip(col, 0, None)], -1).astype(np.int32)
    return out


def _merge_modules(profiles: Sequence[JobProfile]) -> dict[str, ModuleInfo]:
    by_name: dict[str, list[tuple[str, ModuleInfo]]] = {}
    for p in profiles:
        for name, info in p.modules.items():
            by_name.setdefault(name, []).append((p.path, info))
    out: dict[str, ModuleInfo] = {}
    for name, infos in by_name.items():
        errors = [f"{_short(path)}: {i.read_error}" for path, i in infos if i.read_error]
        out[name] = ModuleInfo(
            name=name,
            version=max(i.version for _, i in infos),
            compressed_bytes=sum(i.compressed_bytes for _, i in infos),
            partial=any(i.partial for _, i in infos),
            loaded=any(i.loaded for _, i in infos),
            records=sum(i.records for _, i in infos),
            read_error="; ".join(errors) or None,
        )
    return out


def _note_partial_coverage(profiles: Sequence[JobProfile], notes: list[str]) -> None:
    """A trace or heatmap that only some logs carry covers only their ranks: say so."""
    n = len(profiles)
    for name in ("DXT_POSIX", "DXT_MPIIO", HEATMAP):
        with_it = sum(1 for p in profiles if p.has(name))
        read = any((info := p.modules.get(name)) is not None and info.loaded for p in profiles)
        if read and 0 < with_it < n:
            notes.append(f"only {with_it} of {n} logs have {name}: what it shows covers those logs' ranks only")


def _ranks(offset: int, width: int) -> str:
    return f"rank {offset}" if width == 1 else f"ranks {offset}-{offset + width - 1}"


def _format_key(fmt: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in fmt.split("."))
    except ValueError:
        return (0,)


def _common(values: Sequence[str]) -> str | None:
    return values[0] if len(set(values)) == 1 else None


def _meta(
    profiles: Sequence[JobProfile],
    start: datetime,
    end: datetime,
    nprocs: int,
    offsets: list[int],
    widths: list[int],
    notes: list[str],
) -> JobMeta:
    metas = [p.meta for p in profiles]
    first = metas[0]
    jobids = {m.jobid for m in metas}
    jobid = first.jobid if len(jobids) == 1 else 0
    if jobid == 0 and len(jobids) > 1:
        notes.append(f"the logs have {len(jobids)} different job ids: the combined job id is 0")
    if len({m.uid for m in metas}) > 1:
        notes.append("the logs belong to different users (combined anyway): the uid shown is the first log's")
    exe = _common([m.exe for m in metas])
    if exe is None:
        count = len({m.exe for m in metas})
        notes.append(f"the logs ran {count} different command lines: the one shown is the first log's")
    mounts = list(dict.fromkeys(mt for m in metas for mt in m.mounts))
    version = _common([m.darshan_version for m in metas])
    # The oldest log format decides what the times can resolve (before 3.41: whole seconds).
    log_format = min((m.log_format for m in metas), key=_format_key)
    metadata = {k: v for k, v in first.metadata.items() if all(m.metadata.get(k) == v for m in metas[1:])}
    metadata["combined_logs"] = str(len(profiles))
    # The largest rank count of one log: 1 means one process per log (a Python job, a workflow of serial
    # steps), which the analysis must not take for an MPI job because the combined nprocs is above 1.
    metadata["combined_max_nprocs"] = str(max(m.nprocs for m in metas))
    metadata["combined_sources"] = "\n".join(
        f"{_ranks(off, w)}: {p.path}" for p, off, w in zip(profiles, offsets, widths, strict=True)
    )
    if notes:
        metadata["combine_notes"] = "\n".join(notes)
    nodes, source = _nodes(profiles)
    return JobMeta(
        jobid=jobid,
        uid=first.uid,
        nprocs=nprocs,
        nodes=nodes,
        nodes_source=source,
        start=start,
        end=end,
        runtime_s=max((end - start).total_seconds(), 0.0),
        exe=exe if exe is not None else first.exe,
        darshan_version=version if version is not None else ", ".join(dict.fromkeys(m.darshan_version for m in metas)),
        log_format=log_format,
        mounts=tuple(mounts),
        hints=first.hints if all(dict(m.hints) == dict(first.hints) for m in metas) else MappingProxyType({}),
        metadata=MappingProxyType(metadata),
    )


def _nodes(profiles: Sequence[JobProfile]) -> tuple[int | None, str | None]:
    """Distinct node names over all logs, as the loader counts them; unknown unless every log names its
    nodes (steps may share nodes, so the logs' own counts are never added up)."""
    apmpi = [p.tables.get("APMPI") for p in profiles]
    if all(t is not None and len(t) and "node_name" in t for t in apmpi):
        return len({n for t in apmpi if t is not None for n in t["node_name"]}), "APMPI node names"
    hosts = [{h for t in p.traces.values() for h in t.hostnames.values()} for p in profiles]
    if all(hosts):
        return len(set().union(*hosts)), "DXT host names"
    return None, None


__all__ = ["CombineError", "combine_notes", "combine_profiles"]
