"""Turn the reader's messages into a ``JobProfile``."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

from iodiag.ingest.errors import LogReadError
from iodiag.ingest.header import check_log_file
from iodiag.ingest.inflation import check_inflation, limit_from_env
from iodiag.ingest.integrity import Screened, screen
from iodiag.ingest.isolation import ChildOutcome, run_inline, run_isolated
from iodiag.ingest.libreader import OPTIONAL_MODULES, read_log
from iodiag.ingest.profile import JobMeta, JobProfile, ModuleInfo, Mount
from iodiag.ingest.stacks import CallStacks, parse, split_names, stack_column
from iodiag.ingest.table import Table
from iodiag.ingest.trace import SEGMENT_DTYPE, Trace, TraceBuilder
from iodiag.ingest.trace_stream import TraceStream, TraceSummary
from iodiag.ingest.truncation import COPY_AGAIN, CUT_READ_ERROR, CutShort, cut_short

DEFAULT_TIMEOUT_S = 300.0
DEFAULT_MEMORY_LIMIT = 8 << 30
TRACE_BUDGET = 500_000
"""Segments (both DXT modules together, as the log's counters announce them) up to which traces are held
whole; above it they are summarised while they stream in (``trace_stream``). Held, the analysis costs
about 160 bytes and 3 us per segment (1 M segments: 3.5 s of analysis and plots on the 2-core bench
machine); streamed, a bounded summary and about 0.1 us per segment beside the reader. Below the budget
the exact per-segment views are cheap enough, and they carry source lines where the log has stacks."""
SPAN_GAP_SHARE = 0.001
"""Share of the run time under which a record's requests join one span: the default floor of the
phase rule (``trace_phase_min_gap``), so that a span never crosses a phase boundary."""


def load_profile(
    path: str,
    include: Iterable[str] = (),
    *,
    isolate: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_limit_bytes: int = DEFAULT_MEMORY_LIMIT,
    trace_budget: int | Literal["default"] | None = "default",
) -> JobProfile:
    """Read ``path`` into a profile.

    ``include`` names optional modules to read as well (``DXT_POSIX``,
    ``DXT_MPIIO``, ``HEATMAP``; ``"DXT"`` means both traces).
    ``trace_budget``: when the log's counters announce more DXT segments than this, the traces are
    summarised while they stream in (``JobProfile.trace_summaries``) instead of held whole. None: always
    held; by default ``TRACE_BUDGET``, or the ``IODIAG_TRACE_BUDGET`` environment variable.
    Raises ``LogReadError`` when nothing usable can be read; a log that is
    only partly readable gives a profile whose ``modules`` say what is missing.
    """
    path = str(path)
    check_log_file(path)
    cut = cut_short(path)
    if cut is not None and cut.unusable is not None:
        raise LogReadError(
            path,
            f"the log is cut short (truncated at byte {cut.file_bytes:,}, inside {cut.unusable}): nothing in it can "
            f"be analysed. {COPY_AGAIN}",
        )
    check_inflation(path, limit_from_env())
    wanted = set(include)
    if "DXT" in wanted:
        wanted |= {"DXT_POSIX", "DXT_MPIIO"}
    unknown = wanted - set(OPTIONAL_MODULES) - {"DXT"}
    if unknown:
        raise ValueError(f"unknown optional modules: {sorted(unknown)}")
    inc = frozenset(wanted)
    _warm_library()
    budget = default_trace_budget() if trace_budget == "default" else trace_budget

    def read(source: str) -> JobProfile:
        def producer() -> Any:
            return read_log(source, inc)

        sink = _TraceSink(budget)
        run = run_isolated(producer, timeout_s, memory_limit_bytes, sink) if isolate else run_inline(producer, sink)
        return _build(path, run, inc, sink.finish(), sink.dropped)

    try:
        profile = read(path)
        return profile if cut is None else _mark_cut(profile, cut)
    except LogReadError as refused:
        from iodiag.ingest.recover import zero_padded_job_region

        fixed = zero_padded_job_region(path)
        if fixed is None:
            raise
        try:
            profile = read(fixed.path)
        except LogReadError:
            raise refused from None
        finally:
            os.unlink(fixed.path)
        return replace(profile, problems=(f"recovered: {fixed.note}", *profile.problems))


def _mark_cut(profile: JobProfile, cut: CutShort) -> JobProfile:
    """Say which modules the end of the file cut, in their read errors and in the log's problems (the
    library calls a region that stops early "corrupted record data")."""
    modules = dict(profile.modules)
    for name in cut.cut:
        info = modules.get(name)
        if info is not None:
            modules[name] = info.model_copy(update={"read_error": CUT_READ_ERROR})
    return replace(profile, modules=modules, problems=(f"cut short: {cut.note()}. {COPY_AGAIN}", *profile.problems))


def default_trace_budget() -> int:
    raw = os.environ.get("IODIAG_TRACE_BUDGET", "").strip()
    try:
        return int(raw) if raw else TRACE_BUDGET
    except ValueError:
        return TRACE_BUDGET


class _TraceSink:
    """Folds trace chunks into their builders (or streams) as they arrive, so a trace is never held twice.

    The counter modules come before the traces in a log, so by the first chunk the sink knows how many
    segments to expect, each file's alignment (T07) and which files MPI-IO traced (the top layer).
    When the counters announce more segments than the budget, chunks are kept aside (raw, up to the
    budget) until the trace proves larger than the budget: then every module streams, the kept chunks
    first. A partial trace announces more than it holds, and is held after all.
    """

    def __init__(self, budget: int | None = None) -> None:
        self.builders: dict[str, TraceBuilder | TraceStream] = {}
        self.pending: list[tuple[str, list[tuple[int, int, str, int, int]], bytes]] = []
        self.pending_segments = 0
        self.streaming = False
        self.expected: dict[str, int] = {}
        self.budget = budget
        self.runtime = 0.0
        self.alignment: dict[int, int] = {}
        self.mpiio_files: np.ndarray = np.empty(0, dtype=np.uint64)
        self.nprocs = 1
        self.dropped: dict[str, int] = {}
        """DXT records left out per module: a rank outside the job (``_valid_dxt``)."""

    def __call__(self, msg: tuple[str, Any]) -> tuple[str, Any] | None:
        kind, payload = msg
        if kind == "meta":
            self.runtime = max(float(payload.get("runtime", 0.0)), 0.0)
            self.nprocs = max(int(payload.get("nprocs", 1)), 1)
        if kind == "module" and "counters" in payload and payload["name"] in ("POSIX", "MPI-IO"):
            self.expected.update(_expected_segments(payload))
            if payload["name"] == "POSIX":
                self.alignment.update(_posix_alignment(payload))
            else:
                self.mpiio_files = np.unique(np.asarray(payload["id"], dtype=np.uint64))
        if kind == "module" and payload.get("name") == "LUSTRE":
            self.alignment.update(_stripe_sizes(payload))
        if kind != "dxt_chunk":
            return msg
        name, records, raw = payload["name"], payload["records"], payload["raw"]
        records, raw, dropped = _valid_dxt(records, raw, self.nprocs)
        if dropped:
            self.dropped[name] = self.dropped.get(name, 0) + dropped
        if self.streaming or self.budget is None or sum(self.expected.values()) <= self.budget:
            if name not in self.builders:
                self.builders[name] = (
                    self._stream(name) if self.streaming else TraceBuilder(name, self.expected.get(name, 0))
                )
            self.builders[name].add(records, raw)
            return None
        self.pending.append((name, records, bytes(raw)))
        self.pending_segments += len(raw) // SEGMENT_DTYPE.itemsize
        if self.pending_segments > self.budget:
            self.streaming = True
            self._replay(lambda n: self._stream(n))
        return None

    def _stream(self, name: str) -> TraceStream:
        return TraceStream(
            name, alignment=self.alignment, mpiio_files=self.mpiio_files, span_gap=SPAN_GAP_SHARE * self.runtime
        )

    def _replay(self, make: Any) -> None:
        for name, records, raw in self.pending:
            if name not in self.builders:
                self.builders[name] = make(name)
            self.builders[name].add(records, raw)
        self.pending, self.pending_segments = [], 0

    def finish(self) -> dict[str, TraceBuilder | TraceStream]:
        """The builders, once the stream has ended: chunks still kept aside fit the budget, and are held."""
        if self.pending:
            sizes: dict[str, int] = {}
            for name, _, raw in self.pending:
                sizes[name] = sizes.get(name, 0) + len(raw) // SEGMENT_DTYPE.itemsize
            self._replay(lambda n: TraceBuilder(n, sizes.get(n, 0)))
        return self.builders


def _valid_dxt(
    records: list[tuple[int, int, str, int, int]], raw: Any, nprocs: int
) -> tuple[list[tuple[int, int, str, int, int]], Any, int]:
    """A DXT chunk without the records (and their segments) whose rank is outside the job."""
    if all(0 <= r[1] < nprocs for r in records):
        return records, raw, 0
    size = SEGMENT_DTYPE.itemsize
    view = memoryview(raw)
    kept: list[tuple[int, int, str, int, int]] = []
    parts: list[bytes] = []
    at = 0
    for r in records:
        n = (max(int(r[3]), 0) + max(int(r[4]), 0)) * size
        if 0 <= r[1] < nprocs:
            kept.append(r)
            parts.append(bytes(view[at : at + n]))
        at += n
    return kept, b"".join(parts), len(records) - len(kept)


def _posix_alignment(payload: dict[str, Any]) -> dict[int, int]:
    """POSIX_FILE_ALIGNMENT per record id (the largest over ranks), as T07's in-memory view reads it."""
    names = payload["counter_names"]
    if "POSIX_FILE_ALIGNMENT" not in names or not len(payload["id"]):
        return {}
    vals = payload["counters"][:, names.index("POSIX_FILE_ALIGNMENT")]
    out: dict[int, int] = {}
    for rid, v in zip(payload["id"].tolist(), vals.tolist(), strict=True):
        out[int(rid)] = max(out.get(int(rid), 0), int(v))
    return out


def _stripe_sizes(payload: dict[str, Any]) -> dict[int, int]:
    """The first component's stripe size per record id: on Lustre it replaces the block alignment."""
    names = [n.removeprefix("LUSTRE_COMP_").lower() for n in payload.get("counter_names", [])]
    if "stripe_size" not in names:
        return {}
    col = names.index("stripe_size")
    out: dict[int, int] = {}
    for row in sorted(payload.get("components", []), key=lambda r: (r["id"], r["component"])):
        out.setdefault(int(row["id"]), int(row["counters"][col]))
    return out


def _warm_library() -> None:
    """Do the reader's one-time setup in this process (load libdarshan-util, type its calls, read its
    counter name tables), so every forked reader inherits it instead of redoing it per log."""
    from iodiag.ingest.libreader import warm

    warm()


def _library_reason(outcome: ChildOutcome) -> str:
    lines = [ln.strip() for ln in outcome.stderr.splitlines() if ln.strip()]
    if not lines:
        return ""
    # The library appends strerror(errno) even when errno is 0.
    return lines[-1].removeprefix("Error:").strip().rstrip(".").removesuffix(": Success")


def _crash_text(outcome: ChildOutcome) -> str:
    if outcome.timed_out:
        return "reading timed out"
    if outcome.signal is not None:
        try:
            name = signal.Signals(outcome.signal).name
        except ValueError:
            name = f"signal {outcome.signal}"
        return f"the Darshan library crashed ({name})"
    if outcome.exit_code == 3:
        return "reading exceeded the memory limit"
    return "the reader failed"


def _build(
    path: str,
    outcome: ChildOutcome,
    include: frozenset[str] = frozenset(),
    builders: dict[str, TraceBuilder | TraceStream] | None = None,
    trace_dropped: dict[str, int] | None = None,
) -> JobProfile:
    msgs = outcome.messages
    if msgs and msgs[0][0] == "open_failed":
        reason = _library_reason(outcome)
        raise LogReadError(path, f"not a readable Darshan log ({reason or 'the Darshan library could not open it'})")
    if not msgs or msgs[0][0] != "meta":
        why = _crash_text(outcome) if outcome.crashed else "no data"
        raise LogReadError(path, f"corrupted log: {why} while reading the header")
    raw = msgs[0][1]
    if not raw["job_ok"]:
        raise LogReadError(path, "corrupted log: the job record cannot be decompressed")

    meta_modules: dict[str, dict[str, Any]] = raw["modules"]
    tables: dict[str, Table] = {}
    traces: dict[str, Trace] = {}
    summaries: dict[str, TraceSummary] = {}
    builders = builders if builders is not None else {}
    infos: dict[str, ModuleInfo] = {}
    seen: set[str] = set()
    names, stack_entries = split_names(raw["names"])
    for kind, payload in msgs[1:]:
        if kind != "module":
            continue
        name = payload["name"]
        seen.add(name)
        m = meta_modules.get(name, {"ver": 0, "len": 0, "partial": False})
        screened: Screened | None = None
        if payload.get("trace"):
            built = builders.pop(name, TraceBuilder(name)).build()
            if isinstance(built, TraceSummary):
                summaries[name] = built
            else:
                traces[name] = built
            loaded, records = True, built.records
            lost = (trace_dropped or {}).get(name, 0)
            if lost:
                screened = Screened(
                    module=name,
                    records=records + lost,
                    dropped=lost,
                    reasons={"with a rank outside the job": lost},
                )
        else:
            table = None if payload.get("unsupported") else _to_table(name, payload)
            if table is not None:
                table, screened = _screen(name, payload, table, names, raw)
                tables[name] = table
            loaded, records = table is not None, 0 if table is None else _record_count(name, payload, table)
        infos[name] = ModuleInfo(
            name=name,
            version=m["ver"],
            compressed_bytes=m["len"],
            partial=m["partial"],
            loaded=loaded,
            records=records,
            read_error=payload["error"],
            corrupt_records=screened.dropped if screened else 0,
            corrupt_note=screened.line() if screened and screened.dropped else None,
            unnamed_records=screened.unnamed if screened else 0,
            unnamed_bytes_read=screened.unnamed_bytes_read if screened else 0,
            unnamed_bytes_written=screened.unnamed_bytes_written if screened else 0,
            reset_note=screened.reset_line() if screened and screened.reset else None,
        )
    # A reader that died inside a trace still hands over the records it sent.
    for name, builder in builders.items():
        built = builder.build()
        if isinstance(built, TraceSummary):
            summaries[name] = built
        else:
            traces[name] = built
    problems: list[str] = []
    crash = _crash_text(outcome) if outcome.crashed else None
    stopped_at: str | None = None
    for name, m in meta_modules.items():
        if name in seen:
            continue
        if name in OPTIONAL_MODULES and name not in include:
            infos[name] = ModuleInfo(name=name, version=m["ver"], compressed_bytes=m["len"], partial=m["partial"])
            continue
        if crash and stopped_at is None:
            stopped_at = name
            err = f"{crash} while reading this module"
        elif crash:
            err = f"not read: the reader stopped at module {stopped_at}"
        else:
            err = "not read"
        infos[name] = ModuleInfo(
            name=name, version=m["ver"], compressed_bytes=m["len"], partial=m["partial"], read_error=err
        )
    if crash and stopped_at is None:
        problems.append(f"{crash} after the last module")
    if not raw["names_ok"]:
        problems.append("the file name region is corrupted: file names are unknown")

    stacks: CallStacks | None = None
    if stack_entries:
        stacks, bad = parse(stack_entries)
        problems.extend(bad[:5])
        for mod, tr in list(traces.items()):
            col = stack_column(tr, stacks)
            if col is not None:
                traces[mod] = replace(tr, stack=col)
    meta = _job_meta(raw, tables, traces, summaries)
    return JobProfile(
        path=path,
        meta=meta,
        modules=MappingProxyType(infos),
        names=MappingProxyType(names),
        tables=MappingProxyType(tables),
        traces=MappingProxyType(traces),
        trace_summaries=MappingProxyType(summaries),
        stacks=stacks or None,
        problems=tuple(problems),
    )


def _screen(
    name: str, payload: dict[str, Any], table: Table, names: dict[int, str], raw: dict[str, Any]
) -> tuple[Table, Screened]:
    """The module's trustworthy records (``integrity.screen``); Lustre rows are screened by id and rank."""
    return screen(
        name,
        table,
        names=names if raw["names_ok"] else {},
        nprocs=int(raw["nprocs"]),
        runtime_s=max(float(raw["runtime"]), 0.0),
        counter_names=list(payload.get("counter_names", ())) if "counters" in payload else [],
        fcounter_names=list(payload.get("fcounter_names", ())) if "counters" in payload else [],
    )


def _expected_segments(payload: dict[str, Any]) -> dict[str, int]:
    """Segments a complete trace holds: one per read or write Darshan counted at that layer.

    The counter modules come before the traces in a log, so this is known before the first chunk.
    """
    names = payload["counter_names"]
    counters = payload["counters"]
    if payload["name"] == "POSIX":
        cols = [names.index(c) for c in ("POSIX_READS", "POSIX_WRITES")]
        return {"DXT_POSIX": int(counters[:, cols].sum())}
    wanted = [f"MPIIO_{k}_{op}S" for k in ("INDEP", "COLL", "SPLIT", "NB") for op in ("READ", "WRITE")]
    cols = [names.index(c) for c in wanted if c in names]
    return {"DXT_MPIIO": int(counters[:, cols].sum())}


def _record_count(name: str, payload: dict[str, Any], table: Table) -> int:
    if name == "LUSTRE":
        return len(np.unique(table["id"])) if len(table) else 0
    return len(table)


def _hints(metadata: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in metadata.get("h", "").split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _ts(sec: int, nsec: int) -> datetime:
    try:
        return datetime.fromtimestamp(sec + nsec / 1e9, UTC)
    except (OverflowError, OSError, ValueError):
        return datetime.fromtimestamp(0, UTC)


def _job_meta(
    raw: dict[str, Any],
    tables: dict[str, Table],
    traces: dict[str, Trace],
    summaries: dict[str, TraceSummary] | None = None,
) -> JobMeta:
    nodes: int | None = None
    source: str | None = None
    apmpi = tables.get("APMPI")
    hosts = {h for t in traces.values() for h in t.hostnames.values()}
    hosts |= {h for s in (summaries or {}).values() for h in s.hostnames.values()}
    if apmpi is not None and len(apmpi) and "node_name" in apmpi:
        nodes, source = len(set(apmpi["node_name"].tolist())), "APMPI node names"
    elif hosts:
        nodes, source = len(hosts), "DXT host names"
    metadata = dict(raw["metadata"])
    return JobMeta(
        jobid=raw["jobid"],
        uid=raw["uid"],
        nprocs=raw["nprocs"],
        nodes=nodes,
        nodes_source=source,
        start=_ts(raw["start_sec"], raw["start_nsec"]),
        end=_ts(raw["end_sec"], raw["end_nsec"]),
        runtime_s=max(float(raw["runtime"]), 0.0),
        exe=raw["exe"],
        darshan_version=metadata.get("lib_ver", "unknown"),
        log_format=raw["log_ver"],
        mounts=tuple(Mount(path=p, fs_type=t) for p, t in raw["mounts"]),
        hints=MappingProxyType(_hints(metadata)),
        metadata=MappingProxyType(metadata),
    )


def _to_table(name: str, p: dict[str, Any]) -> Table:
    if "counters" in p:
        cols: dict[str, np.ndarray] = {"id": p["id"]} if "id" in p else {}
        cols["rank"] = p["rank"]
        for extra in ("file_rec_id", "node_name"):
            if extra in p:
                cols[extra] = np.asarray(p[extra], dtype=object) if extra == "node_name" else p[extra]
        n = len(p["rank"])
        # Columns are views of the reader's 2-D blocks: no copy per counter.
        for block, names in ((p["counters"], p["counter_names"]), (p["fcounters"], p["fcounter_names"])):
            block = np.asarray(block).reshape(n, len(names))
            for j, col in enumerate(names):
                cols[col] = block[:, j]
        return Table(cols, n)
    if name == "LUSTRE":
        rows = p["components"]
        names = [n.removeprefix("LUSTRE_COMP_").lower() for n in p["counter_names"]]
        counters = np.array([r["counters"] for r in rows], dtype=np.int64).reshape(len(rows), len(names))
        lus: dict[str, np.ndarray] = {
            "id": np.array([r["id"] for r in rows], dtype=np.uint64),
            "rank": np.array([r["rank"] for r in rows], dtype=np.int64),
            "component": np.array([r["component"] for r in rows], dtype=np.int64),
        }
        for j, col in enumerate(names):
            lus[col] = counters[:, j]
        lus["pool_name"] = _objects([r["pool_name"] for r in rows])
        lus["osts"] = _objects([r["osts"] for r in rows])
        return Table(lus, len(rows))
    rows = p["rows"]
    keys = list(rows[0]) if rows else []
    return Table({k: _column(k, [r[k] for r in rows]) for k in keys}, len(rows))


def _objects(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _column(name: str, values: list[Any]) -> np.ndarray:
    """Scalars become a numeric column (record ids unsigned 64-bit); arrays stay one object per row."""
    if values and isinstance(values[0], np.ndarray):
        return _objects(values)
    return np.asarray(values, dtype=np.uint64 if name == "id" else None)
