"""Small helpers shared by the workspace and admin e2e tests."""

from __future__ import annotations

import contextlib
import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
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


# -- layout checks, shared by every screen's layout test ----------------------------
#
# Each returns nothing and fails with the offending elements named (tag, test id or
# class, text, box), so that a failure says what to fix. They are pure reads of the
# page as it is now, except that `assert_controls_reachable` scrolls (and scrolls the
# window back where it was).

_DESCRIBE_JS = """
() => { window.__ffkvDescribe = (el) => {
  const r = el.getBoundingClientRect();
  const id = el.getAttribute('data-testid') || el.id || String(el.className || '');
  const name = (el.getAttribute('aria-label') || el.textContent || el.getAttribute('name')
    || el.getAttribute('value') || '').trim().replace(/\\s+/g, ' ').slice(0, 50);
  const [x0, x1, y0, y1] = [r.left, r.right, r.top, r.bottom].map(Math.round);
  return `<${el.tagName.toLowerCase()} ${id}> "${name}" at x=${x0}..${x1} y=${y0}..${y1}`;
}; }
"""

_OVERFLOW_JS = """
() => {
  const width = window.innerWidth;
  const outside = [];
  // Inside a box that clips sideways (an ellipsis, say), the box itself is what is
  // checked. A box that scrolls sideways does not excuse what it holds: a table or a
  // chart read by scrolling a box on a phone overflows as much as the page would.
  const clippedFrom = (box) => {
    for (let a = box; a && a !== document.body; a = a.parentElement) {
      const overflowX = getComputedStyle(a).overflowX;
      if (overflowX === 'hidden' || overflowX === 'clip') return true;
    }
    return false;
  };
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (!el.checkVisibility({ visibilityProperty: true })) continue;
    if (clippedFrom(el.parentElement)) continue;
    if (r.left < -0.5 || r.right > width + 0.5) outside.push(window.__ffkvDescribe(el));
  }
  // Text can run out of a box that stays inside (a long word with nowhere to break): the
  // page then scrolls sideways with no element outside. Each text node is measured too.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || !node.textContent.trim() || !el.checkVisibility({ visibilityProperty: true })) {
      continue;
    }
    if (clippedFrom(el)) continue;  // its own box clips it too
    range.selectNodeContents(node);
    const r = range.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < -0.5 || r.right > width + 0.5) {
      const [x0, x1] = [r.left, r.right].map(Math.round);
      outside.push(`text of ${window.__ffkvDescribe(el)}: text at x=${x0}..${x1}`);
    }
  }
  return { scrollWidth: document.scrollingElement.scrollWidth, width, outside };
}
"""

_CONTROLS = (
    "button, a[href], input:not([type=hidden]), select, textarea, summary, "
    "[role=button], [role=link], [role=checkbox], [role=radio], [role=tab]"
)

_REACHABLE_JS = """
([selector, within]) => {
  const scrollX = window.scrollX, scrollY = window.scrollY;
  const focused = document.activeElement;
  const width = window.innerWidth, height = window.innerHeight;
  const root = document.querySelector(within) || document.body;
  const problems = [];
  let checked = 0;
  for (const el of root.querySelectorAll(selector)) {
    const before = el.getBoundingClientRect();
    // Not rendered (display: none, a closed dialog) or a 1-pixel visually hidden one.
    if (before.width <= 1 && before.height <= 1) continue;
    if (!el.checkVisibility({ visibilityProperty: true })) continue;
    checked += 1;
    // Focused first, as the keyboard reaches it: a control that shows on focus (a skip
    // link) counts as it is then. An enabled control that takes no focus is out of the
    // keyboard's reach; a disabled one only needs to be on screen.
    el.focus({ preventScroll: true });
    if (!el.disabled && document.activeElement !== el) {
      problems.push(`${window.__ffkvDescribe(el)}: takes no keyboard focus`);
      continue;
    }
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const r = el.getBoundingClientRect();
    if (r.left < -0.5 || r.right > width + 0.5 || r.top < -0.5 || r.bottom > height + 0.5) {
      problems.push(`${window.__ffkvDescribe(el)}: not inside the ${width}x${height} viewport`);
      continue;
    }
    // A link that wraps has a rectangle a line (its bounding box's middle may lie
    // between them): aim at the middle of its first one.
    const first = el.getClientRects()[0] || r;
    const x = first.left + first.width / 2, y = first.top + first.height / 2;
    const hit = document.elementFromPoint(x, y);
    const labels = el.labels ? [...el.labels] : [];
    if (!hit || !(el.contains(hit) || labels.some((label) => label.contains(hit)))) {
      const by = hit ? window.__ffkvDescribe(hit) : 'nothing';
      problems.push(`${window.__ffkvDescribe(el)}: covered by ${by}`);
    }
  }
  if (focused instanceof HTMLElement) focused.focus({ preventScroll: true });
  else document.activeElement?.blur();
  window.scrollTo({ left: scrollX, top: scrollY, behavior: 'instant' });
  return { checked, problems };
}
"""

_REFLOWED_CELLS_JS = """
() => {
  const problems = [];
  for (const cell of document.querySelectorAll('table td')) {
    if (getComputedStyle(cell).display === 'table-cell') continue;
    if (!cell.checkVisibility() || !cell.textContent.trim()) continue;
    // A cell of controls alone (Start, Edit) is named by them.
    const clone = cell.cloneNode(true);
    clone.querySelectorAll('button, a').forEach((control) => control.remove());
    if (!clone.textContent.trim()) continue;
    const before = getComputedStyle(cell, '::before').content;
    const labelled = (before && before !== 'none' && before !== 'normal' && before !== '""')
      || cell.querySelector('[data-cell-label]');
    if (!labelled) problems.push(window.__ffkvDescribe(cell));
  }
  return problems;
}
"""


def assert_no_horizontal_overflow(page, settle_ms: int = 0) -> None:
    """The page does not scroll sideways and no visible element pokes out of the viewport
    to the left or right (elements inside a box that clips sideways count as that box;
    inside one that scrolls sideways, they count themselves). ``settle_ms``: right after
    the viewport changed, first wait up to that long for the page to stop scrolling
    sideways (charts sized by a ResizeObserver are drawn again a frame or more later,
    later still on a loaded machine); the checks below then run as usual."""
    if settle_ms:
        # On a timeout the assertion below says what overflows.
        with contextlib.suppress(PlaywrightTimeoutError):
            page.wait_for_function(
                "() => document.documentElement.scrollWidth <= "
                "document.documentElement.clientWidth",
                timeout=settle_ms,
            )
    page.evaluate(_DESCRIBE_JS)
    found = page.evaluate(_OVERFLOW_JS)
    assert found["scrollWidth"] <= found["width"], (
        f"the page scrolls sideways: scrollWidth {found['scrollWidth']} > {found['width']}",
        found["outside"][:15],
    )
    assert not found["outside"], (
        f"{len(found['outside'])} elements outside the {found['width']} px viewport",
        found["outside"][:15],
    )


def ids_from(first: int, *models) -> None:
    """The next rows of ``models`` get ids from ``first`` on (PostgreSQL's sequences), as on
    a server in use for a while: a layout checked with a fresh test database's one-digit
    ids is then checked with a real one's six-digit ids too."""
    from django.db import connection

    with connection.cursor() as cursor:
        for model in models:
            table = model._meta.db_table
            cursor.execute("SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)", [table, first])


def assert_controls_reachable(page, within: str = "body") -> None:
    """Every rendered control (button, link, input, select, textarea, summary and their
    ARIA roles) under ``within`` takes keyboard focus (unless disabled), and, scrolled
    into view, lies inside the viewport and is what a click at its centre lands on
    (nothing covers it: a sticky bar, a neighbour). Focus and the window's scroll are put
    back afterwards."""
    page.evaluate(_DESCRIBE_JS)
    found = page.evaluate(_REACHABLE_JS, [_CONTROLS, within])
    assert found["checked"] > 0, f"no control found under {within!r}"
    assert not found["problems"], found["problems"][:15]


def assert_reflowed_cells_labelled(page) -> None:
    """Where a table reflows (its cells no longer laid out as table cells, as on a phone,
    with the header row hidden), every cell with content says what it is: a label drawn
    by its ``::before`` (``content: attr(data-label)``, see ``.assignments`` in
    styles.css) or an element marked ``data-cell-label`` inside it. A cell holding only
    buttons or links is named by them."""
    page.evaluate(_DESCRIBE_JS)
    problems = page.evaluate(_REFLOWED_CELLS_JS)
    assert not problems, ("reflowed table cells without a label", problems[:15])
