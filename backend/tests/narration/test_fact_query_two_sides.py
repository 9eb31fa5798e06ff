"""Questions the blind set sealed36 showed had nowhere to go (issue 28): which of two files, families or the
Python packages costs each rank more; whether a file was read back after it was written, and whether reading it
took longer than writing it; which OST holds a file; where a file is stored; whether an activity ("the logging")
slows the job; a metadata storm on Python modules advises staging the environment. Every scenario is built by
construction, so every number is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from iodiag.narration.fact_query import parse
from tests.narration.test_narration_support import first_sentence, scenario_report, write_spec

_JOB = """name: sides
description: built for a test
job:
  nprocs: 4
  exe: python -u train.py
  runtime: 400
  mounts:
    - {path: /lus/scratch, fs: lustre, ost_count: 8}
    - {path: /home, fs: nfs}
    - {path: /, fs: ext4}
files:
  - {path: /lus/scratch/run/ocean.dat, lustre: {stripe_size: 1MiB, stripe_count: 4}}
program:
  - {ranks: all, files: "/lus/scratch/env/lib/python3.11/site-packages/pkg/mod{i}.py", count_files: 200,
     op: open_stat, meta_seconds: 0.05}
  - {ranks: all, file: /lus/scratch/run/ocean.dat, op: write, count: 40, size: 1MiB, layout: segmented,
     seconds_per_op: 0.2}
  - {ranks: all, file: /lus/scratch/run/ocean.dat, op: read, count: 40, size: 1MiB, layout: segmented,
     seconds_per_op: 0.05}
  - {ranks: all, file: "/lus/scratch/run/stats/rank{rank}.bin", op: write, count: 100, size: 4KiB,
     seconds_per_op: 0.01}
  - {ranks: "0", file: /home/u/output.log, interface: stdio, op: write, count: 1000, size: 100,
     seconds_per_op: 0.0001}
"""


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _JOB, "sides")


def test_two_files_or_families_are_compared_by_their_time_per_rank(sides: Path) -> None:
    rep = scenario_report(sides)
    ocean = next(f for f in rep.top_files if f.path.endswith("ocean.dat"))
    text = first_sentence(sides, "per rank, which takes longer: the ocean.dat write or the stats files?")
    assert text.startswith("`/lus/scratch/run/ocean.dat` costs more: about 10.00 s per rank, against 1.00 s on "), text
    assert "the 4 `/lus/scratch/run/stats/rank#.bin` files" in text, text
    assert f"summed over ranks: {ocean.io_time_s:.2f} s against 4.00 s" in text, text
    # the other way round names the same winner
    again = first_sentence(sides, "is the stats file write or the ocean.dat write the bigger cost?")
    assert again.startswith("`/lus/scratch/run/ocean.dat` costs more"), again


def test_the_python_packages_are_a_side_of_their_own(sides: Path) -> None:
    text = first_sentence(sides, "which costs each rank more time, ocean.dat or importing the python package?")
    # 200 modules x 0.05 s of open and stat on every rank, against 40 x 0.2 s writes + 40 x 0.05 s reads
    assert text.startswith("The python packages (200 files, e.g. `/lus/scratch/env/"), text
    assert "cost more: about 10.00 s per rank, against 10.00 s" not in text
    assert "against 10.00 s on `/lus/scratch/run/ocean.dat`" in text, text


def test_a_file_read_back_after_it_was_written_is_a_yes_with_when(sides: Path) -> None:
    text = first_sentence(sides, "was ocean.dat read back after it was written?")
    assert text.startswith("Yes: `/lus/scratch/run/ocean.dat` was written (160 MiB) and read (160 MiB)"), text
    assert "after its last write ended" in text, text
    # a file only written was never read back
    assert first_sentence(sides, "was rank1.bin read back after it was written?").startswith("No: ")


def test_reading_against_writing_one_file_answers_the_way_round_it_was_asked(sides: Path) -> None:
    slower = first_sentence(sides, "did reading ocean.dat take longer than writing it?")
    assert slower.startswith("No: writing `/lus/scratch/run/ocean.dat` took "), slower
    assert first_sentence(sides, "was writing ocean.dat slower than reading it?").startswith("Yes: writing ")


def test_which_ost_holds_a_file_names_its_osts(sides: Path) -> None:
    rep = scenario_report(sides)
    ocean = next(f for f in rep.top_files if f.path.endswith("ocean.dat"))
    assert ocean.osts
    text = first_sentence(sides, "which OST holds ocean.dat?")
    assert "stripe count 4" in text and f"OSTs {ocean.osts[0]}, " in text, text


def test_where_a_file_is_stored_is_its_file_system() -> None:
    q = parse("where is output.log stored?")
    assert q is not None and q.metric == "file_system" and q.target == "output.log"


def test_an_activity_named_by_its_verb_is_judged_by_its_files_share(sides: Path) -> None:
    text = first_sentence(sides, "is the logging slowing the job down?")
    assert text.startswith("No: ") and "`/home/u/output.log`" in text, text
    share = first_sentence(sides, "how much of the train runtime is I/O?")
    assert share.startswith("I/O took 10% of the 6.7 min run"), share


def test_a_metadata_storm_on_python_modules_leads_with_staging_the_environment(sides: Path) -> None:
    rep = scenario_report(sides)
    storm = next((f for f in rep.findings if f.code == "J03"), None)
    assert storm is not None
    assert storm.recommendations[0] == "stage-software-environment", storm.recommendations


_LAYERED_JOB = """name: layered
description: built for a test
job:
  nprocs: 8
  exe: ./sim
  mounts:
    - {path: /lus/scratch, fs: lustre, ost_count: 8}
files:
  - {path: /lus/scratch/run/field.dat, lustre: {stripe_size: 4MiB, stripe_count: 4}}
program:
  - {ranks: all, file: /lus/scratch/run/field.dat, interface: mpiio, collective: true, cb_nodes: 2, op: write,
     count: 8, size: 256KiB, layout: interleaved, seconds_per_op: 0.01}
"""


@pytest.fixture(scope="module")
def layered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _LAYERED_JOB, "layered")


def test_a_request_size_asked_of_one_layer_and_direction_is_that_layers(layered: Path) -> None:
    rep = scenario_report(layered)
    assert rep.cross_layer is not None
    mpi = next(la for la in rep.cross_layer.job_layers if la.layer == "MPI-IO")
    posix = next(la for la in rep.cross_layer.job_layers if la.layer == "POSIX")
    assert mpi.writes.ops == 64 and posix.writes.ops < 64  # two-phase I/O merged the 256 KiB pieces
    text = first_sentence(layered, "what size are the MPI-IO write requests?")
    assert text.startswith("The job made 64 MPI-IO writes, mostly 256 KiB"), text
    beneath = first_sentence(layered, "what size are the POSIX writes?")
    assert beneath.startswith(f"The job made {posix.writes.ops:,} POSIX writes"), beneath
    # none of them read: said so for the layer asked
    assert first_sentence(layered, "what size are the MPI-IO reads?") == "The job made no MPI-IO reads."


@pytest.mark.parametrize(
    ("asked", "text", "word"),
    [
        (
            "is the stripe count ok?",
            "`a` has stripe count 1 ...; for its size ..., 8 stripes of 16 MiB would fit.",
            "No: ",
        ),
        ("is the striping fine?", "`a` has stripe count 8 and stripe size 16 MiB for 25 GiB.", "Yes: "),
        ("is the stripe count too low?", "`a` has stripe count 1; 8 stripes of 16 MiB would fit.", "Yes: "),
        ("is the stripe count too high?", "`a` has stripe count 1; 8 stripes of 16 MiB would fit.", "No: "),
        ("is the stripe count too high?", "`a` has stripe count 64; 8 stripes of 16 MiB would fit.", "Yes: "),
        ("is the stripe count too low?", "`a` has stripe count 8 and stripe size 16 MiB.", "No: "),
    ],
)
def test_whether_a_layout_is_ok_comes_from_the_layout_that_would_fit(asked: str, text: str, word: str) -> None:
    from iodiag.narration.fact_query.job import _layout_judged

    assert _layout_judged(asked, text) == word


def test_is_the_striping_ok_leads_with_yes_or_no(layered: Path) -> None:
    text = first_sentence(layered, "is the stripe count of field.dat ok?")
    assert text.startswith(("Yes: ", "No: ")), text
    assert text.startswith("No: ") == ("would fit" in text), text


_TWO_STRAGGLERS = """name: two-stragglers
description: built for a test
job:
  nprocs: 64
  nodes: 4
  exe: ./sim
  mounts:
    - {path: /lus/scratch, fs: lustre, ost_count: 16, slow_osts: {5: 20}}
    - {path: /, fs: ext4}
files:
  - {path: "/lus/scratch/out/part.{rank}.dat", lustre: {stripe_size: 1MiB, stripe_count: 1}}
  - {path: /lus/scratch/in/mesh.bin, lustre: {stripe_size: 1MiB, stripe_count: 4}}
program:
  - {ranks: "0", file: /lus/scratch/in/mesh.bin, op: read, count: 200, size: 4MiB, seconds_per_op: 0.05}
  - {ranks: all, file: "/lus/scratch/out/part.{rank}.dat", op: write, count: 64, size: 4MiB}
"""


@pytest.fixture(scope="module")
def two_stragglers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _TWO_STRAGGLERS, "two-stragglers")


def test_which_ranks_are_slow_names_a_second_straggler_the_slow_ost_does_not_explain(two_stragglers: Path) -> None:
    rep = scenario_report(two_stragglers)
    l04 = rep.finding("L04")
    assert l04 is not None and 0 not in l04.ranks
    # the answer's first line: the slow OST's ranks, then the rank slow for its own reason
    text = first_sentence(two_stragglers, "which ranks are slow and why?")
    assert text.startswith(f"{len(l04.ranks)} rank(s) are slow ("), text
    assert ". Also rank 0 spent " in text and "`/lus/scratch/in/mesh.bin`" in text, text


_DFS_ONLY = """name: dfs-only
description: built for a test
job:
  nprocs: 4
  exe: ./reader
  mounts:
    - {path: /r1, fs: daos}
    - {path: /, fs: ext4}
program:
  - {ranks: all, file: /r1/db/index.bin, interface: dfs, op: read, count: 16, size: 1MiB, seconds_per_op: 0.01}
"""


def test_whether_reads_are_random_is_unknown_without_offset_counters(tmp_path_factory: pytest.TempPathFactory) -> None:
    spec = write_spec(tmp_path_factory, _DFS_ONLY, "dfs-only")
    text = first_sentence(spec, "are the reads random?")
    assert text.startswith("The log cannot tell: "), text
    assert "went through DFS, which keeps no offset counters" in text, text


def test_sealed37_phrasings_reach_their_rules() -> None:
    share = parse("is wrf spending more than a fifth of its time on I/O?")
    assert share is not None and share.metric == "io_bound" and share.share == pytest.approx(0.2)
    meaningful = parse("is I/O a meaningful part of this 3.6 hour amg run?")
    assert meaningful is not None and meaningful.metric == "io_bound" and meaningful.yes_no
    lined = parse("do the checkpoint writes line up with the stripe size?")
    assert lined is not None and lined.metric == "alignment"
    data = parse("did this dlio process touch any training data?")
    assert data is not None and data.metric == "file_list" and data.yes_no


def test_a_ranks_time_on_its_own_file_comes_with_its_share_of_the_run(sides: Path) -> None:
    text = first_sentence(sides, "what share of the run did rank 0 spend on output.log?")
    assert "taking 100.2 ms of I/O (0.025% of the 6.7 min run)" in text, text


def test_metadata_against_writing_is_judged_against_the_write_time_alone(sides: Path) -> None:
    # 200 modules x 0.05 s of open and stat per rank (10 s) against 40 x 0.2 s of writes (8 s) and 2 s of reads
    text = first_sentence(sides, "does it spend more time in metadata than in writing?")
    assert text.startswith("Yes: metadata calls"), text
    assert "of it writing)" in text, text
    assert first_sentence(sides, "does it spend less time in metadata than in writing?").startswith("No: ")


def test_the_time_each_rank_loses_to_a_family_is_its_time_per_rank(sides: Path) -> None:
    text = first_sentence(sides, "how much time does each rank lose to the stats/rank*.bin files?")
    assert text.startswith("The 4 `/lus/scratch/run/stats/rank#.bin` files on Lustre took about 1.00 s"), text


def test_a_family_with_a_few_slow_ranks_says_so_beside_the_mean(two_stragglers: Path) -> None:
    text = first_sentence(two_stragglers, "how much time does each rank lose to the part.*.dat files?")
    assert "per rank on average over its 64 rank(s)" in text and "but up to " in text, text


def test_the_jobs_program_named_with_a_short_extension_is_the_job(sides: Path) -> None:
    text = first_sentence(sides, "train.py takes ages before training starts - why?")
    assert text.startswith("I/O takes "), text
    assert "No finding names a file" not in text


def test_which_one_eats_more_time_compares_the_two(sides: Path) -> None:
    text = first_sentence(sides, "ocean.dat vs output.log: which one eats more I/O time?")
    assert text.startswith("`/lus/scratch/run/ocean.dat` costs more: about 10.00 s per rank"), text


def test_a_checkpoint_is_found_under_the_name_codes_give_it(tmp_path_factory: pytest.TempPathFactory) -> None:
    spec = write_spec(
        tmp_path_factory,
        """name: restart-named
description: built for a test
job:
  nprocs: 4
  exe: ./sim
  runtime: 200
  mounts:
    - {path: /lus/scratch, fs: lustre, ost_count: 8}
program:
  - {ranks: all, file: /lus/scratch/run/restart.00176.dat, op: write, count: 8, size: 1MiB, layout: segmented,
     seconds_per_op: 0.1}
""",
        "restart-named",
    )
    text = first_sentence(spec, "is the checkpoint a big part of this 200 s run?")
    assert text.startswith("No: writing `/lus/scratch/run/restart.00176.dat` took "), text


_ONE_AGGREGATOR = """name: one-aggregator
description: built for a test
job:
  nprocs: 8
  exe: ./sim
  mounts:
    - {path: /lus/scratch, fs: lustre, ost_count: 8}
files:
  - {path: /lus/scratch/run/ocean.nc, lustre: {stripe_size: 4MiB, stripe_count: 4}}
program:
  - {ranks: all, file: /lus/scratch/run/ocean.nc, interface: mpiio, collective: true, cb_nodes: 1, op: write,
     count: 8, size: 1MiB, layout: interleaved, seconds_per_op: 0.01}
"""


def test_posix_writers_and_time_beneath_one_aggregator(tmp_path_factory: pytest.TempPathFactory) -> None:
    spec = write_spec(tmp_path_factory, _ONE_AGGREGATOR, "one-aggregator")
    rep = scenario_report(spec)
    f = next(x for x in rep.top_files if x.path.endswith("ocean.nc"))
    assert f.layer == "MPI-IO" and f.posix_slowest is not None
    # every rank has a layout record of the shared file, but one rank wrote all of it at POSIX
    who = first_sentence(spec, "how many ranks did the POSIX writes for ocean.nc?")
    assert who.startswith(f"Only rank {f.posix_slowest.rank} wrote `/lus/scratch/run/ocean.nc` at the POSIX level"), who
    took = first_sentence(spec, "on the POSIX side, how long did the slowest rank spend writing ocean.nc?")
    assert took.startswith(
        "At the POSIX level, the slowest rank Darshan kept for `/lus/scratch/run/ocean.nc`, rank "
    ), took
    assert "through MPI-IO, its slowest rank took " in took, took


def test_how_many_and_did_it_read_anything_answers_both(tmp_path_factory: pytest.TempPathFactory) -> None:
    spec = write_spec(
        tmp_path_factory,
        """name: opened-not-read
description: built for a test
job:
  nprocs: 2
  exe: ./gmx
  mounts:
    - {path: /gpfs/run, fs: gpfs}
program:
  - {ranks: "0", files: "/gpfs/run/conf/param{i}.in", count_files: 30, op: open_stat, meta_seconds: 0.001}
  - {ranks: all, file: "/gpfs/run/out/traj.{rank}.xtc", op: write, count: 4, size: 1MiB}
""",
        "opened-not-read",
    )
    rep = scenario_report(spec)
    from iodiag.narration.service import Narrator

    text = (
        Narrator()
        .template_answer(rep, "it opens a pile of conf/param*.in files - how many, and did it read anything from them?")
        .text
    )
    assert "30 `/gpfs/run/conf/param#.in` files" in text, text
    assert "No: it read nothing (0 B) from the 30 `/gpfs/run/conf/param#.in` files." in text, text
