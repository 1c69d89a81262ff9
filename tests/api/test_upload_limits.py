"""A body over the limit is a JSON 413 naming the limit, never Django's HTML page: the
whole body is capped by FFKV_MAX_UPLOAD_MB, and form or JSON data outside files by
Django's DATA_UPLOAD_MAX_MEMORY_SIZE."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotate.api_errors import body_too_large, data_too_large
from tests.conftest import client_for
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
MiB = 1024 * 1024


def test_a_json_body_over_the_data_limit_is_a_json_413(carol, settings):
    study = StudyFactory()
    body = json.dumps({"name": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})
    response = client_for(carol).patch(
        f"/api/admin/studies/{study.pk}/", data=body, content_type="application/json"
    )
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "detail": data_too_large(settings.DATA_UPLOAD_MAX_MEMORY_SIZE),
        "code": "data_too_large",
    }
    study.refresh_from_db()
    assert study.name != json.loads(body)["name"]


def test_an_anonymous_json_body_over_the_data_limit_is_a_json_413(settings):
    body = json.dumps({"username": "a", "password": "x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE})
    response = Client().post("/api/auth/login/", data=body, content_type="application/json")
    assert response.status_code == 413
    assert response.json() == {
        "detail": data_too_large(settings.DATA_UPLOAD_MAX_MEMORY_SIZE),
        "code": "data_too_large",
    }


def test_an_import_file_over_the_upload_limit_is_a_json_413(carol, settings):
    settings.FFKV_MAX_UPLOAD_BYTES = 1 * MiB
    upload = SimpleUploadedFile("study.jsonl", b"{}\n" * (MiB // 3 + 10))
    response = client_for(carol).post("/api/admin/imports/", {"file": upload})
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": body_too_large(1 * MiB), "code": "body_too_large"}


def test_a_form_field_over_the_data_limit_in_an_import_is_a_json_413(carol, settings):
    upload = SimpleUploadedFile("study.jsonl", b"{}\n")
    name = "n" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
    response = client_for(carol).post("/api/admin/imports/", {"file": upload, "study_name": name})
    assert response.status_code == 413
    assert response.json() == {
        "detail": data_too_large(settings.DATA_UPLOAD_MAX_MEMORY_SIZE),
        "code": "data_too_large",
    }


def test_a_file_under_the_upload_limit_is_not_held_to_the_data_limit(carol, settings):
    # Files are not form data: a 3 MB import passes the size checks and reaches the
    # importer, which refuses its content with the documented 400.
    size = settings.DATA_UPLOAD_MAX_MEMORY_SIZE + MiB
    upload = SimpleUploadedFile("study.jsonl", b"x" * size)
    response = client_for(carol).post("/api/admin/imports/", {"file": upload})
    assert response.status_code == 400
    assert "errors" in response.json()


def test_an_admin_form_over_the_data_limit_is_a_413_not_an_html_page(settings):
    response = Client().post(
        "/admin/login/",
        {"username": "a", "password": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)},
    )
    assert response.status_code == 413
    assert response.json() == {
        "detail": data_too_large(settings.DATA_UPLOAD_MAX_MEMORY_SIZE),
        "code": "data_too_large",
    }


def _max_upload(value: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "FFKV_MAX_UPLOAD_MB"}
    if value is not None:
        env["FFKV_MAX_UPLOAD_MB"] = value
    code = "import config.settings as s; print(s.FFKV_MAX_UPLOAD_BYTES)"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )


def test_the_upload_limit_comes_from_the_environment():
    assert _max_upload(None).stdout.strip() == str(100 * MiB)
    assert _max_upload("7").stdout.strip() == str(7 * MiB)
    for bad in ("0", "-3", "lots"):
        refused = _max_upload(bad)
        assert refused.returncode != 0
        assert "FFKV_MAX_UPLOAD_MB must be" in refused.stderr
