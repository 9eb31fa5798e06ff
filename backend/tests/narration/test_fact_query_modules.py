"""Questions about what the log holds per module, answered in the first sentence: a module the log lacks is
"not recorded" (never "0 bytes"), HDF5 datasets against HDF5 file opens, one interface's bytes in the
direction asked, a module's opens, "is it read randomly?", a group of files' share of the run.

Every expected number is read from the log with PyDarshan here, not from iodiag's report."""

from __future__ import annotations

import darshan

from iodiag.core.units import human_bytes
from iodiag.narration import fact_query
from iodiag.narration.fact_query.common import percent
from tests.conftest import shared_log, wheel_log
from tests.narration.test_fact_query import first_sentence, report
from tests.narration.test_fact_query_counts import NONMPI, SCENARIOS, counters
from tests.narration.test_narration_support import scenario_report

H5_OPENS_ONLY = "darshan-logs/hdf5_diagonal_write_only/hdf5_file_opens_only.darshan"
PNETCDF = "darshan-logs/ior_pnetcdf_hdf5/shane_ior-PNETCDF_id438100-438100_11-9-41525-10280033558448664385_1.darshan"
IOR_HDF5 = "darshan-logs/ior_pnetcdf_hdf5/shane_ior-HDF5_id438090-438090_11-9-41522-17417065676046418211_1.darshan"
APMPI = "darshan-logs/apmpi/darshan-apmpi-2nodes-64mpi.darshan"


def _modules(name: str) -> set[str]:
    path = shared_log(name) if "/" in name else wheel_log(name)
    with darshan.DarshanReport(str(path), read_all=False) as r:
        return set(r.modules)


def test_a_module_the_log_lacks_is_not_recorded_not_zero() -> None:
    for log in ("noposix.darshan", APMPI):
        assert "POSIX" not in _modules(log)
        text = first_sentence(log, "how much data did it read and write through POSIX?")
        assert text.startswith("None: the log has no POSIX module, so POSIX I/O was not recorded"), text
        assert "STDIO (" in text, text
    why = first_sentence("noposix.darshan", "why are there no POSIX numbers for this job?")
    assert why.startswith("The log has no POSIX module") and "STDIO" in why, why


def test_data_files_missing_from_a_stdio_only_log_are_explained_by_what_it_holds() -> None:
    df = counters("noposix.darshan", "STDIO")
    text = first_sentence("noposix.darshan", "why don't I see any of my simulation data files in this log?")
    assert text.startswith(f"The log holds only STDIO records, of {df['path'].nunique()} file(s)"), text
    assert "no POSIX or MPI-IO module" in text


def test_hdf5_file_opens_without_datasets_are_no_dataset_io() -> None:
    assert "H5D" not in _modules(H5_OPENS_ONLY)
    opens = int(counters(H5_OPENS_ONLY, "H5F")["H5F_OPENS"].sum())
    calls = first_sentence(H5_OPENS_ONLY, "how many dataset reads or writes did HDF5 do?")
    assert calls.startswith("None: 0 HDF5 dataset reads or writes are recorded"), calls
    assert f"({opens} H5F records)" in calls
    did = first_sentence(H5_OPENS_ONLY, "did the script read or write any HDF5 datasets?")
    assert did.startswith("No: the log has no dataset (H5D) records"), did


def test_hdf5_datasets_are_counted_from_the_h5d_records() -> None:
    df = counters(IOR_HDF5, "H5D")
    text = first_sentence(IOR_HDF5, "how many HDF5 datasets did it touch?")
    assert text.startswith(f"The job touched {df['path'].nunique()} HDF5 dataset(s)"), text
    assert f"{int(df['H5D_WRITES'].sum()):,} writes" in text


def test_one_interfaces_bytes_in_the_direction_asked() -> None:
    df = counters(PNETCDF, "PNETCDF_VAR")
    written = int(df["PNETCDF_VAR_BYTES_WRITTEN"].sum())
    text = first_sentence(PNETCDF, "how many bytes went through pnetcdf writes?")
    assert text.startswith(f"PnetCDF wrote {human_bytes(written)} in {int(df['PNETCDF_VAR_INDEP_WRITES'].sum())} calls")


def test_a_module_that_only_stat_ed_a_file_opened_none() -> None:
    df = counters("noposixopens.darshan", "POSIX")
    assert int(df["POSIX_OPENS"].sum()) == 0
    text = first_sentence("noposixopens.darshan", "how many files did POSIX open?")
    assert text.startswith("POSIX opened 0 files"), text
    assert f"only {int(df['POSIX_STATS'].sum())} stat call(s)" in text


def test_is_it_read_randomly_is_yes_where_reads_go_back() -> None:
    rep = scenario_report(SCENARIOS / "random-reads.yaml")
    f = max(rep.top_files, key=lambda x: x.calls.reads)
    c = f.calls
    name = f.path.rsplit("/", 1)[-1]
    q = fact_query.parse_about(f"is {name} read randomly?", rep)
    assert q is not None and q.metric == "sequential" and q.missing
    fact = fact_query.answer(rep, q)
    assert fact is not None
    back = c.reads - c.seq_reads
    assert fact.text.startswith("Yes: " if back >= 0.2 * c.reads else "No: "), fact.text
    assert f"{c.reads:,} reads" in fact.text and f"{c.seeks:,} seeks" in fact.text


def test_a_group_of_files_share_of_the_run_is_its_longest_rank_time() -> None:
    rep = scenario_report(SCENARIOS / "metadata-just-above-threshold.yaml")
    q = fact_query.parse_about("how much of the run went to the result files?", rep)
    assert q is not None and q.metric == "file_share", q
    fact = fact_query.answer(rep, q)
    group = next(g for g in rep.file_groups if "result" in g.pattern)
    assert fact is not None and f"the {group.files:,} `{group.pattern}` files took at most" in fact.text, fact.text
    run = rep.job.runtime_s
    assert f"{percent(group.slowest_s / run)} of the " in fact.text, fact.text


def test_one_rank_doing_all_of_a_file_is_answered_yes_first() -> None:
    rep = scenario_report(SCENARIOS / "ranking-stdio-bulk-beside-random-reads.yaml")
    alone = max((f for f in rep.top_files if f.only_rank == 0), key=lambda f: f.io_time_s)
    name = alone.path.rsplit("/", 1)[-1]
    fact = fact_query.answer(rep, fact_query.parse(f"is one rank doing all the writing of {name}?"))  # type: ignore[arg-type]
    assert fact is not None and fact.text.startswith("Yes: rank 0 alone (1 of the job's 16 ranks) wrote"), fact.text


def test_a_files_most_common_request_size_is_darshans_access_counter() -> None:
    df = counters("sample.darshan", "MPI-IO")
    row = df[df["path"].str.endswith("/vpicio.hdf5")]
    sizes: dict[int, int] = {}
    for k in range(1, 5):
        for a, c in zip(row[f"MPIIO_ACCESS{k}_ACCESS"], row[f"MPIIO_ACCESS{k}_COUNT"], strict=True):
            if a > 0 and c > 0:
                sizes[int(a)] = sizes.get(int(a), 0) + int(c)
    size, count = max(sizes.items(), key=lambda x: (x[1], x[0]))
    text = first_sentence("sample.darshan", "what was the most common write size to vpicio.hdf5?")
    assert (
        text.startswith("The most common request size on `") and f"was {human_bytes(size)}, in {count:,} of its" in text
    )


def test_why_one_file_is_slow_gives_its_requests_and_whether_they_were_collective() -> None:
    df = counters("sample.darshan", "MPI-IO")
    row = df[df["path"].str.endswith("/vpicio.hdf5")]
    writes = int(sum(row[c].sum() for c in ("MPIIO_INDEP_WRITES", "MPIIO_COLL_WRITES", "MPIIO_NB_WRITES")))
    coll = int(row["MPIIO_COLL_WRITES"].sum() + row["MPIIO_COLL_READS"].sum())
    indep = int(row["MPIIO_INDEP_WRITES"].sum() + row["MPIIO_INDEP_READS"].sum())
    expected = (
        "made collectively"
        if not indep
        else "made independently (0 collective)"
        if not coll
        else f"({coll:,} collective, {indep:,} made independently)"
    )
    text = first_sentence("sample.darshan", "why is writing vpicio.hdf5 slow?")
    assert f"over {writes:,} writes" in text and expected in text, text


def test_alignment_of_one_file_is_darshans_not_aligned_counter() -> None:
    df = counters("sample-badost.darshan", "POSIX")
    top = report("sample-badost.darshan").top_files[0].path  # a file the report details
    row = df[df["path"] == top].iloc[0]
    name = str(row["path"]).rsplit("/", 1)[-1]
    n, bad = int(row["POSIX_READS"] + row["POSIX_WRITES"]), int(row["POSIX_FILE_NOT_ALIGNED"])
    text = first_sentence("sample-badost.darshan", f"are the {name} writes aligned?")
    assert text.startswith("No: " if bad >= 0.5 * n else "Yes: "), text
    assert f"{bad:,} of the {n:,} POSIX reads and writes of `" in text
    assert f"the {human_bytes(int(row['POSIX_FILE_ALIGNMENT']))} file alignment" in text


def test_which_library_a_file_went_through_names_the_top_layer_first() -> None:
    from iodiag.analysis import analyze
    from iodiag.ingest import load_profile
    from iodiag.narration.service import Narrator

    example = wheel_log("../../examples/example_logs/ior_hdf5_example.darshan")
    assert "H5D" in darshan.DarshanReport(str(example), read_all=False).modules
    rep = analyze(load_profile(str(example)))
    text = Narrator().template_answer(rep, "which library wrote test123.h5?").text
    assert text.startswith("`/global/cscratch1/sd/ssnyder/test123.h5` went through HDF5, on top of MPI-IO and POSIX")
    # A file the log does not hold gets no such claim.
    assert "went through" not in first_sentence(PNETCDF, "which I/O library wrote nothere.nc?")


def test_stripe_and_file_system_yes_no_questions_start_with_the_answer() -> None:
    with darshan.DarshanReport(str(wheel_log("sample-badost.darshan")), read_all=True) as r:
        comps = r.records["LUSTRE"].to_df()["components"]
        comps["path"] = comps["id"].map(r.name_records)
    top = report("sample-badost.darshan").top_files[0].path  # a file the report holds; its count from PyDarshan
    row = comps[comps["path"] == top].iloc[0]
    name = str(row["path"]).rsplit("/", 1)[-1]
    count = int(row["LUSTRE_COMP_STRIPE_COUNT"])
    text = first_sentence("sample-badost.darshan", f"is {name} on a single OST?")
    assert text.startswith("Yes: " if count == 1 else "No: ") and f"stripe count {count}" in text, text
    fs = first_sentence("sample-badost.darshan", f"is {name} on NFS?")
    assert fs.startswith("No: ") and "Lustre" in fs, fs


def test_a_shell_pattern_names_a_group_of_files() -> None:
    rep = scenario_report(SCENARIOS / "metadata-just-above-threshold.yaml")
    group = next(g for g in rep.file_groups if g.pattern.endswith(".cfg"))
    fact = fact_query.answer(rep, fact_query.parse("how many stat calls on the inputs/*/case*.cfg files?"))  # type: ignore[arg-type]
    assert (
        fact is not None and fact.text == f"The {group.files:,} `{group.pattern}` files had {group.stats:,} stat calls."
    )


E3SM = "darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan"


def test_ranks_that_reached_the_file_system_under_collective_io_are_the_posix_writers() -> None:
    # PyDarshan reads this log (it has an APMPI module) in a child process: reading APMPI with PyDarshan in this
    # process leaves the later ctypes reads here without APMPI node names (seen in test_narration_evals).
    import subprocess
    import sys

    code = (
        "import darshan,sys\n"
        "with darshan.DarshanReport(sys.argv[1], read_all=True) as r:\n"
        "    df = r.records['POSIX'].to_df()['counters']\n"
        "    df['path'] = df['id'].map(r.name_records)\n"
        "    w = df[df['path'].str.endswith('/can_I_out_h0.nc') & (df['POSIX_BYTES_WRITTEN'] > 0)]\n"
        "    print(w['rank'].nunique())\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(shared_log(E3SM))], capture_output=True, text=True)
    writers = int(out.stdout.strip())
    text = first_sentence(E3SM, "how many ranks actually wrote to can_I_out_h0.nc at the POSIX level?")
    assert text.startswith(f"{writers} rank(s) wrote `"), text
    assert "of the 512 that used it through MPI-IO (collective buffering" in text


def test_is_it_read_randomly_without_a_file_is_the_jobs_posix_counters() -> None:
    text = first_sentence(NONMPI, "are the reads random?")
    df = counters(NONMPI, "POSIX")
    reads, seq = int(df["POSIX_READS"].sum()), int(df["POSIX_SEQ_READS"].sum())
    assert f"of the {reads:,} reads of the job (POSIX)" in text and f"{seq:,} after it" in text, text
    assert text.startswith("Yes: " if reads - seq >= 0.2 * reads else "No: ")


def test_a_share_under_one_percent_keeps_two_significant_digits() -> None:
    # "is the checkpoint write hurting the run?": "<1%" hides the number the question asks for
    assert percent(0.001886) == "0.19%"
    assert percent(0.000037) == "0.0037%"
    assert percent(0.5) == "50%"
    assert percent(0.995) == ">99%"


DLIO = "darshan-logs/dlio_logs/snyder_python3_id3116902-2110486_12-19-66980-11865253741532293320_1.darshan"


def _opened(log: str) -> tuple[set[str], set[str], set[str]]:
    """Files with at least one open at POSIX and at STDIO (standard streams aside), and files with POSIX records."""
    path = shared_log(log) if "/" in log else wheel_log(log)
    with darshan.DarshanReport(str(path), read_all=True) as r:
        names = r.name_records
        out: dict[str, set[str]] = {}
        every: set[str] = set()
        for mod, col in (("POSIX", "POSIX_OPENS"), ("STDIO", "STDIO_OPENS")):
            if mod not in r.records:
                out[mod] = set()
                continue
            df = r.records[mod].to_df()["counters"]
            if mod == "POSIX":
                every |= {names.get(i, str(i)) for i in df["id"]}
            per = df.groupby("id")[col].sum()
            out[mod] = {names.get(i, str(i)) for i, n in per.items() if n > 0 and not names.get(i, "").startswith("<")}
    return out["POSIX"], out["STDIO"], every


def test_how_many_files_it_opened_counts_opens_not_records() -> None:
    """ "How many files did it open?" counts files with an open call; records can hold only stats or I/O on a
    descriptor Darshan never saw opened, and the standard streams come opened."""
    posix, stdio, _ = _opened(DLIO)
    text = first_sentence(DLIO, "how many files did it open?")
    assert text.startswith(f"The job opened {len(posix | stdio)} file(s)"), text
    assert f"{len(posix)} at POSIX, {len(stdio)} at STDIO" in text, text
    fopen = first_sentence(DLIO, "how many files were opened with fopen?")
    assert fopen.startswith(f"STDIO opened {len(stdio)} file(s)"), fopen
    posix, stdio, every = _opened("noposixopens.darshan")
    assert not posix and stdio and every  # POSIX records of files it never opened
    text = first_sentence("noposixopens.darshan", "how many files did it open?")
    assert text.startswith(f"The job opened {len(stdio)} file(s)"), text


def test_how_many_aggregators_comes_from_the_ranks_beneath_the_collective_calls() -> None:
    """The ranks with POSIX requests beneath a file's collective MPI-IO calls are its aggregators; a reduced
    shared POSIX record hides them, and the answer says so instead of guessing."""
    one = scenario_report(SCENARIOS / "collective-one-aggregator-striped-file.yaml")
    q = fact_query.parse_about("how many aggregators wrote restart_0040.dat?", one)
    assert q is not None and q.metric == "aggregators", q
    fact = fact_query.answer(one, q)
    assert fact is not None
    assert fact.text.startswith("One aggregator: rank 0 alone issued the 8 GiB of POSIX writes"), fact.text
    assert "X07" in fact.text
    reduced = scenario_report(SCENARIOS / "e2e-netcdf-fill-values-then-data.yaml")
    q = fact_query.parse_about("how many aggregators were there?", reduced)
    assert q is not None
    fact = fact_query.answer(reduced, q)
    assert fact is not None and fact.text.startswith("Unknown: Darshan kept one shared POSIX record"), fact.text
