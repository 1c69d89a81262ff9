"""Flagging a key from the workspace, and the active time sent with the autosave, in a
real browser (docs/annotation.md, "The workspace": Flags, Active time)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, KeyFlag
from tests.e2e.helpers import open_first_key, patient_expect  # noqa: F401 (autouse fixture)
from tests.factories import PASSWORD, assigned_batch

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_f_flags_the_key_and_the_note_save_carries_the_active_time(page, alice, bob):
    _batch, (key,) = assigned_batch([alice, bob], name="flags")
    KeyFlag.objects.create(key=key, annotator=bob, reason="offensive", note="bob's own")
    open_first_key(page, "alice", PASSWORD, "flags")
    expect(page.get_by_test_id("key-flag-state")).to_have_text("Not flagged")  # not bob's

    page.get_by_test_id("prefix-list").focus()
    page.keyboard.press("f")
    dialog = page.get_by_role("dialog", name="Flag this key")
    expect(dialog).to_be_visible()
    dialog.get_by_role("radio", name="Tokenization problem").check()
    dialog.get_by_role("textbox", name="Note").fill("a word split in two")
    dialog.get_by_role("button", name="Save the flag").click()
    expect(dialog).not_to_be_visible()
    expect(page.get_by_test_id("key-flag-state")).to_have_text("Flagged: Tokenization problem")
    flag = KeyFlag.objects.get(key=key, annotator=alice)
    assert (flag.reason, flag.note) == ("tokenization", "a word split in two")

    page.keyboard.press("n")
    page.keyboard.type("a thought")
    expect(page.get_by_test_id("note-save-state")).to_have_text("Saved")
    annotation = Annotation.objects.get(key=key, annotator=alice)
    assert annotation.note == "a thought"
    assert annotation.active_seconds > 0

    page.reload()
    expect(page.get_by_test_id("key-flag-state")).to_have_text("Flagged: Tokenization problem")


def test_the_flag_dialog_forgets_choose_a_reason_once_one_is_picked(page, alice):
    assigned_batch([alice], name="flags")
    open_first_key(page, "alice", PASSWORD, "flags")
    page.get_by_role("button", name="Flag this key").click()
    dialog = page.get_by_role("dialog", name="Flag this key")
    dialog.get_by_role("button", name="Save the flag").click()
    expect(dialog.get_by_role("alert")).to_have_text("Choose a reason.")
    dialog.get_by_role("radio", name="Unclear").check()
    expect(dialog.get_by_role("alert")).to_have_count(0)
