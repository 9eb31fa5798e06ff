"""Services: what runs behind the API.

``intake`` accepts a log (checks it, stores it once, queues its analysis); ``pool`` runs the queued
analyses in worker processes (``worker`` + ``pipeline``), off the request path; ``chat`` runs the
narrator in a thread with a time limit.
"""
