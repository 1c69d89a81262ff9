"""config/gunicorn.conf.py: what gunicorn makes of it. That every launcher serves with it:
tests/unit/test_processes.py."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from gunicorn.config import Config

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "config" / "gunicorn.conf.py"
SETTINGS = (
    "bind",
    "worker_class",
    "workers",
    "threads",
    "preload_app",
    "keepalive",
    "forwarded_allow_ips",
)
PROXY_VARIABLES = ("FFKV_TRUSTED_PROXIES", "FFKV_PROXY_ADDRESSES", "FORWARDED_ALLOW_IPS")


def _conf(monkeypatch, **env: str) -> dict:
    for name in ("WEB_CONCURRENCY", "GUNICORN_THREADS", "GUNICORN_WORKER_CLASS", *PROXY_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONF))


def test_every_name_in_the_config_is_a_gunicorn_setting(monkeypatch):
    # gunicorn ignores an unknown name in a config file: a typo would pass unnoticed.
    conf = _conf(monkeypatch)
    names = {name for name in conf if not name.startswith("_") and name not in {"os"}}
    names.discard("annotations")  # from __future__
    names.discard("ipaddress")
    assert names == set(SETTINGS)
    assert names <= set(Config().settings)
    assert (conf["worker_class"], conf["workers"], conf["threads"]) == ("gthread", 2, 4)
    assert conf["preload_app"] is True


def test_the_environment_sizes_the_server_for_another_host(monkeypatch):
    conf = _conf(monkeypatch, WEB_CONCURRENCY="6", GUNICORN_THREADS="8")
    assert (conf["workers"], conf["threads"]) == (6, 8)


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


# --- forwarded headers follow FFKV_TRUSTED_PROXIES ---------------------------------------


def _allowed(monkeypatch, **env: str) -> list[str]:
    """What gunicorn makes of the config's ``forwarded_allow_ips``."""
    config = Config()
    config.set("forwarded_allow_ips", _conf(monkeypatch, **env)["forwarded_allow_ips"])
    return config.forwarded_allow_ips


def test_with_no_trusted_proxy_gunicorn_trusts_no_forwarded_header(monkeypatch):
    assert _allowed(monkeypatch) == []
    assert _allowed(monkeypatch, FFKV_TRUSTED_PROXIES="0") == []
    # gunicorn's own variable cannot widen it behind the app's back.
    assert _allowed(monkeypatch, FORWARDED_ALLOW_IPS="*") == []


@pytest.mark.parametrize(
    ("addresses", "expected"),
    [
        ("10.0.0.5", ["10.0.0.5"]),
        ("10.0.0.5, 172.16.0.0/12,::1", ["10.0.0.5", "172.16.0.0/12", "::1"]),
        ("*", ["*"]),
        (None, ["*"]),
    ],
)
def test_with_proxies_gunicorn_trusts_exactly_those_named(monkeypatch, addresses, expected):
    env = {"FFKV_TRUSTED_PROXIES": "1"}
    if addresses is not None:
        env["FFKV_PROXY_ADDRESSES"] = addresses
    assert _allowed(monkeypatch, **env) == expected


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FFKV_TRUSTED_PROXIES": "-1"}, "FFKV_TRUSTED_PROXIES must be 0 or more"),
        ({"FFKV_TRUSTED_PROXIES": "one"}, "FFKV_TRUSTED_PROXIES must be 0 or more"),
        ({"FFKV_PROXY_ADDRESSES": "10.0.0.5"}, "FFKV_TRUSTED_PROXIES is 0"),
        (
            {"FFKV_TRUSTED_PROXIES": "1", "FFKV_PROXY_ADDRESSES": "proxy.local"},
            "FFKV_PROXY_ADDRESSES: 'proxy.local' is not an address",
        ),
    ],
)
def test_a_bad_proxy_setting_stops_the_server_with_its_name(monkeypatch, env, message):
    with pytest.raises(ValueError, match=message):
        _conf(monkeypatch, **env)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scheme_seen_by_django(tmp_path, **env: str) -> int:
    """A real gunicorn with the config, in production (plain HTTP is redirected to HTTPS):
    the status of a request from 127.0.0.1 that claims ``X-Forwarded-Proto: https``. 301:
    Django saw plain HTTP; anything else: it took the request for HTTPS."""
    import requests

    from tests.integration.processes import poll

    port = _free_port()
    log_path = tmp_path / f"gunicorn-{port}.log"
    cleared = {"DJANGO_SETTINGS_MODULE", "DEBUG", "SECURE_SSL_REDIRECT", *PROXY_VARIABLES}
    environment = {k: v for k, v in os.environ.items() if k not in cleared} | {
        "DJANGO_ENV": "production",
        "SECRET_KEY": "a-long-random-production-secret-0123456789-abcdefghijklmnop",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CACHE_URL": "redis://127.0.0.1:1/0",  # never reached by these requests
        "FFKV_DATA_DIR": str(tmp_path),
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
        "GUNICORN_THREADS": "1",
        **env,
    }
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", str(CONF), "config.wsgi:application"],
            cwd=ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"

        def answers():
            assert process.poll() is None, log_path.read_text()[-3000:]
            try:
                return requests.get(f"{url}/api/health/", timeout=2)
            except requests.ConnectionError:
                return None

        try:
            poll(answers, 60, "gunicorn to answer", log_path)
            response = requests.get(
                f"{url}/api/auth/me/",
                headers={"X-Forwarded-Proto": "https"},
                allow_redirects=False,
                timeout=10,
            )
            return response.status_code
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def test_a_forwarded_https_from_the_host_is_not_trusted_without_a_proxy(tmp_path):
    assert _scheme_seen_by_django(tmp_path) == 301
    # Behind a configured proxy at that address, the same request is HTTPS.
    trusted = _scheme_seen_by_django(
        tmp_path, FFKV_TRUSTED_PROXIES="1", FFKV_PROXY_ADDRESSES="127.0.0.1"
    )
    assert trusted == 403  # /api/auth/me/ refusing an anonymous user: no redirect
