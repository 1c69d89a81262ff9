"""A check key is served unannounced: alice's next key is a gold check key, and nothing
on the page tells it from a regular one (issue 13, item 4)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, GoldAnnotation
from tests.e2e.helpers import open_first_key, patient_expect  # noqa: F401 (autouse fixture)
from tests.factories import PASSWORD, assigned_batch, key_with_prefixes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _buttons(page) -> list[str]:
    return sorted(
        name.strip() for name in page.get_by_role("button").all_inner_texts() if name.strip()
    )


def test_a_check_key_looks_like_any_key_and_its_annotation_is_marked(page, alice):
    batch, (regular,) = assigned_batch([alice], n_keys=1, name="first")
    study = batch.study
    study.check_rate = 1.0
    study.save(update_fields=["check_rate"])
    check = key_with_prefixes(25, study=study)
    GoldAnnotation.objects.create(
        key=check, status=GoldAnnotation.Status.SUBMITTED, is_check=True, note="gold note"
    )
    assignment = batch.assignments.get()

    open_first_key(page, "alice", PASSWORD, "first")
    expect(page).to_have_url(re.compile(rf"/keys/{check.pk}\?assignment={assignment.pk}$"))
    expect(page.get_by_role("heading", name=f"Layer 1 · key {check.index}")).to_be_visible()
    text = page.locator("body").inner_text().lower()
    assert "check" not in text.replace("checkbox", "")
    assert "gold" not in text
    check_buttons = _buttons(page)

    page.get_by_role("button", name="Submit and go to the next key").click()
    expect(page).to_have_url(re.compile(rf"/keys/{regular.pk}\?assignment={assignment.pk}$"))
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    assert _buttons(page) == check_buttons  # the same screen as a regular key

    annotation = Annotation.objects.get(annotator=alice, key=check)
    assert annotation.status == Annotation.Status.SUBMITTED
    assert annotation.is_check is True
    assert not Annotation.objects.filter(annotator=alice, key=regular).exists()
