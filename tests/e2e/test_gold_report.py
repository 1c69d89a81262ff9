"""Gold in the report and the annotator table (docs/annotation.md, "Reports"): carol
switches Figure 2 to the gold source, reads each annotator against gold, and opens the
annotator table from the study page and downloads its CSV."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotate.models import Annotation, GoldAnnotation, GoldPattern
from tests.e2e.conftest import log_in
from tests.e2e.helpers import patient_expect  # noqa: F401 (an autouse fixture)
from tests.factories import PASSWORD, StudyFactory, annotate_key, key_with_prefixes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def gold_study(alice, bob):
    """Layer 1, one key of 5 prefixes: alice S S SS M M, bob SS SS SS NC NC; gold shallow
    {1,2} + semantic {3,4,5} (S S M M M), submitted. Layer 2: five keys without gold.
    alice works 40 s a key, bob 4 s."""
    study = StudyFactory(name="gold report", vocab_size=100, n_layers=2, top_k=25)
    key_a = key_with_prefixes(5, study=study, layer=1, index=7)
    key_b = key_with_prefixes(5, study=study, layer=2, index=3)
    annotate_key(key_a, alice, [("shallow", [1, 2, 3]), ("semantic", [3, 4, 5])])
    annotate_key(key_a, bob, [("shallow+semantic", [1, 2, 3])])
    annotate_key(key_b, alice, [("semantic", [1, 2, 3])])
    annotate_key(key_b, bob, [("semantic", [2, 3, 4])])
    # Four more keys that both submit, so that each has the 5 submitted keys a "fast"
    # flag needs at least.
    for index in range(10, 14):
        key = key_with_prefixes(5, study=study, layer=2, index=index)
        annotate_key(key, alice, [("semantic", [1, 2, 3])])
        annotate_key(key, bob, [("semantic", [1, 2, 3])])
    Annotation.objects.filter(key__study=study, annotator=alice).update(active_seconds=40)
    Annotation.objects.filter(key__study=study, annotator=bob).update(active_seconds=4)
    gold = GoldAnnotation.objects.create(key=key_a, status="submitted")
    by_rank = {p.rank: p for p in key_a.prefixes.all()}
    for order, (kind, ranks) in enumerate([("shallow", [1, 2]), ("semantic", [3, 4, 5])]):
        pattern = GoldPattern.objects.create(gold=gold, kind=kind, order=order, description="g")
        pattern.prefixes.set([by_rank[r] for r in ranks])
    return study


def test_carol_sees_gold_in_the_report_and_the_annotator_table(page, carol, gold_study):
    log_in(page, "carol", PASSWORD)
    page.get_by_role("link", name="gold report").click()
    page.get_by_role("link", name="Report", exact=True).click()
    chart = page.get_by_test_id("figure2-chart")
    expect(chart).to_be_visible()

    page.get_by_label("gold (curated)").check()
    expect(chart).to_contain_text("gold (curated)")
    # Gold covers layer 1 only: its bar and the overall one; layer 2 is named below.
    expect(chart.locator("g.bar")).to_have_count(2)
    semantic = chart.locator('g.bar[data-layer="1"] rect[data-label="semantic"]')
    assert float(semantic.get_attribute("data-share")) == pytest.approx(0.6)
    expect(page.get_by_test_id("gold-coverage-table")).to_contain_text("100.0%")
    alice_row = page.get_by_test_id("gold-agreement-table").locator('tr[data-annotator="alice"]')
    expect(alice_row).to_contain_text("0.667")
    expect(alice_row).to_contain_text("80.0%")

    page.get_by_test_id("annotator-table-link").click()
    expect(page).to_have_url(re.compile(rf"/manage/studies/{gold_study.pk}/annotators$"))
    table = page.get_by_test_id("annotator-table")
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.locator('tr[data-annotator="bob"]')).to_contain_text("fast")
    # Each quality flag says how much evidence it needs.
    page.get_by_text("Definitions", exact=True).click()
    expect(page.locator('.definition[data-term="fast"] dd')).to_contain_text(
        "over at least 5 submitted keys"
    )
    expect(page.locator('.definition[data-term="low_gold_agreement"] dd')).to_contain_text(
        "over at least 3 keys with gold"
    )
    with page.expect_download() as info:
        page.get_by_test_id("annotator-table-csv").click()
    text = Path(info.value.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["username"] for r in rows] == ["alice", "bob"]
    assert float(rows[0]["kappa_with_gold"]) == pytest.approx(2 / 3)
