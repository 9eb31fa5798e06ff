"""Services: what runs behind the API.

``intake`` accepts a log (checks it, stores it once, queues its analysis); ``pool`` runs the queued analyses
in worker processes (``iodiag.jobs.worker`` + ``iodiag.jobs.pipeline``), off the request path; ``chat`` runs
the narrator in a thread with a time limit; ``comparing`` and ``history`` compare stored runs and follow an
application over time.
"""
