"""Who may call the review API: every endpoint × {anonymous, no role, annotator, curator
(the ``curator`` group, not staff), admin}; and no annotator answer carries gold.

The world: a study whose key alice and bob annotated (submitted), with a draft gold of a
pattern adopted from alice's; a second key with no gold yet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from annotate.models import GoldAnnotation, GoldPattern, Key, KeyFlag, Study
from annotate.permissions import CURATOR_GROUP
from annotate.services.gold import gold_pattern_create, gold_update
from tests.conftest import client_for
from tests.factories import annotate_key, assigned_batch

pytestmark = pytest.mark.django_db


@dataclass
class World:
    study: Study
    key: Key  # with a draft gold
    fresh_key: Key  # no gold
    gold: GoldAnnotation
    gold_pattern: GoldPattern


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    path: Callable[[World], str]
    body: Callable[[World], dict] | None
    ok: int

    def __str__(self) -> str:
        return self.name


@pytest.fixture
def world(alice, bob, carol) -> World:
    batch, (key, fresh_key) = assigned_batch([alice, bob], n_keys=2)
    source = annotate_key(key, alice, [("semantic", [1, 2, 3])]).patterns.get()
    annotate_key(key, bob, [("shallow", [1, 2, 3])])
    annotate_key(fresh_key, alice)
    annotate_key(fresh_key, bob)
    KeyFlag.objects.create(key=key, annotator=bob, reason="unclear")
    result = gold_pattern_create(
        key=key,
        actor=carol,
        version=0,
        description="gold secret",
        kind="semantic",
        prefixes=list(key.prefixes.order_by("rank")[:3]),
        source_pattern=source,
    )
    gold = gold_update(key=key, actor=carol, version=result.gold.version, note="gold note")
    return World(
        study=batch.study,
        key=key,
        fresh_key=fresh_key,
        gold=gold,
        gold_pattern=result.pattern,
    )


def _gold_url(w: World) -> str:
    return f"/api/review/keys/{w.key.pk}/gold/"


REVIEW = [
    Endpoint("review studies", "get", lambda w: "/api/review/studies/", None, 200),
    Endpoint(
        "review queue", "get", lambda w: f"/api/review/studies/{w.study.pk}/queue/", None, 200
    ),
    Endpoint("review key", "get", lambda w: f"/api/review/keys/{w.key.pk}/", None, 200),
    Endpoint(
        "gold update",
        "patch",
        _gold_url,
        lambda w: {"version": w.gold.version, "note": "changed"},
        200,
    ),
    Endpoint(
        "gold pattern create",
        "post",
        lambda w: f"/api/review/keys/{w.fresh_key.pk}/gold/patterns/",
        lambda w: {
            "version": 0,
            "client_id": "00000000-0000-4000-8000-000000000001",
            "description": "d",
            "kind": "shallow",
            "prefix_ranks": [1, 2, 3],
        },
        201,
    ),
    Endpoint(
        "gold pattern update",
        "patch",
        lambda w: _gold_url(w) + f"patterns/{w.gold_pattern.pk}/",
        lambda w: {"version": w.gold.version, "kind": "shallow"},
        200,
    ),
    Endpoint(
        "gold pattern delete",
        "delete",
        lambda w: _gold_url(w) + f"patterns/{w.gold_pattern.pk}/?version={w.gold.version}",
        None,
        200,
    ),
    Endpoint(
        "gold submit", "post", lambda w: _gold_url(w) + "submit/", lambda w: {"version": 2}, 200
    ),
    Endpoint(
        "gold reopen", "post", lambda w: _gold_url(w) + "reopen/", lambda w: {"version": 2}, 200
    ),
]


def _call(client: APIClient, endpoint: Endpoint, world: World):
    method = getattr(client, endpoint.method)
    path = endpoint.path(world)
    if endpoint.body is None:
        return method(path)
    return method(path, endpoint.body(world), format="json")


def test_every_review_route_is_in_the_matrix():
    from django.urls import get_resolver

    routes = {
        str(p.pattern) for p in get_resolver("annotate.urls").url_patterns if "review/" in str(p)
    }
    assert len(routes) == 8
    # Each has at least one endpoint above (gold patterns: create, and update + delete).
    assert len({(e.method, e.name) for e in REVIEW}) == len(REVIEW) == 9


@pytest.mark.parametrize("endpoint", REVIEW, ids=str)
@pytest.mark.parametrize("who", ["cora", "carol"])
def test_curators_and_admins_may_call_every_review_endpoint(request, world, endpoint, who):
    client = client_for(request.getfixturevalue(who))
    response = _call(client, endpoint, world)
    assert response.status_code == endpoint.ok, response.content


@pytest.mark.parametrize("endpoint", REVIEW, ids=str)
@pytest.mark.parametrize("who", ["anonymous", "alice", "mallory"])
def test_no_one_else_may_call_any_review_endpoint(request, world, endpoint, who):
    client = APIClient() if who == "anonymous" else client_for(request.getfixturevalue(who))
    before = (
        GoldAnnotation.objects.values_list("version", "note", "status").order_by("pk").first(),
        GoldPattern.objects.count(),
    )
    response = _call(client, endpoint, world)
    assert response.status_code == 403, response.content
    body = response.json()
    expected = "not_authenticated" if who == "anonymous" else "permission_denied"
    assert body["code"] == expected
    assert "gold secret" not in response.content.decode()
    after = (
        GoldAnnotation.objects.values_list("version", "note", "status").order_by("pk").first(),
        GoldPattern.objects.count(),
    )
    assert before == after


def test_a_curator_is_not_an_admin(world, cora):
    client = client_for(cora)
    response = client.patch(
        f"/api/admin/studies/{world.study.pk}/", {"check_rate": 0.5}, format="json"
    )
    assert response.status_code == 403
    assert client.get("/api/admin/studies/").status_code == 403
    world.study.refresh_from_db()
    assert world.study.check_rate == 0.0


def test_an_annotator_who_curates_sees_review_and_their_own_work(world, alice):
    # A person may hold both roles: the review API follows the curator role.
    alice.groups.add(Group.objects.get_or_create(name=CURATOR_GROUP)[0])
    client = client_for(alice)
    assert client.get(f"/api/review/keys/{world.key.pk}/").status_code == 200


def test_no_annotator_answer_carries_gold(world, alice):
    """The annotator's key detail, annotation, next key and lists say nothing of gold."""
    client = client_for(alice)
    answers = [
        client.get(f"/api/keys/{world.key.pk}/"),
        client.get(f"/api/keys/{world.key.pk}/annotation/"),
        client.get("/api/next-key/"),
        client.get("/api/assignments/"),
        client.get(f"/api/assignments/{alice.assignments.get().pk}/keys/"),
        client.get("/api/auth/me/"),
    ]
    for response in answers:
        assert response.status_code in (200, 204), response.content
        text = response.content.decode()
        assert "gold" not in text.lower(), text
        assert "gold note" not in text
        assert "gold secret" not in text
    detail = answers[0].json()
    assert "gold" not in detail
    assert set(detail["annotation"]) == {
        "id",
        "key_id",
        "status",
        "note",
        "version",
        "submitted_at",
        "updated_at",
        "patterns",
        "labels",
        "active_seconds",
    }
