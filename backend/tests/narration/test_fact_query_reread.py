"""Whole-job "is it reading the same files over and over?": every read file's bytes against its extent, with
P09's threshold, so a small config file read twice does not turn the answer into a yes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.narration.test_narration_support import first_sentence, write_spec

_HEAD = (
    "description: built for a test\njob:\n  nprocs: 4\n  exe: python -u train.py\n  mounts:\n"
    "    - {path: /lus/scratch, fs: lustre, ost_count: 8}\n    - {path: /home, fs: nfs}\n"
)
_TWICE = (
    "name: twice\n"
    + _HEAD
    + """program:
  - {ranks: all, file: "/lus/scratch/in/shard.{rank}.bin", op: read, count: 8, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: all, file: "/lus/scratch/in/shard.{rank}.bin", op: read, count: 8, size: 1MiB, seconds_per_op: 0.01}
"""
)
_ONCE = (
    "name: once\n"
    + _HEAD
    + """program:
  - {ranks: all, file: "/lus/scratch/in/shard.{rank}.bin", op: read, count: 8, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: "0", file: /home/me/config.yaml, op: read, count: 2, size: 4KiB, seconds_per_op: 0.001}
  - {ranks: "0", file: /home/me/config.yaml, op: read, count: 2, size: 4KiB, seconds_per_op: 0.001}
"""
)
_WRITES = (
    "name: writes\n"
    + _HEAD
    + "program:\n"
    + '  - {ranks: all, file: "/lus/scratch/out.{rank}", op: write, count: 4, size: 1MiB, seconds_per_op: 0.01}\n'
)


@pytest.fixture(scope="module")
def twice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _TWICE, "twice")


@pytest.fixture(scope="module")
def once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _ONCE, "once")


@pytest.fixture(scope="module")
def writes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _WRITES, "writes")


@pytest.mark.parametrize(
    "question",
    [
        "is the job reading the same files over and over?",
        "does it read the same data more than once?",
        "any redundant reads?",
        "do the ranks read their input twice?",
    ],
)
def test_files_read_twice_get_a_yes_with_the_bytes_read_again(twice: Path, question: str) -> None:
    said = first_sentence(twice, question)
    assert said.startswith("Yes: 4 of the 4 files the job read had data read more than once"), said
    assert "32 MiB read beyond their extents" in said


def test_a_small_file_read_twice_does_not_make_a_yes(once: Path) -> None:
    said = first_sentence(once, "is the job reading the same files over and over?")
    assert said.startswith("No: the job read 32.02 MiB from 5 file(s)"), said
    assert "no file had 1 MiB or more read twice" in said


def test_a_job_that_reads_nothing_says_so(writes: Path) -> None:
    assert first_sentence(writes, "is it re-reading data?") == "No: the job read no bytes from any file."


def test_a_named_file_keeps_its_own_answer(twice: Path) -> None:
    said = first_sentence(twice, "is shard.0.bin read more than once?")
    assert said.startswith("Yes: 16 MiB was read from `/lus/scratch/in/shard.0.bin`"), said
