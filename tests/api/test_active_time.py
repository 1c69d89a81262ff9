"""Active seconds sent with the autosave and the submit: written only with a versioned
write that is made, in its audit record; a strict JSON number up to 30 days."""

from __future__ import annotations

import pytest

from annotate.models import Annotation, AnnotationEvent
from tests.conftest import client_for
from tests.errors import field_errors
from tests.factories import assigned_batch

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(alice):
    _, (key,) = assigned_batch([alice])
    return key


def _save(client, key, **body):
    return client.put(f"/api/keys/{key.pk}/annotation/", body, format="json")


def test_the_autosave_records_the_largest_total_it_was_sent(alice, key):
    client = client_for(alice)
    assert client.get(f"/api/keys/{key.pk}/").json()["annotation"]["active_seconds"] == 0
    state = _save(client, key, note="a", version=1, active_seconds=12.5).json()
    assert state["active_seconds"] == 12.5
    # A retry of an older save (same note: a no-op) cannot lower or double it.
    state = _save(client, key, note="a", version=1, active_seconds=12.5).json()
    assert state["active_seconds"] == 12.5
    state = _save(client, key, note="ab", version=state["version"], active_seconds=3).json()
    assert state["active_seconds"] == 12.5
    assert client.get(f"/api/keys/{key.pk}/").json()["annotation"]["active_seconds"] == 12.5
    # Without it, nothing changes.
    state = _save(client, key, note="abc", version=state["version"]).json()
    assert Annotation.objects.get().active_seconds == 12.5


def test_the_submit_carries_the_final_total(alice, key):
    client = client_for(alice)
    response = client.post(
        f"/api/keys/{key.pk}/submit/", {"version": 1, "active_seconds": 40}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["active_seconds"] == 40
    assert Annotation.objects.get().active_seconds == 40


@pytest.mark.parametrize("bad", [-1, "soon", 31 * 24 * 3600, None, "NaN", "Infinity"])
def test_a_bad_total_is_a_400_on_the_field(alice, key, bad):
    client = client_for(alice)
    response = _save(client, key, note="a", version=1, active_seconds=bad)
    assert response.status_code == 400, response.content
    assert "active_seconds" in field_errors(response)
    assert not Annotation.objects.exists()


@pytest.mark.parametrize("bad", [True, False, "12", "12.5", [12], {"s": 12}])
def test_a_total_that_is_not_a_json_number_is_a_400_naming_the_field(alice, key, bad):
    client = client_for(alice)
    response = _save(client, key, note="a", version=1, active_seconds=bad)
    assert response.status_code == 400, response.content
    assert field_errors(response) == {
        "active_seconds": ["A number is required (not a string or a boolean)."]
    }
    submit = client.post(
        f"/api/keys/{key.pk}/submit/", {"version": 1, "active_seconds": bad}, format="json"
    )
    assert submit.status_code == 400, submit.content
    assert "active_seconds" in field_errors(submit)
    assert not Annotation.objects.exists()


def test_the_cap_is_thirty_days(alice, key):
    client = client_for(alice)
    over = _save(client, key, note="a", version=1, active_seconds=2_592_000.5)
    assert over.status_code == 400, over.content
    assert "active_seconds" in field_errors(over)
    state = _save(client, key, note="a", version=1, active_seconds=2_592_000).json()
    assert state["active_seconds"] == 2_592_000


def _draft(client, key, seconds: float) -> dict:
    state = _save(client, key, note="a", version=1, active_seconds=seconds)
    assert state.status_code == 200, state.content
    return state.json()


def test_a_stale_write_records_no_active_time(alice, key):
    client = client_for(alice)
    state = _draft(client, key, 10)
    events = AnnotationEvent.objects.count()
    stale_submit = client.post(
        f"/api/keys/{key.pk}/submit/", {"version": 1, "active_seconds": 500}, format="json"
    )
    assert stale_submit.status_code == 409, stale_submit.content
    assert stale_submit.json()["current"]["active_seconds"] == 10
    stale_save = _save(client, key, note="b", version=1, active_seconds=600)
    assert stale_save.status_code == 409, stale_save.content
    # Same note, more time, a stale version: a new write, not a retry, so refused too.
    stale_time = _save(client, key, note="a", version=1, active_seconds=700)
    assert stale_time.status_code == 409, stale_time.content
    annotation = Annotation.objects.get()
    assert (annotation.active_seconds, annotation.version) == (10, state["version"])
    assert AnnotationEvent.objects.count() == events


def test_active_time_is_written_with_a_version_and_an_audit_record(alice, key):
    client = client_for(alice)
    state = _draft(client, key, 10)
    assert AnnotationEvent.objects.order_by("id").last().after["active_seconds"] == 10
    # Leaving a draft sends its note as it is with the time: a versioned write.
    more = _save(client, key, note="a", version=state["version"], active_seconds=25).json()
    assert (more["active_seconds"], more["version"]) == (25, state["version"] + 1)
    event = AnnotationEvent.objects.order_by("id").last()
    assert (event.action, event.before["active_seconds"], event.after["active_seconds"]) == (
        "save",
        10,
        25,
    )
    done = client.post(
        f"/api/keys/{key.pk}/submit/",
        {"version": more["version"], "active_seconds": 40},
        format="json",
    ).json()
    assert (done["status"], done["active_seconds"], done["version"]) == (
        "submitted",
        40,
        more["version"] + 1,
    )
    event = AnnotationEvent.objects.order_by("id").last()
    assert (event.action, event.before["active_seconds"], event.after["active_seconds"]) == (
        "submit",
        25,
        40,
    )


def test_a_submitted_annotations_active_time_is_final_until_it_is_reopened(alice, key):
    client = client_for(alice)
    state = _draft(client, key, 10)
    done = client.post(
        f"/api/keys/{key.pk}/submit/", {"version": state["version"], "active_seconds": 40}, "json"
    ).json()
    events = AnnotationEvent.objects.count()
    # A save that would only add time: a no-op, nothing recorded.
    same = _save(client, key, note="a", version=done["version"], active_seconds=1000)
    assert same.status_code == 200, same.content
    assert (same.json()["active_seconds"], same.json()["version"]) == (40, done["version"])
    # One that changes the note: refused, nothing recorded.
    other = _save(client, key, note="b", version=done["version"], active_seconds=1000)
    assert other.status_code == 409, other.content
    # A retried submit with a larger total records nothing either.
    again = client.post(
        f"/api/keys/{key.pk}/submit/", {"version": done["version"], "active_seconds": 90}, "json"
    )
    assert again.json()["active_seconds"] == 40
    assert Annotation.objects.get().active_seconds == 40
    assert AnnotationEvent.objects.count() == events
    # Reopened, it counts on from there.
    reopened = client.post(
        f"/api/keys/{key.pk}/reopen/", {"version": done["version"]}, format="json"
    ).json()
    later = _save(client, key, note="a", version=reopened["version"], active_seconds=70).json()
    assert later["active_seconds"] == 70
