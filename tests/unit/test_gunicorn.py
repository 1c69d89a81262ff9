"""gunicorn runs with config/gunicorn.conf.py wherever ffkv is served, the API bench too."""

from __future__ import annotations

import json
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from gunicorn.config import Config

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "config" / "gunicorn.conf.py"
SETTINGS = ("bind", "worker_class", "workers", "threads", "preload_app", "keepalive")


def _conf(monkeypatch, **env: str) -> dict:
    for name in ("WEB_CONCURRENCY", "GUNICORN_THREADS", "GUNICORN_WORKER_CLASS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONF))


def test_every_name_in_the_config_is_a_gunicorn_setting(monkeypatch):
    # gunicorn ignores an unknown name in a config file: a typo would pass unnoticed.
    conf = _conf(monkeypatch)
    names = {name for name in conf if not name.startswith("_") and name not in {"os"}}
    names.discard("annotations")  # from __future__
    assert names == set(SETTINGS)
    assert names <= set(Config().settings)
    assert (conf["worker_class"], conf["workers"], conf["threads"]) == ("gthread", 2, 4)
    assert conf["preload_app"] is True


def test_the_environment_sizes_the_server_for_another_host(monkeypatch):
    conf = _conf(monkeypatch, WEB_CONCURRENCY="6", GUNICORN_THREADS="8")
    assert (conf["workers"], conf["threads"]) == (6, 8)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(
            lambda: " ".join(
                json.loads(
                    re.search(r"^CMD (.+)$", (ROOT / "Dockerfile").read_text(), re.M).group(1)
                )
            ),
            id="Dockerfile",
        ),
        pytest.param(
            lambda: yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"][
                "command"
            ][-1],
            id="docker-compose web",
        ),
    ],
)
def test_the_deployments_serve_with_the_config_file(command):
    assert "gunicorn -c config/gunicorn.conf.py config.wsgi:application" in command()
    assert "--workers" not in command() and "--threads" not in command()


def test_the_api_bench_serves_with_the_config_file():
    source = (ROOT / "bench" / "api_load.py").read_text()
    assert '"-c",' in source and 'str(ROOT / "config" / "gunicorn.conf.py")' in source
    assert '"--workers"' not in source and '"--threads"' not in source


def test_the_demo_serves_with_the_config_file():
    source = (ROOT / "mining" / "management" / "commands" / "demo.py").read_text()
    assert '"-c",' in source and '"config" / "gunicorn.conf.py"' in source
    assert '"--workers"' not in source and '"--threads"' not in source


def test_the_loaded_app_is_frozen_out_of_the_garbage_collector(tmp_path):
    # Full collections walking torch's ~270,000 objects stopped a worker for 150-360 ms.
    script = (
        "import gc, json; n = len(gc.get_objects()); import config.wsgi; "
        "print(json.dumps([gc.get_freeze_count(), len(gc.get_objects()), n]))"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "FFKV_DATA_DIR": str(tmp_path),
    }
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    frozen, tracked, before = json.loads(out.stdout)
    assert frozen > 100_000  # the app, its views and torch
    assert tracked < before  # what the collector still walks: less than before the import
