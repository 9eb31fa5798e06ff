"""How long one direction took, and one rank's time on a file it alone used (issue 28): the seconds asked for
lead the answer, from the ranks' own counters, never the run time in their place. Built by construction, so
every number is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.narration.test_narration_support import first_sentence, write_spec

# Rank 3 writes 8 x 1 MiB at 2 s a call (16 s); the other ranks write the same at 0.01 s a call (0.08 s).
# Rank 0 alone reads its input: 10 x 4 MiB at 0.5 s a call (5 s), plus a small log of its own.
_SPEC = """name: direction-time
description: built for a test
job:
  nprocs: 4
  runtime: 40
  exe: ./sim
  mounts:
    - {path: /lus/scratch, fs: lustre, ost_count: 8}
    - {path: /, fs: ext4}
files:
  - {path: "/lus/scratch/run/out.{rank}.bin", lustre: {stripe_size: 1MiB, stripe_count: 1}}
program:
  - {ranks: "0-2", file: "/lus/scratch/run/out.{rank}.bin", op: write, count: 8, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: "3", file: "/lus/scratch/run/out.{rank}.bin", op: write, count: 8, size: 1MiB, seconds_per_op: 2}
  - {ranks: "0", file: /lus/scratch/run/input.dat, op: read, count: 10, size: 4MiB, seconds_per_op: 0.5}
  - {ranks: "0", file: /lus/scratch/run/run.log, op: write, count: 4, size: 4KiB, seconds_per_op: 0.5}
"""


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _SPEC, "direction-time")


_first = first_sentence


@pytest.mark.parametrize("question", ["how long did writing take?", "how long did the POSIX writes take?"])
def test_how_long_writing_took_leads_with_the_slowest_ranks_seconds(spec: Path, question: str) -> None:
    first = _first(spec, question)
    assert first.startswith("Writing took 16"), first
    assert "rank 3" in first and "average rank" in first, first
    assert "The job ran for" not in first


def test_a_ranks_time_on_a_file_only_it_used_is_that_files_time(spec: Path) -> None:
    first = _first(spec, "how long did rank 0 spend reading input.dat?")
    # 5 s on input.dat, not rank 0's 7 s over all its files
    assert "input.dat" in first and "5.00 s" in first and "40 MiB" in first, first
    assert "7.00 s" not in first, first


def test_how_much_time_against_the_run_is_a_number_not_a_yes(spec: Path) -> None:
    text = _first(spec, "how much time did this job spend in I/O vs the whole run?")
    assert not text.startswith(("Yes", "No")), text
    assert "% of the 40" in text, text
