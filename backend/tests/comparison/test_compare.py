"""``iodiag compare``: what changed from run A to run B, on real logs (and scenario logs for a hostile file name)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import yaml

from iodiag.analysis import analyze
from iodiag.analysis.models import Report, Severity
from iodiag.comparison import Comparison, NotComparable, RunFacts, compare, comparison_schema, executable, run_facts
from iodiag.comparison.render import FORMATS, render
from iodiag.ingest import load_profile
from iodiag.synth.build import build_log
from iodiag.synth.scenario import parse_scenario
from tests.cli.test_cli import assert_clean_stderr, error_lines, iodiag
from tests.conftest import REPO, shared_log, wheel_log

BADOST = wheel_log("sample-badost.darshan")
GOODOST = wheel_log("sample-goodost.darshan")
E3SM = shared_log("darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan")
RELEASE_340 = shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.4.0.darshan")
RELEASE_350 = shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.5.0.darshan")

MALICIOUS = "<img src=x onerror=alert(1)>"


def _analyzed(path: Path) -> tuple[Report, RunFacts]:
    profile = load_profile(str(path), include=("HEATMAP",))
    return analyze(profile), run_facts(profile)


@pytest.fixture(scope="module")
def runs() -> dict[Path, tuple[Report, RunFacts]]:
    return {p: _analyzed(p) for p in (BADOST, GOODOST, E3SM, RELEASE_340, RELEASE_350)}


def _compare(runs: dict[Path, tuple[Report, RunFacts]], a: Path, b: Path, force: bool = False) -> Comparison:
    (ra, fa), (rb, fb) = runs[a], runs[b]
    return compare(ra, rb, force=force, facts_a=fa, facts_b=fb)


def _codes(report: Report) -> set[str]:
    return {f.code for f in report.findings if f.severity is not Severity.OK}


# --- the comparison ------------------------------------------------------------------------------


def test_slow_ost_is_resolved(runs: dict[Path, tuple[Report, RunFacts]]) -> None:
    c = _compare(runs, BADOST, GOODOST)
    assert c.changed and not c.forced
    l04 = c.findings_resolved[0]
    assert l04.code == "L04"
    assert l04.b is None and l04.a is not None
    assert l04.a.severity is Severity.CRITICAL and l04.a.cause_rank == 1
    assert l04.a.seconds is not None and l04.a.seconds > 600
    assert l04.delta_seconds == pytest.approx(-l04.a.seconds)
    io = c.metric("I/O time, busiest rank")
    assert io is not None and io.a is not None and io.b is not None and io.delta is not None
    assert io.a > 700 and io.b < 5
    assert io.delta == pytest.approx(io.b - io.a)
    assert io.change_pct == pytest.approx((io.b - io.a) / io.a * 100)
    assert c.verdict.startswith("I/O time fell from 13.0 min to 3.76 s (−99.5%)")
    assert "slow OST (L04), is gone" in c.verdict
    assert "compute-bound" not in c.verdict  # run B's I/O still matters (75 % of its run)
    # Both runs are ior, with different arguments and process counts: comparable, and said so.
    assert c.a.executable == c.b.executable == "ior"
    assert any("different arguments" in n for n in c.notes)
    assert any("2,048" in n and "48" in n for n in c.notes)
    # The rows that come from the profiles: request sizes, Lustre layout, per-OST time.
    sections = {m.section for m in c.metrics}
    assert {"job", "I/O", "POSIX", "STDIO", "request sizes", "Lustre", "OSTs", "findings"} <= sections
    ost14 = c.metric("OST 14 I/O time", "OSTs")
    assert ost14 is not None and ost14.a is not None and ost14.b is not None and ost14.a > 100 * ost14.b
    sizes = c.metric("POSIX writes of 1-4 MiB", "request sizes")
    assert sizes is not None and sizes.a == 131072 and sizes.b == 0 and sizes.change_pct == -100


def test_a_log_compared_with_itself_has_no_change(runs: dict[Path, tuple[Report, RunFacts]]) -> None:
    c = _compare(runs, E3SM, E3SM)
    assert not c.changed
    assert c.findings_resolved == c.findings_new == c.findings_changed == []
    assert {f.code for f in c.findings_unchanged} == _codes(runs[E3SM][0])
    assert all(m.delta == 0 and m.change_pct == 0 for m in c.metrics)
    assert c.verdict.startswith("No change: I/O time 11.7 min in both runs")
    assert not any("executable" in n or "process counts" in n for n in c.notes)


def test_release_logs(runs: dict[Path, tuple[Report, RunFacts]]) -> None:
    ra, rb = runs[RELEASE_340][0], runs[RELEASE_350][0]
    c = _compare(runs, RELEASE_340, RELEASE_350)
    assert c.a.executable == c.b.executable == "mpi-io-test"
    # Every finding code lands in exactly one list, by the rule.
    assert {f.code for f in c.findings_resolved} == _codes(ra) - _codes(rb)
    assert {f.code for f in c.findings_new} == _codes(rb) - _codes(ra)
    both = {f.code for f in c.findings_changed} | {f.code for f in c.findings_unchanged}
    assert both == _codes(ra) & _codes(rb)
    assert any("Darshan versions (3.4.0, 3.5.0)" in n for n in c.notes)
    # Neither run's I/O matters (tens of milliseconds): said so, without calling either compute-bound.
    assert ra.verdict.io_matters is False and rb.verdict.io_matters is False
    assert "I/O still does not matter" in c.verdict and "compute-bound" not in c.verdict
    assert c.verdict.startswith("I/O time rose from 35.1 ms to 44.2 ms (+25.9%)")


def test_different_executables_are_refused_unless_forced(runs: dict[Path, tuple[Report, RunFacts]]) -> None:
    with pytest.raises(NotComparable) as err:
        _compare(runs, RELEASE_340, E3SM)
    message = str(err.value)
    assert "\n" not in message
    assert "mpi-io-test" in message and "e3sm_io" in message and "--force" in message
    c = _compare(runs, RELEASE_340, E3SM, force=True)
    assert c.forced
    assert c.notes[0].startswith("Different executables: run A ran mpi-io-test, run B ran e3sm_io")


def test_executable_is_the_commands_basename() -> None:
    assert executable("/opt/bin/ior -t 8m -b 256m") == "ior"
    assert executable("./checkpoint") == "checkpoint"
    assert executable("") == ""


def test_compare_is_deterministic(runs: dict[Path, tuple[Report, RunFacts]]) -> None:
    one = _compare(runs, BADOST, GOODOST).model_dump_json()
    assert one == _compare(runs, BADOST, GOODOST).model_dump_json()


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders(runs: dict[Path, tuple[Report, RunFacts]], fmt: str) -> None:
    c = _compare(runs, BADOST, GOODOST)
    out = render(c, fmt)
    assert "L04" in out
    if fmt == "json":
        assert Comparison.model_validate_json(out) == c
    elif fmt == "text":
        assert "RESOLVED · 3" in out and "\x1b[" not in out
        assert all(len(line) <= 100 for line in out.splitlines())
    elif fmt == "markdown":
        assert out.startswith("# Comparison of job 6265799 (A) with job 6909118 (B)")
        assert "## Resolved findings (3)" in out
    else:
        assert out.startswith("<!DOCTYPE html>") and "<svg" in out
        for banned in ("http://", "https://", "<script", "<link", "@import", "url(", "src="):
            assert banned not in out, banned


# --- scenario logs: a fix that makes the run compute-bound, with hostile names ------------------


def _scenario_pair(d: Path) -> tuple[Path, Path]:
    """ranking-slow-ost (a slow OST costs 16 % of the run) and the same job without the slow OST, each writing
    to a directory called MALICIOUS, from an executable whose argument is MALICIOUS, into logs named after it."""
    spec = yaml.safe_load((REPO / "evals" / "scenarios" / "ranking-slow-ost.yaml").read_text(encoding="utf-8"))
    spec.pop("expect", None)
    spec["job"]["exe"] = f"./checkpoint --tag {MALICIOUS}"
    path = f"/lus/scratch/{MALICIOUS}/part.{{rank}}.dat"
    spec["files"][0]["path"] = spec["program"][0]["file"] = path
    fixed = copy.deepcopy(spec)
    fixed["job"]["mounts"][0].pop("slow_osts")
    a, b = d / f"{MALICIOUS}-before.darshan", d / f"{MALICIOUS}-after.darshan"
    build_log(parse_scenario(spec), a)
    build_log(parse_scenario(fixed), b)
    return a, b


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _scenario_pair(tmp_path_factory.mktemp("compare"))


def test_fix_makes_the_run_compute_bound(hostile: tuple[Path, Path]) -> None:
    (ra, fa), (rb, fb) = (_analyzed(p) for p in hostile)
    assert ra.verdict.causes[0].code == "L04" and rb.verdict.io_matters is False
    c = compare(ra, rb, facts_a=fa, facts_b=fb)
    assert "L04" in {f.code for f in c.findings_resolved}
    assert c.verdict.startswith("I/O time fell from 5.12 s to ")
    assert c.verdict.endswith(": the top cause, slow OST (L04), is gone; the run is now compute-bound.")


def test_html_escapes_a_hostile_file_name(hostile: tuple[Path, Path]) -> None:
    proc = iodiag("compare", "-f", "html", *hostile)
    assert proc.returncode == 0, proc.stderr
    page = proc.stdout
    assert "<img" not in page and "onerror=alert(1)>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;-before.darshan" in page  # the log's own name
    # The executable's arguments (log text). The slow OST's headline no longer names the output directory: its
    # only command pinned new files to one OST, which the action checker refuses (docs/actions.md).
    assert "./checkpoint --tag &lt;img src=x onerror=alert(1)&gt;" in page
    md = iodiag("compare", "-f", "markdown", *hostile).stdout
    outside_code = re.sub(r"(`+).*?\1", "", md)
    assert re.search(r"(?<!\\)<img", outside_code) is None


# --- the command -------------------------------------------------------------------------------


def test_cli_text_badost_goodost() -> None:
    proc = iodiag("compare", BADOST, GOODOST)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    out = proc.stdout
    assert "I/O time fell from 13.0 min to 3.76 s" in out
    resolved = out.split("RESOLVED", 1)[1].split("NEW", 1)[0]
    assert "L04  Slow OST" in resolved
    assert "\x1b[" not in out and all(len(line) <= 100 for line in out.splitlines())


@pytest.mark.parametrize("fmt", ["json", "markdown", "html"])
def test_cli_formats_and_output_file(tmp_path: Path, fmt: str) -> None:
    target = tmp_path / f"cmp.{fmt}"
    proc = iodiag("compare", "--format", fmt, "-o", target, BADOST, GOODOST)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    text = target.read_text(encoding="utf-8")
    if fmt == "json":
        c = Comparison.model_validate_json(text)
        assert c.findings_resolved[0].code == "L04"
        assert set(json.loads(text)) >= {"findings_resolved", "findings_new", "findings_changed", "metrics", "verdict"}
    else:
        assert "L04" in text


def test_cli_self_comparison_reports_no_change() -> None:
    proc = iodiag("compare", "-f", "json", RELEASE_340, RELEASE_340)
    assert proc.returncode == 0, proc.stderr
    c = Comparison.model_validate_json(proc.stdout)
    assert not c.changed and c.verdict.startswith("No change")
    assert "No change" in iodiag("compare", RELEASE_340, RELEASE_340).stdout


def test_cli_refuses_different_executables() -> None:
    proc = iodiag("compare", RELEASE_340, E3SM)
    assert proc.returncode == 2
    assert_clean_stderr(proc)
    assert proc.stdout == ""
    assert error_lines(proc) == [
        "iodiag: error: not comparable: run A ran mpi-io-test, run B ran e3sm_io (different executables); "
        "compare anyway with --force"
    ]
    assert len(proc.stderr.splitlines()) == 1
    forced = iodiag("compare", "--force", RELEASE_340, E3SM)
    assert forced.returncode == 0, forced.stderr
    assert "Different executables" in forced.stdout


def test_cli_bad_arguments(tmp_path: Path) -> None:
    one = iodiag("compare", RELEASE_340)
    assert one.returncode == 2
    assert error_lines(one) == ["iodiag: error: give two logs to compare, run A and run B (got 1)"]
    missing = tmp_path / "missing.darshan"
    proc = iodiag("compare", RELEASE_340, missing)
    assert proc.returncode == 2
    assert_clean_stderr(proc)
    assert error_lines(proc) == [f"iodiag: error: {missing}: no such file"]
    nodir = iodiag("compare", "-o", tmp_path / "no" / "x.json", RELEASE_340, RELEASE_340)
    assert nodir.returncode == 2 and len(error_lines(nodir)) == 1


# --- schema ------------------------------------------------------------------------------------


def test_checked_in_compare_schema_matches_the_model() -> None:
    path = REPO / "docs" / "compare.schema.json"
    regenerate = "run `iodiag compare --schema -o docs/compare.schema.json`"
    assert path.is_file(), f"docs/compare.schema.json is missing: {regenerate}"
    assert json.loads(path.read_text(encoding="utf-8")) == comparison_schema() == Comparison.model_json_schema(), (
        f"docs/compare.schema.json is stale: {regenerate}"
    )
    assert iodiag("compare", "--schema").stdout == path.read_text(encoding="utf-8")
    props = comparison_schema()["properties"]
    assert isinstance(props, dict)
    assert {"findings_resolved", "findings_new", "findings_changed", "metrics", "verdict"} <= set(props)
