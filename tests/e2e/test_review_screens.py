"""The curator's review screens against the real review API: the queue, the
adjudication grid, adopting, editing, the note, the check mark and saving the gold."""

import re

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from annotate.models import GoldAnnotation
from annotate.permissions import CURATOR_GROUP
from tests.e2e.conftest import log_in
from tests.factories import PASSWORD, UserFactory, annotate_key, assigned_batch

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_curator_adjudicates_a_key_end_to_end(page, alice, bob):
    cora = UserFactory(username="cora")
    group, _ = Group.objects.get_or_create(name=CURATOR_GROUP)
    cora.groups.add(group)
    batch, (key, other) = assigned_batch([alice, bob], n_keys=2, n_prefixes=10)
    annotate_key(key, alice, [("shallow", [1, 2, 3])])
    annotate_key(key, bob, [("semantic", [1, 2, 3, 4])])
    annotate_key(other, alice, [("shallow", [1, 2, 3])])
    annotate_key(other, bob, [("shallow", [1, 2, 3])])
    log_in(page, "cora", PASSWORD)
    expect(page.get_by_role("heading", name="Review", exact=True)).to_be_visible()
    page.get_by_role("link", name=batch.study.name).click()
    rows = page.get_by_test_id("queue-row")
    expect(rows).to_have_count(2)
    rows.first.get_by_role("link").click()
    expect(page.get_by_test_id("review-grid")).to_be_visible()
    expect(page.get_by_test_id("disagree-mark")).to_have_count(4)
    page.get_by_role("button", name=re.compile("Adopt alice")).click()
    expect(page.get_by_test_id("gold-pattern")).to_contain_text("adopted from alice")
    expect(page.get_by_test_id("save-state")).to_have_text("Saved")
    page.get_by_label("Curator’s note").fill("agreed")
    page.get_by_test_id("review-grid").focus()
    page.get_by_label("Check key", exact=False).check()
    page.get_by_role("button", name=re.compile("Edit gold pattern")).click()
    page.get_by_label("Pattern description").fill("numbers, edited")
    page.get_by_role("button", name="Save pattern").click()
    expect(page.get_by_test_id("gold-pattern")).to_contain_text("numbers, edited")
    page.get_by_test_id("review-grid").focus()
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("button", name="Reopen the gold")).to_be_visible()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved")
    gold = GoldAnnotation.objects.get(key=key)
    assert gold.status == "submitted"
    assert gold.note == "agreed"
    assert gold.is_check
    (pattern,) = gold.patterns.all()
    assert pattern.description == "numbers, edited"
    assert pattern.source_pattern_id is not None


def test_a_pattern_in_the_gold_cannot_be_adopted_again_but_can_be_edited_into_another(
    page, alice, bob, carol
):
    _, (key,) = assigned_batch([alice, bob], n_prefixes=10)
    mine = annotate_key(key, alice, [("shallow", [1, 2, 3])])
    mine.patterns.update(description="digits")
    annotate_key(key, bob, [("semantic", [1, 2, 3, 4])])
    log_in(page, "carol", PASSWORD)
    expect(page.get_by_test_id("review-link")).to_be_visible()
    page.goto(f"/manage/review/keys/{key.pk}")
    adopt = page.get_by_role("button", name="Adopt alice’s pattern “digits”")
    edit_then_adopt = page.get_by_role(
        "button", name="Edit alice’s pattern “digits”, then adopt it"
    )
    expect(edit_then_adopt).to_be_enabled()
    adopt.click()
    expect(page.get_by_test_id("gold-pattern")).to_contain_text("adopted from alice")
    card = page.get_by_test_id("annotator-pattern").filter(has_text="digits")
    expect(card).to_contain_text("Already in the gold.")
    expect(adopt).to_be_disabled()
    expect(edit_then_adopt).to_be_enabled()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved")
    assert GoldAnnotation.objects.get(key=key).patterns.count() == 1
