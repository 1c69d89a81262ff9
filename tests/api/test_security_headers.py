"""Every response carries the Content-Security-Policy (docs/reliability.md): the API, the
SPA's index, static files, the Django admin, error pages."""

from __future__ import annotations

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client, override_settings
from django.urls import path

pytestmark = pytest.mark.django_db

POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)


def _boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a view that fails")


# A URLconf for the error-page test only: the project has no view that fails on purpose.
urlpatterns = [path("boom/", _boom)]


@pytest.mark.parametrize(
    "url",
    [
        "/api/health/",
        "/api/assignments/",  # 403, signed out
        "/api/nope",  # the JSON 404
        "/login",  # the SPA's index (or its 503 when the frontend is not built)
        "/admin/login/",
        "/api/docs/",
        "/static/admin/css/base.css",
    ],
)
def test_every_kind_of_response_carries_the_policy(url):
    response = Client().get(url)
    assert response["Content-Security-Policy"] == POLICY, (url, response.status_code)


def test_a_csrf_failure_carries_the_policy(alice):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/admin/login/", {"username": "alice", "password": "x"})
    assert response.status_code == 403
    assert response["Content-Security-Policy"] == POLICY


@override_settings(ROOT_URLCONF=__name__)
def test_a_server_error_page_carries_the_policy():
    response = Client(raise_request_exception=False).get("/boom/")
    assert response.status_code == 500
    assert response["Content-Security-Policy"] == POLICY


def test_a_request_over_the_upload_limit_carries_the_policy(settings):
    settings.FFKV_MAX_UPLOAD_BYTES = 1024
    response = Client().post("/api/auth/login/", data="x" * 2048, content_type="application/json")
    assert response.status_code == 413
    assert response["Content-Security-Policy"] == POLICY


def test_the_spa_index_has_no_inline_script_or_style(settings):
    if not (settings.FRONTEND_DIST / ".vite" / "manifest.json").is_file():
        pytest.skip("needs the built frontend (make frontend)")
    page = Client().get("/login").content.decode()
    assert "<style" not in page
    assert " style=" not in page
    # The bootstrap data is a JSON data block, which the policy does not run.
    scripts = page.split("<script")[1:]
    assert scripts
    for script in scripts:
        head = script.split(">", 1)[0]
        assert "src=" in head or 'type="application/json"' in head, head
