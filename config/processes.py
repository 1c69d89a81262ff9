"""The command lines of ffkv's long-running processes, written once.

The demo (``manage.py demo``), the benches (``bench/``) and the tests that start real
processes (``tests/integration/``) all build their gunicorn and Celery worker argv here;
docker-compose.yml and the Dockerfile cannot import Python, so tests/unit/test_processes.py
parses them and compares their commands with what these functions build.

Paths are relative to the repository (the image's ``/app``): start the processes with the
repository as the working directory (``python -m celery -A config`` finds ``config`` there).

The web wins on a small host: every Celery worker runs under ``nice`` (``WORKER_NICE``
above the process that starts it), so that an export, an import, a report or a mining
shard takes the CPU the web processes leave; gunicorn runs at the normal priority
(docs/operations.md, "Priorities").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

GUNICORN_CONF = "config/gunicorn.conf.py"
WSGI_APP = "config.wsgi:application"
CELERY_APP = "config"

# nice(1)'s increment for worker processes: 10 is nice(1)'s own default; the kernel gives a
# nice-0 task about 9 times the CPU share of a nice-10 one when both want it.
WORKER_NICE = 10


@dataclass(frozen=True)
class Queue:
    """How a worker for one queue runs: ``concurrency`` None is Celery's default (one
    process per core)."""

    name: str
    concurrency: int | None
    nice: int


# "celery" (settings.CELERY_TASK_DEFAULT_QUEUE): exports, imports, reports and other short
# jobs. "gpu" (settings.CELERY_TASK_ROUTES): mining, one process per device.
QUEUES: dict[str, Queue] = {
    "celery": Queue("celery", concurrency=None, nice=WORKER_NICE),
    "gpu": Queue("gpu", concurrency=1, nice=WORKER_NICE),
}


def _program(module: str, python: str | None) -> list[str]:
    """``module`` as a console script (the image's PATH), or ``python -m module`` (the
    virtual environment a launcher runs in)."""
    return [module] if python is None else [python, "-m", module]


def web_argv(
    *,
    python: str | None = None,
    bind: str | None = None,
    log_level: str | None = None,
    access_log: bool = False,
) -> list[str]:
    """gunicorn with config/gunicorn.conf.py (workers, threads, preload, keep-alive come from
    there and its environment variables, never from here), bound to ``bind`` if given."""
    argv = [*_program("gunicorn", python), "-c", GUNICORN_CONF, WSGI_APP]
    if bind is not None:
        argv += ["--bind", bind]
    if access_log:
        argv += ["--access-logfile", "-"]
    if log_level is not None:
        argv += ["--log-level", log_level]
    return argv


def worker_argv(
    queues: Sequence[str],
    *,
    python: str | None = None,
    concurrency: int | None = None,
    pool: str | None = None,
    name: str | None = None,
    log_level: str = "INFO",
    quick_start: bool = False,
) -> list[str]:
    """A Celery worker consuming ``queues``, under ``nice`` at the highest of their
    niceness. ``concurrency`` defaults to the smallest the queues ask for; ``name`` is the
    node name (``-n``; left out, the worker is celery@<hostname>, which compose's health
    check pings); ``quick_start`` leaves out gossip and mingle (a test's lone worker). A
    queue not in ``QUEUES`` (a test's own) runs as the default queue ``celery``."""
    if not queues:
        raise ValueError("a worker needs at least one queue")
    # A queue of no table (a test's own) runs as the default one.
    chosen = [QUEUES.get(queue, QUEUES["celery"]) for queue in queues]
    if concurrency is None:
        asked = [queue.concurrency for queue in chosen if queue.concurrency is not None]
        concurrency = min(asked) if asked else None
    nice = max(queue.nice for queue in chosen)
    argv = ["nice", "-n", str(nice)] if nice else []
    argv += [*_program("celery", python), "-A", CELERY_APP, "worker", "-Q", ",".join(queues)]
    if concurrency is not None:
        argv += ["--concurrency", str(concurrency)]
    if pool is not None:
        argv += ["--pool", pool]
    if name is not None:
        argv += ["-n", name]
    argv += ["--loglevel", log_level]
    if quick_start:
        argv += ["--without-gossip", "--without-mingle"]
    return argv
