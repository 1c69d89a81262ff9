"""The pages people open work under the Content-Security-Policy: Chromium enforces the
header, and any script, style or image it blocks is reported and fails the test."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in
from tests.factories import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)

# Installed before any script of the page runs; DevTools-injected scripts are not
# subject to the page's policy.
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  const where = `${e.sourceFile}:${e.lineNumber}`;
  window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI} ${where}`);
});
"""


class Violations:
    def __init__(self, page) -> None:
        self.page = page
        self.console: list[str] = []
        self.policies: dict[str, str | None] = {}
        page.add_init_script(RECORD_VIOLATIONS)
        page.on("console", self._on_console)
        page.on("response", self._on_response)

    def _on_console(self, message) -> None:
        if "Content Security Policy" in message.text:
            self.console.append(message.text)

    def _on_response(self, response) -> None:
        if response.request.resource_type == "document":
            self.policies[response.url] = response.headers.get("content-security-policy")

    def seen(self) -> list[str]:
        return self.console + self.page.evaluate("window.__cspViolations")


@pytest.fixture
def violations(page) -> Iterator[Violations]:
    yield Violations(page)


def test_the_listener_reports_a_blocked_resource(page, violations, live_server):
    # The check that the checks below can fail: an image from another site is blocked.
    page.goto("/login")
    page.evaluate(
        "document.body.insertAdjacentHTML('beforeend', "
        "'<img src=\"https://elsewhere.invalid/pixel.png\">')"
    )
    page.wait_for_function("window.__cspViolations.length > 0")
    assert any("img-src" in v for v in violations.seen())


def test_the_spa_login_and_assignments_pages_run_under_the_policy(page, violations, alice):
    page.goto("/login")
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    log_in(page, "alice", PASSWORD)
    expect(page.get_by_role("heading", name="My assignments")).to_be_visible()
    assert set(violations.policies.values()) == {POLICY}
    assert violations.seen() == []


def test_the_api_docs_run_under_the_policy(page, violations):
    page.goto("/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("ffkv API")
    expect(page.get_by_text("/api/assignments/", exact=True).first).to_be_visible()
    assert set(violations.policies.values()) == {POLICY}
    assert violations.seen() == []


def test_the_django_admin_runs_under_the_policy(page, violations, carol):
    page.goto("/admin/login/")
    page.get_by_label("Username").fill("carol")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text("Site administration")).to_be_visible()
    page.goto("/admin/auth/user/")
    expect(page).to_have_url(re.compile(r"/admin/auth/user/$"))
    expect(page.get_by_role("link", name="carol")).to_be_visible()
    page.goto("/admin/auth/user/add/")
    expect(page.get_by_label("Username")).to_be_visible()
    assert set(violations.policies.values()) == {POLICY}
    assert violations.seen() == []
