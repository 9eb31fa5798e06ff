"""The Dask cluster a batch runs on: a LocalCluster of single-threaded worker processes, or an existing
scheduler. Dask's own logging is kept to errors: the batch has its progress bar and its summary."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from iodiag.jobs.dask_lib import distributed

_CONNECT_TIMEOUT_S = 20


class ClusterError(Exception):
    """The cluster could not be started or reached (one line)."""


def quiet_logs() -> None:
    for name in (
        "distributed",
        "distributed.nanny",
        "distributed.scheduler",
        "distributed.worker",
        "distributed.core",
        "distributed.utils_perf",
        "tornado",
    ):
        logging.getLogger(name).setLevel(logging.ERROR)


@contextmanager
def connect(scheduler: str | None, workers: int) -> Iterator[Any]:
    """A client on ``scheduler`` (``tcp://host:port``), or on a new LocalCluster of ``workers`` processes
    with one thread each: the analysis is CPU-bound Python, so threads would only share one core's GIL."""
    dd = distributed()
    quiet_logs()
    if scheduler:
        try:
            client = dd.Client(scheduler, timeout=_CONNECT_TIMEOUT_S, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            why = " ".join(str(exc).split())
            raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {why}") from None
        try:
            yield client
        finally:
            client.close()
        return
    try:
        cluster = dd.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            # The scheduler serves HTTP whatever this says; on a free local port it cannot clash with another.
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        )
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"cannot start a local Dask cluster: {' '.join(str(exc).split())}") from None
    try:
        with dd.Client(cluster, set_as_default=False) as client:
            yield client
    finally:
        cluster.close()
