"""The gold's audit trail (docs/annotation.md, "The audit trail"): every gold write through
the review API leaves a ``GoldEvent`` with its actor, action, the gold's state before and
after, and for an adoption the annotator's annotation and pattern it came from; a refused
write leaves none.

alice and bob annotate; cora is a curator; carol is the admin.
"""

from __future__ import annotations

import uuid

import pytest

from annotate.models import GoldEvent
from tests.conftest import client_for
from tests.factories import annotate_key, assigned_batch

pytestmark = pytest.mark.django_db


@pytest.fixture
def curator(cora):
    return client_for(cora)


def _key(alice, bob):
    _, (key,) = assigned_batch([alice, bob], n_prefixes=5)
    source = annotate_key(key, alice, [("semantic", [1, 2, 3])])
    return key, source, source.patterns.get()


def _add(client, key, version, **extra):
    body = {
        "version": version,
        "client_id": str(uuid.uuid4()),
        "description": "numbers",
        "kind": "shallow",
        "prefix_ranks": [1, 2, 3],
        **extra,
    }
    response = client.post(f"/api/review/keys/{key.pk}/gold/patterns/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def _events(key):
    return list(GoldEvent.objects.filter(gold__key=key).select_related("actor").order_by("id"))


def test_the_first_write_records_the_gold_made_and_the_pattern_added(alice, bob, curator):
    key, _, _ = _key(alice, bob)
    gold = _add(curator, key, 0)
    made, added = _events(key)
    assert (made.action, made.actor.username, made.before) == ("create", "cora", None)
    assert made.after["version"] == 1
    assert made.after["patterns"] == []
    assert added.action == "pattern_create"
    assert added.before == made.after
    assert added.after["version"] == gold["version"]
    (pattern,) = added.after["patterns"]
    assert (pattern["description"], pattern["kind"], pattern["prefix_ranks"]) == (
        "numbers",
        "shallow",
        [1, 2, 3],
    )
    assert pattern["source"] == "written"
    assert added.source is None
    assert added.at >= made.at


def test_an_adoption_records_its_source_annotation_and_pattern(alice, bob, curator):
    key, annotation, source = _key(alice, bob)
    _add(curator, key, 0, source_pattern_id=source.pk, description="edited", kind="semantic")
    adopted = _events(key)[-1]
    assert adopted.action == "adopt"
    assert adopted.source == {
        "annotation_id": annotation.pk,
        "annotator": "alice",
        "annotation_version": annotation.version,
        "pattern_id": source.pk,
    }
    (pattern,) = adopted.after["patterns"]
    assert (pattern["source"], pattern["source_annotator"], pattern["source_pattern_id"]) == (
        "adopted",
        "alice",
        source.pk,
    )
    assert pattern["description"] == "edited"


def test_save_pattern_update_and_delete_record_before_and_after(alice, bob, curator):
    key, _, _ = _key(alice, bob)
    gold = _add(curator, key, 0)
    url = f"/api/review/keys/{key.pk}/gold/"
    pattern_id = gold["patterns"][0]["id"]
    gold = curator.patch(url, {"version": 1, "note": "fine", "is_check": True}, format="json")
    assert gold.status_code == 200, gold.content
    saved = _events(key)[-1]
    assert saved.action == "save"
    assert (saved.before["note"], saved.before["is_check"], saved.before["version"]) == (
        "",
        False,
        1,
    )
    assert (saved.after["note"], saved.after["is_check"], saved.after["version"]) == (
        "fine",
        True,
        2,
    )
    response = curator.patch(
        url + f"patterns/{pattern_id}/",
        {"version": 2, "description": "digits", "prefix_ranks": [2, 3, 4]},
        format="json",
    )
    assert response.status_code == 200, response.content
    updated = _events(key)[-1]
    assert updated.action == "pattern_update"
    assert updated.before["patterns"][0]["prefix_ranks"] == [1, 2, 3]
    assert updated.after["patterns"][0]["prefix_ranks"] == [2, 3, 4]
    assert updated.after["patterns"][0]["description"] == "digits"
    assert curator.delete(url + f"patterns/{pattern_id}/?version=3").status_code == 200
    deleted = _events(key)[-1]
    assert deleted.action == "pattern_delete"
    assert [p["id"] for p in deleted.before["patterns"]] == [pattern_id]
    assert deleted.after["patterns"] == []
    assert deleted.after["version"] == 4


def test_submit_and_reopen_are_recorded_with_who_made_them(alice, bob, curator, carol):
    key, _, _ = _key(alice, bob)
    _add(curator, key, 0)
    url = f"/api/review/keys/{key.pk}/gold/"
    assert curator.post(url + "submit/", {"version": 1}, format="json").status_code == 200
    # A retried submit changes nothing and records nothing.
    assert curator.post(url + "submit/", {"version": 1}, format="json").status_code == 200
    assert client_for(carol).post(url + "reopen/", {"version": 2}, format="json").status_code == 200
    *_, submitted, reopened = _events(key)
    assert (submitted.action, submitted.actor.username) == ("submit", "cora")
    assert (submitted.before["status"], submitted.after["status"]) == ("draft", "submitted")
    assert (reopened.action, reopened.actor.username) == ("reopen", "carol")
    assert (reopened.before["status"], reopened.after["status"]) == ("submitted", "draft")
    assert reopened.after["curator"] == "carol"
    assert len(_events(key)) == 4  # create, pattern_create, submit, reopen


def test_a_refused_write_records_nothing(alice, bob, curator):
    key, _, _ = _key(alice, bob)
    _add(curator, key, 0)
    url = f"/api/review/keys/{key.pk}/gold/"
    n = len(_events(key))
    assert curator.patch(url, {"version": 0, "note": "late"}, format="json").status_code == 409
    response = curator.post(
        url + "patterns/",
        {"version": 1, "description": "x", "kind": "shallow", "prefix_ranks": [1, 2]},
        format="json",
    )
    assert response.status_code == 400
    assert len(_events(key)) == n


def test_a_retried_pattern_create_records_one_event(alice, bob, curator):
    key, _, _ = _key(alice, bob)
    client_id = str(uuid.uuid4())
    _add(curator, key, 0, client_id=client_id)
    response = curator.post(
        f"/api/review/keys/{key.pk}/gold/patterns/",
        {
            "version": 0,
            "client_id": client_id,
            "description": "numbers",
            "kind": "shallow",
            "prefix_ranks": [1, 2, 3],
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    assert [e.action for e in _events(key)] == ["create", "pattern_create"]


def test_a_first_write_that_is_a_save_records_the_gold_made_then_saved(alice, bob, curator):
    key, _, _ = _key(alice, bob)
    response = curator.patch(
        f"/api/review/keys/{key.pk}/gold/", {"version": 0, "note": "to do"}, format="json"
    )
    assert response.status_code == 200, response.content
    made, saved = _events(key)
    assert (made.action, saved.action) == ("create", "save")
    assert saved.before == made.after
    assert (saved.before["note"], saved.after["note"]) == ("", "to do")
