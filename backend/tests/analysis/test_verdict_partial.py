"""The verdict under partial data and when no pattern is at fault.

* A log whose data module ran out of records (Darshan's flag, or records stopped at a power-of-two limit
  while the recorded I/O ends early in the run) cannot say I/O is small: io_matters is unknown, and the
  headline says what is known, what is missing and the setting that gives a complete log.
* When I/O matters and no cause is found, the headline gives the achieved rate and what bounds it, never a
  bare "no single cause stands out".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from iodiag.analysis import analyze
from iodiag.analysis.models import Report
from iodiag.evals.triggers import build_entry, load_entry
from iodiag.ingest import load_profile


def _report(spec: dict[str, Any], tmp: Path) -> Report:
    """Build the spec as the eval corpus does (``log_faults`` flags modules partial as Darshan would)."""
    path = tmp / f"{spec['name']}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return analyze(load_profile(str(build_entry(load_entry(path), tmp / "cache"))))


def _metadata_run(name: str, files: int, partial: bool) -> dict[str, Any]:
    """4 ranks of a 10-minute metadata benchmark whose recorded opens all fall in the first seconds."""
    spec: dict[str, Any] = {
        "name": name,
        "job": {"nprocs": 4, "runtime": 600.0, "exe": "./mdtest -n 25000", "mounts": [{"path": "/", "fs": "ext4"}]},
        "program": [
            {
                "ranks": "all",
                "files": "/scratch/md/{rank}/f{i}",
                "count_files": files,
                "op": "open_stat",
                "meta_seconds": 0.001,
            }
        ],
    }
    if partial:
        spec["log_faults"] = {"partial": ["POSIX"]}
    return spec


def test_a_module_out_of_records_makes_io_matters_unknown(tmp_path: Path) -> None:
    r = _report(_metadata_run("md-partial", 1024, partial=True), tmp_path)
    v = r.verdict
    assert v.io_matters is None and not r.finding("J01")
    # The first sentence holds the measured share and why it is only part of the job's I/O.
    first = v.headline.split(". ")[0]
    assert first.startswith(
        "Unknown whether I/O is why this job is slow: the recorded I/O took a negligible <1% of the "
    )
    assert "a lower bound" in first and "Darshan's POSIX module" in first and "records kept" in first
    assert "DARSHAN_MODMEM" in v.headline
    assert "look at computation" not in v.headline


def test_records_stopped_at_a_limit_early_in_the_run_are_unknown_too(tmp_path: Path) -> None:
    r = _report(_metadata_run("md-at-limit", 1024, partial=False), tmp_path)
    assert r.verdict.io_matters is None
    assert "stops at 1,024 records per process" in r.verdict.headline


def test_a_complete_log_with_little_io_still_says_not_io(tmp_path: Path) -> None:
    r = _report(_metadata_run("md-complete", 1000, partial=False), tmp_path)
    assert r.verdict.io_matters is False
    assert r.verdict.headline.startswith("I/O is not why this job is slow")


def test_io_that_matters_with_no_cause_gets_its_rate_and_bound(tmp_path: Path) -> None:
    spec = {
        "name": "ior-easy-healthy",
        "job": {
            "nprocs": 16,
            "nodes": 2,
            "runtime": 60.0,
            "exe": "./ior -a POSIX -F -t 4m -b 1g",
            "mounts": [{"path": "/lus/scratch", "fs": "lustre", "ost_count": 32}, {"path": "/", "fs": "ext4"}],
        },
        "files": [{"path": "/lus/scratch/u1/ior/data.{rank}", "lustre": {"stripe_size": "4MiB", "stripe_count": 1}}],
        "program": [
            {
                "ranks": "all",
                "file": "/lus/scratch/u1/ior/data.{rank}",
                "op": "write",
                "count": 256,
                "size": "4MiB",
                "seconds_per_op": 0.2,
            }
        ],
    }
    r = _report(spec, tmp_path)
    v = r.verdict
    assert v.io_matters is True
    if not v.causes:
        assert "no single cause stands out" not in v.headline
        assert "no pattern in the log is at fault" in v.headline and "/s" in v.headline


def test_heatmap_traffic_the_counters_lost_makes_io_matters_unknown(tmp_path: Path) -> None:
    """A log whose POSIX records of the second phase are gone (lost records), while the heatmap, with its own
    memory, still shows that phase's bytes: the counters cannot bound the run."""
    from iodiag.ingest.table import Table
    from iodiag.synth.fuzz import job_info
    from iodiag.synth.writer import write_log

    spec = {
        "name": "two-phases",
        "heatmap": True,
        "job": {"nprocs": 8, "runtime": 600.0, "exe": "./sim", "mounts": [{"path": "/", "fs": "ext4"}]},
        "program": [
            {"ranks": "all", "file": "/scratch/in/a.{rank}", "op": "write", "count": 2, "size": "4MiB"},
            {
                "ranks": "all",
                "file": "/scratch/out/b.{rank}",
                "op": "write",
                "count": 50,
                "size": "4MiB",
                "seconds_per_op": 1.0,
                "compute": 300,
            },
        ],
    }
    path = tmp_path / "two-phases.yaml"
    path.write_text(yaml.safe_dump(spec))
    whole = load_profile(str(build_entry(load_entry(path), tmp_path / "cache")), include=("HEATMAP",))
    assert analyze(whole).verdict.io_matters is True
    posix = whole.tables["POSIX"]
    keep = [i for i, rid in enumerate(posix["id"].tolist()) if "/in/" in whole.names[int(rid)]]
    tables: dict[str, Table] = {**whole.tables, "POSIX": posix.take(keep)}
    lost = tmp_path / "lost.darshan"
    write_log(lost, job_info(whole), dict(whole.names), tables)
    r = analyze(load_profile(str(lost), include=("HEATMAP",)))
    assert r.verdict.io_matters is None
    assert "while the heatmap shows I/O until" in r.verdict.headline
    # Without the heatmap nothing tells the log lost records: the counters are all there is.
    assert analyze(load_profile(str(lost))).verdict.io_matters is False
