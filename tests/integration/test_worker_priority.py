"""The web wins on a small host (docs/operations.md, "Priorities"): a worker started with
the argv of config/processes.py, and the pool process where its jobs run, have a higher
nice value than the process that started it; gunicorn's argv is not niced."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from config import processes
from tests.integration.processes import ProductionWorker, poll
from tests.integration.processes import private_redis as private_redis

pytestmark = pytest.mark.integration


def _nice(pid: int) -> int:
    """Field 19 of /proc/<pid>/stat (proc(5)); the command name, field 2, may hold spaces
    and parentheses, so the fields are counted from its closing parenthesis."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[16])


def _children(pid: int) -> list[int]:
    return [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]


def test_a_worker_and_its_pool_process_run_niced_below_the_web(postgres, private_redis, tmp_path):
    own = _nice(os.getpid())
    assert own < 19, "this test runs at nice 19 already: nothing to compare"
    worker = ProductionWorker(
        "priority", tmp_path, tmp_path / "worker.log", {"CELERY_BROKER_URL": private_redis.url}
    )
    try:
        poll(worker.ready, 120, "the worker ready", worker.log)
        pool = poll(lambda: _children(worker.process.pid), 30, "the pool process", worker.log)
        niced = [_nice(pid) for pid in (worker.process.pid, *pool)]
        assert min(niced) > own, niced
        assert niced == [min(own + processes.WORKER_NICE, 19)] * len(niced)
        assert "nice" not in processes.web_argv()
    finally:
        worker.stop()
