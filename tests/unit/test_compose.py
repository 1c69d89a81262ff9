"""docker-compose.yml is validated by Debian's docker-compose v1 (no engine needed)."""

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from config import processes
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
    # Their commands are config/processes.py's (tests/unit/test_processes.py).
    assert services["worker"]["command"] == processes.worker_argv(["celery"])
    gpu = services["worker-gpu"]
    assert gpu["command"] == processes.worker_argv(["gpu"])
    device = gpu["deploy"]["resources"]["reservations"]["devices"][0]
    assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
    assert services["web"]["environment"]["DJANGO_ENV"] == "production"
    assert services["web"]["environment"]["DATABASE_URL"].startswith("postgres://")
    assert services["web"]["environment"]["CELERY_BROKER_URL"].startswith("redis://")


def test_compose_refuses_to_run_without_a_secret_key(compose):
    result = _config(compose)
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


WORKERS = ("worker", "worker-gpu")


def test_the_workers_have_a_health_check_that_pings_their_own_celery_node(compose):
    result = _config(compose, SECRET_KEY="test-secret")
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    for name in WORKERS:
        service = services[name]
        check = service.get("healthcheck")
        assert check, f"{name} has no healthcheck"
        assert check["test"][:4] == ["CMD", "python", "manage.py", "worker_health"]
        assert check["interval"] and check["timeout"] and check["retries"] >= 1
        # The check pings the default node name, celery@<hostname>: the worker must keep it.
        command = service["command"]
        command = command[command.index("celery") :]  # after nice's own -n
        assert not {"-n", "--hostname"} & set(command), command
        assert not any(word.startswith(("-n=", "--hostname=")) for word in command)


def test_the_worker_health_check_fails_clearly_when_the_broker_is_unreachable(compose, tmp_path):
    """The compose health check, run here as compose runs it, against a closed port."""
    result = _config(compose, SECRET_KEY="test-secret")
    check = yaml.safe_load(result.stdout)["services"]["worker"]["healthcheck"]["test"]
    command = [sys.executable if word == "python" else word for word in check[1:]]
    environment = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"} | {
        "CELERY_BROKER_URL": "redis://127.0.0.1:1/0",
        "FFKV_DATA_DIR": str(tmp_path),
    }
    run = subprocess.run(
        [*command, "--timeout", "1"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode != 0
    assert "cannot reach the broker" in run.stderr
    assert "127.0.0.1:1" in run.stderr
    assert f"celery@{socket.gethostname()}" in run.stderr
    assert "Traceback" not in run.stderr
