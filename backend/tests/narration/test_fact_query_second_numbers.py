"""The numbers a question asks beside the first one, and files named the way people name them (issue 28).

Scenarios whose contents are known by construction: rank 0 fwriting output.csv alone while 16 ranks read
lookup.bin at random; rank 0 reading initial_conditions.dat alone beside every rank's own snapshot.
"""

from __future__ import annotations

import re

from iodiag.core.settings import REPO_ROOT
from iodiag.narration import fact_query
from iodiag.narration.service import Narrator
from tests.narration.test_narration_support import scenario_report

SCENARIOS = REPO_ROOT / "evals" / "scenarios"


def _first(rep: object, question: str) -> str:
    return Narrator().template_answer(rep, question).text.split("\n", 1)[0]  # type: ignore[arg-type]


def test_a_rank_on_a_file_only_it_used_gets_that_files_rate() -> None:
    rep = scenario_report(SCENARIOS / "ranking-stdio-bulk-beside-random-reads.yaml")
    f = next(x for x in rep.top_files if x.path.endswith("output.csv"))
    text = _first(rep, "what write rate did rank 0 get on output.csv?")
    assert text.startswith("Rank 0 wrote 4 GiB on `/lus/scratch/out/output.csv`, the only rank that used it"), text
    # its calls, their mean size and the rate over its own time, in the same sentence
    assert f"in {f.calls.writes:,} writes of 32 KiB on average" in text
    rate = f.bytes_written / f.io_time_s / 2**20
    assert re.search(rf"{rate:.2f} MiB/s", text), (rate, text)


def test_read_in_parallel_is_no_for_a_file_one_rank_used() -> None:
    rep = scenario_report(SCENARIOS / "ranking-stdio-bulk-beside-random-reads.yaml")
    assert _first(rep, "is output.csv written in parallel?").startswith("No: rank 0 alone (1 of the job's 16 ranks)")
    assert _first(rep, "is lookup.bin read by all ranks?").startswith("Yes")


def test_a_file_named_without_its_extension_is_the_file() -> None:
    rep = scenario_report(SCENARIOS / "rank-io-imbalance-solo-input-beside-own-files.yaml")
    q = fact_query.parse_about("how much did rank 0 read from initial_conditions?", rep)
    assert q is not None and q.file == "initial_conditions.dat", q
    # a stem two files share is left as it is: it names neither
    assert fact_query.parse_about("how big is snap?", rep) is None or "snap." not in (
        fact_query.parse_about("how big is snap?", rep).target or ""  # type: ignore[union-attr]
    )


def test_an_imbalance_that_is_solo_work_names_the_file_as_a_cause() -> None:
    rep = scenario_report(SCENARIOS / "rank-io-imbalance-solo-input-beside-own-files.yaml")
    j04 = rep.finding("J04")
    assert j04 is not None and [fe.path.rsplit("/", 1)[-1] for fe in j04.files] == ["initial_conditions.dat"]
    # every rank's own snapshot is its share of the work, not work rank 0 did alone
    assert "rank 0 alone on 2 GiB in 1 file(s)" in j04.subject
    assert rep.verdict.causes[0].code == "J04"


def test_a_full_trace_buffer_loses_operations_not_files() -> None:
    from iodiag.analysis import analyze
    from iodiag.ingest import load_profile
    from tests.conftest import SHARED_LOGS

    rep = analyze(load_profile(str(SHARED_LOGS / "darshan-logs" / "partial_data_dxt" / "partial_data_dxt.darshan")))
    # Only DXT ran out: every file still has its counter record
    assert _first(rep, "did darshan capture all the files?").startswith("Yes: every file the job used has its record")
    # the trace itself is what is incomplete
    assert _first(rep, "does the DXT trace contain every read?").startswith("No")
