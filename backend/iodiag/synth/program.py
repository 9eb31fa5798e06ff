"""Run a scenario's program: every rank's calls at every Darshan layer, with offsets and times.

The result is a ``Trace`` of events; ``derive.py`` turns it into Darshan's counters. Everything is
computed with numpy arrays shaped (ranks, files, steps); nothing is set to make a check fire.
"""

from __future__ import annotations

import re

import numpy as np

from iodiag.synth.collective import pick_aggregators, two_phase
from iodiag.synth.layout import MountInfo, StripeLayout, find_mount
from iodiag.synth.scenario import FileSpec, Phase, Scenario, mount_infos, node_of, resolve_ranks
from iodiag.synth.trace import FileState, Meta, Mode, Trace, TraceLayer

MAX_EVENTS = 60_000_000
"""Refuse programs whose step arrays would not fit comfortably in memory."""

HDF5_SUPERBLOCK = 96
DEFAULT_HEADER = {"hdf5": 2048, "pnetcdf": 1024}
DEFAULT_ALIGNMENT = {"hdf5": 1, "pnetcdf": 512}
DFS_CHUNK_SIZE = 1 << 20
"""DAOS's default array chunk size for DFS files (dfs_open with chunk_size 0)."""
HDF5_FILL_BUFFER = 1 << 20
"""HDF5's default maximum temporary buffer (H5D_TEMP_BUF_SIZE, ``H5Pset_buffer``): the size of each fill-value
write H5D__contig_fill issues."""

# Step kinds within a (rank, file) sequence.
S_OPEN, S_PRE, S_REQ, S_POST, S_FSYNC, S_CLOSE, S_STAT = range(7)


class ProgramError(ValueError):
    """The program cannot be simulated (e.g. runtime shorter than the I/O); one line."""


def _default_seconds(length: np.ndarray) -> np.ndarray:
    """Seconds of one request of ``length`` bytes without a ``seconds_per_op``: 20 us + size / (2 GiB/s)."""
    out: np.ndarray = 20e-6 + np.asarray(length).astype(np.float64) / float(2 << 30)
    return out


def _template_regex(path: str) -> re.Pattern[str]:
    parts = re.split(r"(\{rank\}|\{i\})", path)
    return re.compile("".join(r"\d+" if p in ("{rank}", "{i}") else re.escape(p) for p in parts))


def _excl_cumsum(a: np.ndarray, axis: int = -1) -> np.ndarray:
    c: np.ndarray = np.cumsum(a, axis=axis)
    out: np.ndarray = c - a
    return out


def _segmented_excl_cumsum(values: np.ndarray, new_group: np.ndarray) -> np.ndarray:
    """Exclusive cumulative sum restarting where ``new_group`` is True (arrays in group order)."""
    c: np.ndarray = np.cumsum(values)
    excl: np.ndarray = c - values
    starts = np.flatnonzero(new_group)
    counts = np.diff(np.r_[starts, len(values)])
    out: np.ndarray = excl - np.repeat(excl[starts], counts)
    return out


class _Columns:
    """Appends one single-step column (kind, offset, length, is_write, present) of shape (nr, m, 1)."""

    def __init__(self, cols: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]], shape: tuple[int, int]):
        self.cols, self.shape = cols, shape

    def __call__(self, kind: int, o: np.ndarray, ln: np.ndarray, w: bool, present: np.ndarray) -> None:
        sh = self.shape
        self.cols.append(
            (
                kind,
                np.broadcast_to(o, sh)[:, :, None],
                np.broadcast_to(ln, sh)[:, :, None],
                np.full((*sh, 1), w),
                np.broadcast_to(present, sh)[:, :, None],
            )
        )


class Simulator:
    def __init__(self, s: Scenario) -> None:
        self.s = s
        self.nprocs, self.nodes = s.job.nprocs, s.job.nodes
        self.trace = Trace(nprocs=self.nprocs, nodes=self.nodes)
        self.mounts = mount_infos(s)
        self.node = node_of(self.nprocs, self.nodes)
        self.rng = np.random.default_rng(s.seed)
        self.exact: dict[str, FileSpec] = {}
        self.templates: list[tuple[re.Pattern[str], FileSpec]] = []
        for f in s.files:
            if "{" in f.path:
                self.templates.append((_template_regex(f.path), f))
            else:
                self.exact[f.path] = f
        self.ost_cursor: dict[str, int] = {}
        self.mount_cache: dict[str, MountInfo | None] = {}
        self.job_hints = bool(s.hints.model_fields_set)

    # --- files -------------------------------------------------------------------------------

    def _decl(self, path: str) -> FileSpec | None:
        d = self.exact.get(path)
        if d is not None:
            return d
        for rx, f in self.templates:
            if rx.fullmatch(path):
                return f
        return None

    def _register(self, path: str) -> int:
        t = self.trace
        k = t.index.get(path)
        if k is not None and k in t.files:
            return k
        folder = path.rsplit("/", 1)[0]
        if folder in self.mount_cache:
            mount = self.mount_cache[folder]
        else:
            mount = find_mount(self.mounts, path)
            # Files of one folder share its mount unless a mount point lies inside the folder.
            if not any(m.path.startswith(folder + "/") for m in self.mounts):
                self.mount_cache[folder] = mount
        if mount is None:
            raise ProgramError(f"file {path} is under no mount")
        decl = self._decl(path)
        layout = None
        if mount.fs == "lustre":
            from iodiag.synth.scenario import LustreSpec

            spec = decl.lustre if decl is not None and decl.lustre is not None else LustreSpec()
            count = mount.ost_count if spec.stripe_count == -1 else spec.stripe_count
            if spec.osts is not None:
                osts = tuple(spec.osts)
            else:
                if spec.ost_start is not None:
                    first = spec.ost_start
                else:
                    first = self.ost_cursor.get(mount.path, 0)
                    self.ost_cursor[mount.path] = first + count
                osts = tuple((first + i) % mount.ost_count for i in range(min(count, mount.ost_count)))
            layout = StripeLayout(stripe_size=spec.stripe_size, stripe_count=len(osts), osts=osts, pool=spec.pool)
        k = t.key(path)
        t.files[k] = FileState(path=path, mount=mount, lustre=layout)
        if mount.fs == "daos":
            chunk = decl.chunk_size if decl is not None and decl.chunk_size is not None else DFS_CHUNK_SIZE
            t.files[k].chunk_size = chunk
        return k

    def _set_format(self, fk: np.ndarray, fmt: str) -> None:
        for k in np.unique(fk).tolist():
            st = self.trace.files[k]
            if st.fmt is not None:
                continue
            decl = self._decl(st.path)
            header = decl.header if decl is not None and decl.header is not None else DEFAULT_HEADER[fmt]
            align = decl.alignment if decl is not None and decl.alignment is not None else DEFAULT_ALIGNMENT[fmt]
            st.fmt, st.header = fmt, header
            st.data_start = -(-header // align) * align if header else 0

    def _ost_factor(self, fk: np.ndarray, offset: np.ndarray, length: np.ndarray) -> np.ndarray:
        out = np.ones(len(offset), dtype=np.float64)
        if not any(m.slow_osts for m in self.mounts) or len(fk) == 0:
            return out
        for k in np.unique(fk).tolist():
            st = self.trace.files[k]
            if st.lustre is None or not st.mount.slow_osts:
                continue
            sel = fk == k
            out[sel] = st.lustre.ost_factor(st.mount, offset[sel], length[sel])
        return out

    # --- phases ------------------------------------------------------------------------------

    def run(self) -> Trace:
        clock = 0.0
        for i, ph in enumerate(self.s.program):
            self.trace.phase = i
            clock += ph.compute
            try:
                clock = max(clock, self._phase(ph, clock))
            except ProgramError as exc:
                raise ProgramError(f"program[{i}]: {exc}") from None
        self.trace.end_time = clock
        return self.trace

    def _spo(self, ph: Phase, length: np.ndarray) -> np.ndarray:
        if ph.seconds_per_op is not None:
            return np.full(len(length), ph.seconds_per_op, dtype=np.float64)
        return _default_seconds(length)

    def _phase(self, ph: Phase, clock: float) -> float:
        ranks = resolve_ranks(ph.ranks, self.nprocs, self.nodes)
        n = len(ranks)
        private = "{rank}" in ph.path
        m = ph.count_files or 1
        if private:
            paths = [[ph.path.format(rank=r, i=i) for i in range(m)] for r in ranks.tolist()]
            fk = np.array([[self._register(p) for p in row] for row in paths], dtype=np.int64)
        else:
            row = [self._register(ph.path.format(rank=0, i=i)) for i in range(m)]
            fk = np.broadcast_to(np.array(row, dtype=np.int64), (n, m))
        cnt = np.full(n, ph.count, dtype=np.int64)
        for r, c in ph.count_by_rank.items():
            pos = np.searchsorted(ranks, r)
            if pos < n and ranks[pos] == r:
                cnt[pos] = c
        rf = np.array([ph.slow_ranks.get(int(r), 1.0) for r in ranks], dtype=np.float64)
        steps = int(cnt.sum()) * ph.passes * m if ph.is_data else n * m * ph.count * 3
        if steps > MAX_EVENTS:
            raise ProgramError(f"{steps:,} operations in one phase; the simulator's limit is {MAX_EVENTS:,}")
        if ph.interface in ("hdf5", "pnetcdf") and ph.is_data:
            self._set_format(fk, ph.interface)
        if ph.fill_values:
            for k in np.unique(fk).tolist():
                name = f"{self.trace.files[k].path}:{ph.dataset}"
                if name in self.trace.index:
                    raise ProgramError(
                        f"fill_values: dataset {name} was created by an earlier phase; HDF5 writes fill values "
                        "once, when H5Dcreate allocates the dataset"
                    )
        if not ph.is_data:
            return self._meta_phase(ph, ranks, fk, private, rf, clock)
        if ph.collective:
            if m > 1:
                raise ProgramError("collective phases take one 'file', not 'files'")
            return self._collective_phase(ph, ranks, fk, private, cnt, rf, clock)
        return self._independent_phase(ph, ranks, fk, private, cnt, rf, clock)

    # --- offsets -----------------------------------------------------------------------------

    def _base(self, ph: Phase, fk: np.ndarray) -> np.ndarray:
        """Where the phase's region begins in each file (vector over file keys)."""
        uniq = np.unique(fk)
        vals = np.empty(len(uniq), dtype=np.int64)
        for j, k in enumerate(uniq.tolist()):
            st = self.trace.files[k]
            if isinstance(ph.offset, int):
                vals[j] = st.data_start + ph.offset
            elif ph.op == "write":
                vals[j] = max(st.end, st.data_start)
            else:
                vals[j] = st.data_start
        return vals[np.searchsorted(uniq, fk)]

    def _offsets(
        self, ph: Phase, n: int, idx: np.ndarray, base_all: np.ndarray, c: int, private: bool, rstart: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, sizes), each (len(idx), files, c * passes), in each rank's request order."""
        sz = np.array(ph.size, dtype=np.int64)
        s1 = sz[np.arange(c) % len(sz)]
        slots = s1 + ph.gap
        cum = _excl_cumsum(slots)
        if not private and ph.layout == "interleaved":
            slot = int(sz.max()) + ph.gap
            colp = np.arange(c, dtype=np.int64) * n * slot
            rankp = idx.astype(np.int64) * slot
        elif not private and ph.layout == "segmented":
            colp, rankp = cum, rstart[idx]
        else:
            colp, rankp = cum, np.zeros(len(idx), dtype=np.int64)
        base = base_all[idx]
        off = base[:, :, None] + rankp[:, None, None] + colp[None, None, :]
        size = np.broadcast_to(s1, off.shape)
        if ph.passes > 1:
            off = np.tile(off, (1, 1, ph.passes))
            size = np.tile(size, (1, 1, ph.passes))
        if ph.pattern == "random" and off.shape[-1] > 1:
            order = np.argsort(self.rng.random(off.shape), axis=-1)
            off = np.take_along_axis(off, order, axis=-1)
            size = np.take_along_axis(np.ascontiguousarray(size), order, axis=-1)
        return off, np.ascontiguousarray(size)

    def _regions(self, ph: Phase, cnt: np.ndarray) -> np.ndarray:
        """Exclusive start of every phase rank's block in a segmented shared file."""
        sz = np.array(ph.size, dtype=np.int64) + ph.gap
        full = int(sz.sum())
        pref = np.r_[0, np.cumsum(sz)]
        region = (cnt // len(sz)) * full + pref[cnt % len(sz)]
        return _excl_cumsum(region)

    def _header_ops(
        self, ph: Phase, fk: np.ndarray, idx: np.ndarray, private: bool, creating: np.ndarray
    ) -> tuple[
        list[tuple[np.ndarray, np.ndarray, bool, np.ndarray]], list[tuple[np.ndarray, np.ndarray, bool, np.ndarray]]
    ]:
        """Format metadata requests before and after the data: [(offset, length, is_write, mask(nr, m))]."""
        pre: list[tuple[np.ndarray, np.ndarray, bool, np.ndarray]] = []
        post: list[tuple[np.ndarray, np.ndarray, bool, np.ndarray]] = []
        if ph.interface not in ("hdf5", "pnetcdf"):
            return pre, post
        sub = fk[idx]
        header = np.vectorize(lambda k: self.trace.files[int(k)].header, otypes=[np.int64])(sub)
        first = np.ones_like(sub, dtype=bool) if private else np.broadcast_to((idx == 0)[:, None], sub.shape)
        has = header > 0
        if ph.interface == "hdf5":
            sb = np.minimum(header, HDF5_SUPERBLOCK)
            rest = header - sb
            zero = np.zeros_like(header)
            if ph.op == "read":
                pre = [(zero, sb, False, has), (sb, rest, False, has & (rest > 0))]
            else:
                mask = has & creating[sub] & first
                post = [(zero, sb, True, mask), (sb, rest, True, mask & (rest > 0))]
        else:
            zero = np.zeros_like(header)
            if ph.op == "read":
                pre = [(zero, header, False, has & first)]
            else:
                pre = [(zero, header, True, has & creating[sub] & first)]
        return pre, post

    def _creating(self, ph: Phase, fk: np.ndarray) -> np.ndarray:
        """Per file key: does this phase create the file (first write phase)? Marks them created."""
        size = int(fk.max()) + 1 if fk.size else 0
        out = np.zeros(size, dtype=bool)
        if ph.op != "write":
            return out
        for k in np.unique(fk).tolist():
            st = self.trace.files[k]
            if not st.created:
                out[k] = True
                st.created = True
        return out

    def _note_end(self, fk: np.ndarray, end: np.ndarray) -> None:
        if len(fk) == 0:
            return
        uniq, inv = np.unique(fk, return_inverse=True)
        top = np.zeros(len(uniq), dtype=np.int64)
        np.maximum.at(top, inv, end)
        for k, e in zip(uniq.tolist(), top.tolist(), strict=True):
            st = self.trace.files[k]
            st.end = max(st.end, e)

    # --- layers ------------------------------------------------------------------------------

    def _hints(self, ph: Phase) -> bool:
        return self.job_hints or ph.cb_nodes is not None or ph.cb_buffer_size is not None

    def _file_meta_layers(self, ph: Phase) -> list[TraceLayer]:
        """Layers that see an open/close of the file itself, top first."""
        return self._layers(ph, TraceLayer.H5F, TraceLayer.PNCFILE)

    def _layers(self, ph: Phase, hdf5_top: TraceLayer, pnetcdf_top: TraceLayer) -> list[TraceLayer]:
        """The interface's layers, top first; HDF5 and PnetCDF name their file or object layer."""
        i = ph.interface
        if i == "posix":
            return [TraceLayer.POSIX]
        if i == "stdio":
            return [TraceLayer.STDIO]
        if i == "dfs":
            return [TraceLayer.DFS]
        if i == "mpiio":
            return [TraceLayer.MPIIO, TraceLayer.POSIX]
        if i == "hdf5":
            return [hdf5_top, TraceLayer.MPIIO, TraceLayer.POSIX] if ph.via == "mpiio" else [hdf5_top, TraceLayer.POSIX]
        return [pnetcdf_top, TraceLayer.MPIIO, TraceLayer.POSIX]

    def _object_key(self, ph: Phase, fk: np.ndarray) -> np.ndarray:
        """H5D / PNETCDF_VAR record keys for the files (``<file>:<object>``)."""
        name = ph.dataset if ph.interface == "hdf5" else ph.variable
        t = self.trace
        uniq, inv = np.unique(fk, return_inverse=True)
        keys = np.empty(len(uniq), dtype=np.int64)
        for j, k in enumerate(uniq.tolist()):
            obj = t.key(f"{t.files[k].path}:{name}")
            t.parent[obj] = k
            keys[j] = obj
        return keys[inv.reshape(-1)].reshape(fk.shape)

    def _emit_meta_steps(
        self,
        ph: Phase,
        kind: np.ndarray,
        rank: np.ndarray,
        fk: np.ndarray,
        start: np.ndarray,
        end: np.ndarray,
        shared_open: np.ndarray,
        creating: np.ndarray,
        h5d_open: bool = True,
    ) -> None:
        """Open/close/stat/fsync steps (flat arrays, in time order) at every layer that sees them.

        ``h5d_open=False``: the dataset's H5Dcreate is emitted apart (``_create_datasets``: it lasts as long as the
        fill values take), so the file's open step opens no H5D record."""
        t = self.trace
        layers = self._file_meta_layers(ph)
        obj = self._object_key(ph, fk) if ph.interface in ("hdf5", "pnetcdf") else None
        for layer in layers:
            sel_open = kind == S_OPEN
            k = np.full(len(kind), -1, dtype=np.int8)
            k[sel_open] = Meta.OPEN
            k[kind == S_CLOSE] = Meta.CLOSE
            k[kind == S_FSYNC] = Meta.FSYNC
            k[kind == S_STAT] = Meta.STAT if layer in (TraceLayer.POSIX, TraceLayer.DFS) else -1
            if layer == TraceLayer.MPIIO:
                k[sel_open & shared_open] = Meta.COLL_OPEN
            if layer == TraceLayer.PNCFILE:
                k[sel_open & creating[fk]] = Meta.CREATE
            keep = k >= 0
            t.add_meta(layer, fk[keep], rank[keep], k[keep], start[keep], end[keep])
            if layer == TraceLayer.MPIIO and self._hints(ph):
                t.add_meta(layer, fk[sel_open], rank[sel_open], Meta.HINT, start[sel_open], start[sel_open])
        if obj is not None:
            layer = TraceLayer.H5D if ph.interface == "hdf5" else TraceLayer.PNCVAR
            keep = ((kind == S_OPEN) & h5d_open) | (kind == S_CLOSE)
            k = np.where(kind[keep] == S_OPEN, Meta.OPEN, Meta.CLOSE).astype(np.int8)
            t.add_meta(layer, obj[keep], rank[keep], k, start[keep], end[keep])
        if ph.interface == "hdf5":
            for f in np.unique(fk).tolist():
                t.h5f_mpiio[f] = t.h5f_mpiio.get(f, False) or ph.via == "mpiio"

    def _note_objects(self, ph: Phase, fk: np.ndarray, size: np.ndarray, off: np.ndarray) -> None:
        """Dataset / variable shape facts: element size and number of elements."""
        if ph.interface not in ("hdf5", "pnetcdf") or len(fk) == 0:
            return
        t = self.trace
        dtype = 8 if all(s % 8 == 0 for s in ph.size) else 1
        obj = self._object_key(ph, fk)
        uniq, inv = np.unique(obj, return_inverse=True)
        top = np.zeros(len(uniq), dtype=np.int64)
        np.maximum.at(top, inv, off + size)
        for o, e in zip(uniq.tolist(), top.tolist(), strict=True):
            start = t.files[t.parent[o]].data_start
            t.dtype_size.setdefault(o, dtype)
            t.npoints[o] = max(t.npoints.get(o, 0), (e - start) // t.dtype_size[o])

    def _data_layers(self, ph: Phase) -> list[TraceLayer]:
        return self._layers(ph, TraceLayer.H5D, TraceLayer.PNCVAR)

    # --- independent data phases -----------------------------------------------------------

    def _independent_phase(
        self, ph: Phase, ranks: np.ndarray, fk: np.ndarray, private: bool, cnt: np.ndarray, rf: np.ndarray, clock: float
    ) -> float:
        n, m = fk.shape
        creating = self._creating(ph, fk)
        rstart = self._regions(ph, cnt)
        base_all = self._base(ph, fk)  # before any of the phase's writes move the end of file
        shared_open = (not private) and n > 1
        end_all = clock
        is_write = ph.op == "write"
        seeks = ph.interface in ("posix", "stdio")
        groups: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for c in np.unique(cnt).tolist():
            idx = np.flatnonzero(cnt == c)
            groups.append((idx, *self._offsets(ph, n, idx, base_all, int(c), private, rstart)))
        # H5Dcreate with fill values: how long each rank waits in it after opening the file.
        wait = self._fill_independent(ph, ranks, fk, private, rf, clock, groups) if ph.fill_values else None
        for idx, off, size in groups:
            nr = len(idx)
            pre, post = self._header_ops(ph, fk, idx, private, creating)
            k_req = off.shape[-1]
            cols: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
            # (step kind, offset (nr,m,w), length, is_write (nr,m,w), present (nr,m,w))
            shape2 = (nr, m)
            col = _Columns(cols, shape2)
            zero = np.zeros(shape2, dtype=np.int64)
            yes = np.ones(shape2, dtype=bool)
            col(S_OPEN, zero, zero, False, yes)
            for o, ln, w, mask in pre:
                col(S_PRE, o, ln, w, mask)
            cols.append((S_REQ, off, size, np.full(off.shape, is_write), np.ones(off.shape, dtype=bool)))
            for o, ln, w, mask in post:
                col(S_POST, o, ln, w, mask)
            if ph.fsync:
                col(S_FSYNC, zero, zero, False, yes)
            col(S_CLOSE, zero, zero, False, yes)
            kinds = np.concatenate([np.full(c_[1].shape[-1], c_[0], dtype=np.int8) for c_ in cols])
            o3 = np.concatenate([c_[1] for c_ in cols], axis=-1)
            l3 = np.concatenate([c_[2] for c_ in cols], axis=-1)
            w3 = np.concatenate([c_[3] for c_ in cols], axis=-1)
            p3 = np.concatenate([c_[4] for c_ in cols], axis=-1)
            width = o3.shape[-1]
            kind3 = np.broadcast_to(kinds, (nr, m, width))
            fk3 = np.broadcast_to(fk[idx][:, :, None], (nr, m, width))
            rank3 = np.broadcast_to(ranks[idx][:, None, None], (nr, m, width))
            rf3 = np.broadcast_to(rf[idx][:, None, None], (nr, m, width))
            # Seeks: a request that does not start where the previous one ended (position 0 at open).
            seek3 = np.zeros((nr, m, width), dtype=bool)
            if seeks:
                lo = 1 + len(pre)
                prev_end = np.concatenate([np.zeros((nr, m, 1), dtype=np.int64), (off + size)[:, :, :-1]], axis=-1)
                seek3[:, :, lo : lo + k_req] = off != prev_end
            flat = {
                "kind": kind3.reshape(-1),
                "off": o3.reshape(-1),
                "len": l3.reshape(-1),
                "write": w3.reshape(-1),
                "present": p3.reshape(-1),
                "fk": fk3.reshape(-1),
                "rank": rank3.reshape(-1),
                "rf": rf3.reshape(-1),
                "seek": seek3.reshape(-1),
            }
            is_io = (flat["kind"] == S_REQ) | (flat["kind"] == S_PRE) | (flat["kind"] == S_POST)
            meta_dur = ph.meta_seconds * flat["rf"]
            io_dur = np.zeros(len(is_io))
            if is_io.any():
                sel = np.flatnonzero(is_io)
                io_dur[sel] = (
                    self._spo(ph, flat["len"][sel])
                    * flat["rf"][sel]
                    * self._ost_factor(flat["fk"][sel], flat["off"][sel], flat["len"][sel])
                )
            seek_dur = np.where(flat["seek"], meta_dur, 0.0)
            dur = np.where(is_io, io_dur + seek_dur, meta_dur) * flat["present"]
            per_rank = dur.reshape(nr, m * width)
            ends = clock + np.cumsum(per_rank, axis=1)
            if wait is not None:
                ends[:, 1:] += wait[idx][:, None]  # one file per rank (m == 1): every step after the open
            end = ends.reshape(-1)
            start = end - dur
            end_all = max(end_all, float(ends[:, -1].max()) if ends.size else clock)
            present = flat["present"]
            # Metadata steps.
            msel = present & ~is_io
            self._emit_meta_steps(
                ph,
                flat["kind"][msel],
                flat["rank"][msel],
                flat["fk"][msel],
                start[msel],
                end[msel],
                np.full(int(msel.sum()), shared_open),
                creating,
                h5d_open=wait is None,
            )
            if seeks:
                ssel = present & flat["seek"]
                layer = TraceLayer.POSIX if ph.interface == "posix" else TraceLayer.STDIO
                self.trace.add_meta(
                    layer, flat["fk"][ssel], flat["rank"][ssel], Meta.SEEK, start[ssel], start[ssel] + seek_dur[ssel]
                )
            # Data requests at every layer.
            isel = present & is_io
            req_start = start + seek_dur
            self._emit_requests(
                ph,
                flat["fk"][isel],
                flat["rank"][isel],
                flat["write"][isel],
                flat["off"][isel],
                flat["len"][isel],
                req_start[isel],
                end[isel],
                flat["kind"][isel] == S_REQ,
            )
            if ph.interface == "pnetcdf" and ph.nonblocking:
                self._pnetcdf_waits(flat["fk"][isel], flat["rank"][isel], req_start[isel], end[isel], False)
            wsel = isel & flat["write"]
            self._note_end(flat["fk"][wsel], flat["off"][wsel] + flat["len"][wsel])
            rsel = isel & (flat["kind"] == S_REQ)
            self._note_objects(ph, flat["fk"][rsel], flat["len"][rsel], flat["off"][rsel])
        return end_all

    def _fill_independent(
        self,
        ph: Phase,
        ranks: np.ndarray,
        fk: np.ndarray,
        private: bool,
        rf: np.ndarray,
        clock: float,
        groups: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    ) -> np.ndarray:
        """H5Dcreate with fill values in an independent phase (one file per rank): each rank's wait after its open.

        The dataset's extent is the bytes the phase's requests cover: of the shared file (one communicator, the
        phase's ranks), or of each rank's own file (MPI_COMM_SELF: each rank fills its own)."""
        n = len(ranks)
        t_open = clock + ph.meta_seconds * rf
        ncomm = n if private else 1
        lo = np.full(ncomm, np.iinfo(np.int64).max, dtype=np.int64)
        hi = np.zeros(ncomm, dtype=np.int64)
        for idx, off, size in groups:
            if off.shape[-1] == 0:
                continue
            where = idx if private else np.zeros(len(idx), dtype=np.int64)
            np.minimum.at(lo, where, off.min(axis=(1, 2)))
            np.maximum.at(hi, where, (off + size).max(axis=(1, 2)))
        lo = np.minimum(lo, hi)
        comm = np.arange(n, dtype=np.int64) if private else np.zeros(n, dtype=np.int64)
        done = self._create_datasets(ph, fk[:, 0], ranks, rf, t_open, comm, lo, hi)
        out: np.ndarray = done - t_open
        return out

    def _emit_requests(
        self,
        ph: Phase,
        fk: np.ndarray,
        rank: np.ndarray,
        write: np.ndarray,
        off: np.ndarray,
        length: np.ndarray,
        start: np.ndarray,
        end: np.ndarray,
        is_data: np.ndarray,
    ) -> None:
        """Independent requests (data and format metadata) at every layer; one call each."""
        t = self.trace
        mode = Mode.NB if ph.nonblocking else Mode.INDEP
        bad = not ph.mem_aligned
        for layer in self._data_layers(ph):
            if layer in (TraceLayer.H5D, TraceLayer.PNCVAR):
                obj = self._object_key(ph, fk[is_data])
                t.add_io(
                    layer,
                    obj,
                    rank[is_data],
                    write[is_data],
                    off[is_data],
                    length[is_data],
                    start[is_data],
                    end[is_data],
                    mode=mode,
                )
            elif layer == TraceLayer.MPIIO:
                # PnetCDF flushes nonblocking requests with ordinary MPI-IO calls.
                mpi_mode = Mode.NB if ph.nonblocking and ph.interface == "mpiio" else Mode.INDEP
                m = np.where(is_data, int(mpi_mode), int(Mode.INDEP)).astype(np.int8)
                t.add_io(layer, fk, rank, write, off, length, start, end, mode=m)
            else:
                t.add_io(layer, fk, rank, write, off, length, start, end, mem_bad=bad & is_data)

    def _pnetcdf_waits(self, fk: np.ndarray, rank: np.ndarray, start: np.ndarray, end: np.ndarray, coll: bool) -> None:
        """One ncmpi_wait_all per (file, rank): it spans the flushed requests."""
        if len(fk) == 0:
            return
        key = fk * (self.nprocs + 1) + rank
        uniq, inv = np.unique(key, return_inverse=True)
        lo = np.full(len(uniq), np.inf)
        hi = np.full(len(uniq), -np.inf)
        np.minimum.at(lo, inv, start)
        np.maximum.at(hi, inv, end)
        kind = Meta.WAIT_COLL if coll else Meta.WAIT_INDEP
        self.trace.add_meta(TraceLayer.PNCFILE, uniq // (self.nprocs + 1), uniq % (self.nprocs + 1), kind, lo, hi)

    # --- collective data phases ------------------------------------------------------------

    def _collective_phase(
        self, ph: Phase, ranks: np.ndarray, fk: np.ndarray, private: bool, cnt: np.ndarray, rf: np.ndarray, clock: float
    ) -> float:
        n = len(ranks)
        creating = self._creating(ph, fk)
        rstart = self._regions(ph, cnt)
        base_all = self._base(ph, fk)
        comms = [np.arange(n)] if not private else [np.array([k]) for k in range(n)]
        end_all = clock
        cb = ph.cb_buffer_size or self.s.hints.cb_buffer_size
        cb_nodes = ph.cb_nodes or self.s.hints.cb_nodes
        is_write = ph.op == "write"
        t = self.trace
        c = int(cnt[0]) if n else 0
        for idx in comms:
            nr = len(idx)
            rk = ranks[idx]
            f = int(fk[idx[0], 0])
            fkr = np.full(nr, f, dtype=np.int64)
            off3, size3 = self._offsets(ph, n, idx, base_all, c, private, rstart)
            off, size = off3[:, 0, :], size3[:, 0, :]
            k_calls = off.shape[-1]
            pre, post = self._header_ops(ph, fk, idx, private, creating)
            meta = ph.meta_seconds * rf[idx]
            shared_open = np.full(nr, nr > 1)
            # Open, then each rank's independent header reads/writes, then a barrier.
            open_end = clock + meta
            self._emit_meta_steps(
                ph,
                np.full(nr, S_OPEN, dtype=np.int8),
                rk,
                fkr,
                np.full(nr, clock),
                open_end,
                shared_open,
                creating,
                h5d_open=not ph.fill_values,
            )
            t_rank = self._indep_block(ph, pre, rk, fkr, rf[idx], open_end)
            if ph.fill_values:
                # H5Dcreate: the dataset's extent (the bytes this phase's calls cover) gets fill values first.
                lo = np.array([int(off.min()) if off.size else 0], dtype=np.int64)
                hi = np.array([int((off + size).max()) if off.size else 0], dtype=np.int64)
                t_rank = self._create_datasets(ph, fkr, rk, rf[idx], t_rank, np.zeros(nr, dtype=np.int64), lo, hi)
            t0 = float(t_rank.max())
            # The collective calls.
            call = np.broadcast_to(np.arange(k_calls), off.shape).reshape(-1)
            aggs = pick_aggregators(rk, self.node, cb_nodes)
            pc, pa, ps, pl = two_phase(call, off.reshape(-1), size.reshape(-1), len(aggs), cb)
            call_size = size.max(axis=0) if nr else np.zeros(k_calls, dtype=np.int64)
            t_base = self._spo(ph, call_size) * float(rf[idx].max())
            busy_bytes = np.zeros((k_calls, len(aggs)), dtype=np.float64)
            np.add.at(busy_bytes, (pc, pa), pl)
            top = busy_bytes.max(axis=1) if len(aggs) else np.zeros(k_calls)
            top = np.where(top > 0, top, 1.0)
            pdur = t_base[pc] * pl / top[pc] * self._ost_factor(np.full(len(pc), f), ps, pl)
            # Read-modify-write: each piece is read (as long as its write takes) before it is written.
            rmw = ph.read_modify_write and is_write
            step = pdur * 2.0 if rmw else pdur
            busy = np.zeros((k_calls, len(aggs)), dtype=np.float64)
            np.add.at(busy, (pc, pa), step)
            # Every call first waits (late ranks, the two-phase exchange): MPI-IO time, not POSIX time.
            wait = ph.wait_seconds
            call_t = wait + np.maximum(t_base, busy.max(axis=1) if len(aggs) else 0.0)
            call_start = t0 + _excl_cumsum(call_t)
            t1 = t0 + float(call_t.sum())
            new_group = np.r_[True, (pc[1:] != pc[:-1]) | (pa[1:] != pa[:-1])] if len(pc) else np.zeros(0, bool)
            pstart = call_start[pc] + wait + _segmented_excl_cumsum(step, new_group) if len(pc) else np.zeros(0)
            # Events: calls at the top layers, pieces at POSIX (aggregators only).
            r_flat = np.repeat(rk, k_calls)
            s_flat = np.tile(call_start, nr)
            e_flat = np.tile(call_start + call_t, nr)
            mode = Mode.NB if ph.nonblocking else Mode.COLL
            for layer in self._data_layers(ph):
                if layer in (TraceLayer.H5D, TraceLayer.PNCVAR):
                    obj = self._object_key(ph, np.full(len(r_flat), f))
                    t.add_io(layer, obj, r_flat, is_write, off.reshape(-1), size.reshape(-1), s_flat, e_flat, mode=mode)
                elif layer == TraceLayer.MPIIO:
                    mpi_mode = Mode.NB if ph.nonblocking and ph.interface == "mpiio" else Mode.COLL
                    t.add_io(
                        layer, f, r_flat, is_write, off.reshape(-1), size.reshape(-1), s_flat, e_flat, mode=mpi_mode
                    )
                else:
                    # ROMIO issues the aggregator's pieces from its own (aligned) buffers.
                    order = np.lexsort((pstart, aggs[pa]))
                    agg, off_p, len_p = aggs[pa][order], ps[order], pl[order]
                    s_p, d_p = pstart[order], pdur[order]
                    if rmw:
                        # Each piece twice, in time order: the read, then the write of the same bytes.
                        agg, off_p, len_p = np.repeat(agg, 2), np.repeat(off_p, 2), np.repeat(len_p, 2)
                        s_p = np.column_stack([s_p, s_p + d_p]).reshape(-1)
                        d_p = np.repeat(d_p, 2)
                        writes = np.tile(np.array([False, True]), len(order))
                    else:
                        writes = np.full(len(order), bool(is_write))
                    t.add_io(layer, f, agg, writes, off_p, len_p, s_p, s_p + d_p)
            if ph.interface == "pnetcdf" and ph.nonblocking:
                self._pnetcdf_waits(np.full(nr, f), rk, np.full(nr, t0), np.full(nr, t1), True)
            if is_write:
                self._note_end(np.array([f]), np.array([int((off + size).max())]) if off.size else np.array([0]))
            self._note_objects(ph, np.full(off.size, f), size.reshape(-1), off.reshape(-1))
            # Header writes (independent), fsync, close.
            t_rank = self._indep_block(ph, post, rk, fkr, rf[idx], np.full(nr, t1))
            tail: list[int] = ([S_FSYNC] if ph.fsync else []) + [S_CLOSE]
            for kind in tail:
                self._emit_meta_steps(
                    ph, np.full(nr, kind, dtype=np.int8), rk, fkr, t_rank, t_rank + meta, shared_open, creating
                )
                t_rank = t_rank + meta
            end_all = max(end_all, float(t_rank.max()))
        return end_all

    # --- HDF5 fill values at dataset creation ----------------------------------------------

    def _fill_values(
        self,
        ph: Phase,
        fk: np.ndarray,
        rank: np.ndarray,
        rf: np.ndarray,
        t0: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
    ) -> np.ndarray:
        """H5D__contig_fill: fill ``j`` writes bytes ``[lo[j], hi[j])`` of file ``fk[j]`` from rank ``rank[j]``,
        in order from ``t0[j]``, in pieces of at most HDF5_FILL_BUFFER: independent MPI-IO writes (HDF5's internal
        independent transfer), one POSIX write each, no H5Dwrite. Returns each fill's end."""
        pieces = np.maximum(-(-(hi - lo) // HDF5_FILL_BUFFER), 0)
        total = int(pieces.sum())
        if total == 0:
            return np.asarray(t0, dtype=np.float64).copy()
        which = np.repeat(np.arange(len(fk)), pieces)
        j = np.arange(total, dtype=np.int64) - np.repeat(_excl_cumsum(pieces), pieces)
        off = lo[which] + j * HDF5_FILL_BUFFER
        length = np.minimum(HDF5_FILL_BUFFER, hi[which] - off)
        f = fk[which]
        # A fill write goes at the default speed (not the phase's seconds_per_op, which times its data calls).
        d = _default_seconds(length) * rf[which] * self._ost_factor(f, off, length)
        new = np.r_[True, which[1:] != which[:-1]]
        start = t0[which] + _segmented_excl_cumsum(d, new)
        end = start + d
        self._emit_requests(
            ph, f, rank[which], np.ones(total, dtype=bool), off, length, start, end, np.zeros(total, dtype=bool)
        )
        self._note_end(f, off + length)
        out = np.asarray(t0, dtype=np.float64).copy()
        np.maximum.at(out, which, end)
        return out

    def _create_datasets(
        self,
        ph: Phase,
        fk: np.ndarray,
        rank: np.ndarray,
        rf: np.ndarray,
        t_open: np.ndarray,
        comm: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
    ) -> np.ndarray:
        """H5Dcreate with fill values, on every rank (flat arrays): communicator ``comm[i]`` (0..C-1, its first
        rank the lowest index) fills ``[lo[c], hi[c])`` of its file from its first rank, then MPI_Barrier. Each
        rank's H5Dcreate lasts from ``t_open`` (its file open's end) to the barrier: H5D_OPENS and H5D meta time
        (Darshan's H5Dcreate2 wrapper). Returns each rank's end."""
        ncomm = len(lo)
        first = np.full(ncomm, len(comm), dtype=np.int64)
        np.minimum.at(first, comm, np.arange(len(comm), dtype=np.int64))
        fill_end = self._fill_values(ph, fk[first], rank[first], rf[first], t_open[first], lo, hi)
        barrier = fill_end.copy()
        np.maximum.at(barrier, comm, t_open)
        done = barrier[comm]
        self.trace.add_meta(TraceLayer.H5D, self._object_key(ph, fk), rank, Meta.OPEN, t_open, done)
        out: np.ndarray = done
        return out

    def _indep_block(
        self,
        ph: Phase,
        ops: list[tuple[np.ndarray, np.ndarray, bool, np.ndarray]],
        rk: np.ndarray,
        fkr: np.ndarray,
        rf: np.ndarray,
        t_start: np.ndarray,
    ) -> np.ndarray:
        """Format-metadata requests each rank issues independently, in order; returns each rank's end."""
        t_rank = np.broadcast_to(np.asarray(t_start, dtype=np.float64), rk.shape).copy()
        for o, ln, w, mask in ops:
            sel = np.flatnonzero(mask[:, 0])
            if len(sel) == 0:
                continue
            o1, l1 = o[sel, 0], ln[sel, 0]
            d = self._spo(ph, l1) * rf[sel] * self._ost_factor(fkr[sel], o1, l1)
            s = t_rank[sel]
            self._emit_requests(
                ph, fkr[sel], rk[sel], np.full(len(sel), w), o1, l1, s, s + d, np.zeros(len(sel), dtype=bool)
            )
            if w:
                self._note_end(fkr[sel], o1 + l1)
            t_rank[sel] = s + d
        return t_rank

    # --- metadata-only phases ----------------------------------------------------------------

    def _meta_phase(
        self, ph: Phase, ranks: np.ndarray, fk: np.ndarray, private: bool, rf: np.ndarray, clock: float
    ) -> float:
        n, m = fk.shape
        pattern = {"open": [S_OPEN, S_CLOSE], "stat": [S_STAT], "open_stat": [S_OPEN, S_STAT, S_CLOSE]}[ph.op]
        kinds = np.tile(np.array(pattern, dtype=np.int8), ph.count)
        width = len(kinds)
        if width == 0:
            return clock
        dur = np.broadcast_to((ph.meta_seconds * rf)[:, None], (n, m * width))
        ends = clock + np.cumsum(dur, axis=1)
        end = ends.reshape(-1)
        start = end - dur.reshape(-1)
        kind = np.broadcast_to(kinds, (n, m, width)).reshape(-1)
        rank = np.broadcast_to(ranks[:, None, None], (n, m, width)).reshape(-1)
        fkf = np.broadcast_to(fk[:, :, None], (n, m, width)).reshape(-1)
        shared_open = np.full(len(kind), (not private) and n > 1)
        creating = np.zeros(int(fk.max()) + 1, dtype=bool)
        self._emit_meta_steps(ph, kind, rank, fkf, start, end, shared_open, creating)
        return float(ends[:, -1].max())


def simulate(s: Scenario) -> Trace:
    """The event trace of a scenario's program."""
    return Simulator(s).run()
