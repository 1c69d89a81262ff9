"""Settings come from the environment only, and production refuses unsafe ones."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOOD_PRODUCTION = {
    "DJANGO_ENV": "production",
    "SECRET_KEY": "a-long-random-production-secret-0123456789",
    "DATABASE_URL": "postgres://ffkv@db.invalid:5432/ffkv",
    "CACHE_URL": "redis://cache.invalid:6379/1",
}


def _check(env_overrides: dict[str, str]) -> subprocess.CompletedProcess:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {
            "DJANGO_ENV",
            "SECRET_KEY",
            "DATABASE_URL",
            "CACHE_URL",
            "DEBUG",
            "DJANGO_SETTINGS_MODULE",
        }
    }
    env.update(env_overrides)
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "CRITICAL"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("missing", ["SECRET_KEY", "DATABASE_URL", "CACHE_URL"])
def test_production_without_a_required_variable_fails_and_names_it(missing):
    env = {k: v for k, v in GOOD_PRODUCTION.items() if k != missing}
    result = _check(env)
    assert result.returncode != 0
    assert f"{missing} must be set when DJANGO_ENV=production" in result.stderr
    assert "Traceback" not in result.stderr


def test_production_refuses_debug():
    result = _check({**GOOD_PRODUCTION, "DEBUG": "true"})
    assert result.returncode != 0
    assert "DEBUG must be off" in result.stderr


def test_production_refuses_the_development_secret():
    result = _check(
        {
            **GOOD_PRODUCTION,
            "SECRET_KEY": "ffkv-development-only-secret-key-do-not-use-in-production",
        }
    )
    assert result.returncode != 0
    assert "SECRET_KEY must not be the development default" in result.stderr


def test_production_with_its_variables_starts():
    result = _check(GOOD_PRODUCTION)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("DEBUG", "maybe", "DEBUG must be a boolean"),
        ("DATABASE_URL", "nonsense://x", "DATABASE_URL is not a valid database URL"),
        ("CELERY_BROKER_URL", "kafka://x", "CELERY_BROKER_URL must start with"),
        ("DJANGO_ENV", "staging", "DJANGO_ENV must be"),
    ],
)
def test_a_bad_value_fails_loudly_with_the_variables_name(variable, value, message):
    result = _check({variable: value})
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def _test_settings_of(env_overrides: dict[str, str]) -> dict[str, str]:
    """What config.settings_test makes of an environment, read in a fresh process."""
    ours = {"PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "OMP_NUM_THREADS"}
    env = {k: v for k, v in os.environ.items() if k not in ours} | env_overrides
    script = (
        "import json, os; from config import settings_test as s; print(json.dumps({"
        "'broker': s.CELERY_BROKER_URL, 'data_dir': str(s.DATA_DIR),"
        "'env_broker': os.environ['CELERY_BROKER_URL'],"
        "'env_data_dir': os.environ['FFKV_DATA_DIR'],"
        "'threads': os.environ.get('OMP_NUM_THREADS')}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_each_parallel_test_process_has_its_own_redis_database_and_data_folder(tmp_path):
    # pytest-xdist's gw0 and gw1 share neither: the worker processes a test starts read
    # the environment, so the environment must say the same as the settings.
    base = {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/2", "FFKV_DATA_DIR": str(tmp_path)}
    base |= {"PYTEST_XDIST_WORKER_COUNT": "2"}
    first = _test_settings_of(base | {"PYTEST_XDIST_WORKER": "gw0"})
    second = _test_settings_of(base | {"PYTEST_XDIST_WORKER": "gw1"})
    # ... and its share of the cores for torch's and numba's thread pools.
    share = str(max(1, (os.cpu_count() or 1) // 2))
    assert first.pop("threads") == second.pop("threads") == share
    assert first == {
        "broker": "redis://127.0.0.1:6379/2",
        "data_dir": str(tmp_path / "gw0"),
        "env_broker": "redis://127.0.0.1:6379/2",
        "env_data_dir": str(tmp_path / "gw0"),
    }
    assert second == {
        "broker": "redis://127.0.0.1:6379/3",
        "data_dir": str(tmp_path / "gw1"),
        "env_broker": "redis://127.0.0.1:6379/3",
        "env_data_dir": str(tmp_path / "gw1"),
    }
    # One process alone (plain pytest) keeps what it was given.
    alone = _test_settings_of({k: v for k, v in base.items() if k != "PYTEST_XDIST_WORKER_COUNT"})
    assert (alone["broker"], alone["data_dir"]) == ("redis://127.0.0.1:6379/2", str(tmp_path))
    assert alone["threads"] is None


def test_parallel_test_processes_on_the_file_system_broker_keep_apart_folders(tmp_path):
    base = {"CELERY_BROKER_URL": "filesystem://", "FFKV_DATA_DIR": str(tmp_path)}
    second = _test_settings_of(base | {"PYTEST_XDIST_WORKER": "gw1"})
    assert second["broker"] == "filesystem://"
    assert second["data_dir"] == str(tmp_path / "gw1")
