"""Yes/no questions sealed33 (issue 28) answered the wrong way round: a stripe count against the number asked
("more than 8 OSTs?", "really over 256 OSTs?"), one file per rank asked two ways, how many files each rank
wrote against "just one" or "more than one", and "are these numbers even real?" with a remark after it.
Built by construction, so every number is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import first_sentence, scenario_report, write_spec

# 4 ranks: one input read by all from a file striped over 8 OSTs; each rank writes its own Cell_D file and
# three snapshot files of its own.
_SPEC = """name: counts-asked
description: built for a test
job:
  nprocs: 4
  runtime: 60
  exe: ./pele
  mounts:
    - {path: /lus/scratch, fs: lustre, ost_count: 16}
    - {path: /, fs: ext4}
files:
  - {path: /lus/scratch/run/samples.h5, lustre: {stripe_size: 1MiB, stripe_count: 8}}
program:
  - {ranks: all, file: /lus/scratch/run/samples.h5, op: read, count: 16, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: all, file: "/lus/scratch/run/plt/Cell_D_{rank}", op: write, count: 8, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: all, file: "/lus/scratch/run/snap_a.{rank}", op: write, count: 4, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: all, file: "/lus/scratch/run/snap_b.{rank}", op: write, count: 4, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: all, file: "/lus/scratch/run/rec/rec_{rank}.dat", op: write, count: 1, size: 4KiB, seconds_per_op: 0.01}
  - {ranks: "0", file: /lus/scratch/run/reads.fastq, interface: stdio, op: write, count: 64, size: 16KiB,
     seconds_per_op: 0.001}
"""

# The corrupt-records scenario of the trigger eval: 1,720 stray records besides the job's 8
_CORRUPT = Path(__file__).resolve().parents[3] / "evals" / "scenarios" / "log-corrupt-posix-records.yaml"


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_spec(tmp_path_factory, _SPEC, "counts-asked")


_first = first_sentence


@pytest.mark.parametrize(
    ("question", "opener"),
    [
        ("is samples.h5 striped over more than 8 OSTs?", "No: "),
        ("is samples.h5 striped over at least 8 OSTs?", "Yes: "),
        ("samples.h5 is small - is it really striped over 8 OSTs?", "Yes: "),
        ("is samples.h5 striped over 16 OSTs?", "No: "),
        ("is samples.h5 on more than one OST?", "Yes: "),
        ("does samples.h5 use more than 8 stripes?", "No: "),
        ("does samples.h5 use more than 4 stripes?", "Yes: "),
    ],
)
def test_a_stripe_count_is_judged_against_the_number_asked(spec: Path, question: str, opener: str) -> None:
    text = _first(spec, question)
    assert text.startswith(opener) and "stripe count 8" in text, text


def test_a_separate_file_for_every_rank_is_one_file_per_rank(spec: Path) -> None:
    text = _first(spec, "does pele write a separate Cell_D file for every rank?")
    assert text.startswith("Yes: the job has 4 `/lus/scratch/run/plt/Cell_D_#` files for its 4 ranks"), text


@pytest.mark.parametrize(
    ("question", "opener"),
    [("did each rank write just one file?", "No: "), ("did each rank write more than one file?", "Yes: ")],
)
def test_how_many_files_each_rank_wrote_against_the_count_asked(spec: Path, question: str, opener: str) -> None:
    text = _first(spec, question)
    assert text.startswith(opener), text
    assert "have none" not in text, text


@pytest.mark.parametrize(
    "question",
    [
        "are these numbers even real? something looks off",
        "the log has weird huge numbers - is it trustworthy?",
        "is this log ok or is something off with it?",
    ],
)
def test_the_judgement_asked_about_sets_the_yes_or_no(question: str) -> None:
    text = _first(_CORRUPT, question)
    assert text.startswith("No: "), text
    assert "1,720" in text, text


def test_a_file_named_like_a_verb_does_not_set_the_direction(spec: Path) -> None:
    # "reads.fastq" is written, not read: the bytes that went into it
    text = _first(spec, "how many bytes went into reads.fastq?")
    assert "1 MiB written" in text and "0 B read" not in text, text


# 256 ranks, each its own file round-robin over 16 OSTs; OST 5 twenty times slower: 16 ranks' files are on it,
# and the slow-OST finding lists only the first 10 of them.
_SLOW_OST = """name: slow-ost-many-ranks
description: built for a test
job:
  nprocs: 256
  nodes: 8
  runtime: 120
  exe: ./checkpoint
  mounts:
    - {path: /lus/scratch, fs: lustre, ost_count: 16, slow_osts: {5: 20}}
    - {path: /, fs: ext4}
files:
  - {path: "/lus/scratch/ckpt/part.{rank}.dat", lustre: {stripe_size: 1MiB, stripe_count: 1}}
program:
  - {ranks: all, file: "/lus/scratch/ckpt/part.{rank}.dat", op: write, count: 8, size: 4MiB}
"""


def test_a_slow_rank_beyond_the_ranks_the_slow_ost_finding_lists(tmp_path: Path) -> None:
    spec = tmp_path / "slow-ost-many-ranks.yaml"
    spec.write_text(_SLOW_OST)
    report = scenario_report(spec)
    l04 = report.finding("L04")
    assert l04 is not None and len(l04.ranks) < 16
    own = {r.rank: r.write_s for r in report.rank_table.ranks}
    slow = max(own, key=lambda r: (own[r], r))  # a rank on the slow OST
    unlisted = max((r for r in own if r not in l04.ranks and own[r] >= 0.9 * own[slow]), default=None)
    assert unlisted is not None
    text = Narrator().template_answer(report, f"why is rank {unlisted} slow?").text.split("\n", 1)[0]
    assert "No finding in the log explains it" not in text, text
    assert f"lists only {len(l04.ranks)} of the 16 ranks with data on OST 5" in text, text


def test_files_per_rank_of_a_family_named_by_a_glob(spec: Path) -> None:
    text = _first(spec, "how many rec_*.dat files did each rank write?")
    assert text.startswith("Each rank wrote 1 of the `/lus/scratch/run/rec/rec_#.dat` files on average"), text
    assert "4 files over the 4 rank(s)" in text, text


def test_files_per_rank_asked_in_the_other_order(spec: Path) -> None:
    text = _first(spec, "each rank writes how many output files here?")
    assert text.startswith("Ranks used "), text
