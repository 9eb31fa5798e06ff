"""Yes/no questions about I/O's size in the run, records without a name, and request sizes across layers
(issue 28). Each scenario is built by construction, so the numbers in the answers are known.

* "is I/O a big part of the run?" asks its size: no below a tenth of the run, even where that share is worth
  cutting; "is it I/O-bound?" on a 50 ms run that is mostly I/O is yes, with the time that makes it moot;
* a log that ran out of records and recorded a negligible share leans no, and says why it cannot be sure;
* records whose id is missing from the name table are counted, and a total says what they would add;
* POSIX requests of another size than the MPI-IO calls above them are explained by collective buffering.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from iodiag.core.settings import REPO_ROOT
from iodiag.ingest.integrity import screen
from iodiag.ingest.table import Table
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import scenario_report

SCENARIOS = REPO_ROOT / "evals" / "scenarios"


def _first(spec: Path, question: str) -> str:
    return Narrator().template_answer(scenario_report(spec), question).text.split("\n", 1)[0]


def _scenario(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"name: {name}\ndescription: built for a test\n{body}")
    return path


def test_a_share_worth_cutting_is_not_a_big_part_of_the_run() -> None:
    spec = SCENARIOS / "io-share-just-above-five-percent.yaml"
    text = _first(spec, "is io a big part of the runtime for this job?")
    assert text.startswith("No: I/O took 6% of the 60.0 min run"), text
    assert "a small part of it, though worth cutting" in text, text
    # the same job, asked whether I/O matters at all: it does
    assert _first(spec, "is io slowing my job down?").startswith("Yes: I/O took 6%"), spec


def test_a_tiny_run_that_is_mostly_io_is_io_bound_but_not_worth_tuning(tmp_path: Path) -> None:
    spec = _scenario(
        tmp_path,
        "tiny-io-bound",
        """job:
  nprocs: 4
  runtime: 0.05
  mounts: [{path: /, fs: ext4}]
program:
  - {ranks: all, file: "/scratch/out/part.{rank}", op: write, count: 4, size: 1MiB, seconds_per_op: 0.01}
""",
    )
    bound = _first(spec, "is this run io bound")
    assert bound.startswith("Yes: I/O took 80% of the 50.0 ms run on the busiest rank (40.2 ms)"), bound
    assert "too little time to be worth tuning" in bound, bound
    assert _first(spec, "is io a big part of the run?").startswith("Yes: I/O took 80%"), spec
    # "a bottleneck" asks whether it costs anything: 40 ms does not, and the answer no longer says the rest of a
    # run that is 80 % I/O is computation
    neck = _first(spec, "is io a bottleneck?")
    assert neck.startswith("No: I/O took 80%") and "too little time" in neck, neck
    assert "computation" not in neck, neck


def test_a_partial_log_with_negligible_recorded_io_leans_no_and_says_why(tmp_path: Path) -> None:
    spec = _scenario(
        tmp_path,
        "partial-negligible",
        """job:
  nprocs: 8
  runtime: 3600
  mounts: [{path: /, fs: ext4}]
program:
  - {ranks: all, file: "/scratch/out/part.{rank}", op: write, count: 4, size: 4MiB, seconds_per_op: 0.1}
log_faults: {partial: [POSIX]}
""",
    )
    text = _first(spec, "my run took an hour, is i/o slowing it down?")
    assert text.startswith("No sign of it in what the log recorded: 400.2 ms on the busiest rank, 0.011% of the"), text
    assert "POSIX kept only 8 records" in text and "whether it matters is unknown" in text, text


def test_records_without_a_name_are_counted_and_corrupt_ones_add_no_bytes() -> None:
    spec = SCENARIOS / "log-corrupt-posix-records.yaml"
    text = _first(spec, "are there records in this log that have no file name?")
    assert text.startswith("Yes: 1,720 of 1,728 POSIX records have an id missing from the log's name table"), text
    # these records also carry ranks outside the job: their byte counters are not trusted as I/O
    assert "they count" not in text, text
    total = _first(spec, "how much did the job write in total?")
    assert "the job wrote 512 MiB" in total and "another" not in total, total


def test_unnamed_but_sound_records_say_what_they_would_add() -> None:
    """Sound records whose only fault is a missing name: their bytes are said beside a total."""
    table = Table(
        {
            "id": np.array([1, 2, 3], dtype=np.uint64),
            "rank": np.array([0, -1, 0]),
            "POSIX_BYTES_WRITTEN": np.array([100, 1 << 30, 5]),
            "POSIX_BYTES_READ": np.array([0, 0, 4096]),
        }
    )
    _, out = screen(
        "POSIX",
        table,
        names={1: "/a"},
        nprocs=4,
        runtime_s=10,
        counter_names=["POSIX_BYTES_WRITTEN", "POSIX_BYTES_READ"],
        fcounter_names=[],
    )
    assert (out.dropped, out.unnamed) == (2, 2)
    assert (out.unnamed_bytes_written, out.unnamed_bytes_read) == ((1 << 30) + 5, 4096)


def test_posix_requests_larger_than_the_mpiio_calls_are_collective_buffers() -> None:
    spec = SCENARIOS / "collective-shared-file-one-ost-one-aggregator.yaml"
    text = _first(spec, "why are the posix writes 16 MiB when the app writes 4 MiB?")
    assert text.startswith("Because the 512 MPI-IO writes of 4 MiB are collective"), text
    assert "into 128 POSIX writes of mostly 16 MiB" in text and "cb_buffer_size" in text, text
    # a question about the time between the layers is still the gap, not the sizes
    gap = _first(spec, "why is mpi-io time so much bigger than posix?")
    assert gap.startswith("On `/lus/scratch/ckpt/shared.ckpt`"), gap
    assert "e-1" not in gap, gap  # no floating-point dust as a share


def test_a_loosely_named_file_asked_about_as_a_problem_gets_its_share(tmp_path: Path) -> None:
    spec = SCENARIOS / "fact-checkpoint-parts-and-history.yaml"
    text = _first(spec, "is the checkpoint write a problem?")
    assert text.startswith("No: writing the 16 `/lus/eagle/proj/case91/chk00220/part.#` files took at most 6.00 s"), (
        text
    )


def test_reading_only_its_python_environment_is_not_reading_data(tmp_path: Path) -> None:
    spec = _scenario(
        tmp_path,
        "python-env-only",
        """job:
  nprocs: 1
  runtime: 10
  mounts: [{path: /, fs: ext4}]
program:
  - {ranks: all, file: "/home/u/venv/lib/python3.11/site-packages/numpy/__init__.py", op: read, count: 2, size: 4KiB}
  - {ranks: all, file: "/home/u/venv/pyvenv.cfg", op: read, count: 1, size: 300}
""",
    )
    text = _first(spec, "did it read any training data?")
    assert text.startswith("No: the job read 8.29 KiB, all of it from the files of its Python environment"), text


def test_most_of_the_run_means_more_than_half() -> None:
    spec = SCENARIOS / "ranking-healthy-checkpoint-io-matters.yaml"
    # 20 % of the run is worth cutting, so "a bottleneck" is yes, but it is not "most of its time"
    assert _first(spec, "does my job spend most of its time in io?").startswith("No: I/O took 20% of the 21.00 s run")
    assert _first(spec, "is io a bottleneck").startswith("Yes: I/O took 20%")
    # "why does it spend most of its time in I/O?" asks for the cause: the verdict, naming what it moved
    why = _first(spec, "why does my job spend most of its time in io?")
    assert why.startswith("I/O takes 20% of this 21.00 s run"), why
    assert "no pattern in the log is at fault: it moved 256 GiB" in why, why


def test_the_straggler_why_names_the_file_it_read_alone_and_the_fix() -> None:
    text = _first(SCENARIOS / "lustre-lone-reader-not-a-slow-ost.yaml", "which rank is the io straggler and why?")
    assert text.startswith("Rank 0 spent the most time in I/O: 102.46 s"), text
    assert "`/lus/scratch/wrf/inputs/grid.nc` (102.40 s), a file no other rank touched: give ranks similar" in text


def test_bulk_stdio_by_one_rank_of_many_says_which() -> None:
    text = _first(SCENARIOS / "stdio-rank0-output-among-posix-readers.yaml", "why is my job slow?")
    assert "(S01: 463.49 MiB, all `output.csv`, in 118,653 writes of 4 KiB on average, by rank 0 alone)" in text


def test_each_ranks_total_time_adds_the_shared_files_slowest_rank() -> None:
    spec = SCENARIOS / "fact-checkpoint-parts-and-history.yaml"
    text = _first(spec, "how long does each rank spend doing io in total")
    assert text == (
        "Each rank spent about 6.00 s in I/O on its own records, plus up to 819.4 ms on the 1 shared file(s) Darshan "
        "keeps once for all ranks (their slowest rank's time): 6.82 s in all on the busiest rank, 2% of the 6.7 min "
        "run."
    ), text


def test_metadata_storm_says_what_the_little_data_was() -> None:
    # "why 157 s of I/O for 32 MB?": the few bytes, their calls and their size beside the metadata time
    rep = scenario_report(SCENARIOS / "ml-training-many-small-samples.yaml")
    j03 = rep.finding("J03")
    assert j03 is not None
    assert "the data took 105.2 ms for 150 MiB in 1,600 requests of 96 KiB on average)" in j03.message
    # no data at all: no clause for it
    rep = scenario_report(SCENARIOS / "metadata-storm-small-files.yaml")
    j03 = rep.finding("J03")
    assert j03 is not None and "(2.2 min summed over ranks; the data took 0 µs) and" in j03.message
