"""The per-username sign-in count is kept apart for the browsers where the account has
signed in before (known devices), so that a stranger who keeps hammering a name cannot
lock its owner out; guessing from the browsers that never signed in stays bounded.

The test overlay's rates: 5 a minute per address and 5 a minute per username count."""

from __future__ import annotations

import pytest
from django.core import signing
from django.test import Client
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from annotate.apis.auth import (
    KNOWN_DEVICE_COOKIE,
    KNOWN_DEVICE_SALT,
    known_device,
)
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

LOGIN = "/api/auth/login/"
ADMIN_LOGIN = "/admin/login/?next=/admin/"
HOME, ATTACKER = "10.0.0.2", "10.6.6.6"


def _login(client, username: str, password: str, address: str):
    return client.post(
        LOGIN, {"username": username, "password": password}, format="json", REMOTE_ADDR=address
    )


@pytest.fixture
def clock(monkeypatch):
    """The throttles' clock, moved by hand: no test waits on the wall clock."""
    now = [1_000_000.0]
    monkeypatch.setattr(SimpleRateThrottle, "timer", lambda self: now[0])
    return now


def _carols_browser(carol, clock) -> APIClient:
    browser = APIClient()
    assert _login(browser, "carol", PASSWORD, HOME).status_code == 200
    assert KNOWN_DEVICE_COOKIE in browser.cookies
    clock[0] += 120  # her own sign-in is out of every count
    return browser


def test_a_stranger_hammering_a_name_does_not_lock_its_owner_out(carol, clock):
    browser = _carols_browser(carol, clock)
    attacker = APIClient()
    statuses = [_login(attacker, "carol", f"guess {i}", ATTACKER).status_code for i in range(8)]
    assert statuses == [400] * 5 + [429] * 3

    # carol, from her own browser at home, signs in while the stranger is refused.
    assert _login(browser, "carol", PASSWORD, HOME).status_code == 200
    assert _login(attacker, "carol", PASSWORD, ATTACKER).status_code == 429
    # A browser that never signed in to carol is refused, from any address.
    assert _login(APIClient(), "carol", PASSWORD, "10.0.0.77").status_code == 429


def test_guessing_from_many_addresses_stays_bounded(carol, clock):
    _carols_browser(carol, clock)
    statuses = [
        _login(APIClient(), "carol", f"guess {i}", f"10.1.{i}.1").status_code for i in range(12)
    ]
    assert statuses == [400] * 5 + [429] * 7
    clock[0] += 61  # a minute later the count has run out
    assert _login(APIClient(), "carol", PASSWORD, "10.1.99.1").status_code == 200


def test_a_known_browser_has_a_count_of_its_own(carol, clock):
    browser = _carols_browser(carol, clock)
    statuses = [_login(browser, "carol", f"typo {i}", f"10.2.{i}.1").status_code for i in range(7)]
    assert statuses == [400] * 5 + [429] * 2
    # ... which does not spend the count of the browsers that are not known.
    assert _login(APIClient(), "carol", PASSWORD, "10.3.0.1").status_code == 200


def test_a_cookie_counts_only_for_the_accounts_that_signed_in_with_it(carol, alice, clock):
    browser = _carols_browser(carol, clock)
    # The browser is known to carol, not to alice: alice's name has one count there.
    for i in range(5):
        _login(APIClient(), "alice", f"guess {i}", f"10.4.{i}.1")
    assert _login(browser, "alice", PASSWORD, "10.4.9.1").status_code == 429


@pytest.mark.parametrize(
    "cookie",
    [
        "forged",
        signing.dumps({"d": "x", "u": ["0" * 32]}, salt="another salt"),
        signing.dumps(["not", "a", "dict"], salt=KNOWN_DEVICE_SALT),
        "x" * 5000,
    ],
    ids=["garbage", "signed for something else", "wrong shape", "too long"],
)
def test_a_forged_cookie_is_a_browser_never_seen(carol, clock, cookie):
    for i in range(5):
        _login(APIClient(), "carol", f"guess {i}", f"10.5.{i}.1")
    forger = APIClient()
    forger.cookies[KNOWN_DEVICE_COOKIE] = cookie
    assert _login(forger, "carol", PASSWORD, "10.5.9.1").status_code == 429


def test_the_cookie_is_signed_http_only_and_names_no_account_in_clear(carol, clock):
    browser = _carols_browser(carol, clock)
    morsel = browser.cookies[KNOWN_DEVICE_COOKIE]
    assert morsel["httponly"] and morsel["samesite"] == "Lax"
    assert int(morsel["max-age"]) > 30 * 24 * 3600
    assert "carol" not in morsel.value
    request = type("R", (), {"COOKIES": {KNOWN_DEVICE_COOKIE: morsel.value}})()
    device = known_device(request)
    assert device is not None and len(device.accounts) == 1


def test_the_admin_sign_in_knows_the_browsers_too(carol, clock):
    browser = Client()
    response = browser.post(
        ADMIN_LOGIN, {"username": "carol", "password": PASSWORD}, REMOTE_ADDR=HOME
    )
    assert response.status_code == 302
    assert KNOWN_DEVICE_COOKIE in browser.cookies
    known = browser.cookies[KNOWN_DEVICE_COOKIE].value
    browser.logout()  # the test client's logout forgets every cookie: keep this one
    browser.cookies[KNOWN_DEVICE_COOKIE] = known
    clock[0] += 120
    attacker = Client()
    statuses = [
        attacker.post(
            ADMIN_LOGIN, {"username": "carol", "password": f"guess {i}"}, REMOTE_ADDR=ATTACKER
        ).status_code
        for i in range(7)
    ]
    assert statuses == [200] * 5 + [429] * 2
    again = browser.post(ADMIN_LOGIN, {"username": "carol", "password": PASSWORD}, REMOTE_ADDR=HOME)
    assert again.status_code == 302
    # The API's sign-in knows the browser the admin's sign-in made known, and back.
    api = APIClient()
    api.cookies[KNOWN_DEVICE_COOKIE] = browser.cookies[KNOWN_DEVICE_COOKIE].value
    assert _login(api, "carol", PASSWORD, HOME).status_code == 200
