"""Counts the report used to lack, answered in the first sentence: calls of one kind (fsync, stat, seek, read
and write switches) over the job or on one file, files of one kind ("how many json files?"), the slowest rank
on a file, and "is it I/O-bound?" as a judgement of share, not of whether I/O is worth fixing.

Every expected number is read from the log with PyDarshan here, not from iodiag's report."""

from __future__ import annotations

from functools import cache

import darshan
import pandas as pd
import pytest

from iodiag.analysis.models import IOShare, Report
from iodiag.core.settings import REPO_ROOT
from iodiag.narration import fact_query
from tests.conftest import shared_log, wheel_log
from tests.narration.test_fact_query import first_sentence, report
from tests.narration.test_narration_support import scenario_report

NONMPI = "darshan-logs/nonmpi_dxt_anonymized/nonmpi_dxt_anonymized.darshan"
SCENARIOS = REPO_ROOT / "evals" / "scenarios"


@cache
def counters(name: str, module: str) -> pd.DataFrame:
    path = shared_log(name) if "/" in name else wheel_log(name)
    with darshan.DarshanReport(str(path), read_all=True) as r:
        recs = r.records[module].to_df()
        names = r.name_records
    df = recs["counters"].merge(recs["fcounters"], on=["id", "rank"])
    df["path"] = df["id"].map(names)
    return df


@pytest.mark.parametrize(
    ("log", "question", "column"),
    [
        (NONMPI, "how many fsync calls?", "POSIX_FSYNCS"),
        (NONMPI, "number of stat calls", "POSIX_STATS"),
        (NONMPI, "how many read/write switches?", "POSIX_RW_SWITCHES"),
        ("sample.darshan", "how many seeks did the job do?", "POSIX_SEEKS"),
    ],
)
def test_a_count_of_calls_is_the_counter_summed_over_the_job(log: str, question: str, column: str) -> None:
    expected = int(counters(log, "POSIX")[column].clip(lower=0).sum())
    text = first_sentence(log, question)
    assert f"{expected:,} " in text and "POSIX" in text, text
    assert fact_query.parse(question) is not None and fact_query.parse(question).metric == "calls"  # type: ignore[union-attr]


def test_a_count_of_calls_on_one_file_is_that_files_counter() -> None:
    # vpicio.hdf5 is counted at MPI-IO, which has no seek counter: the seeks come from its POSIX records.
    df = counters("sample.darshan", "POSIX")
    seeks = int(df[df["path"].str.endswith("/vpicio.hdf5")]["POSIX_SEEKS"].sum())
    text = first_sentence("sample.darshan", "how many seeks on vpicio.hdf5?")
    assert text.startswith("`") and "vpicio.hdf5` had " in text and f"{seeks:,} seeks (counted at POSIX)" in text


def test_the_slowest_rank_on_a_named_file_is_darshans_slowest_rank() -> None:
    df = counters("sample.darshan", "MPI-IO")
    row = df[df["path"].str.endswith("/vpicio.hdf5") & (df["rank"] == -1)].iloc[0]
    text = first_sentence("sample.darshan", "which rank was slowest writing vpicio.hdf5?")
    assert text.startswith(f"Rank {int(row['MPIIO_SLOWEST_RANK'])} was the slowest on `"), text
    # "... and by how much?": against the fastest rank the shared record kept
    if int(row["MPIIO_FASTEST_RANK"]) != int(row["MPIIO_SLOWEST_RANK"]):
        assert f"on its fastest, rank {int(row['MPIIO_FASTEST_RANK'])}." in text, text


def test_files_of_one_kind_are_counted_by_their_name_pattern() -> None:
    # 4 ranks each open 1,000 case{i}.cfg files of their own and write one result.{rank} of 2 MiB.
    rep = scenario_report(SCENARIOS / "metadata-just-above-threshold.yaml")
    cfg = fact_query.answer(rep, fact_query.parse("how many cfg files did it open?"))  # type: ignore[arg-type]
    assert cfg is not None and cfg.text.startswith("The job did I/O on 4,000 files named `")
    assert "inputs/#/case#.cfg" in cfg.text
    out = fact_query.answer(rep, fact_query.parse("how many bytes went to the result files?"))  # type: ignore[arg-type]
    assert out is not None and out.text.startswith("The job wrote 8 MiB to 4 files named `/scratch/out/result.#`")
    # No file is named "output": every written file is the answer, not a group.
    assert fact_query.group_named(rep, "how many output files?") is None


def test_a_metadata_storm_names_the_files_most_calls_went_to() -> None:
    rep = scenario_report(SCENARIOS / "ranking-metadata-storm.yaml")
    storm = rep.finding("J03")
    assert storm is not None and storm.subject.startswith(
        "40,008 opens of 40,008 files, 40,000 of them `sweep/#/case#.json` on NFS; "
    )
    # The summed time a user adds up from the counters is in the subject too, against the data's
    assert "8.0 min of metadata calls summed over ranks against 63.1 ms of reads and writes" in storm.subject
    assert "40,000 of them" in rep.verdict.headline.split(". ")[0]


def _with_share(rep: Report, share: float) -> Report:
    s = rep.io_share
    assert s is not None
    io = share * s.runtime_s
    shared: IOShare = s.model_copy(update={"share_slowest": share, "slowest_rank_io_s": io})
    return rep.model_copy(update={"io_share": shared})


def test_io_bound_means_a_large_share_of_the_run_not_any_share_worth_fixing() -> None:
    rep = report("sample.darshan")
    assert rep.verdict.io_matters
    q = fact_query.parse("is my job I/O bound?")
    assert q is not None and q.bound
    small = fact_query.answer(_with_share(rep, 0.13), q)
    assert small is not None and small.text.startswith("No: I/O took 13% of the ") and "not I/O-bound" in small.text
    large = fact_query.answer(_with_share(rep, 0.6), q)
    assert large is not None and large.text.startswith("Yes: I/O took 60% of the ")
    # "Is I/O a problem?" is still whether it is worth fixing: 13% of the run is.
    problem = fact_query.parse("is I/O a problem here?")
    assert problem is not None and not problem.bound


def test_a_files_mean_request_size_is_its_bytes_over_its_calls() -> None:
    df = counters("sample.darshan", "MPI-IO")
    rows = df[df["path"].str.endswith("/vpicio.hdf5")]
    writes = int(rows[["MPIIO_INDEP_WRITES", "MPIIO_COLL_WRITES", "MPIIO_SPLIT_WRITES", "MPIIO_NB_WRITES"]].sum().sum())
    text = first_sentence("sample.darshan", "average write size to vpicio.hdf5?")
    assert text.startswith("On `") and f"in {writes:,} write calls" in text, text


def test_time_per_rank_says_what_a_shared_record_hides() -> None:
    # vpicio.hdf5 is one record for all 2,048 ranks: its slowest rank's time is what Darshan kept.
    df = counters("sample.darshan", "MPI-IO")
    row = df[df["path"].str.endswith("/vpicio.hdf5") & (df["rank"] == -1)].iloc[0]
    text = first_sentence("sample.darshan", "per rank write time")
    assert text.startswith("Darshan kept `") and "as one record for all 2,048 ranks" in text
    assert f"its slowest rank (rank {int(row['MPIIO_SLOWEST_RANK'])}) spent " in text
    # A why-question about each rank is about the job's verdict, not a table of times.
    assert fact_query.parse("why does each rank spend 4 s in I/O?") is None


def test_how_many_files_gives_each_interfaces_count_in_the_same_sentence() -> None:
    posix = counters(NONMPI, "POSIX")
    stdio = counters(NONMPI, "STDIO")

    def used(df: pd.DataFrame, prefix: str) -> int:
        moved = df[f"{prefix}_BYTES_READ"].clip(lower=0) + df[f"{prefix}_BYTES_WRITTEN"].clip(lower=0)
        time = sum(df[f"{prefix}_F_{k}_TIME"].clip(lower=0) for k in ("READ", "WRITE", "META"))
        names = df["path"]
        keep = ((moved > 0) | (time > 0)) & ~(names.str.startswith("<") & names.str.endswith(">"))
        return int(df[keep]["id"].nunique())

    text = first_sentence(NONMPI, "how many files?")
    assert f"{used(posix, 'POSIX'):,} at POSIX" in text and f"{used(stdio, 'STDIO'):,} at STDIO" in text


def test_the_logs_header_answers_program_version_and_modules() -> None:
    apmpi = "darshan-logs/apmpi/darshan-apmpi-2nodes-64mpi.darshan"
    with darshan.DarshanReport(str(shared_log(apmpi)), read_all=False) as r:
        modules = set(r.modules)
        version = r.metadata["job"]["metadata"].get("lib_ver") or ""
    text = first_sentence(apmpi, "Which Darshan modules are in this MILC log?")
    assert text.startswith("The log holds ") and all(m in text for m in modules if m != "DXT_POSIX"), text
    if version:
        assert first_sentence(apmpi, "which darshan version wrote this log?").startswith(f"Darshan {version} wrote")
    # An anonymized executable is said to be one, not read as a program name.
    anon = first_sentence("noposixopens.darshan", "What program produced this log?")
    assert anon.startswith("The log does not name the program: its executable is recorded only as an anonymized")


def test_which_rank_spent_the_most_time_is_the_busiest_rank() -> None:
    rep = report("sample-badost.darshan")
    s = rep.io_share
    assert s is not None and s.slowest_rank is not None
    text = first_sentence("sample-badost.darshan", "which rank was slowest and how long did it spend in I/O?")
    assert text.startswith(f"Rank {s.slowest_rank} spent the most time in I/O: "), text


def test_a_numbered_file_name_is_a_file_and_its_osts_are_answered() -> None:
    q = fact_query.parse("how many OSTs is dump.0253 striped over?")
    assert q is not None and q.metric == "stripe" and q.target == "dump.0253"
    q = fact_query.parse("which OST holds dump.0294?")
    assert q is not None and q.metric == "stripe"


def test_a_yes_no_question_about_a_group_of_files_counts_them() -> None:
    rep = scenario_report(SCENARIOS / "metadata-just-above-threshold.yaml")
    q = fact_query.parse_about("did the job actually read any data out of the cfg files?", rep)
    assert q is not None and q.metric == "group"
    fact = fact_query.answer(rep, q)
    assert fact is not None and fact.text.startswith("No: the job read 0 B from the 4,000 files named `")


def test_what_the_log_never_holds_is_said_plainly() -> None:
    for question in (
        "Was input.dat already in the page cache when the run started?",
        "did this job finish cleanly or crash?",
        "at what time did rank 17 issue its 100th write?",
        "which compute nodes did ranks 0-7 run on?",
    ):
        q = fact_query.parse(question)
        assert q is not None and q.metric == "not_recorded", question
    # "Is storage to blame?" is a judgement of the job, not a file-system lookup.
    blamed = fact_query.parse("my run took 35 minutes, is storage to blame?")
    assert blamed is None or blamed.metric != "file_system"


def test_how_many_files_the_log_lists_counts_every_record() -> None:
    log = "sample-dxt-simple.darshan"
    with darshan.DarshanReport(str(wheel_log(log)), read_all=True) as r:
        named = len(r.name_records)
    text = first_sentence(log, "how many files does the log list for this process?")
    assert text.startswith(f"The log names {named:,} file(s)"), text


def test_two_named_files_are_compared_by_their_slowest_rank() -> None:
    log = "darshan-logs/hdf5_diagonal_write_only/hdf5_diagonal_write_bytes_range_dxt.darshan"
    rep = report(log)
    files = {f.path.rsplit("/", 1)[-1]: f for f in rep.top_files}
    uuid, string = files["uuid.cpython-38.pyc"], files["string.cpython-38.pyc"]
    longer = max((uuid, string), key=lambda f: f.slowest_s or 0.0)
    text = first_sentence(log, "which takes longer: reading uuid.cpython-38.pyc or string.cpython-38.pyc?")
    assert text.startswith(f"`{longer.path}` takes longer: its slowest rank spent "), text
    # "Why does X take longer than Y?" stays a why-question about X.
    why = fact_query.parse("why does reading uuid.cpython-38.pyc take longer than string.cpython-38.pyc?")
    assert why is not None and why.metric == "file_why"


def test_sequential_reads_are_darshans_consecutive_and_sequential_counters() -> None:
    df = counters("sample.darshan", "POSIX")
    rows = df[df["path"].str.endswith("/vpicio.hdf5")]
    writes, consec = int(rows["POSIX_WRITES"].sum()), int(rows["POSIX_CONSEC_WRITES"].sum())
    text = first_sentence("sample.darshan", "were the vpicio.hdf5 writes sequential?")
    assert text.startswith(("Yes: ", "No: ")) and f"of the {writes:,} writes of `" in text, text
    assert f"{consec:,} started where the previous one ended" in text
    # "How do I fix ...?" is advice, not this count.
    assert fact_query.parse("how do I make the reads sequential?") is None


def test_how_much_each_rank_wrote_is_the_spread_over_ranks() -> None:
    q = fact_query.parse("how much did each rank write?")
    assert q is not None and q.metric == "rank_spread" and q.data
    rep = report(NONMPI)
    fact = fact_query.answer(rep, q)
    own = [u.bytes_written for u in rep.rank_table.ranks]
    # one rank with records of its own: it is named, not "each rank"
    only = rep.rank_table.ranks[0].rank
    assert fact is not None and len(own) == 1 and fact.text.startswith(f"Rank {only} wrote "), fact.text


def test_a_slow_rank_is_named_with_the_file_only_it_used() -> None:
    rep = scenario_report(SCENARIOS / "ranking-stdio-bulk-beside-random-reads.yaml")
    alone = [f for f in rep.top_files if f.only_rank == 0]
    assert alone, "rank 0 alone writes output.csv in this scenario"
    top = max(alone, key=lambda f: f.io_time_s)
    fact = fact_query.answer(rep, fact_query.parse("what is rank 0 doing?"))  # type: ignore[arg-type]
    assert fact is not None and f", most of it on `{top.path}` (" in fact.text.split(". ")[0], fact.text


def test_which_ranks_did_io_counts_the_ranks_with_records() -> None:
    q = fact_query.parse("which ranks did any I/O in this run?")
    assert q is not None and q.metric == "ranks_with_io"
    rep = report(NONMPI)
    fact = fact_query.answer(rep, q)
    assert fact is not None and fact.text.startswith("Rank 0, the job's only rank, did all of its I/O."), fact.text


def test_hosts_come_from_the_dxt_trace_and_are_unknown_without_it() -> None:
    from iodiag.analysis import analyze
    from iodiag.ingest import load_profile

    log = shared_log(
        "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
    )
    with darshan.DarshanReport(str(log), read_all=True) as r:
        hosts = {str(row["hostname"]) for row in r.records["DXT_POSIX"]}
    q = fact_query.parse("what host(s) did the job run on?")
    assert q is not None and q.metric == "not_recorded"
    traced = fact_query.answer(analyze(load_profile(str(log), include=("DXT",))), q)
    assert traced is not None and traced.text.startswith(
        f"The DXT trace names {len(hosts)} host(s) (the hostname of each rank's records): "
    )
    assert all(h in traced.text for h in hosts)
    counters_only = fact_query.answer(analyze(load_profile(str(log))), q)
    assert counters_only is not None and counters_only.text.startswith("The log does not record ")


def test_a_program_name_from_the_log_is_quoted_as_data() -> None:
    from iodiag.narration.checking.untrusted import quote

    rep = report(NONMPI)
    hostile = "./sim `rm -rf ~` <script>x</script>"
    forged = rep.model_copy(update={"job": rep.job.model_copy(update={"exe": hostile})})
    fact = fact_query.answer(forged, fact_query.parse("what program produced this log?"))  # type: ignore[arg-type]
    assert fact is not None and fact.text == f"The log was written by {quote(hostile)}, run on 1 rank(s)."
    assert "`rm -rf ~`" not in fact.text
