"""Annotator accounts made in the SPA: create, invite by a one-time link, reset."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from annotate.permissions import ANNOTATOR_GROUP, user_is_annotator
from annotate.services.accounts import (
    PASSWORD_LINK_INVALID,
    USERNAME_TAKEN,
    password_link_tokens,
)
from tests.conftest import client_for
from tests.factories import PASSWORD, UserFactory

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


# --- accounts a staff member may manage -------------------------------------------------


@pytest.fixture
def sam(db):
    """Staff, not a superuser."""
    return UserFactory(username="sam", is_staff=True)


@pytest.fixture
def carol_annotates(carol):
    """carol, a superuser, also in the annotator group."""
    carol.groups.add(Group.objects.get_or_create(name=ANNOTATOR_GROUP)[0])
    return carol


@pytest.fixture
def stan(db):
    """Staff (not a superuser) and an annotator."""
    user = UserFactory(username="stan", is_staff=True)
    user.groups.add(Group.objects.get_or_create(name=ANNOTATOR_GROUP)[0])
    return user


def _names(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["username"] for row in response.json()]


def test_a_staff_member_cannot_take_over_a_superuser_who_annotates(
    sam, carol_annotates, alice, bob, api_client
):
    carol = carol_annotates
    carols = client_for(carol)
    assert carols.get("/api/admin/annotators/").status_code == 200
    sams = client_for(sam)

    assert "carol" not in _names(sams.get("/api/admin/annotators/"))
    link = sams.post(f"/api/admin/annotators/{carol.pk}/password-link/")
    assert link.status_code == 404, link.content
    assert link.json()["code"] == "not_found" and "link" not in link.json()
    deactivate = sams.post(
        f"/api/admin/annotators/{carol.pk}/deactivate/", {"reassign_to": "bob"}, format="json"
    )
    assert deactivate.status_code == 404
    # Handing someone's keys to carol, or giving her a batch, names an unknown user.
    handover = sams.post(
        f"/api/admin/annotators/{alice.pk}/deactivate/", {"reassign_to": "carol"}, format="json"
    )
    assert handover.status_code == 400
    assert handover.json()["fields"]["reassign_to"][0]["message"] == "There is no user 'carol'."

    carol.refresh_from_db()
    assert carol.is_active and carol.check_password(PASSWORD)
    assert carols.get("/api/admin/annotators/").status_code == 200  # her session stands
    assert (
        api_client.post(
            "/api/auth/login/", {"username": "carol", "password": PASSWORD}, format="json"
        ).status_code
        == 200
    )
    alice.refresh_from_db()
    assert alice.is_active


def test_staff_list_only_the_annotators_they_may_manage(sam, carol_annotates, stan, alice):
    assert _names(client_for(sam).get("/api/admin/annotators/")) == ["alice"]
    assert _names(client_for(carol_annotates).get("/api/admin/annotators/")) == [
        "alice",
        "carol",
        "stan",
    ]


def test_only_a_superuser_resets_or_deactivates_a_staff_annotator(sam, carol, stan, alice):
    sams = client_for(sam)
    assert sams.post(f"/api/admin/annotators/{stan.pk}/password-link/").status_code == 404
    assert sams.post(f"/api/admin/annotators/{alice.pk}/password-link/").status_code == 200
    stan.refresh_from_db()
    assert stan.check_password(PASSWORD)
    carols = client_for(carol)
    assert carols.post(f"/api/admin/annotators/{stan.pk}/password-link/").status_code == 200
    assert carols.post(f"/api/admin/annotators/{stan.pk}/deactivate/").status_code == 200


def test_the_services_refuse_a_staff_member_an_admins_account(sam, carol_annotates, stan, bob):
    from django.core.exceptions import PermissionDenied

    from annotate.services.accounts import password_link_create
    from annotate.services.batches import annotator_deactivate_and_reassign

    for account in (carol_annotates, stan):
        with pytest.raises(PermissionDenied):
            password_link_create(user=account, actor=sam)
        with pytest.raises(PermissionDenied):
            annotator_deactivate_and_reassign(annotator=account, reassign_to=bob, actor=sam)
        account.refresh_from_db()
        assert account.is_active and account.check_password(PASSWORD)


def test_a_staff_member_cannot_assign_a_batch_to_a_superuser(sam, carol_annotates, alice):
    from tests.factories import BatchFactory, KeyFactory

    key = KeyFactory()
    batch = BatchFactory(study=key.study, keys=[key])
    response = client_for(sam).post(
        f"/api/admin/batches/{batch.pk}/assignments/",
        {"annotators": ["alice", "carol"], "overlap": 1},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["detail"] == "annotators: There is no user 'carol'."
    assert not batch.assignments.exists()


@pytest.fixture
def sam_with_user_permissions(sam):
    from django.contrib.auth.models import Permission

    sam.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="auth",
            codename__in=["view_user", "change_user", "add_user", "delete_user"],
        )
    )
    return sam


def test_the_django_admin_lets_no_staff_member_change_a_superusers_password(
    sam_with_user_permissions, carol, alice
):
    from django.test import Client

    client = Client()
    client.force_login(sam_with_user_permissions)
    listing = client.get("/admin/auth/user/")
    assert listing.status_code == 200
    page = listing.content.decode()
    assert "alice" in page and "carol" not in page
    url = f"/admin/auth/user/{carol.pk}/password/"
    assert client.get(url).status_code in (403, 404)
    posted = client.post(
        url,
        {
            "password1": "taken over 12345",
            "password2": "taken over 12345",
            "usable_password": "true",
        },
    )
    assert posted.status_code in (403, 404)
    assert client.get(f"/admin/auth/user/{carol.pk}/change/").status_code in (302, 403, 404)
    carol.refresh_from_db()
    assert carol.check_password(PASSWORD)


def test_the_django_admin_lets_no_staff_member_make_a_superuser(sam_with_user_permissions, alice):
    from django.test import Client

    client = Client()
    client.force_login(sam_with_user_permissions)
    url = f"/admin/auth/user/{alice.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200
    response = client.post(
        url,
        {
            "username": "alice",
            "is_active": "on",
            "is_staff": "on",
            "is_superuser": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert response.status_code in (200, 302), response.content[:500]
    alice.refresh_from_db()
    assert not alice.is_staff and not alice.is_superuser
    # ... nor themselves: their own account is not theirs to change here.
    sam = sam_with_user_permissions
    assert client.get(f"/admin/auth/user/{sam.pk}/change/").status_code in (302, 403, 404)


# --- usernames: one normal form, no look-alikes -----------------------------------------


@pytest.mark.parametrize(
    ("username", "code"),
    [
        ("cаrol", "username_mixed_scripts"),  # a Cyrillic а among Latin letters
        ("ｃａｒｏｌ", "username_taken"),  # fullwidth: NFKC reads it as carol
        ("ＡＬＩＣＥ", "username_taken"),
        ("сагоl", "username_mixed_scripts"),  # Cyrillic с, а, г with Latin o, l
        ("ΑLICE", "username_mixed_scripts"),  # a Greek capital alpha
        ("саrоl", "username_mixed_scripts"),
        ("ѕесоnd", "username_mixed_scripts"),
        ("сое", "username_confusable"),  # wholly Cyrillic, and reads as "coe"
    ],
)
def test_a_look_alike_username_is_refused_with_its_code(carol, alice, username, code):
    from tests.factories import UserFactory as Users

    Users(username="coe")
    before = User.objects.count()
    response = _create(client_for(carol), username)
    assert response.status_code == 400, response.content
    assert response.json()["code"] == code
    assert User.objects.count() == before


@pytest.mark.parametrize("username", ["Иван", "张三", "Σοφία", "dave.o'", "bob2"])
def test_a_username_in_one_script_is_created(carol, alice, bob, username):
    response = _create(client_for(carol), username)
    if username == "dave.o'":  # the apostrophe: the validator's 400, not a look-alike
        assert response.json()["code"] == "invalid"
        return
    assert response.status_code == 201, response.content
    assert response.json()["annotator"]["username"] == username


def test_a_new_username_is_stored_in_nfkc(carol):
    response = _create(client_for(carol), "ｄａｖｅ")
    assert response.status_code == 201, response.content
    assert response.json()["annotator"]["username"] == "dave"
    assert User.objects.filter(username="dave").exists()


def test_sign_in_reads_the_typed_name_in_nfkc(alice, api_client):
    response = api_client.post(
        "/api/auth/login/", {"username": "ａｌｉｃｅ", "password": PASSWORD}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["username"] == "alice"


def test_the_django_admin_refuses_a_look_alike_username(carol, alice):
    from django.test import Client

    client = Client()
    client.force_login(carol)
    response = client.post(
        "/admin/auth/user/add/",
        {"username": "аlice", "usable_password": "false"},
    )
    assert response.status_code == 200  # the form again, with the error
    assert "mixes Latin, Cyrillic or Greek" in response.content.decode()
    cyrillic = client.post(
        "/admin/auth/user/add/", {"username": "аӏісе", "usable_password": "false"}
    )
    assert "can be mistaken for the existing account" in cyrillic.content.decode()
    assert User.objects.count() == 2
    created = client.post("/admin/auth/user/add/", {"username": "Иван", "usable_password": "false"})
    assert created.status_code == 302, created.content[:300]
    renamed = client.post(
        f"/admin/auth/user/{User.objects.get(username='Иван').pk}/change/",
        {
            "username": "carоl",
            "is_active": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        },
    )
    assert renamed.status_code == 200
    assert "mixes Latin, Cyrillic or Greek" in renamed.content.decode()
