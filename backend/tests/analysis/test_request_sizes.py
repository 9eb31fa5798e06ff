"""Request sizes from the ACCESS1-4 counters: one reading shared by the checks and the report's tables."""

from __future__ import annotations

import numpy as np

from iodiag.analysis import analyze
from iodiag.analysis.views.request_sizes import access_counts, most_common, size_counts, typical_per_record
from iodiag.ingest import load_profile
from iodiag.ingest.table import Table
from tests.conftest import shared_log


def _frame() -> Table:
    # Two records of file 7 (two ranks) and one of file 9; the same size can sit in different slots.
    return Table(
        {
            "id": np.array([7, 7, 9]),
            "POSIX_ACCESS1_ACCESS": np.array([4096, 47008, 1 << 20]),
            "POSIX_ACCESS1_COUNT": np.array([10, 30, 5]),
            "POSIX_ACCESS2_ACCESS": np.array([47008, 4096, 0]),
            "POSIX_ACCESS2_COUNT": np.array([25, 10, 0]),
            "POSIX_ACCESS3_ACCESS": np.array([0, 0, 0]),
            "POSIX_ACCESS3_COUNT": np.array([0, 0, 0]),
            "POSIX_ACCESS4_ACCESS": np.array([0, 0, 0]),
            "POSIX_ACCESS4_COUNT": np.array([0, 0, 0]),
        }
    )


def test_counts_sum_across_slots_and_records() -> None:
    f = _frame()
    assert access_counts(f, "POSIX") == {(7, 4096): 20, (7, 47008): 55, (9, 1 << 20): 5}
    assert size_counts(f, "POSIX") == {4096: 20, 47008: 55, 1 << 20: 5}
    assert size_counts(f, "POSIX", below=1 << 20) == {4096: 20, 47008: 55}
    assert most_common({4096: 20, 47008: 55}, 2) == [(47008, 55), (4096, 20)]
    assert typical_per_record(f, "POSIX") == {7: 47008, 9: 1 << 20}


def test_ties_go_to_the_larger_size_and_missing_counters_read_as_none() -> None:
    assert most_common({4096: 3, 8192: 3}) == [(8192, 3)]
    assert access_counts(Table({"id": np.array([1])}), "POSIX") is None
    assert typical_per_record(Table({"id": np.array([1])}), "MPIIO") == {}


def test_the_report_quotes_the_same_common_size_as_the_small_request_check() -> None:
    r = analyze(load_profile(str(shared_log("darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan"))))
    small = [f for f in r.findings if f.code in ("P05", "P06")]
    sizes = {a.size for a in r.rank_table.access_sizes}
    assert small and sizes
    for f in small:
        assert f.subject and "mostly" in f.subject
        assert any(f.subject.endswith(t) for t in _human(sizes)), (f.subject, sizes)


def _human(sizes: set[int]) -> list[str]:
    from iodiag.core.units import request_bytes

    return [request_bytes(s) for s in sizes]
