"""The trigger eval: every finding fires exactly where the labeled scenario corpus says (F1 = 1.0).

The corpus (``evals/scenarios``) describes I/O programs whose findings are true by construction;
see ``evals/README.md``. A failure here lists every miss and false alarm with the engine's message.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from iodiag.evals.triggers import (
    DEFAULT_SCENARIOS,
    TriggerEval,
    engine_titles,
    load_corpus,
    run_triggers,
)

MIN_SCENARIOS = 40

DRISHTI_SAMPLE = (
    "openpmd-hdf5-small-independent-writes",  # HDF5 + MPI-IO + POSIX + Lustre, shared records
    "e2e-netcdf-fill-values-then-data",  # PnetCDF, collective and independent
    "collective-shared-file-one-ost-one-aggregator",  # MPI-IO collective, 64 ranks
    "stdio-text-output",  # STDIO and per-rank POSIX records
    "lustre-slow-ost-among-sixteen",  # LUSTRE records, 64 files
    "group-file-uneven-writes",  # per-rank records of a partly shared file
    "random-reads",
)
"""Generated logs Drishti 0.8 must read: one per interface mix the builder writes."""


@pytest.fixture(scope="module")
def corpus_result(tmp_path_factory: pytest.TempPathFactory) -> TriggerEval:
    return run_triggers(DEFAULT_SCENARIOS, tmp_path_factory.mktemp("scenario-logs"))


def _report(result: TriggerEval) -> str:
    lines = []
    for r in result.scenarios:
        if r.error:
            lines.append(f"{r.name}: did not run: {r.error}")
        for c in r.missed:
            lines.append(f"{r.name}: missed {c}")
        for c in r.false_alarms:
            lines.append(f"{r.name}: false alarm {c}: {r.messages.get(c, '')}")
    return "\n".join(lines)


def test_corpus_has_enough_scenarios() -> None:
    entries = load_corpus(DEFAULT_SCENARIOS, engine_titles())
    assert len(entries) >= MIN_SCENARIOS


def test_every_scenario_says_what_it_models() -> None:
    for e in load_corpus(DEFAULT_SCENARIOS, engine_titles()):
        assert len(e.scenario.description.split()) >= 10, f"{e.path.name}: describe what it models and why"
        assert e.path.stem == e.scenario.name, f"{e.path.name}: file name and scenario name differ"


def test_every_code_has_a_positive_and_a_negative_scenario() -> None:
    entries = load_corpus(DEFAULT_SCENARIOS, engine_titles())
    positive = {c for e in entries for c in e.scenario.expect.findings}
    negative = {c for e in entries for c in e.scenario.expect.absent}
    codes = set(engine_titles())
    assert not codes - positive, f"codes without a scenario that expects them: {sorted(codes - positive)}"
    assert not codes - negative, f"codes without a near-threshold negative scenario: {sorted(codes - negative)}"


def test_f1_is_one_over_the_corpus(corpus_result: TriggerEval) -> None:
    assert corpus_result.errors == 0 and corpus_result.f1 == 1.0, (
        f"F1 = {corpus_result.f1:.3f} (TP {corpus_result.tp}, FP {corpus_result.fp}, FN {corpus_result.fn}):\n"
        + _report(corpus_result)
    )


def test_no_check_crashes_on_the_corpus(corpus_result: TriggerEval) -> None:
    crashed = [f"{r.name}: {p}" for r in corpus_result.scenarios for p in r.problems if p.startswith("check ")]
    assert not crashed, "\n".join(crashed)


def test_scores_add_up(corpus_result: TriggerEval) -> None:
    labeled = sum(len(r.expected) for r in corpus_result.scenarios)
    assert corpus_result.tp + corpus_result.fn == labeled
    assert corpus_result.fp == sum(len(r.false_alarms) for r in corpus_result.scenarios)
    for c in corpus_result.codes:
        assert c.tp + c.fn == c.positives


def _drishti() -> str | None:
    env = os.environ.get("IODIAG_DRISHTI")
    if env:
        return env if Path(env).is_file() else None
    beside = Path(sys.executable).parent / "drishti"  # drishti-io is a dev dependency in our venv
    return str(beside) if beside.is_file() else shutil.which("drishti")


def test_drishti_reads_generated_logs(corpus_result: TriggerEval, tmp_path: Path) -> None:
    drishti = _drishti()
    if drishti is None:
        if os.environ.get("CI"):
            pytest.fail("Drishti 0.8 is a dev dependency and must be installed in CI")
        pytest.skip("Drishti 0.8 not found: put `drishti` on PATH or set IODIAG_DRISHTI to its executable")
    logs = {r.name: r.log for r in corpus_result.scenarios if r.log}
    for name in DRISHTI_SAMPLE:
        log = logs.get(name)
        assert log is not None, f"{name}: no log was built"
        cwd = tmp_path / name
        cwd.mkdir()
        proc = subprocess.run(
            [drishti, "--csv", log],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 0, f"{name}: drishti exited {proc.returncode}:\n{proc.stderr[-2000:]}"
        csv = cwd / (Path(log).name.removesuffix(".darshan") + ".csv")
        assert csv.is_file(), f"{name}: drishti wrote no CSV ({sorted(p.name for p in cwd.iterdir())})"
        assert csv.read_text().startswith("JOB,"), f"{name}: unexpected CSV:\n{csv.read_text()[:500]}"


# --- the command --------------------------------------------------------------------------------

_APP = "import typer; from iodiag.cli.eval_cmd import register; app = typer.Typer(); register(app); app()"

GOOD = """\
name: tiny
description: one rank of two appends 1,001 records of 4 KiB, so there are more than 1,000 small writes
job: {nprocs: 2, mounts: [{path: /, fs: ext4}]}
program:
  - {ranks: "0", file: /scratch/out/events.log, op: write, count: 1001, size: 4KiB}
expect: {findings: [P06, M01], absent: [P16]}
"""


def _eval(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "IODIAG_DEBUG", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-c", _APP, "eval", "triggers", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        check=False,
    )


def _corpus(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "scenarios"
    d.mkdir()
    (d / "tiny.yaml").write_text(textwrap.dedent(text))
    return d


def test_cli_passes_a_correct_corpus(tmp_path: Path) -> None:
    proc = _eval("--scenarios", _corpus(tmp_path, GOOD), "--cache-dir", tmp_path / "cache")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout and "P06" in proc.stdout


def test_cli_fails_when_a_label_is_wrong(tmp_path: Path) -> None:
    wrong = GOOD.replace("absent: [P16]", "absent: [P16, P06]").replace("findings: [P06, M01]", "findings: [M01, P05]")
    proc = _eval("--scenarios", _corpus(tmp_path, wrong), "--cache-dir", tmp_path / "cache", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = TriggerEval.model_validate_json(proc.stdout)
    assert out.f1 < 1.0
    (tiny,) = out.scenarios
    assert tiny.missed == ["P05"] and tiny.false_alarms == ["P06"]


@pytest.mark.parametrize(
    "text",
    [
        "name: [unclosed\n",
        GOOD.replace("count: 1001", "count: 1001, colour: red"),
        GOOD.replace("absent: [P16]", "absent: [Q99]"),
        GOOD.replace("absent: [P16]", "absent: [P06]"),
        GOOD + "log_faults: {damage: set-on-fire}\n",
        GOOD.replace("nprocs: 2,", "nprocs: 2, runtime: 0.001,"),
    ],
    ids=["yaml", "unknown-key", "unknown-code", "both-ways", "bad-fault", "runtime-too-short"],
)
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path: Path, text: str) -> None:
    proc = _eval("--scenarios", _corpus(tmp_path, text), "--cache-dir", tmp_path / "cache")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("iodiag: error:"), proc.stderr


def test_cli_missing_directory_is_exit_2(tmp_path: Path) -> None:
    proc = _eval("--scenarios", tmp_path / "nope", "--cache-dir", tmp_path / "cache")
    assert proc.returncode == 2 and "no such scenarios directory" in proc.stderr
