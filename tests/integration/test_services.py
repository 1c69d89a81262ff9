"""The production services are the ones in use: PostgreSQL via psycopg 3, Redis, workers."""

import time
from typing import Any

import psycopg
import pytest
from django.db import connection

from annotate.selectors.keys import assignment_list_for_annotator
from config.celery import app
from tests.factories import AssignmentFactory, BatchFactory, KeyFactory

pytestmark = pytest.mark.integration


def test_the_database_is_postgresql_through_psycopg3(postgres):
    assert connection.vendor == "postgresql"
    assert psycopg.__version__.startswith("3.")
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        assert cursor.fetchone()[0]


def test_the_assignment_listing_runs_on_postgresql(postgres, alice):
    batch = BatchFactory(keys=KeyFactory.create_batch(3))
    AssignmentFactory(batch=batch, annotator=alice)
    rows: list[Any] = list(assignment_list_for_annotator(user=alice))
    assert [(row.keys_total, row.keys_submitted) for row in rows] == [(3, 0)]


def test_a_real_worker_process_answers_through_redis(start_worker):
    worker = start_worker(queues=["integration-ping"])
    destination = [worker.name.replace("%h", _hostname())]
    deadline = time.monotonic() + 60  # a loaded machine answers late, not never
    replies = app.control.ping(destination=destination, timeout=1)
    while not replies and time.monotonic() < deadline:
        replies = app.control.ping(destination=destination, timeout=1)
    assert replies, f"no reply from {worker.name}: {worker.log.read_text()[-2000:]}"


def _hostname() -> str:
    import socket

    return socket.gethostname()
