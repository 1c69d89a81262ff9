"""Settings come from the environment only, and production refuses unsafe ones."""

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
