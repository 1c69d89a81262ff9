"""The review flow (docs/annotation.md, "Review and gold"), end to end: alice and bob
annotated a study's keys; carol (an admin) opens Review, the study's queue, the key they
disagree on most (first in the queue), adopts alice's pattern, adopts one of bob's and
edits it in the gold, and saves the gold with Ctrl+Enter. The gold in the database is
what she made, and the report's gold source, empty before, now draws that key's layer
from it.

With ``FFKV_SCREENSHOTS=<folder>`` the adjudication screen (a 1440×900 window, both
patterns adopted, before saving) is written there as ``review-1440.png``: the whole page,
since the annotators' patterns sit below the fold at 900 px; a 64-colour palette, as
tests/e2e/test_layout.py writes the workspace's screenshots.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import GoldAnnotation, GoldPattern, Pattern
from tests.e2e.conftest import log_in
from tests.e2e.helpers import patient_expect  # noqa: F401 (an autouse fixture)
from tests.factories import PASSWORD, StudyFactory, annotate_key, assigned_batch

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WIDE = (1440, 900)


def annotate(key, annotator, patterns: list[tuple[str, str, list[int]]]) -> None:
    """``annotator``'s submitted annotation of ``key``: (description, kind, ranks) each."""
    annotation = annotate_key(key, annotator, [(kind, ranks) for _, kind, ranks in patterns])
    for order, (description, _, _) in enumerate(patterns):
        Pattern.objects.filter(annotation=annotation, order=order).update(description=description)


@pytest.fixture
def study(alice, bob):
    """Three keys of 10 prefixes. Created first, the two calm ones; the third is the one
    alice and bob disagree on most (9 of its 10 prefixes), so it leads the queue."""
    study = StudyFactory(name="review flow")
    _, (calm, mild, hot) = assigned_batch(
        [alice, bob], n_keys=3, n_prefixes=10, study=study, name="flow batch"
    )
    annotate(calm, alice, [("digits", "shallow", [1, 2, 3])])
    annotate(calm, bob, [("digits", "shallow", [1, 2, 3])])
    annotate(mild, alice, [("years", "shallow", [1, 2, 3])])
    annotate(mild, bob, [("years", "shallow", [1, 2, 3, 4])])
    # alice: shallow 1-5; bob: shallow 1, 9, 10 and semantic 4-8. Only prefix 1 agrees.
    annotate(hot, alice, [("numbers", "shallow", [1, 2, 3, 4, 5])])
    annotate(
        hot,
        bob,
        [("quantities", "semantic", [4, 5, 6, 7, 8]), ("round figures", "shallow", [1, 9, 10])],
    )
    return study, hot


def save_screenshot(page, tmp_path: Path, name: str) -> None:
    page.screenshot(path=tmp_path / f"{name}.png", full_page=True)
    folder = os.environ.get("FFKV_SCREENSHOTS")
    if folder:
        from PIL import Image

        Path(folder).mkdir(parents=True, exist_ok=True)
        with Image.open(tmp_path / f"{name}.png") as image:
            small = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
            small.save(Path(folder) / f"{name}.png", optimize=True)


def test_carol_adjudicates_the_most_disputed_key(page, carol, study, tmp_path):
    study, hot = study
    page.set_viewport_size({"width": WIDE[0], "height": WIDE[1]})
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))
    # Before: no key has gold, so the report's gold view has no bar for the key's layer.
    page.goto(f"/manage/studies/{study.pk}/report")
    chart = page.get_by_test_id("figure2-chart")
    expect(chart).to_be_visible()
    page.get_by_label("gold (curated)").check()
    expect(chart).to_contain_text("gold (curated)")
    expect(chart.locator(f'g.bar[data-layer="{hot.layer}"]')).to_have_count(0)

    page.get_by_test_id("review-link").click()
    page.get_by_role("link", name="review flow").click()
    expect(page.get_by_role("heading", name="Review queue: review flow")).to_be_visible()
    rows = page.get_by_test_id("queue-row")
    expect(rows).to_have_count(3)
    rows.first.get_by_role("link").click()

    # The first row is the key with the most disagreement.
    expect(page).to_have_url(re.compile(rf"/manage/review/keys/{hot.pk}$"))
    expect(
        page.get_by_role("heading", name=f"Review · layer {hot.layer} · key {hot.index}")
    ).to_be_visible()
    expect(page.get_by_test_id("review-row")).to_have_count(10)
    expect(page.get_by_test_id("disagree-mark")).to_have_count(9)

    # alice's pattern as it is.
    page.get_by_role("button", name="Adopt alice’s pattern “numbers”").click()
    gold = page.get_by_test_id("gold-pattern")
    expect(gold).to_have_count(1)
    expect(gold.first).to_contain_text("adopted from alice")
    # bob's "quantities", then edited in the gold: description, kind and prefixes.
    page.get_by_role("button", name="Adopt bob’s pattern “quantities”").click()
    expect(gold).to_have_count(2)
    expect(page.get_by_test_id("save-state")).to_have_text("Saved")
    page.get_by_role("button", name="Edit gold pattern “quantities”").click()
    page.get_by_label("Pattern description").fill("amounts of things")
    page.get_by_role("radio", name=re.compile(r"shallow\+semantic$")).check()
    grid = page.get_by_test_id("review-row")
    grid.nth(8).click()  # rank 9 joins 4-8
    page.get_by_role("button", name="Save pattern").click()
    edited = gold.filter(has_text="amounts of things")
    expect(edited).to_contain_text("adopted from bob")
    expect(edited).to_contain_text("prefixes 4, 5, 6, 7, 8, 9")
    expect(edited).to_contain_text("shallow+semantic")
    expect(page.get_by_test_id("save-state")).to_have_text("Saved")
    expect(page.get_by_test_id("gold-column")).to_be_visible()
    save_screenshot(page, tmp_path, "review-1440")

    # Saved with the keyboard, from the grid.
    page.get_by_test_id("review-grid").focus()
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("button", name="Reopen the gold")).to_be_visible()
    expect(page.get_by_test_id("save-state")).to_have_text("Saved")

    record = GoldAnnotation.objects.get(key=hot)
    assert record.status == GoldAnnotation.Status.SUBMITTED
    assert record.curator == carol
    patterns = {
        p.source_annotator.username: p
        for p in GoldPattern.objects.filter(gold=record).select_related(
            "source_annotator", "source_pattern"
        )
    }
    assert set(patterns) == {"alice", "bob"}
    alices, bobs = patterns["alice"], patterns["bob"]
    assert alices.source == GoldPattern.Source.ADOPTED
    assert (alices.description, alices.kind) == ("numbers", "shallow")
    assert sorted(alices.prefixes.values_list("rank", flat=True)) == [1, 2, 3, 4, 5]
    assert alices.source_pattern.description == "numbers"
    assert bobs.source == GoldPattern.Source.ADOPTED
    assert bobs.source_pattern.description == "quantities"
    assert (bobs.description, bobs.kind) == ("amounts of things", "shallow+semantic")
    assert sorted(bobs.prefixes.values_list("rank", flat=True)) == [4, 5, 6, 7, 8, 9]

    # After: the gold view of Figure 2 is the gold's labels. alice's shallow 1-5 and bob's
    # edited shallow+semantic 4-9 give shallow 1-3, shallow+semantic 4-9, 10 not covered.
    page.goto(f"/manage/studies/{study.pk}/report")
    expect(chart).to_be_visible()
    page.get_by_label("gold (curated)").check()
    bar = chart.locator(f'g.bar[data-layer="{hot.layer}"]')
    expect(bar).to_have_count(1)
    shares = {
        segment.get_attribute("data-label"): float(segment.get_attribute("data-share"))
        for segment in bar.locator("rect.bar-segment").all()
    }
    expected = {"shallow": 0.3, "shallow+semantic": 0.6, "not-covered": 0.1}
    assert {label: share for label, share in shares.items() if share} == pytest.approx(expected)
