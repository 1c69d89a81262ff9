"""The browser shell: log in, see the assignment list, reach the Django admin."""

import re

import pytest
from playwright.sync_api import expect

from annotate.apis import INVALID_CREDENTIALS
from tests.e2e.conftest import log_in
from tests.factories import PASSWORD, AssignmentFactory, BatchFactory, KeyFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_annotator_logs_in_and_sees_her_empty_assignment_list(page, alice):
    log_in(page, "alice", PASSWORD)
    expect(page.get_by_role("heading", name="My assignments")).to_be_visible()
    expect(page.get_by_test_id("assignments-empty")).to_be_visible()
    expect(page.get_by_role("link", name="Django admin")).to_have_count(0)


def test_annotator_sees_an_assignment_with_its_progress(page, alice):
    batch = BatchFactory(name="layer 3 keys", keys=KeyFactory.create_batch(4))
    AssignmentFactory(batch=batch, annotator=alice)
    log_in(page, "alice", PASSWORD)
    expect(page.get_by_text("layer 3 keys")).to_be_visible()
    expect(page.get_by_text(re.compile(r"0\s*/\s*4"))).to_be_visible()


def test_admin_logs_in_and_reaches_the_django_admin(page, carol):
    log_in(page, "carol", PASSWORD)
    page.get_by_role("link", name="Django admin").click()
    expect(page).to_have_url(re.compile(r"/admin/$"))
    expect(page.get_by_text("Site administration")).to_be_visible()


def test_a_wrong_password_shows_a_message(page, alice):
    log_in(page, "alice", "wrong password")
    expect(page.get_by_role("alert")).to_have_text(INVALID_CREDENTIALS)
    expect(page.get_by_text("Traceback")).to_have_count(0)


def test_a_wrong_password_is_told_in_chinese_to_a_user_working_in_chinese(
    browser, live_server, alice
):
    # The browser asks for Chinese: the SPA follows it, and the server's English detail
    # ("Invalid username or password.") is translated by its code.
    context = browser.new_context(base_url=live_server.url, locale="zh-CN")
    try:
        page = context.new_page()
        page.goto("/login")
        page.get_by_label("用户名").fill("alice")
        page.get_by_label("密码").fill("wrong password")
        page.get_by_role("button", name="登录").click()
        expect(page.get_by_role("alert")).to_have_text("用户名或密码错误。")
        expect(page.get_by_text(INVALID_CREDENTIALS)).to_have_count(0)
    finally:
        context.close()


def test_signing_out_returns_to_the_login_page(page, alice):
    log_in(page, "alice", PASSWORD)
    expect(page.get_by_role("heading", name="My assignments")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login$"))
