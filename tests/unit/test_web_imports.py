"""Web processes stay light: loading the URLconf, the WSGI application and everything a
mining-run request imports never loads torch, numba or transformers (docs/operations.md,
"gunicorn"). Those are the workers' business; a web process that imported them grew from
about 90 to 330 MiB and started 1.8 s slower.

Each check runs in a fresh interpreter: this test process has long imported torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "numba", "transformers")

# What a web process imports: the settings, the URLconf with every view (as
# config.wsgi does at start), URL resolution, and what a POST to the mining-run API
# pulls in (the serializers' checks and mining.tasks, whose task it queues).
PROBE = """
import json, os, resource, sys, time
started = time.perf_counter()
import django
django.setup()
import config.urls
import config.wsgi
from django.urls import resolve, reverse
for name in ("mining-run-list", "health"):
    resolve(reverse(name))
resolve("/api/admin/mining-runs/1/")
resolve("/api/admin/mining-runs/1/cancel/")
import mining.apis, mining.selectors, mining.services, mining.loader, mining.tasks
from mining.apis import MiningRunListCreateApi
MiningRunListCreateApi.InputSerializer(data={}).is_valid()
seconds = time.perf_counter() - started
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:]))
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({
    "heavy": heavy,
    "seconds": seconds,
    "cpu_seconds": usage.ru_utime + usage.ru_stime,
    "max_rss_mib": usage.ru_maxrss / 1024,
}))
"""


def _probe(settings_module: str) -> dict:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings_module}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *HEAVY],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("settings_module", ["config.settings", "config.settings_test"])
def test_the_web_side_never_imports_torch_numba_or_transformers(settings_module):
    result = _probe(settings_module)
    assert result["heavy"] == [], (
        f"a web process imported {', '.join(result['heavy'])} "
        f"(max RSS {result['max_rss_mib']:.0f} MiB, {result['seconds']:.2f} s)"
    )


def test_the_worker_side_still_reaches_the_engine():
    # The light package must still hand the engine to whoever asks for it, under the
    # same names as before: finalize and perturb are functions, though modules of the
    # same names exist and may have been imported first.
    code = (
        "import sys\n"
        "from mining.core import MineConfig, MiningError\n"
        "assert 'torch' not in sys.modules\n"
        "from mining.core import load_model, mine_range\n"
        "assert 'torch' in sys.modules and callable(load_model) and callable(mine_range)\n"
        "import mining.core.finalize, mining.core.perturb\n"
        "from mining.core import finalize, perturb\n"
        "assert finalize.__module__ == 'mining.core.finalize', finalize\n"
        "assert perturb.__module__ == 'mining.core.perturb', perturb\n"
        "import mining.core as core\n"
        "assert sorted(core.__all__) == sorted(core._WHERE)\n"
        "assert all(getattr(core, name) is not None for name in core.__all__)\n"
        "try:\n"
        "    core.no_such_name\n"
        "except AttributeError as exc:\n"
        "    assert 'no_such_name' in str(exc)\n"
        "else:\n"
        "    raise AssertionError('no AttributeError')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
