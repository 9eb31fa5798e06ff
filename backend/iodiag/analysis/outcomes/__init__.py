"""Outcomes: what the report concludes from the findings the checks produced.

Severity from cost (``grading``), the headline and ranked causes (``verdict``), safe commands to run
(``actions``, checked by ``action_safety`` with ``shell`` quoting), which recommendations fit this
workload (``advice``), and the invariants every report must hold (``invariants``). No check imports
an outcome.
"""
