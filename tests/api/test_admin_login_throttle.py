"""The Django admin's sign-in form counts attempts like the API's sign-in:
per client address and per username, in the same cache and at the same rates (the test
overlay: 5 a minute each)."""

from __future__ import annotations

import pytest
from django.test import Client

from config.views import ADMIN_LOGIN_THROTTLED
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

ADMIN_LOGIN = "/admin/login/?next=/admin/"


def _post(client: Client, username: str, password: str, **extra):
    return client.post(ADMIN_LOGIN, {"username": username, "password": password}, **extra)


def _signed_in(client: Client) -> bool:
    return client.get("/admin/").status_code == 200


def test_the_admin_signs_in_with_the_right_password(carol):
    client = Client()
    assert client.get(ADMIN_LOGIN).status_code == 200
    response = _post(client, "carol", PASSWORD)
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
    assert _signed_in(client)


def test_after_thirty_wrong_passwords_the_right_one_is_refused(carol):
    client = Client()
    statuses = [_post(client, "carol", f"guess {i}").status_code for i in range(30)]
    # Wrong passwords re-show the form (200) until the count runs out.
    assert statuses[:5] == [200] * 5
    assert statuses[5:] == [429] * 25
    response = _post(client, "carol", PASSWORD)
    assert response.status_code == 429
    assert ADMIN_LOGIN_THROTTLED.split("{", 1)[0] in response.content.decode()
    assert int(response["Retry-After"]) > 0
    assert not _signed_in(client)


def test_a_refused_attempt_shows_the_login_form_with_the_reason(carol):
    client = Client()
    for _ in range(5):
        _post(client, "carol", "nope")
    response = _post(client, "carol", PASSWORD)
    assert response.status_code == 429
    page = response.content.decode()
    assert 'name="password"' in page
    assert 'class="errornote"' in page
    assert "Too many sign-in attempts" in page


def test_a_forged_x_forwarded_for_does_not_escape_the_admin_login_throttle(carol):
    # No proxy is trusted by default: the address is REMOTE_ADDR whatever the header
    # says. A new username each time keeps the per-username count out of the way.
    client = Client()
    statuses = [
        _post(client, f"user{i}", "nope", HTTP_X_FORWARDED_FOR=f"10.0.0.{i}").status_code
        for i in range(8)
    ]
    assert statuses == [200] * 5 + [429] * 3
    response = _post(client, "carol", PASSWORD, HTTP_X_FORWARDED_FOR="10.9.9.9")
    assert response.status_code == 429
    assert not _signed_in(client)


def test_one_username_is_throttled_at_the_admin_login_across_addresses(carol, alice):
    client = Client()
    statuses = [
        _post(client, "carol", "nope", REMOTE_ADDR=f"10.0.1.{i}").status_code for i in range(7)
    ]
    assert statuses == [200] * 5 + [429] * 2
    # Case and surrounding spaces do not make it another account's count.
    assert _post(client, " CAROL ", PASSWORD, REMOTE_ADDR="10.0.1.99").status_code == 429
    assert not _signed_in(client)
    # Another account from a fresh address is not locked out by carol's count.
    other = Client()
    assert _post(other, "alice", PASSWORD, REMOTE_ADDR="10.0.2.1").status_code == 200


def test_the_api_and_the_admin_sign_in_share_one_count(carol, api_client):
    for _ in range(5):
        api_client.post(
            "/api/auth/login/", {"username": "carol", "password": "nope"}, format="json"
        )
    client = Client()
    assert _post(client, "carol", PASSWORD, REMOTE_ADDR="10.0.3.1").status_code == 429
    assert not _signed_in(client)


def test_viewing_the_admin_login_form_does_not_count(carol):
    client = Client()
    for _ in range(10):
        assert client.get(ADMIN_LOGIN).status_code == 200
    assert _post(client, "carol", PASSWORD).status_code == 302
