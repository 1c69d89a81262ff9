"""Every response names its request (X-Request-ID), and every log line written while the
request ran carries the same id: one grep finds all that one request did."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client

from config.logging import RequestIdFilter

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def console() -> Iterator[io.StringIO]:
    """What the configured console handler (LOGGING in settings) writes, while the test
    runs: the real handler with its real filter and format, pointed at a buffer."""
    handlers = [
        h
        for h in logging.getLogger().handlers
        if any(isinstance(f, RequestIdFilter) for f in h.filters)
    ]
    assert handlers, "the root logger has no handler that adds the request id"
    buffer = io.StringIO()
    previous = [h.setStream(buffer) for h in handlers]  # type: ignore[attr-defined]
    yield buffer
    for handler, stream in zip(handlers, previous, strict=True):
        handler.setStream(stream)  # type: ignore[attr-defined]


def test_a_request_id_sent_by_the_client_is_echoed():
    response = Client().get("/api/health/", HTTP_X_REQUEST_ID="lb-7f3a9c01.req-42")
    assert response["X-Request-ID"] == "lb-7f3a9c01.req-42"


def test_a_request_without_an_id_gets_a_fresh_one():
    first = Client().get("/api/health/")["X-Request-ID"]
    second = Client().get("/api/health/")["X-Request-ID"]
    assert len(first) == 32 and int(first, 16) >= 0
    assert first != second


@pytest.mark.parametrize(
    "sent",
    ["", "has space", "semi;colon", "x" * 129, "new\nline", 'quote"s', "é"],
)
def test_an_unreasonable_request_id_is_replaced(sent):
    response = Client().get("/api/health/", HTTP_X_REQUEST_ID=sent)
    echoed = response["X-Request-ID"]
    assert echoed != sent
    assert len(echoed) == 32 and int(echoed, 16) >= 0


def test_the_log_lines_of_a_request_carry_its_id(console):
    # A JSON 404 under /api/: Django logs "Not Found" for it (django.request).
    response = Client().get("/api/no-such-thing/", HTTP_X_REQUEST_ID="trace-404-abc")
    assert response.status_code == 404
    assert response["X-Request-ID"] == "trace-404-abc"
    lines = [line for line in console.getvalue().splitlines() if "no-such-thing" in line]
    assert lines, console.getvalue()
    assert all("trace-404-abc" in line for line in lines), lines


def test_a_log_line_outside_any_request_has_no_request_id(console):
    Client().get("/api/health/", HTTP_X_REQUEST_ID="finished-request")
    logging.getLogger("ffkv.test").warning("between requests")
    (line,) = [x for x in console.getvalue().splitlines() if "between requests" in x]
    assert "finished-request" not in line


def test_log_format_json_writes_one_json_object_per_line_with_the_request_id():
    # A fresh interpreter: LOGGING is read from the environment when settings load.
    code = (
        "import django; django.setup();"
        "from django.test import Client;"
        "Client().get('/api/no-such-thing/', HTTP_X_REQUEST_ID='json-trace-1')"
    )
    env = {**os.environ, "LOG_FORMAT": "json", "DJANGO_SETTINGS_MODULE": "config.settings_test"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stderr.splitlines() if line.strip()]
    (not_found,) = [r for r in records if "no-such-thing" in r["message"]]
    assert not_found["request_id"] == "json-trace-1"
    assert not_found["level"] == "WARNING"
    assert not_found["logger"] == "django.request"
    assert not_found["time"].endswith("Z")


def test_a_bad_log_format_fails_loudly_with_the_variables_name():
    env = {**os.environ, "LOG_FORMAT": "xml", "DJANGO_SETTINGS_MODULE": "config.settings"}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    assert "LOG_FORMAT must be" in result.stderr
