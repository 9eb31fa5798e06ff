"""Which files the I/O went to (``Report.top_files``): what "which file is worst?" is answered from."""

from __future__ import annotations

from iodiag.analysis import analyze
from iodiag.analysis.views.file_usage import EXTRA_FILES, EXTRA_NAMED, TOP_FILES
from iodiag.ingest import load_profile
from tests.conftest import shared_log, wheel_log


def test_the_one_big_file_leads_counted_once_at_its_top_layer() -> None:
    r = analyze(load_profile(str(shared_log("darshan-logs/release_logs/mpi-io-test-x86_64-3.4.1.darshan"))))
    top = r.top_files[0]
    assert top.path == "/tmp/test/mpi-io-test.tmp.dat" and top.layer == "MPI-IO"
    assert top.bytes_read == top.bytes_written == 64 << 20 and top.ranks == 4
    assert top.share_of_io > 0.99
    # The MPI-IO file's POSIX records are beneath it, not a second entry.
    assert [f.path for f in r.top_files].count(top.path) == 1
    # The standard streams are listed among the files with I/O time but are not counted as files.
    streams = [f.path for f in r.top_files if f.path.startswith("<")]
    assert r.files_with_io == len(r.top_files) - len(streams)
    assert abs(sum(f.share_of_io for f in r.top_files) - 1.0) < 1e-9


def test_largest_time_first_and_at_most_ten_plus_the_largest_by_bytes_and_wait() -> None:
    r = analyze(load_profile(str(wheel_log("sample-badost.darshan"))))
    times = [f.io_time_s for f in r.top_files]
    # ... and the files findings name beyond those, at most EXTRA_NAMED
    assert times == sorted(times, reverse=True) and 0 < len(times) <= TOP_FILES + 2 * EXTRA_FILES + EXTRA_NAMED
    assert r.files_with_io >= len(times)
    assert all(f.file_system for f in r.top_files if f.path.startswith("/scratch"))


def test_a_log_without_io_lists_no_file() -> None:
    r = analyze(load_profile(str(shared_log("darshan-logs/empty_log/empty_log.darshan"))))
    assert r.top_files == [] and r.files_with_io == 0


def test_every_file_a_finding_names_has_its_row_and_a_quiet_file_joins_when_named() -> None:
    from iodiag.analysis.views.context import Context
    from iodiag.analysis.views.file_usage import busiest_files

    profile = load_profile(str(wheel_log("sample-badost.darshan")))
    r = analyze(profile)
    rows = {f.path for f in r.top_files}
    assert all(e.path in rows for f in r.findings for e in f.files[:EXTRA_NAMED]), "a named file has no row"
    # The quietest file with I/O is beyond the busiest ones; named, it gets its row, and nothing else changes
    ctx = Context(profile)
    plain, count = busiest_files(ctx)
    posix = ctx.posix_records
    busy = {f.path for f in plain}
    quiet = next(int(i) for i in posix["id"].tolist() if ctx.path(int(i)) not in busy)
    more, count2 = busiest_files(ctx, named=frozenset({quiet}))
    assert count2 == count and [f.path for f in more if f.path != ctx.path(quiet)] == [f.path for f in plain]
    assert ctx.path(quiet) in {f.path for f in more}
