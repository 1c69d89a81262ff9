"""Active seconds sent with the autosave and the submit (issue 13 item 5)."""

from __future__ import annotations

import pytest

from annotate.models import Annotation
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
