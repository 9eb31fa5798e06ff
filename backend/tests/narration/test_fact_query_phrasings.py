"""Phrasings people use for facts the query layer already knows (issue 28): a terse "slow OST?" is a yes/no,
"libs" are interfaces, a short typo is read as meant, "collective" can name the write a time question asks about,
a memory-alignment count is not the file-alignment one, and a size question with "and total" gets both. Each
scenario is built by construction, so the numbers are known."""

from __future__ import annotations

from pathlib import Path

from iodiag.core.settings import REPO_ROOT
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import scenario_report

SCENARIOS = REPO_ROOT / "evals" / "scenarios"
CHECKPOINT = SCENARIOS / "mpiio-collective-checkpoint-restart.yaml"


def _first(spec: Path, question: str) -> str:
    return Narrator().template_answer(scenario_report(spec), question).text.split("\n", 1)[0]


def test_a_terse_slow_ost_question_is_answered_yes_or_no() -> None:
    spec = SCENARIOS / "lustre-slow-ost-among-sixteen.yaml"
    assert _first(spec, "any slow OSTs?").startswith("Yes: OST 5 was slow, hitting 4 rank(s)")
    assert _first(spec, "which OST was slow?").startswith("OST 5 was slow")


def test_libs_typos_and_a_layers_time() -> None:
    assert _first(CHECKPOINT, "which I/O libs does it use?").startswith("The job's I/O went through MPI-IO")
    assert _first(CHECKPOINT, "totl written?").startswith("The job wrote 512 MiB")
    assert _first(CHECKPOINT, "total posix write time summed over ranks?") == (
        "POSIX calls took 31.4 ms writing, 31.4 ms reading, 6.4 ms in metadata calls, summed over ranks."
    )


def test_collective_names_the_write_a_time_question_asks_about() -> None:
    text = _first(CHECKPOINT, "how long did the collective restart write take?")
    assert text.startswith("Writing `/scratch/ckpt/restart.bin` took 31.8 ms on its slowest rank (rank 0)"), text
    size = _first(CHECKPOINT, "how big was the restart write?")
    assert size.startswith("`/scratch/ckpt/restart.bin`: 512 MiB written in 64 write calls"), size
    share = _first(CHECKPOINT, "what fraction of the run did the slowest rank spend writing restart.bin?")
    assert "took 31.8 ms on its slowest rank (rank 0), 2% of the 2.00 s run" in share, share


def test_request_size_and_total_gives_both() -> None:
    # the writes asked about, not the reads beside them: their size and what they wrote in all
    assert _first(CHECKPOINT, "write request size and total written?") == (
        "The job made 32 POSIX writes, mostly 16 MiB (16 MiB on average, 512 MiB in all)."
    )


def test_memory_alignment_is_its_own_count() -> None:
    spec = SCENARIOS / "mem-misaligned-just-over-threshold.yaml"
    text = _first(spec, "how many of the writes were memory-unaligned?")
    assert text == (
        "11 of the 100 POSIX reads and writes of the job (11%) used a memory buffer not aligned to 8 bytes "
        "(Darshan's MEM_NOT_ALIGNED)."
    )


def test_the_files_every_word_names_beat_the_files_one_word_names() -> None:
    text = _first(SCENARIOS / "metadata-just-above-threshold.yaml", "did it read any data from the case cfg files?")
    assert text.startswith("No: the job read 0 B from the 4,000 files named `/nfs/home/proj/inputs/#/case#.cfg`")


def test_a_dfs_jobs_small_request_fix_is_worded_for_dfs_not_stdio() -> None:
    rep = scenario_report(SCENARIOS / "dfs-small-writes-shared.yaml")
    text = Narrator().template_answer(rep, "how can i speed up my job?").text
    todo = [line for line in text.split("\n") if "What to do" in line]
    assert todo and "dfs_write" in todo[0], text
    assert "setvbuf" not in text, text


def test_a_shared_files_per_rank_bytes_say_its_request_size_and_no_empty_remainder(tmp_path: Path) -> None:
    # Read cold on a blind log: "besides that, rank 0 wrote 0 B ... the only rank with any", and no size
    spec = tmp_path / "shared-plus-stat.yaml"
    spec.write_text(
        """name: shared-plus-stat
description: every rank writes one shared file; rank 0 also stats a config file
job:
  nprocs: 8
  runtime: 20
  mounts: [{path: /, fs: ext4}]
program:
  - {ranks: all, file: "/scratch/out/shared.dat", op: write, count: 64, size: 128KiB, seconds_per_op: 0.001}
  - {ranks: "0", file: "/home/u/run.cfg", op: open_stat, meta_seconds: 0.001}
"""
    )
    text = _first(spec, "how much did each rank write, and in what size?")
    assert text == (
        "Most of the data is in 1 shared file(s) Darshan keeps one record for: 64 MiB written in all, 8 MiB "
        "per rank on average over the job's 8 ranks (the per-rank split is not kept), in requests of mostly "
        "128 KiB."
    ), text


def test_which_files_it_read_the_most_from_is_by_bytes() -> None:
    text = _first(SCENARIOS / "fact-checkpoint-parts-and-history.yaml", "which files did it read the most from?")
    assert text == "The job read 512 MiB: `/lus/eagle/proj/case91/history/hist_0283.dat` (512 MiB).", text


def test_small_files_every_rank_reads_get_the_read_once_fix(tmp_path: Path) -> None:
    spec = tmp_path / "shared-frames.yaml"
    spec.write_text(
        """name: shared-frames
description: every rank opens and reads each of 64 small json frames
job:
  nprocs: 8
  runtime: 600
  mounts: [{path: /, fs: ext4}]
program:
  - {ranks: all, files: "/scratch/frames/frame_{i}.json", count_files: 64, op: read, count: 32, size: 4KiB,
     seconds_per_op: 0.005}
"""
    )
    text = _first(spec, "it reads thousands of tiny json frames. how do i make that faster?")
    assert text.startswith("The 64 `/scratch/frames/frame_#.json` files on a local ext4 disk took about 10.26 s"), text
    assert "every one of the 8 ranks opens and reads each file: reading them once on one rank and broadcasting" in text


def test_a_metadata_why_question_gets_the_metadata_fix() -> None:
    text = _first(SCENARIOS / "metadata-storm-small-files.yaml", "33 s per rank in metadata?? what's happening")
    assert text.startswith("Metadata calls (open, stat, seek, close) took 2.2 min summed over ranks"), text
    assert text.endswith("Open, stat and close files less often; combine many small files; cache metadata results.")


def test_bad_counters_and_impossible_figures_point_at_the_corrupt_records() -> None:
    spec = SCENARIOS / "log-corrupt-posix-records.yaml"
    assert _first(spec, "are there bad counters in this log?").startswith(
        "Yes: Corrupt records left out (D04): 1,720 of 1,728 POSIX records are corrupt"
    )
    assert _first(spec, "why does darshan say it wrote 3 exabytes?").startswith("Corrupt records left out (D04)")


def test_a_family_named_by_a_common_word_or_a_glob_gets_its_request_size() -> None:
    spec = SCENARIOS / "fact-checkpoint-parts-and-history.yaml"
    family = (
        "The 16 `/lus/eagle/proj/case91/chk00220/part.#` files had 320,000 writes of 1 KiB on average "
        "(312.50 MiB, 20,000 per file), counted at POSIX; the most common size was 1 KiB, in 320,000 of 320,000 "
        "requests."
    )
    # "part" is no name elsewhere ("a big part of the run"), but right before "files" it is
    assert _first(spec, "write size for part files?") == family
    # a glob is the family, not its first file
    assert _first(spec, "what's the write request size on the part.* files?") == family


def test_the_interface_after_through_is_the_one_asked_about() -> None:
    text = _first(SCENARIOS / "hdf5-fill-values-small-dataset.yaml", "did the hdf5 files go through MPI-IO?")
    assert text.startswith("Yes: MPI-IO shows 290 operations moving 768.00 MiB"), text
    no_mpiio = _first(SCENARIOS / "metadata-storm-small-files.yaml", "did the files go through MPI-IO?")
    assert no_mpiio.startswith("No: the log has no MPI-IO records"), no_mpiio


def test_an_apps_name_between_each_and_rank_and_c_parentheses_are_read_through() -> None:
    spec = SCENARIOS / "fact-checkpoint-parts-and-history.yaml"
    share = _first(spec, "what fraction of the runtime did each cp2k rank spend writing?")
    assert share.startswith("Each rank spent about 6.00 s writing, 1% of the 6.7 min run"), share
    opens = _first(spec, "how many open() calls did it make in total?")
    assert opens == "The job made 32 opens at POSIX (16 at MPI-IO).", opens
    why = _first(spec, "it spends ~6 s per rank writing only 20 MB each. why?")
    assert why.startswith("Of the job's I/O time (6.82 s on the busiest rank, 2% of the 6.7 min run)"), why


def test_what_a_request_size_question_also_asks_of_the_same_requests() -> None:
    """ "Size and pattern?" adds the order of a POSIX file's requests; "collective or independent, and what size?"
    adds how an MPI-IO file's calls were made."""
    random = _first(SCENARIOS / "random-reads.yaml", "how is index.db being read - request size and pattern?")
    assert random.startswith("The most common request size on `/scratch/in/index.db` was 64 KiB"), random
    assert "; random (non-sequential): " in random and "of its 4,000 reads start past the previous one" in random
    indep = _first(
        SCENARIOS / "mpiio-independent-writes-just-over-threshold.yaml",
        "are the field.bin writes collective or independent, and what size?",
    )
    assert "256 KiB" in indep and "; independent: 0 of its" in indep, indep


def test_switches_between_reading_and_writing_are_not_the_reads(tmp_path: Path) -> None:
    spec = tmp_path / "switches.yaml"
    spec.write_text(
        """name: switches
description: write, read back, write again
job: {nprocs: 4, exe: ./sim, mounts: [{path: /, fs: ext4}]}
program:
  - {ranks: all, file: /scratch/run/traj.dat, op: write, count: 10, size: 1MiB, layout: segmented}
  - {ranks: all, file: /scratch/run/traj.dat, op: read, count: 10, size: 1MiB, layout: segmented}
  - {ranks: all, file: /scratch/run/traj.dat, op: write, count: 10, size: 1MiB, layout: segmented}
"""
    )
    rep = scenario_report(spec)
    f = next(x for x in rep.top_files if x.path.endswith("traj.dat"))
    assert f.calls.rw_switches > 0
    text = _first(spec, "how many times did ranks switch between reading and writing on traj.dat?")
    assert f"had {f.calls.rw_switches:,} read/write switches" in text, text


def test_speed_it_up_about_a_named_file_gives_its_own_fix_command() -> None:
    text = _first(
        SCENARIOS / "collective-one-aggregator-striped-file.yaml",
        "restart_0040.dat takes ages to write. how do I speed it up?",
    )
    assert "is slow mainly because of collective MPI-IO funnelled through one or few aggregators (X07)" in text, text
    assert text.endswith('(`export MPICH_MPIIO_HINTS="*:cb_nodes=16"`).'), text


def test_how_much_each_rank_of_a_shared_record_read_is_the_kept_rank_and_the_even_split() -> None:
    text = _first(
        SCENARIOS / "collective-one-aggregator-striped-file.yaml",
        "how many ranks wrote restart_0040.dat and how much each?",
    )
    assert text.startswith("All 64 ranks wrote `/lus/scratch/run/restart_0040.dat` (8 GiB)"), text
    assert text.endswith("; an even split would be 128 MiB per rank."), text
