"""Answers that read across layers or judge a figure: where collective I/O's time went above POSIX, how few
aggregators did a collective file's POSIX work, how many calls each rank made, whether the job is all reads,
whether metadata is the bulk of the time, and "is that real?" about a figure the log's corrupt records made.

Each scenario is built by the eval generator with a known construction (``evals/scenarios``); the expected
numbers are the report's own counters, read back through the models the answer is written from."""

from __future__ import annotations

from iodiag.core.settings import REPO_ROOT
from iodiag.narration import fact_query
from iodiag.narration.quantities import parse_quantities
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import scenario_report

SCENARIOS = REPO_ROOT / "evals" / "scenarios"


def _first(rep: object, question: str) -> str:
    text = Narrator().template_answer(rep, question).text  # type: ignore[arg-type]
    return text.split("\n")[0]


def _seconds(sentence: str) -> list[float]:
    return [q.value for q in parse_quantities(sentence) if q.dim == "seconds"]


def test_one_aggregator_under_collective_writes_is_named_with_its_bytes() -> None:
    rep = scenario_report(SCENARIOS / "collective-shared-file-one-ost-one-aggregator.yaml")
    f = next(x for x in rep.top_files if x.path.endswith("shared.ckpt"))
    assert f.posix_slowest is not None and f.posix_slowest.rank == 0
    # By construction rank 0 issues every POSIX write: the whole 2 GiB
    assert f.posix_slowest.bytes == f.bytes_written == 2 << 30
    first = _first(rep, "why does writing shared.ckpt take so long?")
    assert "rank 0 alone wrote 2.00 GiB of its 2.00 GiB (100%)" in first
    assert "one aggregator did the file system's work for all 64 ranks" in first
    assert "cb_nodes" in first


def test_where_collective_time_went_above_posix() -> None:
    rep = scenario_report(SCENARIOS / "ranking-collective-wait.yaml")
    f = next(x for x in rep.top_files if x.layer == "MPI-IO")
    q = fact_query.parse_about("MPI-IO took far longer than the POSIX writes under it, where did the rest go?", rep)
    assert q is not None and q.metric == "layer_gap"
    first = _first(rep, "MPI-IO took far longer than the POSIX writes under it, where did the rest go?")
    # Darshan kept one shared POSIX record beneath the MPI-IO file: the slowest rank's time at each layer
    assert f.posix_slowest is not None and f.slowest_s is not None
    assert f.posix_slowest.seconds < 0.5 * f.slowest_s
    said = _seconds(first)
    assert f"`{f.path}`" in first and "collective buffering" in first
    assert any(abs(s - f.slowest_s) <= 0.01 * f.slowest_s for s in said)
    assert any(abs(s - f.posix_slowest.seconds) <= 0.01 * f.posix_slowest.seconds for s in said)
    # The yes/no form answers no: most of the MPI-IO time is not in the POSIX calls
    yes_no = _first(rep, "is most of the MPI-IO write time spent in the POSIX writes?")
    assert yes_no.startswith("No: ")


def test_calls_per_rank_come_from_each_ranks_own_records() -> None:
    rep = scenario_report(SCENARIOS / "file-per-process-1024-ranks.yaml")
    rows = rep.rank_table.ranks
    writes = {u.writes for u in rows}
    assert len(writes) == 1 and next(iter(writes)) > 0
    n = next(iter(writes))
    first = _first(rep, "how many writes did each rank do and how big?")
    assert first.startswith(f"Each rank made {n:,} write calls of ")
    total = sum(u.writes for u in rows)
    assert f"({total:,} in all over the {len(rows):,} ranks with records of their own)" in first


def test_all_reads_and_read_much_are_judged_on_the_byte_split() -> None:
    rep = scenario_report(SCENARIOS / "file-per-process-1024-ranks.yaml")
    read = sum(i.own_bytes_read for i in rep.interfaces)
    written = sum(i.own_bytes_written for i in rep.interfaces)
    assert written > 0 and read < 0.1 * written  # a write-only job, by construction
    assert _first(rep, "is the I/O in this job all reads?").startswith("No: the job read ")
    assert _first(rep, "does this job read much input data?").startswith("No: ")
    assert _first(rep, "is it mostly writes?").startswith("Yes: the job wrote ")


def test_metadata_bulk_is_judged_on_its_share() -> None:
    rep = scenario_report(SCENARIOS / "metadata-storm-small-files.yaml")
    rows = [i for i in rep.interfaces if i.records]
    meta = sum(i.own_meta_s for i in rows)
    data = sum(i.own_read_s + i.own_write_s for i in rows)
    first = _first(rep, "is metadata the bulk of the I/O time?")
    assert first.startswith("Yes: " if meta >= data else "No: ")


def test_a_doubted_figure_from_corrupt_records_is_answered_no() -> None:
    rep = scenario_report(SCENARIOS / "log-corrupt-posix-records.yaml")
    assert rep.finding("D04") is not None
    doubted = _first(rep, "rank 3 shows almost 2 trillion seconds of I/O, is that real?")
    assert doubted.startswith("No: the log holds corrupt records")
    # A figure the valid records give is not denied: each rank wrote 16 x 4 MiB = 64 MiB
    held = _first(rep, "rank 3 wrote 64 MiB, is that right?")
    assert not held.startswith("No")
    assert "64.00 MiB" in held
