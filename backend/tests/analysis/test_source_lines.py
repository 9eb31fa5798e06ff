"""Source lines from call stacks: the log's own address-to-line table, or addr2line on the user's binary.

Logs with call stacks come from the scenario writer (``phase.stack``); the ``--binary`` test
compiles a real C program with gcc, takes the return addresses ``backtrace()`` gives it, writes
them into a log without their lines, and checks that addr2line maps them back to that program's
source. Where a log has no stacks the field is absent (null), never made up.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

from iodiag.analysis import analyze
from iodiag.analysis.views.source_lines import BinaryError, addr2line
from iodiag.ingest import JobProfile, load_profile
from iodiag.ingest.stacks import SourceLocation, encode, parse, stack_column
from iodiag.ingest.trace import Trace
from iodiag.synth.build import build_log
from iodiag.synth.scenario import load_scenario, parse_scenario
from tests.cli.test_cli import iodiag
from tests.conftest import REPO, shared_log

SCENARIOS = REPO / "evals" / "scenarios"


def _load(path: Path) -> JobProfile:
    return load_profile(str(path), include=("DXT",))


def test_encoding_round_trip_splits_long_records() -> None:
    # 3,000 alternating stack ids: far more than one 4 KiB name record holds.
    ids = np.tile(np.array([0, 1, -1], dtype=np.int64), 1000)
    lines = {0x401000: SourceLocation("f", "a.c", 3), 0x401040: SourceLocation("g", "b.c", 9)}
    names = encode({0: (0x401000,), 1: (0x401040, 0x401000)}, lines, [("DXT_POSIX", 42, 3, 0, ids)])
    assert all(len(n) <= 4000 for n in names)
    assert sum(n.split(" ")[1] == "G" for n in names) > 1
    stacks, bad = parse(names)
    assert bad == []
    assert stacks.stacks == {0: (0x401000,), 1: (0x401040, 0x401000)}
    assert dict(stacks.lines) == lines
    # Put the runs back onto a trace of that record: every segment gets its own id back.
    n = len(ids)
    trace = Trace(
        module="DXT_POSIX",
        rank=np.full(n, 3, dtype=np.int32),
        file=np.zeros(n, dtype=np.int32),
        op=np.zeros(n, dtype=np.int8),
        offset=np.arange(n, dtype=np.int64),
        length=np.ones(n, dtype=np.int64),
        start=np.arange(n, dtype=np.float64),
        end=np.arange(n, dtype=np.float64) + 0.5,
        file_ids=np.array([42], dtype=np.uint64),
    )
    col = stack_column(trace, stacks)
    assert col is not None
    assert np.array_equal(col, ids)


def test_bad_entries_are_reported_not_fatal() -> None:
    stacks, bad = parse(["darshan-callstack/1 S x 1,2", "darshan-callstack/1 Q 1", "darshan-callstack/1 S 4 401000"])
    assert stacks.stacks == {4: (0x401000,)}
    assert len(bad) == 2


def test_scenario_stacks_group_a_finding_by_source_line(tmp_path: Path) -> None:
    log = build_log(load_scenario(SCENARIOS / "trace-small-writes-resolved.yaml"), tmp_path / "s.darshan")
    profile = _load(log)
    # The entries are not file names: the job has one file.
    assert list(profile.names.values()) == ["/scratch/run/particles.dat"]
    report = analyze(profile)
    t06 = next(f for f in report.findings if f.code == "T06")
    assert t06.source_lines is not None and len(t06.source_lines) == 1
    sl = t06.source_lines[0]
    assert (sl.file, sl.line, sl.function, sl.segments, sl.ranks) == ("src/io.c", 120, "write_record", 1600, 8)
    assert sl.bytes == 1600 * 64 * 1024
    assert [(fr.function, fr.file, fr.line) for fr in sl.call_chain] == [
        ("write_record", "src/io.c", 120),
        ("dump_particles", "src/output.c", 57),
        ("main", "src/main.c", 31),
    ]
    # Findings from counters have no segments to place.
    assert all(f.source_lines is None for f in report.findings if not f.code.startswith("T"))


def test_two_phases_two_lines(tmp_path: Path) -> None:
    spec = {
        "name": "two-lines",
        "dxt": True,
        "job": {"nprocs": 4, "mounts": [{"path": "/", "fs": "ext4", "block_size": "4KiB"}]},
        "program": [
            {"file": "/s/a.dat", "op": "write", "count": 300, "size": "8KiB", "stack": ["put_a a.c:10", "main m.c:5"]},
            {"file": "/s/b.dat", "op": "write", "count": 100, "size": "8KiB", "stack": ["put_b b.c:20", "main m.c:6"]},
        ],
    }
    log = build_log(parse_scenario(spec), tmp_path / "two.darshan")
    t06 = next(f for f in analyze(_load(log)).findings if f.code == "T06")
    assert t06.source_lines is not None
    got = [(s.file, s.line, s.segments) for s in t06.source_lines]
    assert got == [("a.c", 10, 1200), ("b.c", 20, 400)]


def test_no_stacks_no_field() -> None:
    log = shared_log(
        "darshan-logs/mpi_io_test_with_dxt/treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
    )
    profile = _load(log)
    assert profile.stacks is None
    report = analyze(profile)
    assert report.findings
    assert all(f.source_lines is None for f in report.findings)


C_PROGRAM = r"""
#include <execinfo.h>
#include <stdio.h>

__attribute__((noinline)) void write_record(void) {
    void *frames[8];
    int n = backtrace(frames, 3);
    for (int i = 0; i < n; i++) printf("%p\n", frames[i]);
}

__attribute__((noinline)) void checkpoint(void) {
    write_record();
}

int main(void) {
    checkpoint();
    return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int]]:
    gcc = shutil.which("gcc") or shutil.which("cc")
    assert gcc is not None, "gcc is needed to build the test program (installed on every CI machine here)"
    d = tmp_path_factory.mktemp("prog")
    (d / "ckpt.c").write_text(C_PROGRAM)
    exe = d / "ckpt"
    subprocess.run(
        [gcc, "-g", "-O0", "-no-pie", "-fno-omit-frame-pointer", "-o", str(exe), str(d / "ckpt.c")], check=True
    )
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    return exe, [int(a, 16) for a in out]


def test_addr2line_maps_real_return_addresses(program: tuple[Path, list[int]]) -> None:
    exe, addrs = program
    got = addr2line(exe, addrs)
    assert [got[a].function for a in addrs] == ["write_record", "checkpoint", "main"]
    assert all(got[a].file.endswith("ckpt.c") and got[a].line > 0 for a in addrs)


def test_binary_maps_a_log_without_a_table(program: tuple[Path, list[int]], tmp_path: Path) -> None:
    exe, addrs = program
    spec = yaml.safe_load((SCENARIOS / "trace-small-writes-resolved.yaml").read_text())
    spec["stacks"] = "addresses"
    spec["program"][0]["stack"] = [{"address": hex(a)} for a in addrs]
    log = build_log(parse_scenario(spec), tmp_path / "addrs.darshan")

    plain = json.loads(iodiag("analyze", log, "--dxt", "-f", "json").stdout)
    t06 = next(f for f in plain["findings"] if f["code"] == "T06")
    assert t06["source_lines"] is None  # addresses alone name no line

    proc = iodiag("analyze", log, "--binary", exe, "-f", "json")
    assert proc.returncode == 0, proc.stderr
    t06 = next(f for f in json.loads(proc.stdout)["findings"] if f["code"] == "T06")
    (line,) = t06["source_lines"]
    assert line["function"] == "write_record" and line["file"].endswith("ckpt.c")
    assert [fr["function"] for fr in line["call_chain"]] == ["write_record", "checkpoint", "main"]
    assert [int(fr["address"], 16) for fr in line["call_chain"]] == addrs


def test_binary_errors_are_one_line(tmp_path: Path) -> None:
    log = build_log(load_scenario(SCENARIOS / "trace-small-writes-resolved.yaml"), tmp_path / "s.darshan")
    proc = iodiag("analyze", log, "--binary", tmp_path / "nope")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "no such file" in proc.stderr
    not_elf = tmp_path / "text"
    not_elf.write_text("hello")
    with pytest.raises(BinaryError):
        addr2line(not_elf, [0x401000])
