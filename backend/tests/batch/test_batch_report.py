"""The system report on a hand-checkable set of scenario logs (no Dask: analyzed in this process).

Three jobs: A and B make 1,001 small writes (P06, no MPI-IO: M01), C writes 1,008 small interleaved
pieces through independent MPI-IO (M03, M07, and P06: the same small writes reach POSIX). None of the
logs records its node count, so each job counts as one node.
A: 1 h, 2024-03-01, /apps/bin/writer, uid 1001. B: 30 min, 2024-03-02, ./writer, uid 1002.
C: 2 h, 2024-03-02, /apps/solver, uid 1001.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from iodiag.analysis import analyze
from iodiag.batch import system_html, system_report
from iodiag.batch.engine import BatchSummary
from iodiag.batch.frames import Frames, user_name
from iodiag.batch.inputs import LogItem, sha256_file
from iodiag.batch.parquet import ParquetSink, read_frames
from iodiag.ingest import load_profile
from iodiag.jobs import report_facts as facts_mod
from iodiag.jobs.models import TaskResult
from iodiag.synth.build import build_log
from iodiag.synth.scenario import load_scenario
from tests.conftest import REPO

SCENARIOS = REPO / "evals" / "scenarios"
EVIL = "evil<script>alert('x')&\""  # no "/": the application is the command's basename


def scenario_log(out: Path, spec: str, **job: Any) -> Path:
    sc = load_scenario(SCENARIOS / f"{spec}.yaml")
    if "start" in job:
        job["start"] = int(job["start"].timestamp())
    build_log(sc.model_copy(update={"job": sc.job.model_copy(update=job)}), out)
    return out


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("report-logs")
    small, mpiio = "small-writes-just-over-threshold", "mpiio-independent-writes-just-over-threshold"
    return {
        "A": scenario_log(
            d / "a.darshan",
            small,
            jobid=1,
            runtime=3600.0,
            uid=1001,
            exe="/apps/bin/writer --x",
            start=datetime(2024, 3, 1, 10, tzinfo=UTC),
        ),
        "B": scenario_log(
            d / "b.darshan",
            small,
            jobid=2,
            runtime=1800.0,
            uid=1002,
            exe="./writer",
            start=datetime(2024, 3, 2, 10, tzinfo=UTC),
        ),
        "C": scenario_log(
            d / "c.darshan",
            mpiio,
            jobid=3,
            runtime=7200.0,
            uid=1001,
            exe="/apps/solver -n 8",
            start=datetime(2024, 3, 2, 12, tzinfo=UTC),
        ),
    }


def _analyzed(path: Path) -> tuple[Any, Any]:
    return facts_mod.from_report(analyze(load_profile(str(path), include=("HEATMAP",))).model_dump(mode="json"))


def _frames(paths: list[Path], user: str | None = None) -> Frames:
    jobs, findings = [], []
    for p in paths:
        f, fs = _analyzed(p)
        sha = sha256_file(p)[0]
        jobs.append({"sha256": sha, "user": user or user_name(f.uid, resolve=False), **f.model_dump()})
        findings.extend(
            {
                "sha256": sha,
                "code": x.code,
                "severity": x.severity,
                "layer": x.layer,
                "title": x.title,
                "seconds": x.seconds,
            }
            for x in fs
        )
    return Frames.from_records(jobs, findings)


def _code(report: system_report.SystemReport, code: str) -> system_report.CodeStats:
    return next(c for c in report.codes if c.code == code)


def test_the_set_is_what_the_docstring_says(logs: dict[str, Path]) -> None:
    codes = {k: {f.code for f in _analyzed(p)[1]} for k, p in logs.items()}
    assert "P06" in codes["A"] and "P06" in codes["B"] and "P06" in codes["C"]
    assert {"M03", "M07"} <= codes["C"] and "M01" in codes["A"] and "M01" not in codes["C"]


def test_report_numbers(logs: dict[str, Path]) -> None:
    report = system_report.build(_frames(list(logs.values())))
    assert report.jobs == 3
    p06 = _code(report, "P06")
    # Drishti's rule holds on both, but 1,001 small writes cost well under 1 % of an hour: not critical.
    assert p06.jobs == 3 and p06.jobs_critical == 0
    a_f, b_f, c_f = (_analyzed(logs[k])[1] for k in "ABC")
    lost = [x.seconds for x in [*a_f, *b_f, *c_f] if x.code == "P06"]
    assert p06.seconds_lost == pytest.approx(sum(lost)) and p06.node_hours_lost == pytest.approx(sum(lost) / 3600)
    assert round(p06.pct_all_jobs, 1) == 100.0
    # P06 reads POSIX, DFS or STDIO requests: its jobs are those with any of the modules.
    assert (
        p06.requires == ["POSIX", "DFS", "STDIO"]
        and p06.interface_jobs == 3
        and round(p06.pct_interface_jobs or 0, 1) == 100.0
    )
    assert p06.node_hours_at_stake == pytest.approx(1.0 + 0.5 + 2.0)  # nodes unknown: 1 each
    a, b, c = (_analyzed(logs[k])[0] for k in "ABC")
    assert a.bytes_read + a.bytes_written + b.bytes_read + b.bytes_written == 2 * 1001 * 4096
    assert p06.bytes_at_stake == sum(x.bytes_read + x.bytes_written for x in (a, b, c))
    assert p06.io_time_s_at_stake == pytest.approx(a.io_time_s + b.io_time_s + c.io_time_s)
    assert [(t.name, t.jobs) for t in p06.top_apps] == [("writer", 2), ("solver", 1)]
    assert [(t.name, t.jobs) for t in p06.top_users] == [("1001", 2), ("1002", 1)]
    assert [(p.day, p.jobs, p.all_jobs) for p in p06.trend] == [(date(2024, 3, 1), 1, 1), (date(2024, 3, 2), 2, 2)]

    # MPI-IO codes are counted over the jobs that use MPI-IO: only C.
    m03 = _code(report, "M03")
    assert (m03.jobs, m03.interface_jobs, m03.pct_interface_jobs) == (1, 1, 100.0)
    assert round(m03.pct_all_jobs, 1) == 33.3 and m03.node_hours_at_stake == pytest.approx(2.0)
    assert [t.name for t in m03.top_apps] == ["solver"]
    assert _code(report, "M01").interface_jobs == 3  # "no MPI-IO" needs no module: over all jobs
    assert report.node_hours == pytest.approx(3.5) and report.jobs_nodes_unknown == 3
    assert report.interfaces["MPI-IO"] == 1 and report.interfaces["POSIX"] == 3
    assert [(d.day, d.jobs, d.jobs_with_critical) for d in report.days] == [
        (date(2024, 3, 1), 1, 0),
        (date(2024, 3, 2), 2, 0),
    ]
    # Prevalence weighted by time lost: the most node-hours lost first.
    lost_order = [c.node_hours_lost for c in report.codes]
    assert lost_order == sorted(lost_order, reverse=True)


def test_window(logs: dict[str, Path]) -> None:
    frames = _frames(list(logs.values()))
    later = system_report.build(frames, since=date(2024, 3, 2))
    assert later.jobs == 2 and _code(later, "P06").jobs == 2 and _code(later, "P06").pct_all_jobs == 100.0
    first_day = system_report.build(frames, until=date(2024, 3, 1))  # a date: that day included
    assert first_day.jobs == 1 and first_day.until == datetime(2024, 3, 2, tzinfo=UTC)
    none = system_report.build(frames, since=datetime(2025, 1, 1, tzinfo=UTC))
    assert none.jobs == 0 and none.codes == [] and "no analyzed jobs" in none.notes[-1]
    assert "<h1>" in system_html.render(none)


def test_parquet_round_trip(logs: dict[str, Path], tmp_path: Path) -> None:
    """Through the Parquet sink and back: the same report as from the analyses themselves."""
    sink = ParquetSink(tmp_path, "run1", uid_names=False, flush_every=2)
    for p in logs.values():
        sha, size = sha256_file(p)
        f, fs = _analyzed(p)
        sink.add(LogItem(p, sha, size), TaskResult(path=str(p), sha256=sha, ok=True, facts=f, findings=fs))
    sink.add(
        LogItem(tmp_path / "bad.darshan", "f" * 64, 3),
        TaskResult.failure(str(tmp_path / "bad.darshan"), "f" * 64, "too short to be a Darshan log (3 bytes)"),
    )
    sink.close(BatchSummary(run_id="run1", started_at=datetime.now(UTC), output=str(tmp_path)))
    assert len(list((tmp_path / "jobs").glob("part-*.parquet"))) == 2  # flushed every 2 rows
    assert sink.done([sha256_file(p)[0] for p in logs.values()] + ["f" * 64]) == {
        sha256_file(p)[0] for p in logs.values()
    }
    frames = read_frames(tmp_path)
    assert frames.failed_logs == 1 and len(frames.jobs) == 3
    got = system_report.build(frames).model_dump(exclude={"generated_at", "source"})
    want = system_report.build(_frames(list(logs.values()))).model_dump(exclude={"generated_at", "source"})
    assert got == want | {"failed_logs": 1}


def test_html_escapes_strings_from_logs(tmp_path: Path) -> None:
    log = scenario_log(tmp_path / "evil.darshan", "small-writes-just-over-threshold", exe=f"/apps/{EVIL} --run")
    report = system_report.build(_frames([log], user='"><img src=x onerror=alert(1)>'))
    assert _code(report, "P06").top_apps[0].name == EVIL  # the name itself is kept, only the page escapes it
    page = system_html.render(report)
    assert "<script" not in page and "<img" not in page and "onerror=alert(1)>" not in page
    assert "evil&lt;script&gt;alert(&#x27;x&#x27;)&amp;&quot;" in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    # Self-contained: nothing loaded from elsewhere.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert page.count("<svg") >= 2
