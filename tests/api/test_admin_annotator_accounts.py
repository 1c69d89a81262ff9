"""Annotator accounts made in the SPA: create, invite by a one-time link, reset."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from annotate.permissions import user_is_annotator
from annotate.services import PASSWORD_LINK_INVALID, USERNAME_TAKEN, password_link_tokens
from tests.conftest import client_for
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a long enough passphrase 42"
LINK = re.compile(r"^/set-password#(?P<uid>[\w-]+)/(?P<token>[\w-]+)$")


def _link(body) -> dict[str, str]:
    match = LINK.match(body["link"]["path"])
    assert match, body
    return match.groupdict()


def _create(client, username: str = "dave"):
    return client.post("/api/admin/annotators/", {"username": username}, format="json")


def test_carol_creates_an_annotator_who_sets_a_password_with_the_link_and_signs_in(
    carol, api_client
):
    response = _create(client_for(carol))
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["annotator"]["username"] == "dave" and body["annotator"]["is_active"]
    dave = User.objects.get(username="dave")
    assert user_is_annotator(dave) and not dave.has_usable_password()
    link = _link(body)

    check = api_client.post("/api/auth/password-link/", link, format="json")
    assert check.json() == {"username": "dave"}
    done = api_client.post(
        "/api/auth/set-password/", {**link, "password": NEW_PASSWORD}, format="json"
    )
    assert done.status_code == 200, done.content
    assert done.json()["username"] == "dave" and done.json()["is_annotator"]
    assert api_client.get("/api/assignments/").status_code == 200  # signed in

    again = api_client.post(
        "/api/auth/set-password/", {**link, "password": "another one 12345"}, format="json"
    )
    assert again.status_code == 400
    assert again.json()["detail"] == PASSWORD_LINK_INVALID
    dave.refresh_from_db()
    assert dave.check_password(NEW_PASSWORD)


def test_a_link_expires(carol, api_client, monkeypatch, settings):
    link = _link(_create(client_for(carol)).json())
    later = password_link_tokens._now() + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT + 1)
    monkeypatch.setattr(password_link_tokens, "_now", lambda: later)
    response = api_client.post("/api/auth/password-link/", link, format="json")
    assert response.status_code == 400
    assert response.json()["detail"] == PASSWORD_LINK_INVALID


def test_the_link_says_when_it_expires(carol, settings):
    before = timezone.now()
    body = _create(client_for(carol)).json()
    expires = timezone.datetime.fromisoformat(body["link"]["expires_at"])
    assert before + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT) <= expires


def test_a_reset_voids_the_old_password_the_sessions_and_older_links(carol, alice, api_client):
    client = client_for(carol)
    alices = client_for(alice)
    first = _link(client.post(f"/api/admin/annotators/{alice.pk}/password-link/").json())
    response = client.post(f"/api/admin/annotators/{alice.pk}/password-link/")
    assert response.status_code == 200, response.content
    second = _link(response.json())

    alice.refresh_from_db()
    assert not alice.check_password(PASSWORD)
    assert alices.get("/api/assignments/").status_code == 403  # her session ended
    assert api_client.post("/api/auth/password-link/", first, format="json").status_code == 400
    assert api_client.post("/api/auth/password-link/", second, format="json").json() == {
        "username": "alice"
    }


def test_a_weak_password_is_refused_with_the_reason(carol, api_client):
    link = _link(_create(client_for(carol)).json())
    response = api_client.post(
        "/api/auth/set-password/", {**link, "password": "dave"}, format="json"
    )
    assert response.status_code == 400
    assert "too short" in response.json()["detail"]


@pytest.mark.parametrize(
    ("username", "expected"),
    [
        ("alice", USERNAME_TAKEN.format(username="alice")),
        ("ALICE", USERNAME_TAKEN.format(username="ALICE")),
        ("has space", None),
        ("", None),
        ("x" * 151, None),
    ],
)
def test_a_bad_or_taken_username_is_a_400(carol, alice, username, expected):
    response = _create(client_for(carol), username)
    assert response.status_code == 400, response.content
    if expected is not None:
        assert response.json()["detail"] == expected
    assert User.objects.count() == 2


@pytest.mark.parametrize(
    "link",
    [
        {"uid": "MQ", "token": "nope"},
        {"uid": "!!", "token": "x"},
        {"uid": "OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk", "token": "x"},
    ],
)
def test_a_forged_link_is_refused(link, api_client):
    response = api_client.post("/api/auth/password-link/", link, format="json")
    assert response.status_code == 400
    assert response.json()["detail"] == PASSWORD_LINK_INVALID


def test_the_link_pages_are_throttled(api_client):
    answers = [
        api_client.post("/api/auth/password-link/", {"uid": "MQ", "token": "x"}, format="json")
        for _ in range(6)
    ]
    assert [a.status_code for a in answers] == [400] * 5 + [429]


def test_a_deactivated_annotators_link_stops_working(carol, alice, bob, api_client):
    client = client_for(carol)
    link = _link(client.post(f"/api/admin/annotators/{alice.pk}/password-link/").json())
    deactivated = client.post(
        f"/api/admin/annotators/{alice.pk}/deactivate/", {"reassign_to": "bob"}, format="json"
    )
    assert deactivated.status_code == 200
    assert api_client.post("/api/auth/password-link/", link, format="json").status_code == 400
    refused = client.post(f"/api/admin/annotators/{alice.pk}/password-link/")
    assert refused.status_code == 400


def test_only_staff_create_annotators_or_links(alice, bob, mallory):
    for user in (alice, mallory):
        client = client_for(user)
        assert _create(client).status_code == 403
        assert client.post(f"/api/admin/annotators/{bob.pk}/password-link/").status_code == 403
    assert not User.objects.filter(username="dave").exists()


def test_links_are_only_for_annotators(carol):
    response = client_for(carol).post(f"/api/admin/annotators/{carol.pk}/password-link/")
    assert response.status_code == 404
