"""Who may call what: every endpoint × every persona, and no IDOR between annotators.

alice is assigned ``alice_key``; bob is an annotator on another batch; ``free_key`` is
assigned to nobody; carol is the admin; mallory has an account and no role.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from rest_framework.test import APIClient

from annotate.models import Annotation, AnnotationEvent, Pattern
from annotate.services.annotations import annotation_get_or_create_for
from annotate.services.batches import assignment_create
from annotate.services.patterns import pattern_create
from tests.conftest import client_for
from tests.factories import BatchFactory, StudyFactory, assigned_batch, key_with_prefixes

pytestmark = pytest.mark.django_db


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    path: Callable[[World], str]
    body: Callable[[World], dict] | None
    ok: int  # the status when the right person calls it

    def __str__(self) -> str:
        return self.name


@dataclass
class World:
    alice_key: object
    alice_assignment: object
    alice_annotation: Annotation
    alice_pattern: Pattern
    free_key: object
    bob_key: object
    study: object
    batch: object
    fresh_batch: object


@pytest.fixture
def world(alice, bob, carol) -> World:
    study = StudyFactory()
    batch, (alice_key,) = assigned_batch([alice], study=study, name="alice's")
    _, (bob_key,) = assigned_batch([bob], study=study, name="bob's")
    free_key = key_with_prefixes(25, study=study)
    annotation = annotation_get_or_create_for(key=alice_key, annotator=alice)
    prefixes = list(alice_key.prefixes.all()[:3])
    result = pattern_create(
        annotation=annotation,
        actor=alice,
        description="alice's secret pattern",
        kind="shallow",
        prefixes=prefixes,
        version=annotation.version,
    )
    return World(
        alice_key=alice_key,
        alice_assignment=batch.assignments.get(),
        alice_annotation=result.annotation,
        alice_pattern=result.pattern,
        free_key=free_key,
        bob_key=bob_key,
        study=study,
        batch=batch,
        fresh_batch=BatchFactory(study=study, name="fresh", keys=[free_key]),
    )


def _key_endpoints(key_attr: str):
    """The annotator endpoints about one key, with a valid body for each."""

    def key(w):
        return getattr(w, key_attr).pk

    return [
        Endpoint("key detail", "get", lambda w: f"/api/keys/{key(w)}/", None, 200),
        Endpoint("annotation read", "get", lambda w: f"/api/keys/{key(w)}/annotation/", None, 200),
        Endpoint(
            "annotation save",
            "put",
            lambda w: f"/api/keys/{key(w)}/annotation/",
            lambda w: {"note": "n", "version": w.alice_annotation.version},
            200,
        ),
        Endpoint(
            "pattern create",
            "post",
            lambda w: f"/api/keys/{key(w)}/patterns/",
            lambda w: {
                "description": "d",
                "kind": "semantic",
                "prefix_ranks": [4, 5, 6],
                "version": w.alice_annotation.version,
            },
            201,
        ),
        Endpoint(
            "pattern update",
            "patch",
            lambda w: f"/api/keys/{key(w)}/patterns/{w.alice_pattern.pk}/",
            lambda w: {"kind": "semantic", "version": w.alice_annotation.version},
            200,
        ),
        Endpoint(
            "pattern delete",
            "delete",
            lambda w: (
                f"/api/keys/{key(w)}/patterns/{w.alice_pattern.pk}/"
                f"?version={w.alice_annotation.version}"
            ),
            None,
            200,
        ),
        Endpoint(
            "submit",
            "post",
            lambda w: f"/api/keys/{key(w)}/submit/",
            lambda w: {"version": w.alice_annotation.version},
            200,
        ),
        Endpoint(
            "reopen",
            "post",
            lambda w: f"/api/keys/{key(w)}/reopen/",
            lambda w: {"version": w.alice_annotation.version},
            200,
        ),
    ]


ANNOTATOR_LISTS = [
    Endpoint("assignment list", "get", lambda w: "/api/assignments/", None, 200),
    Endpoint(
        "assignment keys",
        "get",
        lambda w: f"/api/assignments/{w.alice_assignment.pk}/keys/",
        None,
        200,
    ),
    Endpoint("next key", "get", lambda w: "/api/next-key/", None, 200),
]
ALICE_KEY = _key_endpoints("alice_key")
ADMIN = [
    Endpoint("study list", "get", lambda w: "/api/admin/studies/", None, 200),
    Endpoint("study detail", "get", lambda w: f"/api/admin/studies/{w.study.pk}/", None, 200),
    Endpoint(
        "study update",
        "patch",
        lambda w: f"/api/admin/studies/{w.study.pk}/",
        lambda w: {"show_value_tokens": True},
        200,
    ),
    Endpoint("batch list", "get", lambda w: f"/api/admin/studies/{w.study.pk}/batches/", None, 200),
    Endpoint(
        "guideline versions",
        "get",
        lambda w: f"/api/admin/studies/{w.study.pk}/guidelines/",
        None,
        200,
    ),
    Endpoint(
        "guideline publish",
        "post",
        lambda w: f"/api/admin/studies/{w.study.pk}/guidelines/",
        lambda w: {"text": "# Rules"},
        201,
    ),
    Endpoint(
        "batch create",
        "post",
        lambda w: f"/api/admin/studies/{w.study.pk}/batches/",
        lambda w: {"name": "new", "mode": "layer", "layers": [1]},
        201,
    ),
    Endpoint(
        "assignment create",
        "post",
        lambda w: f"/api/admin/batches/{w.fresh_batch.pk}/assignments/",
        lambda w: {"annotators": ["alice", "bob"], "overlap": 2},
        201,
    ),
    Endpoint(
        "batch progress", "get", lambda w: f"/api/admin/batches/{w.batch.pk}/progress/", None, 200
    ),
    Endpoint(
        "assignment extend",
        "post",
        lambda w: f"/api/admin/batches/{w.batch.pk}/assignments/extend/",
        lambda w: {"annotators": ["bob"], "overlap": 2},
        200,
    ),
    Endpoint("batch keys", "get", lambda w: f"/api/admin/batches/{w.batch.pk}/keys/", None, 200),
    Endpoint("annotator list", "get", lambda w: "/api/admin/annotators/", None, 200),
    Endpoint(
        "annotator create",
        "post",
        lambda w: "/api/admin/annotators/",
        lambda w: {"username": "newcomer"},
        201,
    ),
    Endpoint(
        "annotator password link",
        "post",
        lambda w: f"/api/admin/annotators/{w.alice_assignment.annotator_id}/password-link/",
        None,
        200,
    ),
    Endpoint(
        "annotator deactivate",
        "post",
        lambda w: f"/api/admin/annotators/{w.alice_assignment.annotator_id}/deactivate/",
        lambda w: {"reassign_to": "bob"},
        200,
    ),
]
EVERY_ENDPOINT = ANNOTATOR_LISTS + ALICE_KEY + ADMIN


def _call(client: APIClient, endpoint: Endpoint, world: World):
    kwargs: dict = {"format": "json"}
    if endpoint.body is not None:
        kwargs["data"] = endpoint.body(world)
    return getattr(client, endpoint.method)(endpoint.path(world), **kwargs)


def _client(persona: str, request) -> APIClient:
    if persona == "anonymous":
        return APIClient()
    return client_for(request.getfixturevalue(persona))


@pytest.mark.parametrize("persona", ["anonymous", "mallory"])
@pytest.mark.parametrize("endpoint", EVERY_ENDPOINT, ids=str)
def test_nobody_without_a_role_can_call_any_endpoint(world, persona, endpoint, request):
    response = _call(_client(persona, request), endpoint, world)
    assert response.status_code == 403, response.content
    assert "detail" in response.json()


@pytest.mark.parametrize("endpoint", ANNOTATOR_LISTS + ALICE_KEY, ids=str)
def test_the_admin_is_not_an_annotator(world, endpoint, carol):
    response = _call(client_for(carol), endpoint, world)
    assert response.status_code == 403, response.content


@pytest.mark.parametrize("endpoint", ADMIN, ids=str)
def test_the_admin_can_call_every_admin_endpoint(world, endpoint, carol):
    response = _call(client_for(carol), endpoint, world)
    assert response.status_code == endpoint.ok, response.content


@pytest.mark.parametrize("persona", ["alice", "bob"])
@pytest.mark.parametrize("endpoint", ADMIN, ids=str)
def test_annotators_cannot_call_admin_endpoints(world, endpoint, persona, request):
    response = _call(_client(persona, request), endpoint, world)
    assert response.status_code == 403, response.content


@pytest.mark.parametrize("endpoint", ANNOTATOR_LISTS + ALICE_KEY, ids=str)
def test_alice_can_work_on_her_assigned_key(world, endpoint, alice):
    response = _call(client_for(alice), endpoint, world)
    assert response.status_code == endpoint.ok, response.content


@pytest.mark.parametrize("endpoint", _key_endpoints("free_key"))
def test_an_unassigned_key_is_not_found_for_alice(world, endpoint, alice):
    response = _call(client_for(alice), endpoint, world)
    assert response.status_code == 404, response.content
    assert response.json() == {"detail": "Not found.", "code": "not_found"}


@pytest.mark.parametrize("endpoint", _key_endpoints("bob_key"))
def test_bobs_key_is_not_found_for_alice(world, endpoint, alice):
    response = _call(client_for(alice), endpoint, world)
    assert response.status_code == 404, response.content


def _alice_untouched(world: World) -> None:
    annotation = Annotation.objects.get(pk=world.alice_annotation.pk)
    assert annotation.version == world.alice_annotation.version
    assert annotation.note == ""
    assert annotation.status == Annotation.Status.DRAFT
    pattern = Pattern.objects.get(pk=world.alice_pattern.pk)
    assert (pattern.kind, pattern.description) == ("shallow", "alice's secret pattern")
    assert Pattern.objects.filter(annotation__key=world.alice_key).count() == 1
    assert not AnnotationEvent.objects.filter(annotation__annotator__username="bob").exists()


@pytest.mark.parametrize("endpoint", ALICE_KEY + ANNOTATOR_LISTS[1:2], ids=str)
def test_bob_can_read_or_write_nothing_of_alices(world, endpoint, bob):
    response = _call(client_for(bob), endpoint, world)
    assert response.status_code == 404, response.content
    assert b"secret" not in response.content
    _alice_untouched(world)


def test_bobs_own_lists_show_nothing_of_alices(world, bob):
    client = client_for(bob)
    assignments = client.get("/api/assignments/").json()
    assert [a["batch_name"] for a in assignments] == ["bob's"]
    assert client.get("/api/next-key/").json()["key_id"] == world.bob_key.pk


PATTERN_ENDPOINTS = [e for e in ALICE_KEY if e.name in {"pattern update", "pattern delete"}]


@pytest.mark.parametrize("endpoint", PATTERN_ENDPOINTS, ids=str)
def test_bob_on_the_same_key_works_blind_and_cannot_touch_alices_patterns(world, endpoint, bob):
    assignment_create(batch=world.batch, annotator=bob)
    client = client_for(bob)
    detail = client.get(f"/api/keys/{world.alice_key.pk}/").json()
    assert detail["annotation"]["patterns"] == []
    assert detail["annotation"]["id"] != world.alice_annotation.pk
    assert b"secret" not in client.get(f"/api/keys/{world.alice_key.pk}/annotation/").content

    response = _call(client, endpoint, world)

    assert response.status_code == 404, response.content
    pattern = Pattern.objects.get(pk=world.alice_pattern.pk)
    assert pattern.kind == "shallow"
