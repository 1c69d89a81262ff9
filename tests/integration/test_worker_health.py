"""``manage.py worker_health``, docker-compose's health check of the workers, against a
real Redis and a real worker process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _worker_health(broker: str, *args: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    return subprocess.run(
        [sys.executable, "manage.py", "worker_health", *args],
        cwd=ROOT,
        env=environment | {"CELERY_BROKER_URL": broker},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_live_worker_answers_the_health_check(start_worker, redis_broker):
    worker = start_worker(queues=["integration-health"])
    node = worker.name.replace("%h", socket.gethostname())
    result = _worker_health(redis_broker, "--node", node, "--timeout", "5")
    assert result.returncode == 0, result.stderr + worker.log.read_text()[-2000:]
    assert node in result.stdout


def test_the_health_check_fails_when_no_worker_answers(redis_broker):
    node = f"celery@nobody-{os.getpid()}.invalid"
    result = _worker_health(redis_broker, "--node", node, "--timeout", "0.5")
    assert result.returncode != 0
    assert f"{node} did not answer a ping within 0.5 s" in result.stderr


def test_a_killed_worker_fails_the_health_check(start_worker, redis_broker):
    worker = start_worker(queues=["integration-health"])
    node = worker.name.replace("%h", socket.gethostname())
    worker.kill()  # its control queue stays bound in Redis; nobody reads it
    result = _worker_health(redis_broker, "--node", node, "--timeout", "1")
    assert result.returncode != 0
    assert "did not answer" in result.stderr
