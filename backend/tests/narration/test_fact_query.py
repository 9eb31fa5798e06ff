"""Plain fact questions are answered in the first sentence from the log's own numbers (issue 28).

Real logs: sample-badost (2,048 IOR ranks, 256 MiB each to its own file, one slow OST), sample-goodost (the
healthy control) and an HDF5 run. Truths come from PyDarshan, computed here beside each assertion.
"""

from __future__ import annotations

import re
from functools import cache

import darshan
import pytest

from iodiag.analysis import analyze
from iodiag.analysis.models import Report
from iodiag.core.units import human_seconds
from iodiag.ingest import load_profile
from iodiag.narration import fact_query
from iodiag.narration.checking.verifier import split_sentences
from iodiag.narration.service import Narrator
from tests.conftest import shared_log, wheel_log

HDF5_LOG = "darshan-logs/hdf5_diagonal_write_only/hdf5_diagonal_write_bytes_range_dxt.darshan"


@cache
def report(name: str) -> Report:
    path = shared_log(name) if "/" in name else wheel_log(name)
    return analyze(load_profile(str(path)))


def first_sentence(name: str, question: str) -> str:
    text = Narrator().template_answer(report(name), question).text
    _, sentences = next(iter(split_sentences(text)))
    return sentences[0]


@pytest.mark.parametrize(
    ("question", "metric", "target"),
    [
        ("did it use HDF5?", "uses", "HDF5"),
        ("which interface did most of the I/O?", "top_interface", None),
        ("how many bytes did rank 3 write", "bytes", "3"),
        ("how long did rank 2 spend writing", "time", "2"),
        ("why is rank 0 so slow??", "slow_rank", "0"),
        ("what filesystem was the output file on?", "file_system", None),
        ("stripe?", "stripe", None),
        ("Is any OST slow?", "slow_ost", None),
        ("Could a single bad OST be dragging this job down?", "slow_ost", None),
        ("are any of the OSTs underperforming in this run?", "slow_ost", None),
        ("why did writing take so much longer than reading?", "write_vs_read", None),
        ("how many ranks?", "ranks", None),
        ("How many GB did my run write to disk", "bytes", None),
        ("How many bytes were read in total accross all files?", "bytes", None),
        ("was more time spent writing or reading?", "write_vs_read", None),
        ("did reads or writes dominate the I/O time", "write_vs_read", None),
        ("Which file is the hotspot in terms of I/O time?", "top_file", None),
        ("which files were read and written, and how much each?", "file_list", None),
        ("number of lustre OSTs used across all files?", "osts", None),
        ("Is my job spending most of its time in IO?", "io_bound", None),
        ("can I trust the counters in this log?", "completeness", None),
        ("which high-level I/O library did it use?", "interfaces", None),
        ("write bandwith?", "rate", None),
        ("did it use colective writes", "collective", None),
        ("were the writes small?", "small_requests", None),
        ("is any rank slower than the others", "any_slow_rank", None),
        ("hdf5?", "uses", "HDF5"),
        ("number of ranks", "ranks", None),
        ("how long was spent writing traj.xyz", "file_usage", "traj.xyz"),
        ("bytes read from eos_table.h5", "file_usage", "eos_table.h5"),
        ("any missing data in this darshan log?", "completeness", None),
        ("how do i speed up writing the history file", None, None),
        ("is I/O a big deal in this athena run", "io_bound", None),
        ("should I worry about I/O in this run?", "io_bound", None),
        ("which hostname did rank 0 run on?", "not_recorded", "hostname"),
        ("why is writing plotfile_0478.nc so slow?", "file_why", "plotfile_0478.nc"),
        ("average size of a write?", "request_size", None),
        ("ranks?", "ranks", None),
        ("did macsio write collectively?", "collective", None),
        ("was any data dropped from this log?", "completeness", None),
    ],
)
def test_questions_become_queries(question: str, metric: str | None, target: str | None) -> None:
    q = fact_query.parse(question)
    if metric is None:  # advice, not a fact: the finding-centred answer leads
        assert q is None or q.metric not in ("rate", "bytes"), q
        return
    assert q is not None and q.metric == metric and q.target == target


def test_finding_questions_are_not_fact_queries() -> None:
    assert fact_query.parse("why is my job slow?") is None
    assert fact_query.parse("how do I fix the small writes?") is None


def test_rank_bytes_are_the_ranks_own_records() -> None:
    log = darshan.DarshanReport(str(wheel_log("sample-badost.darshan")), read_all=True)
    df = log.records["POSIX"].to_df()["counters"]
    truth = int(df[df["rank"] == 3]["POSIX_BYTES_WRITTEN"].sum())
    assert truth == 256 * 2**20
    first = first_sentence("sample-badost.darshan", "how many bytes did rank 3 write")
    assert first.startswith("Rank 3 wrote 256 MiB")


def test_a_rank_question_says_what_a_shared_record_hides() -> None:
    text = Narrator().template_answer(report("sample-badost.darshan"), "how many bytes did rank 3 write").text
    assert "fastest and slowest rank" in text and "not recorded" in text


def test_a_rank_that_is_not_slow_is_told_so() -> None:
    first = first_sentence("sample-badost.darshan", "why is rank 0 slow")
    assert first.startswith("Rank 0 is not slow")


def test_a_missing_rank_is_named_as_missing() -> None:
    assert "there is no rank 99" in first_sentence(HDF5_LOG, "how many bytes did rank 99 write?")


def test_yes_no_questions_start_with_yes_or_no() -> None:
    assert first_sentence(HDF5_LOG, "did it use HDF5?").startswith("Yes: HDF5")
    assert first_sentence("sample-badost.darshan", "did it use HDF5?").startswith("No: the log has no HDF5")
    assert first_sentence("sample-badost.darshan", "is any OST slow?").startswith("Yes: OST 14")
    assert first_sentence("sample-goodost.darshan", "is one of the OSTs slow?").startswith("No: none of the 24 OSTs")


def test_the_interface_that_moved_most_bytes_leads() -> None:
    first = first_sentence("sample-badost.darshan", "which interface did most of the I/O?")
    assert first.startswith("POSIX did most of the I/O: 512 GiB")


def test_fact_answers_pass_the_verifier() -> None:
    # Every number of the lead is a fact value: the verifier keeps the sentence whole, as the first line.
    n = Narrator()
    r = report("sample-badost.darshan")
    for q in (
        "did it use HDF5?",
        "how many bytes did rank 3 write",
        "what bandwidth did it get writing?",
        "why did writing take so much longer than reading?",
        "stripe?",
        "how long did the job run?",
    ):
        query = fact_query.parse(q)
        assert query is not None
        lead = fact_query.answer(r, query)
        assert lead is not None
        a = n.template_answer(r, q)
        assert a.text.splitlines()[0] == lead.text, q
        assert a.verifier is not None
        assert not [v for v in a.verifier.violations if v.text and v.text in lead.text], (q, a.verifier.violations)


def test_request_size_and_io_bound_are_answered_from_counters() -> None:
    log = darshan.DarshanReport(str(wheel_log("sample-badost.darshan")), read_all=True)
    df = log.records["POSIX"].to_df()["counters"]
    sizes: dict[int, int] = {}
    for i in range(1, 5):
        for size, n in zip(df[f"POSIX_ACCESS{i}_ACCESS"], df[f"POSIX_ACCESS{i}_COUNT"], strict=True):
            if size > 0 and n > 0:
                sizes[int(size)] = sizes.get(int(size), 0) + int(n)
    top = max(sizes, key=lambda k: sizes[k])
    assert top == 4 * 2**20
    assert first_sentence("sample-badost.darshan", "what request size did it mostly use?").startswith(
        f"Most POSIX requests were 4 MiB: {sizes[top]:,} of the"
    )
    assert first_sentence("sample-badost.darshan", "is my job I/O bound?").startswith("Yes: I/O took >99%")


def test_a_fact_that_answers_the_question_is_the_whole_answer() -> None:
    # "did it use HDF5?" once drew the off-topic reply after its answer, and "how much did rank 3 write?" an
    # unrelated metadata card: the fact is all the user asked for.
    n = Narrator()
    hdf5 = n.template_answer(report(HDF5_LOG), "did it use HDF5?").text
    assert hdf5.startswith("Yes: HDF5") and "only answer questions" not in hdf5 and ".h5`" in hdf5
    rank = n.template_answer(report(HDF5_LOG), "how much data did rank 3 write?").text
    assert rank.startswith("Rank 3 wrote") and "J03" not in rank and " of writing" in rank


def test_job_totals_count_each_file_once() -> None:
    # An HDF5 file written through MPI-IO shows its bytes at MPI-IO and again at POSIX: the job wrote 240.00 GiB,
    # not the 487 GiB the two interfaces' totals add up to; what reached the file system is said beside it.
    drishti = "drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan"
    text = Narrator().template_answer(report(drishti), "How many GB did my run write to disk").text
    assert text.startswith("The job wrote 240.00 GiB") and "487" not in text
    assert "At the file system (POSIX, beneath MPI-IO): 247.85 GiB written" in text


def test_interface_shares_count_each_file_once() -> None:
    # The same log: MPI-IO carries the 240 GiB; POSIX's 248 GiB beneath it is not a second share of the job.
    drishti = "drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan"
    r = report(drishti)
    own = {i.name: i.own_bytes_read + i.own_bytes_written for i in r.interfaces if i.counted}
    assert sum(own.values()) == r.io_share.bytes_read + r.io_share.bytes_written  # type: ignore[union-attr]
    first = first_sentence(drishti, "which interface did most of the I/O?")
    assert first.startswith("MPI-IO did most of the I/O: 240.00 GiB of the job's") and "487" not in first


def test_reads_or_writes_when_one_side_is_empty() -> None:
    text = first_sentence(HDF5_LOG, "was more time spent writing or reading?")
    assert text.startswith("Reading took") and "writing" in text


def test_small_writes_and_slow_ranks_are_answered_yes_or_no() -> None:
    small = first_sentence("sample-badost.darshan", "were the writes small?")
    assert small.startswith(("Yes:", "No:"))
    rank = first_sentence("sample-badost.darshan", "is any rank slower than the others?")
    assert rank.startswith(("Yes:", "No:"))


def test_completeness_answers_the_polarity_asked() -> None:
    # "Is anything missing?" and "is it complete?" get opposite words for the same log.
    partial = "darshan-logs/partial_data_dxt/partial_data_dxt.darshan"
    missing = first_sentence(partial, "any missing data in this darshan log?")
    complete = first_sentence(partial, "is this darshan log complete?")
    assert missing.startswith("Yes:") and complete.startswith("No:")


def test_is_anything_wrong_is_answered_yes_or_no_from_the_verdict() -> None:
    # A cause named: yes, with the cause and its cost; bandwidth-bound: no, with what bounds it; "healthy?"
    # flips the word, not the facts.
    bad = first_sentence("sample-badost.darshan", "is there anything wrong with the I/O?")
    assert bad.startswith("Yes: I/O took") and "(L04: OST 14" in bad
    assert first_sentence("sample-badost.darshan", "is the I/O healthy?").startswith("No: ")
    good = first_sentence("sample-goodost.darshan", "does this job have an I/O problem?")
    assert good.startswith("No: no pattern in the log is at fault")
    assert first_sentence("sample-goodost.darshan", "is the I/O healthy").startswith("Yes: ")
    # "What's wrong with my job?" stays a why question: the finding-centred answer explains it.
    assert fact_query.parse("What's wrong with my job?") is None


def test_is_the_log_ok_reads_the_data_quality_flags() -> None:
    partial = "darshan-logs/partial_data_dxt/partial_data_dxt.darshan"
    assert first_sentence(partial, "is this log ok or is something off with it?").startswith("No: Partial data")
    assert first_sentence(partial, "is something off with this log?").startswith("Yes: Partial data")
    # Only its DXT trace ran out: every file still has its counter record
    assert first_sentence(partial, "did darshan capture every file?").startswith("Yes: every file the job used")
    assert first_sentence("sample-goodost.darshan", "were all file records captured?").startswith("Yes: the log is")


def test_is_metadata_a_problem_follows_the_priced_finding() -> None:
    assert first_sentence("sample-goodost.darshan", "is metadata a problem?").startswith("No: metadata calls")


def test_several_ranks_and_time_eating_questions_parse() -> None:
    # "why are ranks 140, 396 and 652 slower?" asks about the first rank named; "what's eating the time?" is a why
    # question whatever fact follows it ("barely any data is read").
    q = fact_query.parse("why are ranks 140, 396, 652 and 908 slower than everyone else?")
    assert q is not None and q.metric == "slow_rank" and q.target == "140"
    assert fact_query.parse("what's eating the time in this run? barely any data is read") is None


def test_why_is_a_file_slow_without_a_priced_finding_gives_its_own_numbers() -> None:
    # No warning names these files (I/O is negligible in this job): the answer gives the named file's time and
    # rate, beside the other file the question names, instead of "no finding names a file called ...".
    r = report(HDF5_LOG)
    uuid = next(f for f in r.top_files if f.path.endswith("/uuid.cpython-38.pyc"))
    text = first_sentence(HDF5_LOG, "why does reading uuid.cpython-38.pyc take longer than string.cpython-38.pyc?")
    assert text.startswith(f"`{uuid.path}` took ") and "string.cpython-38.pyc" in text and "against" in text


def test_the_slowest_rank_on_a_named_shared_file_leads() -> None:
    # "How long did the slowest rank spend on X?" is a fact question (not "why is X slow"): Darshan's shared
    # record keeps the slowest rank, and the answer leads with it: the file's I/O took that long.
    log = "darshan-logs/release_logs/mpi-io-test-x86_64-3.4.1.darshan"
    slow = report(log).rank_table.shared_slowest[0]
    text = first_sentence(log, "how long did the slowest rank spend writing mpi-io-test.tmp.dat?")
    assert text.startswith(
        f"Writing `{slow.path}` took {human_seconds(slow.seconds)} on its slowest rank (rank {slow.rank})"
    )


def test_a_why_question_names_a_file_by_a_word_of_its_name() -> None:
    """'why is reading the lookup table slow?' names lookup.bin loosely: the answer is that file's costliest
    problem, with its request size; a file rank 0 alone wrote leads with the cause the verdict ranks first
    (STDIO), not the imbalance it explains; and the headline's causes carry their request sizes."""
    from iodiag.core.settings import REPO_ROOT
    from tests.narration.test_narration_support import scenario_report

    rep = scenario_report(REPO_ROOT / "evals" / "scenarios" / "ranking-stdio-bulk-beside-random-reads.yaml")
    assert (
        "S01: 4 GiB, all `" in rep.verdict.headline
        and " in 131,072 writes of 32 KiB on average" in rep.verdict.headline
    )
    assert [c.subject for c in rep.verdict.causes if c.code == "P11"] == ["3,131 backward reads of 1 MiB"]
    narrator = Narrator()
    table = narrator.template_answer(rep, "why is reading the lookup table slow?").text
    # The file, how long its I/O took (its slowest rank), then its costliest problem, in one sentence.
    assert table.startswith("`/lus/scratch/db/lookup.bin`, on Lustre (8 stripe(s) of 1 MiB), took ")
    # with how its requests looked (Darshan's counts and most common size), before the cause
    # and the rate the job saw on it: every byte over its slowest rank's time (6,400 x 1 MiB in 8.04 s)
    # and, reads out of order, the seeks between them
    assert re.search(
        r" on its slowest rank \(rank 0, 796\.00 MiB/s\), over 6,400 reads of mostly 1 MiB, with [\d,]+ seeks, "
        r"and is slow mainly because of ",
        table,
    )
    assert "random read access (P11: " in table
    csv = narrator.template_answer(rep, "why is writing output.csv so slow?").text
    assert csv.startswith("`/lus/scratch/out/output.csv`, on Lustre, took ")
    assert " and is slow mainly because of bulk data goes through STDIO" in csv.split(". ")[0]
    # A word in no file's name, or a common one, is no file: the job's verdict answers.
    assert fact_query.parse_about("why is writing the output slow?", rep) is None


def test_why_each_rank_is_a_question_about_the_job() -> None:
    from iodiag.core.settings import REPO_ROOT
    from iodiag.narration.intent.classify import Intent, classify
    from iodiag.narration.prompts import PromptLibrary
    from tests.narration.test_narration_support import scenario_report

    rep = scenario_report(REPO_ROOT / "evals" / "scenarios" / "ranking-stdio-bulk-beside-random-reads.yaml")
    q = classify(
        "Why does each rank spend 8 s reading only 400 MB?", rep, PromptLibrary(REPO_ROOT / "prompts").phrases()
    )
    assert q.intent is Intent.EXPLAIN_JOB


def test_who_used_a_file_whether_a_rank_wrote_and_what_the_log_holds() -> None:
    """'which rank wrote output.csv?' names the one rank whose records hold it; 'did rank 5 write anything?' starts
    with yes or no; DXT, the interfaces present and one interface's file count are facts of the log."""
    from iodiag.core.settings import REPO_ROOT
    from tests.narration.test_narration_support import scenario_report

    rep = scenario_report(REPO_ROOT / "evals" / "scenarios" / "ranking-stdio-bulk-beside-random-reads.yaml")
    narrator = Narrator()

    def first(question: str) -> str:
        return narrator.template_answer(rep, question).text.split("\n", 1)[0]

    assert first("which rank wrote output.csv?").startswith(
        "Rank 0 alone (1 of the job's 16 ranks) wrote `/lus/scratch/out/output.csv` (4 GiB"
    )
    assert first("who reads lookup.bin?").startswith("All 16 ranks read `/lus/scratch/db/lookup.bin`")
    assert first("did rank 5 write anything?").startswith("No")
    assert first("did rank 0 write anything?").startswith("Yes: rank 0 wrote 4 GiB")
    assert first("is DXT tracing in this log?").startswith("No: the log holds no DXT trace")
    assert first("how many files did stdio touch?") == "STDIO has records of 1 file(s)."
    assert fact_query.parse("which I/O libraries show up in this log").metric == "interfaces"  # type: ignore[union-attr]
    # "most time in MPI-IO" names an interface, not the judgement "is the job I/O-bound?"
    got = fact_query.parse("which rank spent the most time in MPI-IO?")
    assert got is None or got.metric != "io_bound"
    dxt = report(HDF5_LOG)
    assert first_sentence(HDF5_LOG, "is DXT tracing in this log?").startswith("Yes: the log holds a DXT trace")
    assert any(m.name == "DXT_POSIX" for m in dxt.job.modules)
