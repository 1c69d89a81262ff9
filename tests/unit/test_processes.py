"""config/processes.py writes every gunicorn and Celery worker command line; the files that
cannot import it (docker-compose.yml, the Dockerfile) are parsed and compared with it."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from config import processes
from mining.management.commands import demo

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]


def test_the_web_serves_with_the_config_file_and_nothing_that_overrides_it():
    argv = processes.web_argv(python="/venv/python", bind="127.0.0.1:8060", log_level="warning")
    assert argv == [
        "/venv/python",
        "-m",
        "gunicorn",
        "-c",
        "config/gunicorn.conf.py",
        "config.wsgi:application",
        "--bind",
        "127.0.0.1:8060",
        "--log-level",
        "warning",
    ]
    assert (ROOT / processes.GUNICORN_CONF).is_file()


def test_a_worker_runs_its_queue_niced_below_the_web():
    assert processes.worker_argv(["gpu"]) == [
        *("nice", "-n", "10", "celery", "-A", "config", "worker", "-Q", "gpu"),
        *("--concurrency", "1", "--loglevel", "INFO"),
    ]
    # The default queue: Celery's default concurrency (one process per core).
    assert "--concurrency" not in processes.worker_argv(["celery"])
    assert "nice" not in processes.web_argv()


def test_a_test_worker_is_named_solo_and_starts_without_gossip():
    argv = processes.worker_argv(
        ["celery", "gpu"], python="py", pool="solo", name="t@%h", quick_start=True
    )
    assert argv == [
        *("nice", "-n", "10", "py", "-m", "celery", "-A", "config", "worker"),
        *("-Q", "celery,gpu", "--concurrency", "1", "--pool", "solo", "-n", "t@%h"),
        *("--loglevel", "INFO", "--without-gossip", "--without-mingle"),
    ]


def test_a_worker_for_no_queue_is_refused():
    with pytest.raises(ValueError, match="at least one queue"):
        processes.worker_argv([])


def test_a_queue_of_a_tests_own_runs_as_the_default_queue():
    own = processes.worker_argv(["integration-ping"])
    assert own == [*processes.worker_argv(["celery"])[:8], "integration-ping", "--loglevel", "INFO"]


def test_the_queues_are_the_ones_the_settings_route_to(settings):
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    assert {settings.CELERY_TASK_DEFAULT_QUEUE, *routed} == set(processes.QUEUES)


def test_compose_runs_the_commands_the_builder_writes():
    services = _compose()
    web = services["web"]["command"]
    assert web[:2] == ["sh", "-c"]
    assert web[2].endswith("&& exec " + shlex.join(processes.web_argv()))
    assert services["worker"]["command"] == processes.worker_argv(["celery"])
    assert services["worker-gpu"]["command"] == processes.worker_argv(["gpu"])


def test_the_image_serves_with_the_command_the_builder_writes():
    dockerfile = (ROOT / "Dockerfile").read_text()
    cmd = json.loads(re.search(r"^CMD (.+)$", dockerfile, re.M).group(1))
    assert cmd == processes.web_argv()


def test_the_demo_serves_web_and_one_worker_for_both_queues_from_the_builder():
    web, worker = demo.demo_processes(8060)
    assert web == processes.web_argv(
        python=sys.executable, bind="127.0.0.1:8060", access_log=True, log_level="warning"
    )
    assert worker == processes.worker_argv(
        ["celery", "gpu"], python=sys.executable, concurrency=1, log_level="WARNING"
    )
