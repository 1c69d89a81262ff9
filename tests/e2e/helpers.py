"""Small helpers shared by the workspace and admin e2e tests."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in


def open_first_key(page, username: str, password: str, batch_name: str) -> None:
    """Log in and press the assignment's Start button: the workspace of its next key."""
    log_in(page, username, password)
    page.get_by_role("button", name=f"Start {batch_name}").click()
    expect(page).to_have_url(re.compile(r"/keys/\d+\?assignment=\d+$"))
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)


def expect_saved(page) -> None:
    expect(page.get_by_test_id("save-state")).to_have_text("Saved")


def select_rows_with_keyboard(page, count: int) -> None:
    """Toggle ``count`` consecutive prefixes, starting at the cursor, using only keys."""
    for i in range(count):
        if i:
            page.keyboard.press("j")
        page.keyboard.press("x")


@pytest.fixture(autouse=True)
def patient_expect():
    """`expect` waits as long as the page's own actions do (conftest: 15 s): on a busy CI
    machine the default 5 s made the offline/replay tests flaky, not wrong."""
    expect.set_options(timeout=15_000)
    yield
    expect.set_options(timeout=5_000)
