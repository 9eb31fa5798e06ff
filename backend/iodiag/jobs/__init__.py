"""Running one analysis, wherever it runs: the job spec and result, the pipeline (read, analyze, render),
the worker process the service's pool drives, and the Dask side (the task, its helper process, the cluster).

The service (``iodiag.services.pool``) and the batch (``iodiag.batch.engine``) both run analyses through
here; ``executor.run`` picks this process or a Dask cluster from the settings (``IODIAG_DASK_SCHEDULER``).
"""
