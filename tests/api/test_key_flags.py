"""An annotator's flag on a key (docs/annotation.md, "The workspace": Flags)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import KeyFlag
from tests.conftest import client_for
from tests.errors import field_errors
from tests.factories import assigned_batch, key_with_prefixes

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(alice, bob):
    _, (key,) = assigned_batch([alice, bob])
    return key


def _flag(client, key, **body):
    return client.put(f"/api/keys/{key.pk}/flag/", body, format="json")


def test_flag_create_replace_show_and_remove(alice, key):
    client = client_for(alice)
    assert client.get(f"/api/keys/{key.pk}/").json()["flag"] is None
    response = _flag(client, key, reason="unclear", note="")
    assert response.status_code == 200, response.content
    assert response.json() == {"reason": "unclear", "note": ""}
    response = _flag(client, key, reason="other", note="duplicate of L1:3")
    assert response.json() == {"reason": "other", "note": "duplicate of L1:3"}
    assert KeyFlag.objects.filter(key=key, annotator=alice).count() == 1
    assert client.get(f"/api/keys/{key.pk}/").json()["flag"] == {
        "reason": "other",
        "note": "duplicate of L1:3",
    }
    assert client.delete(f"/api/keys/{key.pk}/flag/").status_code == 204
    assert client.delete(f"/api/keys/{key.pk}/flag/").status_code == 204  # a retry
    assert client.get(f"/api/keys/{key.pk}/").json()["flag"] is None


def test_a_note_is_needed_when_the_reason_is_other(alice, key):
    response = _flag(client_for(alice), key, reason="other", note="  ")
    assert response.status_code == 400
    assert "note" in field_errors(response)


def test_an_unknown_reason_is_refused(alice, key):
    response = _flag(client_for(alice), key, reason="boring")
    assert response.status_code == 400
    assert "reason" in field_errors(response)
    response = _flag(client_for(alice), key, reason="unclear", note="x" * 20_001)
    assert response.status_code == 400
    assert "note" in field_errors(response)


def test_nobody_sees_another_annotators_flag(alice, bob, key):
    _flag(client_for(alice), key, reason="offensive", note="slur in #3")
    assert client_for(bob).get(f"/api/keys/{key.pk}/").json()["flag"] is None
    _flag(client_for(bob), key, reason="unclear")
    assert client_for(alice).get(f"/api/keys/{key.pk}/").json()["flag"] == {
        "reason": "offensive",
        "note": "slur in #3",
    }
    assert KeyFlag.objects.filter(key=key).count() == 2


def test_an_unassigned_key_cannot_be_flagged(alice, key):
    other = key_with_prefixes(3, study=key.study)
    assert _flag(client_for(alice), other, reason="unclear").status_code == 404
    assert client_for(alice).delete(f"/api/keys/{other.pk}/flag/").status_code == 404
    assert not KeyFlag.objects.exists()


def test_the_flag_costs_the_key_detail_no_query(alice, key):
    client = client_for(alice)
    client.get(f"/api/keys/{key.pk}/")  # the session's first read
    with CaptureQueriesContext(connection) as without:
        client.get(f"/api/keys/{key.pk}/")
    _flag(client, key, reason="unclear")
    with CaptureQueriesContext(connection) as with_flag:
        client.get(f"/api/keys/{key.pk}/")
    assert len(without) == len(with_flag)
