"""Questions about a family of files, asked the way people name them (issue 28): "the Cell_D files", "its
restart.0379 file", "which xtc", "the python files". Scenarios whose contents are known by construction."""

from __future__ import annotations

from iodiag.core.settings import REPO_ROOT
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import scenario_report

SCENARIOS = REPO_ROOT / "evals" / "scenarios"
GROUPS = SCENARIOS / "fact-groups-layouts-and-restarts.yaml"


def _first(rep: object, question: str) -> str:
    return Narrator().template_answer(rep, question).text.split("\n", 1)[0]  # type: ignore[arg-type]


def test_each_family_named_gets_its_own_stripe_layout_in_the_order_asked() -> None:
    rep = scenario_report(GROUPS)
    text = _first(rep, "what lustre stripe size do the plt01000/Cell_D files have, and the traj frame files?")
    cell = text.index("`/lus/flare/proj/run/plt01000/Cell_D_#` files have stripe count 1 and stripe size 1 MiB")
    traj = text.index("`/lus/flare/proj/run/traj/frame#.#.xtc` files have stripe count 1 and stripe size 4 MiB")
    assert text.startswith("On Lustre, the 16 ") and cell < traj, text
    # a glob names its family too, with its own count
    text = _first(rep, "stripe size and count of the restart.0379.*.bin files?")
    assert "stripe count 2 and stripe size 1 MiB (all of them)" in text, text


def test_a_familys_request_size_is_its_bytes_over_its_calls() -> None:
    text = _first(scenario_report(GROUPS), "what read size are the Cell_D files read with?")
    assert text.startswith("The 16 `/lus/flare/proj/run/plt01000/Cell_D_#` files had 8,192 reads of 32 KiB on"), text
    assert "512 per file" in text, text


def test_how_many_times_each_rank_opens_its_own_file_is_a_count_per_file() -> None:
    rep = scenario_report(GROUPS)
    text = _first(rep, "how many times does each rank open its restart.0379 file?")
    assert text.startswith("3 opens per file on average: the 16 "), text
    # the family's count leads; the job's total follows where the question asks for it too
    text = _first(rep, "how many bin files were opened and how many opens in total?")
    assert text.startswith("The 16 `/lus/flare/proj/run/restart.#.#.bin` files had 48 opens"), text
    assert "the job made 80 opens in all at POSIX" in text, text


def test_which_file_of_a_kind_took_longest_ranks_by_that_directions_time() -> None:
    text = _first(scenario_report(GROUPS), "which xtc took the longest to write?")
    # rank 5 writes three times slower: 64 writes x 12 ms
    assert text.startswith("`/lus/flare/proj/run/traj/frame0500.5.xtc` took the longest to write: 768.0 ms"), text


def test_any_data_io_is_answered_yes_or_no_from_the_bytes() -> None:
    rep = scenario_report(GROUPS)
    assert _first(rep, "did this job do any real data I/O?").startswith("Yes: the job wrote 4 GiB and read 272")
    # a question about other ranks is a rank question, not this one
    assert not _first(rep, "were the other ranks doing any I/O?").startswith("Yes: the job wrote")


def test_an_imbalance_from_one_rank_carrying_a_shared_file_says_so() -> None:
    rep = scenario_report(SCENARIOS / "ranking-data-imbalance-rank0.yaml")
    j04 = rep.finding("J04")
    assert j04 is not None and j04.subject == "rank 0: 4 GiB of the shared rs6.restart", j04
    assert "Darshan kept it as the slowest rank with 4 GiB of the file's 7.75 GiB" in j04.message


def test_a_fix_for_slow_ranks_leads_with_the_cause_that_explains_them() -> None:
    rep = scenario_report(SCENARIOS / "lustre-slow-ost-under-a-shared-table.yaml")
    j04 = rep.finding("J04")
    assert j04 is not None and j04.explained_by == "L04"
    text = Narrator().template_answer(rep, "what should we do about the slow ranks?").text
    assert "slow OST (L04: OST 4" in text.split("\n", 1)[0], text
    listed = text.split("then by cost:", 1)[1]
    assert listed.index("**L04") < listed.index("**J04") if "**J04" in listed else "**L04" in listed, listed


def test_why_so_many_seconds_in_io_says_where_they_went_family_by_family() -> None:
    rep = scenario_report(GROUPS)
    text = _first(rep, "why does this job spend almost 1 s in I/O?")
    assert text.startswith("Of the job's I/O time ("), text
    # the families by their time, largest first, each once
    traj = text.index("went to the 16 `/lus/flare/proj/run/traj/frame#.#.xtc` files (4 GiB moved)")
    cell = text.index("to the 16 `/lus/flare/proj/run/plt01000/Cell_D_#` files (256 MiB moved)")
    assert traj < cell and text.endswith("no pattern in it is a problem to fix."), text


def test_a_glob_with_a_number_and_a_folder_name_each_name_their_family() -> None:
    rep = scenario_report(GROUPS)
    # digits inside a glob stand for the family's numbered names
    text = _first(rep, "total bytes read from the restart.0379.*.bin files?")
    assert "16 files named `/lus/flare/proj/run/restart.#.#.bin`" in text, text
    # a folder named on its own: the files in it
    text = _first(rep, "total data size (plt01000)?")
    assert text.startswith("The job read 256 MiB from 16 files named `/lus/flare/proj/run/plt01000/Cell_D_#`"), text


def test_requests_per_rank_on_one_file_and_sizes_beside_the_order() -> None:
    rep = scenario_report(GROUPS)
    # a shared table every rank reads 16 times
    table = scenario_report(SCENARIOS / "lustre-slow-ost-under-a-shared-table.yaml")
    text = _first(table, "how many reads did each rank do to eos_table.dat?")
    assert text.startswith(
        "16 read calls per rank on average: `/lus/scratch/run/eos_table.dat` had 1,024 over its 64"
    ), text
    text = _first(rep, "how big are the reads on the Cell_D files, and are they sequential?")
    assert "8,192 reads (32 KiB on average) of the 16 " in text, text


def test_what_a_process_read_lists_the_files_with_the_total() -> None:
    text = _first(scenario_report(GROUPS), "what did this job actually read?")
    # the busiest files by time are the written trajectories: the families read are named instead
    assert text.startswith("The job read 272 MiB: the 16 `/lus/flare/proj/run/plt01000/Cell_D_#` files (256 MiB"), text
    assert "restart.#.#.bin` files (16 MiB)" in text, text


def test_a_count_of_a_family_with_how_much_data_gives_both() -> None:
    text = _first(scenario_report(GROUPS), "how many xtc files and how much data in them?")
    assert text.startswith("The job wrote 4 GiB to 16 files named `/lus/flare/proj/run/traj/frame#.#.xtc`"), text


def test_a_files_layout_beside_a_familys_in_one_answer() -> None:
    text = _first(scenario_report(GROUPS), "stripe count of restart.0379.3.bin vs the Cell_D files?")
    # the report keeps no numbers of that one file: its family's layout, never another file's
    fam = "`restart.0379.3.bin` is one of the 16 `/lus/flare/proj/run/restart.#.#.bin` files, which have stripe count 2"
    assert text.startswith(fam), text
    assert "the 16 `/lus/flare/proj/run/plt01000/Cell_D_#` files have stripe count 1" in text, text


def test_how_much_and_what_size_gives_the_bytes_first() -> None:
    text = _first(scenario_report(GROUPS), "how much did it write and read, and in what request size?")
    assert text.startswith("The job wrote 4 GiB and read 272 MiB; most POSIX requests were "), text


def test_which_ranks_are_slowest_names_the_ranks_the_cause_names() -> None:
    rep = scenario_report(SCENARIOS / "lustre-slow-ost-under-a-shared-table.yaml")
    l04 = rep.finding("L04")
    assert l04 is not None and len(l04.ranks) == 4
    text = _first(rep, "which ranks are the slowest at writing, and how slow?")
    shown = ", ".join(str(r) for r in l04.ranks)
    assert f"L04 (slow OST) names 4 ranks: {shown}" in text, text


def test_a_familys_file_system_and_a_kind_named_by_its_extension() -> None:
    rep = scenario_report(GROUPS)
    text = _first(rep, "what fs are the Cell_D files on")
    assert text.startswith(
        "The 16 `/lus/flare/proj/run/plt01000/Cell_D_#` files were on Lustre "
        "(256 MiB moved, stripe count 1, stripe size 1 MiB)."
    ), text
    # an extension before another noun than "files"
    text = _first(rep, "how much data came out of the .xtc frames?")
    assert text.startswith("The job wrote 4 GiB to 16 files named `/lus/flare/proj/run/traj/frame#.#.xtc`"), text


def test_a_share_asked_against_a_bar_is_judged_on_that_bar() -> None:
    rep = scenario_report(SCENARIOS / "ranking-stdio-bulk-beside-random-reads.yaml")
    f = next(x for x in rep.top_files if x.path.endswith("output.csv"))
    share = (f.slowest_s or 0.0) / rep.job.runtime_s
    text = _first(rep, "does the csv output eat more than half the runtime?")
    assert text.startswith("Yes: " if share > 0.5 else "No: "), (share, text)
    assert text.split(": ", 1)[1].startswith("writing `/lus/scratch/out/output.csv` took"), text


def test_do_all_ranks_do_io_is_yes_or_no_from_the_ranks_with_records() -> None:
    solo = scenario_report(SCENARIOS / "ranking-stdio-bulk-beside-random-reads.yaml")
    n = solo.job.nprocs
    with_io = len(solo.rank_table.ranks)
    text = _first(solo, f"do all {n} ranks do I/O in this job?")
    if solo.rank_table.shared_files or with_io >= n:
        assert text.startswith("Yes: "), text
    else:
        assert text.startswith(f"No: only {with_io:,} of the job's {n:,} ranks did I/O"), text
    assert _first(scenario_report(GROUPS), "does every rank do I/O?").startswith("Yes: all 16 ranks have I/O records")


def test_whether_opening_a_family_costs_more_than_reading_it_is_yes_or_no() -> None:
    # 4 ranks each open 1,000 case{i}.cfg files of their own: opening is all of their time
    rep = scenario_report(SCENARIOS / "metadata-just-above-threshold.yaml")
    text = _first(rep, "does opening the cfg files cost more than reading them?")
    assert text.startswith("Yes: the 4,000 `"), text
    assert "mostly in metadata calls" in text, text
    assert _first(rep, "is reading the cfg files slower than opening them?").startswith("No: the 4,000 `")
