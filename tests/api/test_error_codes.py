"""Every API error carries a stable ``code`` beside its English ``detail``: the SPA
translates the code. The schema fuzz test checks it for every operation; these pin the
codes of the answers a person meets most."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from annotate.api_errors import ErrorCode
from tests.errors import field_errors
from tests.factories import PASSWORD, assigned_batch

pytestmark = pytest.mark.django_db


def test_a_wrong_password_is_invalid_credentials(alice, api_client):
    response = api_client.post(
        "/api/auth/login/", {"username": "alice", "password": "nope"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == ErrorCode.INVALID_CREDENTIALS


def test_a_missing_field_is_invalid_with_each_field_and_its_own_code(api_client):
    response = api_client.post("/api/auth/login/", {"username": "alice"}, format="json")
    assert response.status_code == 400
    assert field_errors(response) == {"password": ["This field is required."]}
    body = response.json()
    assert body["detail"] == "password: This field is required."
    assert body["fields"] == {
        "password": [{"message": "This field is required.", "code": "required"}]
    }


def test_a_throttled_sign_in_says_how_long_to_wait(alice, api_client):
    for _ in range(5):
        api_client.post("/api/auth/login/", {"username": "alice", "password": "x"}, format="json")
    response = api_client.post(
        "/api/auth/login/", {"username": "alice", "password": PASSWORD}, format="json"
    )
    assert response.status_code == 429
    body = response.json()
    assert body["code"] == ErrorCode.THROTTLED
    assert isinstance(body["wait"], int) and body["wait"] >= 1
    assert body["wait"] == int(response["Retry-After"])


def test_a_signed_out_request_is_not_authenticated(api_client):
    response = api_client.get("/api/assignments/")
    assert response.status_code == 403
    assert response.json()["code"] == ErrorCode.NOT_AUTHENTICATED


def test_a_write_without_the_csrf_token_is_csrf_failed(alice):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post("/api/auth/logout/")
    assert response.status_code == 403
    assert response.json()["code"] == ErrorCode.CSRF_FAILED
    anonymous = APIClient(enforce_csrf_checks=True).post(
        "/api/auth/login/", {"username": "alice", "password": PASSWORD}, format="json"
    )
    assert anonymous.status_code == 403
    assert anonymous.json()["code"] == ErrorCode.CSRF_FAILED


def test_a_stale_write_is_a_conflict_with_its_code_and_the_current_state(alice, client_alice):
    _, keys = assigned_batch([alice], n_keys=1, n_prefixes=5)
    url = f"/api/keys/{keys[0].pk}/annotation/"
    version = client_alice.get(url).json()["version"]
    first = client_alice.put(url, {"note": "a", "version": version}, format="json")
    assert first.status_code == 200
    response = client_alice.put(url, {"note": "b", "version": version}, format="json")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == ErrorCode.STALE_VERSION
    assert body["current"]["note"] == "a"


def test_a_method_the_view_lacks_is_method_not_allowed(client_alice):
    response = client_alice.delete("/api/assignments/")
    assert response.status_code == 405
    assert response.json()["code"] == ErrorCode.METHOD_NOT_ALLOWED


@pytest.fixture
def client_alice(alice):
    client = APIClient()
    client.force_login(alice)
    return client
