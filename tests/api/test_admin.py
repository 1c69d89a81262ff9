"""The admin's API: studies, batches (three modes), assignment with overlap, progress,
annotators and their deactivation."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.core.validators import ProhibitNullCharactersValidator
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import get_resolver
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from annotate.apis.admin import BATCH_MODE_NEEDS, UNKNOWN_USER
from annotate.apis.common import ApiErrorsMixin
from annotate.models import Annotation, AssignmentKey
from annotate.services.batches import (
    ASSIGNMENT_OVERLAP_OUT_OF_RANGE,
    BATCH_ALREADY_ASSIGNED,
    REASSIGN_NEEDED,
)
from tests.conftest import client_for
from tests.errors import field_errors
from tests.factories import (
    AnnotationFactory,
    BatchFactory,
    KeyFactory,
    StudyFactory,
    annotate_key,
    assigned_batch,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    study = StudyFactory(n_layers=3)
    for layer in (1, 2, 3):
        for index in range(4):
            KeyFactory(study=study, layer=layer, index=index)
    return study


def test_studies_are_listed_with_their_key_count_and_layers(carol, study):
    client = client_for(carol)
    rows = client.get("/api/admin/studies/").json()
    assert [(r["id"], r["key_count"]) for r in rows] == [(study.pk, 12)]
    detail = client.get(f"/api/admin/studies/{study.pk}/").json()
    assert detail["layers"] == [{"layer": n, "key_count": 4} for n in (1, 2, 3)]
    assert detail["show_value_tokens"] is False


def test_the_admin_turns_value_tokens_on_for_a_study(carol, study):
    response = client_for(carol).patch(
        f"/api/admin/studies/{study.pk}/", {"show_value_tokens": True}, format="json"
    )
    assert response.json()["show_value_tokens"] is True
    study.refresh_from_db()
    assert study.show_value_tokens


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"name": "b", "mode": "layer", "layers": [1, 3]}, 8),
        ({"name": "b", "mode": "random", "n": 5, "seed": 3}, 5),
        ({"name": "b", "mode": "random", "n": 2, "layers": [2]}, 2),
        ({"name": "b", "mode": "list", "keys": [{"layer": 2, "index": 1}]}, 1),
    ],
)
def test_a_batch_is_made_by_layer_random_sample_or_list(carol, study, body, expected):
    client = client_for(carol)
    response = client.post(f"/api/admin/studies/{study.pk}/batches/", body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["key_count"] == expected
    listed = client.get(f"/api/admin/studies/{study.pk}/batches/").json()
    assert [(b["name"], b["key_count"], b["annotators"]) for b in listed] == [("b", expected, [])]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": "b", "mode": "everything"},
        {"name": "b", "mode": "layer"},
        {"name": "b", "mode": "layer", "layers": []},
        {"name": "b", "mode": "layer", "layers": [0]},
        {"name": "b", "mode": "layer", "layers": [9]},
        {"name": "b", "mode": "random"},
        {"name": "b", "mode": "random", "n": 0},
        {"name": "b", "mode": "random", "n": 1000},
        {"name": "b", "mode": "random", "n": 2, "seed": -1},
        {"name": "b", "mode": "list", "keys": [{"layer": 1}]},
        {"name": "b", "mode": "list", "keys": [{"layer": 1, "index": 99}]},
        {"name": "b", "mode": "list", "keys": "1:0"},
        {"name": "x" * 5000, "mode": "layer", "layers": [1]},
        ["layer"],
    ],
)
def test_a_bad_batch_request_is_a_400(carol, study, body):
    response = client_for(carol).post(
        f"/api/admin/studies/{study.pk}/batches/", body, format="json"
    )
    assert response.status_code == 400, response.content
    assert not study.batches.exists()


def test_a_batch_mode_without_its_field_names_the_field(carol, study):
    response = client_for(carol).post(
        f"/api/admin/studies/{study.pk}/batches/", {"name": "b", "mode": "random"}, format="json"
    )
    assert field_errors(response) == {"n": [BATCH_MODE_NEEDS["random"][1]]}


def test_carol_assigns_a_batch_by_layer_to_alice_and_bob_with_overlap_2(carol, alice, bob, study):
    client = client_for(carol)
    batch = client.post(
        f"/api/admin/studies/{study.pk}/batches/",
        {"name": "layer 1", "mode": "layer", "layers": [1]},
        format="json",
    ).json()
    response = client.post(
        f"/api/admin/batches/{batch['id']}/assignments/",
        {"annotators": ["alice", bob.pk], "overlap": 2},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert [a["username"] for a in response.json()["annotators"]] == ["alice", "bob"]
    for user in (alice, bob):
        rows = client_for(user).get("/api/assignments/").json()
        assert [(r["batch_name"], r["keys_total"]) for r in rows] == [("layer 1", 4)]
    again = client.post(
        f"/api/admin/batches/{batch['id']}/assignments/",
        {"annotators": ["alice"], "overlap": 1},
        format="json",
    )
    assert again.json() == {"detail": BATCH_ALREADY_ASSIGNED, "code": "rule_violation"}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {"annotators": ["alice"], "overlap": 2},
            {
                "detail": ASSIGNMENT_OVERLAP_OUT_OF_RANGE.format(overlap=2, n=1),
                "code": "rule_violation",
            },
        ),
        (
            {"annotators": ["nobody"], "overlap": 1},
            {
                "detail": "annotators: " + UNKNOWN_USER.format(ref="nobody"),
                "code": "invalid",
                "fields": {
                    "annotators": [
                        {"message": UNKNOWN_USER.format(ref="nobody"), "code": "invalid"}
                    ]
                },
            },
        ),
        ({"annotators": [], "overlap": 1}, None),
        ({"annotators": [True], "overlap": 1}, None),
        ({"annotators": [{"id": 1}], "overlap": 1}, None),
        ({"annotators": "alice", "overlap": 1}, None),
        ({"annotators": ["alice"], "overlap": 0}, None),
        ({"annotators": ["alice"]}, None),
        ({"annotators": [2**80], "overlap": 1}, None),
    ],
)
def test_a_bad_assignment_request_is_a_400(carol, alice, body, expected):
    batch = BatchFactory(keys=KeyFactory.create_batch(2))
    response = client_for(carol).post(
        f"/api/admin/batches/{batch.pk}/assignments/", body, format="json"
    )
    assert response.status_code == 400, response.content
    if expected is not None:
        assert response.json() == expected
    assert not batch.assignments.exists()


def test_batch_progress_per_annotator_and_layer(carol, alice, bob):
    batch, keys = assigned_batch([alice, bob], n_keys=2, n_prefixes=3)
    AnnotationFactory(key=keys[0], annotator=alice, status=Annotation.Status.SUBMITTED)
    progress = client_for(carol).get(f"/api/admin/batches/{batch.pk}/progress/").json()
    assert progress["total"] == {"keys_assigned": 4, "submitted": 1, "draft": 0, "new": 3}
    assert [(r["username"], r["submitted"]) for r in progress["per_annotator"]] == [
        ("alice", 1),
        ("bob", 0),
    ]
    assert progress["per_layer"] == [
        {"layer": 1, "keys_assigned": 4, "submitted": 1, "draft": 0, "new": 3}
    ]
    assert progress["annotators_per_key_min"] == progress["annotators_per_key_max"] == 2


def test_deactivating_alice_hands_her_unfinished_keys_to_bob(carol, alice, bob):
    _, keys = assigned_batch([alice], n_keys=2, n_prefixes=3)
    client = client_for(carol)
    annotators = client.get("/api/admin/annotators/").json()
    assert [(a["username"], a["keys_assigned"]) for a in annotators] == [
        ("alice", 2),
        ("bob", 0),
    ]
    response = client.post(
        f"/api/admin/annotators/{alice.pk}/deactivate/", {"reassign_to": "bob"}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["annotator"]["is_active"] is False
    assert (body["keys_moved"], body["keys_skipped"]) == (2, 0)
    assert client_for(bob).get("/api/next-key/").json()["key_id"] == keys[0].pk
    assert client_for(alice).get("/api/assignments/").status_code == 403


def test_the_annotators_page_leaves_out_work_in_archived_studies(carol, alice):
    # alice's imported work (an archived study, read-only) is no key of hers to do: her
    # totals count the live studies only.
    _, live = assigned_batch([alice], n_keys=2, n_prefixes=3)
    annotate_key(live[0], alice)
    _, archived = assigned_batch([alice], n_keys=3, n_prefixes=3, study=StudyFactory(archived=True))
    for key in archived:
        annotate_key(key, alice)
    rows = client_for(carol).get("/api/admin/annotators/").json()
    assert [(r["username"], r["keys_assigned"], r["keys_submitted"]) for r in rows] == [
        ("alice", 2, 1)
    ]


def _alice_drafts_a_key_then_is_deactivated(carol, alice, bob, body) -> tuple[dict, object]:
    _, (key,) = assigned_batch([alice], n_keys=1, n_prefixes=3)
    alice_client = client_for(alice)
    version = alice_client.get(f"/api/keys/{key.pk}/").json()["annotation"]["version"]
    saved = alice_client.put(
        f"/api/keys/{key.pk}/annotation/", {"note": "alice's idea", "version": version}, "json"
    )
    assert saved.status_code == 200, saved.content
    response = client_for(carol).post(
        f"/api/admin/annotators/{alice.pk}/deactivate/", body, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json(), key


def test_deactivating_alice_leaves_her_drafts_with_her_by_default(carol, alice, bob):
    body, key = _alice_drafts_a_key_then_is_deactivated(carol, alice, bob, {"reassign_to": "bob"})
    assert (body["keys_moved"], body["drafts_moved"]) == (1, 0)
    # bob gets the key, and starts blank: nothing of alice's draft reaches him.
    detail = client_for(bob).get(f"/api/keys/{key.pk}/")
    assert detail.status_code == 200
    assert detail.json()["annotation"]["note"] == ""
    assert b"alice's idea" not in detail.content
    assert Annotation.objects.get(key=key, annotator=alice).note == "alice's idea"


def test_deactivating_alice_can_hand_her_drafts_to_bob_when_asked(carol, alice, bob):
    body, key = _alice_drafts_a_key_then_is_deactivated(
        carol, alice, bob, {"reassign_to": "bob", "transfer_drafts": True}
    )
    assert (body["keys_moved"], body["drafts_moved"]) == (1, 1)
    detail = client_for(bob).get(f"/api/keys/{key.pk}/").json()
    assert detail["annotation"]["note"] == "alice's idea"
    assert not Annotation.objects.filter(annotator=alice).exists()


@pytest.mark.parametrize(
    "body", [{}, {"reassign_to": None}, {"reassign_to": "ghost"}, {"reassign_to": "alice"}]
)
def test_a_bad_deactivation_is_a_400_and_deactivates_nobody(carol, alice, body):
    assigned_batch([alice], n_keys=1, n_prefixes=3)  # an unfinished key to hand over
    response = client_for(carol).post(
        f"/api/admin/annotators/{alice.pk}/deactivate/", body, format="json"
    )
    assert response.status_code == 400, response.content
    if body.get("reassign_to", None) is None:
        assert response.json()["detail"] == REASSIGN_NEEDED.format(username="alice", n=1)
    alice.refresh_from_db()
    assert alice.is_active


def test_an_annotator_with_nothing_unfinished_is_deactivated_without_a_replacement(carol, alice):
    _, (key,) = assigned_batch([alice], n_keys=1, n_prefixes=3)
    AnnotationFactory(key=key, annotator=alice, status=Annotation.Status.SUBMITTED)
    response = client_for(carol).post(
        f"/api/admin/annotators/{alice.pk}/deactivate/", {}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["annotator"]["is_active"] is False
    assert response.json()["keys_moved"] == 0
    alice.refresh_from_db()
    assert not alice.is_active


# What a JSON body can carry and no database column can store: a NUL, and a lone
# surrogate written as an escape. The lookup of such a username was a 503 (PostgreSQL
# refuses the NUL) or a 500 (the surrogate cannot be encoded). Raw bodies: the test
# client cannot encode a lone surrogate.
USERNAMES_NO_DATABASE_STORES = [
    ("x\\u0000", ProhibitNullCharactersValidator.message),
    ("x\\ud800", ProhibitSurrogateCharactersValidator.message.format(code_point=0xD800)),
]


@pytest.mark.parametrize(
    ("escaped", "message"), USERNAMES_NO_DATABASE_STORES, ids=["nul", "lone surrogate"]
)
def test_a_username_with_a_nul_or_a_lone_surrogate_is_a_400(carol, alice, escaped, message):
    batch = BatchFactory(keys=KeyFactory.create_batch(2))
    client = client_for(carol)
    assign = client.post(
        f"/api/admin/batches/{batch.pk}/assignments/",
        data=f'{{"annotators": ["{escaped}"], "overlap": 1}}',
        content_type="application/json",
    )
    assert assign.status_code == 400, assign.content
    assert field_errors(assign) == {"annotators": {"0": [message]}}
    deactivate = client.post(
        f"/api/admin/annotators/{alice.pk}/deactivate/",
        data=f'{{"reassign_to": "{escaped}"}}',
        content_type="application/json",
    )
    assert deactivate.status_code == 400, deactivate.content
    assert field_errors(deactivate) == {"reassign_to": [message]}
    assert not batch.assignments.exists()
    alice.refresh_from_db()
    assert alice.is_active


def test_a_batch_mode_with_a_lone_surrogate_is_a_400_that_writes_it_as_an_escape(carol, study):
    response = client_for(carol).post(
        f"/api/admin/studies/{study.pk}/batches/",
        data='{"name": "b", "mode": "x\\ud800"}',
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert field_errors(response) == {"mode": ['"x\\ud800" is not a valid choice.']}


def test_deactivating_someone_who_is_not_an_annotator_is_a_404(carol, mallory, bob):
    response = client_for(carol).post(
        f"/api/admin/annotators/{mallory.pk}/deactivate/", {"reassign_to": "bob"}, format="json"
    )
    assert response.status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/api/admin/studies/999999/",
        "/api/admin/studies/99999999999999999999999/batches/",
        "/api/admin/batches/999999/progress/",
    ],
)
def test_unknown_admin_ids_are_a_json_404(carol, path):
    response = client_for(carol).get(path)
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found.", "code": "not_found"}


def test_admin_listings_cost_the_same_queries_for_few_or_many(carol, alice, bob):
    client = client_for(carol)
    small, _ = assigned_batch([alice], n_keys=3, n_prefixes=1)
    with CaptureQueriesContext(connection) as few:
        client.get(f"/api/admin/batches/{small.pk}/progress/")
        client.get(f"/api/admin/studies/{small.study_id}/batches/")
        client.get("/api/admin/annotators/")
    large, _ = assigned_batch([alice, bob], n_keys=30, n_prefixes=1, study=small.study)
    with CaptureQueriesContext(connection) as many:
        client.get(f"/api/admin/batches/{large.pk}/progress/")
        client.get(f"/api/admin/studies/{small.study_id}/batches/")
        client.get("/api/admin/annotators/")
    assert len(few.captured_queries) == len(many.captured_queries)
    assert AssignmentKey.objects.count() == 63


# --- the schema -------------------------------------------------------------------------


def test_every_api_endpoint_is_in_the_schema(api_client):
    paths = api_client.get("/api/schema/?format=json").json()["paths"]
    routes = {
        "/api/" + str(p.pattern).replace("<int:", "{").replace(">", "}")
        for p in get_resolver("annotate.urls").url_patterns
    }
    # with review (8), guidelines (3), the key flag (1) and suggestions (3)
    assert len(routes) == 39
    assert routes <= set(paths)


def test_the_schema_validates_without_warnings(tmp_path):
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml")
    )


def test_an_operation_is_described_by_its_own_view_not_by_a_mixin(api_client):
    paths = api_client.get("/api/schema/?format=json").json()["paths"]
    descriptions = [
        operation.get("description", "")
        for path in paths.values()
        for operation in path.values()
        if isinstance(operation, dict)
    ]
    mixin_doc = (ApiErrorsMixin.__doc__ or "").split(":")[0].strip()
    assert mixin_doc.startswith("Turns service errors")
    assert not [d for d in descriptions if mixin_doc in d]
    # Views that document themselves still do.
    assert any("Submit the annotation" in d for d in descriptions)


def _unbounded_strings(schema: Any, components: dict, where: str, seen: set) -> list[str]:
    """The places in ``schema`` where a client may send a string of any length."""
    if not isinstance(schema, dict):
        return []
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            return []
        return _unbounded_strings(components[name], components, where, seen | {name})
    found = []
    if (
        schema.get("type") == "string"
        and "maxLength" not in schema
        and "enum" not in schema
        and schema.get("format") not in {"uuid", "binary", "date-time", "date"}
        and not schema.get("readOnly")
    ):
        found.append(where)
    for key in ("oneOf", "anyOf", "allOf"):
        for i, option in enumerate(schema.get(key, [])):
            found += _unbounded_strings(option, components, f"{where}|{i}", seen)
    for name, prop in schema.get("properties", {}).items():
        found += _unbounded_strings(prop, components, f"{where}.{name}", seen)
    found += _unbounded_strings(schema.get("items"), components, f"{where}[]", seen)
    return found


def test_every_text_a_client_sends_has_a_maximum_length(api_client):
    """Each free-text field written through the API (notes, pattern descriptions, batch
    and study names, usernames, filters) is capped, so that too long is a clear 400."""
    schema = api_client.get("/api/schema/?format=json").json()
    components = schema["components"]["schemas"]
    unbounded = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            for parameter in operation.get("parameters", []):
                unbounded += _unbounded_strings(
                    parameter.get("schema"), components, f"{where} ?{parameter['name']}", set()
                )
            for media, body in operation.get("requestBody", {}).get("content", {}).items():
                unbounded += _unbounded_strings(
                    body.get("schema"), components, f"{where} {media}", set()
                )
    assert unbounded == []


def test_the_django_admin_says_trigger_prefixes(carol):
    # The index once said "Trigger prefixs".
    client = Client()
    client.force_login(carol)
    index = client.get("/admin/").content.decode()
    assert "Trigger prefixes" in index
    assert "prefixs" not in index
    changelist = client.get("/admin/annotate/triggerprefix/").content.decode()
    assert "Select trigger prefix to change" in changelist
    assert "prefixs" not in changelist
