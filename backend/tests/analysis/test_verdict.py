"""Costs, severity from cost and the verdict, on every real log: the report must agree with itself."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from iodiag.analysis import analyze
from iodiag.analysis.engine import with_detected_severity
from iodiag.analysis.models import Cause, Confidence, Report, Severity
from iodiag.analysis.outcomes.verdict import lead_words
from iodiag.analysis.registry import CHECKS, Kind
from iodiag.core.thresholds import Thresholds
from iodiag.ingest import load_profile
from iodiag.render import render
from tests.conftest import REPO, all_logs, log_id, shared_log, wheel_log

E3SM = "darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan"
DRISHTI_SAMPLE = "drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan"
APMPI = "darshan-logs/apmpi/darshan-apmpi-2nodes-64mpi.darshan"
MPI_IO_TEST = "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"


@functools.cache
def _report(path: Path) -> Report:
    return analyze(load_profile(str(path), include=("HEATMAP",)))


@pytest.mark.parametrize("log", all_logs(), ids=log_id)
def test_verdict_agrees_with_the_findings(log: Path) -> None:
    r = _report(log)
    v = r.verdict
    t = Thresholds()
    j01 = r.finding("J01") is not None
    # J01 states the verdict's "I/O does not matter"; the two are decided in one place. (A log without I/O
    # records has no I/O share for J01 to state; its verdict says so in its own words.)
    if r.io_share is not None:
        assert j01 == (v.io_matters is False)
    if v.io_matters is False:
        assert not v.causes
        loud = [f.code for f in r.findings if f.severity in (Severity.CRITICAL, Severity.WARNING)]
        assert not [c for c in loud if CHECKS[c].kind != Kind.QUALITY], loud
        assert v.headline.startswith(("I/O is not why this job is slow", "No I/O was recorded"))
    io = r.io_share.slowest_rank_io_s if r.io_share else 0.0
    for c in v.causes:
        # One number per fact: each cause carries its card's cost (causes may overlap; none exceeds the I/O time).
        f = r.finding(c.code)
        assert f is not None and f.severity in (Severity.CRITICAL, Severity.WARNING), c.code
        assert f.impact is not None and f.impact.seconds is not None
        assert c.seconds == pytest.approx(min(f.impact.seconds, io)) and c.seconds <= io + 1e-6
    if v.causes:
        top = r.finding(v.causes[0].code)
        assert top is not None and top.impact is not None
        assert v.causes[0].seconds == pytest.approx(min(top.impact.seconds or 0.0, io))
        assert v.causes[0].code in v.headline or v.causes[0].title.lower()[:20] in v.headline.lower()
        # Measured and modelled costs lead; inside a confidence group, larger first.
        firm = [c for c in v.causes if c.confidence is not Confidence.LOW]
        assert [c.seconds for c in firm] == sorted((c.seconds for c in firm), reverse=True) or len(firm) < 2
    families = [CHECKS[c.code].family for c in v.causes]
    assert len(families) == len(set(families)), "a family of findings is named once"
    del t


@pytest.mark.parametrize("log", all_logs(), ids=log_id)
def test_nothing_red_costs_under_one_percent(log: Path) -> None:
    r = _report(log)
    for f in r.findings:
        if f.severity is not Severity.CRITICAL or CHECKS[f.code].kind == Kind.SUMMARY:
            continue
        assert f.impact is not None and f.impact.share_of_runtime is not None, f.code
        assert f.impact.share_of_runtime >= 0.01, (f.code, f.impact)


def test_e3sm_names_the_wait_inside_mpiio_then_read_modify_write() -> None:
    r = _report(shared_log(E3SM))
    v = r.verdict
    assert v.io_matters is True
    codes = [c.code for c in v.causes]
    assert codes[0] == "X04", codes
    assert "X05" in codes[:3]
    x04, x05 = r.finding("X04"), r.finding("X05")
    assert x04 is not None and x04.impact is not None and x04.impact.basis.startswith("measured")
    assert x05 is not None and "zero bytes" in x05.message
    # The cost is on the critical path: minutes, not the summed hours.
    assert 200 < (x04.impact.seconds or 0) < 700
    assert r.file_system == "lustre"


def test_drishti_sample_leads_with_bytes_written_twice_not_uneven_reads() -> None:
    r = _report(shared_log(DRISHTI_SAMPLE))
    v = r.verdict
    assert v.causes and v.causes[0].code in ("X06", "X04")
    x06 = r.finding("X06")
    assert x06 is not None and "HDF5" in x06.message and "2.00x" in x06.message
    assert v.causes[0].code != "P22"


def test_gpfs_job_gets_no_lustre_advice() -> None:
    r = _report(shared_log(DRISHTI_SAMPLE))
    assert r.file_system == "gpfs"
    recs = {rec for f in r.findings for rec in f.recommendations}
    assert not {x for x in recs if x.startswith("lustre-")}
    assert "lfs " not in v_text(r)


def v_text(r: Report) -> str:
    return render(r, "text") + r.verdict.model_dump_json()


def test_negligible_io_in_a_long_job_is_quiet() -> None:
    r = _report(shared_log(APMPI))
    assert r.verdict.io_matters is False
    assert r.counts.critical == 0 and r.counts.warning == 0
    s01 = r.finding("S01")
    # Drishti's rule still holds (detection parity), but it costs milliseconds.
    assert s01 is not None and s01.detected_severity is Severity.CRITICAL and s01.severity is Severity.INFO
    assert s01.impact is not None and (s01.impact.seconds or 0) < 1


def test_tiny_job_io_does_not_matter_whatever_its_share() -> None:
    r = _report(shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.4.5.darshan"))
    assert r.io_share is not None and r.io_share.share_slowest > 0.5
    assert r.verdict.io_matters is False
    assert "I/O is not why" in r.verdict.headline
    # A large share of a tiny run says why it still does not matter, instead of reading as a contradiction.
    assert "of the 34.7 ms run, too little time to matter however large its share" in r.verdict.headline


def test_sample_badost_leads_with_the_slow_ost() -> None:
    r = _report(wheel_log("sample-badost.darshan"))
    assert r.verdict.causes and r.verdict.causes[0].code == "L04"
    assert r.verdict.causes[0].share_of_runtime > 0.5
    good = _report(wheel_log("sample-goodost.darshan"))
    assert "L04" not in good.codes()


def test_data_loader_workload_keeps_mpi_advice_quiet() -> None:
    logs = sorted(shared_log("darshan-logs/dlio_logs").glob("*.darshan"))
    for log in logs:
        r = _report(log)
        assert r.workload.value == "data-loader"
        for code in ("M01", "P09"):
            f = r.finding(code)
            if f is not None:
                assert f.severity is Severity.INFO, (log.name, code)


def test_exactly_one_mib_requests_are_not_small() -> None:
    # mpi-io-test writes and reads 16 MiB blocks; the 3.x release logs' ACCESS counters say so. A job of 1 MiB
    # requests lands in Darshan's 100K_1M bin; the ACCESS counters keep it out of "small".
    from iodiag.analysis.checks.posix import _small_counts

    r = load_profile(str(shared_log(MPI_IO_TEST)))
    posix = r.table("POSIX")
    assert posix is not None
    writes = posix["POSIX_WRITES"]
    zero = np.zeros(len(posix), dtype=np.int64)
    table = posix.with_columns(
        **{f"POSIX_SIZE_WRITE_{b}": zero for b in ("0_100", "100_1K", "1K_10K", "10K_100K")},
        POSIX_SIZE_WRITE_100K_1M=writes,
        POSIX_ACCESS1_ACCESS=np.full(len(posix), 1 << 20, dtype=np.int64),
        POSIX_ACCESS1_COUNT=writes,
        **{
            c: zero
            for c in ("POSIX_SIZE_READ_100K_1M", "POSIX_ACCESS2_COUNT", "POSIX_ACCESS3_COUNT", "POSIX_ACCESS4_COUNT")
        },
    )
    assert int(_small_counts(table, "WRITE").sum()) == 0
    table = table.with_columns(POSIX_ACCESS1_ACCESS=np.full(len(posix), (1 << 20) - 1, dtype=np.int64))
    assert int(_small_counts(table, "WRITE").sum()) == int(writes.sum())


def test_reports_lead_with_the_verdict() -> None:
    r = _report(shared_log(E3SM))
    headline = r.verdict.headline
    for fmt in ("text", "markdown", "html"):
        out = render(r, fmt)
        first_words = headline.split(";")[0][:30]
        assert first_words in " ".join(out.split()), fmt
        flat = " ".join(out.split())
        assert flat.index(first_words) < flat.index("X05"), fmt
        assert "costs ≈" in flat, fmt


def test_severity_drishti_shows_the_rules_own_severity() -> None:
    r = _report(shared_log(APMPI))
    d = with_detected_severity(r)
    s01 = d.finding("S01")
    assert s01 is not None and s01.severity is Severity.CRITICAL
    assert d.counts.critical >= 1 and d.verdict == r.verdict
    out = subprocess.run(
        [sys.executable, "-m", "iodiag", "analyze", str(shared_log(APMPI)), "-f", "json", "--severity", "drishti"],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(out.stdout)
    assert data["counts"]["critical"] >= 1
    bad = subprocess.run(
        [sys.executable, "-m", "iodiag", "analyze", str(shared_log(APMPI)), "--severity", "loud"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_partial_posix_makes_cross_layer_checks_stand_down() -> None:
    r = _report(shared_log("darshan-logs/partial_data_dxt/partial_data_dxt.darshan"))
    assert any("partial" in c for c in r.verdict.caveats)


def test_every_interface_is_listed() -> None:
    r = _report(
        shared_log(
            "darshan-logs/ior_pnetcdf_hdf5/shane_ior-HDF5_id438090-438090_11-9-41522-17417065676046418211_1.darshan"
        )
    )
    names = {i.name for i in r.interfaces}
    assert {"HDF5", "MPI-IO", "POSIX"} <= names
    hdf5 = next(i for i in r.interfaces if i.name == "HDF5")
    assert not hdf5.counted and hdf5.note
    mpiio = next(i for i in r.interfaces if i.name == "MPI-IO")
    assert mpiio.counted


def _scenario_report(name: str, tmp: Path) -> Report:
    from iodiag.synth.build import build_log
    from iodiag.synth.scenario import load_scenario

    sc = load_scenario(REPO / "evals" / "scenarios" / f"{name}.yaml")
    out = tmp / f"{name}.darshan"
    build_log(sc, out)
    return analyze(load_profile(str(out)))


def test_dfs_bytes_are_counted_so_stdio_is_not_all_of_the_data(tmp_path: Path) -> None:
    r = _scenario_report("ranking-dfs-io-matters", tmp_path)
    dfs = next(i for i in r.interfaces if i.name == "DFS")
    assert dfs.counted and dfs.bytes_written == 128 << 30
    assert r.workload.value == "daos" and r.file_system == "daos"
    assert r.io_share is not None and r.io_share.bytes_written >= 128 << 30
    assert "S01" not in r.codes()  # 2 KiB of STDIO next to 128 GiB through DFS
    assert r.job.file_systems.get("daos") == 32
    m01 = r.finding("M01")
    assert m01 is not None and "DFS" in m01.message and m01.severity is Severity.INFO
    assert not {rec for f in r.findings for rec in f.recommendations if rec.startswith("lustre-")}


def test_actions_carry_this_jobs_values() -> None:
    badost = _report(wheel_log("sample-badost.darshan"))
    l04 = badost.finding("L04")
    # The job writes 2,048 one-OST files per run into one directory: `lfs setstripe -c 1 -o 0 DIR` would put every
    # one of them on OST 0 (action safety, ost-pinning), so the action is to report the OST, not to pin.
    assert l04 is not None and not [a for a in l04.actions if " -o " in a.command]
    assert "storage team" in badost.verdict.headline and "-o 0" not in badost.verdict.headline

    drishti = _report(shared_log(DRISHTI_SAMPLE))
    x06 = drishti.finding("X06")
    assert x06 is not None and x06.actions[0].command == "H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);"
    assert "H5D_FILL_TIME_NEVER" in drishti.verdict.headline
    # GPFS: no lfs command anywhere.
    assert not [a for f in drishti.findings for a in f.actions if a.command.startswith("lfs ")]

    e3sm = _report(shared_log(E3SM))
    x04 = e3sm.finding("X04")
    # 56 aggregators already wrote for 8 nodes with collective buffering on: no hint would shorten the wait
    # (cb_nodes=8 would cut the aggregators sevenfold). Measuring where the wait goes is a step, not the fix
    # (action safety, measurement): never a finding's first action nor the verdict's command.
    assert x04 is not None and not x04.actions and e3sm.verdict.causes[0].command == ""
    assert not [a for f in e3sm.findings for a in f.actions if "cb_nodes" in a.command]
    measure = [a for f in e3sm.findings for a in f.actions[1:] if "MPICH_MPIIO_STATS" in a.command]
    assert measure and all("56 aggregators for 8 nodes" in a.effect and a.saves_s is None for a in measure)
    assert all(a.where.startswith("measure first") for a in measure)


def test_stripe_rules() -> None:
    from iodiag.analysis.outcomes.actions import stripe_count_for, stripe_size_for

    mib = 1 << 20
    assert stripe_size_for(4 * mib) == 4 * mib and stripe_size_for(3 * mib) == 3 * mib
    assert stripe_size_for(782 * 1024) == mib and stripe_size_for(5 * mib + 1) == 8 * mib
    assert stripe_size_for(1 << 30) == 64 * mib
    assert stripe_count_for(2 << 30, writers=64, nodes=4) == 4  # one stripe per writing node
    assert stripe_count_for(2 << 30, writers=64, nodes=None) == 8
    assert stripe_count_for(500 << 30, writers=2048, nodes=None) == 72
    assert stripe_count_for(500 << 30, writers=3, nodes=None) == 3  # never more stripes than writers


def test_nfs_independent_writes_point_to_the_file_system() -> None:
    r = _report(shared_log(MPI_IO_TEST))
    x04 = r.finding("X04")
    assert r.file_system == "nfs" and x04 is not None
    assert x04.recommendations[0] == "use-scratch-file-system"
    assert "scratch file system" in r.verdict.headline


def _actions(r: Report) -> dict[str, str]:
    return {a.recommendation: a.command for f in r.findings for a in f.actions}


def test_actions_speak_the_interface_the_job_writes_through(tmp_path: Path) -> None:
    """Collective I/O is spelled as a call in the job's own library; buffers are sized from its requests."""
    stdio = _actions(_scenario_report("ranking-stdio-bulk-output", tmp_path))
    # 8 KiB fwrite calls: a stream buffer of 16 requests, at least 1 MiB.
    assert stdio["stdio-larger-buffer"].startswith("setvbuf(fp, NULL, _IOFBF, 1048576);")
    mpiio = _actions(_scenario_report("mpiio-independent-writes-just-over-threshold", tmp_path))
    assert mpiio["mpiio-collective-io"].startswith("MPI_File_write_at_all(")
    h5 = _actions(_scenario_report("openpmd-hdf5-small-independent-writes", tmp_path))
    assert h5["mpiio-collective-io"] == "H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);"
    # 16 MiB is ROMIO's default collective buffer: setting it would be a default presented as a fix.
    assert (
        "romio_cb_write=enable" in h5["aggregate-small-requests"]
        and "cb_buffer_size" not in h5["aggregate-small-requests"]
    )
    nc = _actions(_scenario_report("e2e-netcdf-fill-values-then-data", tmp_path))
    assert nc["mpiio-collective-io"].startswith("ncmpi_put_vara_double_all(")
    meta = _actions(_scenario_report("xlayer-hdf5-metadata-among-data", tmp_path))
    assert meta["hdf5-collective-metadata"].startswith("H5Pset_all_coll_metadata_ops(fapl, 1);")


_PNETCDF_SHARED = """
name: pnetcdf-independent-shared
description: 64 ranks put (or get) interleaved 64 KiB pieces of one Lustre file with independent PnetCDF calls
job:
  nprocs: 64
  nodes: 2
  exe: ./flash4
  mounts:
    - {path: /lus/scratch, fs: lustre, ost_count: 8}
    - {path: /, fs: ext4}
files:
  - {path: /lus/scratch/run/plot_0001.nc, lustre: {stripe_size: 4MiB, stripe_count: 4}}
program:
  - {ranks: all, file: /lus/scratch/run/plot_0001.nc, interface: pnetcdf, collective: false, op: OP,
     count: 2000, size: 64KiB, layout: interleaved, seconds_per_op: 0.004, compute: 20.0}
"""


def _inline_report(text: str, tmp: Path) -> Report:
    from iodiag.synth.build import build_log
    from iodiag.synth.scenario import load_scenario

    src, out = tmp / "scenario.yaml", tmp / "scenario.darshan"
    src.write_text(text)
    build_log(load_scenario(src), out)
    return analyze(load_profile(str(out)))


def test_pnetcdf_fixes_name_the_call_the_job_makes(tmp_path: Path) -> None:
    """A PnetCDF job that only reads is told about ncmpi_get_vara_all, not the put call; the lock contention of
    its interleaved writes is fixed by the collective PnetCDF call, not a generic MPI-IO sentence."""
    (tmp_path / "w").mkdir()
    (tmp_path / "r").mkdir()
    writes = _inline_report(_PNETCDF_SHARED.replace("op: OP", "op: write"), tmp_path / "w")
    l06 = writes.finding("L06")
    assert l06 is not None and l06.actions
    assert l06.actions[0].recommendation == "avoid-shared-file-locks"
    assert l06.actions[0].command.startswith("ncmpi_put_vara_double_all(")
    reads = _inline_report(_PNETCDF_SHARED.replace("op: OP", "op: read"), tmp_path / "r")
    assert reads.verdict.causes[0].code == "M02"
    assert reads.verdict.causes[0].command.startswith("ncmpi_get_vara_double_all(")
    assert "put_vara" not in reads.verdict.headline


def test_a_job_already_collective_is_not_told_to_go_collective() -> None:
    assert "mpiio-collective-io" not in _actions(_report(shared_log(DRISHTI_SAMPLE)))


def _action(r: Report, rec: str) -> str:
    return next(a.command + " | " + a.effect for f in r.findings for a in f.actions if a.recommendation == rec)


def test_file_per_process_create_storm_is_told_one_file_per_node(tmp_path: Path) -> None:
    """256 ranks each creating a file, creates queued on the metadata server: one shared file per node."""
    r = _scenario_report("file-per-process-create-storm", tmp_path)
    text = _action(r, "reduce-metadata")
    assert "MPI_COMM_TYPE_SHARED" in text and "MPI_File_write_at_all" in text
    assert "256 files, each written by one of 256 ranks" in text and "64 MiB" in text


def test_many_small_input_files_are_staged_to_node_local_storage(tmp_path: Path) -> None:
    """4 ranks opening 1,000 small files each on NFS: pack them and unpack to /tmp, one archive read per node."""
    r = _scenario_report("metadata-storm-small-files", tmp_path)
    text = _action(r, "reduce-metadata")
    assert text.startswith("tar -cf inputs.tar -C /nfs/home/proj/inputs . && srun --ntasks-per-node=1")
    assert "4,000 small files" in text and "4,000 opens from 4 ranks" in text
    # The output of a file-per-process job is not an input to stage.
    fpp = _scenario_report("file-per-process-create-storm", tmp_path)
    assert "tar -cf" not in _action(fpp, "reduce-metadata")


def test_posix_shared_file_small_writes_get_per_process_files_and_the_collective_call(tmp_path: Path) -> None:
    """Small interleaved writes to one shared file through POSIX alone: two concrete ways out, each with the
    file's own numbers (a job without MPI-IO had no command at all before)."""
    r = _scenario_report("ranking-small-shared-writes", tmp_path)
    p06 = r.finding("P06")
    assert p06 is not None
    coll, split = (a.command + " | " + a.effect for a in p06.actions)
    # The collective call first (it aggregates); a file per process is the smaller change.
    assert "MPI_File_write_at_all" in coll and "640,000 POSIX writes" in coll
    assert split.startswith('snprintf(path, sizeof path, "%s.%05d", output_name, rank);')
    assert (
        "the 32 ranks that wrote the shared file (640,000 writes, 2.44 GiB)" in split
        and "each write a file of their own" in split
    )
    assert "MPI_File_write_at_all" in r.verdict.headline
    # A single-process job is never told to split files between ranks or to go collective.
    one = _scenario_report("ranking-stdio-bulk-output", tmp_path)
    assert all(a.recommendation != "mpiio-collective-io" for f in one.findings for a in f.actions)


def test_lustre_layouts_are_assessed_whether_or_not_a_lustre_finding_fired(tmp_path: Path) -> None:
    """The files that moved the most bytes get their layout judged against size, writers and requests."""
    e3sm = _report(shared_log("darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan"))
    big = e3sm.lustre_layouts[0]
    # 282 GiB over 56 OSTs, one 1 MiB stripe per aggregator, 782 KiB requests: nothing to change.
    assert big.path.endswith("can_I_out_h0.nc") and (big.stripe_count, big.stripe_size) == (56, 1 << 20)
    assert big.writers == 56 and big.fits and big.command is None
    # A shared file on one OST: more stripes, sized to its 2 MiB requests.
    one = _scenario_report("lustre-shared-file-single-ost", tmp_path).lustre_layouts[0]
    assert not one.fits and one.command == "lfs setstripe -c 4 -S 2M /lus/scratch/out"
    # 256 KiB stripes under 2 MiB requests: larger stripes, the count kept.
    small = _scenario_report("lustre-stripes-too-small", tmp_path).lustre_layouts[0]
    assert (small.suggested_count, small.suggested_size) == (4, 2 << 20) and not small.fits
    # One writer per file on one OST: no request crosses an OST, so the stripe size does not matter.
    fpp = _scenario_report("file-per-process-1024-ranks", tmp_path).lustre_layouts
    assert fpp and all(lay.fits for lay in fpp)
    # Never fewer or smaller stripes than a file has.
    assert all(lay.suggested_count >= lay.stripe_count and lay.suggested_size >= lay.stripe_size for lay in fpp)


def test_rank_zero_reading_the_input_alone_is_named_as_work_it_did_alone(tmp_path: Path) -> None:
    # 1.48x the mean rank is under J04's ratio, but the 2.5 s the others wait is 5 % of the run: a user wants to
    # hear that rank 0 read the input alone, not that "nothing explains" the slow rank.
    r = _scenario_report("rank-io-imbalance-serial-input-read", tmp_path)
    assert r.io_share is not None and r.io_share.slowest_rank == 0
    j04 = next(f for f in r.findings if f.code == "J04")
    assert j04.ranks == [0] and [fe.path for fe in j04.files] == ["/lus/scratch/wrf/wrfinput_d01.bin"]
    assert "no other rank touched" in j04.message
    assert r.verdict.causes[0].code == "J04"
    assert "rank 0 did alone" in r.verdict.headline and "nothing in the log" not in r.verdict.headline


def test_a_straggler_under_the_ratio_and_the_run_share_is_no_finding(tmp_path: Path) -> None:
    r = _scenario_report("rank-io-imbalance-just-below-factor", tmp_path)
    assert "J04" not in {f.code for f in r.findings}


def test_an_ost_loaded_by_a_single_stripe_shared_file_is_priced_once(tmp_path: Path) -> None:
    # OST 12 carries 32x the median OST's bytes because of the single-stripe input every rank reads: that is
    # L01's cause; L05 stays on the report as info and is not a second cause in the verdict.
    r = _scenario_report("lustre-single-ost-shared-input-read", tmp_path)
    l05 = next(f for f in r.findings if f.code == "L05")
    assert l05.severity.value == "info" and "see L01" in l05.message
    assert [c.code for c in r.verdict.causes][:1] == ["L01"] and "L05" not in {c.code for c in r.verdict.causes}


def test_small_requests_do_not_make_a_slow_ost(tmp_path: Path) -> None:
    r = _scenario_report("lustre-small-diagnostics-not-a-slow-ost", tmp_path)
    codes = {f.code for f in r.findings}
    assert "L04" not in codes and "L05" not in codes and r.verdict.causes[0].code == "P06"


def test_slow_ost_is_judged_on_files_read_in_order(tmp_path: Path) -> None:
    # A shared table read at random in 256 KiB requests is slow per byte on its own OSTs because of the seeks;
    # the OST that is slow is the one a per-rank file read in order crawls on.
    r = _scenario_report("lustre-slow-ost-beside-random-table", tmp_path)
    l04 = r.finding("L04")
    assert l04 is not None and l04.subject.startswith("OST 5,")
    assert r.verdict.causes[0].code == "L04"


def test_a_single_stripe_file_many_ranks_read_gets_more_stripes(tmp_path: Path) -> None:
    # One OST serves every reader as it would every writer: "what stripe settings should I use?" on an input
    # that many ranks read must not answer "the layout already fits".
    r = _scenario_report("lustre-single-ost-shared-input-read", tmp_path)
    lay = max(r.lustre_layouts, key=lambda x: x.bytes_moved)
    assert lay.stripe_count == 1 and lay.writers == 0 and lay.readers > 1
    assert not lay.fits and lay.suggested_count > 1 and lay.command and "lfs setstripe -c" in lay.command


_CROWDED_OST = """
name: crowded-ost-and-small-writes
description: >-
  256 ranks read their 8 MiB slices of one shared file on a single OST (slow: the OST is split 256 ways), then
  each writes 500 x 2 KiB to a file of its own.
job:
  nprocs: 256
  exe: ./sim
  mounts:
    - {path: /lus/scratch, fs: lustre, ost_count: 32}
    - {path: /, fs: ext4}
files:
  - {path: /lus/scratch/run/restart.h5, lustre: {stripe_size: 1MiB, stripe_count: 1}}
program:
  - {ranks: all, file: /lus/scratch/run/restart.h5, op: read, count: 1, size: 8MiB, layout: segmented,
     seconds_per_op: 4.0}
  - {ranks: all, file: "/lus/scratch/run/stats/rank{rank}.bin", op: write, count: 500, size: 2KiB,
     seconds_per_op: 0.002, compute: 10.0}
"""


def test_a_crowded_single_ost_file_is_no_yardstick_for_small_requests(tmp_path: Path) -> None:
    """Large reads every rank makes at once from one OST run at a 256th of it each: priced against that rate,
    2 KiB writes at 1 MiB/s would look as fast as large requests and cost nothing."""
    r = _inline_report(_CROWDED_OST, tmp_path)
    assert r.finding("L01") is not None
    p06 = r.finding("P06")
    assert p06 is not None and p06.impact is not None and p06.impact.seconds is not None
    assert p06.impact.seconds > 0.9, p06.impact  # 500 writes of 2 ms per rank, almost all of it lost
    assert "reference rank bandwidth" in p06.impact.basis


def _cause(code: str, seconds: float, confidence: Confidence = Confidence.MEDIUM) -> Cause:
    return Cause(
        code=code, title=code, seconds=seconds, share_of_runtime=seconds / 100, summary="", confidence=confidence
    )


def test_headline_never_calls_a_root_cause_the_largest_when_its_symptom_costs_more() -> None:
    # M03 (no collective call) leads L06 (lock contention it causes) at 5.74 s against L06's 5.89 s: the
    # headline must not say "largest" while the list under it shows a bigger number; it names the other figure.
    said, below = lead_words([_cause("M03", 5.74), _cause("L06", 5.89), _cause("S02", 1.0)])
    assert said == "the root cause is"
    assert below == "; L06 measures the same time one layer down as ≈ 5.89 s"
    # The same two at costs that print alike, or the root really the larger: plain "largest".
    assert lead_words([_cause("M03", 5.741), _cause("L06", 5.742)]) == ("the largest cost is", "")
    assert lead_words([_cause("M03", 6.0), _cause("L06", 5.89)]) == ("the largest cost is", "")
    # An upper bound that exceeds the measured first cause: "largest measured".
    said, _ = lead_words([_cause("P08", 2.0), _cause("S01", 9.0, Confidence.LOW)])
    assert said == "the largest measured cost is"
