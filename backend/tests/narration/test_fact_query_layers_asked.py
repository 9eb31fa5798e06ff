"""Questions sealed32 (issue 28) answered wrong or not at all: whether one named file went through an
interface, which ranks reached POSIX beneath collective MPI-IO, a rank's bytes at the POSIX level, "more than the
other ranks" by a little, the request size of a job with no POSIX size counters, the interface of a DFS-only job,
whether the job wrote anything, and a family's file system asked yes or no. Built by construction, so every number
is known; one real log (the wheel's noposix.darshan) for Lustre layouts without POSIX records."""

from __future__ import annotations

from pathlib import Path

import pytest

from iodiag.evals.answers import report_for
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import first_sentence, write_spec

# 8 ranks on GPFS. A shared checkpoint written collectively through one aggregator (rank 0 issues every POSIX
# write); a particle file rank 0 writes alone through POSIX; every rank reads its own 64 MiB state file and rank 0
# also reads a 16 MiB mesh; every rank writes its own small dump file.
_GPFS = """name: layers-asked
description: built for a test
job:
  nprocs: 8
  nodes: 1
  runtime: 60
  exe: ./sim
  mounts:
    - {path: /gpfs/scratch, fs: gpfs}
    - {path: /, fs: ext4}
program:
  - {ranks: all, file: /gpfs/scratch/run/checkpoint.bin, interface: mpiio, collective: true, op: write,
     count: 16, size: 4MiB, layout: interleaved, cb_nodes: 1, seconds_per_op: 0.05}
  - {ranks: "0", file: /gpfs/scratch/run/particles.bin, op: write, count: 32, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: all, file: "/gpfs/scratch/run/state.{rank}.raw", op: read, count: 16, size: 4MiB, seconds_per_op: 0.01}
  - {ranks: "0", file: /gpfs/scratch/run/mesh.bin, op: read, count: 4, size: 4MiB, seconds_per_op: 0.01}
  - {ranks: all, file: "/gpfs/scratch/run/dump.{rank}.dat", op: write, count: 4, size: 1MiB, seconds_per_op: 0.01}
"""

# 4 ranks reading one DFS file in 16 MiB calls, nothing else.
_DFS = """name: dfs-reads
description: built for a test
job:
  nprocs: 4
  runtime: 30
  exe: ./train
  mounts:
    - {path: /daos/pool0/sim, fs: daos}
    - {path: /, fs: ext4}
files:
  - {path: /daos/pool0/sim/train.bin, chunk_size: 1MiB}
program:
  - {ranks: all, file: /daos/pool0/sim/train.bin, interface: dfs, op: read, count: 64, size: 16MiB,
     seconds_per_op: 0.02}
"""


@pytest.fixture(scope="module")
def gpfs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _GPFS, "layers-asked")


@pytest.fixture(scope="module")
def dfs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _DFS, "dfs-reads")


_first = first_sentence


def test_whether_a_named_file_went_through_an_interface(gpfs: Path) -> None:
    no = _first(gpfs, "was particles.bin written through MPI-IO?")
    assert no.startswith("No: `/gpfs/scratch/run/particles.bin` went through POSIX"), no
    yes = _first(gpfs, "was checkpoint.bin written through MPI-IO?")
    assert yes.startswith("Yes: `/gpfs/scratch/run/checkpoint.bin` went through MPI-IO"), yes


def test_the_ranks_that_reached_posix_beneath_collective_writes(gpfs: Path) -> None:
    text = _first(gpfs, "did all 8 ranks write to checkpoint.bin at the POSIX level?")
    assert text.startswith("No: only rank 0 wrote `/gpfs/scratch/run/checkpoint.bin` at the POSIX level"), text
    assert "of the 8 that used it through MPI-IO" in text, text


def test_a_ranks_bytes_at_the_posix_level_are_the_posix_records(gpfs: Path) -> None:
    text = _first(gpfs, "how much did rank 0 write at the POSIX level?")
    # rank 0, the lone aggregator, wrote the whole 512 MiB checkpoint at POSIX (64 MiB of it its own MPI-IO part)
    assert text.startswith("At the POSIX level, rank 0 wrote 512 MiB of `/gpfs/scratch/run/checkpoint.bin`"), text


def test_a_little_more_than_every_other_rank_is_yes_slightly(gpfs: Path) -> None:
    text = _first(gpfs, "did rank 0 read more than the other ranks?")
    assert text.startswith("Yes, slightly: rank 0 read 80 MiB"), text
    assert "64 MiB for the median of the other 7 ranks (16 MiB more)" in text, text


def test_a_familys_file_system_asked_yes_or_no(gpfs: Path) -> None:
    assert _first(gpfs, "are the dump files on GPFS?").startswith("Yes: the 8 `"), _first(
        gpfs, "are the dump files on GPFS?"
    )
    assert _first(gpfs, "are the dump files on Lustre?").startswith("No: the 8 `")


def test_whether_any_rank_wrote_is_the_jobs_bytes(dfs: Path, gpfs: Path) -> None:
    assert _first(dfs, "did any rank write output?").startswith("No: the job wrote no bytes (0 B)")
    assert _first(gpfs, "did any rank write output?").startswith("Yes")


def test_request_size_and_interface_of_a_dfs_only_job(dfs: Path) -> None:
    size = _first(dfs, "read request size?")
    assert "256 reads through DFS of 16 MiB on average" in size, size
    iface = _first(dfs, "what I/O interface is this?")
    assert iface.startswith("The job's I/O went through DFS"), iface


def test_lustre_layouts_of_files_with_no_posix_records() -> None:
    # The wheel's noposix.darshan: STDIO only, its files' LUSTRE records all stripe count 1 of 1 MiB
    rep = report_for("wheel:../../examples/example_logs/noposix.darshan", dxt=True)
    text = Narrator().template_answer(rep, "what stripe count do the files on cscratch use?").text.split("\n", 1)[0]
    assert text.startswith("The busiest files with a Lustre layout have stripe count 1, stripe size 1 MiB"), text
    assert "where striping does not apply" not in text
