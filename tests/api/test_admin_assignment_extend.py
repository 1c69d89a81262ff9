"""Adding annotators to an assigned batch and raising its overlap: docs/annotation.md,
"Studies, batches and assignments"."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import AssignmentKey
from annotate.services.batches import (
    ASSIGNMENT_ALREADY_IN_BATCH,
    ASSIGNMENT_NOTHING_TO_ADD,
    ASSIGNMENT_OVERLAP_LOWERED,
    ASSIGNMENT_OVERLAP_OUT_OF_RANGE,
    BATCH_NOT_ASSIGNED,
)
from tests.conftest import annotator_user, client_for
from tests.factories import AnnotationFactory, BatchFactory, KeyFactory

pytestmark = pytest.mark.django_db


def _batch(n_keys: int = 6):
    return BatchFactory(keys=[KeyFactory(layer=1, index=i) for i in range(n_keys)])


def _assign(client, batch, annotators, overlap):
    return client.post(
        f"/api/admin/batches/{batch.pk}/assignments/",
        {"annotators": annotators, "overlap": overlap},
        format="json",
    )


def _extend(client, batch, annotators, overlap):
    return client.post(
        f"/api/admin/batches/{batch.pk}/assignments/extend/",
        {"annotators": annotators, "overlap": overlap},
        format="json",
    )


def _holders(batch) -> dict[int, set[str]]:
    rows = AssignmentKey.objects.filter(assignment__batch=batch).values_list(
        "key_id", "assignment__annotator__username"
    )
    out: dict[int, set[str]] = {key.pk: set() for key in batch.keys.all()}
    for key_id, username in rows:
        out[key_id].add(username)
    return out


def test_a_third_annotator_added_with_overlap_three_gets_every_key(carol, alice, bob):
    annotator_user("dave")
    batch = _batch()
    client = client_for(carol)
    assert _assign(client, batch, ["alice", "bob"], 2).status_code == 201

    response = _extend(client, batch, ["dave"], 3)

    assert response.status_code == 200, response.content
    body = response.json()
    assert [a["username"] for a in body["batch"]["annotators"]] == ["alice", "bob", "dave"]
    assert (body["keys_added"], body["keys_short"]) == (6, 0)
    assert all(h == {"alice", "bob", "dave"} for h in _holders(batch).values())
    progress = client.get(f"/api/admin/batches/{batch.pk}/progress/").json()
    assert progress["annotators_per_key_min"] == progress["annotators_per_key_max"] == 3


def test_two_new_annotators_share_the_raised_overlap_evenly(carol, alice, bob):
    annotator_user("dave"), annotator_user("erin")
    batch = _batch()
    client = client_for(carol)
    _assign(client, batch, ["alice", "bob"], 2)

    body = _extend(client, batch, ["dave", "erin"], 3).json()

    assert body["keys_added"] == 6
    loads = Counter(
        AssignmentKey.objects.filter(assignment__batch=batch).values_list(
            "assignment__annotator__username", flat=True
        )
    )
    assert loads == {"alice": 6, "bob": 6, "dave": 3, "erin": 3}
    assert all(len(h) == 3 for h in _holders(batch).values())


def test_the_overlap_alone_can_be_raised_among_the_same_annotators(carol, alice, bob):
    annotator_user("dave")
    batch = _batch()
    client = client_for(carol)
    _assign(client, batch, ["alice", "bob", "dave"], 1)

    body = _extend(client, batch, [], 2).json()

    assert body["keys_added"] == 6
    assert all(len(h) == 2 for h in _holders(batch).values())


def test_a_key_an_annotator_already_annotated_elsewhere_goes_to_someone_else(carol, alice, bob):
    dave, _ = annotator_user("dave"), annotator_user("erin")
    batch = _batch(2)
    client = client_for(carol)
    _assign(client, batch, ["alice", "bob"], 2)
    first = batch.keys.order_by("index").first()
    AnnotationFactory(key=first, annotator=dave)

    body = _extend(client, batch, ["dave", "erin"], 3).json()

    assert _holders(batch)[first.pk] == {"alice", "bob", "erin"}
    assert body["keys_short"] == 0


@pytest.mark.parametrize(
    ("annotators", "overlap", "message"),
    [
        (["dave"], 4, ASSIGNMENT_OVERLAP_OUT_OF_RANGE.format(overlap=4, n=3)),
        (["dave"], 1, ASSIGNMENT_OVERLAP_LOWERED.format(n=2)),
        (["alice"], 2, ASSIGNMENT_ALREADY_IN_BATCH.format(username="alice")),
        (["dave"], 2, ASSIGNMENT_NOTHING_TO_ADD.format(overlap=2)),
    ],
)
def test_a_bad_extension_is_a_400_that_says_why(carol, alice, bob, annotators, overlap, message):
    annotator_user("dave")
    batch = _batch(2)
    client = client_for(carol)
    _assign(client, batch, ["alice", "bob"], 2)

    response = _extend(client, batch, annotators, overlap)

    assert response.status_code == 400, response.content
    assert response.json()["detail"] == message
    assert AssignmentKey.objects.filter(assignment__batch=batch).count() == 4
    assert batch.assignments.count() == 2


def test_an_unassigned_batch_is_assigned_first(carol, alice):
    response = _extend(client_for(carol), _batch(2), ["alice"], 1)
    assert response.status_code == 400
    assert response.json()["detail"] == BATCH_NOT_ASSIGNED


def test_extending_costs_the_same_queries_for_few_and_many_keys(carol, alice, bob):
    counts = []
    for n_keys, name in ((2, "dave"), (40, "erin")):
        annotator_user(name)
        batch = _batch(n_keys)
        client = client_for(carol)
        _assign(client, batch, ["alice", "bob"], 2)
        with CaptureQueriesContext(connection) as queries:
            assert _extend(client, batch, [name], 3).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_only_admins_extend(alice, bob):
    batch = _batch(2)
    assert _extend(client_for(alice), batch, ["bob"], 1).status_code == 403


def test_the_overlap_larger_than_the_annotators_is_a_clear_400(carol, alice, bob):
    batch = _batch(2)
    response = _assign(client_for(carol), batch, ["alice", "bob"], 3)
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "The overlap (3) cannot be larger than the number of annotators (2): "
        "each key goes to 3 different annotators."
    )
