"""A notice about a write shows beside the control that made it."""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from annotate.models import Assignment
from tests.e2e.helpers import (  # noqa: F401 (patient_expect is an autouse fixture)
    open_first_key,
    patient_expect,
    select_rows_with_keyboard,
)
from tests.factories import PASSWORD, assigned_batch

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def box(locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not rendered"
    return found


# Both boxes read in the same frame: the notice moves from one control to the other, and
# two separate reads can straddle the page's layout shift.
_JUST_BELOW_JS = """([control, notice]) => {
  const above = control.getBoundingClientRect(), below = notice.getBoundingClientRect();
  const gap = below.top - above.bottom;
  return gap >= 0 && gap <= 32 && below.bottom <= window.innerHeight;
}"""


def assert_just_below(page, notice, control, what: str) -> None:
    """``notice`` is on screen and starts right under ``control`` (within 2 rem), once the
    layout has settled: polled until it holds, then the boxes are named if it never does."""
    handles = [control.element_handle(), notice.element_handle()]
    try:
        page.wait_for_function(_JUST_BELOW_JS, arg=handles, timeout=5_000)
    except PlaywrightTimeout:
        above, below = box(control), box(notice)
        gap = below["y"] - (above["y"] + above["height"])
        assert 0 <= gap <= 32, (what, above, below)
        assert below["y"] + below["height"] <= page.viewport_size["height"], (what, below)


def test_a_refused_write_is_reported_beside_the_control_that_made_it(page, alice):
    assigned_batch([alice], name="taken back")
    open_first_key(page, "alice", PASSWORD, "taken back")
    # The admin takes the key back while alice works: her next writes are refused.
    Assignment.objects.filter(annotator=alice).delete()

    select_rows_with_keyboard(page, 3)
    page.keyboard.press("1")
    page.get_by_label("Pattern description").fill("refused pattern")
    page.get_by_role("button", name="Add pattern").click()
    notice = page.get_by_test_id("notice")
    expect(notice).to_contain_text("A change was refused")
    assert_just_below(page, notice, page.get_by_role("region", name="New pattern"), "pattern")
    # Its text is back in the composer, to copy elsewhere.
    expect(page.get_by_label("Pattern description")).to_have_value("refused pattern")

    note = page.get_by_label("Note (saved automatically)")
    note.fill("refused note")
    note.blur()
    beside_note = page.locator("section:has(#annotation-note)").get_by_test_id("notice")
    expect(beside_note).to_contain_text("A change was refused")
    expect(notice).to_have_count(1)
    assert_just_below(page, beside_note, note, "note")
