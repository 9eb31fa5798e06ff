"""Questions that ask for a judgement or a group, answered in the first sentence with this log's numbers:
"which ranks are slow?" and "how many ranks did the slow OST hit?", "is more than a third of the run I/O?",
"is the I/O balanced?", "was it on a parallel file system like lustre or gpfs?", file systems reached through a
link the mount table does not show, a file named with a placeholder ("rankN.csv", "out.*.dat") and a group of
files asked about by a loose word.

Every expected number is read from the log with PyDarshan in a child process (PyDarshan's cffi reader and
iodiag's ctypes reader load the same C library; keeping them in separate processes keeps each one's state its
own), not from iodiag's report."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from iodiag.core.units import human_bytes
from iodiag.narration import fact_query
from iodiag.narration.service import Narrator
from tests.narration.pydarshan_child import pydarshan_json, report

BADOST = "../../examples/example_logs/sample-badost.darshan"
E3SM = "darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan"
IOR_PNETCDF = (
    "darshan-logs/ior_pnetcdf_hdf5/shane_ior-PNETCDF_id438100-438100_11-9-41525-10280033558448664385_1.darshan"
)

_COUNTERS = r"""
import json, sys
import darshan
path = sys.argv[1]
with darshan.DarshanReport(path, read_all=True) as r:
    out = {"runtime": float(r.metadata["job"]["run_time"]), "nprocs": int(r.metadata["job"]["nprocs"]),
           "mounts": [list(m) for m in r.data.get("mounts", [])],
           "names": {str(k): v for k, v in r.name_records.items()}}
    if "POSIX" in r.records:
        d = r.records["POSIX"].to_df()
        df = d["counters"].merge(d["fcounters"], on=["id", "rank"])
        out["posix"] = [
            {"id": str(i), "rank": int(k), "time": float(rt + wt + mt), "bytes": int(br + bw)}
            for i, k, rt, wt, mt, br, bw in zip(df["id"], df["rank"], df["POSIX_F_READ_TIME"],
                df["POSIX_F_WRITE_TIME"], df["POSIX_F_META_TIME"], df["POSIX_BYTES_READ"], df["POSIX_BYTES_WRITTEN"])
        ]
    if "LUSTRE" in r.records:
        c = r.records["LUSTRE"].to_df()["components"]
        out["lustre"] = {str(i): [int(o) for o in osts] for i, osts in zip(c["id"], c["LUSTRE_OST_IDS"])}
print(json.dumps(out))
"""


@cache
def counters(name: str) -> dict[str, Any]:
    return pydarshan_json(_COUNTERS, name)


def first_sentence(name: str, question: str) -> str:
    text = Narrator().template_answer(report(name), question).text
    return text.split("\n")[0].split(". ")[0] if text.startswith(("Yes", "No")) else text.split("\n")[0]


def _rank_times(c: dict[str, Any]) -> dict[int, float]:
    per: dict[int, float] = {}
    for row in c["posix"]:
        if row["rank"] >= 0:
            per[row["rank"]] = per.get(row["rank"], 0.0) + row["time"]
    return per


def test_the_ranks_a_slow_ost_hit_are_the_ranks_whose_files_sit_on_it() -> None:
    c = counters(BADOST)
    slow = report(BADOST).finding("L04")
    assert slow is not None
    ost = next(int(m.value) for m in slow.evidence if m.name == "slow_ost")
    on_it = {i for i, osts in c["lustre"].items() if ost in osts}
    hit = {row["rank"] for row in c["posix"] if row["id"] in on_it and row["bytes"] > 0}
    text = first_sentence(BADOST, "how many ranks were hit by the slow OST?")
    assert text.startswith(f"OST {ost} was slow, hitting {len(hit):,} rank(s)"), text
    which = first_sentence(BADOST, "which ranks are the stragglers?")
    assert which.startswith(f"{len(hit):,} rank(s) are slow (") and f"slow OST {ost}" in which, which
    assert fact_query.parse("which ranks are the slow ones?").metric == "slow_ranks"  # type: ignore[union-attr]


def test_a_share_asked_against_is_answered_yes_or_no_from_the_busiest_rank() -> None:
    c = counters(BADOST)
    share = max(_rank_times(c).values()) / c["runtime"]
    assert share > 0.5  # every rank waited on OST 14 for most of the run
    assert first_sentence(BADOST, "is more than a third of the runtime spent in I/O?").startswith("Yes: I/O took")
    assert first_sentence(BADOST, "does I/O take less than 10% of the run time?").startswith("No: I/O took")
    q = fact_query.parse("is more than half of the run time spent doing I/O?")
    assert q is not None and q.metric == "io_bound" and q.share == 0.5


def test_balanced_is_answered_no_where_one_rank_holds_the_others_up() -> None:
    times = _rank_times(counters(BADOST))
    mean = sum(times.values()) / len(times)
    assert max(times.values()) > 4 * mean
    text = first_sentence(BADOST, "is the I/O balanced across ranks?")
    assert text.startswith("No: rank "), text


def test_a_file_system_reached_through_a_link_is_the_one_its_lustre_record_names() -> None:
    c = counters(E3SM)
    # The outputs sit under a path only the container's root mount covers; the LUSTRE module saw their layout.
    out = next(i for i, n in c["names"].items() if n.endswith("can_I_out_h0.nc"))
    assert out in c["lustre"]
    assert not any(c["names"][out].startswith(m[0].rstrip("/") + "/") and m[0] != "/" for m in c["mounts"])
    text = first_sentence(E3SM, "what file system are the e3sm outputs on?")
    assert "was on Lustre" in text and "overlay" not in text, text


def test_a_question_naming_several_file_systems_is_answered_yes_or_no() -> None:
    c = counters(IOR_PNETCDF)
    path = next(n for n in c["names"].values() if n.endswith("/testFile"))
    fs = next(t for m, t in sorted(c["mounts"], key=lambda m: -len(m[0])) if path.startswith(m.rstrip("/") + "/"))
    assert fs == "ext4"
    text = first_sentence(IOR_PNETCDF, "was testFile on a parallel file system like lustre or gpfs?")
    assert text.startswith("No: ") and "EXT4" in text, text
    assert first_sentence(IOR_PNETCDF, "is the output on a local disk?").startswith("Yes: ")


def test_a_placeholder_in_a_file_name_names_every_file_it_fits() -> None:
    pattern = fact_query.name_pattern("rankN.csv")
    assert pattern is not None and pattern.fullmatch("rank17.csv") and not pattern.fullmatch("rank.csv")
    assert fact_query.name_pattern("atoms.*.txt") is not None
    assert fact_query.name_pattern("RUN.csv") is None  # a capital N inside a word is a name, not a placeholder
    c = counters(BADOST)
    moved = sum(row["bytes"] for row in c["posix"])
    files = len({row["id"] for row in c["posix"] if row["bytes"] > 0})
    # ior-posix.out.00001507: the numbered part written as a placeholder names all of them
    text = first_sentence(BADOST, "how many bytes went to the ior-posix.out.* files in total?")
    assert f"{files:,} files named" in text, text
    assert fact_query.parse_about("how many bytes went to the ior-posix.out.* files in total?", report(BADOST))
    gib = moved / 2**30
    assert human_bytes(gib * 2**30) in text, (text, gib)


def test_why_about_a_group_gives_its_time_per_rank_and_its_calls() -> None:
    c = counters(BADOST)
    times = _rank_times(c)
    text = first_sentence(BADOST, "why are the ior-posix.out.* writes so slow?")
    per_rank = sum(times.values()) / len(times)
    assert text.startswith(f"The {len(times):,} `"), text
    # every rank used them, but the 85 ranks on the slow OST took far longer: the mean per rank, and the most
    assert f"per rank on average over its {len(times):,} rank(s)" in text and "slow OST" in text, text
    assert f"but up to {max(times.values()) / 60:.1f} min on one rank's file" in text, text
    shown = text.split("took about ", 1)[1].split(" per rank", 1)[0]
    value, unit = shown.split()
    seconds = float(value) * {"s": 1, "min": 60, "ms": 1e-3}[unit]
    assert seconds == pytest.approx(per_rank, rel=0.02), (shown, per_rank)
