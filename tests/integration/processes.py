"""Real processes the fault tests stop and start: a Redis server of the test's own, and a
tiny model with a corpus on disk that worker processes mine in seconds."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from config import processes
from tests.conftest import service_missing

# Never the shared Redis on 6379; each pytest process (gw0, gw1, ...) probes its own four
# ports, so that two processes never both find the same port free and race for it.
PRIVATE_PORTS = range(6391 + 4 * settings.XDIST_INDEX, 6395 + 4 * settings.XDIST_INDEX)


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def poll(condition, timeout: float, what: str, log: Path | None = None):
    """``condition()``'s first truthy value, polled until a deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    tail = log.read_text(errors="replace")[-4000:] if log and log.is_file() else ""
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{tail}")


class RedisServer:
    """``redis-server`` on a free private port, without persistence: a stop loses every
    message it held, queued or delivered and not yet acknowledged (the harshest case)."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            service_missing("needs the redis-server program (apt-get install redis-server)")
        port = next((p for p in PRIVATE_PORTS if _port_free(p)), None)
        if port is None:
            service_missing(f"no free port for a private Redis in {PRIVATE_PORTS}")
        self.binary, self.port, self.folder = binary, port, folder
        self.url = f"redis://127.0.0.1:{port}/0"
        self.log = folder / f"redis-{port}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.stops = 0

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
                "--logfile",
                str(self.log),
            ],
            start_new_session=True,
        )
        import redis

        def answers() -> bool:
            assert self.process is not None and self.process.poll() is None, self.log.read_text()
            try:
                return bool(redis.Redis(port=self.port, socket_connect_timeout=1).ping())
            except redis.exceptions.RedisError:
                return False

        poll(answers, 20, f"redis-server on port {self.port}", self.log)

    def stop(self) -> None:
        """SIGKILL, as a crashed or killed container: no goodbye to the clients."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
            self.stops += 1
        self.process = None


@pytest.fixture
def private_redis(tmp_path) -> RedisServer:
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


def tiny_job(folder: Path, sentences: int) -> tuple[Path, Path]:
    """The GPT-2 fixture (fixtures/models/gpt2.json) with seeded weights, saved where a
    worker process loads it, and ``sentences`` distinct lines to mine."""
    from tests.mining.conftest import save_tiny_model
    from tests.unit.mining.conftest import random_sentences

    model = save_tiny_model("gpt2", folder / "tiny-gpt2")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(random_sentences(sentences, seed=11)) + "\n", encoding="utf-8")
    return model, corpus


class ProductionWorker:
    """The gpu-queue worker as docker-compose's worker-gpu runs it (config/processes.py:
    the prefork pool with one child, niced), named ``NAME@%h``, against the test database."""

    def __init__(self, name: str, data_dir: Path, log: Path, env: dict[str, str]) -> None:
        from tests.integration.conftest import ROOT, worker_env

        self.name, self.log = name, log
        self._log_file = log.open("ab")
        self.process = subprocess.Popen(
            processes.worker_argv(["gpu"], python=sys.executable, name=f"{name}@%h"),
            cwd=ROOT,
            env=worker_env(data_dir, env),
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"worker {self.name} exited:\n{self.log.read_text()[-3000:]}")
        return b"ready." in self.log.read_bytes()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self._log_file.close()


def tiny_study_mined_here(
    settings, folder: Path, name: str, created_by, sentences: int, **config
):  # -> annotate.models.Study
    """A study of the tiny GPT-2 over ``sentences`` lines, mined in this process (prepare,
    shards, merge, as `manage.py mine` runs them), its files in ``folder`` and the data
    folder under it; the model and corpus roots set so that a worker process started
    afterwards (``start_worker``) may read them. ``config``: MineConfig's other fields, the
    run's ``compose_prefixes``."""
    from annotate.models import Study
    from mining import services
    from mining.core import MineConfig

    settings.DATA_DIR = folder / "data"
    model, corpus = tiny_job(folder / "job", sentences)
    settings.FFKV_CORPUS_ROOTS = [corpus.parent]
    settings.FFKV_MODEL_ROOTS = [model.parent]
    compose_prefixes = config.pop("compose_prefixes", 0)
    mine_config = MineConfig(
        model=str(model), corpus=str(corpus), sentences="lines", batch_size=16, **config
    )
    run = services.mining_run_create(
        study_name=name,
        config=mine_config,
        created_by=created_by,
        compose_prefixes=compose_prefixes,
    )
    for shard in services.mining_run_prepare(run=run):
        services.mining_shard_mine(shard=shard)
    services.mining_run_merge(run=run)
    return Study.objects.get(name=name)
