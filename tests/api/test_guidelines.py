"""A study's guidelines: versions published by admins, read and acknowledged by annotators,
and the gate on an annotator's writes (docs/annotation.md, "Guidelines")."""

from __future__ import annotations

import pytest

from annotate.models import GUIDELINE_MAX_LENGTH, Annotation, Guideline, GuidelineAcknowledgement
from tests.conftest import client_for, curator_user
from tests.factories import StudyFactory, assigned_batch

pytestmark = pytest.mark.django_db


@pytest.fixture
def study_key(alice):
    batch, (key,) = assigned_batch([alice])
    return batch.study, key


@pytest.fixture
def dave(db):
    return curator_user("dave")


def _admin_url(study) -> str:
    return f"/api/admin/studies/{study.pk}/guidelines/"


def _url(study) -> str:
    return f"/api/studies/{study.pk}/guidelines/"


def _publish(carol, study, text="# Rules\n\nLook for **three** prefixes."):
    response = client_for(carol).post(_admin_url(study), {"text": text}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _ack(user, study, version):
    return client_for(user).post(f"{_url(study)}acknowledge/", {"version": version}, format="json")


# --- admin: versions ---------------------------------------------------------------------


def test_publishing_makes_versions_from_one_listed_newest_first(carol, alice, study_key):
    study, _ = study_key
    first = _publish(carol, study, "v1")
    assert first["version"] == 1
    assert first["created_by"] == "carol"
    assert first["acknowledged_by"] == 0
    _publish(carol, study, "v2")
    _ack(alice, study, 2)
    listed = client_for(carol).get(_admin_url(study)).json()
    assert [(v["version"], v["text"], v["acknowledged_by"]) for v in listed] == [
        (2, "v2", 1),
        (1, "v1", 0),
    ]
    assert set(listed[0]) == {"version", "text", "created_by", "created_at", "acknowledged_by"}


def test_versions_are_per_study(carol):
    one, two = StudyFactory(), StudyFactory()
    _publish(carol, one, "a")
    _publish(carol, one, "b")
    assert _publish(carol, two, "c")["version"] == 1


@pytest.mark.parametrize(
    ("text", "code"),
    [("", "blank"), ("   \n ", "blank"), ("x" * (GUIDELINE_MAX_LENGTH + 1), "max_length")],
)
def test_empty_or_too_long_guidelines_are_a_400_on_text(carol, study_key, text, code):
    study, _ = study_key
    response = client_for(carol).post(_admin_url(study), {"text": text}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert body["fields"]["text"][0]["code"] == code
    assert not Guideline.objects.exists()


def test_admin_guidelines_are_for_admins_only(api_client, alice, dave, study_key):
    study, _ = study_key
    assert api_client.get(_admin_url(study)).status_code in (401, 403)
    for user in (alice, dave):
        assert client_for(user).get(_admin_url(study)).status_code == 403
        response = client_for(user).post(_admin_url(study), {"text": "x"}, format="json")
        assert response.status_code == 403
    assert not Guideline.objects.exists()


def test_admin_guidelines_of_an_unknown_study_are_a_404(carol):
    assert client_for(carol).get("/api/admin/studies/999999/guidelines/").status_code == 404


# --- reading and acknowledging -------------------------------------------------------------


def test_a_study_without_guidelines_reads_as_none(alice, study_key):
    study, _ = study_key
    body = client_for(alice).get(_url(study)).json()
    assert body == {
        "version": None,
        "text": "",
        "created_at": None,
        "acknowledged": False,
        "acknowledged_version": None,
    }


def test_an_assigned_annotator_reads_the_latest_version_and_acknowledges_it(
    carol, alice, study_key
):
    study, _ = study_key
    _publish(carol, study, "v1")
    client = client_for(alice)
    body = client.get(_url(study)).json()
    assert (body["version"], body["text"], body["acknowledged"]) == (1, "v1", False)
    assert body["acknowledged_version"] is None
    response = _ack(alice, study, 1)
    assert response.status_code == 200, response.content
    assert response.json()["acknowledged"] is True
    # Idempotent: a retried acknowledgement records nothing new.
    assert _ack(alice, study, 1).status_code == 200
    assert GuidelineAcknowledgement.objects.filter(user=alice).count() == 1
    _publish(carol, study, "v2")
    body = client.get(_url(study)).json()
    assert (body["version"], body["text"], body["acknowledged"]) == (2, "v2", False)
    assert body["acknowledged_version"] == 1


def test_acknowledging_a_version_that_is_not_the_latest_is_a_409_with_the_current(
    carol, alice, study_key
):
    study, _ = study_key
    _publish(carol, study, "v1")
    _publish(carol, study, "v2")
    response = _ack(alice, study, 1)
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "guidelines_changed"
    assert body["current"]["version"] == 2
    assert body["current"]["text"] == "v2"
    assert not GuidelineAcknowledgement.objects.exists()


def test_acknowledging_guidelines_that_do_not_exist_is_a_409(alice, study_key):
    study, _ = study_key
    response = _ack(alice, study, 1)
    assert response.status_code == 409
    assert response.json()["code"] == "guidelines_changed"


def test_a_bad_version_is_a_400(carol, alice, study_key):
    study, _ = study_key
    _publish(carol, study)
    response = client_for(alice).post(f"{_url(study)}acknowledge/", {}, format="json")
    assert response.status_code == 400
    assert "version" in response.json()["fields"]


def test_an_annotator_not_assigned_to_the_study_gets_a_404(carol, bob, study_key):
    study, _ = study_key
    _publish(carol, study)
    assert client_for(bob).get(_url(study)).status_code == 404
    assert _ack(bob, study, 1).status_code == 404
    assert not GuidelineAcknowledgement.objects.exists()


def test_anonymous_and_roleless_users_are_refused(api_client, carol, mallory, study_key):
    study, _ = study_key
    _publish(carol, study)
    assert api_client.get(_url(study)).status_code in (401, 403)
    assert client_for(mallory).get(_url(study)).status_code == 403


def test_curators_and_admins_read_any_study(carol, dave, study_key):
    study, _ = study_key
    _publish(carol, study, "v1")
    for user in (carol, dave):
        body = client_for(user).get(_url(study)).json()
        assert (body["version"], body["text"]) == (1, "v1")
    assert client_for(dave).get("/api/studies/999999/guidelines/").status_code == 404


# --- the key detail -------------------------------------------------------------------------


def test_the_key_detail_says_the_guideline_version_and_whether_it_was_acknowledged(
    carol, alice, study_key
):
    study, key = study_key
    client = client_for(alice)
    detail = client.get(f"/api/keys/{key.pk}/").json()
    assert detail["study"] == {
        "id": study.pk,
        "guideline_version": None,
        "guidelines_acknowledged": False,
        "suggestions_enabled": True,
        "show_scores": False,
    }
    _publish(carol, study)
    assert client.get(f"/api/keys/{key.pk}/").json()["study"]["guideline_version"] == 1
    _ack(alice, study, 1)
    detail = client.get(f"/api/keys/{key.pk}/").json()
    assert detail["study"] == {
        "id": study.pk,
        "guideline_version": 1,
        "guidelines_acknowledged": True,
        "suggestions_enabled": True,
        "show_scores": False,
    }
    _publish(carol, study)
    detail = client.get(f"/api/keys/{key.pk}/").json()
    assert detail["study"]["guideline_version"] == 2
    assert detail["study"]["guidelines_acknowledged"] is False


# --- enforcement and the version recorded on writes ----------------------------------------


def _save_note(user, key, note="n", version=1):
    return client_for(user).put(
        f"/api/keys/{key.pk}/annotation/", {"note": note, "version": version}, format="json"
    )


def _add_pattern(user, key, version):
    body = {"description": "d", "kind": "shallow", "prefix_ranks": [1, 2, 3], "version": version}
    return client_for(user).post(f"/api/keys/{key.pk}/patterns/", body, format="json")


def test_writes_are_refused_until_the_guidelines_are_acknowledged(carol, alice, study_key):
    study, key = study_key
    _publish(carol, study)
    for response in (
        _save_note(alice, key),
        _add_pattern(alice, key, 1),
        client_for(alice).post(f"/api/keys/{key.pk}/submit/", {"version": 1}, format="json"),
    ):
        assert response.status_code == 403, response.content
        assert response.json()["code"] == "guidelines_not_acknowledged"
    assert not Annotation.objects.exists()
    _ack(alice, study, 1)
    assert _save_note(alice, key).status_code == 200


def test_a_newer_version_does_not_block_writes_once_one_was_acknowledged(carol, alice, study_key):
    study, key = study_key
    _publish(carol, study)
    _ack(alice, study, 1)
    _publish(carol, study)
    response = _save_note(alice, key)
    assert response.status_code == 200, response.content
    # What is recorded is the version in force (the latest), not the one acknowledged.
    assert Annotation.objects.get().guideline_version == 2


def test_every_write_records_the_latest_guideline_version(carol, alice, study_key):
    study, key = study_key
    version = _save_note(alice, key, "no guidelines yet").json()["version"]
    assert Annotation.objects.get().guideline_version is None
    _publish(carol, study)
    _ack(alice, study, 1)
    version = _add_pattern(alice, key, version).json()["version"]
    assert Annotation.objects.get().guideline_version == 1
    _publish(carol, study)
    client = client_for(alice)
    response = client.post(f"/api/keys/{key.pk}/submit/", {"version": version}, format="json")
    assert response.status_code == 200
    assert Annotation.objects.get().guideline_version == 2


def test_a_first_write_records_the_version_on_the_new_annotation(carol, alice, study_key):
    study, key = study_key
    _publish(carol, study)
    _ack(alice, study, 1)
    assert _add_pattern(alice, key, 1).status_code == 201
    assert Annotation.objects.get().guideline_version == 1


def test_a_study_without_guidelines_needs_no_acknowledgement(alice, study_key):
    _, key = study_key
    assert _save_note(alice, key).status_code == 200


# --- queries ------------------------------------------------------------------------------


def test_guidelines_cost_the_key_detail_and_the_writes_no_query(carol, alice, study_key):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    study, key = study_key
    client = client_for(alice)
    version = _save_note(alice, key).json()["version"]
    with CaptureQueriesContext(connection) as before:
        client.get(f"/api/keys/{key.pk}/")
    with CaptureQueriesContext(connection) as save_before:
        version = _save_note(alice, key, "a", version).json()["version"]
    for _ in range(3):
        _publish(carol, study)
    _ack(alice, study, 3)
    with CaptureQueriesContext(connection) as after:
        client.get(f"/api/keys/{key.pk}/")
    with CaptureQueriesContext(connection) as save_after:
        assert _save_note(alice, key, "b", version).status_code == 200
    assert len(after.captured_queries) == len(before.captured_queries) == 7
    assert len(save_after.captured_queries) == len(save_before.captured_queries)


def test_the_admin_list_costs_the_same_queries_for_one_or_many_versions(carol, alice, study_key):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    study, _ = study_key
    _publish(carol, study)
    client = client_for(carol)
    with CaptureQueriesContext(connection) as one:
        client.get(_admin_url(study))
    for version in range(2, 6):
        _publish(carol, study)
        _ack(alice, study, version)
    with CaptureQueriesContext(connection) as many:
        assert len(client.get(_admin_url(study)).json()) == 5
    assert len(one.captured_queries) == len(many.captured_queries)


def test_a_write_outside_the_api_leaves_the_recorded_version_as_it_is(alice, study_key):
    from annotate.services.annotations import annotation_get_or_create_for, annotation_save

    _, key = study_key
    annotation = annotation_get_or_create_for(key=key, annotator=alice, guideline_version=3)
    assert annotation.guideline_version == 3
    annotation = annotation_save(annotation=annotation, actor=alice, note="x", version=1)
    annotation.refresh_from_db()
    assert annotation.guideline_version == 3
    annotation_save(annotation=annotation, actor=alice, note="y", version=2, guideline_version=None)
    annotation.refresh_from_db()
    assert annotation.guideline_version is None
