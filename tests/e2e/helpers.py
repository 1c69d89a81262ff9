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


# --- layout checks (any screen, any width) ----------------------------------------------

# Controls a person operates: links, buttons, form fields, disclosure summaries and
# anything else put in the tab order.
CONTROLS = (
    "a[href], button, input:not([type=hidden]), select, textarea, summary,"
    " [tabindex]:not([tabindex='-1'])"
)


def assert_no_horizontal_overflow(page) -> None:
    """The page does not scroll sideways, and nothing visible reaches past the viewport's
    right edge: a table or a chart cut off inside a box that scrolls sideways counts as
    overflow too (a reader on a phone would have to scroll that box to read it)."""
    found = page.evaluate(
        """() => {
          const width = document.documentElement.clientWidth;
          const out = [];
          if (document.documentElement.scrollWidth > width + 1)
            out.push(`the page is ${document.documentElement.scrollWidth} px wide`);
          for (const el of document.body.querySelectorAll('*')) {
            if (!el.checkVisibility({ visibilityProperty: true })) continue;
            const r = el.getBoundingClientRect();
            // 1 px boxes are the visually hidden texts of screen readers.
            if (r.width > 1 && r.height > 1 && r.right > width + 1)
              out.push(`${el.tagName.toLowerCase()}.${el.getAttribute('class') ?? ''}`
                + `[${el.getAttribute('data-testid') ?? ''}] ends at ${Math.round(r.right)} px`);
          }
          return { width, out: out.slice(0, 10) };
        }"""
    )
    assert not found["out"], (f"viewport {found['width']} px", found["out"])


def assert_controls_reachable(page) -> None:
    """Every visible control takes keyboard focus (none left out of the tab order), and
    once scrolled to it lies inside the viewport with nothing covering its middle (a
    sticky bar, a neighbour that overflows). Disabled controls only need to be on screen."""
    found = page.evaluate(
        """(selector) => {
          const width = document.documentElement.clientWidth;
          const height = document.documentElement.clientHeight;
          const out = [];
          let checked = 0;
          for (const el of document.querySelectorAll(selector)) {
            if (!el.checkVisibility({ visibilityProperty: true, opacityProperty: true }))
              continue;
            checked += 1;
            const text = el.innerText || el.getAttribute('aria-label') || el.name || '';
            const name = `${el.tagName.toLowerCase()} "${text.trim().slice(0, 40)}"`;
            if (el.disabled) {
              el.scrollIntoView({ block: 'center', inline: 'nearest' });
            } else {
              el.focus();
              if (document.activeElement !== el) { out.push(`${name} takes no focus`); continue; }
              el.scrollIntoView({ block: 'center', inline: 'nearest' });
            }
            const r = el.getBoundingClientRect();
            if (r.left < -1 || r.right > width + 1 || r.top < -1 || r.bottom > height + 1) {
              out.push(`${name} is off screen: ${Math.round(r.left)}..${Math.round(r.right)}`);
              continue;
            }
            if (el.disabled) continue;
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            const label = el.closest('label');
            if (!hit || !(el.contains(hit) || hit.contains(el) || (label && label.contains(hit))))
              out.push(`${name} is covered by ${hit ? hit.tagName.toLowerCase() + '.'
                + (hit.getAttribute('class') ?? '') : 'nothing'}`);
          }
          window.scrollTo(0, 0);
          return { checked, out: out.slice(0, 10) };
        }""",
        CONTROLS,
    )
    assert found["checked"] > 0, "no control on the page"
    assert not found["out"], found["out"]
