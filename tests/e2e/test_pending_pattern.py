"""Submit and Save gold never drop the pattern still in the composer: they ask first
("Add it and submit", "Discard it and submit", "Cancel"), by button and by Ctrl+Enter."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from annotate.models import Annotation, GoldAnnotation
from annotate.permissions import CURATOR_GROUP
from tests.e2e.conftest import log_in
from tests.e2e.helpers import (  # noqa: F401 (patient_expect is an autouse fixture)
    expect_saved,
    open_first_key,
    patient_expect,
    select_rows_with_keyboard,
)
from tests.factories import PASSWORD, UserFactory, annotate_key, assigned_batch

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def half_build(page, description: str) -> None:
    """Select 3 prefixes, type a description, pick a kind; do not press Add."""
    select_rows_with_keyboard(page, 3)
    page.keyboard.press("d")
    page.keyboard.type(description)
    page.keyboard.press("Escape")
    page.keyboard.press("1")


def pending_dialog(page, name: str = "Add the pattern in the composer?"):
    return page.get_by_role("dialog", name=name)


def test_ctrl_enter_with_a_pattern_in_the_composer_asks_and_adds_it_before_submitting(page, alice):
    _batch, _keys = assigned_batch([alice], n_keys=2, name="pending")
    open_first_key(page, "alice", PASSWORD, "pending")
    first_url = page.url
    half_build(page, "years and dates")

    # Escape cancels: nothing is sent, focus is back in the list, the composer keeps it.
    page.keyboard.press("Control+Enter")
    dialog = pending_dialog(page)
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Add it and submit")).to_be_focused()
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(page.get_by_test_id("prefix-list")).to_be_focused()
    expect(page.get_by_label("Pattern description")).to_have_value("years and dates")
    assert page.url == first_url

    # Enter on the first choice adds the pattern, then submits once the server has it.
    page.keyboard.press("Control+Enter")
    expect(pending_dialog(page).get_by_role("button", name="Add it and submit")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page).not_to_have_url(first_url)
    expect(page.get_by_text("No patterns yet.")).to_be_visible()
    expect_saved(page)
    done = Annotation.objects.get(annotator=alice, status=Annotation.Status.SUBMITTED)
    pattern = done.patterns.get()
    assert (pattern.description, pattern.kind) == ("years and dates", "shallow")
    assert sorted(pattern.prefixes.values_list("rank", flat=True)) == [1, 2, 3]

    # The submitted key's composer is empty when it is opened again.
    page.goto(first_url)
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    expect(page.get_by_test_id("pattern-item")).to_have_count(1)
    expect(page.get_by_label("Pattern description")).to_have_value("")
    expect(page.get_by_test_id("selected-count")).to_contain_text("0 prefixes selected")


def test_the_submit_button_asks_too_and_discard_submits_without_the_pattern(page, alice):
    _batch, _keys = assigned_batch([alice], n_keys=2, name="pending")
    open_first_key(page, "alice", PASSWORD, "pending")
    first_url = page.url
    half_build(page, "a slip")
    page.get_by_role("button", name=re.compile("Submit and go to the next key")).click()
    pending_dialog(page).get_by_role("button", name="Discard it and submit").click()
    expect(page).not_to_have_url(first_url)
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    expect_saved(page)
    done = Annotation.objects.get(annotator=alice, status=Annotation.Status.SUBMITTED)
    assert done.patterns.count() == 0

    page.goto(first_url)
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    expect(page.get_by_label("Pattern description")).to_have_value("")


def test_an_incomplete_pattern_in_the_composer_is_named_as_such(page, alice):
    assigned_batch([alice], n_keys=1, name="pending")
    open_first_key(page, "alice", PASSWORD, "pending")
    select_rows_with_keyboard(page, 2)
    page.keyboard.press("d")
    page.keyboard.type("two only")
    page.keyboard.press("Control+Enter")
    dialog = pending_dialog(page, "The pattern in the composer is incomplete")
    expect(dialog).to_contain_text("Select at least 3 prefixes")
    expect(dialog.get_by_role("button", name=re.compile("^Add it"))).to_have_count(0)
    expect(dialog.get_by_role("button", name="Discard it and submit")).to_be_focused()
    dialog.get_by_role("button", name="Cancel").click()
    expect(page.get_by_label("Pattern description")).to_have_value("two only")
    assert not Annotation.objects.filter(status=Annotation.Status.SUBMITTED).exists()


def test_save_gold_with_a_pattern_in_the_composer_asks_and_adds_it_first(page, alice, bob):
    cora = UserFactory(username="cora")
    group, _ = Group.objects.get_or_create(name=CURATOR_GROUP)
    cora.groups.add(group)
    _batch, (key,) = assigned_batch([alice, bob], n_keys=1, n_prefixes=10)
    annotate_key(key, alice, [("shallow", [1, 2, 3])])
    annotate_key(key, bob, [("semantic", [1, 2, 3, 4])])
    log_in(page, "cora", PASSWORD)
    expect(page.get_by_role("heading", name="Review", exact=True)).to_be_visible()
    page.goto(f"/manage/review/keys/{key.pk}")
    grid = page.get_by_test_id("review-grid")
    expect(grid).to_be_visible()
    grid.focus()
    half_build(page, "gold numbers")

    # By button: Cancel keeps everything as it was.
    page.get_by_role("button", name="Save gold").click()
    dialog = pending_dialog(page)
    expect(dialog.get_by_role("button", name="Add it and save the gold")).to_be_focused()
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("button", name="Save gold")).to_be_focused()
    assert not GoldAnnotation.objects.filter(key=key, status="submitted").exists()

    # By Ctrl+Enter: add it, and the gold is saved with it.
    grid.focus()
    page.keyboard.press("Control+Enter")
    pending_dialog(page).get_by_role("button", name="Add it and save the gold").click()
    expect(page.get_by_role("button", name="Reopen the gold")).to_be_visible()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved")
    expect(page.get_by_label("Pattern description")).to_have_value("")
    gold = GoldAnnotation.objects.get(key=key)
    assert gold.status == "submitted"
    (pattern,) = gold.patterns.all()
    assert (pattern.description, pattern.kind) == ("gold numbers", "shallow")
    assert sorted(pattern.prefixes.values_list("rank", flat=True)) == [1, 2, 3]
