"""Run the service's analyses on a Dask cluster (``IODIAG_DASK_SCHEDULER=tcp://host:8786``).

``run`` has the contract of ``iodiag.jobs.pipeline.run`` (a ``PipelineInput`` in, a ``JobResult``
out, ``JobError`` with one line for a log that cannot be analyzed), so the service's worker process
can call it in its place: with no scheduler set it *is* ``pipeline.run``; with one, the analysis
runs on a Dask worker (through the same helper process and limits as ``iodiag batch``: the spec's
``read_timeout_s`` and ``read_memory_limit_bytes``) and only the outputs come back, written into
``spec.out_dir`` where the pool reads them. The Dask workers read ``spec.log_path`` themselves:
they must see the service's data directory at the same path (a shared file system, or the same
volume in docker compose).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from iodiag.core.settings import Settings
from iodiag.jobs.dask_lib import distributed
from iodiag.jobs.models import Task, TaskResult
from iodiag.jobs.pipeline import STAGES, JobError, JobResult, PipelineInput

_GRACE_S = 30.0  # transport and queueing on top of the analysis's own limit, which the Dask worker enforces
_CONNECT_TIMEOUT_S = 20


_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def scheduler_address() -> str:
    # Read afresh (not the cached settings): a worker process takes the environment it was started with.
    return Settings().dask_scheduler.strip()


def client_for(address: str) -> Any:
    """One client per scheduler per process, shared by its threads (a Client is thread-safe)."""
    from iodiag.jobs.cluster import quiet_logs

    with _clients_lock:
        client = _clients.get(address)
        if client is None or client.status not in ("running", "connecting"):
            quiet_logs()
            client = distributed().Client(address, timeout=_CONNECT_TIMEOUT_S, set_as_default=False)
            _clients[address] = client
        return client


def close_clients() -> None:
    with _clients_lock:
        for client in _clients.values():
            client.close()
        _clients.clear()


def run_on_dask(spec: PipelineInput, progress: Callable[[str, float], None], *, scheduler: str) -> JobResult:
    """Submit one analysis to the cluster at ``scheduler`` and wait for it (at most its time limit plus a
    grace for queueing). Raises ``JobError`` for what the user should see, ``RuntimeError`` when the
    cluster itself failed."""
    from iodiag.jobs import runner

    try:
        client = client_for(scheduler)
    except (OSError, TimeoutError) as exc:
        raise RuntimeError(f"cannot reach the Dask scheduler at {scheduler}: {' '.join(str(exc).split())}") from None
    progress("reading", STAGES["reading"])
    fut = client.submit(
        runner.run_task,
        Task(kind="pipeline", spec=spec),
        key=f"iodiag-job-{spec.job_id}-{uuid.uuid4().hex}",
        pure=False,
    )
    try:
        result: TaskResult = fut.result(timeout=spec.read_timeout_s + _GRACE_S)
    except TimeoutError:
        fut.cancel()
        raise JobError(f"the analysis exceeded the time limit of {spec.read_timeout_s:g} s") from None
    except Exception as exc:
        raise RuntimeError(
            f"the Dask cluster could not run the analysis: {type(exc).__name__}: {' '.join(str(exc).split())}"
        ) from None
    finally:
        fut.release()
    if not result.ok:
        if result.internal:
            raise RuntimeError(result.error or "the analysis failed on the Dask worker")
        raise JobError(result.error or "analysis failed")
    assert result.pipeline is not None
    progress("rendering", STAGES["rendering"])
    out = Path(spec.out_dir)
    files: dict[str, str] = {}
    for kind, content in result.outputs.items():
        p = out / f"{kind}.z"
        p.write_bytes(content)
        files[kind] = str(p)
    return result.pipeline.model_copy(update={"outputs": files})


def run(spec: PipelineInput, progress: Callable[[str, float], None]) -> JobResult:
    """``pipeline.run`` in this process, or on the Dask cluster when ``IODIAG_DASK_SCHEDULER`` is set."""
    address = scheduler_address()
    if not address:
        from iodiag.jobs.pipeline import run as run_here

        return run_here(spec, progress)
    return run_on_dask(spec, progress, scheduler=address)
