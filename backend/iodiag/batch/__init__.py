"""Facility-scale batch analysis on Dask, and the system report over many analyzed jobs.

Where things are: ``inputs`` expands the command's arguments into logs, hashes them and groups the logs of
one job (``--combine-jobs``); ``engine`` submits one Dask task per job (``iodiag.jobs.runner`` runs it on the
worker, through the helper process ``iodiag.jobs.child``) and hands each result to a sink, ``store_sink``
(the service's database: the same rows its worker writes) or ``parquet`` (one row per job and per finding);
``frames`` reads either back; ``system_report`` (JSON) and ``system_html`` (HTML) aggregate them.
"""
