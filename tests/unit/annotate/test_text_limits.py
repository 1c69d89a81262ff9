"""Free text has a ceiling at every layer: the API (a 400 naming the field), the services
(a ``ServiceError`` for any other caller, imports included) and the database (a check
constraint, for a write that goes around both)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from annotate.models import NOTE_MAX_LENGTH, PATTERN_DESCRIPTION_MAX_LENGTH, Annotation, Pattern
from annotate.services import ServiceError
from annotate.services.annotations import (
    NOTE_TOO_LONG,
    annotation_get_or_create_for,
    annotation_save,
)
from annotate.services.patterns import (
    PATTERN_DESCRIPTION_TOO_LONG,
    pattern_create,
    pattern_update,
)
from tests.conftest import client_for
from tests.errors import field_errors
from tests.factories import AnnotationFactory, PatternFactory, assigned_batch

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(alice):
    _, (key,) = assigned_batch([alice], n_prefixes=3)
    return annotation_get_or_create_for(key=key, annotator=alice)


def test_the_database_refuses_a_note_over_the_limit(alice):
    AnnotationFactory(note="x" * NOTE_MAX_LENGTH)
    with pytest.raises(IntegrityError), transaction.atomic():
        AnnotationFactory(note="x" * (NOTE_MAX_LENGTH + 1))


def test_the_database_refuses_a_pattern_description_over_the_limit():
    PatternFactory(description="x" * PATTERN_DESCRIPTION_MAX_LENGTH)
    with pytest.raises(IntegrityError), transaction.atomic():
        PatternFactory(description="x" * (PATTERN_DESCRIPTION_MAX_LENGTH + 1))


def test_the_services_refuse_a_note_over_the_limit_with_a_message(alice, draft):
    with pytest.raises(ServiceError) as error:
        annotation_save(annotation=draft, actor=alice, note="x" * (NOTE_MAX_LENGTH + 1), version=1)
    assert error.value.message == NOTE_TOO_LONG.format(n=NOTE_MAX_LENGTH)
    draft.refresh_from_db()
    assert (draft.note, draft.version) == ("", 1)


def test_the_services_refuse_a_description_over_the_limit_with_a_message(alice, draft):
    prefixes = list(draft.key.prefixes.order_by("rank"))
    long = "x" * (PATTERN_DESCRIPTION_MAX_LENGTH + 1)
    with pytest.raises(ServiceError) as error:
        pattern_create(
            annotation=draft,
            actor=alice,
            description=long,
            kind="shallow",
            prefixes=prefixes,
            version=1,
        )
    assert error.value.message == PATTERN_DESCRIPTION_TOO_LONG.format(
        n=PATTERN_DESCRIPTION_MAX_LENGTH
    )
    made = pattern_create(
        annotation=draft,
        actor=alice,
        description="ok",
        kind="shallow",
        prefixes=prefixes,
        version=1,
    )
    with pytest.raises(ServiceError):
        pattern_update(pattern=made.pattern, actor=alice, version=2, description=long)
    assert Pattern.objects.get().description == "ok"


@pytest.mark.parametrize(
    ("method", "suffix", "field", "limit", "body"),
    [
        ("put", "annotation/", "note", NOTE_MAX_LENGTH, {"version": 1}),
        (
            "post",
            "patterns/",
            "description",
            PATTERN_DESCRIPTION_MAX_LENGTH,
            {"kind": "shallow", "prefix_ranks": [1, 2, 3], "version": 1},
        ),
    ],
)
def test_the_api_answers_a_400_naming_the_field_and_its_limit(
    alice, draft, method, suffix, field, limit, body
):
    client = client_for(alice)
    url = f"/api/keys/{draft.key_id}/{suffix}"
    response = getattr(client, method)(url, {**body, field: "x" * (limit + 1)}, format="json")
    assert response.status_code == 400, response.content
    assert field_errors(response) == {
        field: [f"Ensure this field has no more than {limit} characters."]
    }
    assert not Annotation.objects.filter(note__startswith="xxx").exists()
    assert not Pattern.objects.exists()
    ok = getattr(client, method)(url, {**body, field: "x" * limit}, format="json")
    assert ok.status_code in {200, 201}, ok.content


def test_a_batch_name_over_the_limit_is_a_400_naming_it(carol):
    _, (key,) = assigned_batch([], n_prefixes=1)
    response = client_for(carol).post(
        f"/api/admin/studies/{key.study_id}/batches/",
        {"name": "b" * 201, "mode": "layer", "layers": [1]},
        format="json",
    )
    assert response.status_code == 400
    assert field_errors(response) == {
        "name": ["Ensure this field has no more than 200 characters."]
    }
