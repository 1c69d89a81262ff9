"""Check keys served unannounced through next-key (issue 13 item 4)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.checks import check_serve
from annotate.models import Annotation, CheckServing, GoldAnnotation
from tests.conftest import client_for
from tests.factories import AnnotationFactory, assigned_batch, key_with_prefixes

pytestmark = pytest.mark.django_db


def _gold_check(key, *, status=GoldAnnotation.Status.SUBMITTED, is_check=True):
    return GoldAnnotation.objects.create(key=key, status=status, is_check=is_check)


@pytest.fixture
def setup(alice):
    """alice has a batch of 3 keys; the study serves checks at every slot and has two
    submitted gold check keys outside her assignment."""
    batch, keys = assigned_batch([alice], n_keys=3)
    study = batch.study
    study.check_rate = 1.0
    study.save()
    checks = [key_with_prefixes(25, study=study) for _ in range(2)]
    for key in checks:
        _gold_check(key)
    return batch, keys, checks


def _next(client) -> dict:
    response = client.get("/api/next-key/")
    assert response.status_code == 200, response.content
    return response.json()


def _submit(client, key_id, **extra) -> dict:
    detail = client.get(f"/api/keys/{key_id}/")
    assert detail.status_code == 200, detail.content
    version = detail.json()["annotation"]["version"]
    response = client.post(
        f"/api/keys/{key_id}/submit/", {"version": version, **extra}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_a_drawn_slot_serves_a_check_key_under_the_assignment_being_worked(alice, setup):
    batch, _keys, checks = setup
    client = client_for(alice)
    served = _next(client)
    assert served["key_id"] in {c.pk for c in checks}
    assert set(served) == {"key_id", "assignment_id"}
    assert served["assignment_id"] == batch.assignments.get().pk
    assert CheckServing.objects.filter(annotator=alice, key_id=served["key_id"]).count() == 1
    # Not submitted yet: asking again resumes it, and serves nothing new.
    assert _next(client) == served
    assert CheckServing.objects.filter(annotator=alice).count() == 1


def test_the_key_detail_of_a_check_key_has_the_shape_of_any_key(alice, setup):
    _, keys, _ = setup
    client = client_for(alice)
    served = _next(client)
    check = client.get(f"/api/keys/{served['key_id']}/").json()
    normal = client.get(f"/api/keys/{keys[0].pk}/").json()
    assert set(check) == set(normal)
    assert set(check["annotation"]) == set(normal["annotation"])
    assert "check" not in str(check).lower() and "gold" not in str(check).lower()


def test_a_submitted_check_annotation_is_marked_and_left_out_of_the_progress(alice, setup):
    _, keys, checks = setup
    client = client_for(alice)
    served = _next(client)
    _submit(client, served["key_id"])
    annotation = Annotation.objects.get(annotator=alice, key_id=served["key_id"])
    assert annotation.is_check is True
    assignments = client.get("/api/assignments/").json()
    assert [(a["keys_total"], a["keys_submitted"]) for a in assignments] == [(3, 0)]
    # Slot 1 draws again: the second check key, never the first a second time.
    second = _next(client)
    assert second["key_id"] in {c.pk for c in checks} - {served["key_id"]}
    _submit(client, second["key_id"])
    # No check key left: the regular keys, in order; their annotations are not checks.
    third = _next(client)
    assert third["key_id"] == keys[0].pk
    _submit(client, third["key_id"])
    assert Annotation.objects.get(annotator=alice, key=keys[0]).is_check is False
    assert CheckServing.objects.filter(annotator=alice).count() == 2


def test_never_served_to_an_annotator_who_annotated_the_key_or_has_it_assigned(alice, setup):
    _batch, keys, checks = setup
    AnnotationFactory(key=checks[0], annotator=alice, status="draft")
    _gold_check(keys[1])  # a check key in her own assignment
    served = _next(client_for(alice))
    assert served["key_id"] == checks[1].pk


def test_drafts_and_non_check_gold_are_never_served(alice, setup):
    _, keys, checks = setup
    GoldAnnotation.objects.filter(key=checks[0]).update(status=GoldAnnotation.Status.DRAFT)
    GoldAnnotation.objects.filter(key=checks[1]).update(is_check=False)
    assert _next(client_for(alice))["key_id"] == keys[0].pk
    assert not CheckServing.objects.exists()


def test_a_study_without_checks_serves_none(alice, setup):
    batch, keys, _ = setup
    batch.study.check_rate = 0.0
    batch.study.save()
    assert _next(client_for(alice))["key_id"] == keys[0].pk
    assert not CheckServing.objects.exists()


def test_nothing_is_served_once_the_regular_keys_are_done(alice, setup):
    _, keys, _ = setup
    for key in keys:
        AnnotationFactory(key=key, annotator=alice, status="submitted")
    assert client_for(alice).get("/api/next-key/").status_code == 204
    assert not CheckServing.objects.exists()


def test_another_annotator_cannot_open_or_write_someone_elses_check(alice, bob, setup):
    served = _next(client_for(alice))
    key_id = served["key_id"]
    client = client_for(bob)
    assert client.get(f"/api/keys/{key_id}/").status_code == 404
    assert client.post(f"/api/keys/{key_id}/submit/", {"version": 1}).status_code == 404
    put = client.put(f"/api/keys/{key_id}/annotation/", {"note": "x", "version": 1})
    assert put.status_code == 404
    assert not Annotation.objects.filter(annotator=bob).exists()


def test_a_check_key_is_not_open_before_it_is_served(alice, setup):
    _, _, checks = setup
    assert client_for(alice).get(f"/api/keys/{checks[0].pk}/").status_code == 404


def test_serving_the_same_slot_twice_records_one_serving(alice, setup):
    batch, _, _ = setup
    study = batch.study
    args = {
        "study_id": study.pk,
        "study_seed": study.seed,
        "rate": 1.0,
        "user_id": alice.pk,
        "assignment_id": batch.assignments.get().pk,
    }
    first, second = check_serve(**args), check_serve(**args)
    assert first == second
    assert CheckServing.objects.filter(annotator=alice).count() == 1
    assert CheckServing.objects.get().slot == 0


def test_next_key_costs_the_same_queries_for_2_or_20_check_keys(alice, setup):
    batch, _, _ = setup
    client = client_for(alice)
    with CaptureQueriesContext(connection) as few:
        _next(client)
    CheckServing.objects.all().delete()
    for _ in range(18):
        GoldAnnotation.objects.create(
            key=key_with_prefixes(3, study=batch.study),
            status=GoldAnnotation.Status.SUBMITTED,
            is_check=True,
        )
    with CaptureQueriesContext(connection) as many:
        _next(client)
    assert len(few) == len(many)
