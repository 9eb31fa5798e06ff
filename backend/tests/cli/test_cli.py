"""The ``iodiag`` command, run as a real subprocess (``python -m iodiag``) on real logs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from iodiag import __version__
from iodiag.analysis.models import Report
from tests.conftest import REPO, shared_log

DRISHTI = shared_log("drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan")
RELEASE_310 = shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.1.0.darshan")  # I/O share 7%: no J02
RELEASE_341 = shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.4.1.darshan")
E3SM = shared_log("darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan")
EMPTY = shared_log("darshan-logs/empty_log/empty_log.darshan")

JOBS = {DRISHTI: 1322696, RELEASE_310: 29885, RELEASE_341: 500052, E3SM: 586491, EMPTY: 395998}


def iodiag(*args: str | Path, cwd: Path | None = None, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "IODIAG_DEBUG", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "iodiag", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        cwd=cwd,
        env=env,
        check=False,
    )


def assert_clean_stderr(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr
    assert "Traceback" not in proc.stdout


def error_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("iodiag: error:")]


@pytest.fixture()
def bad_logs(tmp_path: Path) -> tuple[Path, Path]:
    zero = tmp_path / "zero.darshan"
    zero.write_bytes(b"")
    folder = tmp_path / "folder.darshan"
    folder.mkdir()
    return zero, folder


# --- basics ------------------------------------------------------------------------------------


def test_version() -> None:
    proc = iodiag("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"iodiag {__version__}"


def test_help_lists_commands_without_loading_the_analysis() -> None:
    proc = iodiag("--help")
    assert proc.returncode == 0
    assert "analyze" in proc.stdout and "schema" in proc.stdout
    code = "import sys, iodiag.cli.main; print(any(m == 'pandas' or m.startswith('darshan') for m in sys.modules))"
    heavy = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert heavy.stdout.strip() == "False"


def test_each_command_is_registered_by_the_module_main_loads_for_it() -> None:
    # main() registers only the owner of the command on the command line; a wrong OWNERS entry would
    # make that command unknown.
    import typer

    from iodiag.cli import main as cli_main

    for module in cli_main.MODULES:
        app = typer.Typer()
        cli_main.COMMAND_MODULES[module].register(app)
        names = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
        names |= {g.name or "" for g in app.registered_groups}
        assert names == {k for k, v in cli_main.OWNERS.items() if v == module}, module
    assert cli_main.modules_for(["--version"]) == cli_main.MODULES
    assert cli_main.modules_for(["analyze", "--format", "json", "x"]) == ("analyze_cmd",)
    assert cli_main.modules_for(["analyse", "x"]) == cli_main.MODULES  # a typo still gets the full list


@pytest.mark.parametrize("log", [DRISHTI, E3SM])
def test_plain_analyze_imports_neither_pandas_nor_pydarshan(log: Path) -> None:
    # Importing pandas (0.4 s) or PyDarshan would cost more than the whole plain analysis; the report must
    # still be complete.
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "iodiag", "analyze", "--format", "json", str(log)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    heavy = sorted(m for m in imported if m.split(".")[0] in ("pandas", "darshan", "cffi", "pyarrow", "scipy"))
    assert heavy == []
    report = TypeAdapter(Report).validate_json(proc.stdout)
    assert report.findings and report.verdict.headline


def test_a_typo_lists_the_commands() -> None:
    proc = iodiag("analyse", "x.darshan")
    assert proc.returncode == 2
    assert "No such command 'analyse'" in proc.stderr


# --- one log, every format ------------------------------------------------------------------


@pytest.mark.parametrize("log", [DRISHTI, E3SM])
def test_text(log: Path) -> None:
    proc = iodiag("analyze", log)
    assert proc.returncode == 0, proc.stderr
    assert_clean_stderr(proc)
    assert proc.stderr == ""
    assert f"I/O diagnosis of job {JOBS[log]}" in proc.stdout
    assert "I/O takes" in proc.stdout
    assert "CRITICAL ·" in proc.stdout and "WHAT TO TRY" in proc.stdout
    assert "\x1b[" not in proc.stdout  # not a terminal: no colour codes
    assert all(len(line) <= 100 for line in proc.stdout.splitlines())


@pytest.mark.parametrize("log", [DRISHTI, E3SM])
def test_json_validates_as_report(log: Path) -> None:
    proc = iodiag("analyze", "--format", "json", log)
    assert proc.returncode == 0, proc.stderr
    report = Report.model_validate_json(proc.stdout)
    assert report.job.jobid == JOBS[log]
    assert report.log_path == str(log)
    assert "J02" in report.codes()
    text = iodiag("analyze", log).stdout
    for code in report.codes():
        assert code in text


@pytest.mark.parametrize("log", [DRISHTI, E3SM])
def test_markdown(log: Path) -> None:
    proc = iodiag("analyze", "-f", "markdown", log)
    assert proc.returncode == 0, proc.stderr
    report = Report.model_validate_json(iodiag("analyze", "-f", "json", log).stdout)
    assert proc.stdout.startswith(f"# I/O diagnosis of job {JOBS[log]}")
    for f in report.findings:
        assert f"### {f.code} · " in proc.stdout


@pytest.mark.parametrize("log", [DRISHTI, E3SM])
def test_html(log: Path) -> None:
    proc = iodiag("analyze", "-f", "html", log)
    assert proc.returncode == 0, proc.stderr
    page = proc.stdout
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert f"I/O diagnosis of job {JOBS[log]}" in page
    assert '<span class="code">J02</span>' in page
    assert "<svg" in page and "http" not in page and "<script" not in page


def test_empty_log_says_no_io() -> None:
    proc = iodiag("analyze", EMPTY)
    assert proc.returncode == 0
    assert "No I/O was recorded" in proc.stdout
    assert "D03" in proc.stdout


# --- several logs ---------------------------------------------------------------------------


def test_many_logs_with_bad_ones(bad_logs: tuple[Path, Path]) -> None:
    zero, folder = bad_logs
    proc = iodiag("analyze", DRISHTI, zero, folder, RELEASE_310)
    assert proc.returncode == 2
    assert_clean_stderr(proc)
    errors = error_lines(proc)
    assert errors == [
        f"iodiag: error: {zero}: the file is empty (0 bytes): was the job still running? Darshan writes the log "
        "when the job ends (at MPI_Finalize, or at exit without MPI); use it once the job has finished",
        f"iodiag: error: {folder}: is a directory, not a Darshan log",
    ]
    assert proc.stderr.count("iodiag: error:") == 2
    # The good logs are still in the summary table.
    for log in (DRISHTI, RELEASE_310):
        assert str(JOBS[log]) in proc.stdout
    assert "Top finding" in proc.stdout
    assert "2 logs could not be read" in proc.stdout


def test_many_logs_json_array(bad_logs: tuple[Path, Path]) -> None:
    zero, _ = bad_logs
    proc = iodiag("analyze", "-f", "json", RELEASE_310, zero, E3SM)
    assert proc.returncode == 2
    assert_clean_stderr(proc)
    reports = TypeAdapter(list[Report]).validate_json(proc.stdout)
    assert [r.job.jobid for r in reports] == [JOBS[RELEASE_310], JOBS[E3SM]]
    assert len(error_lines(proc)) == 1


def test_only_bad_logs(bad_logs: tuple[Path, Path], tmp_path: Path) -> None:
    zero, folder = bad_logs
    proc = iodiag("analyze", zero, folder, tmp_path / "missing.darshan")
    assert proc.returncode == 2
    assert_clean_stderr(proc)
    assert len(error_lines(proc)) == 3
    assert f"{tmp_path / 'missing.darshan'}: no such file" in proc.stderr


def test_output_dir_writes_one_file_per_log(tmp_path: Path, bad_logs: tuple[Path, Path]) -> None:
    out = tmp_path / "reports"
    out.mkdir()
    zero, _ = bad_logs
    proc = iodiag("analyze", "-f", "markdown", "--output", out, DRISHTI, zero, RELEASE_310)
    assert proc.returncode == 2
    assert_clean_stderr(proc)
    files = sorted(p.name for p in out.iterdir())
    assert files == sorted([DRISHTI.name.removesuffix(".darshan") + ".md", "mpi-io-test-x86_64-3.1.0.md"])
    assert (out / "mpi-io-test-x86_64-3.1.0.md").read_text(encoding="utf-8").startswith("# I/O diagnosis of job 29885")


@pytest.mark.parametrize(("fmt", "ext"), [("json", ".json"), ("html", ".html"), ("text", ".txt")])
def test_output_path_ending_in_slash_is_a_new_directory(tmp_path: Path, fmt: str, ext: str) -> None:
    out = tmp_path / "new"
    proc = iodiag("analyze", "-f", fmt, "-o", f"{out}/", RELEASE_310, RELEASE_341)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == [f"mpi-io-test-x86_64-3.1.0{ext}", f"mpi-io-test-x86_64-3.4.1{ext}"]
    if fmt == "json":
        report = Report.model_validate_json((out / "mpi-io-test-x86_64-3.4.1.json").read_text(encoding="utf-8"))
        assert report.job.jobid == JOBS[RELEASE_341]


def test_same_log_name_twice_gets_two_files(tmp_path: Path) -> None:
    copy = tmp_path / "copy" / RELEASE_310.name
    copy.parent.mkdir()
    copy.write_bytes(RELEASE_310.read_bytes())
    out = tmp_path / "out"
    out.mkdir()
    proc = iodiag("analyze", "-f", "json", "-o", out, RELEASE_310, copy)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["mpi-io-test-x86_64-3.1.0-2.json", "mpi-io-test-x86_64-3.1.0.json"]


def test_output_file(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    proc = iodiag("analyze", "-f", "html", "-o", target, DRISHTI)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "I/O diagnosis of job 1322696" in target.read_text(encoding="utf-8")


def test_many_logs_to_one_file(tmp_path: Path) -> None:
    target = tmp_path / "all.md"
    proc = iodiag("analyze", "-f", "markdown", "-o", target, DRISHTI, RELEASE_310)
    assert proc.returncode == 0, proc.stderr
    md = target.read_text(encoding="utf-8")
    assert md.startswith("# I/O diagnosis of 2 logs")
    assert "## I/O diagnosis of job 1322696" in md and "## I/O diagnosis of job 29885" in md


def test_output_parent_missing(tmp_path: Path) -> None:
    for target in (tmp_path / "nope" / "r.txt", f"{tmp_path / 'nope' / 'deeper'}/"):
        proc = iodiag("analyze", "-o", target, RELEASE_310)
        assert proc.returncode == 2
        assert_clean_stderr(proc)
        assert len(proc.stderr.strip().splitlines()) == 1
        assert proc.stderr.startswith("iodiag: error: cannot write")
        assert "does not exist" in proc.stderr
        assert proc.stdout == ""


# --- thresholds -----------------------------------------------------------------------------


def test_thresholds_file_changes_the_result(tmp_path: Path) -> None:
    before = Report.model_validate_json(iodiag("analyze", "-f", "json", RELEASE_310).stdout)
    assert "J02" not in before.codes()
    toml = tmp_path / "t.toml"
    toml.write_text("[thresholds]\nio_share_high = 0.01\nio_matters_min_seconds = 0.01\n", encoding="utf-8")
    proc = iodiag("analyze", "-f", "json", "--thresholds", toml, RELEASE_310)
    assert proc.returncode == 0, proc.stderr
    after = Report.model_validate_json(proc.stdout)
    assert "J02" in after.codes()
    assert after.thresholds["io_share_high"] == 0.01
    text = iodiag("analyze", "-t", toml, RELEASE_310).stdout
    assert "io_share_high = 0.01" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("io_share_high = 'high'\n", "io_share_high"),
        ("no_such_threshold = 1\n", "unknown threshold"),
        ("[thresholds\n", "invalid TOML"),
        ("io_share_high = 7\n", "io_share_high"),
    ],
)
def test_bad_thresholds_file(tmp_path: Path, content: str, message: str) -> None:
    toml = tmp_path / "bad.toml"
    toml.write_text(content, encoding="utf-8")
    proc = iodiag("analyze", "-t", toml, RELEASE_310, DRISHTI)
    assert proc.returncode == 2
    assert_clean_stderr(proc)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"iodiag: error: {toml}: ")
    assert message in lines[0]
    assert proc.stdout == ""


def test_missing_thresholds_file(tmp_path: Path) -> None:
    proc = iodiag("analyze", "-t", tmp_path / "none.toml", RELEASE_310)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"iodiag: error: {tmp_path / 'none.toml'}: no such thresholds file"


# --- failures that are not the user's -------------------------------------------------------


def test_internal_error_is_one_line() -> None:
    code = (
        "import iodiag.analysis as a\n"
        "def boom(*args, **kwargs):\n"
        "    raise RuntimeError('boom\\nsecond line')\n"
        "a.analyze = boom\n"
        "from iodiag.cli.main import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "analyze", str(RELEASE_310), str(DRISHTI)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "IODIAG_DEBUG"},
    )
    assert proc.returncode == 1
    assert_clean_stderr(proc)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2
    assert all(
        line.startswith("iodiag: internal error: ") and "RuntimeError: boom second line" in line for line in lines
    )


def test_closed_stdout_is_not_an_error() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "iodiag", "analyze", "-f", "json", DRISHTI, E3SM, RELEASE_310, RELEASE_341],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    proc.wait(timeout=240)
    assert "Traceback" not in stderr
    assert "Exception ignored" not in stderr


# --- schema ---------------------------------------------------------------------------------


def test_schema_command(tmp_path: Path) -> None:
    proc = iodiag("schema")
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == Report.model_json_schema()
    target = tmp_path / "schema.json"
    assert iodiag("schema", "--output", target).returncode == 0
    assert json.loads(target.read_text(encoding="utf-8")) == Report.model_json_schema()


def test_checked_in_schema_is_what_the_command_writes() -> None:
    checked_in = (REPO / "docs" / "report.schema.json").read_text(encoding="utf-8")
    assert iodiag("schema").stdout == checked_in, "regenerate with `iodiag schema -o docs/report.schema.json`"


def test_cb_nodes_and_nodes_enable_the_aggregator_checks() -> None:
    """Darshan does not record the application's cb_nodes; the user can supply it."""
    from tests.conftest import SHARED_LOGS

    log = str(next((SHARED_LOGS / "drishti").glob("*.darshan")))
    plain = subprocess.run(
        [sys.executable, "-m", "iodiag", "analyze", "-f", "json", log], capture_output=True, text=True, check=True
    )
    assert not {"M08", "M09", "M10"} & {f["code"] for f in json.loads(plain.stdout)["findings"]}
    too_many = subprocess.run(
        [sys.executable, "-m", "iodiag", "analyze", "-f", "json", "--nodes", "8", "--cb-nodes", "16", log],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(too_many.stdout)
    m09 = next(f for f in report["findings"] if f["code"] == "M09")
    assert {m["name"]: m["value"] for m in m09["evidence"]} == {"cb_nodes": 16, "nodes": 8}
    assert report["job"]["nodes"] == 8
