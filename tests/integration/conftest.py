"""Real services: PostgreSQL, Redis and Celery worker processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from config import processes
from tests.conftest import service_missing

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def postgres(transactional_db) -> None:
    if connection.vendor != "postgresql":
        service_missing(
            "needs PostgreSQL: set DATABASE_URL=postgres://postgres@127.0.0.1:5432/ffkv"
        )


@pytest.fixture
def redis_broker() -> str:
    url = settings.CELERY_BROKER_URL
    if not url.startswith("redis://"):
        service_missing("needs Redis: set CELERY_BROKER_URL=redis://127.0.0.1:6379/0")
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.exceptions.RedisError as exc:
        service_missing(f"Redis at {url} does not answer: {exc}")
    return url


def database_url_of_test_db() -> str:
    """The URL of the database pytest-django created, for worker processes."""
    s = connection.settings_dict
    user = s.get("USER") or ""
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    return f"postgres://{auth}{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


def worker_env(data_dir: Path, extra: dict[str, str]) -> dict[str, str]:
    """The environment of a worker process: the test database, ``data_dir``, and the
    roots the test set (the worker reads local files only inside them)."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url_of_test_db(),
        "FFKV_DATA_DIR": str(data_dir),
        "FFKV_CORPUS_ROOTS": ",".join(map(str, settings.FFKV_CORPUS_ROOTS)),
        "FFKV_MODEL_ROOTS": ",".join(map(str, settings.FFKV_MODEL_ROOTS)),
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


class WorkerProcess:
    """A real ``celery worker`` process on its own queues, against the test database."""

    def __init__(
        self, queues: list[str], data_dir: Path, log: Path, env: dict[str, str] | None = None
    ) -> None:
        self.queues = queues
        self.log = log
        env = worker_env(data_dir, env or {})
        self.name = f"test-{uuid.uuid4().hex[:8]}@%h"
        self._log_file = log.open("ab")
        self.process = subprocess.Popen(
            processes.worker_argv(
                queues,
                python=sys.executable,
                concurrency=1,
                pool="solo",
                name=self.name,
                quick_start=True,
            ),
            cwd=ROOT,
            env=env,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"worker exited early:\n{self.log.read_text()[-3000:]}")
            if b"ready." in self.log.read_bytes():
                return
            time.sleep(0.2)
        raise AssertionError(f"worker not ready in {timeout}s:\n{self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """kill -9: the worker gets no chance to acknowledge or clean up."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log_file.close()


@pytest.fixture
def start_worker(postgres, redis_broker, tmp_path) -> Iterator:
    """Start real worker processes: ``start_worker(queues=[...])``; all stop at the end.

    Before the test, the app's queues in this process's Redis database are emptied: tests
    that commit work without a worker (a pattern save queues its scoring) leave jobs
    there, and a worker started later took thousands of them before the test's own (an
    export test timed out behind them in CI)."""
    from config.celery import app

    with app.connection_for_write() as connection:
        for queue in processes.QUEUES:
            connection.default_channel.queue_purge(queue)
    workers: list[WorkerProcess] = []

    def start(
        queues: list[str], data_dir: Path | None = None, env: dict[str, str] | None = None
    ) -> WorkerProcess:
        worker = WorkerProcess(
            queues, data_dir or settings.DATA_DIR, tmp_path / f"worker{len(workers)}.log", env
        )
        workers.append(worker)
        worker.wait_ready()
        return worker

    yield start
    for worker in workers:
        worker.stop()
