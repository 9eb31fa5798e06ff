"""The typed query a question becomes: a metric, a scope, a target and how to answer (yes/no, share, split)."""

from __future__ import annotations

from typing import Literal, TypeVar

from pydantic import BaseModel

Metric = Literal[
    "bytes",
    "time",
    "uses",
    "top_interface",
    "file_system",
    "runtime",
    "ranks",
    "files",
    "io_share",
    "rate",
    "metadata",
    "stripe",
    "slow_ost",
    "write_vs_read",
    "slow_rank",
    "osts",
    "collective",
    "sharing",
    "request_size",
    "io_bound",
    "top_file",
    "file_list",
    "interfaces",
    "completeness",
    "unnamed",
    "layer_sizes",
    "aggregators",
    "fs_bytes",
    "fastest_rank",
    "fs_share",
    "small_requests",
    "any_slow_rank",
    "file_usage",
    "file_why",
    "not_recorded",
    "io_problem",
    "file_ranks",
    "traced",
    "interface_files",
    "calls",
    "file_slowest",
    "file_when",
    "rank_spread",
    "busiest_rank",
    "job_info",
    "files_per_rank",
    "group",
    "file_compare",
    "sequential",
    "ranks_with_io",
    "absent",
    "datasets",
    "file_share",
    "file_library",
    "alignment",
    "slow_ranks",
    "chunk_size",
    "rank_files",
    "module",
    "mpi_job",
    "file_balance",
    "layer_gap",
    "file_per_rank",
    "software",
    "time_split",
    "reread",
]
Scope = Literal["job", "interface", "rank", "file"]
_T = TypeVar("_T")
Direction = Literal["read", "write", "both"]


class Query(BaseModel):
    """One fact to look up: ``metric`` of ``scope`` (``target`` names the rank, interface or file)."""

    metric: Metric
    scope: Scope = "job"
    target: str | None = None
    direction: Direction = "both"
    yes_no: bool = False
    data: bool = False  # "did it write any HDF5 dataset data?": asks about data moved, not only files opened
    missing: bool = False  # "is anything missing?" (yes when it is) rather than "is it complete?" (no when not)
    healthy: bool = False  # "is the I/O healthy?" (yes when nothing is at fault) rather than "is there a problem?"
    bound: bool = False  # "is it I/O-bound?": yes only when I/O takes a large part of the run, not any part
    big: bool = False  # "is I/O a big part / significant?": yes from a tenth of the run, not from a share worth cutting
    share: float | None = None  # "is more than a third of the run I/O?": the share the answer is measured against
    split: bool = False  # "is it all reads?", "does it read much?": yes or no from the read/write split of bytes
    file: str | None = None  # a file the question names beside a rank ("rank 0's bytes on restart.h5")
    raw: str = ""  # the question as asked, for answers that compare two files it names


def by_direction(direction: Direction, read: _T, write: _T, both: _T) -> _T:
    """The value for the direction a question asks about: one selector instead of a nested conditional each."""
    return read if direction == "read" else write if direction == "write" else both
