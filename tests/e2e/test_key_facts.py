"""What the workspace says about a key itself: a key that barely fires, and numbers too
small for a fixed number of decimals."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotate.models import TriggerPrefix
from tests.e2e.helpers import open_first_key, patient_expect  # noqa: F401 (autouse fixture)
from tests.factories import PASSWORD, StudyFactory, assigned_batch

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_key_that_barely_fires_says_so_and_its_small_numbers_keep_their_digits(page, alice):
    study = StudyFactory(show_value_tokens=True)
    _batch, (key,) = assigned_batch([alice], n_keys=1, name="quiet", study=study)
    # Of its top 25, one sentence activates the key; the other 24 sit just below 0.
    TriggerPrefix.objects.filter(key=key).exclude(rank=1).update(coefficient=-0.00017)
    TriggerPrefix.objects.filter(key=key, rank=1).update(coefficient=0.031)
    key.value_top_tokens = [[" basics", 4e-5], [" He", 0.42]]
    key.save(update_fields=["value_top_tokens"])

    open_first_key(page, "alice", PASSWORD, "quiet")
    expect(page.get_by_test_id("almost-never-active")).to_contain_text(
        "This key is almost never active in this corpus."
    )
    coefficients = page.get_by_test_id("coefficient")
    expect(coefficients.first).to_have_text("0.031")
    expect(coefficients.nth(1)).to_have_text("-1.7E-4")
    expect(page.get_by_test_id("value-token-probability")).to_have_text(["0.004%", "42%"])
