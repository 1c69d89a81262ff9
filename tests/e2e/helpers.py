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


# The page-wide layout checks of every screen at 390, 1024 and 1440 px. Each returns the
# offenders (a short description each) so that a failure says what is wrong, and where.

_OVERFLOWING = """() => {
    const width = document.documentElement.clientWidth;
    const describe = (el) => {
        const r = el.getBoundingClientRect();
        const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
            + (el.className && typeof el.className === 'string'
                ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
        return `${name} [${Math.round(r.left)}, ${Math.round(r.right)}] of ${width}`;
    };
    const culprits = [...document.body.querySelectorAll('*')].filter((el) => {
        const r = el.getBoundingClientRect();
        return r.width > 0 && r.height > 0 && (r.right > width + 1 || r.left < -1);
    });
    return {
        scrollWidth: document.documentElement.scrollWidth,
        width,
        culprits: culprits.slice(0, 8).map(describe),
    };
}"""


def assert_no_horizontal_overflow(page) -> None:
    """The page is no wider than the window: nothing makes it scroll sideways."""
    found = page.evaluate(_OVERFLOWING)
    assert found["scrollWidth"] <= found["width"], (
        f"the page is {found['scrollWidth']} px wide in a {found['width']} px window",
        found["culprits"],
    )


_UNREACHABLE = """() => {
    const selector = [
        'a[href]', 'button', 'input', 'select', 'textarea', 'summary',
        '[tabindex]', '[role="button"]', '[role="link"]', '[role="checkbox"]',
    ].join(',');
    const shown = (el) => {
        if (!el.getClientRects().length) return false;
        const style = getComputedStyle(el);
        return style.visibility !== 'hidden' && style.display !== 'none';
    };
    const describe = (el) => (el.getAttribute('aria-label') || el.textContent || el.outerHTML)
        .trim().replace(/\\s+/g, ' ').slice(0, 60);
    const problems = [];
    for (const el of document.querySelectorAll(selector)) {
        if (el.disabled || el.closest('[aria-hidden="true"], [inert]')) continue;
        // A focus target (tabindex -1 on a section, main), not a control.
        const native = el.matches('a[href], button, input, select, textarea, summary');
        if (el.getAttribute('tabindex') === '-1' && !native) continue;
        if (!shown(el)) continue;
        if (el.tabIndex < 0) { problems.push(`not in the tab order: ${describe(el)}`); continue; }
        el.focus({ preventScroll: true });
        el.scrollIntoView({ block: 'center', inline: 'center' });
        const r = el.getBoundingClientRect();
        if (r.width < 1 || r.height < 1) { problems.push(`no size: ${describe(el)}`); continue; }
        const width = document.documentElement.clientWidth;
        if (r.left < -1 || r.right > width + 1) {
            const span = `[${Math.round(r.left)}, ${Math.round(r.right)}]`;
            problems.push(`off the page sideways ${span}: ${describe(el)}`);
            continue;
        }
        // A link that wraps has a rectangle a line: aim at the middle of its first one.
        const first = el.getClientRects()[0];
        const x = first.left + first.width / 2;
        const y = Math.min(Math.max(first.top + first.height / 2, 0), window.innerHeight - 1);
        const hit = document.elementFromPoint(x, y);
        const label = el.labels && el.labels.length ? el.labels[0] : null;
        if (!hit || !(el.contains(hit) || (label && label.contains(hit)))) {
            const by = hit ? `${hit.tagName.toLowerCase()}.${hit.className}` : 'nothing';
            problems.push(`covered by ${by}: ${describe(el)}`);
        }
    }
    if (document.activeElement instanceof HTMLElement) document.activeElement.blur();
    window.scrollTo(0, 0);
    return problems;
}"""


def assert_controls_reachable(page) -> None:
    """Every control that is shown and enabled is in the tab order, on the page (not off
    its side), and once scrolled to, not covered by anything else (a click lands on it)."""
    problems = page.evaluate(_UNREACHABLE)
    assert problems == [], problems
