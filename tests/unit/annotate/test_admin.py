"""Django's own admin (/admin/): it may look at the annotation domain, never write around
the services, and no page of it lists a whole table in a <select>."""

from __future__ import annotations

import pytest
from django import forms
from django.contrib import admin
from django.contrib.admin.widgets import ForeignKeyRawIdWidget, ManyToManyRawIdWidget
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory

from annotate.models import (
    Annotation,
    AnnotationEvent,
    CheckServing,
    GoldAnnotation,
    GoldEvent,
    Guideline,
    Key,
    KeyFlag,
    Pattern,
    TriggerPrefix,
)
from annotate.services.annotations import annotation_get_or_create_for, annotation_save
from annotate.services.patterns import pattern_create
from reports.models import ExportJob
from tests.factories import StudyFactory, assigned_batch

pytestmark = pytest.mark.django_db

# The apps whose admin screens this project writes (auth's are Django's own).
PROJECT_APPS = {"annotate", "mining", "reports"}
READ_ONLY = [
    Annotation,
    Pattern,
    AnnotationEvent,
    GoldAnnotation,
    GoldEvent,
    KeyFlag,
    Guideline,
    CheckServing,
]
MANY_ROWS = 2_000
# Bytes. With 2,000 rows behind each foreign key the change pages were 104-190 KB, each
# <select> a few thousand <option>s (4.3 MB on a real study); without them, about 20 KB.
PAGE_BUDGET = 100_000


@pytest.fixture
def admin_client(carol) -> Client:
    client = Client()
    client.force_login(carol)
    return client


@pytest.fixture
def worked_key(alice):
    """alice's annotation of a key, made through the services: a note and a pattern."""
    _, (key,) = assigned_batch([alice], n_prefixes=5)
    annotation = annotation_get_or_create_for(key=key, annotator=alice)
    annotation = annotation_save(annotation=annotation, actor=alice, note="mine", version=1)
    result = pattern_create(
        annotation=annotation,
        actor=alice,
        description="numbers",
        kind="shallow",
        prefixes=list(key.prefixes.order_by("rank")[:3]),
        version=annotation.version,
    )
    return result.annotation, result.pattern


@pytest.mark.parametrize("model", READ_ONLY, ids=lambda m: m.__name__)
def test_a_superuser_may_view_but_not_add_change_or_delete(carol, model):
    model_admin = admin.site._registry[model]
    request = RequestFactory().get("/admin/")
    request.user = carol
    assert model_admin.has_view_permission(request)
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)


def test_an_annotation_changed_through_the_admin_is_refused_and_unchanged(admin_client, worked_key):
    annotation, _ = worked_key
    events = AnnotationEvent.objects.filter(annotation=annotation).count()
    url = f"/admin/annotate/annotation/{annotation.pk}/change/"

    page = admin_client.get(url)
    assert page.status_code == 200
    assert b"mine" in page.content  # viewing stays

    response = admin_client.post(
        url,
        {
            "key": annotation.key_id,
            "annotator": annotation.annotator_id,
            "status": "submitted",
            "note": "changed behind the services' back",
            "version": annotation.version,
        },
    )
    assert response.status_code == 403
    delete_url = f"/admin/annotate/annotation/{annotation.pk}/delete/"
    delete = admin_client.post(delete_url, {"post": "yes"})
    assert delete.status_code == 403
    before = (annotation.note, annotation.status, annotation.version)
    annotation.refresh_from_db()
    assert (annotation.note, annotation.status, annotation.version) == before
    assert AnnotationEvent.objects.filter(annotation=annotation).count() == events


def test_patterns_and_audit_events_cannot_be_changed_or_added_through_the_admin(
    admin_client, worked_key
):
    annotation, pattern = worked_key
    event = AnnotationEvent.objects.filter(annotation=annotation).last()
    for url, body in [
        (
            f"/admin/annotate/pattern/{pattern.pk}/change/",
            {"annotation": annotation.pk, "description": "edited", "kind": "semantic"},
        ),
        ("/admin/annotate/pattern/add/", {"annotation": annotation.pk, "description": "new"}),
        (f"/admin/annotate/annotationevent/{event.pk}/change/", {"action": "submit"}),
        (f"/admin/annotate/pattern/{pattern.pk}/delete/", {"post": "yes"}),
    ]:
        assert admin_client.post(url, body).status_code == 403, url
    pattern.refresh_from_db()
    assert (pattern.description, pattern.kind) == ("numbers", "shallow")
    assert Pattern.objects.count() == 1


def test_a_study_whose_keys_were_annotated_cannot_be_deleted_through_the_admin(
    admin_client, worked_key
):
    # Deleting the study would take the annotations (and their audit) with it.
    annotation, _ = worked_key
    study = annotation.key.study
    response = admin_client.post(f"/admin/annotate/study/{study.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert Annotation.objects.filter(pk=annotation.pk).exists()


def _select_of_a_table(field: forms.Field) -> bool:
    """A form field that would render every row of its target table as an <option>."""
    if not isinstance(field, forms.ModelChoiceField):
        return False
    widget = getattr(field.widget, "widget", field.widget)  # under RelatedFieldWidgetWrapper
    return not isinstance(widget, ForeignKeyRawIdWidget | ManyToManyRawIdWidget)


def test_no_admin_form_of_the_project_lists_a_table_in_a_select(carol):
    request = RequestFactory().get("/admin/")
    request.user = carol
    checked = 0
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label not in PROJECT_APPS:
            continue
        forms_to_check = [model_admin.get_form(request)]
        forms_to_check += [
            formset.form for formset, _ in model_admin.get_formsets_with_inlines(request)
        ]
        for form in forms_to_check:
            selects = [name for name, f in form.base_fields.items() if _select_of_a_table(f)]
            assert selects == [], f"{model.__name__}: {selects}"
            checked += 1
    assert checked >= 9


@pytest.fixture
def many_rows(worked_key):
    """2,000 users, keys and trigger prefixes: the tables that foreign keys point at."""
    User = get_user_model()
    User.objects.bulk_create([User(username=f"annotator{i}") for i in range(MANY_ROWS)])
    study = StudyFactory()
    keys = Key.objects.bulk_create([Key(study=study, layer=1, index=i) for i in range(MANY_ROWS)])
    TriggerPrefix.objects.bulk_create(
        [
            TriggerPrefix(
                key=key,
                rank=1,
                coefficient=1.0,
                text="x",
                trigger_token="x",
                trigger_token_id=1,
                next_token_id=-1,
                sentence="x",
                sentence_index=0,
                position=0,
            )
            for key in keys
        ]
    )
    return worked_key


def test_no_change_page_lists_thousands_of_rows(admin_client, carol, many_rows):
    annotation, pattern = many_rows
    key = annotation.key
    batch = key.batches.get()
    export = ExportJob.objects.create(study=key.study, format="csv", created_by=carol)
    objects = [
        key.study,
        key,
        key.prefixes.first(),
        batch,
        batch.assignments.get(),
        annotation,
        pattern,
        AnnotationEvent.objects.filter(annotation=annotation).last(),
        export,
    ]
    for obj in objects:
        meta = obj._meta
        url = f"/admin/{meta.app_label}/{meta.model_name}/{obj.pk}/change/"
        response = admin_client.get(url)
        assert response.status_code == 200, url
        size = len(response.content)
        options = response.content.count(b"<option")
        assert size < PAGE_BUDGET, f"{url}: {size} bytes"
        assert options < 100, f"{url}: {options} <option>s"


def test_an_assignment_page_counts_its_keys_and_links_to_their_list(admin_client, alice):
    batch, _ = assigned_batch([alice], n_keys=3, n_prefixes=1)
    assignment = batch.assignments.get()
    page = admin_client.get(f"/admin/annotate/assignment/{assignment.pk}/change/")
    link = f'<a href="/admin/annotate/assignmentkey/?assignment={assignment.pk}">3 keys</a>'
    assert link in page.content.decode()
    listing = admin_client.get(f"/admin/annotate/assignmentkey/?assignment={assignment.pk}")
    assert listing.status_code == 200
    assert "3 assignment keys" in listing.content.decode()


def test_a_gold_annotation_is_shown_with_its_patterns_and_their_source(
    admin_client, worked_key, carol
):
    from annotate.services.gold import gold_pattern_create

    _, source = worked_key
    key = source.annotation.key
    result = gold_pattern_create(
        key=key,
        actor=carol,
        version=0,
        description="the curated one",
        kind="semantic",
        prefixes=list(key.prefixes.order_by("rank")[:3]),
        source_pattern=source,
    )
    page = admin_client.get(f"/admin/annotate/goldannotation/{result.gold.pk}/change/")
    assert page.status_code == 200
    assert b"the curated one" in page.content
    assert b"adopted" in page.content
    response = admin_client.post(
        f"/admin/annotate/goldannotation/{result.gold.pk}/change/", {"status": "submitted"}
    )
    assert response.status_code == 403


def test_the_gold_audit_trail_is_shown_to_an_admin_and_cannot_be_changed(
    admin_client, worked_key, carol
):
    from annotate.services.gold import gold_pattern_create

    _, source = worked_key
    key = source.annotation.key
    result = gold_pattern_create(
        key=key,
        actor=carol,
        version=0,
        description="the curated one",
        kind="semantic",
        prefixes=list(key.prefixes.order_by("rank")[:3]),
        source_pattern=source,
    )
    made, adopted = GoldEvent.objects.filter(gold=result.gold).order_by("id")
    listing = admin_client.get("/admin/annotate/goldevent/")
    assert listing.status_code == 200
    assert "2 gold events" in listing.content.decode()
    url = f"/admin/annotate/goldevent/{adopted.pk}/change/"
    page = admin_client.get(url)
    assert page.status_code == 200
    assert b"the curated one" in page.content  # the state after
    assert b"pattern_id" in page.content  # the adoption's source
    for target, body in [
        (url, {"action": "save"}),
        ("/admin/annotate/goldevent/add/", {"gold": result.gold.pk, "action": "save"}),
        (f"/admin/annotate/goldevent/{made.pk}/delete/", {"post": "yes"}),
    ]:
        assert admin_client.post(target, body).status_code == 403, target
    adopted.refresh_from_db()
    assert adopted.action == "adopt"
    assert GoldEvent.objects.filter(gold=result.gold).count() == 2
