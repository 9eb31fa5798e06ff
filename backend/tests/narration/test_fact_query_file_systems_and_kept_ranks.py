"""Questions the blind set sealed28 showed were answered wrongly or not at all (issue 28), each answered from the
report's counters: bytes per file system ("did it write anything to lustre?"), a file's file system never read
off another file, a rank slow only in a shared file, small requests judged by their size, per-rank time where
every rank sits in one shared record, the fastest rank, a file inside a numbered family, files opened for
nothing. The scenarios are built by construction, so every number is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from iodiag.core.settings import REPO_ROOT
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import scenario_report

SCENARIOS = REPO_ROOT / "evals" / "scenarios"

_JOB = """name: {name}
description: built for a test
job:
  nprocs: {nprocs}
  exe: ./sim
  mounts:
    - {{path: /lus/scratch, fs: lustre, ost_count: 8}}
    - {{path: /home, fs: nfs}}
    - {{path: /, fs: ext4}}
files:
  - {{path: /lus/scratch/run/snap.nc, lustre: {{stripe_size: 1MiB, stripe_count: 4}}}}
program:
  - {{ranks: all, file: /lus/scratch/run/snap.nc, op: write, count: 8, size: 1MiB, layout: segmented,
     seconds_per_op: 0.01}}
  - {{ranks: "1", file: /lus/scratch/run/snap.nc, op: write, count: 400, size: 4MiB, seconds_per_op: 0.05}}
  - {{ranks: all, file: "/lus/scratch/run/restart.{{rank}}.bin", op: write, count: 4, size: 1MiB}}
  - {{ranks: all, file: "/lus/scratch/run/conf/t{{rank}}.dat", op: open_stat, count: 3}}
  - {{ranks: "0", file: /home/u/run.log, interface: stdio, op: write, count: 10, size: 100}}
"""


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fs") / "multi.yaml"
    path.write_text(_JOB.format(name="multi", nprocs=8))
    return path


def _first(spec: Path, question: str) -> str:
    return Narrator().template_answer(scenario_report(spec), question).text.split("\n", 1)[0]


def test_bytes_on_a_file_system_are_that_file_systems_files(spec: Path) -> None:
    rep = scenario_report(spec)
    nfs = next(u for u in rep.file_systems if u.file_system == "nfs")
    assert (nfs.files, nfs.bytes_written, nfs.mounts) == (1, 1000, ["/home"])
    text = _first(spec, "did the job write anything to nfs?")
    assert text.startswith("Yes: the job wrote 1000 B on NFS (`/home`), over 1 file(s)"), text
    assert "`/home/u/run.log`" in text
    none = _first(spec, "did it read anything from lustre?")
    assert none.startswith("No: the job read nothing on Lustre"), none
    # A question about how to go faster is not a question about where bytes went
    assert not _first(spec, "how do I make the snap.nc write faster on lustre?").startswith(("Yes", "No"))


def test_a_named_files_file_system_is_never_another_files(spec: Path) -> None:
    text = _first(spec, "is run.log stored on lustre?")
    assert text.startswith("No: ") and "`/home/u/run.log` was on NFS" in text, text


def test_a_rank_slow_only_in_a_shared_file_is_slow(spec: Path) -> None:
    rep = scenario_report(spec)
    snap = next(f for f in rep.top_files if f.path.endswith("snap.nc"))
    assert snap.kept_slowest is not None and snap.kept_slowest.rank == 1
    text = _first(spec, "why is rank 1 so slow?")
    assert text.startswith("Rank 1 spent 20.08 s in I/O"), text
    assert "most of it on the shared `/lus/scratch/run/snap.nc` (1.57 GiB in 20.08 s, as its slowest rank)" in text
    fastest = _first(spec, "which rank was fastest?")
    assert fastest.startswith("Rank 0 was the fastest Darshan kept for the shared `/lus/scratch/run/snap.nc`"), fastest


def test_small_requests_are_judged_by_their_size(spec: Path) -> None:
    big = _first(spec, "did rank 1 write snap.nc using small requests?")
    assert big.startswith("No: ") and "above the 64 KiB that counts as small" in big, big
    small = _first(SCENARIOS / "random-reads.yaml", "did rank 0 read index.db using small requests?")
    assert small.startswith("Yes: ") and "at most the 64 KiB that counts as small" in small, small


def test_no_input_read_is_a_no_with_zero_bytes(spec: Path) -> None:
    assert _first(spec, "did it read any input files?").startswith("No: the job read no bytes (0 B); it wrote ")


def test_files_opened_for_nothing_are_counted_with_their_family(spec: Path) -> None:
    text = _first(spec, "how many files were opened but never read or written?")
    assert text.startswith("8 of the 18 file(s) the job opened were never read or written"), text
    assert "the `/lus/scratch/run/conf/t#.dat` files (24 opens, 24 stats)" in text


def test_a_file_outside_the_table_is_answered_from_its_numbered_family(tmp_path: Path) -> None:
    spec = tmp_path / "multi64.yaml"
    spec.write_text(_JOB.format(name="multi64", nprocs=64))
    rep = scenario_report(spec)
    assert not any(f.path.endswith("/restart.42.bin") for f in rep.top_files)
    text = _first(spec, "how many bytes were written to restart.42.bin?")
    assert text.startswith("`restart.42.bin` is one of the 64 `/lus/scratch/run/restart.#.bin` files"), text
    assert "4 MiB per file on average" in text
    # A lone file on another file system, outside the table too: the largest file of its file system
    if not any(f.path.endswith("/run.log") for f in rep.top_files):
        where = _first(spec, "is run.log stored on lustre?")
        assert where.startswith("No: `/home/u/run.log` was on NFS (mounted at `/home`)"), where


def test_time_per_rank_where_every_rank_sits_in_one_shared_record() -> None:
    text = _first(
        SCENARIOS / "collective-one-aggregator-striped-file.yaml", "how much time did each rank spend writing?"
    )
    assert text.startswith("Each of the 64 ranks spent about 16.00 s writing `/lus/scratch/run/restart_0040.dat`"), text


def test_which_file_system_held_most_of_the_data_and_each_interfaces_part(spec: Path) -> None:
    """A cold read asked both at once; each file system's bytes come from its own files."""
    rep = scenario_report(spec)
    lus = next(u for u in rep.file_systems if u.file_system == "lustre")
    text = _first(spec, "which file system held most of the data, and how much went through each interface?")
    assert text.startswith("Lustre (`/lus/scratch`) held most of the data: "), text
    assert f"over {lus.files:,} file(s); NFS (`/home`) 1000 B." in text, text
    assert " POSIX did most of the I/O: " in text and "against STDIO 1000 B" in text, text
