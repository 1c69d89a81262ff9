import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import Annotation
from tests.conftest import client_for
from tests.factories import AnnotationFactory, AssignmentFactory, BatchFactory, KeyFactory

pytestmark = pytest.mark.django_db


def _batch(n_keys: int, **kwargs):
    keys = KeyFactory.create_batch(n_keys)
    return BatchFactory(keys=keys, **kwargs), keys


def test_annotator_with_no_assignment_sees_an_empty_list(alice):
    response = client_for(alice).get("/api/assignments/")
    assert response.status_code == 200
    assert response.json() == []


def test_annotator_sees_her_assignments_with_progress(alice, bob):
    batch, keys = _batch(4, name="layer 1")
    AssignmentFactory(batch=batch, annotator=alice)
    AssignmentFactory(batch=batch, annotator=bob)
    AnnotationFactory(key=keys[0], annotator=alice, status=Annotation.Status.SUBMITTED)
    AnnotationFactory(key=keys[1], annotator=alice, status=Annotation.Status.DRAFT)
    AnnotationFactory(key=keys[2], annotator=bob, status=Annotation.Status.SUBMITTED)
    AnnotationFactory(key=keys[3], annotator=bob, status=Annotation.Status.SUBMITTED)

    rows = client_for(alice).get("/api/assignments/").json()

    assert len(rows) == 1
    assert rows[0]["batch_name"] == "layer 1"
    assert rows[0]["study_name"] == batch.study.name
    assert rows[0]["keys_total"] == 4
    assert rows[0]["keys_submitted"] == 1


def test_annotator_never_sees_another_annotators_assignments(alice, bob):
    batch, _ = _batch(2)
    AssignmentFactory(batch=batch, annotator=bob)
    assert client_for(alice).get("/api/assignments/").json() == []


def test_a_user_without_a_role_cannot_list_assignments(mallory):
    response = client_for(mallory).get("/api/assignments/")
    assert response.status_code == 403


def test_listing_assignments_costs_the_same_queries_for_one_or_many(alice):
    batch, _ = _batch(3)
    AssignmentFactory(batch=batch, annotator=alice)
    client = client_for(alice)
    with CaptureQueriesContext(connection) as one:
        client.get("/api/assignments/")
    for _ in range(5):
        more, _ = _batch(3)
        AssignmentFactory(batch=more, annotator=alice)
    with CaptureQueriesContext(connection) as six:
        rows = client.get("/api/assignments/").json()
    assert len(rows) == 6
    assert len(six.captured_queries) == len(one.captured_queries)
