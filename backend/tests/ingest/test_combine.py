"""``iodiag analyze --combine``: one report over the logs of one job or workflow.

The DLIO logs are 12 logs of one run: a Python training job whose main process and data-loader
workers each wrote a log (one process each, started over about 80 seconds).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from iodiag.analysis import analyze
from iodiag.analysis.models import Report
from iodiag.analysis.views.heatmap import heatmaps, job_heatmap
from iodiag.ingest import JobProfile, load_profile
from iodiag.ingest.combine import CombineError, combine_notes, combine_profiles
from iodiag.ingest.table import Table
from iodiag.synth.build import build_log
from iodiag.synth.scenario import parse_scenario
from tests.cli.test_cli import assert_clean_stderr, error_lines, iodiag
from tests.conftest import shared_log

DLIO = sorted(shared_log("darshan-logs/dlio_logs").glob("*.darshan"))
HDF5_DXT = [
    shared_log("darshan-logs/hdf5_diagonal_write_only/hdf5_diagonal_write_1_byte_dxt.darshan"),
    shared_log("darshan-logs/hdf5_diagonal_write_only/hdf5_diagonal_write_bytes_range_dxt.darshan"),
]
IOR = [
    shared_log(
        "darshan-logs/ior_pnetcdf_hdf5/shane_ior-HDF5_id438090-438090_11-9-41522-17417065676046418211_1.darshan"
    ),
    shared_log(
        "darshan-logs/ior_pnetcdf_hdf5/shane_ior-PNETCDF_id438100-438100_11-9-41525-10280033558448664385_1.darshan"
    ),
]


@pytest.fixture(scope="module")
def dlio() -> list[JobProfile]:
    assert len(DLIO) == 12
    return [load_profile(str(p), include=("HEATMAP",)) for p in DLIO]


@pytest.fixture(scope="module")
def combined(dlio: list[JobProfile]) -> JobProfile:
    return combine_profiles(dlio)


@pytest.fixture(scope="module")
def reports(dlio: list[JobProfile], combined: JobProfile) -> tuple[Report, list[Report]]:
    return analyze(combined), [analyze(p) for p in dlio]


# --- the DLIO job: 12 logs, one report ---------------------------------------------------------------


def test_ranks_are_renumbered_distinct(dlio: list[JobProfile], combined: JobProfile) -> None:
    assert combined.meta.nprocs == sum(p.meta.nprocs for p in dlio) == 12
    # Each log is one process (rank 0): log i becomes rank i, in the order given.
    assert sorted(set(combined.tables["POSIX"]["rank"].tolist())) == list(range(12))
    for i, p in enumerate(dlio):
        ranks = combined.tables["POSIX"]["rank"]
        assert int((ranks == i).sum()) == len(p.tables["POSIX"])
    assert combined.meta.metadata["combined_logs"] == "12"
    assert str(DLIO[5]) in combined.meta.metadata["combined_sources"].split("\n")[5]


def test_times_span_earliest_start_to_latest_end(dlio: list[JobProfile], combined: JobProfile) -> None:
    start = min(p.meta.start for p in dlio)
    end = max(p.meta.end for p in dlio)
    assert (combined.meta.start, combined.meta.end) == (start, end)
    assert combined.meta.runtime_s == pytest.approx((end - start).total_seconds())
    # The logs started over about 80 s: the combined run is longer than any one of them.
    assert combined.meta.runtime_s > max(p.meta.runtime_s for p in dlio) + 20


def test_timestamps_move_onto_one_timeline(dlio: list[JobProfile], combined: JobProfile) -> None:
    last = dlio[-1]
    shift = (last.meta.start - combined.meta.start).total_seconds()
    assert shift > 60
    col = "POSIX_F_OPEN_START_TIMESTAMP"
    before = last.tables["POSIX"][col]
    posix = combined.tables["POSIX"]
    after = posix.where(posix["rank"] == 11)[col]
    np.testing.assert_allclose(after, np.where(before > 0, before + shift, 0.0))
    # Every event sits inside the combined run.
    stamps = np.stack([posix[c] for c in posix.columns if str(c).endswith("_TIMESTAMP")], axis=1)
    assert stamps.min() >= 0 and stamps.max() <= combined.meta.runtime_s + 1e-6


def test_bytes_are_the_sum_of_the_logs(reports: tuple[Report, list[Report]]) -> None:
    one, each = reports
    assert one.io_share is not None and all(r.io_share is not None for r in each)
    assert one.io_share.bytes_read == sum(r.io_share.bytes_read for r in each if r.io_share)
    assert one.io_share.bytes_written == sum(r.io_share.bytes_written for r in each if r.io_share)
    assert one.io_share.bytes_read > 50 << 30


def test_findings_cover_the_whole_job(reports: tuple[Report, list[Report]]) -> None:
    one, each = reports
    assert one.problems == []
    assert one.job.nprocs == 12
    assert sum(one.counts.model_dump().values()) == len(one.findings) > 0
    # Imbalance between the processes is only visible once they are ranks of one job.
    assert "J04" in one.codes()
    assert all("J04" not in r.codes() for r in each)
    j04 = one.finding("J04")
    assert j04 is not None and j04.ranks and all(0 <= r < 12 for r in j04.ranks)


def test_heatmap_keeps_every_byte_on_the_combined_timeline(dlio: list[JobProfile], combined: JobProfile) -> None:
    hm = job_heatmap(heatmaps(combined))
    parts = [job_heatmap(heatmaps(p)) for p in dlio]
    assert hm is not None and all(h is not None for h in parts)
    assert hm.bytes == sum(h.bytes for h in parts if h is not None)
    assert hm.ranks.tolist() == list(range(12))
    # The grid starts at the combined start and ends within a bin of its end.
    assert hm.n_bins * hm.bin_width <= combined.meta.runtime_s + 2 * hm.bin_width
    # The last log started over a minute later: its bytes are not in the first minute.
    row = hm.total[11]
    assert row[: int(60 / hm.bin_width)].sum() == 0 and row.sum() > 0


def test_notes_say_what_differs(dlio: list[JobProfile], combined: JobProfile) -> None:
    notes = combine_notes(combined)
    # The main process and the workers ran different command lines; the first log's is shown.
    assert any("different command lines" in n for n in notes)
    assert combined.meta.exe == dlio[0].meta.exe != dlio[-1].meta.exe
    assert combined.meta.jobid == 3116902  # all 12 share the job id


# --- refusals -------------------------------------------------------------------------------------------


def test_refuses_fewer_than_two(dlio: list[JobProfile]) -> None:
    with pytest.raises(CombineError, match="at least 2 logs"):
        combine_profiles(dlio[:1])
    with pytest.raises(CombineError):
        combine_profiles([])


def test_refuses_the_same_log_twice(dlio: list[JobProfile]) -> None:
    # The same log read twice (also under another name) would count its bytes twice.
    again = load_profile(str(DLIO[3]), include=("HEATMAP",))
    with pytest.raises(CombineError, match="same log") as exc:
        combine_profiles([dlio[3], dlio[4], again])
    assert "\n" not in str(exc.value)


def test_refuses_different_users_unless_forced(dlio: list[JobProfile]) -> None:
    other = replace(dlio[1], meta=dlio[1].meta.model_copy(update={"uid": dlio[0].meta.uid + 1}))
    with pytest.raises(CombineError, match="different users"):
        combine_profiles([dlio[0], other])
    forced = combine_profiles([dlio[0], other], force=True)
    assert forced.meta.uid == dlio[0].meta.uid
    assert any("different users" in n for n in combine_notes(forced))


def test_refuses_different_counter_sets(dlio: list[JobProfile]) -> None:
    tables = dict(dlio[1].tables)
    posix = tables["POSIX"]
    tables["POSIX"] = Table({c: posix[c] for c in posix.columns if c != "POSIX_MMAPS"}, len(posix))
    older = replace(dlio[1], tables=tables)
    with pytest.raises(CombineError, match="different POSIX counters"):
        combine_profiles([dlio[0], older])


def test_different_job_ids_give_job_id_zero(dlio: list[JobProfile]) -> None:
    other = replace(dlio[1], meta=dlio[1].meta.model_copy(update={"jobid": 7}))
    c = combine_profiles([dlio[0], other])
    assert c.meta.jobid == 0
    assert any("job ids" in n for n in combine_notes(c))


# --- MPI logs: shared records and traces ----------------------------------------------------------------


def test_shared_records_stay_shared_and_rank_counters_move() -> None:
    a, b = (load_profile(str(p), include=("HEATMAP",)) for p in IOR)
    c = combine_profiles([a, b])
    assert c.meta.nprocs == a.meta.nprocs + b.meta.nprocs == 8
    posix = c.tables["POSIX"]
    # Darshan reduced these files over all of one log's ranks: still rank -1, as the loader has them.
    assert (posix["rank"] == -1).sum() == (a.tables["POSIX"]["rank"] == -1).sum() + (
        b.tables["POSIX"]["rank"] == -1
    ).sum()
    # The second log's fastest and slowest ranks are its ranks 0-3, now 4-7.
    tail = posix.take(np.arange(len(a.tables["POSIX"]), len(posix)))
    for col in ("POSIX_FASTEST_RANK", "POSIX_SLOWEST_RANK"):
        assert tail[col].tolist() == [v + 4 if v >= 0 else v for v in b.tables["POSIX"][col].tolist()]
    # The two steps' HEATMAP ranks are distinct.
    assert sorted(set(c.tables["HEATMAP"]["rank"].tolist())) == list(range(8))


def test_traces_merge_with_distinct_ranks_and_shifted_times() -> None:
    a, b = (load_profile(str(p), include=("DXT",)) for p in HDF5_DXT)
    c = combine_profiles([a, b])
    ta, tb, tc = a.traces["DXT_POSIX"], b.traces["DXT_POSIX"], c.traces["DXT_POSIX"]
    assert len(tc) == len(ta) + len(tb) and tc.records == ta.records + tb.records
    assert set(np.unique(tc.rank).tolist()) == set(np.unique(ta.rank).tolist()) | {
        r + a.meta.nprocs for r in np.unique(tb.rank).tolist()
    }
    shift = (b.meta.start - c.meta.start).total_seconds()
    np.testing.assert_allclose(tc.start[len(ta) :], tb.start + shift)
    # File indices point at the same record ids as before.
    assert tc.record_ids()[len(ta) :].tolist() == tb.record_ids().tolist()
    assert set(tc.hostnames) == set(ta.hostnames) | {r + a.meta.nprocs for r in tb.hostnames}
    # Nodes are the distinct host names of both (steps may share nodes), never the logs' counts added.
    assert c.meta.nodes == len(set(ta.hostnames.values()) | set(tb.hostnames.values()))
    report = analyze(c)
    assert report.problems == []
    assert report.job.nprocs == 20


def _stack_log(tmp_path: Path, name: str, line: int) -> Path:
    spec = {
        "name": name,
        "dxt": True,
        "job": {"nprocs": 4, "mounts": [{"path": "/", "fs": "ext4", "block_size": "4KiB"}]},
        "program": [
            {"file": f"/s/{name}.dat", "op": "write", "count": 300, "size": "8KiB", "stack": [f"put a.c:{line}"]}
        ],
    }
    return build_log(parse_scenario(spec), tmp_path / f"{name}.darshan")


def test_call_stacks_merge_or_are_dropped(tmp_path: Path) -> None:
    a, b, other = (
        load_profile(str(_stack_log(tmp_path, n, line)), include=("DXT",))
        for n, line in (("a", 10), ("b", 10), ("c", 99))
    )
    # The same program: one source line, its segments from both logs' ranks.
    t06 = analyze(combine_profiles([a, b])).finding("T06")
    assert t06 is not None and t06.source_lines is not None
    assert [(s.file, s.line, s.segments, s.ranks) for s in t06.source_lines] == [("a.c", 10, 2400, 8)]
    # One address, two different lines: no merge is honest.
    c = combine_profiles([a, other])
    assert c.stacks is None and c.traces["DXT_POSIX"].stack is None
    assert any("call stacks dropped" in n for n in combine_notes(c))


def test_logs_far_apart_keep_a_bounded_heatmap() -> None:
    # Two releases' test runs, years apart: the heatmap is coarsened, never millions of bins.
    logs = [shared_log(f"darshan-logs/release_logs/mpi-io-test-x86_64-{v}.darshan") for v in ("3.4.0", "3.4.1")]
    a, b = (load_profile(str(p), include=("HEATMAP",)) for p in logs)
    c = combine_profiles([a, b])
    assert c.meta.runtime_s > timedelta(days=30).total_seconds()
    assert max(len(x) for x in c.tables["HEATMAP"]["write_bins"]) <= 1024
    hm = job_heatmap(heatmaps(c))
    parts = [job_heatmap(heatmaps(p)) for p in (a, b)]
    assert hm is not None and hm.bytes == sum(h.bytes for h in parts if h is not None)
    assert any("HEATMAP bins were added" in n for n in combine_notes(c))


# --- the command ----------------------------------------------------------------------------------------


def test_cli_combine_json() -> None:
    proc = iodiag("analyze", "--combine", "-f", "json", *DLIO)
    assert proc.returncode == 0, proc.stderr
    assert_clean_stderr(proc)
    report = json.loads(proc.stdout)
    assert isinstance(report, dict)  # one report, not an array of 12
    assert report["job"]["nprocs"] == 12
    assert report["io_share"]["bytes_read"] > 50 << 30
    assert "+ 11 more logs" in report["log_path"]
    assert "iodiag: note: " in proc.stderr and error_lines(proc) == []


def test_cli_combine_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "dlio.md"
    proc = iodiag("analyze", "--combine", "-f", "markdown", "-o", out, *DLIO[:4])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    text = out.read_text()
    assert "- **Ranks:** 4\n" in text and "+ 3 more logs" in text


def test_cli_combine_one_log_is_a_usage_error() -> None:
    proc = iodiag("analyze", "--combine", DLIO[0])
    assert proc.returncode == 2
    assert_clean_stderr(proc)
    assert error_lines(proc) == ["iodiag: error: --combine needs at least 2 logs, got 1"]
    assert proc.stdout == ""


def test_cli_combine_refuses_a_duplicate(tmp_path: Path) -> None:
    copy = tmp_path / "copy.darshan"
    shutil.copy(DLIO[0], copy)
    for args in ((DLIO[0], DLIO[1], DLIO[0]), (DLIO[0], DLIO[1], copy)):
        proc = iodiag("analyze", "--combine", *args)
        assert proc.returncode == 2
        assert_clean_stderr(proc)
        lines = error_lines(proc)
        assert len(lines) == 1 and "count its I/O twice" in lines[0]
        assert proc.stdout == ""


def test_cli_combine_unreadable_log(tmp_path: Path) -> None:
    zero = tmp_path / "zero.darshan"
    zero.write_bytes(b"")
    proc = iodiag("analyze", "--combine", DLIO[0], zero, DLIO[1])
    assert proc.returncode == 2
    assert_clean_stderr(proc)
    lines = error_lines(proc)
    assert len(lines) == 1 and str(zero) in lines[0]
    assert proc.stdout == ""  # no report that silently misses a log


def test_batch_combine_jobs_writes_one_parquet_row_per_job_and_resumes(tmp_path: Path) -> None:
    import pandas as pd

    single = shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.4.1.darshan")
    out = tmp_path / "out"
    args = ["batch", "--out", str(out), "--combine-jobs", "--workers", "1", str(DLIO[0].parent), str(single)]
    r = iodiag(*args)
    assert r.returncode == 0, r.stderr
    assert "13 logs: 2 analyzed" in r.stderr and "1 multi-log jobs combined" in r.stderr
    jobs = pd.read_parquet(out / "jobs").set_index("app")
    assert jobs.loc["python3", "nprocs"] == 12 and jobs.loc["mpi-io-test", "nprocs"] == 4
    again = iodiag(*args)
    assert again.returncode == 0 and "0 analyzed, 0 failed, 2 already analyzed" in again.stderr
    assert len(pd.read_parquet(out / "jobs")) == 2  # the combined job's key is stable: not analyzed twice

    store = iodiag("batch", "--combine-jobs", str(DLIO[0].parent))
    assert store.returncode == 2 and error_lines(store) == [
        "iodiag: error: --combine-jobs writes Parquet (--out DIR); the service's store holds one log per analysis"
    ]
