"""``iodiag batch`` and the service hook on a real Dask cluster: real logs, scenario logs and a bad one.

One LocalCluster (one worker process) serves the module through ``--scheduler``; one test starts
the command's own local cluster. Each result is checked against the same log analyzed in this
process, so the batch cannot pass by writing something plausible but different.
"""

from __future__ import annotations

import json
import logging
import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from iodiag.analysis import analyze
from iodiag.batch import system_report
from iodiag.batch.inputs import sha256_file
from iodiag.batch.parquet import read_frames
from iodiag.cli.main import app
from iodiag.ingest import load_profile
from iodiag.jobs import executor as dask_exec
from iodiag.jobs import pipeline
from iodiag.jobs.pipeline import JobError, PipelineInput
from iodiag.store import BlobStore, Database
from iodiag.store.models import Analysis, AnalysisFinding, AnalysisOutput, Job
from tests.batch.test_batch_report import scenario_log
from tests.conftest import shared_log, wheel_log

REAL = [
    shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.4.0.darshan"),
    wheel_log("sample-dxt-simple.darshan"),
]
BAD_REASON = (
    "the file is only 8 bytes, too short to be a Darshan log: it was cut short while being written or copied; "
    "copy it again once the job has finished"
)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR
    ) as cluster:
        yield cluster.scheduler_address
        dask_exec.close_clients()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 real logs, 2 scenario logs (P06; independent MPI-IO), 1 file that is not a log."""
    d = tmp_path_factory.mktemp("corpus")
    for p in REAL:
        shutil.copy(p, d / p.name)
    (d / "sub").mkdir()
    scenario_log(d / "sub" / "small.darshan", "small-writes-just-over-threshold", jobid=11)
    scenario_log(d / "sub" / "mpiio.darshan", "mpiio-independent-writes-just-over-threshold", jobid=12)
    (d / "bad.darshan").write_bytes(b"garbage\n")
    return d


def logs_in(d: Path) -> list[Path]:
    return sorted(p for p in d.rglob("*.darshan") if p.name != "bad.darshan")


def cli(args: list[str], **env: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, args, env=env or None)
    return result.exit_code, result.output


def local_codes(log: Path) -> list[str]:
    # The batch reads DXT by default (IODIAG_JOB_READ_DXT), as the service does.
    return [f.code for f in analyze(load_profile(str(log), include=("HEATMAP", "DXT"))).findings]


@pytest.fixture(scope="module")
def parquet_run(scheduler: str, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    out = tmp_path_factory.mktemp("pq") / "out"
    # The directory and a glob naming the same files: each log is analyzed once.
    code, output = cli(
        ["batch", str(corpus), f"{corpus}/*.darshan", "--scheduler", scheduler, "--out", str(out), "--no-uid-names"]
    )
    return out, code, output


@pytest.fixture(scope="module")
def store_run(scheduler: str, corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    data = tmp_path_factory.mktemp("data")
    code, output = cli(["batch", str(corpus), "--scheduler", scheduler, "--no-uid-names"], IODIAG_DATA_DIR=str(data))
    return data, code, output


def test_parquet_rows_match_the_analysis(parquet_run: tuple[Path, int, str], corpus: Path) -> None:
    out, code, output = parquet_run
    assert code == 1, output  # the bad log failed; the others did not
    assert f"bad.darshan: {BAD_REASON}" in output
    assert "4 analyzed, 1 failed, 0 already analyzed" in output
    jobs = pd.read_parquet(out / "jobs")
    findings = pd.read_parquet(out / "findings")
    assert sorted(jobs["status"]) == ["done"] * 4 + ["failed"]
    assert jobs.loc[jobs["status"] == "failed", "error"].tolist() == [BAD_REASON]
    for log in logs_in(corpus):
        sha = sha256_file(log)[0]
        row = jobs[jobs["sha256"] == sha].iloc[0]
        assert row["status"] == "done" and row["path"] == str(log)
        got = findings[findings["sha256"] == sha].sort_values("position")["code"].tolist()
        assert got == local_codes(log), log.name
    small = jobs[jobs["filename"] == "small.darshan"].iloc[0]
    assert (small["user"], small["uid"], small["app"], small["jobid"]) == ("1000", 1000, "app", "11")
    assert small["bytes_written"] == 1001 * 4096 and list(small["interfaces"]) == ["POSIX"]
    summary = json.loads(next((out / "runs").glob("*.json")).read_text())
    assert [f["error"] for f in summary["failures"]] == [BAD_REASON]


def test_parquet_resume_skips_what_was_done(parquet_run: tuple[Path, int, str], corpus: Path, scheduler: str) -> None:
    out, _, _ = parquet_run
    code, output = cli(["batch", str(corpus), "--scheduler", scheduler, "--out", str(out)])
    assert code == 1 and "0 analyzed, 1 failed, 4 already analyzed" in output, output
    jobs = pd.read_parquet(out / "jobs")
    assert (jobs["status"] == "done").sum() == 4 and (jobs["status"] == "failed").sum() == 2  # the bad log, retried
    frames = read_frames(out)
    assert len(frames.jobs) == 4 and frames.failed_logs == 1


def test_store_rows_are_the_services(store_run: tuple[Path, int, str], corpus: Path, tmp_path: Path) -> None:
    data, code, output = store_run
    assert code == 1 and f"bad.darshan: {BAD_REASON}" in output, output
    db = Database(f"sqlite:///{data / 'iodiag.db'}")
    blobs = BlobStore(data)
    with db.read() as s:
        rows = {r.filename: r for r in s.scalars(select(Analysis))}
        assert sorted(r.status for r in rows.values()) == ["done"] * 4 + ["failed"]
        bad = rows["bad.darshan"]
        assert (bad.owner, bad.error, bad.stage) == ("batch", BAD_REASON, "failed")
        assert s.scalar(select(func.count()).select_from(Job)) == 0  # nothing left queued for the service
        for log in logs_in(corpus):
            row = rows[log.name]
            sha, size = sha256_file(log)
            want = pipeline.run(
                PipelineInput(job_id=0, log_path=str(log), display_name=log.name, out_dir=str(tmp_path)),
                lambda _s, _p: None,
            )
            uid = json.loads(zlib.decompress((tmp_path / "json.z").read_bytes()))["job"]["uid"]
            assert (row.owner, row.submitted_by, row.source, row.sha256, row.size_bytes) == (
                str(uid),
                "batch",
                "path",
                sha,
                size,
            )
            assert (row.exe, row.job_id, row.n_critical, row.n_warning, row.n_info, row.n_ok) == (
                want.exe,
                want.jobid,
                *(want.counts[k] for k in ("critical", "warning", "info", "ok")),
            )
            got = s.execute(
                select(AnalysisFinding.code, AnalysisFinding.severity)
                .where(AnalysisFinding.analysis_id == row.id)
                .order_by(AnalysisFinding.position)
            ).all()
            assert [tuple(x) for x in got] == [tuple(x) for x in want.findings]
            outputs = {
                kind: content
                for kind, content in s.execute(
                    select(AnalysisOutput.kind, AnalysisOutput.content).where(AnalysisOutput.analysis_id == row.id)
                )
            }
            assert sorted(outputs) == sorted(pipeline.OUTPUT_KINDS)
            for kind in ("json", "markdown", "plots"):
                assert zlib.decompress(outputs[kind]) == zlib.decompress((tmp_path / f"{kind}.z").read_bytes()), kind
            assert blobs.path(sha).read_bytes() == log.read_bytes()
    db.dispose()


def test_store_resume_and_system_report_agrees_with_parquet(
    store_run: tuple[Path, int, str], parquet_run: tuple[Path, int, str], corpus: Path, scheduler: str
) -> None:
    data, _, _ = store_run
    code, output = cli(["batch", str(corpus), "--scheduler", scheduler], IODIAG_DATA_DIR=str(data))
    assert code == 1 and "0 analyzed, 1 failed, 4 already analyzed" in output, output
    db = Database(f"sqlite:///{data / 'iodiag.db'}")
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(Analysis)) == 5
        from_store = system_report.build(s)
    db.dispose()
    from_parquet = system_report.build(read_frames(parquet_run[0]))
    assert from_store.jobs == 4 and from_store.failed_logs == 1
    skip = {"generated_at", "source"}
    assert from_store.model_dump(exclude=skip) == from_parquet.model_dump(exclude=skip)
    assert any(c.code == "P06" for c in from_store.codes)

    out = data / "report.html"
    code, output = cli(["report-system", "--from-store", "-o", str(out)], IODIAG_DATA_DIR=str(data))
    assert code == 0, output
    assert "P06" in out.read_text() and "<svg" in out.read_text()


def test_own_local_cluster(tmp_path: Path) -> None:
    code, output = cli(["batch", str(REAL[0]), "--workers", "1", "--out", str(tmp_path / "o"), "--no-dxt"])
    assert code == 0, output
    assert "1 analyzed, 0 failed" in output and "on 1 worker threads" in output


def test_time_and_memory_limits(scheduler: str, tmp_path: Path) -> None:
    log = str(REAL[0])
    code, output = cli(["batch", log, "--scheduler", scheduler, "--out", str(tmp_path / "t"), "--timeout", "0.001"])
    assert code == 1 and "exceeded the time limit of 0.001 s" in output, output
    # A 400,000-segment trace is held whole for its analysis (about 160 bytes a segment): over 64 MiB.
    big = tmp_path / "big.darshan"
    code, output = cli(["synth", "--dxt-segments", "400000", "-o", str(big)])
    assert code == 0, output
    code, output = cli(
        ["batch", str(big), "--scheduler", scheduler, "--out", str(tmp_path / "m"), "--memory-limit", "64MiB"]
    )
    assert code == 1 and "exceeded the memory limit of 64 MiB" in output, output
    # And the worker recovers: the next batch on it succeeds.
    code, output = cli(["batch", log, "--scheduler", scheduler, "--out", str(tmp_path / "ok")])
    assert code == 0, output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/no/such/dir"], "no such file or directory"),
        (["/no/such/*.darshan"], "the pattern matches no file"),
        (["{tmp}"], "no Darshan logs found"),
        (["{log}", "--workers", "2", "--scheduler", "tcp://127.0.0.1:8786"], "--workers sizes the local cluster"),
        (["{log}", "--scheduler", "localhost"], "expected an address like tcp://HOST:8786"),
        (["{log}", "--memory-limit", "lots"], "not a size"),
        (["{log}", "--out", "{file}"], "exists and is not a directory"),
        (["{log}", "--owner", "a b"], "not a valid user name"),
        (["{log}", "--thresholds", "/no/such.toml"], "no such thresholds file"),
    ],
)
def test_bad_arguments_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    filled = [a.format(tmp=tmp_path, log=REAL[0], file=tmp_path / "f.txt") for a in args]
    code, output = cli(["batch", *filled], IODIAG_DATA_DIR=str(tmp_path / "data"))
    assert code == 2 and message in output, output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give exactly one source"),
        (["--from-store", "--parquet", "."], "give exactly one source"),
        (["--parquet", "{tmp}"], "no jobs/ directory"),
        (["--from-store", "--since", "yesterday"], "not a date"),
        (["--from-store", "-o", "{tmp}/report.pdf"], "cannot tell the format"),
    ],
)
def test_report_system_bad_arguments(args: list[str], message: str, tmp_path: Path) -> None:
    filled = [a.format(tmp=tmp_path) for a in args]
    if "-o" not in filled:
        filled += ["-o", str(tmp_path / "r.json")]
    code, output = cli(["report-system", *filled], IODIAG_DATA_DIR=str(tmp_path / "data"))
    assert code == 2 and message in output, output


def test_dask_exec_runs_the_service_pipeline(
    scheduler: str, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = corpus / REAL[1].name
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    spec = PipelineInput(
        job_id=7, log_path=str(log), display_name="job.darshan", out_dir=str(there), read_timeout_s=120
    )
    stages: list[str] = []
    got = dask_exec.run_on_dask(spec, lambda stage, _p: stages.append(stage), scheduler=scheduler)
    want = pipeline.run(spec.model_copy(update={"out_dir": str(here)}), lambda _s, _p: None)
    assert (got.exe, got.jobid, got.counts, got.findings) == (want.exe, want.jobid, want.counts, want.findings)
    assert sorted(got.outputs) == sorted(want.outputs)
    for kind, path in got.outputs.items():
        assert Path(path).parent == there  # where the pool reads them
        if kind != "html":  # the HTML report is the same document, but not compared byte for byte
            assert zlib.decompress(Path(path).read_bytes()) == zlib.decompress(Path(want.outputs[kind]).read_bytes())
    assert stages[0] == "reading"

    # As the service's worker calls it: the scheduler from the environment.
    monkeypatch.setenv("IODIAG_DASK_SCHEDULER", scheduler)
    assert dask_exec.run(spec, lambda _s, _p: None).findings == want.findings
    bad = spec.model_copy(update={"log_path": str(corpus / "bad.darshan")})
    with pytest.raises(JobError, match=r"^the file is only \d+ bytes, too short to be a Darshan log"):
        dask_exec.run(bad, lambda _s, _p: None)
    slow = spec.model_copy(update={"read_timeout_s": 0.001})
    with pytest.raises(JobError, match=r"exceeded the time limit of 0\.001 s"):
        dask_exec.run(slow, lambda _s, _p: None)
    # Without a scheduler it is the service's own pipeline, in this process.
    monkeypatch.delenv("IODIAG_DASK_SCHEDULER")
    assert dask_exec.run(spec.model_copy(update={"out_dir": str(here)}), lambda _s, _p: None).findings == want.findings
