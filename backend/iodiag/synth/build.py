"""A scenario's Darshan log: simulate its program, derive what Darshan would record, write the log."""

from __future__ import annotations

from pathlib import Path

from iodiag.synth.derive import call_stacks, derive_tables
from iodiag.synth.program import simulate
from iodiag.synth.scenario import Scenario
from iodiag.synth.writer import write_log


def build_log(scenario: Scenario, out_path: str | Path) -> Path:
    """Simulate the scenario's program and write the Darshan log it would produce."""
    trace = simulate(scenario)
    job, names, tables = derive_tables(scenario, trace)
    out = Path(out_path)
    _, stacks, lines = call_stacks(scenario)
    write_log(out, job, names, tables, stacks=stacks if scenario.dxt else None, lines=lines)
    return out
