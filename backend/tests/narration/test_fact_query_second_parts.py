"""Questions whose answer was right but came second or not at all: the interface of a file named by a word,
the time asked before the size, a slip in "complete", "did it read anything?", and a job that wrote nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.narration.test_narration_support import first_sentence, write_spec


def _spec(name: str, nprocs: int, program: str, *, runtime: float | None = None, exe: str = "./sim") -> str:
    """A scenario on one Lustre scratch: the header every spec here shares, then its program (and faults)."""
    run = f"  runtime: {runtime}\n" if runtime is not None else ""
    return (
        f"name: {name}\ndescription: built for a test\njob:\n  nprocs: {nprocs}\n{run}  exe: {exe}\n  mounts:\n"
        f"    - {{path: /lus/scratch, fs: lustre, ost_count: 8}}\n{program}"
    )


_SPEC = _spec(
    "parts",
    4,
    """program:
  - {ranks: all, file: /lus/scratch/run/restart.00036.nc, interface: pnetcdf, collective: true, op: write,
     count: 16, size: 4MiB, seconds_per_op: 0.05}
  - {ranks: "0", file: /lus/scratch/run/reads.fastq, interface: stdio, op: write, count: 4096, size: 16KiB,
     seconds_per_op: 0.001}
  - {ranks: all, file: "/lus/scratch/run/part.{rank}.dat", op: write, count: 8, size: 1MiB, seconds_per_op: 0.01}
""",
    runtime=100.0,
)
_READER = _spec(
    "reader",
    1,
    """program:
  - {ranks: all, file: /lus/scratch/in/data.npz, op: read, count: 64, size: 1MiB, seconds_per_op: 0.01}
""",
    runtime=20.0,
    exe="python train.py",
)
_EVEN = _spec(
    "even",
    4,
    """program:
  - {ranks: all, file: "/lus/scratch/run/part.{rank}.dat", op: write, count: 100, size: 1MiB, seconds_per_op: 0.1}
""",
    runtime=100.0,
)
_PARTIAL = _spec(
    "partial",
    4,
    """program:
  - {ranks: all, file: "/lus/scratch/run/part.{rank}.dat", op: write, count: 4, size: 4MiB, seconds_per_op: 0.01}
log_faults: {partial: [POSIX]}
""",
)


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _SPEC, "parts")


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _READER, "reader")


@pytest.fixture(scope="module")
def even(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _EVEN, "even")


@pytest.fixture(scope="module")
def partial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _PARTIAL, "partial")


def test_the_interface_of_a_file_named_by_a_word(parts: Path) -> None:
    said = first_sentence(parts, "which interface wrote the restart file?")
    assert said.startswith("`/lus/scratch/run/restart.00036.nc` went through PnetCDF"), said


def test_the_time_asked_first_leads_and_the_size_follows(parts: Path) -> None:
    said = first_sentence(parts, "how long did writing reads.fastq take and what size were the writes?")
    assert said.startswith("Writing `/lus/scratch/run/reads.fastq` took 4.10 s"), said
    assert "of 16 KiB on average" in said


def test_each_rank_alike_gets_its_share_of_the_run(even: Path) -> None:
    said = first_sentence(even, "how long does each rank spend in I/O")
    assert said.startswith("Each rank spent about 10.00 s in I/O, 10% of the 100.00 s run"), said


def test_a_slip_in_complete_still_asks_about_completeness(partial: Path) -> None:
    assert first_sentence(partial, "is the log complet?").startswith("No: the log is partial")


def test_did_it_read_anything_gets_the_bytes_read(reader: Path, parts: Path) -> None:
    assert first_sentence(reader, "did it read anything?").startswith("Yes: the job read 64 MiB")
    said = first_sentence(parts, "did the job read anything?")
    assert said.startswith("No: the job read no bytes (0 B)"), said


def test_a_job_that_wrote_nothing_says_no_bytes(reader: Path) -> None:
    said = first_sentence(reader, "did this python process write any data?")
    assert said.startswith("No: the job wrote no bytes (0 B); it read 64 MiB"), said


_KEPT = _spec(
    "kept",
    4,
    """program:
  - {ranks: all, file: /lus/scratch/run/field.dat, op: write, count: 16, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: "0", file: /lus/scratch/run/field.dat, op: write, count: 16, size: 1MiB, seconds_per_op: 0.05}
  - {ranks: all, file: "/lus/scratch/run/log.{rank}.txt", op: write, count: 2, size: 4KiB, seconds_per_op: 0.001}
""",
    runtime=60.0,
)


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _KEPT, "kept")


def test_a_kept_rank_of_a_shared_file_gets_its_bytes_there_in_the_first_sentence(kept: Path) -> None:
    said = first_sentence(kept, "how much did rank 0 write?")
    assert said.startswith("Rank 0 wrote 8 KiB in 2 writes of 4 KiB on average through its own records"), said
    assert "and Darshan kept it as the slowest rank of the shared file `/lus/scratch/run/field.dat`: 32 MiB" in said
