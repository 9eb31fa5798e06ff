"""Answers about files and records the report used to route elsewhere, each in the first sentence: a DAOS
file's chunk size and whether its requests fit it, the fwrite calls on one file with their mean size, a file the
log never recorded, how far a partial module got, what a log never records (exit status), whether ranks other
than one did I/O, and a rank slower only by work no other rank did.

Expected numbers come from the logs with PyDarshan in a child process (see test_fact_query_judged), never from
iodiag's report; scenario logs are built from evals/scenarios by iodiag's writer (real Darshan log files)."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from iodiag.core.units import human_bytes
from iodiag.narration.service import Narrator
from tests.narration.pydarshan_child import pydarshan_json, report

_RECORDS = r"""
import json, sys
import darshan
with darshan.DarshanReport(sys.argv[1], read_all=True) as r:
    out = {"nprocs": int(r.metadata["job"]["nprocs"]), "names": {str(k): v for k, v in r.name_records.items()},
           "partial": {m: bool(v.get("partial_flag")) for m, v in r.modules.items()},
           "held": sorted(r.modules), "modules": {}}
    if "LUSTRE" in r.records:
        c = r.records["LUSTRE"].to_df()["components"]
        out["osts"] = {str(i): [int(o) for o in osts] for i, osts in zip(c["id"], c["LUSTRE_OST_IDS"])}
    for mod in ("POSIX", "MPI-IO", "STDIO", "DFS"):
        if mod in r.records:
            d = r.records[mod].to_df()
            df = d["counters"].merge(d["fcounters"], on=["id", "rank"])
            out["modules"][mod] = json.loads(df.assign(id=df["id"].astype(str)).to_json(orient="records"))
print(json.dumps(out))
"""


@cache
def records(log: str) -> dict[str, Any]:
    return pydarshan_json(_RECORDS, log)


def first(log: str, question: str) -> str:
    return Narrator().template_answer(report(log), question).text.split("\n")[0]


def _rows(log: str, module: str, suffix: str) -> list[dict[str, Any]]:
    r = records(log)
    return [row for row in r["modules"][module] if r["names"][row["id"]].endswith(suffix)]


def test_a_daos_files_chunk_size_and_whether_its_requests_fit_it() -> None:
    log = "dfs-small-writes-shared.yaml"
    rows = _rows(log, "DFS", "/dump.0004")
    chunk = max(row["DFS_CHUNK_SIZE"] for row in rows)
    size = max(rows, key=lambda row: row["DFS_ACCESS1_COUNT"])["DFS_ACCESS1_ACCESS"]
    assert chunk == 2**20 and size == 8 * 2**10 and size % chunk != 0
    name = records(log)["names"][rows[0]["id"]]  # a DFS name is the object's path in its container
    text = first(log, "what DFS chunk size does dump.0004 use?")
    assert text.startswith(f"`{name}` uses a DFS chunk size of 1 MiB"), text
    fits = first(log, "are the DAOS writes to dump.0004 a multiple of the chunk size?")
    # 8 KiB divides the 1 MiB chunk: each request stays inside one chunk, 128 of them to fill it (no straddling)
    assert fits.startswith("No: ") and "8 KiB" in fits and "1/128 of a chunk" in fits and "straddle" not in fits, fits


def test_fwrite_calls_on_one_file_come_with_their_mean_size() -> None:
    log = "ranking-stdio-bulk-output.yaml"
    [row] = _rows(log, "STDIO", "/results.0.csv")
    mean = row["STDIO_BYTES_WRITTEN"] / row["STDIO_WRITES"]
    text = first(log, "how many fwrite calls went into results.0.csv and how big were they?")
    assert f"had {row['STDIO_WRITES']:,} write calls of {human_bytes(mean)} on average (counted at STDIO)" in text
    size = first(log, "what's the average fwrite size into results.0.csv?")
    assert "writes averaged 8 KiB" in size, size


def test_a_file_the_log_never_recorded_is_said_to_be_absent() -> None:
    log = "ranking-stdio-bulk-output.yaml"  # 8 files: the report lists every one, so absence is certain
    names = records(log)["names"].values()
    assert not any(n.endswith("uniref90.fasta") for n in names)
    text = first(log, "did this job read uniref90.fasta?")
    assert text.startswith("No: the log has no record of a file named `uniref90.fasta`"), text


def test_a_partial_module_says_how_many_records_it_kept_first() -> None:
    log = "log-partial-posix-module.yaml"
    r = records(log)
    assert r["partial"]["POSIX"]
    kept = len({row["id"] for row in r["modules"]["POSIX"]})
    text = first(log, "why is the POSIX data in this log marked partial?")
    assert text.startswith(f"The log is partial: POSIX kept {kept:,} records, then ran out of record memory"), text
    caught = first(log, "did darshan catch every file this job opened?")
    assert caught.startswith(f"No: the log is partial: POSIX kept {kept:,} records"), caught


def test_an_exit_status_is_not_in_any_log() -> None:
    text = first("sample.darshan", "did the job get killed or exit normally?")
    assert text.startswith("No: the log does not record whether the job was killed or exited cleanly"), text


def test_whether_ranks_other_than_one_did_io_is_answered_yes_or_no() -> None:
    log = "ranking-stdio-bulk-output.yaml"
    ranks = {row["rank"] for mod in records(log)["modules"].values() for row in mod if row["rank"] >= 0}
    others = sorted(ranks - {0})
    assert others
    text = first(log, "did any rank other than 0 do I/O?")
    assert text.startswith(f"Yes: {len(others):,} other rank(s) did I/O"), text


RELEASE = "darshan-logs/release_logs/mpi-io-test-x86_64-3.4.6.darshan"
APMPI = "darshan-logs/apmpi/darshan-apmpi-2nodes-64mpi.darshan"
DLIO_NO_WRITES = "darshan-logs/dlio_logs/snyder_python3_id3116902-2110484_12-19-66980-9799170114715598281_1.darshan"


def test_a_stripe_answer_names_the_osts_the_file_sits_on() -> None:
    r = records(RELEASE)
    rid = next(i for i, n in r["names"].items() if n.endswith("/mpi-io-test.tmp.dat"))
    osts = r["osts"][rid]
    text = first(RELEASE, "what are the lustre stripe settings of mpi-io-test.tmp.dat?")
    shown = f"(OST {osts[0]})" if len(osts) == 1 else f"(OSTs {', '.join(map(str, osts))})"
    assert shown in text, (text, osts)


def test_whether_the_log_holds_a_module_is_answered_from_its_modules() -> None:
    assert "APMPI" in records(APMPI)["held"] and "APMPI" not in records("sample-badost.darshan")["held"]
    assert first(APMPI, "does this log carry APMPI (MPI profiling) data?").startswith("Yes: the log holds APMPI")
    no = first("sample-badost.darshan", "does this log have APMPI data?")
    assert no.startswith("No: the log holds no APMPI module"), no


def test_did_it_write_anything_is_answered_from_the_bytes() -> None:
    r = records(DLIO_NO_WRITES)
    written = sum(row.get(f"{m}_BYTES_WRITTEN", 0) for m, rows in r["modules"].items() for row in rows)
    assert written == 0
    assert first(DLIO_NO_WRITES, "did the resource tracker write anything to a file?").startswith(
        "No: the job wrote no bytes (0 B)"
    )


def test_a_queue_wait_is_not_in_any_log() -> None:
    text = first(RELEASE, "how long did this job sit in the queue before starting?")
    assert text.startswith("The log does not record how long the job waited in the queue"), text


NONMPI = "darshan-logs/nonmpi_dxt_anonymized/nonmpi_dxt_anonymized.darshan"
MACSIO = "../../examples/example_logs/shane_macsio_id29959_5-22-32552-7035573431850780836_1590156158.darshan"


def test_is_it_an_mpi_job_is_answered_from_the_process_count() -> None:
    assert records(NONMPI)["nprocs"] == 1 and "MPI-IO" not in records(NONMPI)["held"]
    assert first(NONMPI, "is this an mpi job?").startswith("No: the job ran 1 process(es), with no MPI-IO records")
    n = records("sample-badost.darshan")["nprocs"]
    assert first("sample-badost.darshan", "is this an MPI job?").startswith(f"Yes: the job ran {n:,} process(es)")


def test_most_collective_is_a_majority_not_partly() -> None:
    rows = records(MACSIO)["modules"]["MPI-IO"]
    coll = sum(r["MPIIO_COLL_WRITES"] for r in rows)
    ind = sum(r["MPIIO_INDEP_WRITES"] for r in rows)
    assert 0 < coll < ind
    text = first(MACSIO, "were most of macsio's mpi-io writes collective?")
    assert text.startswith(f"No: {coll:,} collective and {ind:,} independent MPI-IO writes"), text


def test_a_files_rate_is_its_bytes_over_its_slowest_ranks_time() -> None:
    [row] = _rows("sample-badost.darshan", "POSIX", "/ior-posix.out.00001507")
    seconds = row["POSIX_F_READ_TIME"] + row["POSIX_F_WRITE_TIME"] + row["POSIX_F_META_TIME"]
    rate = row["POSIX_BYTES_WRITTEN"] / seconds
    text = first("sample-badost.darshan", "what's the write rate on ior-posix.out.00001507?")
    assert "256 MiB written in 13.0 min on its slowest rank" in text, text
    shown = float(text.rsplit(", ", 1)[1].split()[0])
    assert shown * 1024 == pytest.approx(rate, rel=0.02), (text, rate)  # KiB/s


E3SM_HEATMAP = "darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan"
PARTIAL_DXT = "darshan-logs/partial_data_dxt/partial_data_dxt.darshan"


def test_a_library_with_file_records_only_is_still_used() -> None:
    r = records(E3SM_HEATMAP)
    assert "PNETCDF_FILE" in r["held"] and "PNETCDF_VAR" not in r["held"]
    text = first(E3SM_HEATMAP, "did it use pnetcdf")
    assert text.startswith("Yes: the log holds PNETCDF_FILE ("), text


def test_a_partial_trace_does_not_hold_every_read() -> None:
    assert records(PARTIAL_DXT)["partial"]["DXT_POSIX"]
    text = first(PARTIAL_DXT, "does the DXT trace contain every read?")
    assert text.startswith("No: ") and "DXT_POSIX is partial" in text, text


def test_bytes_per_rank_lead_with_the_shared_file_when_it_holds_the_data() -> None:
    log = "darshan-logs/release_logs/mpi-io-test-x86_64-3.2.1.darshan"
    r = records(log)
    shared = [row for row in r["modules"]["MPI-IO"] if row["rank"] == -1]
    # "write": the shared file's written bytes, not all it moved
    moved = sum(row["MPIIO_BYTES_WRITTEN"] for row in shared)
    per = moved / r["nprocs"] / 2**20
    text = first(log, "how much did each rank write?")
    assert text.startswith(f"Most of the data is in {len(shared)} shared file(s)"), text
    assert f"{human_bytes(moved)} written in all, {human_bytes(per * 2**20)} per rank on average" in text, text


def test_a_second_question_joined_with_and_is_answered_too() -> None:
    log = "darshan-logs/release_logs/mpi-io-test-x86_64-3.2.1.darshan"
    r = records(log)
    coll = sum(row["MPIIO_COLL_WRITES"] + row["MPIIO_COLL_READS"] for row in r["modules"]["MPI-IO"])
    text = first(log, "how much did each rank write, and was it collective?")
    assert text.startswith("Most of the data is in "), text
    assert (" Yes: " if coll else " No: ") in text, (coll, text)
