"""A study's guidelines end to end (docs/annotation.md, "Guidelines"): carol publishes
them, alice must acknowledge them before her first key, then opens them again with `g`."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, GuidelineAcknowledgement
from annotate.services.guidelines import guideline_publish
from tests.e2e.conftest import log_in
from tests.e2e.helpers import (  # noqa: F401 (patient_expect is an autouse fixture)
    patient_expect,
)
from tests.factories import PASSWORD, assigned_batch

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

GUIDELINES = (
    "# Counting rules\n\nLook for **three** prefixes.\n\n"
    "<img src=x onerror=\"document.title='pwned'\">"
)


def test_alice_acknowledges_carols_guidelines_before_her_first_key(
    browser, live_server, alice, carol
):
    batch, _ = assigned_batch([alice], name="rules")
    study = batch.study

    admin = browser.new_context(base_url=live_server.url, locale="en-US")
    page = admin.new_page()
    page.set_default_timeout(15_000)
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))  # signed in before going on
    page.goto(f"/manage/studies/{study.pk}")
    section = page.get_by_test_id("study-guidelines")
    section.get_by_label("New version").fill(GUIDELINES)
    preview = section.get_by_test_id("guidelines-preview")
    expect(preview.get_by_role("heading", name="Counting rules")).to_be_visible()
    section.get_by_role("button", name="Publish version 1").click()
    expect(section.get_by_text("Version 1 published.")).to_be_visible()
    expect(section.get_by_test_id("guideline-versions")).to_contain_text("acknowledged by 0 people")
    admin.close()

    context = browser.new_context(base_url=live_server.url, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(15_000)
    log_in(page, "alice", PASSWORD)
    page.get_by_role("button", name="Start rules").click()
    # The guidelines come first, instead of the key.
    gate = page.get_by_role("heading", name="Annotation guidelines", level=1)
    expect(gate).to_be_visible()
    expect(page.get_by_role("heading", name="Counting rules")).to_be_visible()
    expect(page.get_by_text("onerror=")).to_be_visible()  # raw HTML stays text
    expect(page.locator(".guidelines-text img")).to_have_count(0)
    expect(page.get_by_test_id("prefix-row")).to_have_count(0)
    page.get_by_role("button", name="I have read the guidelines").click()
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    assert GuidelineAcknowledgement.objects.filter(user=alice, guideline__version=1).exists()

    # `g` opens them again from the workspace, in a modal dialog.
    expect(page.get_by_test_id("prefix-list")).to_be_focused()
    page.keyboard.press("g")
    dialog = page.get_by_role("dialog", name="Annotation guidelines")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("heading", name="Counting rules")).to_be_visible()
    assert dialog.evaluate("(element) => element.matches(':modal')")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    assert page.title() != "pwned"

    # Her writes go through and record the version in force.
    note = page.get_by_label("Note (saved automatically)")
    note.fill("with the rules")
    note.blur()
    expect(page.get_by_test_id("note-save-state")).to_have_text("Saved")
    annotation = Annotation.objects.get(annotator=alice)
    assert annotation.guideline_version == 1
    context.close()


@pytest.mark.parametrize("size", [(390, 844), (1024, 700)])
def test_after_acknowledging_long_guidelines_the_first_key_opens_at_its_top(
    page, alice, carol, size
):
    batch, _ = assigned_batch([alice], name="rules")
    long_text = "\n\n".join(f"## Rule {n}\n\nA paragraph about rule {n}." for n in range(1, 30))
    guideline_publish(study=batch.study, text=long_text, author=carol)
    page.set_viewport_size({"width": size[0], "height": size[1]})
    log_in(page, "alice", PASSWORD)
    page.get_by_role("button", name="Start rules").click()
    acknowledge = page.get_by_role("button", name="I have read the guidelines")
    acknowledge.scroll_into_view_if_needed()  # read to the end: the page is scrolled down
    assert page.evaluate("window.scrollY") > 200
    acknowledge.click()
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    expect(page.get_by_test_id("prefix-list")).to_be_focused()
    assert page.evaluate("window.scrollY") == 0
    expect(
        page.get_by_role("heading", name=re.compile(r"^Layer \d+ · key \d+$"))
    ).to_be_in_viewport()
