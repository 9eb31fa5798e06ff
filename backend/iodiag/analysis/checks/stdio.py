"""STDIO interface checks."""

from __future__ import annotations

from iodiag.analysis.context import Context, pct
from iodiag.analysis.models import Layer, Metric, Severity, Unit
from iodiag.analysis.registry import Hit, check
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes


@check(
    "S01",
    title="Bulk data goes through STDIO",
    layer=Layer.STDIO,
    severity=Severity.CRITICAL,
    requires=("STDIO",),
    recommendations=("stdio-to-parallel-io",),
    origin="drishti",
)
def stdio_share(ctx: Context, t: Thresholds) -> Hit | None:
    s = ctx.stdio
    stdio = int(s["STDIO_BYTES_READ"].sum() + s["STDIO_BYTES_WRITTEN"].sum())
    posix = mpiio = 0
    if len(ctx.posix):
        posix = int(ctx.posix["POSIX_BYTES_READ"].sum() + ctx.posix["POSIX_BYTES_WRITTEN"].sum())
    if len(ctx.mpiio):
        mpiio = int(ctx.mpiio["MPIIO_BYTES_READ"].sum() + ctx.mpiio["MPIIO_BYTES_WRITTEN"].sum())
    # POSIX counts the bytes MPI-IO moved on its behalf; count them once.
    if posix > 0 and posix >= mpiio:
        posix -= mpiio
    total = stdio + posix + mpiio
    if not total or stdio / total <= t.interface_stdio:
        return None
    share = stdio / total
    per_file = (s["STDIO_BYTES_READ"] + s["STDIO_BYTES_WRITTEN"]).groupby(s["id"]).sum()
    files, n = ctx.top_files(per_file, "stdio_bytes", Unit.BYTES)
    return Hit(
        message=f"{pct(share)} of the job's data ({human_bytes(stdio)}) moves through STDIO "
        f"(fread/fwrite/fprintf), a buffered, serial interface.",
        evidence=[
            Metric(name="stdio_bytes", value=stdio, unit=Unit.BYTES),
            Metric(name="total_bytes", value=total, unit=Unit.BYTES),
            Metric(name="stdio_share", value=share, unit=Unit.RATIO),
        ],
        files=files,
        files_total=n,
    )
