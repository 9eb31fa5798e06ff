"""Answers that read across layers or judge a figure: where collective I/O's time went above POSIX, how few
aggregators did a collective file's POSIX work, how many calls each rank made, whether the job is all reads,
whether metadata is the bulk of the time, and "is that real?" about a figure the log's corrupt records made.

Each scenario is built by the eval generator with a known construction (``evals/scenarios``); the expected
numbers are the report's own counters, read back through the models the answer is written from."""

from __future__ import annotations

from iodiag.core.settings import REPO_ROOT
from iodiag.narration import fact_query
from iodiag.narration.checking.quantities import parse_quantities
from iodiag.narration.service import Narrator
from tests.narration.pydarshan_child import pydarshan_json, report
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
    assert "rank 0 alone wrote 2 GiB of its 2 GiB (100%)" in first
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
    assert "64 MiB" in held


def test_requests_of_a_named_size_are_counted_from_the_size_table() -> None:
    rep = scenario_report(SCENARIOS / "rank-io-imbalance-serial-input-read.yaml")
    four = next(a for a in rep.rank_table.access_sizes if a.size == 4 << 20)
    posix = next(i for i in rep.interfaces if i.name == "POSIX")
    first = _first(rep, "how many 4 MiB writes did the job do?")
    # Reads and writes share Darshan's size table: the answer says so and gives both kinds' counts
    assert first.startswith(f"{four.count:,} POSIX requests were 4 MiB")
    assert f"{posix.calls.writes:,} write calls and {posix.calls.reads:,} read calls" in first


def test_why_so_many_writes_names_the_module_and_size_that_made_them() -> None:
    rep = scenario_report(SCENARIOS / "stdio-rank0-output-among-posix-readers.yaml")
    stdio = next(i for i in rep.interfaces if i.name == "STDIO")
    size = stdio.own_bytes_written / stdio.calls.writes
    first = _first(rep, "why does it make so many writes?")
    assert first.startswith("Because the requests are small: most writes went through STDIO: ")
    assert f"{stdio.calls.writes:,} of " in first
    said = [q.value for q in parse_quantities(first) if q.dim == "bytes"]
    assert any(abs(b - size) <= 0.01 * size for b in said)


def test_the_other_ranks_did_no_io_when_one_rank_holds_every_record() -> None:
    rep = scenario_report(SCENARIOS / "stdio-text-output.yaml")
    n = rep.job.nprocs
    assert len(rep.rank_table.ranks) == n and not rep.rank_table.shared_files
    assert _first(rep, "were the other ranks doing any I/O?") == (
        f"Yes: {n:,} of the job's {n:,} ranks have I/O records of their own."
    )
    # The same job with rank 0's records alone (as a log where only rank 0 wrote reads): the others did none
    t = rep.rank_table
    lone = rep.model_copy(update={"rank_table": t.model_copy(update={"ranks": [t.ranks[0]]})})
    assert _first(lone, "were the other 7 ranks writing anything?") == (
        f"No: only rank {t.ranks[0].rank} has I/O records; the other {n - 1:,} of the job's {n:,} ranks did none."
    )


def test_no_pattern_at_fault_says_the_order_is_unknown_without_offset_counters() -> None:
    rep = scenario_report(SCENARIOS / "ranking-dfs-io-matters.yaml")
    assert not rep.verdict.causes
    assert rep.verdict.headline.endswith(
        "whether its requests were sequential or random is unknown: DFS keeps no offset counters."
    )
    # A POSIX job keeps SEQ/CONSEC counters: its order is known, and the headline does not hedge it
    posix = scenario_report(SCENARIOS / "file-per-process-1024-ranks.yaml")
    assert "no offset counters" not in posix.verdict.headline


def test_each_ranks_share_of_a_shared_file_comes_from_the_two_ranks_darshan_kept() -> None:
    rep = scenario_report(SCENARIOS / "rank-io-imbalance-serial-input-read.yaml")
    f = next(x for x in rep.top_files if x.path.endswith("wrfout_d01.bin"))
    assert f.kept_fastest is not None and f.kept_slowest is not None
    # By construction every rank writes its 1 GiB block: both ends of the shared record hold 1 GiB
    assert f.kept_fastest.bytes == f.kept_slowest.bytes == 1 << 30
    first = _first(rep, "did every rank write the same amount to wrfout_d01.bin?")
    assert first.startswith("Yes: every one of `/lus/scratch/wrf/wrfout_d01.bin`'s 32 ranks wrote 1 GiB")
    assert "keeps only the fastest and the slowest rank" in first
    assert _first(rep, "how much did each rank write to wrfout_d01.bin?").startswith("Every one of ")


def test_a_judgement_of_the_log_is_read_from_its_last_clause() -> None:
    rep = scenario_report(SCENARIOS / "log-corrupt-posix-records.yaml")
    assert _first(rep, "something looks off in this log, are the records consistent?").startswith("No: ")
    assert _first(rep, "the records look consistent, or is something off with this log?").startswith("Yes: ")


def test_collective_counts_of_a_named_file_are_that_files_own() -> None:
    rep = scenario_report(SCENARIOS / "collective-shared-file-one-ost-one-aggregator.yaml")
    xl = rep.cross_layer
    assert xl is not None
    mpi = next(f for f in xl.files if f.path.endswith("shared.ckpt")).layer("MPI-IO")
    assert mpi is not None and mpi.collective_writes
    first = _first(rep, "were the writes to shared.ckpt done collectivly?")
    assert first == (
        f"Yes: {mpi.collective_writes:,} collective and {mpi.independent_writes or 0:,} independent MPI-IO writes to "
        "`/lus/scratch/ckpt/shared.ckpt`."
    )


def test_a_single_ost_names_the_ost() -> None:
    rep = scenario_report(SCENARIOS / "collective-shared-file-one-ost-one-aggregator.yaml")
    l01 = rep.finding("L01")
    assert l01 is not None and "on stripe count 1 (OST 7), " in l01.subject


def test_the_byte_split_between_two_named_interfaces() -> None:
    rep = scenario_report(SCENARIOS / "stdio-rank0-output-among-posix-readers.yaml")
    rows = {i.name: i.own_bytes_read + i.own_bytes_written for i in rep.interfaces if i.counted}
    top = max(rows, key=lambda k: rows[k])
    first = _first(rep, "what share of the bytes went through stdio vs posix?")
    assert first.startswith(f"{top} did most of the I/O: ")


def test_several_osts_is_judged_on_the_stripe_count() -> None:
    rep = scenario_report(SCENARIOS / "collective-shared-file-one-ost-one-aggregator.yaml")
    # One stripe: "more than one OST" is no, though the question holds the words "one OST"
    assert _first(rep, "is shared.ckpt striped over more than one OST?").startswith("No: ")
    assert _first(rep, "is shared.ckpt on a single OST?").startswith("Yes: ")


_STDOUT = r"""
import json, sys
import darshan
with darshan.DarshanReport(sys.argv[1], read_all=True) as r:
    d = r.records["STDIO"].to_df()["counters"]
    ids = [i for i, n in r.name_records.items() if n == "<STDOUT>"]
    row = d[d["id"].isin(ids)]
    print(json.dumps({"bytes": int(row["STDIO_BYTES_WRITTEN"].sum()), "writes": int(row["STDIO_WRITES"].sum())}))
"""


def test_how_much_a_job_printed_is_its_stdout_record() -> None:
    name = "darshan-logs/apmpi/darshan-apmpi-2nodes-64mpi.darshan"
    truth = pydarshan_json(_STDOUT, name)
    assert truth["bytes"] > 0
    first = _first(report(name), "how much did it print to stdout?")
    assert first.startswith("`<STDOUT>`: ")
    assert f"{truth['writes']:,} write calls" in first
    said = [q.value for q in parse_quantities(first) if q.dim == "bytes"]
    assert any(abs(b - truth["bytes"]) <= 0.01 * truth["bytes"] for b in said)


def test_small_requests_give_the_count_per_rank_beside_the_total() -> None:
    # 64 ranks each write 1,000,000 / 64 = 15,625 small pieces: the count one rank's own record shows
    rep = scenario_report(SCENARIOS / "dfs-small-writes-shared.yaml")
    small = rep.finding("P06")
    assert small is not None
    n = next(m.value for m in small.evidence if m.name == "small_writes")
    assert small.subject.startswith(f"{n:,.0f} writes ({n / rep.job.nprocs:,.0f} per rank on average)")
    # Four ranks each reading 400 samples
    serial = scenario_report(SCENARIOS / "ml-training-many-small-samples.yaml")
    p05 = serial.finding("P05")
    assert p05 is not None and "(400 per rank on average)" in p05.subject


def test_a_yes_or_no_stays_first_on_a_partial_log() -> None:
    rep = scenario_report(SCENARIOS / "metadata-storm-small-files.yaml")
    partial = rep.model_copy(
        update={
            "job": rep.job.model_copy(
                update={"modules": [m.model_copy(update={"partial": True}) for m in rep.job.modules]}
            )
        }
    )
    first = _first(partial, "is metadata a bigger chunk of the I/O time than reading?")
    assert first.startswith(("Yes: the log is incomplete (", "No: the log is incomplete ("))


def test_bytes_per_rank_where_every_rank_wrote_one_shared_file() -> None:
    # No rank has a record of its own: the answer is what the shared record kept per rank, not "no finding"
    rep = scenario_report(SCENARIOS / "ranking-collective-wait.yaml")
    assert not rep.rank_table.ranks
    f = next(x for x in rep.top_files if x.path.endswith("field.0001.dat"))
    assert f.kept_slowest is not None and f.kept_slowest.bytes == 256 << 20
    first = _first(rep, "how much did each rank write?")
    assert first.startswith("Every one of `/lus/scratch/s3d/field.0001.dat`'s 64 ranks wrote 256 MiB")
