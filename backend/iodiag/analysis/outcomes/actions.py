"""Concrete settings for a finding's advice, computed from this job: the command or call, where it goes, what it
should do, and how many seconds it can save (at most the finding's cost).

A recommendation id says *what kind* of change helps ("stripe shared files over more OSTs"); an action says
*exactly what to type* for this job ("lfs setstripe -c 8 -S 4M /lus/scratch/ckpt"), with numbers from its files,
ranks, request sizes and layout. Each rule is documented where it is computed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iodiag.analysis.models import Action, FileEvidence, Impact, Layer, LustreLayout, OstUsage, Workload
from iodiag.analysis.outcomes.action_safety import (
    MEASURE_LABEL,
    aggregators_seen,
    check_action,
    facts_for,
    hdf5_metadata_writes,
    layout_action,
    safe_actions,
)
from iodiag.analysis.outcomes.shell import shell_quote
from iodiag.analysis.views.context import Context
from iodiag.core.units import human_bytes

MiB = 1 << 20

# Stripe count by the size of a file written by many ranks: the shape of the NERSC and OLCF guidance (more
# stripes for larger shared files), never more stripes than writers.
_STRIPES_BY_SIZE = ((1 << 30, 4), (10 << 30, 8), (100 << 30, 24), (1 << 62, 72))


def _size_arg(nbytes: int) -> str:
    """lfs size syntax: 1M, 4M, 64K."""
    if nbytes % MiB == 0:
        return f"{nbytes // MiB}M"
    return f"{nbytes // 1024}K"


def stripe_size_for(request: int) -> int:
    """The stripe size for a common request size: the request itself when it is a multiple of 64 KiB between
    1 MiB and 64 MiB (each request then lands on whole stripes), else the next power of two in that range."""
    if MiB <= request <= 64 * MiB and request % (64 << 10) == 0:
        return request
    size = MiB
    while size < min(max(request, MiB), 64 * MiB):
        size *= 2
    return size


def stripe_count_for(file_bytes: int, writers: int, nodes: int | None) -> int:
    count = next(c for limit, c in _STRIPES_BY_SIZE if file_bytes < limit)
    if nodes:
        # One stripe per writing node is the usual ceiling for aggregated (collective) writes.
        count = min(count, max(nodes, 2)) if writers > nodes else count
    return max(2, min(count, max(writers, 2)))


def _first_path(files: list[FileEvidence]) -> str | None:
    return files[0].path if files else None


def _target(ctx: Context, path: str) -> tuple[str, str]:
    """Where ``lfs setstripe`` for a file goes, quoted for the shell, and what it is: the file's directory, or
    the file itself (lfs creates it empty with the layout) when the directory is a file system's mount point,
    whose default layout every user's new files would take."""
    d = posixpath.dirname(path) or "/"
    if posixpath.normpath(d) in {"/", *(posixpath.normpath(m.path) for m in ctx.meta.mounts)}:
        return shell_quote(path), "the file itself (lfs creates it empty with the layout; move an old copy away)"
    return shell_quote(d), "the output directory"


def _layout(ctx: Context, record_id: str) -> object | None:
    from iodiag.analysis.views.lustre import layouts

    rid = int(record_id)
    return next((f for f in layouts(ctx) if f.record_id == rid), None)


def _saves(imp: Impact | None) -> float | None:
    return imp.seconds if imp is not None and imp.seconds is not None else None


def _hints(pairs: list[tuple[str, str]]) -> str:
    """ROMIO hints in Cray MPICH's variable form, which also reads as the MPI_Info key=value pairs to set."""
    return 'export MPICH_MPIIO_HINTS="*:' + ":".join(f"{k}={v}" for k, v in pairs) + '"'


def _changes(ctx: Context, pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The hints that would change something: not those the log shows already in effect."""
    in_effect = facts_for(ctx, None).hints
    return [(k, v) for k, v in pairs if in_effect.get(k) != v.lower()]


_HINTS_WHERE = (
    "the job script before srun/mpirun (Cray MPICH); elsewhere a ROMIO_HINTS file with one 'key value' per line, "
    "or the MPI_Info passed to MPI_File_open"
)


# --- one function per recommendation id --------------------------------------------------------------------


def _stripe_count(ctx: Context, files: list[FileEvidence], imp: Impact | None) -> Action | None:
    if not files:
        return None
    lay = _layout(ctx, files[0].record_id)
    if lay is None:
        return None
    from iodiag.analysis.views.lustre import LaidOutFile

    assert isinstance(lay, LaidOutFile)
    size = lay.bytes_written + lay.bytes_read
    stripe = stripe_size_for(lay.common_size or lay.stripe_size or MiB)
    if lay.bytes_written == 0 and lay.readers > 0:
        # An input the job only reads keeps the layout it was written with: restriping means rewriting it once,
        # which ``lfs migrate`` does in place (no one may hold it open meanwhile).
        count = stripe_count_for(size, lay.readers, ctx.nodes)
        return Action(
            recommendation="lustre-stripe-count",
            command=f"lfs migrate -c {count} -S {_size_arg(stripe)} {shell_quote(files[0].path)}",
            where="shell, once before the next run, on the input file (lfs migrate rewrites it with the new layout; "
            "nothing may have it open meanwhile)",
            effect=f"the {human_bytes(size)} file read by {lay.readers:,} ranks spreads over {count} OSTs instead of "
            f"{lay.stripe_count}, in {_size_arg(stripe)} stripes matching its {human_bytes(lay.common_size)} requests",
            saves_s=_saves(imp),
        )
    count = stripe_count_for(size, lay.writers, ctx.nodes)
    target, what = _target(ctx, files[0].path)
    return Action(
        recommendation="lustre-stripe-count",
        command=f"lfs setstripe -c {count} -S {_size_arg(stripe)} {target}",
        where=f"shell, on {what} before the job creates the file (an existing file keeps its layout)",
        effect=f"the {human_bytes(size)} file written by {lay.writers:,} ranks spreads over {count} OSTs instead of "
        f"{lay.stripe_count}, in {_size_arg(stripe)} stripes matching its {human_bytes(lay.common_size)} requests",
        saves_s=_saves(imp),
    )


def _stripe_size(ctx: Context, files: list[FileEvidence], imp: Impact | None) -> Action | None:
    if not files:
        return None
    lay = _layout(ctx, files[0].record_id)
    if lay is None:
        return None
    from iodiag.analysis.views.lustre import LaidOutFile

    assert isinstance(lay, LaidOutFile)
    stripe = stripe_size_for(lay.common_size or MiB)
    if stripe == lay.stripe_size:
        return None  # the layout already matches: nothing to change
    target, what = _target(ctx, files[0].path)
    return Action(
        recommendation="lustre-stripe-size",
        command=f"lfs setstripe -c {max(lay.stripe_count, 1)} -S {_size_arg(stripe)} {target}",
        where=f"shell, on {what} before the file is created",
        effect=f"{human_bytes(lay.common_size)} requests land on whole {_size_arg(stripe)} stripes instead of "
        f"crossing {human_bytes(lay.stripe_size)} stripe boundaries",
        saves_s=_saves(imp),
    )


def _ost_health(ctx: Context, files: list[FileEvidence], imp: Impact | None, slow: int | None) -> Action | None:
    if not files or slow is None:
        return None
    from iodiag.analysis.views.lustre import layouts

    healthy = sorted({o for f in layouts(ctx) for o in f.osts if o != slow})
    lay = _layout(ctx, files[0].record_id)
    count = getattr(lay, "stripe_count", 1) or 1
    if len(healthy) < count:
        return None
    chosen = ",".join(str(o) for o in healthy[:count])
    # -o fixes the OSTs of every new file under the target: kept only where that is one file striped over several
    # OSTs (action_safety's ost-pinning rule); a directory of one-OST files is spread by the file system.
    target, what = _target(ctx, files[0].path)
    return Action(
        recommendation="lustre-ost-health",
        command=f"lfs setstripe -c {count} -o {chosen} {target}",
        where=f"shell, on {what} before the job creates the file; and tell the storage team OST "
        f"{slow} was slow (lfs df -h shows its state)",
        effect=f"new files avoid OST {slow} and use OSTs that ran at the median rate in this job",
        saves_s=_saves(imp),
    )


def _romio(ctx: Context, imp: Impact | None, rec: str, wait: bool = False) -> Action | None:
    """Collective buffering for the direction the job used, one aggregator per node.

    For the wait inside collective calls (``mpiio-collective-wait``) collective buffering is the premise, not the
    fix: ROMIO already aggregates collective calls on interleaved data, and ``romio_cb_write`` does nothing for
    reads. What a setting can still change is the number of aggregators, and only where the log shows fewer than
    one per node. Where it shows enough, or cannot show them (a shared record reduced to rank -1), the action is to
    measure where the wait goes: ranks reaching the call late, or the exchange among the aggregators."""
    seen = aggregators_seen(ctx)
    m = ctx.mpiio_records
    coll_w = float(m["MPIIO_COLL_WRITES"].sum()) if len(m) else 0.0
    coll_r = float(m["MPIIO_COLL_READS"].sum()) if len(m) else 0.0
    indep_w = float(m["MPIIO_INDEP_WRITES"].sum()) if len(m) else 0.0
    indep_r = float(m["MPIIO_INDEP_READS"].sum()) if len(m) else 0.0
    # A finding about the wait judges its general hints the same way (``wait``).
    waiting = (wait or rec == "mpiio-collective-wait") and coll_w + coll_r > 0
    few = ctx.nodes and seen is not None and seen < ctx.nodes
    if (coll_w > 0 and ctx.nodes and seen is not None and seen >= ctx.nodes) or (waiting and not few):
        known = f"with {seen:,} aggregators for {ctx.nodes:,} nodes" if seen is not None and ctx.nodes else ""
        on = "collective buffering is already on" if coll_w > 0 else "the calls are already collective"
        more = (
            "fewer or more aggregators is not the fix"
            if known
            else "the log cannot show how many aggregators wrote (Darshan kept one record for all ranks)"
        )
        return Action(
            recommendation=rec,
            command="export MPICH_MPIIO_STATS=1 MPICH_MPIIO_TIMERS=1",
            where=f"{MEASURE_LABEL}: the job script before srun (Cray MPICH; with another MPI, rerun with Darshan's "
            "DXT tracing on: DXT_MPIIO shows when each rank entered each collective call)",
            effect=f"{on}{', ' + known if known else ''}, so {more}: the timers show whether the wait is ranks "
            "reaching the call late (balance the work before it) or the data exchange among the aggregators",
            saves_s=None,  # measuring saves nothing by itself
        )
    wanted: list[tuple[str, str]] = []
    # Only the direction the job used, and not for collective calls waiting: they already aggregate.
    if indep_w + coll_w > 0 and not waiting:
        wanted.append(("romio_cb_write", "enable"))
    if ctx.nodes and (not waiting or few):
        wanted.append(("cb_nodes", str(ctx.nodes)))
    if not wanted and indep_r + coll_r > 0:
        wanted.append(("romio_cb_read", "enable"))
    pairs = _changes(ctx, wanted)
    if not pairs:
        return None
    said = {
        "romio_cb_write": "collective buffering on for writes",
        "romio_cb_read": "collective buffering on for reads",
        "cb_nodes": f"one aggregator per node ({ctx.nodes} nodes)"
        + (f" instead of the {seen:,} that wrote" if few and seen is not None else ""),
    }
    effect = ", ".join(said[k] for k, _ in pairs)
    return Action(recommendation=rec, command=_hints(pairs), where=_HINTS_WHERE, effect=effect, saves_s=_saves(imp))


def _spread_aggregators(ctx: Context, files: list[FileEvidence], imp: Impact | None) -> Action | None:
    """Every byte of a collective file went through one aggregator (or a few): as many as the job has nodes, no
    more than the file's stripes (ROMIO on Lustre pairs aggregators with stripes) nor its ranks."""
    lay = _layout(ctx, files[0].record_id) if files else None
    stripes = getattr(lay, "stripe_count", 0) if lay is not None else 0
    ranks = ctx.meta.nprocs
    k = min(x for x in (ranks, ctx.nodes or ranks, stripes if stripes > 1 else ranks) if x > 0)
    if k <= 1:
        return None
    pairs = _changes(ctx, [("cb_nodes", str(k))])
    if not pairs:
        return None
    bound = (
        f"one aggregator per node ({ctx.nodes:,} nodes)"
        if ctx.nodes == k
        else f"one aggregator per stripe ({k:,} stripes)"
        if stripes == k
        else f"up to {k:,} aggregators (ROMIO places at most one per node unless cb_config_list says otherwise)"
    )
    return Action(
        recommendation="mpiio-spread-aggregators",
        command=_hints(pairs),
        where=_HINTS_WHERE + "; remove any cb_nodes=1 or cb_config_list naming one host set there already",
        effect=f"the file's collective I/O is shared by {bound} instead of the one or few ranks that carried all of it",
        saves_s=_saves(imp),
    )


def _rmw(ctx: Context, imp: Impact | None) -> Action | None:
    pairs = _changes(ctx, [("romio_ds_write", "disable")])
    if not pairs:
        return None
    return Action(
        recommendation="avoid-read-modify-write",
        command=_hints(pairs),
        where=_HINTS_WHERE,
        effect="ROMIO stops reading each region before rewriting it (no data sieving for writes)",
        saves_s=_saves(imp),
    )


def _amplification(ctx: Context, imp: Impact | None) -> Action | None:
    if ctx.uses_hdf5:
        command = "H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);"
        where = "the HDF5 code, on each dataset creation property list before H5Dcreate"
        effect = "HDF5 stops writing fill values over the whole dataset before the data"
    else:
        # PnetCDF does not fill unless the code asks (NC_NOFILL is its default): ROMIO's data sieving is the
        # amplification a setting removes.
        pairs = _changes(ctx, [("romio_ds_write", "disable")])
        if not pairs:
            return None
        command = _hints(pairs)
        where = _HINTS_WHERE
        effect = "ROMIO stops rewriting whole regions (data sieving) around the application's writes"
        if ctx.profile.has("PNETCDF_FILE") or ctx.profile.has("PNETCDF_VAR"):
            effect += "; a call to ncmpi_set_fill with NC_FILL in the code writes every variable twice: remove it"
    return Action(
        recommendation="avoid-byte-amplification", command=command, where=where, effect=effect, saves_s=_saves(imp)
    )


def _alignment(ctx: Context, imp: Impact | None, rec: str) -> Action | None:
    from iodiag.analysis.views.lustre import layouts

    stripes = [f.stripe_size for f in layouts(ctx) if f.stripe_size > 0]
    p = ctx.posix_records
    block = max(stripes) if stripes else (int(p["POSIX_FILE_ALIGNMENT"].max()) if len(p) else 0)
    if block <= 1:
        return None
    if ctx.uses_hdf5:
        command = f"H5Pset_alignment(fapl, {block // 2}, {block});"
        where = "the HDF5 code, on the file access property list before H5Fcreate"
    elif ctx.profile.has("PNETCDF_FILE") or ctx.profile.has("PNETCDF_VAR"):
        command = f'export PNETCDF_HINTS="nc_header_align_size={block};nc_var_align_size={block}"'
        where = "the job script before srun/mpirun (or the same keys in the MPI_Info passed to ncmpi_create)"
    else:
        if not _changes(ctx, [("striping_unit", str(block))]):
            return None
        command = _hints([("striping_unit", str(block))])
        where = _HINTS_WHERE + " (ROMIO aligns its collective file domains to it)"
    return Action(
        recommendation=rec,
        command=command,
        where=where,
        effect=f"objects and file domains start on {human_bytes(block)} boundaries (the "
        f"{'stripe' if stripes else 'file-system block'} size)",
        saves_s=_saves(imp),
    )


def _pow2_between(n: float, low: int, high: int) -> int:
    size = low
    while size < min(max(n, low), high):
        size *= 2
    return size


def _stdio_buffer(ctx: Context, imp: Impact | None) -> Action | None:
    """A bigger stream buffer: each fwrite/fread of the job's mean size is gathered into one system call of
    16 requests' worth (a power of two between 1 MiB and 64 MiB)."""
    s = ctx.stdio_records
    if not len(s):
        return None
    ops = float(s["STDIO_WRITES"].sum()) + float(s["STDIO_READS"].sum())
    moved = float(s["STDIO_BYTES_WRITTEN"].sum()) + float(s["STDIO_BYTES_READ"].sum())
    if ops <= 0 or moved <= 0:
        return None
    mean = moved / ops
    size = _pow2_between(16 * mean, MiB, 64 * MiB)
    calls = max(int(moved // size), 1)
    # Its own recommendation: setvbuf keeps the data on STDIO, so "move bulk data off STDIO" would misname it
    return Action(
        recommendation="stdio-larger-buffer",
        command=f"setvbuf(fp, NULL, _IOFBF, {size}); /* {_size_arg(size)} */",
        where="the C code, right after each fopen of a bulk-data file and before its first read or write "
        "(Fortran: the runtime's buffer size setting, e.g. GFORTRAN_UNFORMATTED_BUFFER_SIZE)",
        effect=f"{int(ops):,} calls of {human_bytes(int(mean))} on average reach the file system as about "
        f"{calls:,} {_size_arg(size)} requests; for shared files, moving the data to MPI-IO or HDF5 goes further",
        saves_s=_saves(imp),
    )


def _aggregate(ctx: Context, imp: Impact | None, layer: Layer | None) -> Action | list[Action] | None:
    """Fewer, larger requests: through MPI-IO, collective buffering (a buffer of the stripe size when that is
    above ROMIO's 16 MiB default); for a cost in stdio calls, the stream buffer; an MPI job's POSIX writes to a
    shared file, the collective MPI-IO call first and a file per process as the smaller change."""
    if not len(ctx.mpiio_records):
        if len(ctx.stdio_records) and layer is Layer.STDIO:
            return _stdio_buffer(ctx, imp)
        both = [
            _posix_to_collective(ctx, imp, "aggregate-small-requests"),
            _split_shared_file(ctx, imp, "aggregate-small-requests"),
        ]
        return [a for a in both if a is not None]
    from iodiag.analysis.views.lustre import layouts

    stripes = [f.stripe_size for f in layouts(ctx) if f.stripe_size > 0]
    buffer = max(max(stripes) if stripes else 0, 16 * MiB)
    pairs = [("romio_cb_write", "enable"), ("romio_cb_read", "enable")]
    pairs = _changes(ctx, pairs + ([("cb_buffer_size", str(buffer))] if buffer > 16 * MiB else []))
    if not pairs:
        return None
    return Action(
        recommendation="aggregate-small-requests",
        command=_hints(pairs),
        where=_HINTS_WHERE + "; the calls must be collective (MPI_File_write_all/_read_all) for this to act",
        effect=f"aggregators gather the ranks' small requests into {_size_arg(buffer)} file-system requests",
        saves_s=_saves(imp),
    )


def _collective(ctx: Context, imp: Impact | None, rec: str = "mpiio-collective-io") -> Action | None:
    """The collective form of the calls the job makes, in the interface it writes through."""
    m = ctx.mpiio_records
    if not len(m):
        return _posix_to_collective(ctx, imp, rec)
    iw, ir = int(m["MPIIO_INDEP_WRITES"].sum()), int(m["MPIIO_INDEP_READS"].sum())
    indep = iw + ir
    if indep == 0:
        return None  # already collective: nothing to switch
    if ctx.uses_hdf5 and hdf5_metadata_writes(ctx):
        # The datasets are already written collectively: the independent writes are HDF5's metadata.
        return _hdf5_collective_metadata(ctx, imp, rec, indep)
    if ctx.uses_hdf5:
        command = "H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);"
        where = "the HDF5 code: a dataset transfer property list passed to every H5Dwrite/H5Dread"
    elif ctx.profile.has("PNETCDF_FILE") or ctx.profile.has("PNETCDF_VAR"):
        # The call the job makes most: a job that only reads independently is told about the get call
        call = "ncmpi_put_vara_double_all" if iw >= ir else "ncmpi_get_vara_double_all"
        command = f"{call}(...) /* the _all form of each put/get, outside ncmpi_begin_indep_data */"
        where = "the PnetCDF code: every put/get call in independent data mode"
    elif iw >= ir:
        command = "MPI_File_write_at_all(fh, offset, buf, count, type, &status);" + (
            " /* and MPI_File_read_at_all */" if ir else ""
        )
        where = "the MPI-IO code: each MPI_File_write_at/read_at (or write/read) becomes its _all form"
    else:
        command = "MPI_File_read_at_all(fh, offset, buf, count, type, &status);" + (
            " /* and MPI_File_write_at_all */" if iw else ""
        )
        where = "the MPI-IO code: each MPI_File_read_at/write_at (or read/write) becomes its _all form"
    return Action(
        recommendation=rec,
        command=command,
        where=where,
        effect=f"{indep:,} independent MPI-IO calls become collective: ROMIO merges the ranks' pieces into large "
        "contiguous requests from a few aggregators",
        saves_s=_saves(imp),
    )


def _hdf5_collective_metadata(
    ctx: Context, imp: Impact | None, rec: str = "hdf5-collective-metadata", indep: int = 0
) -> Action | None:
    if not ctx.uses_hdf5:
        return None
    why = f"the {indep:,} independent MPI-IO writes are HDF5 metadata (every dataset is already written collectively): "
    return Action(
        recommendation=rec,
        command="H5Pset_all_coll_metadata_ops(fapl, 1); H5Pset_coll_metadata_write(fapl, 1);",
        where="the HDF5 code, on the file access property list before H5Fcreate/H5Fopen (HDF5 1.10 or later)",
        effect=(why if indep else "")
        + "one rank reads and writes HDF5 metadata and broadcasts it, instead of every rank issuing small "
        "metadata requests",
        saves_s=_saves(imp),
    )


@dataclass(frozen=True)
class _FilePattern:
    files: int
    one_rank_files: int
    """Files whose only records are one rank's (not shared)."""
    ranks: int
    """Ranks with a POSIX record of their own."""
    opens: int
    mean_bytes: float
    writes: bool


def _file_pattern(ctx: Context) -> _FilePattern:
    p = ctx.posix_records
    files = ctx.files
    if not len(p):
        return _FilePattern(0, 0, 0, 0, 0.0, False)
    ids = p["id"].astype(np.uint64)
    ranks = p["rank"]
    own = ranks >= 0
    uniq, counts = np.unique(ids[own], return_counts=True)
    # A file with one per-rank record and no shared (rank -1) record belongs to that rank alone.
    shared_ids = files["id"][files["shared"]]
    one_rank = int(np.count_nonzero(np.isin(uniq[counts == 1], shared_ids, invert=True)))
    moved = (files["POSIX_BYTES_READ"] + files["POSIX_BYTES_WRITTEN"]).astype(np.float64)
    return _FilePattern(
        files=len(files),
        one_rank_files=one_rank,
        ranks=len(np.unique(ranks[own])) if own.any() else max(ctx.meta.nprocs, 1),
        opens=int(p["POSIX_OPENS"].clip(0).sum()),
        mean_bytes=float(moved.mean()),
        writes=bool((files["POSIX_BYTES_WRITTEN"] > 0).any()),
    )


def _common_dir(paths: list[str]) -> str:
    try:
        return posixpath.commonpath(paths) if paths else "/"
    except ValueError:
        return "/"


def _stage_small_files(ctx: Context, imp: Impact | None) -> Action | None:
    """Many small files per rank that are only read or stat'ed: pack them once and unpack them to node-local
    storage, so the metadata calls leave the shared file system (one archive open per node instead of one
    open per file)."""
    fp = _file_pattern(ctx)
    if fp.writes or fp.files < 8 * max(fp.ranks, 1) or fp.mean_bytes > 4 * MiB:
        return None
    p = ctx.posix_records
    g = p.group_by("id")
    top = g.keys[np.argsort(-g.sum(p["POSIX_F_META_TIME"]), kind="stable")[:1000]]
    src = _common_dir([ctx.path(int(r)) for r in top])
    if src in ("/", ""):
        return None
    nodes = ctx.nodes or 1
    return Action(
        recommendation="reduce-metadata",
        command=f"tar -cf inputs.tar -C {shell_quote(src)} . && "
        f"srun --ntasks-per-node=1 -N {nodes} tar -xf inputs.tar -C /tmp",
        where="the job script, before the step that reads the files (Slurm; under PBS: mpiexec -ppn 1); then "
        "point the application at /tmp (node-local) instead of the shared directory",
        effect=f"{fp.files:,} small files ({human_bytes(int(fp.mean_bytes))} on average, {fp.opens:,} opens from "
        f"{fp.ranks:,} "
        f"ranks) are opened on node-local storage; the shared file system sees one archive read per node "
        f"({nodes:,})",
        saves_s=_saves(imp),
    )


def _file_per_node(ctx: Context, imp: Impact | None) -> Action | None:
    """File-per-process output at scale: every create is a metadata operation on one server, so thousands of
    ranks creating their own files queue there. One shared file per node, written collectively by the node's
    ranks, keeps the parallelism and divides the creates by the ranks per node."""
    fp = _file_pattern(ctx)
    nodes = ctx.nodes
    if not fp.writes or fp.ranks < 64 or fp.one_rank_files < fp.ranks // 2 or (nodes and fp.ranks <= 2 * nodes):
        return None
    per_node = f"{nodes:,} files, one per node" if nodes else "one file per node"
    if ctx.uses_hdf5:
        command = (
            "MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node); "
            "H5Pset_fapl_mpio(fapl, node, MPI_INFO_NULL); /* one file per node, H5Dwrite with a collective dxpl */"
        )
        where = "the HDF5 code: the communicator passed to H5Pset_fapl_mpio before H5Fcreate"
    else:
        command = (
            "MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node); "
            "MPI_File_open(node, path_of_this_node, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh); "
            "/* each rank: MPI_File_write_at_all at its own offset */"
        )
        where = "the code, where each rank opens its own output file"
    lustre = (
        "; on Lustre, give the larger per-node files more stripes (lfs setstripe -c)"
        if ctx.on_file_system("lustre")
        else ""
    )
    return Action(
        recommendation="reduce-metadata",
        command=command,
        where=where,
        effect=f"{fp.one_rank_files:,} files, each written by one of {fp.ranks:,} ranks "
        f"({human_bytes(int(fp.mean_bytes))} on average, {fp.opens:,} opens), become {per_node}: file creates "
        f"fall by the ranks per node{lustre}",
        saves_s=_saves(imp),
    )


def _reduce_metadata(ctx: Context, imp: Impact | None) -> Action | None:
    return _stage_small_files(ctx, imp) or _file_per_node(ctx, imp)


def _shared_written(ctx: Context) -> tuple[int, str, int, int, int] | None:
    """The shared file the job wrote most to: (record id, path, writer ranks, writes, bytes written)."""
    p = ctx.posix_records
    files = ctx.files
    ids = p["id"].astype(np.uint64)
    # Shared: every rank opened it (a reduced rank -1 record) or several ranks wrote it (one record each).
    wrote = (p["rank"] >= 0) & (p["POSIX_WRITES"] > 0)
    uniq, counts = np.unique(ids[wrote], return_counts=True)
    index = files["id"].astype(np.uint64)
    many = np.isin(index, uniq[counts > 1])
    keep = (files["shared"] | many) & (files["POSIX_BYTES_WRITTEN"] > 0)
    if not keep.any():
        return None
    written = files["POSIX_BYTES_WRITTEN"]
    row = int(np.flatnonzero(keep)[np.argmax(written[keep])])
    rid = int(index[row])
    own = counts[np.searchsorted(uniq, rid)] if many[row] else 0
    writers = max(ctx.meta.nprocs, 1) if bool(files["shared"][row]) else int(own)
    if writers < 2:
        return None
    return (
        rid,
        ctx.path(rid),
        writers,
        int(files["POSIX_WRITES"][row]),
        int(written[row]),
    )


def _split_shared_file(ctx: Context, imp: Impact | None, rec: str) -> Action | None:
    """A shared file written through POSIX alone, in interleaved small pieces: the ranks' clients fight over
    the file's locks, which also disables their write-back caches. A file per process (per node at large
    scale) lets each client cache and merge its own small writes; the alternative, MPI-IO collective calls, is
    the mpiio-collective-io action."""
    if len(ctx.mpiio_records) or ctx.workload is not Workload.MPI:
        return None
    found = _shared_written(ctx)
    if found is None:
        return None
    _, _, writers, writes, written = found
    per_process = writers <= 1024
    return Action(
        recommendation=rec,
        # The log's file name stays out of the C line: it is untrusted text, and the effect names the file.
        command='snprintf(path, sizeof path, "%s.%05d", output_name, rank); /* then open(path, ...) */'
        if per_process
        else "MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node); "
        "/* one file per node, written through MPI_File_write_at_all */",
        where="the code that opens the shared output file (readers then open the per-"
        + ("process" if per_process else "node")
        + " files, or a post-processing step joins them)",
        # File names from the log stay out of effects (shown unquoted); the finding's evidence names the file.
        effect=f"the {writers:,} ranks that wrote the shared file ({writes:,} writes, "
        f"{human_bytes(written)}) each write a file of their own, so no two ranks contend for its locks and each "
        "node's cache merges its small writes",
        saves_s=_saves(imp),
    )


def _shared_file_locks(ctx: Context, imp: Impact | None) -> Action | list[Action] | None:
    """Ranks contending for a shared file's locks: through MPI-IO (or HDF5, PnetCDF above it), the collective
    form of the job's own independent calls, worded for its library; through POSIX alone, a file per process."""
    if len(ctx.mpiio_records):
        return _collective(ctx, imp, "avoid-shared-file-locks")
    return _split_shared_file(ctx, imp, "avoid-shared-file-locks")


def _posix_to_collective(ctx: Context, imp: Impact | None, rec: str = "mpiio-collective-io") -> Action | None:
    """An MPI job writing a shared file through POSIX calls: the same writes through MPI-IO's collective calls
    let ROMIO gather them into large aligned requests from a few aggregators."""
    if ctx.workload is not Workload.MPI:
        return None
    found = _shared_written(ctx)
    if found is None:
        return None
    _, _, writers, writes, written = found
    return Action(
        recommendation=rec,
        command="MPI_File_write_at_all(fh, offset, buf, count, MPI_BYTE, &status); /* instead of pwrite/write */",
        where="the code that writes the shared file: every rank opens it together (MPI_File_open on "
        "MPI_COMM_WORLD) and calls the _all form",
        effect=f"the {writes:,} POSIX writes ({human_bytes(written // max(writes, 1))} on average) that "
        f"{writers:,} ranks made to the shared file become collective: aggregators write large "
        "contiguous pieces",
        saves_s=_saves(imp),
    )


def actions_for(
    ctx: Context, code: str, recs: list[str], files: list[FileEvidence], imp: Impact | None, slow_ost: int | None
) -> list[Action]:
    """The concrete actions for a finding's recommendations, in the recommendations' order, each one safe
    (``action_safety``: unsafe ones that no safe form replaced are dropped, measurements never come first)."""
    from iodiag.analysis.registry import CHECKS

    layer = CHECKS[code].layer if code in CHECKS else None
    rules: dict[str, Callable[[], Action | list[Action] | None]] = {
        "lustre-stripe-count": lambda: _stripe_count(ctx, files, imp),
        "lustre-stripe-size": lambda: _stripe_size(ctx, files, imp),
        "lustre-ost-health": lambda: _ost_health(ctx, files, imp, slow_ost),
        "romio-hints": lambda: _romio(ctx, imp, "romio-hints", wait="mpiio-collective-wait" in recs),
        "mpiio-collective-wait": lambda: _romio(ctx, imp, "mpiio-collective-wait"),
        "avoid-read-modify-write": lambda: _rmw(ctx, imp),
        "avoid-byte-amplification": lambda: _amplification(ctx, imp),
        "hdf5-alignment": lambda: _alignment(ctx, imp, "hdf5-alignment") if ctx.uses_hdf5 else None,
        "gpfs-block-alignment": lambda: _alignment(ctx, imp, "gpfs-block-alignment"),
        "stdio-larger-buffer": lambda: _stdio_buffer(ctx, imp),
        "aggregate-small-requests": lambda: _aggregate(ctx, imp, layer),
        "mpiio-collective-io": lambda: _collective(ctx, imp),
        "hdf5-collective-metadata": lambda: _hdf5_collective_metadata(ctx, imp),
        "reduce-metadata": lambda: _reduce_metadata(ctx, imp),
        "avoid-shared-file-locks": lambda: _shared_file_locks(ctx, imp),
        "mpiio-spread-aggregators": lambda: _spread_aggregators(ctx, files, imp),
    }
    out: list[Action] = []
    for rec in recs:
        rule = rules.get(rec)
        if rule is None:
            continue
        try:
            made = rule()
        except (KeyError, ValueError, StopIteration):  # a fact the rule needs is missing: say less, not wrong
            made = None
        for action in made if isinstance(made, list) else [made] if made is not None else []:
            if all(a.command != action.command for a in out):
                out.append(action)
    return safe_actions(out, facts_for(ctx, layer)) if out else out


MAX_LAYOUTS = 3


def lustre_layouts(ctx: Context) -> list[LustreLayout]:
    """The stripe layout of the Lustre files that moved the most bytes, against what their size, writers and
    requests call for: what "what stripe count should I use?" needs whether or not a Lustre finding fired.

    Only ever more stripes or larger stripes than the file has: fewer OSTs or smaller stripes are not a fix
    for anything these counters can show, so a layout at or above both suggestions fits.
    """
    from iodiag.analysis.views.lustre import layouts

    out: list[LustreLayout] = []
    ranked = sorted(layouts(ctx), key=lambda f: (-(f.bytes_written + f.bytes_read), f.record_id))
    for lay in ranked[:MAX_LAYOUTS]:
        moved = lay.bytes_written + lay.bytes_read
        if moved <= 0 or lay.stripe_count <= 0:
            continue
        # A file many ranks read at once needs stripes as much as one many ranks write: one OST serves them all.
        users = max(lay.writers, lay.readers)
        count = max(stripe_count_for(moved, users, ctx.nodes), lay.stripe_count)
        if users <= 1:
            count = lay.stripe_count  # one rank: more OSTs add no parallelism to its requests
        size = max(stripe_size_for(lay.common_size) if lay.common_size else lay.stripe_size, lay.stripe_size)
        if count == 1:
            size = lay.stripe_size  # one OST holds every byte: no request can cross to another, whatever the size
        fits = count == lay.stripe_count and size == lay.stripe_size
        path = ctx.path(lay.record_id)
        command = None if fits else f"lfs setstripe -c {count} -S {_size_arg(size)} {_target(ctx, path)[0]}"
        if command and check_action(layout_action(command), facts_for(ctx, Layer.LUSTRE), first=True):
            command = None  # no safe form: the layout is still assessed, without a command
        out.append(
            LustreLayout(
                path=path,
                bytes_moved=moved,
                writers=lay.writers,
                readers=lay.readers,
                stripe_count=lay.stripe_count,
                stripe_size=lay.stripe_size,
                osts=[int(o) for o in lay.osts],
                common_request=lay.common_size,
                suggested_count=count,
                suggested_size=size,
                command=command,
                fits=fits,
            )
        )
    return out


MAX_OSTS = 512  # every OST of the largest file systems (Orion: 450); the median needs them all


def ost_usage(ctx: Context) -> list[OstUsage]:
    """The OSTs with the most I/O time (ties: more bytes, then the lower index): "which OST is slowest?"."""
    from iodiag.analysis.views.lustre import ost_load

    load = ost_load(ctx)
    rows = [
        OstUsage(ost=int(o), bytes=round(float(b)), io_time_s=float(t), files=int(n))
        for o, b, t, n in zip(
            load["ost"].tolist(), load["bytes"].tolist(), load["time"].tolist(), load["files"].tolist(), strict=True
        )
    ]
    rows.sort(key=lambda r: (-r.io_time_s, -r.bytes, r.ost))
    return rows[:MAX_OSTS]
