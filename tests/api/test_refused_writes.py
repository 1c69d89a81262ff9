"""A refused write leaves no trace: no annotation (no draft), no pattern, no audit record,
no flag and no new version, whether it is refused with a 400, 403, 404 or 409."""

from __future__ import annotations

from typing import Any

import pytest

from annotate.models import Annotation, AnnotationEvent, Guideline, KeyFlag, Pattern
from tests.conftest import client_for
from tests.factories import assigned_batch

pytestmark = pytest.mark.django_db


def _trace() -> dict[str, Any]:
    """Every row a write of an annotator could leave, as it is."""
    return {
        "annotations": list(Annotation.objects.order_by("id").values()),
        "patterns": list(Pattern.objects.order_by("id").values()),
        "links": list(
            Pattern.prefixes.through.objects.order_by("id").values_list(
                "pattern_id", "triggerprefix_id"
            )
        ),
        "events": list(AnnotationEvent.objects.order_by("id").values_list("id", "action")),
        "flags": list(KeyFlag.objects.order_by("id").values()),
    }


@pytest.fixture
def world(alice, bob):
    """alice's key ``new`` (nothing written), ``draft`` (a pattern, v2) and ``submitted``
    (a pattern, submitted, v3), each with a flag-free start; bob's key, not hers."""
    batch, keys = assigned_batch([alice], n_keys=3)
    _, (bobs,) = assigned_batch([bob])
    client = client_for(alice)
    new, draft, submitted = keys
    for key in (draft, submitted):
        created = client.post(
            f"/api/keys/{key.pk}/patterns/",
            {"description": "d", "kind": "shallow", "prefix_ranks": [1, 2, 3], "version": 1},
            format="json",
        )
        assert created.status_code == 201, created.content
    done = client.post(f"/api/keys/{submitted.pk}/submit/", {"version": 2}, format="json")
    assert done.status_code == 200, done.content
    return {
        "batch": batch,
        "client": client,
        "new": new,
        "draft": draft,
        "submitted": submitted,
        "bobs": bobs,
    }


def _pattern_id(key) -> int:
    return Pattern.objects.get(annotation__key=key).pk


PATTERN = {"description": "d", "kind": "semantic", "prefix_ranks": [4, 5, 6]}

# (which key, method, path under /api/keys/{id}/, body, status, code); {p}: its pattern.
REFUSED = [
    # A new key: the first write would have made the draft.
    ("new", "post", "patterns/", {**PATTERN, "prefix_ranks": [1, 2], "version": 1}, 400,
     "pattern_needs_three_prefixes"),
    ("new", "post", "patterns/", {**PATTERN, "prefix_ranks": [1, 2, 99], "version": 1}, 400,
     "invalid"),
    ("new", "post", "patterns/", {**PATTERN, "prefix_ranks": [1, 1, 2], "version": 1}, 400,
     "pattern_duplicate_prefixes"),
    ("new", "post", "patterns/", {**PATTERN, "description": " ", "version": 1}, 400, "invalid"),
    ("new", "post", "patterns/", {**PATTERN, "version": 7}, 409, "stale_version"),
    ("new", "put", "annotation/", {"note": "x", "version": 7}, 409, "stale_version"),
    ("new", "put", "annotation/", {"note": "x" * 20_001, "version": 1}, 400, "invalid"),
    ("new", "put", "annotation/", {"note": "x", "version": 1, "active_seconds": True}, 400,
     "invalid"),
    ("new", "post", "submit/", {"version": 7}, 409, "stale_version"),
    ("new", "post", "submit/", {"version": 1, "active_seconds": "12"}, 400, "invalid"),
    ("new", "post", "reopen/", {"version": "x"}, 400, "invalid"),
    ("new", "put", "flag/", {"reason": "other", "note": " "}, 400, "invalid"),
    ("new", "put", "flag/", {"reason": "bogus"}, 400, "invalid"),
    # A draft: the write would have changed it or its pattern.
    ("draft", "post", "patterns/", {**PATTERN, "prefix_ranks": [1, 2], "version": 2}, 400,
     "pattern_needs_three_prefixes"),
    ("draft", "post", "patterns/", {**PATTERN, "version": 1}, 409, "stale_version"),
    ("draft", "patch", "patterns/{p}/", {"prefix_ranks": [1, 2], "version": 2}, 400,
     "pattern_needs_three_prefixes"),
    ("draft", "patch", "patterns/{p}/", {"prefix_ranks": [1, 2, 77], "version": 2}, 400,
     "invalid"),
    ("draft", "patch", "patterns/{p}/", {"description": "e", "prefix_ranks": [3, 3, 4],
     "version": 2}, 400, "pattern_duplicate_prefixes"),
    ("draft", "patch", "patterns/{p}/", {"description": "e", "version": 1}, 409,
     "stale_version"),
    ("draft", "patch", "patterns/999999/", {"description": "e", "version": 2}, 404, "not_found"),
    ("draft", "delete", "patterns/{p}/?version=1", None, 409, "stale_version"),
    ("draft", "delete", "patterns/{p}/?version=x", None, 400, "invalid"),
    ("draft", "put", "annotation/", {"note": "x", "version": 1}, 409, "stale_version"),
    ("draft", "put", "annotation/", {"note": "x", "version": 2, "active_seconds": -1}, 400,
     "invalid"),
    ("draft", "post", "submit/", {"version": 1, "active_seconds": 30}, 409, "stale_version"),
    ("draft", "post", "reopen/", {"version": 1}, 200, None),  # a draft: nothing to reopen
    # A submitted annotation: only its reopening is a write.
    ("submitted", "post", "patterns/", {**PATTERN, "version": 3}, 409, "annotation_submitted"),
    ("submitted", "patch", "patterns/{p}/", {"description": "e", "version": 3}, 409,
     "annotation_submitted"),
    ("submitted", "delete", "patterns/{p}/?version=3", None, 409, "annotation_submitted"),
    ("submitted", "put", "annotation/", {"note": "x", "version": 3}, 409,
     "annotation_submitted"),
    ("submitted", "put", "annotation/", {"note": "", "version": 3, "active_seconds": 500}, 200,
     None),  # its time is final: a save that only adds time changes nothing
    ("submitted", "post", "reopen/", {"version": 2}, 409, "stale_version"),
    # Someone else's key: 404, as if it did not exist.
    ("bobs", "post", "patterns/", {**PATTERN, "version": 1}, 404, "not_found"),
    ("bobs", "put", "annotation/", {"note": "x", "version": 1}, 404, "not_found"),
    ("bobs", "post", "submit/", {"version": 1}, 404, "not_found"),
    ("bobs", "post", "reopen/", {"version": 1}, 404, "not_found"),
    ("bobs", "put", "flag/", {"reason": "unclear"}, 404, "not_found"),
    ("bobs", "delete", "flag/", None, 404, "not_found"),
]  # fmt: skip


def _send(client, method: str, path: str, body: Any):
    if method == "delete":
        return client.delete(path)
    return getattr(client, method)(path, body, format="json")


@pytest.mark.parametrize(("which", "method", "path", "body", "status", "code"), REFUSED)
def test_a_refused_write_leaves_no_trace(world, which, method, path, body, status, code):
    key = world[which]
    if "{p}" in path:
        path = path.format(p=_pattern_id(key))
    before = _trace()
    response = _send(world["client"], method, f"/api/keys/{key.pk}/{path}", body)
    assert response.status_code == status, response.content
    if code is not None:
        assert response.json()["code"] == code
    assert _trace() == before


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "patterns/", {**PATTERN, "version": 7}),
        ("put", "annotation/", {"note": "x", "version": 7}),
        ("post", "submit/", {"version": 7}),
    ],
)
def test_a_stale_first_write_answers_the_key_as_not_started(world, method, path, body):
    key = world["new"]
    response = _send(world["client"], method, f"/api/keys/{key.pk}/{path}", body)
    assert response.status_code == 409, response.content
    current = response.json()["current"]
    assert (current["id"], current["status"], current["version"]) == (None, "new", 1)
    assert current["key_id"] == key.pk
    assert len(current["labels"]) == 25


def test_writes_refused_until_the_guidelines_are_acknowledged_leave_no_draft(world, carol):
    Guideline.objects.create(study=world["new"].study, version=1, text="rules", created_by=carol)
    before = _trace()
    client, key = world["client"], world["new"]
    for method, path, body in [
        ("post", "patterns/", {**PATTERN, "version": 1}),
        ("put", "annotation/", {"note": "x", "version": 1}),
        ("post", "submit/", {"version": 1}),
    ]:
        response = _send(client, method, f"/api/keys/{key.pk}/{path}", body)
        assert response.status_code == 403, response.content
        assert response.json()["code"] == "guidelines_not_acknowledged"
    assert _trace() == before


def test_a_first_write_that_changes_nothing_makes_no_draft(world):
    client, key = world["client"], world["new"]
    before = _trace()
    for method, path, body in [
        ("put", "annotation/", {"note": "", "version": 1}),
        ("put", "annotation/", {"note": "", "version": 1, "active_seconds": 0}),
        ("post", "reopen/", {"version": 1}),
        ("put", "flag/", {"reason": "unclear"}),
        ("delete", "flag/", None),
    ]:
        response = _send(client, method, f"/api/keys/{key.pk}/{path}", body)
        assert response.status_code in (200, 204), response.content
        if response.status_code == 200 and path != "flag/":
            assert response.json()["status"] == "new"
    assert _trace()["annotations"] == before["annotations"]
    assert _trace()["events"] == before["events"]


def test_the_batch_page_shows_a_key_refused_a_first_write_as_not_started(world, carol):
    key = world["new"]
    refused = world["client"].post(
        f"/api/keys/{key.pk}/patterns/", {**PATTERN, "prefix_ranks": [1, 2], "version": 1}, "json"
    )
    assert refused.json()["code"] == "pattern_needs_three_prefixes"
    admin = client_for(carol)
    batch = world["batch"]
    page = admin.get(f"/api/admin/batches/{batch.pk}/keys/").json()
    statuses = {row["key_id"]: [a["status"] for a in row["annotators"]] for row in page["results"]}
    assert statuses[key.pk] == ["new"]
    progress = admin.get(f"/api/admin/batches/{batch.pk}/progress/").json()
    assert progress["total"] == {"keys_assigned": 3, "submitted": 1, "draft": 1, "new": 1}
    detail = world["client"].get(f"/api/keys/{key.pk}/").json()
    assert detail["annotation"]["status"] == "new"


def test_the_first_write_that_succeeds_makes_the_draft_with_its_audit(world):
    client, key = world["client"], world["new"]
    response = client.post(
        f"/api/keys/{key.pk}/patterns/", {**PATTERN, "version": 1}, format="json"
    )
    assert response.status_code == 201, response.content
    annotation = Annotation.objects.get(key=key)
    assert (annotation.status, annotation.version) == ("draft", 2)
    actions = list(annotation.events.order_by("id").values_list("action", flat=True))
    assert actions == ["create", "pattern_create"]
