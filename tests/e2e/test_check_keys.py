"""Check keys in the browser: carol sets a rate and assigns a batch; the check key drawn
for alice is one of her assignment's keys, listed, counted and served in its place, and
nothing on her screens tells it apart."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, AssignmentKey, GoldAnnotation
from tests.e2e.conftest import log_in
from tests.e2e.helpers import patient_expect  # noqa: F401 (autouse fixture)
from tests.factories import PASSWORD, BatchFactory, StudyFactory, key_with_prefixes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SUBMIT = "Submit and go to the next key"


def _buttons(page) -> list[str]:
    return sorted(
        name.strip() for name in page.get_by_role("button").all_inner_texts() if name.strip()
    )


def _key_url(key, assignment_id: int) -> re.Pattern[str]:
    return re.compile(rf"/keys/{key.pk}\?assignment={assignment_id}$")


def test_a_check_key_is_given_with_the_assignment_and_worked_in_its_order(page, carol, alice):
    study = StudyFactory(name="tiny-gpt2")
    first, third, fourth = (
        key_with_prefixes(25, study=study, layer=layer, index=index)
        for layer, index in [(1, 0), (1, 9), (2, 1)]
    )
    check = key_with_prefixes(25, study=study, layer=1, index=5)
    GoldAnnotation.objects.create(
        key=check, status=GoldAnnotation.Status.SUBMITTED, is_check=True, note="gold note"
    )
    BatchFactory(study=study, name="first", keys=[first, third, fourth])

    # carol: a rate of 100% on the study page, then the batch assigned to alice.
    log_in(page, "carol", PASSWORD)
    page.get_by_role("link", name="tiny-gpt2").click()
    rate = page.get_by_role("form", name="Check keys")
    expect(rate).to_contain_text("applies to keys given from then on")
    rate.get_by_label(
        "Share of the keys given to an annotator that each bring a check key (%)"
    ).fill("100")
    rate.get_by_role("button", name="Save").click()
    expect(rate.get_by_text("Saved.")).to_be_visible()
    page.get_by_role("link", name="first").click()
    expect(page.get_by_role("heading", name="Batch first")).to_be_visible()
    page.get_by_label("alice").check()
    page.get_by_label("Overlap (annotators per key)").fill("1")
    page.get_by_role("button", name="Assign").click()
    expect(page.get_by_test_id("assign-done")).to_be_visible()
    # The batch's page counts its own three keys: the check is not one of them.
    expect(page.get_by_test_id("batch-key")).to_have_count(3)
    expect(page.get_by_test_id("progress-annotator")).to_contain_text("3")
    assignment_id = AssignmentKey.objects.get(key=check, is_check=True).assignment_id

    # alice: four keys, the check in its (layer, index) place.
    page.context.clear_cookies()
    log_in(page, "alice", PASSWORD)
    row = page.get_by_test_id("assignment-row")
    expect(row).to_contain_text("0 / 4 keys")
    row.get_by_role("link", name="first").click()
    expect(page.get_by_test_id("assignment-key-row")).to_have_text(
        [
            re.compile(r"Layer 1 · key 0"),
            re.compile(r"Layer 1 · key 5"),
            re.compile(r"Layer 1 · key 9"),
            re.compile(r"Layer 2 · key 1"),
        ]
    )
    page.goto("/")
    page.get_by_role("button", name="Start first").click()
    expect(page).to_have_url(_key_url(first, assignment_id))
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    regular_buttons = _buttons(page)

    page.get_by_role("button", name=SUBMIT).click()
    expect(page).to_have_url(_key_url(check, assignment_id))
    expect(page.get_by_role("heading", name="Layer 1 · key 5")).to_be_visible()
    expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    text = page.locator("body").inner_text().lower()
    assert "check" not in text.replace("checkbox", "")
    assert "gold" not in text
    assert _buttons(page) == regular_buttons  # the same screen as a regular key

    for key in (third, fourth):
        page.get_by_role("button", name=SUBMIT).click()
        expect(page).to_have_url(_key_url(key, assignment_id))
        expect(page.get_by_test_id("prefix-row")).to_have_count(25)
    page.get_by_role("button", name=SUBMIT).click()
    # The last submit is settled once the workspace says nothing is left; leaving before
    # then could cut the request off (CI once counted 3 / 4).
    expect(page.get_by_test_id("all-done")).to_be_visible()
    page.goto("/")
    expect(page.get_by_test_id("assignment-row")).to_contain_text("4 / 4 keys")

    annotations = Annotation.objects.filter(annotator=alice)
    assert annotations.filter(status=Annotation.Status.SUBMITTED).count() == 4
    assert list(annotations.filter(is_check=True).values_list("key_id", flat=True)) == [check.pk]
