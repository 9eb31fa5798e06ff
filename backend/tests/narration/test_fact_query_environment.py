"""What the log says about the job's environment (issue 28): the MPI-IO hints it holds and the files of the
software stack (Python's packages) beside the data. Truth read with PyDarshan in a child process."""

from __future__ import annotations

import re

from iodiag.narration.service import Narrator
from tests.narration.pydarshan_child import pydarshan_json, report

DLIO = "darshan-logs/dlio_logs/snyder_python3_id3116902-2110531_12-19-66999-7428115441680580108_1.darshan"
RELEASE = "darshan-logs/release_logs/mpi-io-test-x86_64-3.4.2.darshan"

_NAMES = r"""
import json, sys
import darshan
with darshan.DarshanReport(sys.argv[1], read_all=True) as r:
    ids = set()
    for mod in ("POSIX", "STDIO"):
        if mod in r.records:
            ids |= {str(i) for i in r.records[mod].to_df()["counters"]["id"]}
    names = {str(k): v for k, v in r.name_records.items()}
    print(json.dumps({"paths": sorted(names[i] for i in ids if i in names),
                      "h": r.metadata["job"].get("metadata", {}).get("h", "")}))
"""


def _first(log: str, question: str) -> str:
    return Narrator().template_answer(report(log), question).text.split("\n", 1)[0]


def test_python_package_files_are_named_as_the_environment_with_their_count() -> None:
    paths = pydarshan_json(_NAMES, DLIO)["paths"]
    python = [p for p in paths if re.search(r"site-packages/|\.dist-info/|pyvenv\.cfg$|\.pth$", p)]
    assert python, paths
    text = _first(DLIO, "why does the log list a bunch of site-packages entry_points.txt files?")
    assert text.startswith("They are the software environment, not the job's data: "), text
    assert f"{len(python):,} files of the Python environment" in text, (len(python), text)
    assert "negligible" in text, text


def test_the_hints_the_log_holds_are_listed_as_darshans_own() -> None:
    held = pydarshan_json(_NAMES, RELEASE)["h"]
    pairs = [p for p in held.split(";") if p]
    assert pairs, held
    text = _first(RELEASE, "what mpi-io hints were set for this job?")
    assert text.startswith("The log records these MPI-IO hints: "), text
    assert all(f"`{p}`" in text for p in pairs), (pairs, text)
    # whose hints they are: Darshan's own for the log, not the application's
    assert "DARSHAN_LOGHINTS" in text


def test_real_data_io_leaves_out_the_environments_own_files() -> None:
    log = "darshan-logs/dlio_logs/snyder_python3_id3116902-2110482_12-19-66980-12360425722114849340_1.darshan"
    paths = pydarshan_json(_NAMES, log)["paths"]
    # this process read only its Python environment (pyvenv.cfg, a .pth file)
    assert paths and all(re.search(r"site-packages/|pyvenv\.cfg$|\.pth$|^<", p) for p in paths), paths
    assert _first(log, "did this python process do any real data I/O?").startswith("No: of the ")
    assert _first(log, "did this job do any I/O?").startswith("Yes: ")
