"""A flag reaches the curators at once: alice flags a key she has not submitted (bob has not
opened it); carol finds it under Review → the study → Flagged, as many keys as the study
list counts, and adjudicates it. The adjudication screen shows alice's draft as a column
marked "draft" (curators see drafts, as they always did; annotators stay blind to each
other and to the gold) and says whom the key still waits for."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.models import GoldPattern, KeyFlag
from tests.e2e.conftest import log_in
from tests.e2e.helpers import (  # noqa: F401 (patient_expect is an autouse fixture)
    expect_saved,
    open_first_key,
    patient_expect,
    select_rows_with_keyboard,
)
from tests.factories import PASSWORD, StudyFactory, assigned_batch

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_carol_sees_a_key_alice_flagged_before_anyone_submitted_it(
    page, browser, live_server, alice, bob, carol
):
    study = StudyFactory(name="flag study")
    _, (key, _other) = assigned_batch([alice, bob], n_keys=2, study=study, name="flag batch")

    # alice starts a pattern (a draft), then flags the key; she submits nothing.
    open_first_key(page, "alice", PASSWORD, "flag batch")
    select_rows_with_keyboard(page, 3)
    page.keyboard.press("1")
    page.get_by_label("Pattern description").fill("cut words")
    page.get_by_role("button", name="Add pattern").click()
    expect_saved(page)
    page.get_by_test_id("prefix-list").focus()
    page.keyboard.press("f")
    dialog = page.get_by_role("dialog", name="Flag this key")
    dialog.get_by_role("radio", name="Tokenization problem").check()
    dialog.get_by_role("textbox", name="Note").fill("a word split in two")
    dialog.get_by_role("button", name="Save the flag").click()
    expect(page.get_by_test_id("key-flag-state")).to_have_text("Flagged: Tokenization problem")
    assert KeyFlag.objects.filter(key=key, annotator=alice).exists()

    curator = browser.new_context(base_url=live_server.url, locale="en-US").new_page()
    curator.set_default_timeout(15_000)
    log_in(curator, "carol", PASSWORD)
    curator.get_by_test_id("review-link").click()
    row = curator.get_by_test_id("review-study").filter(has_text="flag study")
    expect(row.get_by_role("link", name="1 flagged key of flag study")).to_be_visible()
    row.get_by_role("link", name="flag study", exact=True).click()
    expect(curator.get_by_role("heading", name="Review queue: flag study")).to_be_visible()
    expect(curator.get_by_test_id("queue-empty")).to_be_visible()  # nothing is ready

    curator.get_by_label("Status").select_option(label="Flagged")
    expect(curator).to_have_url(re.compile(r"\?status=flagged$"))
    rows = curator.get_by_test_id("queue-row")
    expect(rows).to_have_count(1)  # as many as the study list counts
    expect(rows.first.get_by_test_id("queue-flags")).to_have_text(
        "alice: tokenization problem — a word split in two"
    )
    expect(rows.first.get_by_test_id("not-ready")).to_have_text("not every annotator has submitted")

    rows.first.get_by_role("link").click()
    expect(curator).to_have_url(re.compile(rf"/manage/review/keys/{key.pk}$"))
    expect(curator.get_by_test_id("key-flags")).to_contain_text("alice: tokenization problem")
    expect(curator.get_by_test_id("awaiting")).to_have_text(
        "Not every annotator has submitted this key: waiting for alice (draft), bob (not started)."
    )
    expect(curator.get_by_test_id("annotator-legend")).to_contain_text("A alice (draft)")
    expect(curator.get_by_test_id("review-row")).to_have_count(25)
    draft = curator.get_by_test_id("annotator-column").filter(has_text="alice")
    expect(draft).to_contain_text("draft")
    # The key is adjudicated as any other: alice's draft pattern adopted into the gold.
    curator.get_by_role("button", name="Adopt alice’s pattern “cut words”").click()
    expect(curator.get_by_test_id("gold-pattern")).to_contain_text("adopted from alice")
    expect(curator.get_by_test_id("save-state")).to_have_text("Saved")
    assert GoldPattern.objects.get(gold__key=key).source_annotator == alice
    curator.context.close()
