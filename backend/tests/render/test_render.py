"""Renderers on real reports: text, Markdown, HTML, JSON, and the checked-in JSON Schema."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import TypeAdapter

from iodiag.analysis import analyze
from iodiag.analysis.models import FileEvidence, Report, Unit
from iodiag.core.thresholds import Thresholds
from iodiag.ingest import load_profile
from iodiag.render import EXTENSIONS, FORMATS, render, render_many, report_schema
from iodiag.render import wording as common
from iodiag.render.html import render_html, render_html_many
from iodiag.render.markdown import md_code, md_para, md_text, render_markdown, render_markdown_many
from iodiag.render.text import render_text, render_text_many
from tests.conftest import REPO, shared_log

DRISHTI = "drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan"
E3SM = "darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan"
RELEASE_310 = "darshan-logs/release_logs/mpi-io-test-x86_64-3.1.0.darshan"
RELEASE_312 = "darshan-logs/release_logs/mpi-io-test-x86_64-3.1.2.darshan"
EMPTY = "darshan-logs/empty_log/empty_log.darshan"
PARTIAL = "darshan-logs/partial_data_dxt/partial_data_dxt.darshan"

MALICIOUS = "<img src=x onerror=alert(1)>"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _report(rel: str, thresholds: Thresholds | None = None) -> Report:
    return analyze(load_profile(str(shared_log(rel))), thresholds)


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    return {name: _report(name) for name in (DRISHTI, E3SM, RELEASE_310, RELEASE_312, EMPTY, PARTIAL)}


def _malicious(report: Report) -> Report:
    """The report with every log-derived string replaced by an HTML/Markdown injection attempt."""
    job = report.job.model_copy(
        update={"exe": MALICIOUS, "hints": {MALICIOUS: MALICIOUS}, "darshan_version": MALICIOUS}
    )
    findings = []
    for f in report.findings:
        files = [fe.model_copy(update={"path": f"/scratch/{MALICIOUS}/out.h5"}) for fe in f.files] or [
            FileEvidence(path=MALICIOUS, record_id="1")
        ]
        findings.append(f.model_copy(update={"message": f"{MALICIOUS} {f.message}", "files": files}))
    return report.model_copy(
        update={"job": job, "findings": findings, "log_path": f"/logs/{MALICIOUS}.darshan", "problems": [MALICIOUS]}
    )


# --- text --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [DRISHTI, E3SM, RELEASE_310, EMPTY, PARTIAL])
def test_text_has_header_findings_and_recommendations(reports: dict[str, Report], name: str) -> None:
    r = reports[name]
    out = render_text(r, width=100)
    assert str(r.job.jobid) in out
    assert f"{r.job.nprocs:,}" in out
    assert r.job.darshan_version in out
    for f in r.findings:
        assert f.code in out
        assert f.title in out
        for rec in f.recommendations:
            assert common.recommendation_title(rec) in out
    assert f"{r.counts.critical} critical" in out
    assert "\x1b[" not in out  # no colour codes unless asked for
    assert all(len(line) <= 100 for line in out.splitlines())


def test_text_groups_by_severity_in_order(reports: dict[str, Report]) -> None:
    out = render_text(reports[E3SM])
    positions = [out.index(h) for h in ("CRITICAL ·", "WARNING ·", "INFO ·", "OK ·")]
    assert positions == sorted(positions)
    # Inside a group, the costliest finding first.
    crit = [f for f in reports[E3SM].findings if f.severity.value == "critical" and f.impact and f.impact.seconds]
    assert out.index(f"{crit[1].code}  ") < out.index(f"{crit[2].code}  ")
    assert "WHAT TO TRY" in out


def test_text_verdicts(reports: dict[str, Report]) -> None:
    assert "I/O takes 95% of this 12.00 s run" in " ".join(render_text(reports[DRISHTI]).split())
    assert "I/O is not why this job is slow" in render_text(reports[RELEASE_312])
    # 7 % of a 1 s run is 74 ms of I/O: nothing to tune.
    assert "I/O is not why this job is slow" in render_text(reports[RELEASE_310])
    assert "No I/O was recorded" in render_text(reports[EMPTY])


def test_text_top_files_and_more(reports: dict[str, Report]) -> None:
    r = reports[E3SM]
    p05 = r.finding("P05")
    assert p05 is not None and p05.files
    out = render_text(r, width=200)
    for fe in p05.files:
        assert fe.path in out
    # Fewer files shown than matched: "and N more".
    trimmed = r.model_copy(update={"findings": [p05.model_copy(update={"files": p05.files[:1], "files_total": 7})]})
    assert "and 6 more" in render_text(trimmed)


def test_text_wraps_long_paths_and_survives_narrow_widths(reports: dict[str, Report]) -> None:
    r = reports[E3SM]
    f = r.findings[1]
    long_path = "/lustre/" + "/".join(f"directory_{i:03d}_with_a_long_name" for i in range(12)) + "/file.nc"
    r = r.model_copy(
        update={"findings": [f.model_copy(update={"files": [FileEvidence(path=long_path, record_id="1")]})]}
    )
    for width in (40, 60, 80, 132):
        out = render_text(r, width=width)
        assert all(len(line) <= width for line in out.splitlines())
        # Nothing is cut off: the path is all there once the wrapping is undone.
        flat = re.sub(r"[\s│]", "", out)
        assert long_path in flat


def test_text_does_not_interpret_markup_from_logs(reports: dict[str, Report]) -> None:
    r = reports[RELEASE_310]
    r = r.model_copy(update={"job": r.job.model_copy(update={"exe": "[bold red]app[/bold red] --x=[1]"})})
    assert "[bold red]app[/bold red] --x=[1]" in render_text(r, width=120)


def test_text_colour_only_on_request(reports: dict[str, Report]) -> None:
    coloured = render_text(reports[DRISHTI], color=True)
    assert "\x1b[" in coloured
    assert ANSI.sub("", coloured).strip() == render_text(reports[DRISHTI]).strip()


def test_text_mentions_changed_thresholds() -> None:
    r = _report(RELEASE_310, Thresholds(io_share_high=0.01, io_matters_min_seconds=0.01))
    out = render_text(r)
    assert "io_share_high = 0.01 (default 0.3)" in out
    assert "J02" in out


def test_text_many_has_summary_then_reports(reports: dict[str, Report]) -> None:
    out = render_text_many([reports[DRISHTI], reports[RELEASE_310]], ["a.darshan", "b.darshan"])
    assert out.index("Top finding") < out.index("I/O diagnosis of job 1322696")
    assert "29885" in out


# --- markdown ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [DRISHTI, E3SM, EMPTY, PARTIAL])
def test_markdown_content(reports: dict[str, Report], name: str) -> None:
    r = reports[name]
    md = render_markdown(r)
    assert md.startswith(f"# I/O diagnosis of job {r.job.jobid}\n")
    for f in r.findings:
        assert f"### {f.code} · " in md
        for fe in f.files:
            assert md_code(fe.path) in md
    assert md_code(r.job.exe) in md
    if r.counts.critical:
        assert "## Critical:" in md
    if any(f.recommendations for f in r.findings):
        assert "## What to try" in md


def test_markdown_escapes_log_strings(reports: dict[str, Report]) -> None:
    md = render_markdown(_malicious(reports[E3SM]))
    # Raw tags only ever inside code spans; in prose they are backslash-escaped.
    outside_code = re.sub(r"(`+).*?\1", "", md)
    assert re.search(r"(?<!\\)<img", outside_code) is None
    assert "\\<img src=x onerror=alert(1)>" in md
    assert f"`{MALICIOUS}`" in md


def test_markdown_helpers() -> None:
    assert md_text("a*b*_c_ [x](y) <b> |") == "a\\*b\\*\\_c\\_ \\[x\\](y) \\<b> \\|"
    assert md_text("MPI_File_write_at") == "MPI_File_write_at"
    assert md_para("# not a heading") == "\\# not a heading"
    assert md_para("1. not a list") == "1\\. not a list"
    assert md_para("100.00% of requests") == "100.00% of requests"
    assert md_code("a`b") == "``a`b``"
    assert md_code("x|y", in_table=True) == "`x\\|y`"


def test_markdown_many_has_summary_table(reports: dict[str, Report]) -> None:
    r1 = reports[RELEASE_310]
    r2 = r1.model_copy(update={"job": r1.job.model_copy(update={"exe": "/bin/a|b c"})})
    md = render_markdown_many([reports[DRISHTI], r2], ["x.darshan", "y|z.darshan"])
    summary = md.split("\n---\n", 1)[0]  # the summary comes before the first report
    table = [line for line in summary.splitlines() if line.startswith("|")]
    assert len(table) == 4  # header, rule, two rows
    assert all(line.count(" | ") == 7 for line in table[2:])  # the | in names is escaped
    assert "## I/O diagnosis of job 1322696" in md
    assert "### Critical:" in md


# --- html --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [DRISHTI, E3SM, RELEASE_310, EMPTY, PARTIAL])
def test_html_is_self_contained(reports: dict[str, Report], name: str) -> None:
    r = reports[name]
    page = render_html(r)
    assert page.startswith("<!DOCTYPE html>")
    assert "prefers-color-scheme: dark" in page
    assert "<svg" in page
    for banned in ("http://", "https://", "<script", "<link", "@import", "url(", "<iframe", "src="):
        assert banned not in page, banned
    assert f"I/O diagnosis of job {r.job.jobid}" in page
    for f in r.findings:
        assert f'<span class="code">{f.code}</span>' in page


def test_html_escapes_everything_from_the_log(reports: dict[str, Report]) -> None:
    page = render_html(_malicious(reports[DRISHTI]))
    assert "<img" not in page
    assert "onerror=alert(1)>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "/scratch/&lt;img src=x onerror=alert(1)&gt;/out.h5" in page
    many = render_html_many([_malicious(reports[DRISHTI]), reports[RELEASE_310]], [MALICIOUS, "ok.darshan"])
    assert "<img" not in many


def test_html_escapes_quotes_in_attributes(reports: dict[str, Report]) -> None:
    r = reports[RELEASE_310]
    r = r.model_copy(update={"job": r.job.model_copy(update={"exe": '" onmouseover="alert(1)'})})
    page = render_html(r)
    assert '" onmouseover="' not in page
    assert "&quot; onmouseover=&quot;alert(1)" in page


def test_html_svg_shows_io_share(reports: dict[str, Report]) -> None:
    page = render_html(reports[DRISHTI])
    assert "I/O took 95% of the run time on the busiest rank" in page
    assert f"Findings by severity: {reports[DRISHTI].counts.critical} critical" in page
    assert 'aria-label="I/O took' not in render_html(reports[EMPTY])  # no timing, no time picture


def test_html_many_links_each_report(reports: dict[str, Report]) -> None:
    page = render_html_many([reports[DRISHTI], reports[RELEASE_310]], ["a.darshan", "b.darshan"])
    assert page.count('<section class="report"') == 2
    assert 'href="#r-0"' in page and 'id="r-0"' in page
    ids = re.findall(r'id="([^"]+)"', page)
    assert len(ids) == len(set(ids))


# --- json and dispatch ------------------------------------------------------------------------


def test_json_round_trips(reports: dict[str, Report]) -> None:
    for r in reports.values():
        text = render(r, "json")
        assert Report.model_validate_json(text) == r
        assert json.loads(text)["job"]["jobid"] == r.job.jobid


def test_json_many_is_an_array(reports: dict[str, Report]) -> None:
    items = [reports[DRISHTI], reports[EMPTY]]
    parsed = TypeAdapter(list[Report]).validate_json(render_many(items, "json"))
    assert parsed == items


def test_every_format_dispatches(reports: dict[str, Report]) -> None:
    assert set(FORMATS) == set(EXTENSIONS)
    for fmt in FORMATS:
        assert str(reports[DRISHTI].job.jobid) in render(reports[DRISHTI], fmt)
        assert str(reports[DRISHTI].job.jobid) in render_many([reports[DRISHTI]], fmt)
    with pytest.raises(ValueError, match="unknown format"):
        render(reports[DRISHTI], "pdf")


# --- number formatting ---------------------------------------------------------------------------


def test_format_value() -> None:
    assert common.format_value(1536, Unit.BYTES) == "1.50 KiB"
    assert common.format_value(0.9450, Unit.RATIO) == "94.5%"
    assert common.format_value(1.0, Unit.RATIO) == "100%"
    assert common.format_value(0.99996, Unit.RATIO) == ">99.9%"
    assert common.format_value(0.0001, Unit.RATIO) == "<0.1%"
    assert common.format_value(2.19, Unit.RATIO, "times_extent") == "2.19×"
    assert common.format_value(314219, Unit.COUNT) == "314,219"
    assert common.format_value(11.34, Unit.SECONDS) == "11.34 s"
    assert common.format_value(2 << 20, Unit.BYTES_PER_SECOND) == "2 MiB/s"
    assert common.format_value("DXT_POSIX", Unit.TEXT) == "DXT_POSIX"
    assert common.short_percent(0.004) == "<1%"
    assert common.short_percent(0.995) == ">99%"


# --- schema ---------------------------------------------------------------------------------------


def test_checked_in_schema_matches_the_model() -> None:
    path = REPO / "docs" / "report.schema.json"
    assert path.is_file(), "docs/report.schema.json is missing: run `iodiag schema -o docs/report.schema.json`"
    checked_in = json.loads(path.read_text(encoding="utf-8"))
    assert checked_in == report_schema(), (
        "docs/report.schema.json is stale: run `iodiag schema -o docs/report.schema.json`"
    )
    assert checked_in == Report.model_json_schema()


def test_schema_validates_a_real_report(reports: dict[str, Report]) -> None:
    schema = report_schema()
    data = json.loads(render(reports[DRISHTI], "json"))
    props = schema["properties"]
    assert isinstance(props, dict)
    assert set(data) <= set(props)
    required = schema.get("required", [])
    assert isinstance(required, list)
    assert set(required) <= set(data)


def test_cross_layer_section_in_every_format(reports: dict[str, Report]) -> None:
    r = reports[DRISHTI]
    assert r.cross_layer is not None
    for fmt in ("text", "markdown", "html"):
        out = render(r, fmt)
        assert "Cross-layer" in out or "CROSS-LAYER" in out
        assert "8,448" in out  # the collective MPI-IO writes
        assert "15,922" in out  # what they became at POSIX
