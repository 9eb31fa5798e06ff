"""The file with the most I/O time is one file everywhere: the headline, the file table and the chat, ties
included (sixteen ranks writing identical files used to be named differently by the headline and the chat)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.narration.test_narration_support import first_sentence, scenario_report, write_spec

_TIED = """name: tied
description: built for a test
job:
  nprocs: 16
  runtime: 40.0
  exe: ./cells
  mounts:
    - {path: /scratch, fs: lustre, ost_count: 8}
program:
  - {ranks: all, file: "/scratch/run/Cell_D_{rank}", op: write, count: 64, size: 1MiB, seconds_per_op: 0.05,
     compute: 30.0}
"""


@pytest.fixture(scope="module")
def tied(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _TIED, "tied")


def test_headline_table_and_chat_name_the_same_file_when_all_tie(tied: Path) -> None:
    rep = scenario_report(tied)
    assert len({f.io_time_s for f in rep.top_files}) == 1  # every file took the same time: a true tie
    first = rep.top_files[0].path
    said = re.search(r"the file with the most I/O time is (\S+) \(", rep.verdict.where_time_went)
    assert said is not None and said.group(1) == first
    assert f"`{first}`" in first_sentence(tied, "which file had the most I/O time?")
