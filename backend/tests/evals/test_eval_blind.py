"""The blind eval: sealed sets are scored by class, a changed file is refused, the first scoring is kept."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from iodiag.analysis.registry import CHECKS, Kind
from iodiag.evals.blind import CODE_CLASS, predict_drishti, run_blind
from iodiag.evals.triggers import CorpusError
from tests.conftest import DRISHTI_REF, REPO, shared_log

DEV = REPO / "evals" / "blind" / "dev"


def test_every_cause_names_a_class() -> None:
    # M01 (no MPI-IO at all) is advice about the interface, not a cause of lost time by itself.
    unmapped = sorted(c for c, s in CHECKS.items() if s.kind == Kind.CAUSE and c not in CODE_CLASS)
    assert unmapped == ["M01"]
    assert not [c for c in CODE_CLASS if c not in CHECKS]


def test_drishti_csv_becomes_classes() -> None:
    csv = next((DRISHTI_REF / "drishti").glob("*.csv")).read_text()
    got = predict_drishti(csv)
    # P05? no; the sample raises P08 (misaligned), P09 (redundant), M06/M07 (blocking: non-collective class)...
    fired = dict(zip(*[ln.split(",") for ln in csv.strip().splitlines()], strict=True))
    expected = {CODE_CLASS[c] for c, v in fired.items() if v == "True" and c in CODE_CLASS and c not in ("M01",)}
    expected -= {CODE_CLASS[c] for c in ("P12", "P14", "M04", "M05") if c in CODE_CLASS}
    assert set(got.classes) == expected and got.top_class is None and got.io_matters is None


def _tiny_set(tmp: Path) -> Path:
    """Three dev cases (built from their scenarios, as the generator does) as a sealed set of their own."""
    from iodiag.synth.build import build_log
    from iodiag.synth.scenario import load_scenario

    folder = tmp / "tiny"
    (folder / "logs").mkdir(parents=True)
    truth = []
    for item in yaml.safe_load((DEV / "construction.yaml").read_text())["cases"]:
        spec = DEV / "scenarios" / f"{item['case']}.yaml"
        if "log_faults" in yaml.safe_load(spec.read_text()):
            continue
        build_log(load_scenario(spec), folder / "logs" / f"{item['case']}.darshan")
        truth.append(item)
        if len(truth) == 3:
            break
    (folder / "construction.yaml").write_text(yaml.safe_dump(truth))
    lines = []
    for rel in ["construction.yaml", *(f"logs/{i['case']}.darshan" for i in truth)]:
        lines.append(f"{hashlib.sha256((folder / rel).read_bytes()).hexdigest()}  {rel}")
    (folder / "SEAL").write_text("\n".join(lines) + "\n")
    return folder


def test_a_sealed_set_is_scored_once_and_a_changed_file_is_refused(tmp_path: Path) -> None:
    folder = _tiny_set(tmp_path)
    first = run_blind(folder, truth="construction")
    assert first.first_sight and (folder / "FIRST_SIGHT.construction.json").is_file()
    assert first.tools[0].cases == 3 and first.tools[0].top1 is not None
    kept = (folder / "FIRST_SIGHT.construction.json").read_text()
    again = run_blind(folder, truth="construction")
    assert not again.first_sight and (folder / "FIRST_SIGHT.construction.json").read_text() == kept
    # A labeller's labels must be sealed before they are scored.
    with pytest.raises(CorpusError, match=r"LABELS\.SEAL"):
        run_blind(folder, truth="labels")
    # Labels changed after sealing are refused.
    (folder / "construction.yaml").write_text((folder / "construction.yaml").read_text() + "\n")
    with pytest.raises(CorpusError, match="changed after sealing"):
        run_blind(folder, truth="construction")


def test_cli_refuses_an_unsealed_set_with_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "unsealed"
    folder.mkdir()
    (folder / "construction.yaml").write_text("[]\n")
    proc = subprocess.run(
        [sys.executable, "-m", "iodiag", "eval", "blind", str(folder), "--truth", "construction"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "not sealed" in proc.stderr


def test_a_real_log_scores_without_error() -> None:
    from iodiag.analysis import analyze
    from iodiag.evals.blind import predict_iodiag
    from iodiag.ingest import load_profile

    log = shared_log(
        "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
    )
    p = predict_iodiag(analyze(load_profile(str(log))))
    assert p.io_matters is True and p.top_class is not None
