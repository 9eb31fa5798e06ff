"""Is the log complete enough to trust? Partial modules, unreadable modules, empty logs."""

from __future__ import annotations

from iodiag.analysis.models import Layer, Metric, Severity, Unit
from iodiag.analysis.registry import Hit, Kind, check
from iodiag.analysis.views.context import Context
from iodiag.core.thresholds import Thresholds
from iodiag.core.units import human_bytes

_WHAT_IS_MISSING = {
    "DXT_POSIX": "the POSIX trace buffer filled up, so later POSIX operations are missing from the trace",
    "DXT_MPIIO": "the MPI-IO trace buffer filled up, so later MPI-IO operations are missing from the trace",
    "HEATMAP": "the heatmap ran out of memory, so its time bins are incomplete",
}


@check(
    "D01",
    title="Partial data in the log",
    layer=Layer.JOB,
    severity=Severity.WARNING,
    recommendations=("darshan-memory",),
    kind=Kind.QUALITY,
)
def partial_modules(ctx: Context, t: Thresholds) -> list[Hit]:
    hits = []
    for info in ctx.profile.modules.values():
        if not info.partial:
            continue
        missing = _WHAT_IS_MISSING.get(
            info.name,
            f"Darshan ran out of record memory, so some files accessed through {info.name} were not recorded "
            f"and its totals are too low",
        )
        hits.append(
            Hit(
                message=f"Module {info.name} is partial: {missing}. Findings from it are lower bounds.",
                evidence=[
                    Metric(name="module", value=info.name, unit=Unit.TEXT),
                    Metric(name="records_read", value=info.records, unit=Unit.COUNT),
                ],
            )
        )
    return hits


@check(
    "D02",
    title="Part of the log could not be read",
    layer=Layer.JOB,
    severity=Severity.CRITICAL,
    recommendations=("read-darshan-logs",),
    kind=Kind.QUALITY,
)
def unreadable(ctx: Context, t: Thresholds) -> list[Hit]:
    hits = [
        Hit(
            message=f"Module {info.name} could not be read ({info.read_error}); "
            f"{info.records:,} records were recovered. Findings that need it are missing or incomplete.",
            evidence=[
                Metric(name="module", value=info.name, unit=Unit.TEXT),
                Metric(name="records_recovered", value=info.records, unit=Unit.COUNT),
            ],
        )
        for info in ctx.profile.modules.values()
        if info.read_error
    ]
    hits.extend(Hit(message=f"The log is damaged: {p}.") for p in ctx.profile.problems)
    return hits


@check(
    "D03",
    title="No I/O was recorded",
    layer=Layer.JOB,
    severity=Severity.INFO,
    recommendations=("darshan-instrumentation",),
    kind=Kind.QUALITY,
)
def empty_log(ctx: Context, t: Thresholds) -> Hit | None:
    if any(info.loaded and info.records for info in ctx.profile.modules.values()):
        return None
    if any(info.read_error for info in ctx.profile.modules.values()):
        return None
    return Hit(
        message="The log holds job information but no I/O records: either the job did no I/O that Darshan "
        "instruments, or instrumentation was disabled. Nothing here can explain a slow run.",
        evidence=[Metric(name="modules", value=len(ctx.profile.modules), unit=Unit.COUNT)],
    )


@check(
    "D04",
    title="Corrupt records left out",
    layer=Layer.JOB,
    severity=Severity.WARNING,
    recommendations=("read-darshan-logs",),
    kind=Kind.QUALITY,
)
def corrupt_records(ctx: Context, t: Thresholds) -> list[Hit]:
    """Records no valid run could write (``ingest.integrity``): left out of every number, counted here."""
    hits = []
    for info in ctx.profile.modules.values():
        if not info.corrupt_records:
            continue
        total = info.records + info.corrupt_records
        most = info.corrupt_records * 2 > total
        unnamed = ""
        if info.unnamed_bytes_read or info.unnamed_bytes_written:
            # What a reader of the named records does not see: say it, so a total is never silently half
            unnamed = (
                f"The {info.unnamed_records:,} record(s) without a file name count "
                f"{human_bytes(info.unnamed_bytes_written)} written and {human_bytes(info.unnamed_bytes_read)} read, "
                "not in any total. "
            )
        hits.append(
            Hit(
                message=f"{info.corrupt_note}. {unnamed}"
                + (
                    "Most of the module is damaged: its totals cover only the records that survived, so the "
                    "findings from it are lower bounds."
                    if most
                    else "The numbers in this report come from the records that passed."
                ),
                evidence=[
                    Metric(name="module", value=info.name, unit=Unit.TEXT),
                    Metric(name="corrupt_records", value=info.corrupt_records, unit=Unit.COUNT),
                    Metric(name="records_kept", value=info.records, unit=Unit.COUNT),
                    *(
                        [
                            Metric(name="unnamed_records", value=info.unnamed_records, unit=Unit.COUNT),
                            Metric(name="unnamed_bytes_read", value=info.unnamed_bytes_read, unit=Unit.BYTES),
                            Metric(name="unnamed_bytes_written", value=info.unnamed_bytes_written, unit=Unit.BYTES),
                        ]
                        if info.unnamed_records
                        else []
                    ),
                ],
            )
        )
    return hits
