"""Playwright driving Debian's Chromium against Django's live server.

`playwright install` cannot download browsers on these machines: the system Chromium
is launched through ``executable_path``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
from django.conf import settings

from tests.conftest import service_missing

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# Playwright's sync API runs an event loop in this thread; the ORM calls our fixtures
# make around it are synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def chromium_path() -> str | None:
    path = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    return path if os.path.exists(path) else shutil.which("chromium")


@pytest.fixture(scope="session")
def browser() -> Iterator:
    path = chromium_path()
    if path is None:
        service_missing("needs Chromium at /usr/bin/chromium (apt-get install chromium)")
    if not (settings.FRONTEND_DIST / ".vite" / "manifest.json").is_file():
        service_missing("needs the built frontend (make frontend)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server) -> Iterator:
    context = browser.new_context(base_url=live_server.url, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def log_in(page, username: str, password: str) -> None:
    page.goto("/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
