"""PostgreSQL restarted while annotators work (docs/reliability.md): the app recovers,
the client retries, nothing is lost.

A real gunicorn, started with ``config/gunicorn.conf.py``, serves the test database. A
restart of PostgreSQL does two things to it, and each is done here for real:
- every connection the server holds is closed under it (``pg_terminate_backend``);
- for a while no new connection is accepted (``ALLOW_CONNECTIONS false``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import requests
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.db import connection

from annotate.api_errors import DATABASE_UNAVAILABLE
from annotate.models import Annotation, AnnotationEvent, Pattern
from config import processes
from tests.factories import PASSWORD, assigned_batch
from tests.integration.conftest import database_url_of_test_db

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
APP_NAME = "ffkv-restart-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _admin() -> psycopg.Connection:
    """A connection of the test's own, outside Django's, to act as the restart: to the
    ``postgres`` database, since no session may close the door of its own database."""
    return psycopg.connect(
        database_url_of_test_db().rsplit("/", 1)[0] + "/postgres", autocommit=True
    )


def _server_backends(admin: psycopg.Connection) -> list[int]:
    rows = admin.execute(
        "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (APP_NAME,)
    ).fetchall()
    return [pid for (pid,) in rows]


def _drop_server_connections(admin: psycopg.Connection) -> None:
    pids = _server_backends(admin)
    assert pids, "the server holds no connection to drop: nothing would be tested"
    for pid in pids:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    deadline = time.monotonic() + 10
    while _server_backends(admin) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _server_backends(admin)


def _allow_connections(admin: psycopg.Connection, allowed: bool) -> None:
    name = connection.settings_dict["NAME"]
    admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS {str(allowed).lower()}')


@pytest.fixture
def server(postgres, tmp_path) -> Iterator[str]:
    port = _free_port()
    log = (tmp_path / "gunicorn.log").open("wb")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"{database_url_of_test_db()}?application_name={APP_NAME}",
        "FFKV_DATA_DIR": str(tmp_path),
        "WEB_CONCURRENCY": "1",
        "GUNICORN_THREADS": "2",
        "PYTHONUNBUFFERED": "1",
    }
    process = subprocess.Popen(
        processes.web_argv(python=sys.executable, bind=f"127.0.0.1:{port}"),
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (tmp_path / "gunicorn.log").read_text()[-3000:]
            try:
                if requests.get(f"{url}/api/health/", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, "gunicorn did not answer within 60 s"
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _pattern(session: requests.Session, url: str, key_id: int, version: int, client_id: str):
    return session.post(
        f"{url}/api/keys/{key_id}/patterns/",
        json={
            "description": "a recurring word",
            "kind": "shallow",
            "prefix_ranks": [1, 2, 3],
            "version": version,
            "client_id": client_id,
        },
        headers={"X-CSRFToken": session.cookies.get("csrftoken") or ""},
        timeout=30,
    )


def test_annotators_work_on_through_a_database_restart(server, alice):
    # The tests hash with MD5 for speed; the server runs the real settings (PBKDF2).
    alice.password = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    alice.save(update_fields=["password"])
    _, (key,) = assigned_batch([alice])
    session = requests.Session()
    session.get(f"{server}/login", timeout=10)
    logged_in = session.post(
        f"{server}/api/auth/login/",
        json={"username": "alice", "password": PASSWORD},
        headers={"X-CSRFToken": session.cookies.get("csrftoken") or ""},
        timeout=30,
    )
    assert logged_in.status_code == 200, logged_in.text
    version = session.get(f"{server}/api/keys/{key.pk}/", timeout=10).json()["annotation"][
        "version"
    ]
    first = _pattern(session, server, key.pk, version, str(uuid.uuid4()))
    assert first.status_code == 201, first.text
    version = first.json()["version"]

    admin = _admin()
    try:
        # The restart closed every connection: the next request reconnects by itself
        # (CONN_HEALTH_CHECKS) instead of failing on the dead one.
        _drop_server_connections(admin)
        second = _pattern(session, server, key.pk, version, str(uuid.uuid4()))
        assert second.status_code == 201, second.text
        version = second.json()["version"]

        # While the database is down, a write is a clear 503 that the client retries,
        # never a 500 page, and the session survives it.
        _allow_connections(admin, False)
        try:
            _drop_server_connections(admin)
            retried_id = str(uuid.uuid4())
            down = _pattern(session, server, key.pk, version, retried_id)
            assert down.status_code == 503
            assert down.headers["Content-Type"].startswith("application/json")
            assert down.json() == {"detail": DATABASE_UNAVAILABLE, "code": "database_unavailable"}
            health = requests.get(f"{server}/api/health/", timeout=10)
            assert health.status_code == 503
        finally:
            _allow_connections(admin, True)

        # Back up: the retry of the refused write is saved, once; a second retry of it
        # (an answer lost on the way) returns the same pattern instead of a duplicate.
        retry = _pattern(session, server, key.pk, version, retried_id)
        assert retry.status_code == 201, retry.text
        again = _pattern(session, server, key.pk, version, retried_id)
        assert again.status_code == 200, again.text
        assert again.json()["version"] == retry.json()["version"] == version + 1
        submitted = session.post(
            f"{server}/api/keys/{key.pk}/submit/",
            json={"version": version + 1},
            headers={"X-CSRFToken": session.cookies.get("csrftoken") or ""},
            timeout=30,
        )
        assert submitted.status_code == 200, submitted.text
    finally:
        admin.close()

    annotation = Annotation.objects.get(key=key, annotator=alice)
    assert annotation.status == Annotation.Status.SUBMITTED
    assert annotation.version == version + 2
    assert Pattern.objects.filter(annotation=annotation).count() == 3
    assert Pattern.objects.filter(annotation=annotation, client_id=retried_id).count() == 1
    # created (the draft), three patterns, the submit: nothing lost, nothing twice
    assert AnnotationEvent.objects.filter(annotation=annotation).count() == 5
