"""The one registry of recommendation ids. Findings point here; knowledge documents explain each id.

Ids are stable: documents, evals and stored analyses refer to them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Recommendation(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    summary: str
    file_systems: tuple[str, ...] = ()
    """File systems the advice fits (Darshan mount types: lustre, gpfs, nfs, daos, ...); empty: any."""


_ALL = [
    Recommendation(
        id="stdio-to-parallel-io",
        title="Move bulk data off STDIO",
        summary="Write and read bulk data through MPI-IO, HDF5 or PnetCDF instead of fread/fwrite/fprintf.",
    ),
    Recommendation(
        id="stdio-larger-buffer",
        title="Give each bulk STDIO stream a larger buffer",
        summary="Call setvbuf right after fopen with a buffer of 1 MiB or more, so many small fread/fwrite calls "
        "reach the file system as a few large requests.",
    ),
    Recommendation(
        id="use-parallel-io-library",
        title="Use a parallel I/O interface",
        summary="MPI-IO (or HDF5/PnetCDF on top of it) lets ranks coordinate their I/O and aggregate requests.",
    ),
    Recommendation(
        id="aggregate-small-requests",
        title="Aggregate small requests",
        summary="Buffer many small requests into fewer large ones (1 MiB or more), in the application or "
        "with collective I/O.",
    ),
    Recommendation(
        id="mpiio-collective-io",
        title="Use collective MPI-IO calls",
        summary="Replace independent calls (MPI_File_write_at, MPI_File_read_at) with collective ones "
        "(MPI_File_write_at_all, MPI_File_read_at_all) so "
        "ROMIO can aggregate requests through a few aggregator ranks.",
    ),
    Recommendation(
        id="romio-hints",
        title="Tune ROMIO hints",
        summary="Set collective buffering and data sieving hints (romio_cb_write, cb_nodes, cb_buffer_size, "
        "striping_factor) through MPI_Info, a ROMIO_HINTS file or MPICH_MPIIO_HINTS.",
    ),
    Recommendation(
        id="mpiio-spread-aggregators",
        title="Spread collective I/O over more aggregators",
        summary="Collective buffering sent every byte through one rank or a few: drop a small cb_nodes (or few-host "
        "cb_config_list) hint and set cb_nodes to one aggregator per node, up to the file's stripe count.",
    ),
    Recommendation(
        id="mpiio-aggregators-per-node",
        title="One MPI-IO aggregator per node",
        summary="Set cb_nodes to the number of compute nodes so aggregation does not cross the network twice.",
    ),
    Recommendation(
        id="mpiio-nonblocking",
        title="Overlap I/O with computation",
        summary="Use non-blocking MPI-IO (MPI_File_iwrite_at, split collectives) or an asynchronous library to "
        "hide I/O time behind computation.",
    ),
    Recommendation(
        id="hdf5-async-vol",
        title="HDF5 asynchronous I/O",
        summary="The HDF5 async VOL connector runs dataset reads and writes in a background thread.",
    ),
    Recommendation(
        id="hdf5-alignment",
        title="Align HDF5 objects",
        summary="H5Pset_alignment places datasets on file-system block or stripe boundaries.",
    ),
    Recommendation(
        id="hdf5-collective-metadata",
        title="HDF5 collective metadata",
        summary="H5Pset_all_coll_metadata_ops and H5Pset_coll_metadata_write make metadata I/O collective "
        "instead of every rank touching it.",
    ),
    Recommendation(
        id="hdf5-metadata-cache",
        title="HDF5 metadata cache",
        summary="Enlarge the metadata cache and defer flushes so metadata is written in few large operations.",
    ),
    Recommendation(
        id="align-file-requests",
        title="Align file requests",
        summary="Start requests at multiples of the file-system block or stripe size and use sizes that are "
        "multiples of it.",
    ),
    Recommendation(
        id="align-memory-buffers",
        title="Align memory buffers",
        summary="Allocate I/O buffers with posix_memalign (page or block aligned) so the kernel avoids copies.",
    ),
    Recommendation(
        id="avoid-redundant-io",
        title="Avoid redundant transfers",
        summary="Read each byte once (cache or broadcast it) and write each region once.",
    ),
    Recommendation(
        id="sequential-access",
        title="Make access sequential",
        summary="Sort or batch requests by offset, or let collective I/O and data sieving reorder them.",
    ),
    Recommendation(
        id="stage-software-environment",
        title="Load the software environment once per node",
        summary="Ship the software environment as a container image or a squashfs/conda-pack archive unpacked to "
        "node-local storage (Spindle for shared libraries), so imports stop sending every rank's opens and stats to "
        "the shared file system's metadata servers.",
    ),
    Recommendation(
        id="reduce-metadata",
        title="Reduce metadata operations: fewer, combined files",
        summary="Open, stat and close files less often; combine many small files; cache metadata results.",
    ),
    Recommendation(
        id="balance-rank-io",
        title="Balance I/O across ranks",
        summary="Give ranks similar amounts of data, or use collective I/O so aggregators even out the load.",
    ),
    Recommendation(
        id="lustre-stripe-count",
        title="Stripe shared files over more OSTs",
        summary="lfs setstripe -c sets how many OSTs a new file spans; shared files written by many ranks need "
        "more than one.",
        file_systems=("lustre",),
    ),
    Recommendation(
        id="lustre-stripe-size",
        title="Match the stripe size to the requests",
        summary="lfs setstripe -S sets the stripe size; make it a divisor or multiple of the common request size.",
        file_systems=("lustre",),
    ),
    Recommendation(
        id="lustre-ost-health",
        title="Report a slow or overloaded OST",
        summary="Report the slow OST to the facility's storage team or user support (lfs df -h shows its state); a "
        "file striped over several OSTs can name healthy ones, but never pin a directory's new files to one OST.",
        file_systems=("lustre",),
    ),
    Recommendation(
        id="gpfs-block-alignment",
        title="Align requests to the GPFS block size",
        summary="GPFS (Spectrum Scale) locks and allocates whole blocks (often 8-16 MiB): make each rank's "
        "requests multiples of the block size at block-aligned offsets (mmlsfs DEVICE -B shows it), and for "
        "shared files let collective MPI-IO align its file domains (ROMIO hint striping_unit = block size).",
        file_systems=("gpfs",),
    ),
    Recommendation(
        id="daos-chunk-size",
        title="Size DAOS chunks and object classes for the requests",
        summary="DFS stores a file as an array striped in chunks (1 MiB by default): set a chunk size that is a "
        "multiple of the request size and a wider object class for shared files "
        "(daos container create --chunk-size 8M --file-oclass SX, or dfs_open's chunk size).",
        file_systems=("daos",),
    ),
    Recommendation(
        id="use-scratch-file-system",
        title="Move job I/O to the parallel scratch file system",
        summary="NFS and home directories serialize writes from many processes: write job data to the "
        "site's parallel scratch file system and copy results back at the end.",
        file_systems=("nfs",),
    ),
    Recommendation(
        id="mpiio-collective-wait",
        title="Shorten the wait inside collective MPI-IO",
        summary="Time inside MPI-IO above the POSIX calls beneath it is ranks waiting for each other or for "
        "the aggregators: balance the work before the collective call (one late rank holds every other "
        "rank in it), and where fewer aggregators than nodes did the writing, give it more (cb_nodes = "
        "nodes, or a stripe count of at least the node count on Lustre).",
    ),
    Recommendation(
        id="avoid-read-modify-write",
        title="Avoid read-modify-write beneath MPI-IO",
        summary="ROMIO reads a region before writing holes in it (data sieving) and rewrites what it read: "
        "disable data sieving for writes (romio_ds_write=disable), write whole, non-overlapping, "
        "aligned regions, and with PnetCDF switch off fill mode (ncmpi_set_fill(ncid, NC_NOFILL, ...)).",
    ),
    Recommendation(
        id="avoid-byte-amplification",
        title="Stop writing the same bytes twice",
        summary="More bytes reach MPI-IO or POSIX than the application wrote through HDF5/PnetCDF: switch off "
        "fill values (H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER)), write whole chunks, and avoid data "
        "sieving rewrites (romio_ds_write=disable).",
    ),
    Recommendation(
        id="avoid-shared-file-locks",
        title="Avoid lock contention on shared files",
        summary="Ranks writing interleaved, unaligned pieces of one shared file fight over file-system locks: "
        "use collective MPI-IO so aggregators write whole stripe- or block-aligned regions, or write one "
        "file per process (or per node).",
    ),
    Recommendation(
        id="darshan-memory",
        title="Give Darshan more memory",
        summary="Raise DARSHAN_MODMEM (records) or the DXT trace buffer so the log is complete.",
    ),
    Recommendation(
        id="darshan-instrumentation",
        title="Check Darshan instrumentation",
        summary="Confirm the job was linked or preloaded with Darshan and that the modules you need are enabled.",
    ),
    Recommendation(
        id="io-not-bottleneck",
        title="Look beyond I/O",
        summary="I/O is a small share of the run time: profile computation and communication instead.",
    ),
    Recommendation(
        id="read-darshan-logs",
        title="Re-collect a readable log",
        summary="The log is damaged; re-run with Darshan or fetch an intact copy of the log.",
    ),
]

RECOMMENDATIONS: dict[str, Recommendation] = {r.id: r for r in _ALL}
