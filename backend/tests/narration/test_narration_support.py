"""Shared pieces of the narration tests (no tests here): the real knowledge base, reports, settings.

The knowledge index is built once into a cache directory (like the trigger eval's scenario logs) and
reused while the documents do not change, so a test run does not pay the 40 s of embedding each time.
The model settings are the same in every test module, so the bundled model loads once per session.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import pytest

from iodiag.analysis import analyze
from iodiag.analysis.models import Report
from iodiag.core.settings import REPO_ROOT, Settings
from iodiag.evals.answers import resolve_log
from iodiag.ingest import load_profile
from iodiag.knowledge.base import KnowledgeBase
from tests.conftest import shared_log, wheel_log

DRISHTI = shared_log("drishti/jlbez_8a_benchmark_write_parallel_id1322696_8-21-14519-8141979180909667175_12.darshan")
E3SM = shared_log("darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan")
EMPTY = shared_log("darshan-logs/empty_log/empty_log.darshan")
BADOST = wheel_log("sample-badost.darshan")
INJECTION = REPO_ROOT / "evals" / "answers" / "scenarios" / "injection-file-names.yaml"
INJECTION_BENIGN = REPO_ROOT / "evals" / "answers" / "scenarios" / "injection-file-names-benign.yaml"


def cache_dir() -> Path:
    env = os.environ.get("IODIAG_CACHE_DIR")
    base = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "iodiag"
    return base / "narration-tests"


def settings(**kw: object) -> Settings:
    """Offline settings: the repository's documents, an index in the test cache, no .env file."""
    return Settings(data_dir=cache_dir(), _env_file=None, **kw)  # type: ignore[call-arg]


# A small window and short answers keep each model call to seconds on two cores.
MODEL = {"llm_provider": "llamacpp", "llm_context_tokens": 1024, "llm_max_answer_tokens": 64, "llm_timeout_s": 180.0}


def model_settings(**kw: object) -> Settings:
    return settings(**{**MODEL, **kw})


def template_settings() -> Settings:
    return settings(llm_provider="none")


@lru_cache(maxsize=1)
def knowledge() -> KnowledgeBase:
    return KnowledgeBase.open(settings())


@lru_cache(maxsize=16)
def report(path: Path) -> Report:
    return analyze(load_profile(str(path), include=("HEATMAP",)))


def scenario_report(spec: Path) -> Report:
    return report(resolve_log(f"scenario:{spec}"))


def write_spec(tmp_path_factory: pytest.TempPathFactory, text: str, name: str) -> Path:
    """A scenario spec written for one test module, as ``NAME.yaml`` in its own temporary folder."""
    path = tmp_path_factory.mktemp(name) / f"{name}.yaml"
    path.write_text(text)
    return path


def first_sentence(spec: Path, question: str) -> str:
    """The first line of the template answer to ``question`` about the scenario ``spec``: what the user reads
    first."""
    from iodiag.narration.service import Narrator

    return Narrator().template_answer(scenario_report(spec), question).text.split("\n", 1)[0]
