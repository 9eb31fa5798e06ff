"""The facts an answer may use: the report turned into short, numbered lines, log text quoted.

Every fact is one line, tied to a finding code (or to the job), with the raw values behind its numbers.
The composer picks facts for a question, the prompt shows them, the template route writes them out, and
the verifier accepts only what they (and the documents given) hold.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from iodiag.analysis.models import Finding, Metric, Report, Severity, Unit
from iodiag.analysis.registry import CHECKS
from iodiag.core.units import human_bytes, human_seconds
from iodiag.narration.checking.quantities import Dim, Quantity, exact
from iodiag.narration.checking.untrusted import clean, quote, quote_command
from iodiag.narration.prompts import Phrasebook
from iodiag.render import wording
from iodiag.render.code import split_report_text

FactKind = Literal[
    "verdict",
    "job",
    "data",
    "summary",
    "crosslayer",
    "finding",
    "evidence",
    "file",
    "ranks",
    "why",
    "fix",
    "absent",
    "answer",
]

# Modules that say which I/O library the application used, most specific first: fixes are worded for
# the highest-level library (an HDF5 user sets HDF5 properties, not ROMIO calls).
# A concrete command is ours, not log text, except the paths in it: long ones (a call with its arguments) are
# kept whole up to this length rather than cut in the middle like a path.
COMMAND_TEXT = 300
_LIBRARY_MODULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hdf5", ("H5F", "H5D")),
    ("pnetcdf", ("PNETCDF_FILE", "PNETCDF_VAR")),
    ("mpiio", ("MPI-IO",)),
    ("daos", ("DFS", "DAOS")),
    ("stdio", ("STDIO",)),
    ("posix", ("POSIX",)),
)
_FILE_SYSTEMS = ("lustre", "gpfs")
_LAYER_CONTEXT = {"STDIO": "stdio", "Lustre": "lustre", "HDF5": "hdf5", "PnetCDF": "pnetcdf", "MPI-IO": "mpiio"}
MAX_FILES_PER_FINDING = 5


@dataclass(frozen=True)
class Fact:
    id: str  # "verdict", "job", "P08", "P08:evidence", "P08:file:0", "P08:why", "P08:fix:align-file-requests"
    kind: FactKind
    text: str  # one line; log text in backticks
    code: str | None = None  # the finding it belongs to
    values: tuple[Quantity, ...] = ()  # the raw numbers behind the text
    files: tuple[str, ...] = ()  # raw paths it names
    ranks: tuple[int, ...] = ()
    rec: str | None = None  # recommendation id, for fix facts

    @property
    def line(self) -> str:
        """How the fact appears in a prompt: a finding's code in brackets (what the model cites), then the text."""
        return f"[{self.code}] {self.text}" if self.code else f"- {self.text}"


@dataclass(frozen=True)
class UserContext:
    """What the fixes depend on: the I/O libraries, the file systems and the facility of this job."""

    libraries: tuple[str, ...]
    file_systems: tuple[str, ...]
    facility: str | None = None
    system: str | None = None
    single: bool = False  # no MPI communicator to coordinate through (one process, or a data loader)

    def fix_contexts(self, finding: Finding) -> list[str]:
        """Variant order for a finding's fix: the job's kind (no MPI to lean on), the finding's own layer, then
        libraries, then file systems."""
        order: list[str] = ["single"] if self.single else []
        layer = _LAYER_CONTEXT.get(finding.layer.value)
        if layer == "lustre" and "lustre" not in self.file_systems:
            layer = None
        # A cross-layer check is filed under one library (X06 under HDF5) but fires for PnetCDF jobs too: a
        # library the job does not use must not pick the variant.
        if layer in ("hdf5", "pnetcdf") and layer not in self.libraries:
            layer = None
        if layer:
            order.append(layer)
        order += [x for x in self.libraries if x not in ("posix", "stdio")]
        order += list(self.file_systems)
        # Below the libraries: a POSIX-level finding is about POSIX calls; STDIO findings named their layer above.
        order += [x for x in ("posix", "stdio") if x in self.libraries]
        return list(dict.fromkeys(order))


def user_context(report: Report, phrases: Phrasebook) -> UserContext:
    used = {m.name for m in report.job.modules if m.loaded and m.records > 0}
    libs = tuple(lib for lib, mods in _LIBRARY_MODULES if used & set(mods))
    fs = tuple(f for f in _FILE_SYSTEMS if report.job.file_systems.get(f, 0) > 0)
    if "LUSTRE" in used and "lustre" not in fs:
        fs = ("lustre", *fs)
    if report.file_system:
        # The file system that carried the job's data decides the advice; others only follow it.
        fs = (report.file_system, *(f for f in fs if f != report.file_system))
    facility = system = None
    for path in all_paths(report):
        for fp in phrases.facility_paths:
            if path.startswith(fp.prefix):
                facility, system = fp.facility, fp.system
                break
        if facility:
            break
    single = report.workload.value in ("single-process", "data-loader")
    return UserContext(libs, fs, facility, system, single)


def with_code(text: str, report: Report, limit: int) -> str:
    """Report prose (the verdict, a caveat) cleaned, ``limit`` long, with its code spans kept as code: the
    commands in it exact (``quote_command``), not cleaned into 'quotes' that a path's own quotes break."""
    out: list[str] = []
    for is_code, t in split_report_text(text, report):
        if is_code:
            out.append(quote_command(t, COMMAND_TEXT))
            continue
        c = clean(t, limit)
        # clean() trims; the spaces around a span are the sentence's.
        out.append((" " if c and t[:1].isspace() else "") + c + (" " if c and t[-1:].isspace() else ""))
    return "".join(out).strip()


def all_paths(report: Report) -> list[str]:
    """Every file path the report names (findings first, then the cross-layer summary)."""
    paths = [fe.path for f in report.findings for fe in f.files]
    if report.cross_layer is not None:
        paths += [x.path for x in report.cross_layer.files]
    return list(dict.fromkeys(paths))


def quote_paths(text: str, paths: Iterable[str]) -> str:
    """``text`` with each known path in backticks and the rest cleaned: a finding message names files."""
    known = sorted({p for p in paths if p}, key=len, reverse=True)
    out: list[str] = []
    rest = text
    while rest:
        hits = [(rest.find(p), p) for p in known if p in rest]
        if not hits:
            out.append(clean(rest, limit=10_000))
            break
        at, p = min(hits, key=lambda h: (h[0], -len(h[1])))
        out.append(clean(rest[:at], limit=10_000))
        out.append(quote(p))
        rest = rest[at + len(p) :]
    return " ".join(s for s in out if s)


def _metric_quantity(m: Metric) -> Quantity | None:
    if isinstance(m.value, (str, bool)):
        return None
    v = float(m.value)
    dims: dict[Unit, tuple[Dim, float]] = {
        Unit.BYTES: ("bytes", 1.0),
        Unit.SECONDS: ("seconds", 1.0),
        Unit.BYTES_PER_SECOND: ("rate", 1.0),
        Unit.COUNT: ("bare", 1.0),
    }
    if m.unit is Unit.RATIO:
        return exact(v, "times") if "times" in m.name else exact(v * 100, "percent")
    if m.unit in dims:
        dim, mult = dims[m.unit]
        return exact(v * mult, dim)
    return None


def _metrics_text(metrics: Sequence[Metric]) -> str:
    return "; ".join(f"{label} {value}" for label, value in map(wording.format_metric, metrics))


def _values(metrics: Sequence[Metric]) -> tuple[Quantity, ...]:
    return tuple(q for q in map(_metric_quantity, metrics) if q is not None)


def rank_findings(report: Report) -> list[Finding]:
    """Findings by impact: the verdict's causes first, in the verdict's order (the headline and every list
    under it name the same first cause: a root before the symptom it explains, even a costlier one), then
    problems (critical, then warning) before context (info) and praise (ok).

    The I/O-share findings (J01/J02) are the verdict, told first on their own, so they are left out here.
    """
    pool = [f for f in report.findings if f.code not in ("J01", "J02")]
    place = {c.code: i for i, c in enumerate(report.verdict.causes)}
    # A finding of a cause's family is the same lost time seen by another check (the verdict names a family
    # once): it follows that cause
    by_family = {_family(c.code): i for i, c in reversed(list(enumerate(report.verdict.causes)))}

    def cost(f: Finding) -> float:
        return f.impact.seconds if f.impact is not None and f.impact.seconds is not None else -1.0

    def key(f: Finding) -> tuple[int, int, int, float, str]:
        if f.code in place:
            return (place[f.code], 0, f.severity.rank, -cost(f), f.code)
        kin = by_family.get(_family(f.code)) if f.severity in (Severity.CRITICAL, Severity.WARNING) else None
        return (len(place), 0, f.severity.rank, -cost(f), f.code) if kin is None else (kin, 1, 0, -cost(f), f.code)

    return sorted(pool, key=key)


def _family(code: str) -> str:
    spec = CHECKS.get(code)
    return spec.family if spec is not None and spec.family else code


def problems(report: Report) -> list[Finding]:
    return [f for f in rank_findings(report) if f.severity in (Severity.CRITICAL, Severity.WARNING)]


@dataclass
class FactSheet:
    """All facts of one report, by id, in the order the report gives them."""

    report: Report
    context: UserContext
    facts: dict[str, Fact] = field(default_factory=dict)

    def add(self, fact: Fact) -> None:
        self.facts[fact.id] = fact

    def get(self, fact_id: str) -> Fact | None:
        return self.facts.get(fact_id)

    def job_facts(self) -> list[Fact]:
        return [f for f in self.facts.values() if f.code is None]

    def for_code(self, code: str, kinds: Iterable[FactKind] | None = None) -> list[Fact]:
        want = set(kinds) if kinds is not None else None
        return [f for f in self.facts.values() if f.code == code and (want is None or f.kind in want)]


def build_facts(report: Report, phrases: Phrasebook) -> FactSheet:
    ctx = user_context(report, phrases)
    sheet = FactSheet(report, ctx)
    paths = all_paths(report)
    v = wording.verdict(report)
    share = report.io_share
    verdict_values: tuple[Quantity, ...] = ()
    if share is not None:
        verdict_values = (
            exact(share.share_slowest * 100, "percent"),
            exact(share.share_mean * 100, "percent"),
            exact(share.slowest_rank_io_s, "seconds"),
            exact(share.mean_rank_io_s, "seconds"),
            exact(share.runtime_s, "seconds"),
        )
    for cause in report.verdict.causes:
        verdict_values += (exact(cause.seconds, "seconds"), exact(cause.share_of_runtime * 100, "percent"))
    line = with_code(v.line, report, 1000)
    sheet.add(Fact("verdict", "verdict", line if line.endswith(".") else line + ".", values=verdict_values))
    if report.verdict.caveats:  # what limits the numbers above ("this format stores whole seconds")
        sheet.add(Fact("caveats", "verdict", " ".join(with_code(c, report, 400) for c in report.verdict.caveats[:3])))
    if len(report.verdict.causes) > 1:
        causes = "; ".join(wording.cause_lines(report))
        sheet.add(
            Fact(
                "causes",
                "verdict",
                f"Causes by the run time they cost: {causes}.",
                values=verdict_values,
            )
        )
    _top_file_facts(sheet, report, phrases)
    _layout_facts(sheet, report, phrases)
    _ost_facts(sheet, report, phrases)
    j = report.job
    ranks = f"{j.nprocs:,} rank{'s' if j.nprocs != 1 else ''}"
    if j.nodes:
        ranks += f" on {j.nodes:,} node{'s' if j.nodes != 1 else ''}"
    sheet.add(
        Fact(
            "job",
            "job",
            phrases.sentence(
                "job_line",
                jobid=j.jobid,
                exe=quote(j.exe or "(unknown)"),
                ranks=ranks,
                runtime=wording.runtime_text(report),
            ),
            values=(exact(j.nprocs, "bare"), exact(j.runtime_s, "seconds")),
        )
    )
    data = wording.data_text(report)
    io_time = wording.io_time_text(report)
    if data and share is not None:
        text = f"The application wrote and read: {data}; I/O time: {io_time}."
        slow = (share.slowest_rank,) if share.slowest_rank is not None else ()
        sheet.add(
            Fact(
                "data",
                "data",
                text,
                values=(
                    exact(share.bytes_written, "bytes"),
                    exact(share.bytes_read, "bytes"),
                    exact(share.read_s, "seconds"),
                    exact(share.write_s, "seconds"),
                    exact(share.meta_s, "seconds"),
                ),
                ranks=slow,
            )
        )
    sheet.add(
        Fact(
            "files",
            "job",
            f"The job used {wording.files_text(report)} files; I/O modules: {wording.modules_text(report)}.",
        )
    )
    if ctx.facility and ctx.system:
        sheet.add(Fact("facility", "job", phrases.sentence("facility_job", system=ctx.system, facility=ctx.facility)))
    codes = ", ".join(f.code for f in report.findings) or "none"
    sheet.add(
        Fact(
            "summary",
            "summary",
            f"The report has {len(report.findings)} finding(s) ({wording.counts_line(report)}): {codes}.",
        )
    )
    if report.cross_layer is not None and report.cross_layer.summary_text:
        sheet.add(Fact("crosslayer", "crosslayer", quote_paths(report.cross_layer.summary_text, paths)))
    for f in report.findings:
        _finding_facts(sheet, f, phrases, paths)
    return sheet


def _finding_facts(sheet: FactSheet, f: Finding, phrases: Phrasebook, paths: list[str]) -> None:
    sev = f.severity.value
    named = [fe.path for fe in f.files]
    cost = wording.cost_text(f)
    cost_values: tuple[Quantity, ...] = ()
    if f.impact is not None and f.impact.seconds is not None:
        cost_values = (exact(f.impact.seconds, "seconds"),)
        if f.impact.share_of_runtime is not None:
            cost_values += (exact(f.impact.share_of_runtime * 100, "percent"),)
    sheet.add(
        Fact(
            f.code,
            "finding",
            f"{f.title} ({sev}, {f.layer.value}"
            + (f"; {cost}" if cost and f.impact is not None and f.impact.seconds is not None else "")
            + f"): {quote_paths(f.message, [*named, *paths])}",
            code=f.code,
            values=(*_values(f.evidence), *cost_values),
            files=tuple(named),
            ranks=tuple(f.ranks),
        )
    )
    if f.evidence:
        sheet.add(
            Fact(
                f"{f.code}:evidence",
                "evidence",
                f"Evidence for {f.code}: {_metrics_text(f.evidence)}.",
                code=f.code,
                values=_values(f.evidence),
            )
        )
    for i, fe in enumerate(f.files[:MAX_FILES_PER_FINDING]):
        metrics = _metrics_text(fe.metrics)
        sheet.add(
            Fact(
                f"{f.code}:file:{i}",
                "file",
                f"{f.code} names the file {quote(fe.path)}" + (f": {metrics}." if metrics else "."),
                code=f.code,
                values=_values(fe.metrics),
                files=(fe.path,),
            )
        )
    more = max(f.files_total - min(len(f.files), MAX_FILES_PER_FINDING), 0)
    if more:
        sheet.add(
            Fact(
                f"{f.code}:files-more",
                "file",
                f"{f.code} names {more:,} more file(s) than these.",
                code=f.code,
                values=(exact(more, "bare"), exact(f.files_total, "bare")),
            )
        )
    if f.ranks:
        sheet.add(
            Fact(
                f"{f.code}:ranks",
                "ranks",
                f"Ranks named by {f.code}: {wording.ranks_text(f.ranks)}.",
                code=f.code,
                ranks=tuple(f.ranks),
            )
        )
    for i, a in enumerate(f.actions):
        # This job's concrete setting: the command is log-derived text (paths), so it is quoted.
        sheet.add(
            Fact(
                f"{f.code}:action:{i}",
                "fix",
                f"For this job ({wording.recommendation_title(a.recommendation)}): "
                f"{quote_command(a.command, COMMAND_TEXT)}; "
                f"{clean(a.effect, 400)}. Where: {clean(a.where, 300)}.",
                code=f.code,
                rec=a.recommendation,
                files=tuple(fe.path for fe in f.files[:1]),
            )
        )
    why = phrases.why.get(f.code)
    if why:
        sheet.add(Fact(f"{f.code}:why", "why", f"Why {f.code} matters: {why}", code=f.code))
    ctx_order = sheet.context.fix_contexts(f)
    for rec in f.recommendations:
        fix = phrases.fixes.get(rec)
        if fix is None:
            continue
        title = wording.recommendation_title(rec)
        sheet.add(
            Fact(
                f"{f.code}:fix:{rec}",
                "fix",
                f"To fix {f.code} ({title}): {fix.pick(ctx_order)}",
                code=f.code,
                rec=rec,
            )
        )


TOP_FILE_FACTS = 3
MINOR_FILE_SHARE = 0.01


def _ost_ids(report: Report, path: str) -> str:
    """ " (OST 3)", " (OSTs 4, 5, 6)": which OSTs a file sits on, where the report lists it with its layout."""
    osts = next((f.osts for f in report.top_files if f.path == path and f.osts), [])
    if not osts or len(osts) > 8:
        return ""
    return f" ({'OST' if len(osts) == 1 else 'OSTs'} {', '.join(str(o) for o in osts)})"


def _layout_facts(sheet: FactSheet, report: Report, phrases: Phrasebook) -> None:
    """Each assessed Lustre file's layout against its size, writers and requests: what "what stripe count
    should I use?" needs when no Lustre finding fired."""
    for i, lay in enumerate(report.lustre_layouts):
        who = (
            f"{lay.writers:,} writing rank{'s' if lay.writers != 1 else ''}"
            if lay.writers
            else f"{lay.readers:,} reading rank{'s' if lay.readers != 1 else ''}"
            if lay.readers
            else "no rank moving data"
        )
        common = f", most requests {human_bytes(lay.common_request)}" if lay.common_request else ""
        head = phrases.sentence(
            "layout_now",
            path=quote(lay.path),
            moved=human_bytes(lay.bytes_moved),
            who=who,
            count=f"{lay.stripe_count:,}",
            osts=("OST" if lay.stripe_count == 1 else "OSTs") + _ost_ids(report, lay.path),
            size=human_bytes(lay.stripe_size),
            common=common,
        )
        tail = (
            phrases.sentence("layout_fits")
            if lay.fits or lay.command is None
            else phrases.sentence(
                "layout_change",
                count=f"{lay.suggested_count:,}",
                size=human_bytes(lay.suggested_size),
                command=quote_command(lay.command, COMMAND_TEXT),
            )
        )
        values = [
            exact(lay.bytes_moved, "bytes"),
            exact(lay.writers, "bare"),
            exact(lay.readers, "bare"),
            exact(lay.stripe_count, "bare"),
            exact(lay.stripe_size, "bytes"),
            exact(lay.suggested_count, "bare"),
            exact(lay.suggested_size, "bytes"),
        ]
        if lay.common_request:
            values.append(exact(lay.common_request, "bytes"))
        values += [exact(o, "bare") for f in report.top_files if f.path == lay.path for o in f.osts[:8]]
        sheet.add(Fact(f"layout:{i}", "file", f"{head} {tail}", values=tuple(values), files=(lay.path,)))


def _ost_facts(sheet: FactSheet, report: Report, phrases: Phrasebook) -> None:
    """The busiest OSTs against the median one: what "which OST is slowest?" needs."""
    if not report.osts:
        return
    median = statistics.median(o.io_time_s for o in report.osts)
    top = report.osts[0]
    rest = "; ".join(f"OST {o.ost} {human_seconds(o.io_time_s)}" for o in report.osts[1:3])
    text = phrases.sentence(
        "busiest_ost",
        ost=top.ost,
        io_time=human_seconds(top.io_time_s),
        moved=human_bytes(top.bytes),
        files=f"{top.files:,}",
        n=len(report.osts),
        median=human_seconds(median),
        rest=f" Next: {rest}." if rest else "",
    )
    values = [exact(top.ost, "bare"), exact(top.io_time_s, "seconds"), exact(top.bytes, "bytes")]
    values += [exact(top.files, "bare"), exact(len(report.osts), "bare"), exact(median, "seconds")]
    for o in report.osts[1:3]:
        values += [exact(o.ost, "bare"), exact(o.io_time_s, "seconds")]
    sheet.add(Fact("ost:top", "file", text, values=tuple(values)))


def _top_file_facts(sheet: FactSheet, report: Report, phrases: Phrasebook) -> None:
    """The files with the most I/O time (the report's ``top_files``): what "which file is worst?" needs."""
    for i, fu in enumerate(report.top_files[:TOP_FILE_FACTS]):
        if i and fu.share_of_io < MINOR_FILE_SHARE:
            break  # a file with a sliver of the time is not an answer to "which file?"
        who = f"{fu.ranks:,} rank{'s' if fu.ranks != 1 else ''}"
        text = phrases.sentence(
            "top_file" if i == 0 else "top_file_next",
            path=quote(fu.path),
            io_time=human_seconds(fu.io_time_s),
            ranks=who,
            share=wording.percent(fu.share_of_io),
            read=human_bytes(fu.bytes_read),
            written=human_bytes(fu.bytes_written),
            layer=fu.layer,
        )
        sheet.add(Fact(f"topfile:{i}", "file", text, files=(fu.path,)))
