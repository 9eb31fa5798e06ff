"""Invariants (``iodiag.analysis.outcomes.invariants``) on every log we have: real logs (shared and the darshan
wheel's) and every scenario of the labelled corpus."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from iodiag.analysis import analyze
from iodiag.analysis.models import Report
from iodiag.analysis.outcomes.invariants import BAD_WORDS, problems
from iodiag.evals.triggers import DEFAULT_SCENARIOS, build_entry, default_cache_dir, facts_for, load_corpus
from iodiag.ingest import load_profile
from tests.conftest import all_logs, log_id


@cache
def _scenario_logs() -> list[tuple[str, Path, Any]]:
    out = []
    for entry in load_corpus(DEFAULT_SCENARIOS):
        path = build_entry(entry, default_cache_dir())
        out.append((entry.scenario.name, path, facts_for(entry.scenario)))
    return out


@cache
def _report(path: Path, facts: Any = None) -> Report:
    return analyze(load_profile(str(path)), facts=facts)


def _reports() -> list[tuple[str, Report]]:
    out = [(log_id(p), _report(p)) for p in all_logs()]
    out += [(name, _report(p, facts)) for name, p, facts in _scenario_logs()]
    return out


def test_invariants_hold_on_every_log_and_scenario() -> None:
    reports = _reports()
    assert len(reports) >= 150
    broken = {name: found[:5] for name, r in reports if (found := problems(r))}
    assert not broken, broken


@pytest.mark.parametrize("text", ["-5030.78 PiB written", "nan h of I/O", "took inf s"])
def test_bad_words_are_caught(text: str) -> None:
    assert BAD_WORDS.search(text)


def test_ok_words_pass() -> None:
    assert not BAD_WORDS.search("I/O takes 12% of this 2.0 min run (14.2 s on the busiest rank); T-01 finance")
