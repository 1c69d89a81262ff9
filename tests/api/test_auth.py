import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from annotate.apis import INVALID_CREDENTIALS
from annotate.permissions import ANNOTATOR_GROUP
from config.views import API_NOT_FOUND
from tests.factories import PASSWORD

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
    assert response.json() == {"detail": INVALID_CREDENTIALS}
    assert api_client.get("/api/auth/me/").status_code == 403


def test_login_with_a_malformed_body_is_a_400_naming_the_field(api_client):
    response = api_client.post("/api/auth/login/", {"username": "alice"}, format="json")
    assert response.status_code == 400
    assert "password" in response.json()


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
    assert response.json() == {"detail": API_NOT_FOUND}


def test_schema_and_docs_are_served(api_client):
    schema = api_client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/assignments/" in schema.content
    assert api_client.get("/api/docs/").status_code == 200


def test_health_reports_the_database(api_client):
    assert api_client.get("/api/health/").json() == {"status": "ok"}
