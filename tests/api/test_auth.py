import os
import subprocess
import sys

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from annotate.apis import INVALID_CREDENTIALS
from annotate.parsers import NESTED_TOO_DEEPLY
from annotate.permissions import ANNOTATOR_GROUP
from config.views import API_NOT_FOUND
from tests.errors import field_errors
from tests.factories import PASSWORD, StudyFactory

pytestmark = pytest.mark.django_db


def test_login_with_the_right_password_starts_a_session(alice):
    client = APIClient(enforce_csrf_checks=True)
    client.get("/login")  # the SPA's index sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    response = client.post(
        "/api/auth/login/",
        {"username": "alice", "password": PASSWORD},
        format="json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert response.status_code == 200, response.content
    assert response.json()["username"] == "alice"
    assert response.json()["is_annotator"] is True
    assert client.get("/api/auth/me/").json()["username"] == "alice"


def test_login_without_a_csrf_token_is_refused(alice):
    client = APIClient(enforce_csrf_checks=True)
    response = client.post(
        "/api/auth/login/", {"username": "alice", "password": PASSWORD}, format="json"
    )
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


def test_wrong_password_gets_a_message_and_no_session(alice, api_client):
    response = api_client.post(
        "/api/auth/login/", {"username": "alice", "password": "nope"}, format="json"
    )
    assert response.status_code == 400
    assert response.json() == {"detail": INVALID_CREDENTIALS, "code": "invalid_credentials"}
    assert api_client.get("/api/auth/me/").status_code == 403


def test_login_with_a_malformed_body_is_a_400_naming_the_field(api_client):
    response = api_client.post("/api/auth/login/", {"username": "alice"}, format="json")
    assert response.status_code == 400
    assert "password" in field_errors(response)


def test_login_with_invalid_json_is_a_400(api_client):
    response = api_client.post(
        "/api/auth/login/", data="{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert "JSON" in response.json()["detail"]


def test_login_is_throttled(alice, api_client):
    statuses = [
        api_client.post(
            "/api/auth/login/", {"username": "alice", "password": "nope"}, format="json"
        ).status_code
        for _ in range(6)
    ]
    assert statuses[:5] == [400] * 5
    assert statuses[5] == 429
    assert (
        "throttled"
        in api_client.post(
            "/api/auth/login/", {"username": "alice", "password": PASSWORD}, format="json"
        )
        .json()["detail"]
        .lower()
    )


def test_inactive_user_cannot_log_in(alice, api_client):
    alice.is_active = False
    alice.save()
    response = api_client.post(
        "/api/auth/login/", {"username": "alice", "password": PASSWORD}, format="json"
    )
    assert response.status_code == 400


def test_logout_ends_the_session(alice):
    client = APIClient()
    client.force_login(alice)
    assert client.post("/api/auth/logout/").status_code == 204
    assert client.get("/api/auth/me/").status_code == 403


def test_the_annotator_role_is_read_again_on_every_request(alice):
    # The session's user is loaded with its role in one query (RoleModelBackend); a role
    # taken away or an account deactivated counts from the next request on.
    client = APIClient()
    client.force_login(alice)
    assert client.get("/api/assignments/").status_code == 200
    assert client.get("/api/auth/me/").json()["is_annotator"] is True
    alice.groups.clear()
    assert client.get("/api/assignments/").status_code == 403
    assert client.get("/api/auth/me/").json()["is_annotator"] is False
    alice.groups.add(Group.objects.get(name=ANNOTATOR_GROUP))
    assert client.get("/api/assignments/").status_code == 200
    alice.is_active = False
    alice.save()
    assert client.get("/api/assignments/").status_code == 403


def test_unauthenticated_api_call_is_json_403(api_client):
    response = api_client.get("/api/assignments/")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    assert "detail" in response.json()


@pytest.mark.parametrize("path", ["/api/nope", "/api/nope/deeper/", "/api/"])
def test_unknown_api_path_is_a_json_404_not_the_spa(api_client, path):
    response = api_client.get(path)
    assert response.status_code == 404
    assert response.json() == {"detail": API_NOT_FOUND, "code": "not_found"}


def test_schema_and_docs_are_served(api_client):
    schema = api_client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/assignments/" in schema.content
    assert api_client.get("/api/docs/").status_code == 200


def test_health_reports_the_database(api_client):
    assert api_client.get("/api/health/").json() == {"status": "ok"}


def _wrong_login(client: APIClient, username: str, **extra):
    return client.post(
        "/api/auth/login/", {"username": username, "password": "nope"}, format="json", **extra
    )


def test_a_forged_x_forwarded_for_does_not_escape_the_address_throttle(alice, api_client):
    # No proxy is trusted by default: the address is REMOTE_ADDR, whatever the header says.
    # A different username each time keeps the per-username throttle out of the way.
    statuses = [
        _wrong_login(api_client, f"user{i}", HTTP_X_FORWARDED_FOR=f"10.0.0.{i}").status_code
        for i in range(8)
    ]
    assert statuses[:5] == [400] * 5
    assert statuses[5:] == [429] * 3


def test_one_username_is_throttled_across_addresses(alice, bob, api_client):
    statuses = [
        _wrong_login(api_client, "alice", REMOTE_ADDR=f"10.0.1.{i}").status_code for i in range(7)
    ]
    assert statuses[:5] == [400] * 5
    assert statuses[5:] == [429] * 2
    # Case and surrounding spaces do not make it another account's count.
    assert _wrong_login(api_client, " ALICE ", REMOTE_ADDR="10.0.1.99").status_code == 429
    # bob is not locked out by alice's count.
    response = api_client.post(
        "/api/auth/login/",
        {"username": "bob", "password": PASSWORD},
        format="json",
        REMOTE_ADDR="10.0.2.1",
    )
    assert response.status_code == 200, response.content


def _num_proxies(value: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "FFKV_TRUSTED_PROXIES"}
    if value is not None:
        env["FFKV_TRUSTED_PROXIES"] = value
    code = "import config.settings as s; print(s.REST_FRAMEWORK['NUM_PROXIES'])"
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )


def test_the_number_of_trusted_proxies_comes_from_the_environment():
    # A fresh interpreter: the settings module reads the environment once, at import.
    assert _num_proxies(None).stdout.strip() == "0"
    assert _num_proxies("1").stdout.strip() == "1"
    refused = _num_proxies("-1")
    assert refused.returncode != 0
    assert "FFKV_TRUSTED_PROXIES must be" in refused.stderr


DEEP_JSON = "[" * 100_000


def test_a_deeply_nested_body_to_the_login_is_a_json_400(api_client):
    response = api_client.post("/api/auth/login/", data=DEEP_JSON, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"detail": NESTED_TOO_DEEPLY, "code": "nested_too_deeply"}


def test_a_deeply_nested_body_to_a_signed_in_endpoint_is_a_json_400(carol):
    study = StudyFactory()
    client = APIClient()
    client.force_login(carol)
    response = client.patch(
        f"/api/admin/studies/{study.pk}/", data=DEEP_JSON, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json() == {"detail": NESTED_TOO_DEEPLY, "code": "nested_too_deeply"}
