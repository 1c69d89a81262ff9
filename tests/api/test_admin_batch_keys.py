"""A batch's keys, each with its annotators' status, a page at a time."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import Annotation
from annotate.services.batches import assignment_create_with_overlap
from tests.conftest import annotator_user, client_for
from tests.factories import AnnotationFactory, BatchFactory, KeyFactory

pytestmark = pytest.mark.django_db


def _batch(annotators, n_keys: int, overlap: int):
    batch = BatchFactory(keys=[KeyFactory(layer=1 + i // 3, index=i) for i in range(n_keys)])
    assignment_create_with_overlap(batch=batch, annotators=annotators, overlap=overlap)
    return batch


def test_the_keys_of_a_batch_show_each_annotators_status(carol, alice, bob):
    batch = _batch([alice, bob], n_keys=3, overlap=2)
    keys = list(batch.keys.order_by("layer", "index"))
    AnnotationFactory(key=keys[0], annotator=alice, status=Annotation.Status.SUBMITTED)
    AnnotationFactory(key=keys[0], annotator=bob, status=Annotation.Status.DRAFT)

    page = client_for(carol).get(f"/api/admin/batches/{batch.pk}/keys/?limit=2").json()

    assert (page["count"], page["limit"], page["offset"]) == (3, 2, 0)
    assert [(r["layer"], r["index"]) for r in page["results"]] == [(1, 0), (1, 1)]
    first = page["results"][0]
    assert first["key_id"] == keys[0].pk
    assert [(a["username"], a["status"]) for a in first["annotators"]] == [
        ("alice", "submitted"),
        ("bob", "draft"),
    ]
    assert [(a["username"], a["status"]) for a in page["results"][1]["annotators"]] == [
        ("alice", "new"),
        ("bob", "new"),
    ]
    rest = client_for(carol).get(f"/api/admin/batches/{batch.pk}/keys/?offset=2").json()
    assert [(r["layer"], r["index"]) for r in rest["results"]] == [(1, 2)]


def test_with_overlap_one_each_key_shows_only_its_annotator(carol, alice, bob):
    batch = _batch([alice, bob], n_keys=2, overlap=1)
    page = client_for(carol).get(f"/api/admin/batches/{batch.pk}/keys/").json()
    assert [[a["username"] for a in r["annotators"]] for r in page["results"]] == [
        ["alice"],
        ["bob"],
    ]


def test_a_page_costs_the_same_queries_whatever_its_size(carol, alice, bob):
    client = client_for(carol)
    counts = []
    for n_keys in (2, 60):
        batch = _batch([alice, bob], n_keys=n_keys, overlap=2)
        for key in batch.keys.all()[:5]:
            AnnotationFactory(key=key, annotator=alice)
        with CaptureQueriesContext(connection) as queries:
            page = client.get(f"/api/admin/batches/{batch.pk}/keys/?limit=500").json()
        assert len(page["results"]) == n_keys
        counts.append(len(queries))
    assert counts[0] == counts[1]


@pytest.mark.parametrize("query", ["limit=0", "limit=501", "offset=-1", "limit=x"])
def test_a_bad_page_is_a_400(carol, alice, query):
    batch = _batch([alice], n_keys=1, overlap=1)
    assert client_for(carol).get(f"/api/admin/batches/{batch.pk}/keys/?{query}").status_code == 400


def test_only_admins_list_a_batchs_keys(alice):
    batch = _batch([alice], n_keys=1, overlap=1)
    assert client_for(alice).get(f"/api/admin/batches/{batch.pk}/keys/").status_code == 403
    assert (
        client_for(annotator_user("dave")).get(f"/api/admin/batches/{batch.pk}/keys/").status_code
        == 403
    )
