"""Analyzed jobs as two tables, whatever they were read from (the store or Parquet): what the
system report is computed from."""

from __future__ import annotations

import pwd
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

JOB_COLUMNS = [
    "sha256",
    "user",
    "uid",
    "exe",
    "app",
    "jobid",
    "nprocs",
    "nodes",
    "start",
    "end",
    "runtime_s",
    "io_time_s",
    "bytes_read",
    "bytes_written",
    "io_share",
    "interfaces",
    "max_severity",
]
FINDING_COLUMNS = ["sha256", "code", "severity", "layer", "title", "seconds"]


@dataclass
class Frames:
    """``jobs``: one row per analyzed log (``JOB_COLUMNS``); ``findings``: one row per finding
    (``FINDING_COLUMNS``), joined on ``sha256``; ``failed_logs``: logs that could not be analyzed."""

    jobs: pd.DataFrame
    findings: pd.DataFrame
    failed_logs: int = 0

    @classmethod
    def from_records(
        cls, jobs: list[dict[str, object]], findings: list[dict[str, object]], failed_logs: int = 0
    ) -> Frames:
        j = pd.DataFrame.from_records(jobs, columns=JOB_COLUMNS)
        j["start"] = pd.to_datetime(j["start"], utc=True)
        j["end"] = pd.to_datetime(j["end"], utc=True)
        return cls(
            jobs=j, findings=pd.DataFrame.from_records(findings, columns=FINDING_COLUMNS), failed_logs=failed_logs
        )


@lru_cache(maxsize=4096)
def _passwd_name(uid: int) -> str | None:
    try:
        return pwd.getpwuid(uid).pw_name
    except (KeyError, OverflowError):
        return None


def user_name(uid: int, resolve: bool = True) -> str:
    """The user a log's uid is: its name on this host (the facility's directory) when known, else the number."""
    name = _passwd_name(uid) if resolve else None
    return name if name is not None else str(uid)
