"""Production settings pass Django's deployment checklist, send HSTS and trust
X-Forwarded-Proto only behind a configured proxy (CACHE_URL, demanded too, is tested with
the other required variables in test_settings.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DJANGO_ENV": "production",
    # check --deploy wants 50 characters or more.
    "SECRET_KEY": "a-long-random-production-secret-0123456789-abcdefghijklmnop",
    "DATABASE_URL": "postgres://ffkv@db.invalid:5432/ffkv",
    "CACHE_URL": "redis://cache.invalid:6379/1",
}
# Variables of this machine that would change what the settings read.
_CLEARED = {
    "DJANGO_ENV",
    "SECRET_KEY",
    "DATABASE_URL",
    "CACHE_URL",
    "DEBUG",
    "DJANGO_SETTINGS_MODULE",
    "FFKV_TRUSTED_PROXIES",
    "SECURE_HSTS_SECONDS",
    "SECURE_SSL_REDIRECT",
    "SECURE_COOKIES",
    "SECURE_HSTS_PRELOAD",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "LOG_FORMAT",
    # tests/e2e/conftest.py sets it for Playwright; check --deploy rightly warns on it.
    "DJANGO_ALLOW_ASYNC_UNSAFE",
}


def _run(args: list[str], **env_overrides: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env.update(env_overrides)
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def _settings(names: list[str], **env: str) -> dict:
    code = (
        "import json, django; django.setup(); from django.conf import settings as s;"
        f"print(json.dumps({{n: getattr(s, n) for n in {names!r}}}))"
    )
    result = _run(["-c", code], **env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_check_deploy_is_clean_in_production():
    result = _run(["manage.py", "check", "--deploy"], **PRODUCTION)
    assert result.returncode == 0, result.stderr
    # One check is answered in settings rather than by a setting: HSTS preloading is the
    # domain owner's opt-in (SECURE_HSTS_PRELOAD), so its reminder is silenced.
    assert "System check identified no issues (1 silenced)." in result.stdout, result.stdout
    assert "WARNINGS" not in result.stdout + result.stderr


def test_check_deploy_is_clean_with_hsts_preload_opted_in():
    result = _run(["manage.py", "check", "--deploy"], **PRODUCTION, SECURE_HSTS_PRELOAD="true")
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout, result.stdout


def test_check_deploy_is_clean_behind_a_proxy_too():
    result = _run(["manage.py", "check", "--deploy"], **PRODUCTION, FFKV_TRUSTED_PROXIES="1")
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (1 silenced)." in result.stdout, result.stdout


def test_hsts_is_on_in_production_and_configurable():
    names = ["SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_SSL_REDIRECT"]
    assert _settings(names, **PRODUCTION) == {
        "SECURE_HSTS_SECONDS": 31_536_000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_SSL_REDIRECT": True,
    }
    assert _settings(names, **PRODUCTION, SECURE_HSTS_SECONDS="600")["SECURE_HSTS_SECONDS"] == 600
    development = _settings(names)
    assert development["SECURE_HSTS_SECONDS"] == 0
    assert development["SECURE_SSL_REDIRECT"] is False


def test_x_forwarded_proto_is_trusted_only_behind_a_configured_proxy():
    name = ["SECURE_PROXY_SSL_HEADER"]
    assert _settings(name, **PRODUCTION) == {"SECURE_PROXY_SSL_HEADER": None}
    behind = _settings(name, **PRODUCTION, FFKV_TRUSTED_PROXIES="1")
    assert behind == {"SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"]}


# A production process behind one proxy, asked through Django's test client: plain HTTP
# is sent to HTTPS (the health check excepted, for the container's probe); a request
# the proxy marks as HTTPS gets HSTS.
_BEHIND_PROXY = """
import json, django
django.setup()
from django.test import Client
c = Client()
plain = c.get("/api/nope")
health = c.get("/api/health/")
forged = c.get("/api/nope", HTTP_X_FORWARDED_PROTO="https")
print(json.dumps({
    "plain": [plain.status_code, plain.get("Location")],
    "health": health.status_code,
    "https": [forged.status_code, forged.get("Strict-Transport-Security")],
}))
"""


def test_production_sends_http_to_https_and_https_gets_hsts(tmp_path):
    env = {**PRODUCTION, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    result = _run(["-c", _BEHIND_PROXY], **env, FFKV_TRUSTED_PROXIES="1")
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["plain"] == [301, "https://testserver/api/nope"]
    assert seen["health"] == 200
    assert seen["https"] == [404, "max-age=31536000; includeSubDomains"]
