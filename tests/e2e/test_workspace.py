"""The annotator's key workspace in a real Chromium (docs/annotation.md, "The workspace")."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, Pattern, TriggerPrefix
from tests.e2e.conftest import log_in
from tests.e2e.helpers import (  # noqa: F401 (patient_expect is an autouse fixture)
    expect_saved,
    open_first_key,
    patient_expect,
    select_rows_with_keyboard,
)
from tests.factories import PASSWORD, assigned_batch

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCRIPT = "<script>window.__xss=1</script>"
IMAGE = '<img src=x onerror="window.__xss=1">'


def add_pattern_with_keys(page, description: str, kind_key: str = "1") -> None:
    select_rows_with_keyboard(page, 3)
    page.keyboard.press(kind_key)
    page.keyboard.press("d")
    page.keyboard.type(description)
    page.keyboard.press("Enter")


def test_two_annotators_label_the_same_key_blind(page, browser, live_server, alice, bob):
    _batch, (key,) = assigned_batch([alice, bob], n_keys=1, name="shared")

    open_first_key(page, "alice", PASSWORD, "shared")
    add_pattern_with_keys(page, "alice sees numbers")
    expect(page.get_by_test_id("pattern-item")).to_have_count(1)
    expect_saved(page)

    bob_context = browser.new_context(base_url=live_server.url, locale="en-US")
    try:
        bob_page = bob_context.new_page()
        bob_page.set_default_timeout(15_000)
        open_first_key(bob_page, "bob", PASSWORD, "shared")
        expect(bob_page.get_by_text("No patterns yet.")).to_be_visible()
        expect(bob_page.get_by_text("alice sees numbers")).to_have_count(0)
        expect(bob_page.get_by_test_id("not-covered-count")).to_have_text(
            "25 of 25 prefixes not covered"
        )
        add_pattern_with_keys(bob_page, "bob sees dates", kind_key="2")
        expect_saved(bob_page)
    finally:
        bob_context.close()

    page.reload()
    expect(page.get_by_text("alice sees numbers")).to_be_visible()
    expect(page.get_by_text("bob sees dates")).to_have_count(0)
    assert sorted(
        Pattern.objects.filter(annotation__key=key).values_list(
            "annotation__annotator__username", "description"
        )
    ) == [("alice", "alice sees numbers"), ("bob", "bob sees dates")]


def test_annotator_completes_a_key_with_the_keyboard_only(page, alice):
    _batch, keys = assigned_batch([alice], n_keys=2, name="keyboard")
    open_first_key(page, "alice", PASSWORD, "keyboard")
    first_url = page.url

    expect(page.get_by_test_id("add-blockers")).to_contain_text("Select at least 3 prefixes")
    select_rows_with_keyboard(page, 3)
    expect(page.get_by_test_id("selected-count")).to_contain_text("3 prefixes selected")
    page.keyboard.press("2")
    expect(page.get_by_role("radio", name=re.compile(r"^2?\s*semantic$"))).to_be_checked()
    page.keyboard.press("d")
    expect(page.get_by_label("Pattern description")).to_be_focused()
    page.keyboard.type("years and dates")
    page.keyboard.press("Escape")  # back to the prefix list; Enter there adds as well
    page.keyboard.press("a")

    expect(page.get_by_test_id("pattern-item")).to_have_count(1)
    expect(page.get_by_test_id("pattern-chip")).to_have_count(3)
    expect(page.get_by_test_id("not-covered-count")).to_have_text("22 of 25 prefixes not covered")
    expect_saved(page)

    page.keyboard.press("Control+Enter")
    expect(page).not_to_have_url(first_url)
    # The next key is open (its GETs done) before the test reads the database:
    # SQLite's shared in-memory database locks a table that the server is writing.
    expect(page.get_by_text("No patterns yet.")).to_be_visible()
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    expect_saved(page)

    done = Annotation.objects.get(annotator=alice, status=Annotation.Status.SUBMITTED)
    pattern = done.patterns.get()
    assert (pattern.description, pattern.kind) == ("years and dates", "semantic")
    assert sorted(pattern.prefixes.values_list("rank", flat=True)) == [1, 2, 3]
    assert page.url.split("/keys/")[1].split("?")[0] == str(
        ({key.pk for key in keys} - {done.key_id}).pop()
    )


def test_a_link_with_someone_elses_assignment_moves_on_in_your_own(page, alice, bob):
    # A link that names someone else's assignment is never used: bob, with alice's
    # assignment in the address, must not be told "nothing left" on submitting while his
    # own keys are open.
    batch, keys = assigned_batch([alice, bob], n_keys=2, name="shared")
    alices = batch.assignments.get(annotator=alice).pk
    bobs = batch.assignments.get(annotator=bob).pk
    log_in(page, "bob", PASSWORD)
    expect(page.get_by_role("heading", name="My assignments")).to_be_visible()
    page.goto(f"/keys/{keys[0].pk}?assignment={alices}")
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    add_pattern_with_keys(page, "bob sees numbers")
    expect_saved(page)

    page.keyboard.press("Control+Enter")
    expect(page).to_have_url(re.compile(rf"/keys/{keys[1].pk}\?assignment={bobs}$"))
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    expect(page.get_by_test_id("all-done")).to_have_count(0)


def test_back_to_the_assignment_never_leads_to_someone_elses(page, alice, bob):
    batch, keys = assigned_batch([alice, bob], n_keys=1, name="shared")
    alices = batch.assignments.get(annotator=alice).pk
    bobs = batch.assignments.get(annotator=bob).pk
    log_in(page, "bob", PASSWORD)
    expect(page.get_by_role("heading", name="My assignments")).to_be_visible()
    page.goto(f"/keys/{keys[0].pk}?assignment={alices}")
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    back = page.get_by_role("link", name="← Back to the assignment")
    expect(back).to_have_attribute("href", f"/assignments/{bobs}")
    back.click()
    expect(page).to_have_url(re.compile(rf"/assignments/{bobs}$"))
    expect(page.get_by_test_id("assignment-key-row")).to_have_count(1)


def test_a_long_assignment_lists_its_keys_a_page_at_a_time(page, alice):
    batch, keys = assigned_batch([alice], n_keys=120, n_prefixes=3, name="long")
    assignment = batch.assignments.get()
    log_in(page, "alice", PASSWORD)
    expect(page.get_by_role("heading", name="My assignments")).to_be_visible()
    page.get_by_role("link", name="long").click()
    expect(page).to_have_url(re.compile(rf"/assignments/{assignment.pk}$"))
    expect(page.get_by_test_id("keys-range")).to_have_text("Keys 1–100 of 120")
    expect(page.get_by_test_id("assignment-key-row")).to_have_count(100)

    page.get_by_role("button", name="Next keys").click()
    expect(page.get_by_test_id("keys-range")).to_have_text("Keys 101–120 of 120")
    expect(page.get_by_test_id("assignment-key-row")).to_have_count(20)
    expect(page.get_by_role("button", name="Next keys")).to_be_disabled()
    last = keys[-1]
    page.get_by_role("link", name=f"Layer {last.layer} · key {last.index}").click()
    expect(page).to_have_url(re.compile(rf"/keys/{last.pk}\?assignment={assignment.pk}$"))
    expect(page.get_by_test_id("prefix-row")).to_have_count(3)


def test_keyboard_help_is_a_modal_dialog_that_keeps_focus_inside(page, alice):
    assigned_batch([alice], name="help")
    open_first_key(page, "alice", PASSWORD, "help")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    assert dialog.evaluate("(element) => element.tagName === 'DIALOG' && element.matches(':modal')")
    for key in ["Home", "End", "/", "Shift + ↓", "J", "K", "g", "G"]:
        expect(dialog.locator("kbd", has_text=re.compile(rf"^{re.escape(key)}$"))).to_have_count(1)
    for _ in range(3):
        page.keyboard.press("Tab")
        assert page.evaluate("() => !!document.activeElement?.closest('dialog')")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(page.get_by_test_id("prefix-list")).to_be_focused()


def test_focus_returns_to_the_prefixes_after_a_pattern_is_added(page, alice):
    assigned_batch([alice], name="focus")
    open_first_key(page, "alice", PASSWORD, "focus")
    add_pattern_with_keys(page, "numbers")
    expect(page.get_by_test_id("pattern-item")).to_have_count(1)
    expect(page.get_by_test_id("prefix-list")).to_be_focused()
    page.keyboard.press("j")
    page.keyboard.press("x")
    expect(page.get_by_label("Pattern description")).to_have_value("")
    expect(page.get_by_test_id("selected-count")).to_contain_text("1 prefix selected")
    expect_saved(page)


def test_a_deleted_pattern_comes_back_with_undo(page, alice):
    _batch, (key,) = assigned_batch([alice], name="undo")
    open_first_key(page, "alice", PASSWORD, "undo")
    add_pattern_with_keys(page, "keep me")
    expect_saved(page)
    page.get_by_role("button", name="Delete P1").click()
    expect(page.get_by_test_id("pattern-item")).to_have_count(0)
    # Focus is on Undo, not on another Delete: a second Enter takes the delete back.
    expect(page.get_by_role("button", name="Undo")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("pattern-item")).to_have_count(1)
    expect_saved(page)
    assert Pattern.objects.filter(annotation__key=key, description="keep me").count() == 1


def test_markup_in_a_prefix_stays_inert_text(page, alice):
    _batch, (key,) = assigned_batch([alice], name="hostile")
    TriggerPrefix.objects.filter(key=key, rank=1).update(text=f"before {SCRIPT} after")
    TriggerPrefix.objects.filter(key=key, rank=2).update(text=f"look {IMAGE} here")
    open_first_key(page, "alice", PASSWORD, "hostile")

    expect(page.get_by_text(SCRIPT)).to_be_visible()
    expect(page.get_by_text(IMAGE)).to_be_visible()
    # Every image has loaded or failed: an onerror handler would have run by now.
    page.wait_for_function("() => Array.from(document.images).every((img) => img.complete)")
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.locator("main img").count() == 0
    assert page.locator("main script").count() == 0


def test_a_write_made_offline_is_saved_once_the_server_is_back(page, alice):
    _batch, (key,) = assigned_batch([alice], name="flaky")
    open_first_key(page, "alice", PASSWORD, "flaky")

    page.context.set_offline(True)
    add_pattern_with_keys(page, "made offline")
    expect(page.get_by_test_id("save-state")).to_have_text("Offline, retrying…")
    # The pattern shows at once, marked as not saved yet.
    expect(page.get_by_test_id("pattern-item")).to_contain_text("not saved yet")
    # A retry failed too (the queue backs off from 1 s), and nothing reached the server.
    page.wait_for_event("requestfailed", predicate=lambda request: "/patterns/" in request.url)
    assert not Pattern.objects.filter(annotation__key=key).exists()

    page.context.set_offline(False)
    expect_saved(page)
    expect(page.get_by_test_id("pattern-item")).not_to_contain_text("not saved yet")
    assert Pattern.objects.filter(annotation__key=key, description="made offline").count() == 1


def test_a_write_queued_when_the_api_is_down_survives_a_reload(page, alice):
    _batch, (key,) = assigned_batch([alice], name="reload")
    open_first_key(page, "alice", PASSWORD, "reload")

    # Only the writes fail, so that the reload's reads are not caught by a late abort.
    page.route("**/api/keys/*/patterns/", lambda route: route.abort())
    add_pattern_with_keys(page, "kept across reload")
    expect(page.get_by_test_id("save-state")).to_have_text("Offline, retrying…")
    page.unroute("**/api/keys/*/patterns/")
    # Reload before the retry timer fires: the queue in localStorage is replayed. The
    # page asks first, since a write has not reached the server.
    page.once("dialog", lambda dialog: dialog.accept())
    page.reload()
    expect(page.get_by_text("kept across reload")).to_be_visible(timeout=15_000)
    expect_saved(page)
    assert (
        Pattern.objects.filter(annotation__key=key, description="kept across reload").count() == 1
    )


def test_a_reload_keeps_the_note_being_typed_and_the_half_built_pattern(page, alice):
    _batch, (key,) = assigned_batch([alice], name="typing")
    open_first_key(page, "alice", PASSWORD, "typing")

    # The note's save cannot reach the server, so it is still waiting at the reload.
    def refuse_note(route):
        if route.request.method == "PUT":
            route.abort()
        else:
            route.continue_()

    page.route("**/api/keys/*/annotation/", refuse_note)
    select_rows_with_keyboard(page, 2)
    page.keyboard.press("2")
    page.keyboard.press("d")
    page.keyboard.type("half a patt")
    page.keyboard.press("Escape")
    page.keyboard.press("n")
    page.keyboard.type("half a thought")
    expect(page.get_by_test_id("note-save-state")).not_to_have_text("Saved")

    asked: list[str] = []

    def answer(dialog):
        asked.append(dialog.type)
        dialog.accept()

    page.once("dialog", answer)
    page.unroute("**/api/keys/*/annotation/")
    page.reload()
    assert asked == ["beforeunload"]

    expect(page.get_by_label(re.compile("^Note"))).to_have_value("half a thought")
    expect(page.get_by_label("Pattern description")).to_have_value("half a patt")
    expect(page.get_by_role("radio", name=re.compile(r"^2?\s*semantic$"))).to_be_checked()
    expect(page.locator('[data-testid="prefix-row"][aria-selected="true"]')).to_have_count(2)
    expect_saved(page)
    expect(page.get_by_test_id("note-save-state")).to_have_text("Saved")
    assert Annotation.objects.get(key=key, annotator=alice).note == "half a thought"


def test_the_chinese_keyboard_help_is_all_in_chinese(browser, live_server, alice):
    assigned_batch([alice], n_keys=1, name="help")
    context = browser.new_context(base_url=live_server.url, locale="zh-CN")
    try:
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto("/login")
        page.get_by_label("用户名").fill("alice")
        page.get_by_label("密码").fill(PASSWORD)
        page.get_by_role("button", name="登录").click()
        page.get_by_role("button", name="开始 help").click()
        expect(page.get_by_test_id("prefix-row")).to_have_count(25)
        page.get_by_test_id("prefix-list").focus()
        page.keyboard.press("?")
        dialog = page.get_by_role("dialog", name="键盘快捷键")
        expect(dialog).to_contain_text("Shift + 点击")
        expect(dialog).not_to_contain_text("click")
    finally:
        context.close()
