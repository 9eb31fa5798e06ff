"""Questions the blind set sealed30 showed were answered with a wrong yes/no or none (issue 28): a statement with
a tag ("X is on lustre, right?"), whether the ranks share one file, whether a file's data was read more than once,
whether Darshan dropped records, the job named by its own program, and any file a finding names. Every scenario
is built by construction, so every number is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from iodiag.narration.fact_query import parse
from iodiag.narration.fact_query.vocabulary import as_question
from tests.narration.test_narration_support import first_sentence, scenario_report, write_spec

_HEAD = (
    "description: built for a test\njob:\n  nprocs: 4\n  exe: python -u train_model.py --epochs 3\n  mounts:\n"
    "    - {path: /lus/scratch, fs: lustre, ost_count: 8}\n    - {path: /home, fs: nfs}\n    - {path: /, fs: ext4}\n"
)
_REREAD = (
    "name: reread\n"
    + _HEAD
    + """files:
  - {path: "/lus/scratch/run/shard.{rank}.bin", lustre: {stripe_size: 1MiB, stripe_count: 1}}
program:
  - {ranks: all, file: "/lus/scratch/run/shard.{rank}.bin", op: write, count: 8, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: all, file: "/lus/scratch/run/shard.{rank}.bin", op: read, count: 8, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: all, file: "/lus/scratch/run/shard.{rank}.bin", op: read, count: 8, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: "0", file: /lus/scratch/run/once.dat, op: read, count: 8, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: "0", file: /home/me/run.log, op: write, count: 4, size: 4KiB, seconds_per_op: 0.001}
"""
)
_PARTIAL = (
    "name: partial\n"
    + _HEAD
    + """program:
  - {ranks: all, file: "/lus/scratch/run/part.{rank}.dat", op: write, count: 4, size: 4MiB, seconds_per_op: 0.01}
log_faults: {partial: [POSIX]}
"""
)


@pytest.fixture(scope="module")
def reread(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _REREAD, "reread")


@pytest.fixture(scope="module")
def partial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _PARTIAL, "partial")


_first = first_sentence


@pytest.mark.parametrize(
    ("said", "asked"),
    [
        ("restart.h5 is on lustre, right?", "is restart.h5 on lustre?"),
        ("run.out is on the nfs home, correct?", "is run.out on the nfs home?"),
        ("energies.txt - is that on lustre?", "is energies.txt on lustre?"),
        ("so my job is io bound, right?", "is my job io bound?"),
        ("the ranks all read one file, right?", "did the ranks all read one file?"),
    ],
)
def test_a_statement_with_a_tag_is_asked_as_a_question(said: str, asked: str) -> None:
    assert as_question(said) == asked


@pytest.mark.parametrize(
    "plain",
    [
        "why is it slow?",
        "is it slow, right?",
        "what is on lustre?",
        "how much, right?",
        "rank 3 - why?",
        "job 42: help?",
    ],
)
def test_a_question_in_the_usual_order_is_left_alone(plain: str) -> None:
    assert as_question(plain) == plain


def test_a_tagged_statement_gets_its_yes_or_no_from_the_log(reread: Path) -> None:
    assert _first(reread, "run.log is on lustre, right?").startswith("No: the named file `/home/me/run.log` was on NFS")
    assert _first(reread, "once.dat - is that on lustre?").startswith("Yes: the named file `/lus/scratch/run/once.dat`")


def test_whether_the_ranks_share_one_file_is_answered_either_way_round(reread: Path) -> None:
    assert _first(reread, "do the ranks all read one shared file?").startswith("No: one per process: 4 rank(s)")
    assert _first(reread, "is it file per process?").startswith("Yes: one per process")
    q = parse("do all ranks write to the same file?")
    assert q is not None and q.metric == "sharing" and q.yes_no


def test_a_file_read_twice_is_a_yes_with_its_bytes_against_its_extent(reread: Path) -> None:
    rep = scenario_report(reread)
    shard = next(f for f in rep.top_files if f.path.endswith("shard.0.bin"))
    once = next(f for f in rep.top_files if f.path.endswith("once.dat"))
    assert shard.read_extent == 8 << 20 and shard.bytes_read == 16 << 20
    assert once.read_extent == once.bytes_read == 8 << 20
    text = _first(reread, "is shard.0.bin read more than once?")
    assert text.startswith("Yes: 16 MiB was read from `/lus/scratch/run/shard.0.bin`, 2.0 times the 8 MiB"), text
    assert _first(reread, "is once.dat re-read?").startswith("No: 8 MiB was read from `/lus/scratch/run/once.dat`")
    # A family of files: their bytes read against their extents added up
    fam = _first(reread, "does each rank read its shard file twice?")
    assert fam.startswith("Yes: 64 MiB was read from the 4 files named `/lus/scratch/run/shard.#.bin`, 2.0 times"), fam


def test_dropped_records_and_the_real_count_of_files_come_from_the_partial_flag(partial: Path, reread: Path) -> None:
    assert _first(partial, "did darshan drop any records for this run?").startswith("Yes: the log is partial")
    assert _first(partial, "darshan shows 4 files, is that the real number?").startswith("No: the log is partial")
    # A complete log: nothing dropped is a no, never "Yes: the log is complete"
    assert _first(reread, "did darshan drop any records?").startswith("No: the log is complete")


def test_the_jobs_own_program_named_like_a_file_means_the_job(reread: Path) -> None:
    text = _first(reread, "what fraction of train_model.py is I/O?")
    assert text.startswith("I/O took ") and "of the " in text, text
    assert _first(reread, "what % of the runtime goes to I/O?").startswith("I/O took ")


def test_an_ost_said_to_misbehave_asks_whether_one_is_slow() -> None:
    q = parse("is an OST misbehaving in this run?")
    assert q is not None and q.metric == "slow_ost" and q.yes_no


def test_a_request_size_asked_against_a_size_is_a_yes_or_no(reread: Path) -> None:
    text = _first(reread, "are the once.dat reads at least 1 MiB each?")
    assert text.startswith("Yes: ") and "1 MiB" in text, text
    assert _first(reread, "are the once.dat reads under 64 KiB?").startswith("No: ")
    # Writes asked of a file only read: there are none, said so
    none = _first(reread, "are writes to once.dat under 1 MiB?")
    assert none.startswith("No: `/lus/scratch/run/once.dat` had no writes (0 B written); it was read, 8 MiB"), none


def test_a_family_named_by_its_extension_answers_whether_it_sits_on_one_ost(reread: Path) -> None:
    text = _first(reread, "is each shard bin on a single OST?")
    assert text.startswith("Yes: ") and "`/lus/scratch/run/shard.#.bin` files have stripe count 1" in text, text


def test_writing_against_reading_one_file_gives_both_times_per_rank(reread: Path) -> None:
    rep = scenario_report(reread)
    f = next(x for x in rep.top_files if x.path.endswith("shard.0.bin"))
    text = _first(reread, "how long does each rank spend writing vs reading shard.0.bin?")
    assert text.startswith("Writing `/lus/scratch/run/shard.0.bin` took "), text
    assert "reading" in text and f.read_time_s > 0 and f.write_time_s > 0


def test_how_fast_a_file_was_read_is_its_rate() -> None:
    q = parse("how fast was once.dat read?")
    assert q is not None and q.metric == "rate" and q.target == "once.dat" and q.direction == "read"


def test_the_bytes_a_job_wrote_say_how_many_files_took_them(reread: Path) -> None:
    assert _first(reread, "how much data did the job write?").startswith("The job wrote 32.02 MiB to 5 files")


def test_whether_one_files_time_matters_is_judged_on_its_share_of_the_run(reread: Path) -> None:
    for asked in (
        "is reading once.dat a big deal for this run?",
        "is more than a quarter of the run spent on once.dat?",
    ):
        q = parse(asked)
        assert q is not None and q.metric == "file_share" and q.yes_no, asked
    assert parse("is more than a quarter of the run spent on once.dat?").share == 0.25  # type: ignore[union-attr]
    assert _first(reread, "does once.dat matter for the runtime?")[:4] in ("Yes:", "No: ")


@pytest.mark.parametrize(
    ("asked", "metric"),
    [
        # Found by sealed31: a file system named beside a property of the requests asked about that property
        ("are the dump writes aligned to the GPFS block?", "alignment"),
        ("are the checkpoint reads aligned to the GPFS block size?", "alignment"),
        ("are pw.x's DFS writes sized to the DAOS chunk size?", "chunk_size"),
        # "these DFS counters" judges the log's records, not whether DFS was used
        ("are these DFS counters trustworthy?", "completeness"),
        ("is every file the job opened in this log?", "completeness"),
    ],
)
def test_a_question_goes_to_what_it_judges_not_to_a_word_it_names(asked: str, metric: str) -> None:
    q = parse(asked)
    assert q is not None and q.metric == metric and q.yes_no, (asked, q)


def test_a_name_then_a_word_asks_whether_the_name_is_that() -> None:
    assert as_question("kernels.dat access pattern - sequential?") == "is kernels.dat access pattern sequential?"
    q = parse("kernels.dat access pattern - sequential?")
    assert q is not None and q.metric == "sequential" and q.yes_no


def test_whether_a_file_is_striped_is_no_for_one_stripe(reread: Path) -> None:
    text = _first(reread, "is shard.0.bin striped?")
    assert text.startswith("No: `/lus/scratch/run/shard.0.bin` has stripe count 1"), text


def test_the_time_spent_opening_files_is_the_metadata_time() -> None:
    # Found by a cold read: "opening files" named no metadata word and went to the busiest file
    q = parse("how much time did opening files take?")
    assert q is not None and q.metric == "metadata"


@pytest.mark.parametrize(
    ("said", "asked"),
    [
        ("flux.dat is on lustre?", "is flux.dat on lustre?"),
        ("the input files sit on GPFS?", "do the input files sit on GPFS?"),
        ("reads.fastq gets written in 16 KB chunks?", "does reads.fastq get written in 16 KB chunks?"),
        ("plt00299.dat has a stripe count of 32, right?", "does plt00299.dat have a stripe count of 32?"),
        ("rank 0 does most of the I/O?", "does rank 0 do most of the I/O?"),
    ],
)
def test_a_statement_with_only_a_question_mark_asks_yes_or_no(said: str, asked: str) -> None:
    assert as_question(said) == asked


@pytest.mark.parametrize(
    "plain",
    [
        "total data written by this job?",
        "stripe?",
        "whats the read size on the tile_*.in files?",
        "avg read size on the traj_*.xyz files?",
        "darshan shows 4096 shard files, is that the real number?",
        "each rank writes 850 KB but spends 2 s in I/O - where does that time go?",
    ],
)
def test_a_phrase_or_a_question_after_a_clause_is_not_made_a_yes_or_no(plain: str) -> None:
    assert as_question(plain) == plain


def test_a_stated_stripe_count_is_checked_against_the_files(reread: Path) -> None:
    assert _first(reread, "once.dat has a stripe count of 1, right?").startswith("Yes: ")
    text = _first(reread, "once.dat has a stripe count of 8?")
    assert text.startswith("No: ") and "stripe count 1" in text, text


def test_a_size_stated_as_each_requests_own_is_a_yes_or_no(reread: Path) -> None:
    assert _first(reread, "once.dat reads are 1 MB each?").startswith("Yes: ")
    assert _first(reread, "are the shard reads 1 MiB each?").startswith("Yes: ")
    assert _first(reread, "are the shard reads 4 KB each?").startswith("No: ")


def test_limited_by_io_asks_whether_io_bounds_the_run(reread: Path) -> None:
    for asked in ("was it limited by I/O?", "is the run bottlenecked on I/O?", "does I/O slow down the job?"):
        q = parse(asked)
        assert q is not None and q.metric == "io_bound" and q.yes_no, asked
    assert _first(reread, "was it limited by I/O at all?").startswith(("No: ", "Yes: "))
