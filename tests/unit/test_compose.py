"""docker-compose.yml is validated by Debian's docker-compose v1 (no engine needed)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import service_missing

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def compose() -> str:
    binary = shutil.which("docker-compose")
    if binary is None:
        service_missing("docker-compose (Debian package docker-compose) is not installed")
    assert binary is not None
    return binary


def _config(compose: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"} | env
    return subprocess.run(
        [compose, "-f", "docker-compose.yml", "config"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_compose_file_is_valid_and_has_the_production_services(compose):
    result = _config(compose, SECRET_KEY="test-secret")
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    assert set(services) == {"postgres", "redis", "web", "worker", "worker-gpu"}
    assert "healthcheck" in services["postgres"]
    assert services["postgres"]["volumes"]
    assert "migrate" in " ".join(services["web"]["command"])
    worker = services["worker"]["command"]
    assert worker[:2] == ["celery", "-A"] and worker[worker.index("-Q") + 1] == "celery"
    gpu = services["worker-gpu"]
    assert gpu["command"][gpu["command"].index("-Q") + 1] == "gpu"
    assert gpu["command"][gpu["command"].index("--concurrency") + 1] == "1"
    device = gpu["deploy"]["resources"]["reservations"]["devices"][0]
    assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
    assert services["web"]["environment"]["DJANGO_ENV"] == "production"
    assert services["web"]["environment"]["DATABASE_URL"].startswith("postgres://")
    assert services["web"]["environment"]["CELERY_BROKER_URL"].startswith("redis://")


def test_compose_refuses_to_run_without_a_secret_key(compose):
    result = _config(compose)
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr
