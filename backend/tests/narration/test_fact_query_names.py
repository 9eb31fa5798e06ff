"""Files named the way people name them (issue 28): "part.0" (a number for an extension), "the history file"
(its folder), "the checkpoint write" (chk00220/), and the numbers a why-question about them needs: the
requests that start off the file alignment and the OST a file sits on. A scenario known by construction."""

from __future__ import annotations

import pytest

from iodiag.core.settings import REPO_ROOT
from iodiag.narration.fact_query.names import is_named
from iodiag.narration.fact_query.vocabulary import NAMED
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import scenario_report

SCENARIO = REPO_ROOT / "evals" / "scenarios" / "fact-checkpoint-parts-and-history.yaml"
PART0 = "/lus/eagle/proj/case91/chk00220/part.0"
HISTORY = "/lus/eagle/proj/case91/history/hist_0283.dat"


def _first(question: str) -> str:
    rep = scenario_report(SCENARIO)
    return Narrator().template_answer(rep, question).text.split("\n", 1)[0]


def test_a_name_whose_extension_is_a_number_is_that_file() -> None:
    text = _first("why is writing part.0 so slow")
    assert text.startswith(f"`{PART0}` took 6.00 s of I/O"), text
    # 20,000 writes of 1 KiB after a 24-byte header: all but the ones that happen to land on a MiB boundary
    assert "over 20,000 small writes of mostly 1 KiB, 19,980 requests not aligned to 1 MiB" in text, text


def test_the_file_a_folder_name_stands_for_is_the_one_file_in_it() -> None:
    text = _first("reading the history file is slow, why?")
    assert text.startswith(f"`{HISTORY}` took 13.11 s of I/O summed over its 16 rank(s)"), text
    assert "32,768 small reads of mostly 16 KiB made independently (0 collective)" in text, text


def test_the_checkpoint_names_the_chk_folder_and_a_small_share_keeps_its_digits() -> None:
    text = _first("is the checkpoint write hurting the run time?")
    assert text.startswith("No: writing the 16 `/lus/eagle/proj/case91/chk00220/part.#` files took at most 6.00 s"), (
        text
    )
    assert "2% of the 6.7 min run" in text, text
    group = _first("why are the checkpoint files slow?")
    assert "320,000 small writes (20,000 per file) of 1 KiB on average" in group, group
    assert "319,680 requests not aligned (19,980 per file)" in group, group


def test_which_ost_a_file_is_on_comes_from_its_layout() -> None:
    text = _first("which OST is hist_0283.dat on")
    assert text.startswith(f"`{HISTORY}`, on Lustre, has stripe count 1 and stripe size 1 MiB, on OST 7."), text


def test_small_reads_are_sized_from_the_files_that_were_read() -> None:
    # Darshan keeps one size table for reads and writes: the 1 KiB checkpoint writes are not the reads' size
    p05 = scenario_report(SCENARIO).finding("P05")
    assert p05 is not None and p05.subject.endswith("mostly 16 KiB"), p05


def test_small_writes_of_a_family_are_counted_from_the_size_bins() -> None:
    text = _first("how many small writes went to the chk00220/part.* files?")
    assert text == (
        "The 16 `/lus/eagle/proj/case91/chk00220/part.#` files had 320,000 small writes (under 1 MiB), "
        "20,000 per file on average, of 1 KiB each on average."
    ), text


def test_a_folder_named_beside_the_word_checkpoint_is_that_folders_total() -> None:
    text = _first("total checkpoint size (chk00220)?")
    assert text.startswith("The job wrote 312.50 MiB to 16 files named `/lus/eagle/proj/case91/chk00220/part.#`"), text


def test_how_much_and_was_it_collective_answers_the_amount_first() -> None:
    text = _first("how much was read from hist_0283.dat and was it collective?")
    assert text.startswith(f"`{HISTORY}`: 512 MiB read in 32,768 read calls of 16 KiB"), text
    assert text.endswith("No: 0 collective and 32,768 independent MPI-IO reads."), text


def _answer(question: str) -> str:
    return Narrator().template_answer(scenario_report(SCENARIO), question).text


def test_two_ranks_named_are_both_answered() -> None:
    text = _answer("compare the write time of rank 3 and rank 5")
    assert text.startswith("Rank 3 spent 6.00 s in I/O on its own records"), text
    assert "Rank 5 spent 6.00 s in I/O on its own records, 2% of the 6.7 min run: 6.00 s writing" in text, text


def test_do_the_writes_take_longer_than_the_reads_is_yes_or_no_first() -> None:
    assert _first("do the writes take longer than the reads?").startswith(
        "Yes: writing took 96.00 s summed over ranks against 13.11 s reading"
    )
    assert _first("are the reads slower than the writes?").startswith("No: writing took 96.00 s")


def test_a_slip_in_a_key_word_is_read_as_the_word() -> None:
    assert _first("are the history reads colective?") == "No: 0 collective and 32,768 independent MPI-IO reads."


def test_a_familys_total_size_and_time_are_its_own_not_the_runs() -> None:
    assert _first("total size of the checkpoint files?").startswith(
        "The job wrote 312.50 MiB to 16 files named `/lus/eagle/proj/case91/chk00220/part.#`"
    )
    assert _first("how long did writing the checkpoint files take").startswith(
        "Writing the 16 `/lus/eagle/proj/case91/chk00220/part.#` files took at most 6.00 s on one rank"
    )


def test_whether_it_read_some_kind_of_data_lists_what_it_read() -> None:
    # which file is "training data" is the reader's call: yes (none of it is the software's own files), and the
    # answer lists what was read
    assert _first("did this job read any training data?") == f"Yes: the job read 512 MiB: `{HISTORY}` (512 MiB)."
    assert _first("is io hurting this run").startswith("No: I/O took 2% of the 6.7 min run on the busiest rank")


def test_how_much_and_into_how_many_files_gives_both() -> None:
    assert _first("how much did it write and into how many files") == (
        "The job wrote 312.50 MiB to 16 file(s) (of 17 with any I/O)."
    )


def test_a_file_named_by_one_word_of_its_name_gets_its_own_request_size() -> None:
    text = _first("how much data came from the hist and in what request size")
    assert text.startswith(f"The most common request size on `{HISTORY}` was 16 KiB"), text


def test_a_family_under_the_warning_threshold_gets_the_info_finding_and_its_fix() -> None:
    text = _first("why do the chk00220/part.* files take 6 s per rank?")
    assert "no finding prices them above info, but P06 notes them (many small write requests, ≈ 5.99 s): buffer" in text


def test_why_a_job_spends_its_time_in_io_names_each_family_once_and_the_fix() -> None:
    rep = scenario_report(REPO_ROOT / "evals" / "scenarios" / "metadata-just-above-threshold.yaml")
    text = Narrator().template_answer(rep, "why does it spend 3 s per rank in io?").text.split("\n", 1)[0]
    assert text.count("case#.cfg` files") == 1, text  # inputs/0/case#.cfg is part of inputs/#/case#.cfg
    assert text.endswith("combine many small files; cache metadata results."), text


def test_each_ranks_amount_comes_with_the_size_of_its_writes() -> None:
    text = _first("how much did each rank write and what size were the writes")
    assert text.startswith("Each rank wrote 19.53 MiB in 20,000 writes of 1 KiB through its own records"), text


def test_a_rank_not_kept_for_a_shared_file_gets_the_kept_ranks_bytes() -> None:
    text = _first("how much did rank 3 read from hist_0283.dat?")
    assert "(fastest rank 0, 819.4 ms, 32 MiB; slowest rank 0, 819.4 ms, 32 MiB)" in text, text
    assert text.endswith("so rank 3's time and bytes on it are not recorded."), text


def test_which_of_two_interfaces_a_file_went_through() -> None:
    chosen = _first("is hist_0283.dat read via posix or stdio?")
    assert chosen.startswith(f"`{HISTORY}` went through MPI-IO, on top of POSIX"), chosen
    assert _first("was hist_0283.dat read through stdio or hdf5?").startswith(f"No: `{HISTORY}` went through MPI-IO")


def test_read_more_than_written_is_decided_by_the_two_amounts() -> None:
    assert _first("did it read more from hist_0283.dat than it wrote?").startswith(f"Yes: `{HISTORY}`: 0 B written")
    assert _first("did it write more to hist_0283.dat than it read?").startswith("No: ")


def test_the_fastest_and_slowest_rank_of_a_file_named_by_its_folder() -> None:
    text = _first("which ranks were fastest and slowest on the history file")
    assert text.startswith(f"Rank 0 was the slowest on `{HISTORY}`"), text


def test_the_stats_files_are_files_not_stat_calls() -> None:
    from iodiag.narration import fact_query

    q = fact_query.parse("stripe count and size of dump.dat vs the stats files")
    assert q is None or q.metric != "calls", q


@pytest.mark.parametrize(
    ("path", "target", "named"),
    [
        ("/run/chk/part.118", "part.1", False),  # a longer number is another file
        ("/run/chk/part.1", "part.1", True),
        ("/run/rank17.csv", "rank7", False),
        ("/run/out/restart.00036.nc", "restart", True),
        ("/run/Cell_D_3", "cell_d", True),
    ],
)
def test_a_name_inside_a_longer_number_is_not_that_file(path: str, target: str, named: bool) -> None:
    assert is_named(path, target) is named


def test_a_name_with_a_one_digit_extension_is_a_file_name() -> None:
    assert [m.group(1) for m in NAMED.finditer("stripe count of part.0?")] == ["part.0"]
    assert [m.group(1) for m in NAMED.finditer("snap_100.0 vs restart.0020.0.bin")] == [
        "snap_100.0",
        "restart.0020.0.bin",
    ]


def test_two_files_asked_against_each_other_both_get_their_layout() -> None:
    said = _first("stripe size of part.0 vs hist_0283.dat?")
    assert f"`{PART0}`" in said and f"`{HISTORY}`" in said, said
