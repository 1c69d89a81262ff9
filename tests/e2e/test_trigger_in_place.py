"""The trigger token highlighted in place in the text as written.

An uncased tokenizer (MiniLM) decodes "Marriage" as "marriage"; before the miner kept the
trigger's character span the workspace showed "The Marriage marriage". Now it shows the
text exactly as written, the trigger marked in it, once."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, Pattern, TriggerPrefix
from tests.e2e.helpers import open_first_key, patient_expect  # noqa: F401 (autouse)
from tests.factories import PASSWORD, assigned_batch

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _row(page, rank: int):
    return page.locator(f'[data-testid="prefix-row"][data-rank="{rank}"]')


def test_a_trigger_that_differs_in_case_from_its_token_shows_once_in_place(page, alice):
    _batch, (key,) = assigned_batch([alice], n_keys=1, name="uncased")
    prefixes = TriggerPrefix.objects.filter(key=key)
    prefixes.filter(rank=1).update(
        text="The Marriage",
        trigger_token="marriage",
        sentence="The Marriage of Figaro",
        suffix=" of Figaro",
        trigger_start=4,
        trigger_end=12,
    )
    # A character outside the BMP before the trigger: the span counts code points.
    prefixes.filter(rank=2).update(
        text="Fun 😀 Émile",
        trigger_token="emile",
        sentence="Fun 😀 Émile Zola",
        trigger_start=6,
        trigger_end=11,
    )
    # A prefix without a span (an old import) keeps the old rendering: the decoded token
    # matched at the end of the text.
    prefixes.filter(rank=3).update(text="World War", trigger_token=" War")

    open_first_key(page, "alice", PASSWORD, "uncased")

    first = _row(page, 1).get_by_test_id("prefix-text")
    expect(first).to_have_text("The Marriage")
    expect(first.locator("mark")).to_have_count(1)
    expect(first.locator("mark.trigger")).to_have_text("Marriage")
    expect(_row(page, 1)).not_to_contain_text("marriage")

    second = _row(page, 2).get_by_test_id("prefix-text")
    expect(second).to_have_text("Fun 😀 Émile")
    expect(second.locator("mark.trigger")).to_have_text("Émile")

    third = _row(page, 3).get_by_test_id("prefix-text")
    expect(third).to_have_text("World War")
    expect(third.locator("mark.trigger")).to_have_text(" War")


# The left edge of each letter of an element's text, in the order the text is written:
# where a bidirectional control reversed the text, the edges go down instead of up.
CHAR_LEFTS = """
(el) => {
  const out = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest('[aria-hidden="true"], .visually-hidden')) continue;
    for (let i = 0; i < node.data.length; i += 1) {
      if (!/[a-z]/.test(node.data[i])) continue;
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      out.push([node.data[i], range.getBoundingClientRect().left]);
    }
  }
  return out;
}
"""


def _reads_in_logical_order(locator, letters: str) -> None:
    lefts = locator.evaluate(CHAR_LEFTS)
    assert "".join(char for char, _ in lefts) == letters
    xs = [left for _, left in lefts]
    assert xs == sorted(xs), ("rendered out of order", lefts)


def test_a_derived_trigger_highlight_leaves_out_the_tokens_leading_space(page, alice):
    _batch, (key,) = assigned_batch([alice], n_keys=1, name="derived")
    # No span (an imported prefix): the decoded token " War" is matched at the text's end.
    TriggerPrefix.objects.filter(key=key, rank=1).update(text="World War", trigger_token=" War")
    open_first_key(page, "alice", PASSWORD, "derived")
    text = _row(page, 1).get_by_test_id("prefix-text")
    assert text.locator("mark.trigger").evaluate("el => el.textContent") == "War"
    assert text.evaluate("el => el.textContent") == "World War"


def test_whitespace_and_byte_tokens_show_in_a_visible_form_with_their_bytes_on_hover(page, alice):
    _batch, (key,) = assigned_batch([alice], n_keys=1, name="tokens")
    prefixes = TriggerPrefix.objects.filter(key=key)
    prefixes.filter(rank=1).update(next_token=" ")
    prefixes.filter(rank=2).update(next_token="\n")
    # The first byte of 🦩 (F0 9F A6 A9), decoded alone: U+FFFD; with and without bytes.
    prefixes.filter(rank=3).update(next_token="\ufffd", next_token_bytes="f0")
    prefixes.filter(rank=4).update(next_token="\ufffd")
    prefixes.filter(rank=5).update(
        text="She smiled 🦩", trigger_token="\ufffd", trigger_token_bytes="a9"
    )
    open_first_key(page, "alice", PASSWORD, "tokens")

    def next_token(rank: int):
        return _row(page, rank).locator(".next-token .token")

    expect(next_token(1)).to_have_text("␣A space")
    expect(next_token(1).locator('[aria-hidden="true"]')).to_be_visible()
    expect(next_token(2)).to_contain_text("⏎")
    expect(next_token(3)).to_contain_text("⟨0xF0⟩")
    expect(next_token(3)).to_have_attribute("title", "Raw bytes: 0xF0")
    expect(next_token(4)).to_contain_text("⟨?⟩")
    expect(next_token(4).locator("[title]")).to_have_attribute(
        "title", re.compile("raw bytes are unknown")
    )
    assert "\ufffd" not in _row(page, 3).evaluate("el => el.textContent")
    trigger = _row(page, 5).locator("mark.trigger")
    expect(trigger).to_contain_text("⟨0xA9⟩")
    expect(trigger.locator("bdi")).to_have_attribute("title", "Raw bytes: 0xA9")


def test_a_bidi_control_in_imported_text_reorders_nothing_and_shows_itself(page, alice):
    _batch, (key,) = assigned_batch([alice], n_keys=1, name="bidi")
    # U+202E (RIGHT-TO-LEFT OVERRIDE) would show "def ghi" as "ihg fed".
    TriggerPrefix.objects.filter(key=key, rank=1).update(
        text="abc\u202edef ghi", trigger_token=" ghi", next_token=" jk"
    )
    annotation = Annotation.objects.create(key=key, annotator=alice)
    pattern = Pattern.objects.create(
        annotation=annotation, description="mn\u202eop qr", kind="shallow", order=0
    )
    pattern.prefixes.set(TriggerPrefix.objects.filter(key=key, rank__in=[1, 2, 3]))
    open_first_key(page, "alice", PASSWORD, "bidi")

    row = _row(page, 1)
    _reads_in_logical_order(row.locator(".prefix-body"), "abcdefghijk")
    expect(row.get_by_test_id("prefix-text")).to_contain_text("⟨RLO⟩")
    assert "\u202e" not in row.evaluate("el => el.textContent")
    description = page.get_by_test_id("pattern-item").locator(".pattern-description")
    _reads_in_logical_order(description, "mnopqr")
    expect(description).to_contain_text("⟨RLO⟩")
