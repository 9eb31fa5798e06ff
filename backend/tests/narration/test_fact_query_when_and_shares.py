"""Questions the blind set sealed29 showed were answered with the wrong fact or none (issue 28): when a file was
read or written, the share of the run spent reading or writing, which rank moved the most bytes, how many files
had data, what the log says about nodes and what made records corrupt. The scenario is built by construction,
so every number is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from iodiag.core.units import human_seconds
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import scenario_report


def _job(name: str, nprocs: int, extra_mounts: str = "") -> str:
    """The scenario header the tests below share: a job on a Lustre scratch (and any further mounts)."""
    return (
        f"name: {name}\ndescription: built for a test\njob:\n  nprocs: {nprocs}\n  exe: ./sim\n  mounts:\n"
        "    - {path: /lus/scratch, fs: lustre, ost_count: 8}\n" + extra_mounts + "    - {path: /, fs: ext4}\n"
    )


_JOB = (
    _job("phases", 4)
    + """files:
  - {path: /lus/scratch/run/out.nc, lustre: {stripe_size: 1MiB, stripe_count: 4}}
program:
  - {ranks: "0", file: /lus/scratch/run/input.dat, op: read, count: 20, size: 1MiB, seconds_per_op: 0.1}
  - {ranks: all, file: /lus/scratch/run/out.nc, op: write, count: 8, size: 1MiB, layout: segmented,
     seconds_per_op: 0.05, compute: 30.0}
  - {ranks: "2", file: /lus/scratch/run/extra.2.dat, op: write, count: 40, size: 1MiB, seconds_per_op: 0.01}
  - {ranks: all, file: "/lus/scratch/run/conf/t{rank}.dat", op: open_stat, count: 2}
"""
)


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("when") / "phases.yaml"
    path.write_text(_JOB)
    return path


def _first(spec: Path, question: str) -> str:
    return Narrator().template_answer(scenario_report(spec), question).text.split("\n", 1)[0]


def test_when_a_file_was_read_and_written_comes_from_its_timestamps(spec: Path) -> None:
    rep = scenario_report(spec)
    inp = next(f for f in rep.top_files if f.path.endswith("input.dat"))
    out = next(f for f in rep.top_files if f.path.endswith("out.nc"))
    assert inp.read_start_s is not None and inp.read_end_s is not None and inp.write_start_s is None
    assert out.write_start_s is not None and out.write_end_s is not None
    # The input is read before the 30 s of computation, the output written after it
    assert inp.read_end_s < out.write_start_s and out.write_start_s - inp.read_end_s >= 29.0
    text = _first(spec, "When did the writes to out.nc start and finish?")
    assert text.startswith(f"`/lus/scratch/run/out.nc` was written from {out.write_start_s:,.2f} s to "), text
    assert f"{out.write_end_s:,.2f} s" in text and "after the job started" in text
    read = _first(spec, "when was input.dat read?")
    # A moment under a second is said in its own unit, not as "0.00 s"
    assert read.startswith(f"`/lus/scratch/run/input.dat` was read from {human_seconds(inp.read_start_s)} to "), read
    assert "over rank 0" in read
    # Asked about the reads of a file only written: no timestamps of that kind, said so
    none = _first(spec, "when was out.nc read?")
    assert none.startswith("Darshan kept no timestamps for reads of `/lus/scratch/run/out.nc`"), none


def test_the_share_of_the_run_spent_writing_is_that_directions_time(spec: Path) -> None:
    rep = scenario_report(spec)
    s = rep.io_share
    assert s is not None
    text = _first(spec, "what fraction of the runtime was spent writing?")
    share = s.write_s / 4 / s.runtime_s
    assert text.startswith(f"Writing took {share:.0%} of the 34.00 s run on the average rank ("), text
    assert f"{s.write_s:.2f} s summed over the 4 ranks" in text, text
    # A shared file hides each rank's part of it: no rank is named as the one that wrote longest
    assert "spent the most in it" not in text, text
    reading = _first(spec, "how much of the run time went to reading?")
    assert reading.startswith("Reading took "), reading


def test_which_rank_wrote_the_most_is_answered_by_bytes(spec: Path) -> None:
    text = _first(spec, "which rank wrote the most?")
    # Rank 2 wrote 40 MiB of its own beside everyone's part of the shared file
    assert text.startswith("Rank 2 wrote the most: 40 MiB"), text
    by_time = _first(spec, "which rank spent the most time in I/O?")
    assert "spent the most time in I/O" in by_time, by_time


def test_how_many_files_had_data_counts_files_not_bytes(spec: Path) -> None:
    text = _first(spec, "how many files had data written to them?")
    assert text.startswith("The job wrote ") and "to 2 file(s) (of " in text, text


def test_nodes_are_not_recorded_but_the_processes_are(spec: Path) -> None:
    text = Narrator().template_answer(scenario_report(spec), "How many compute nodes did this job use?").text
    assert text.startswith("The log does not record compute nodes"), text
    assert "It records the job's 4 process(es) (MPI ranks)" in text, text


def test_whether_a_rank_wrote_more_data_is_its_bytes_not_its_time(spec: Path) -> None:
    # Rank 2 wrote its own 40 MiB file; the others wrote nothing of their own
    text = _first(spec, "Did rank 2 write more data than the other ranks?")
    assert text.startswith("Yes: rank 2 wrote 40 MiB through its own records"), text
    same = _first(spec, "Did rank 1 write more data than the other ranks?")
    assert same.startswith("No: rank 1 wrote"), same


def test_whether_mpiio_combined_requests_compares_the_two_layers() -> None:
    from iodiag.core.settings import REPO_ROOT

    scenarios = REPO_ROOT / "evals" / "scenarios"
    q = "Did MPI-IO combine the small writes into bigger file-system requests?"
    coll = Narrator().template_answer(scenario_report(scenarios / "mpiio-aggregators-fewer-than-nodes.yaml"), q)
    assert coll.text.startswith("Yes: the 128 MPI-IO writes of 4 MiB are collective"), coll.text
    indep = Narrator().template_answer(
        scenario_report(scenarios / "mpiio-independent-writes-just-over-threshold.yaml"), q
    )
    assert indep.text.startswith("No: the ") and "reached the file system as" in indep.text, indep.text


def test_random_or_sequential_names_the_kind_not_yes() -> None:
    from iodiag.core.settings import REPO_ROOT

    rep = scenario_report(
        REPO_ROOT / "evals" / "scenarios" / "lustre-random-small-writes-own-regions-no-lock-contention.yaml"
    )
    text = Narrator().template_answer(rep, "are the writes random or sequential?").text
    assert text.split(":", 1)[0] in ("Random", "Sequential") or text.startswith("Mixed"), text
    assert not text.startswith(("Yes", "No")), text


def test_when_the_job_ran_and_a_file_named_by_a_word(spec: Path) -> None:
    rep = scenario_report(spec)
    text = _first(spec, "when did the job start?")
    assert text.startswith(f"The job started at {rep.job.start.strftime('%Y-%m-%d %H:%M:%S')} UTC and ended at "), text
    extra = next(f for f in rep.top_files if f.path.endswith("extra.2.dat"))
    loose = _first(spec, "when was the extra file written?")
    assert loose.startswith(f"`/lus/scratch/run/extra.2.dat` was written from {extra.write_start_s:,.2f} s"), loose


_FAMILY = (
    _job("family", 4)
    + """program:
  - {ranks: all, file: "/lus/scratch/run/snap.{rank}.npz", op: read, count: 4, size: 1MiB, seconds_per_op: 0.2,
     compute: 5.0}
"""
)


def test_when_a_family_of_files_was_read_names_the_first(tmp_path: Path) -> None:
    path = tmp_path / "family.yaml"
    path.write_text(_FAMILY)
    rep = scenario_report(path)
    starts = sorted((f.read_start_s or 0.0, f.path) for f in rep.top_files if f.path.endswith(".npz"))
    end = max(f.read_end_s or 0.0 for f in rep.top_files if f.path.endswith(".npz"))
    text = Narrator().template_answer(rep, "when was the first npz file read?").text.split("\n", 1)[0]
    first = starts[0][1].rsplit("/", 1)[-1]
    assert text.startswith("The `/lus/scratch/run/snap.#.npz` files were read from "), text
    assert f"(`{first}` first) to {end:,.2f} s after the job started" in text, text


_READER = (
    _job("reader", 2, "    - {path: /home, fs: nfs}\n")
    + """program:
  - {ranks: all, file: "/lus/scratch/run/in.{rank}.dat", op: read, count: 8, size: 1MiB}
  - {ranks: "0", file: /home/u/log.txt, interface: stdio, op: write, count: 10, size: 100}
  - {ranks: "0", file: /home/u/table.csv, interface: stdio, op: write, count: 20, size: 1KiB}
"""
)


def test_an_interfaces_bytes_name_the_files_when_asked_and_a_no_says_what_moved(tmp_path: Path) -> None:
    path = tmp_path / "reader.yaml"
    path.write_text(_READER)
    rep = scenario_report(path)
    n = Narrator()
    text = n.template_answer(rep, "How much was written with fwrite/STDIO and to which file?").text.split("\n")[0]
    assert text.startswith("STDIO wrote 20.98 KiB in 30 calls (and read 0 B): to `/home/u/table.csv` (20 KiB), "), text
    assert "`/home/u/log.txt` (1000 B)" in text, text
    # A job that only read: "no" to any output, with what it did move
    only_reads = tmp_path / "reads.yaml"
    only_reads.write_text("\n".join(ln for ln in _READER.splitlines() if "stdio" not in ln) + "\n")
    text = n.template_answer(scenario_report(only_reads), "Did this run write any output files?").text
    assert text.startswith("No: the job wrote no bytes (0 B); it read 16 MiB"), text
