"""The key workspace at three widths: a wide screen, a laptop and a phone (issue #12, item 6).

Each test takes a screenshot under its tmp_path. With ``FFKV_SCREENSHOTS=<folder>`` the
wide and the phone workspace are also written there, small (a 64-colour palette): the
README's screenshots are made so, see its "Screenshots" paragraph.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Key, KeyFlag, Study, TriggerPrefix
from tests.e2e.conftest import log_in
from tests.e2e.helpers import (  # noqa: F401 (patient_expect is an autouse fixture)
    assert_controls_reachable,
    assert_no_horizontal_overflow,
    assert_reflowed_cells_labelled,
    open_first_key,
    patient_expect,
    select_rows_with_keyboard,
)
from tests.factories import (
    PASSWORD,
    AnnotationFactory,
    AssignmentFactory,
    BatchFactory,
    PatternFactory,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "example-study.jsonl"
# A key of layer 25 of the example study: prefixes of every length, up to 150 characters.
EXAMPLE_KEY = (25, 1148)
BATCH = "layout"

WIDE, LAPTOP, PHONE = (1440, 900), (1024, 700), (390, 844)


def example_key_for(annotator) -> Key:
    """The example study's key EXAMPLE_KEY, with its value's top tokens shown, assigned to
    ``annotator``, and one of the example's patterns already added (chips in the list)."""
    record = next(
        r
        for r in map(json.loads, EXAMPLE.read_text(encoding="utf-8").splitlines())
        if "key" in r and (r["key"]["layer"], r["key"]["index"]) == EXAMPLE_KEY
    )
    study = Study.objects.create(
        name="SmolLM2 on the example sentences",
        model_name=record["study"]["model"],
        corpus=record["study"]["corpus"],
        show_value_tokens=True,
    )
    key = Key.objects.create(
        study=study,
        layer=EXAMPLE_KEY[0],
        index=EXAMPLE_KEY[1],
        value_top_tokens=record["key"]["value_top_tokens"],
    )
    TriggerPrefix.objects.bulk_create(
        TriggerPrefix(
            key=key,
            rank=p["rank"],
            coefficient=p["coefficient"],
            text=p["text"],
            trigger_token=p["trigger_token"],
            trigger_token_id=0,
            next_token=p["next_token"],
            next_token_id=0,
            suffix=p["sentence"][len(p["text"]) :],
            sentence=p["sentence"],
            sentence_index=p["sentence_index"],
            position=p["position"],
        )
        for p in record["prefixes"]
    )
    batch = BatchFactory(study=study, keys=[key], name=BATCH)
    AssignmentFactory(batch=batch, annotator=annotator)
    example = record["annotations"][0]["patterns"][0]
    PatternFactory(
        annotation=AnnotationFactory(key=key, annotator=annotator),
        description=example["description"],
        kind=example["kind"],
        prefixes=list(key.prefixes.filter(rank__in=example["prefix_ranks"])),
    )
    return key


def open_at(page, size: tuple[int, int]) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_first_key(page, "alice", PASSWORD, BATCH)


def box(locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not rendered"
    return found


def assert_in_viewport(page, locator, what: str) -> None:
    """The whole of ``locator`` is on screen, where the page is scrolled now."""
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    b = box(locator)
    assert b["x"] >= 0 and b["x"] + b["width"] <= width + 0.5, (what, b, width)
    assert b["y"] >= 0 and b["y"] + b["height"] <= height + 0.5, (what, b, height)


def assert_on_top(page, locator, what: str) -> None:
    """Nothing covers the middle of ``locator`` (a sticky bar, the list): a click lands on it."""
    b = box(locator)
    x, y = b["x"] + b["width"] / 2, b["y"] + b["height"] / 2
    assert locator.evaluate(
        "(el, [x, y]) => el.contains(document.elementFromPoint(x, y))", [x, y]
    ), (what, "is covered")


def composer(page):
    return page.get_by_role("region", name="New pattern")


def submit(page):
    return page.get_by_role("button", name="Submit and go to the next key")


def assert_prefixes_readable(page) -> None:
    """Prefix text gets a real share of the screen: no column a few pixels wide where the
    text wraps a character a line (item 6 measured a 22,563 px list at 390 px)."""
    width = page.viewport_size["width"]
    rows = page.get_by_test_id("prefix-row")
    for index in (0, 11):  # a short prefix and the longest one (150 characters)
        body = box(rows.nth(index).locator(".prefix-body"))
        assert body["width"] >= 0.4 * width, (index, body, width)
    list_height = box(page.get_by_test_id("prefix-list"))["height"]
    assert list_height < 25 * 0.2 * page.viewport_size["height"], list_height


def screenshot(page, tmp_path: Path, name: str, readme: bool) -> None:
    page.screenshot(path=tmp_path / f"{name}.png")
    folder = os.environ.get("FFKV_SCREENSHOTS")
    if readme and folder:
        from PIL import Image

        Path(folder).mkdir(parents=True, exist_ok=True)
        with Image.open(tmp_path / f"{name}.png") as image:
            small = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
            small.save(Path(folder) / f"{name}.png", optimize=True)


@pytest.mark.parametrize(("size", "name"), [(WIDE, "workspace-1440"), (LAPTOP, "workspace-1024")])
def test_on_a_wide_screen_the_composer_sits_beside_the_prefixes_and_stays(
    page, alice, tmp_path, size, name
):
    example_key_for(alice)
    open_at(page, size)
    select_rows_with_keyboard(page, 3)
    page.get_by_label("Pattern description").fill("cooking in the kitchen")
    page.get_by_test_id("prefix-list").focus()
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, tmp_path, name, readme=size == WIDE)

    assert_in_viewport(page, composer(page), "composer")
    assert_in_viewport(page, submit(page), "Submit")
    assert_on_top(page, submit(page), "Submit")
    assert_prefixes_readable(page)
    prefixes, side = box(page.get_by_test_id("prefix-list")), box(composer(page))
    assert side["x"] >= prefixes["x"] + prefixes["width"], "side by side"

    # At the end of the list the composer and Submit are still there (sticky).
    page.keyboard.press("End")
    expect(page.get_by_test_id("prefix-row").last).to_be_in_viewport()
    assert page.evaluate("window.scrollY") > 0
    assert_in_viewport(page, composer(page), "composer at the end of the list")
    assert_in_viewport(page, submit(page), "Submit at the end of the list")


def test_on_a_phone_the_composer_comes_first_and_submit_stays_in_a_bar(page, alice, tmp_path):
    example_key_for(alice)
    open_at(page, PHONE)
    select_rows_with_keyboard(page, 3)
    page.get_by_label("Pattern description").fill("cooking in the kitchen")
    page.get_by_test_id("prefix-list").focus()
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, tmp_path, "workspace-390", readme=True)

    assert_in_viewport(page, composer(page), "composer")
    assert_in_viewport(page, submit(page), "Submit")
    assert_on_top(page, submit(page), "Submit")
    assert_prefixes_readable(page)
    # Stacked: nothing beside the list, which is as wide as the page's content.
    prefixes = box(page.get_by_test_id("prefix-list"))
    assert prefixes["width"] >= 0.85 * PHONE[0]
    assert box(composer(page))["y"] + box(composer(page))["height"] <= prefixes["y"]

    # Scrolled to the last prefix, Submit is still on screen, and it hides no prefix.
    page.keyboard.press("End")
    last = page.get_by_test_id("prefix-row").last
    expect(last).to_be_in_viewport()
    assert_in_viewport(page, submit(page), "Submit at the end of the list")
    assert_on_top(page, submit(page), "Submit at the end of the list")
    assert_on_top(page, last, "the last prefix")
    bar = box(page.locator(".submit-card"))
    assert box(last)["y"] + box(last)["height"] <= bar["y"], ("under the bar", box(last), bar)
    screenshot(page, tmp_path, "workspace-390-end", readme=False)

    # The action bar works: Submit submits (and, with no key left, says so), once told
    # what to do with the description left in the composer.
    submit(page).click()
    page.get_by_role("button", name="Discard it and submit").click()
    expect(page.get_by_test_id("all-done")).to_be_visible()


@pytest.mark.parametrize("size", [PHONE, LAPTOP])
def test_a_key_opens_at_the_top_with_the_composer_on_screen(page, alice, size):
    """The prefix list takes focus when the key shows, so that the keys act at once; that
    must not scroll the page past the composer (on a phone the list starts below it)."""
    example_key_for(alice)
    open_at(page, size)
    expect(page.get_by_test_id("prefix-list")).to_be_focused()
    assert page.evaluate("window.scrollY") == 0
    assert_in_viewport(page, composer(page), "composer")
    assert_in_viewport(page, submit(page), "Submit")


# -- the workspace at every width: nothing off the screen, every control reachable ----


@pytest.mark.parametrize("size", [PHONE, LAPTOP, WIDE])
def test_the_workspace_fits_the_screen_and_every_control_is_reachable(page, alice, size):
    key = example_key_for(alice)
    # The longest state the flag control shows.
    KeyFlag.objects.create(key=key, annotator=alice, reason="tokenization")
    open_at(page, size)
    select_rows_with_keyboard(page, 3)
    page.keyboard.press("1")
    page.get_by_label("Pattern description").fill("cooking in the kitchen")

    assert_no_horizontal_overflow(page)
    assert_controls_reachable(page)
    flag = page.get_by_role("button", name="Flag this key")
    flag.evaluate("el => el.scrollIntoView({ block: 'center' })")
    assert_in_viewport(page, flag, "Flag this key")
    assert_on_top(page, flag, "Flag this key")

    # The workspace's dialogs fit too, and so does the question before a submit.
    for opener, dialog in (
        (flag, "Flag this key"),
        (page.get_by_role("button", name="Keyboard shortcuts"), "Keyboard shortcuts"),
        (submit(page), "Add the pattern in the composer?"),
    ):
        opener.click()
        expect(page.get_by_role("dialog", name=dialog)).to_be_visible()
        assert_no_horizontal_overflow(page)
        assert_controls_reachable(page, within="dialog[open]")
        page.keyboard.press("Escape")
        expect(page.get_by_role("dialog")).to_have_count(0)


@pytest.mark.parametrize("size", [PHONE, LAPTOP, WIDE])
def test_the_assignment_pages_fit_the_screen_and_label_reflowed_cells(page, alice, size):
    key = example_key_for(alice)
    page.set_viewport_size({"width": size[0], "height": size[1]})
    log_in(page, "alice", PASSWORD)
    expect(page.get_by_test_id("assignment-row")).to_have_count(1)
    assert_no_horizontal_overflow(page)
    assert_controls_reachable(page)
    assert_reflowed_cells_labelled(page)

    page.get_by_role("link", name=BATCH).click()
    expect(page.get_by_test_id("assignment-key-row")).to_have_count(1)
    expect(page.get_by_role("link", name=f"Layer {key.layer} · key {key.index}")).to_be_visible()
    assert_no_horizontal_overflow(page)
    assert_controls_reachable(page)
    assert_reflowed_cells_labelled(page)
