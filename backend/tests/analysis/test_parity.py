"""Parity with Drishti 0.8 on every log it has a reference CSV for.

Drishti is a peer, not the truth: every (log, code) pair where we differ must be listed,
with a reason, in docs/drishti-divergences.csv, and the list must not go stale.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from iodiag.analysis import analyze
from iodiag.ingest import load_profile
from tests.conftest import DRISHTI_REF, REPO, SHARED_LOGS

DIVERGENCES = REPO / "docs" / "drishti-divergences.csv"
DARSHAN_LOGS = SHARED_LOGS / "darshan-logs"


def _reference() -> list[tuple[str, Path, dict[str, bool]]]:
    out = []
    for ref in sorted(DRISHTI_REF.rglob("*.csv")):
        rel = ref.relative_to(DRISHTI_REF).with_suffix(".darshan")
        log = SHARED_LOGS / rel
        with ref.open() as fh:
            row = next(csv.DictReader(fh))
        codes = {k: v == "True" for k, v in row.items() if k != "JOB"}
        # Name logs the way the divergence file does: relative to darshan-logs/.
        name = str(Path("..") / rel) if rel.parts[0] != "darshan-logs" else str(rel.relative_to("darshan-logs"))
        out.append((name, log, codes))
    return out


def _listed() -> dict[tuple[str, str], tuple[str, str]]:
    with DIVERGENCES.open() as fh:
        return {(r["log"], r["code"]): (r["raised_by"], r["reason"]) for r in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def comparison() -> tuple[int, dict[tuple[str, str], str]]:
    pairs = 0
    differ: dict[tuple[str, str], str] = {}
    refs = _reference()
    assert len(refs) >= 45, "the Drishti reference set is unexpectedly small"
    for name, log, codes in refs:
        ours = analyze(load_profile(str(log))).codes()
        for code, theirs in codes.items():
            pairs += 1
            if theirs != (code in ours):
                differ[(name, code)] = "drishti" if theirs else "iodiag"
    return pairs, differ


def test_parity_is_at_least_95_percent(comparison: tuple[int, dict[tuple[str, str], str]]) -> None:
    pairs, differ = comparison
    agreement = 1 - len(differ) / pairs
    assert agreement >= 0.95, f"parity {agreement:.3f} over {pairs} pairs"


def test_every_divergence_is_explained(comparison: tuple[int, dict[tuple[str, str], str]]) -> None:
    _, differ = comparison
    listed = _listed()
    missing = {k: v for k, v in differ.items() if k not in listed}
    assert not missing, f"unexplained divergences from Drishti: {missing}"
    wrong_side = {k: (v, listed[k][0]) for k, v in differ.items() if listed[k][0] != v}
    assert not wrong_side, f"divergences listed with the wrong side: {wrong_side}"
    assert all(reason.strip() for _, reason in listed.values())


def test_no_stale_divergences(comparison: tuple[int, dict[tuple[str, str], str]]) -> None:
    _, differ = comparison
    stale = [k for k in _listed() if k not in differ]
    assert not stale, f"listed divergences that no longer differ (remove them): {stale}"
