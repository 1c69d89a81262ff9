"""The trigger token highlighted in place in the text as written (issue #12, item 5).

An uncased tokenizer (MiniLM) decodes "Marriage" as "marriage"; before the miner kept the
trigger's character span the workspace showed "The Marriage marriage". Now it shows the
text exactly as written, the trigger marked in it, once."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotate.models import TriggerPrefix
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
