"""Concrete settings for a finding's advice, computed from this job: the command or call, where it goes, what it
should do, and how many seconds it can save (at most the finding's cost).

A recommendation id says *what kind* of change helps ("stripe shared files over more OSTs"); an action says
*exactly what to type* for this job ("lfs setstripe -c 8 -S 4M /lus/scratch/ckpt"), with numbers from its files,
ranks, request sizes and layout. Each rule is documented where it is computed.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable

from iodiag.analysis.context import Context
from iodiag.analysis.models import Action, FileEvidence, Impact
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


def _dir(path: str) -> str:
    return shlex.quote(posixpath.dirname(path) or "/")


def _layout(ctx: Context, record_id: str) -> object | None:
    from iodiag.analysis.checks.lustre import layouts

    rid = int(record_id)
    return next((f for f in layouts(ctx) if f.record_id == rid), None)


def _saves(imp: Impact | None) -> float | None:
    return imp.seconds if imp is not None and imp.seconds is not None else None


def _hints(pairs: list[tuple[str, str]]) -> str:
    """ROMIO hints in Cray MPICH's variable form, which also reads as the MPI_Info key=value pairs to set."""
    return 'export MPICH_MPIIO_HINTS="*:' + ":".join(f"{k}={v}" for k, v in pairs) + '"'


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
    from iodiag.analysis.checks.lustre import FileLayout

    assert isinstance(lay, FileLayout)
    size = lay.bytes_written + lay.bytes_read
    count = stripe_count_for(size, lay.writers, ctx.nodes)
    stripe = stripe_size_for(lay.common_size or lay.stripe_size or MiB)
    return Action(
        recommendation="lustre-stripe-count",
        command=f"lfs setstripe -c {count} -S {_size_arg(stripe)} {_dir(files[0].path)}",
        where="shell, on the output directory before the job creates the file (an existing file keeps its layout)",
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
    from iodiag.analysis.checks.lustre import FileLayout

    assert isinstance(lay, FileLayout)
    stripe = stripe_size_for(lay.common_size or MiB)
    if stripe == lay.stripe_size:
        return None  # the layout already matches: nothing to change
    return Action(
        recommendation="lustre-stripe-size",
        command=f"lfs setstripe -c {max(lay.stripe_count, 1)} -S {_size_arg(stripe)} {_dir(files[0].path)}",
        where="shell, on the output directory before the file is created",
        effect=f"{human_bytes(lay.common_size)} requests land on whole {_size_arg(stripe)} stripes instead of "
        f"crossing {human_bytes(lay.stripe_size)} stripe boundaries",
        saves_s=_saves(imp),
    )


def _ost_health(ctx: Context, files: list[FileEvidence], imp: Impact | None, slow: int | None) -> Action | None:
    if not files or slow is None:
        return None
    from iodiag.analysis.checks.lustre import layouts

    healthy = sorted({o for f in layouts(ctx) for o in f.osts if o != slow})
    lay = _layout(ctx, files[0].record_id)
    count = getattr(lay, "stripe_count", 1) or 1
    if len(healthy) < count:
        return None
    chosen = ",".join(str(o) for o in healthy[:count])
    return Action(
        recommendation="lustre-ost-health",
        command=f"lfs setstripe -c {count} -o {chosen} {_dir(files[0].path)}",
        where="shell, on the output directory; and tell the storage team OST "
        f"{slow} was slow (lfs df -h shows its state)",
        effect=f"new files avoid OST {slow} and use OSTs that ran at the median rate in this job",
        saves_s=_saves(imp),
    )


def _romio(ctx: Context, imp: Impact | None, rec: str) -> Action:
    pairs = [("romio_cb_write", "enable")]
    if ctx.nodes:
        pairs.append(("cb_nodes", str(ctx.nodes)))
    return Action(
        recommendation=rec,
        command=_hints(pairs),
        where=_HINTS_WHERE,
        effect="collective buffering on for writes"
        + (f", one aggregator per node ({ctx.nodes} nodes)" if ctx.nodes else ""),
        saves_s=_saves(imp),
    )


def _rmw(ctx: Context, imp: Impact | None) -> Action:
    if ctx.profile.has("PNETCDF_FILE") or ctx.profile.has("PNETCDF_VAR"):
        command = _hints([("romio_ds_write", "disable")]) + "; and ncmpi_set_fill(ncid, NC_NOFILL, NULL) in the code"
    else:
        command = _hints([("romio_ds_write", "disable")])
    return Action(
        recommendation="avoid-read-modify-write",
        command=command,
        where=_HINTS_WHERE,
        effect="ROMIO stops reading each region before rewriting it (no data sieving for writes)",
        saves_s=_saves(imp),
    )


def _amplification(ctx: Context, imp: Impact | None) -> Action:
    if ctx.uses_hdf5:
        command = "H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);"
        where = "the HDF5 code, on each dataset creation property list before H5Dcreate"
        effect = "HDF5 stops writing fill values over the whole dataset before the data"
    elif ctx.profile.has("PNETCDF_FILE") or ctx.profile.has("PNETCDF_VAR"):
        command = "ncmpi_set_fill(ncid, NC_NOFILL, NULL);"
        where = "the PnetCDF code, after ncmpi_create"
        effect = "PnetCDF stops writing fill values before the data"
    else:
        command = _hints([("romio_ds_write", "disable")])
        where = _HINTS_WHERE
        effect = "ROMIO stops rewriting whole regions (data sieving) around the application's writes"
    return Action(
        recommendation="avoid-byte-amplification", command=command, where=where, effect=effect, saves_s=_saves(imp)
    )


def _alignment(ctx: Context, imp: Impact | None, rec: str) -> Action | None:
    from iodiag.analysis.checks.lustre import layouts

    stripes = [f.stripe_size for f in layouts(ctx) if f.stripe_size > 0]
    p = ctx.posix
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
    s = ctx.stdio
    if not len(s):
        return None
    ops = float(s["STDIO_WRITES"].sum() + s["STDIO_READS"].sum())
    moved = float(s["STDIO_BYTES_WRITTEN"].sum() + s["STDIO_BYTES_READ"].sum())
    if ops <= 0 or moved <= 0:
        return None
    mean = moved / ops
    size = _pow2_between(16 * mean, MiB, 64 * MiB)
    calls = max(int(moved // size), 1)
    return Action(
        recommendation="stdio-to-parallel-io",
        command=f"setvbuf(fp, NULL, _IOFBF, {size}); /* {_size_arg(size)} */",
        where="the C code, right after each fopen of a bulk-data file and before its first read or write "
        "(Fortran: the runtime's buffer size setting, e.g. GFORTRAN_UNFORMATTED_BUFFER_SIZE)",
        effect=f"{int(ops):,} calls of {human_bytes(int(mean))} on average reach the file system as about "
        f"{calls:,} {_size_arg(size)} requests; for shared files, moving the data to MPI-IO or HDF5 goes further",
        saves_s=_saves(imp),
    )


def _aggregate(ctx: Context, imp: Impact | None) -> Action | None:
    """Fewer, larger requests: through MPI-IO, a collective buffer of the stripe size (16 MiB when there is
    no stripe); without MPI-IO, the stream buffer."""
    if not len(ctx.mpiio):
        return _stdio_buffer(ctx, imp) if len(ctx.stdio) else None
    from iodiag.analysis.checks.lustre import layouts

    stripes = [f.stripe_size for f in layouts(ctx) if f.stripe_size > 0]
    buffer = max(max(stripes) if stripes else 0, 16 * MiB)
    pairs = [("romio_cb_write", "enable"), ("romio_cb_read", "enable"), ("cb_buffer_size", str(buffer))]
    return Action(
        recommendation="aggregate-small-requests",
        command=_hints(pairs),
        where=_HINTS_WHERE + "; the calls must be collective (MPI_File_write_all/_read_all) for this to act",
        effect=f"aggregators gather the ranks' small requests into {_size_arg(buffer)} file-system requests",
        saves_s=_saves(imp),
    )


def _collective(ctx: Context, imp: Impact | None) -> Action | None:
    """The collective form of the calls the job makes, in the interface it writes through."""
    m = ctx.mpiio
    if not len(m):
        return None
    indep = int(m["MPIIO_INDEP_WRITES"].sum() + m["MPIIO_INDEP_READS"].sum())
    if indep == 0:
        return None  # already collective: nothing to switch
    if ctx.uses_hdf5:
        command = "H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);"
        where = "the HDF5 code: a dataset transfer property list passed to every H5Dwrite/H5Dread"
    elif ctx.profile.has("PNETCDF_FILE") or ctx.profile.has("PNETCDF_VAR"):
        command = "ncmpi_put_vara_double_all(...) /* the _all form of each put/get, outside ncmpi_begin_indep_data */"
        where = "the PnetCDF code: every put/get call in independent data mode"
    else:
        command = "MPI_File_write_at_all(fh, offset, buf, count, type, &status); /* and MPI_File_read_at_all */"
        where = "the MPI-IO code: each MPI_File_write_at/read_at (or write/read) becomes its _all form"
    return Action(
        recommendation="mpiio-collective-io",
        command=command,
        where=where,
        effect=f"{indep:,} independent MPI-IO calls become collective: ROMIO merges the ranks' pieces into large "
        "contiguous requests from a few aggregators",
        saves_s=_saves(imp),
    )


def _hdf5_collective_metadata(ctx: Context, imp: Impact | None) -> Action | None:
    if not ctx.uses_hdf5:
        return None
    return Action(
        recommendation="hdf5-collective-metadata",
        command="H5Pset_all_coll_metadata_ops(fapl, 1); H5Pset_coll_metadata_write(fapl, 1);",
        where="the HDF5 code, on the file access property list before H5Fcreate/H5Fopen (HDF5 1.10 or later)",
        effect="one rank reads and writes HDF5 metadata and broadcasts it, instead of every rank issuing small "
        "metadata requests",
        saves_s=_saves(imp),
    )


def actions_for(
    ctx: Context, code: str, recs: list[str], files: list[FileEvidence], imp: Impact | None, slow_ost: int | None
) -> list[Action]:
    """The concrete actions for a finding's recommendations, in the recommendations' order."""
    rules: dict[str, Callable[[], Action | None]] = {
        "lustre-stripe-count": lambda: _stripe_count(ctx, files, imp),
        "lustre-stripe-size": lambda: _stripe_size(ctx, files, imp),
        "lustre-ost-health": lambda: _ost_health(ctx, files, imp, slow_ost),
        "romio-hints": lambda: _romio(ctx, imp, "romio-hints"),
        "mpiio-collective-wait": lambda: _romio(ctx, imp, "mpiio-collective-wait"),
        "avoid-read-modify-write": lambda: _rmw(ctx, imp),
        "avoid-byte-amplification": lambda: _amplification(ctx, imp),
        "hdf5-alignment": lambda: _alignment(ctx, imp, "hdf5-alignment") if ctx.uses_hdf5 else None,
        "gpfs-block-alignment": lambda: _alignment(ctx, imp, "gpfs-block-alignment"),
        "stdio-to-parallel-io": lambda: _stdio_buffer(ctx, imp),
        "aggregate-small-requests": lambda: _aggregate(ctx, imp),
        "mpiio-collective-io": lambda: _collective(ctx, imp),
        "hdf5-collective-metadata": lambda: _hdf5_collective_metadata(ctx, imp),
    }
    out: list[Action] = []
    for rec in recs:
        rule = rules.get(rec)
        if rule is None:
            continue
        try:
            action = rule()
        except (KeyError, ValueError, StopIteration):  # a fact the rule needs is missing: say less, not wrong
            action = None
        if action is not None and all(a.command != action.command for a in out):
            out.append(action)
    del code
    return out
