"""Facility-scale batch analysis on Dask, and the system report over many analyzed jobs.

Where things are: ``inputs`` expands the command's arguments into logs and hashes them;
``cluster`` starts a LocalCluster or connects to a scheduler; ``engine`` submits one Dask task
per log and hands each result to a sink, ``store_sink`` (the service's database: the same rows
its worker writes) or ``parquet`` (one row per job and per finding). On each Dask worker,
``runner`` drives a single-threaded helper process (``child``) that runs the analysis under a
time and memory limit. ``facts`` turns a report into the per-job numbers the sinks keep;
``system_report`` (JSON) and ``system_html`` (HTML) aggregate them; ``dask_exec`` lets the
service's workers run their analyses on the same cluster.
"""
