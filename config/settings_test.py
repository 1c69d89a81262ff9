"""The small test overlay on top of the one settings module."""

import os
import re
from pathlib import Path

# Tests keep their runtime data (file-system broker, mining stores) apart from the demo's,
# so that a message a test queued is never consumed by `make demo`'s worker.
os.environ.setdefault("FFKV_DATA_DIR", str(Path(__file__).resolve().parent.parent / "var" / "test"))

# The suite never downloads: a Hugging Face id a test names (to see it refused) fails at
# once instead of after the hub client's retries, about 20 s on a machine without internet.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# `make test` runs the suite in several pytest processes (pytest-xdist names them gw0,
# gw1, ...). Each has its own data folder and its own Redis database, written back into
# the environment so that the worker processes a test starts inherit them: one process's
# worker never takes the other's tasks, and a test that counts or purges a queue sees
# only its own. pytest-django gives each its own test database.
# XDIST_WORKER ("" when pytest runs alone) and XDIST_INDEX are settings too: tests read
# them to keep other shared resources apart (private Redis ports, a restore database).
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
XDIST_INDEX = int(XDIST_WORKER.removeprefix("gw") or 0)
if XDIST_WORKER:
    os.environ["FFKV_DATA_DIR"] = str(Path(os.environ["FFKV_DATA_DIR"]) / XDIST_WORKER)
    _redis = re.fullmatch(r"(rediss?://[^/]*)(?:/(\d+))?", os.environ.get("CELERY_BROKER_URL", ""))
    if _redis:
        _db = int(_redis.group(2) or 0) + XDIST_INDEX
        os.environ["CELERY_BROKER_URL"] = f"{_redis.group(1)}/{_db}"
    # Each process (and the workers it starts) gets its share of the cores for torch's
    # and numba's thread pools: with a pool of every core in each, OpenMP threads that
    # spin while they wait make a model test several times slower.
    _threads = str(
        max(1, (os.cpu_count() or 1) // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    )
    for _pool in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_pool, _threads)

from .settings import *  # noqa: E402, F403
from .settings import REST_FRAMEWORK  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
REST_FRAMEWORK = {
    **REST_FRAMEWORK,
    "DEFAULT_THROTTLE_RATES": {
        "login": "5/min",
        "login_username": "5/min",
        "password_link": "5/min",
    },
}
CELERY_TASK_ALWAYS_EAGER = False
