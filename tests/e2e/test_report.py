"""The report page (docs/annotation.md, "Reports"): carol opens a small annotated study's
report, sees Figure 2 and the agreement table, and downloads the chart; an annotator
cannot."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in
from tests.e2e.helpers import patient_expect  # noqa: F401 (an autouse fixture)
from tests.factories import PASSWORD, StudyFactory, annotate_key, key_with_prefixes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def small_study(alice, bob):
    """Two layers, one key each (5 prefixes), both annotators on both keys.

    Layer 1: alice writes shallow {1,2,3} and semantic {3,4,5} (shallow ×2,
    shallow+semantic, semantic ×2); bob one shallow+semantic {1,2,3} (shallow+semantic ×3,
    not-covered ×2). Pooled over the 10 ratings: 0.2 / 0.2 / 0.4 / 0.2.
    """
    study = StudyFactory(name="small report", vocab_size=100, n_layers=2, top_k=25)
    key_a = key_with_prefixes(5, study=study, layer=1, index=7)
    key_b = key_with_prefixes(5, study=study, layer=2, index=3)
    annotate_key(key_a, alice, [("shallow", [1, 2, 3]), ("semantic", [3, 4, 5])])
    annotate_key(key_a, bob, [("shallow+semantic", [1, 2, 3])])
    annotate_key(key_b, alice, [("semantic", [1, 2, 3])])
    annotate_key(key_b, bob, [("semantic", [2, 3, 4])])
    return study


def test_carol_opens_the_report_and_downloads_the_svg(page, carol, small_study, tmp_path):
    log_in(page, "carol", PASSWORD)
    page.get_by_role("link", name="small report").click()
    page.get_by_role("link", name="Report", exact=True).click()
    expect(page).to_have_url(re.compile(rf"/manage/studies/{small_study.pk}/report$"))
    expect(page.get_by_role("heading", name="Report: small report")).to_be_visible()

    # Figure 2: a bar per layer and one over all layers, heights from the shares.
    chart = page.get_by_test_id("figure2-chart")
    expect(chart).to_be_visible()
    expect(chart.locator("g.bar")).to_have_count(3)
    layer1 = chart.locator('g.bar[data-layer="1"]')
    expect(layer1.locator("rect.bar-segment")).to_have_count(4)
    both = layer1.locator('rect[data-label="shallow+semantic"]')
    assert float(both.get_attribute("data-share")) == pytest.approx(0.4)
    assert float(both.get_attribute("height")) == pytest.approx(0.4 * 240)

    # The agreement table: the four statistics, per layer and overall.
    agreement = page.get_by_test_id("agreement-table")
    expect(agreement).to_be_visible()
    for name in ("Krippendorff's α", "Fleiss' κ", "Mean Cohen's κ", "Raw agreement"):
        expect(agreement.get_by_role("columnheader", name=name)).to_be_visible()
    expect(agreement.locator("tbody tr")).to_have_count(3)
    expect(page.get_by_test_id("coverage-table")).to_contain_text("65%–80%")
    expect(page.get_by_test_id("perturbation-none")).to_have_text(
        "Not measured for this study: its mining run did not measure token removal"
        " (§3.2, Figure 3)."
    )

    # The chart as SVG: a standalone, well-formed document with the same bars.
    with page.expect_download() as info:
        page.get_by_role("button", name="SVG", exact=True).click()
    download = info.value
    assert download.suggested_filename.endswith(".svg")
    saved = tmp_path / "figure2.svg"
    download.save_as(saved)
    text = saved.read_text(encoding="utf-8")
    assert text.startswith(("<svg", "<?xml"))
    assert "<rect" in text
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == f"{SVG}svg"
    bars = [g for g in root.iter(f"{SVG}g") if g.get("class") == "bar"]
    assert len(bars) == 3

    # …and as PNG, drawn through a canvas.
    with page.expect_download() as info:
        page.get_by_role("button", name="PNG", exact=True).click()
    png = Path(info.value.path()).read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")

    # The CSV link carries the filters and answers a CSV.
    csv_href = page.get_by_test_id("report-csv").get_attribute("href")
    assert csv_href == f"/api/admin/studies/{small_study.pk}/report.csv"
    answer = page.request.get(csv_href)
    assert answer.status == 200
    assert answer.text().startswith("section,view,layer,annotator,metric,value,low,high,n")


def test_an_annotator_cannot_open_the_report(page, alice, small_study):
    log_in(page, "alice", PASSWORD)
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    page.goto(f"/manage/studies/{small_study.pk}/report")
    expect(page.get_by_test_id("staff-only")).to_have_text(
        "Only administrators can see these screens."
    )
    expect(page.get_by_test_id("figure2-chart")).to_have_count(0)
    answer = page.request.get(f"/api/admin/studies/{small_study.pk}/report/")
    assert answer.status == 403
    assert page.request.get(f"/api/admin/studies/{small_study.pk}/report.csv").status == 403


def _every_key_counts(n_layers: int, d_ff: int) -> dict:
    """§4 counts as the mining pass stores them: layer L's next-token matches are L."""
    return {
        "format": "ffkv.value-agreement/v1",
        "vocab_size": 49152,
        "variants": ["without_final_norm", "with_final_norm"],
        "final_norm": "model.norm",
        "layers": [
            {
                "layer": layer,
                "n_keys": d_ff,
                "next_end": 3,
                "next_unknown": 2,
                "next_token": {"without_final_norm": layer, "with_final_norm": 2 * layer},
                "trigger_token": {"without_final_norm": 0, "with_final_norm": 1},
            }
            for layer in range(1, n_layers + 1)
        ],
    }


def test_carol_reads_value_agreement_over_every_key_of_30_layers(page, carol, alice):
    study = StudyFactory(
        name="thirty layers",
        n_layers=30,
        d_ff=1536,
        vocab_size=49152,
        value_agreement=_every_key_counts(30, 1536),
        mining_definitions={
            "family": "Llama",
            "module": "layers.{layer}.mlp.down_proj (input)",
            "coefficient": "post",
            "when": "after the activation",
            "bias": "none",
            "text": "m_i = act(gate·x)·(up·x), the i-th input of mlp.down_proj.",
            "checkpoint_note": "The weights are dequantized from 4 bits.",
        },
    )
    key_with_prefixes(3, study=study, layer=1, index=0)
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))  # signed in before going on
    page.goto(f"/manage/studies/{study.pk}/report")

    chart = page.get_by_test_id("value-agreement-chart")
    expect(chart).to_be_visible()
    series = chart.locator("g.series")
    expect(series).to_have_count(4)  # 2 readings x without / with the final norm
    plain_next = chart.locator(
        'g.series[data-reading="next_token"][data-variant="without_final_norm"]'
    )
    expect(plain_next.locator("g.point-group")).to_have_count(30)
    layer30 = plain_next.locator('g.point-group[data-layer="30"] circle.point')
    # 30 matches of 1536 - 2 keys whose next token is unknown
    assert float(layer30.get_attribute("data-rate")) == pytest.approx(30 / 1534)
    baseline = chart.locator("line.baseline")
    assert float(baseline.get_attribute("data-baseline")) == pytest.approx(1 / 49152)
    # the study's checkpoint note is one of the report's definitions (a folded list)
    expect(page.locator("dd", has_text="The weights are dequantized from 4 bits.")).to_have_count(1)


def test_an_encoder_report_says_value_agreement_does_not_apply(page, carol):
    study = StudyFactory(name="an encoder", is_causal=False, n_layers=2, vocab_size=30522)
    key_with_prefixes(3, study=study, layer=1, index=0)
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))  # signed in before going on
    page.goto(f"/manage/studies/{study.pk}/report")
    expect(page.get_by_test_id("value-every-key-na")).to_contain_text(
        "Does not apply: encoders have no next token"
    )
    expect(page.get_by_test_id("value-agreement-chart")).to_have_count(0)


def test_carol_reads_the_definitions_the_ties_and_why_a_table_is_empty(
    page, carol, alice, bob, small_study
):
    """What a researcher reads on the report: definitions in words (no field names), what
    a majority tie is and how many there are, and why agreement has nothing to show."""
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))  # signed in before going on
    page.goto(f"/manage/studies/{small_study.pk}/report")
    expect(page.get_by_test_id("figure2-chart")).to_be_visible()

    page.get_by_text("How each number is defined").click()
    majority = page.locator('.definition[data-term="figure2_majority"]')
    expect(majority.locator("dt")).to_have_text("Figure 2, by majority label")
    expect(majority.locator("dd")).to_contain_text(
        "A tie splits that prefix's vote equally between the tied labels"
    )
    definitions = page.locator(".definitions dl").inner_text()
    assert "`" not in definitions
    assert not re.findall(r"\b(?:figure2_\w+|ties|next_unknown|next_end)\b", definitions)

    # Majority: layer 1 ties on ranks 1, 2, 4 and 5; layer 2 on ranks 1 and 4.
    page.get_by_label("majority label").check()
    ties = page.get_by_test_id("majority-ties")
    expect(ties).to_contain_text(
        "A tie is a prefix where two or more labels have equally many annotators"
    )
    expect(ties).to_contain_text("6 of 10 prefixes are ties.")

    # alice and bob on different keys: nothing to agree on, and the page says why.
    apart = StudyFactory(name="apart", vocab_size=100, n_layers=1, top_k=25)
    annotate_key(
        key_with_prefixes(5, study=apart, layer=1, index=0), alice, [("shallow", [1, 2, 3])]
    )
    annotate_key(
        key_with_prefixes(5, study=apart, layer=1, index=1), bob, [("semantic", [2, 3, 4])]
    )
    page.goto(f"/manage/studies/{apart.pk}/report")
    expect(page.get_by_test_id("agreement-empty")).to_have_text(
        "No key has two annotators yet, so agreement cannot be computed."
    )
    expect(page.get_by_test_id("agreement-table")).to_have_count(0)
    expect(page.get_by_test_id("jaccard-empty")).to_have_text(
        "No key has two annotators yet, so their patterns cannot be compared."
    )


def test_carol_reads_how_far_each_number_can_be_trusted(page, carol, alice, bob):
    """The report says how many keys stand behind its numbers: the sampled keys a layer
    in §4's caption, a warning beside an interval on fewer than 10 keys, one line for the
    layers without ratings, and the one key left out of §4's reading (a)."""
    study = StudyFactory(
        name="three layers",
        n_layers=3,
        d_ff=64,
        vocab_size=49152,
        value_agreement={
            **_every_key_counts(3, 64),
            "layers": [
                {**row, "next_unknown": 1 if row["layer"] == 1 else 0}
                for row in _every_key_counts(3, 64)["layers"]
            ],
        },
    )
    for layer in (1, 2, 3):
        for index in (1, 2):
            key = key_with_prefixes(
                6, study=study, layer=layer, index=index, value_top_token_ids=[7]
            )
            if layer == 1:
                annotate_key(key, alice, [("shallow", [1, 2, 3])])
                annotate_key(key, bob, [("shallow" if index == 1 else "semantic", [1, 2, 3])])
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))  # signed in before going on
    page.goto(f"/manage/studies/{study.pk}/report")

    agreement = page.get_by_test_id("agreement-table")
    warning = agreement.locator('tbody tr:has(th:text-is("Layer 1")) [data-testid="few-keys"]')
    expect(warning.first).to_be_visible()
    expect(warning.first).to_have_text("only 2 keys")
    expect(page.get_by_test_id("agreement-table-few-keys")).to_contain_text(
        "the interval rests on fewer than 10 keys"
    )
    expect(agreement.get_by_test_id("folded-layers")).to_have_text(
        "Layers 2–3: no key with two annotators"
    )
    expect(page.get_by_test_id("coverage-table").get_by_test_id("folded-layers")).to_have_text(
        "Layers 2–3: no ratings"
    )
    expect(page.get_by_test_id("value-agreement-table").locator("caption")).to_contain_text(
        "Sampled keys only (2 keys a layer: a rate moves in steps of 50.0%)"
    )
    expect(page.get_by_test_id("value-every-key-note")).to_contain_text(
        "Reading (a) leaves out the 1 key whose rank-1 prefix ends where a sentence was cut"
    )
    page.get_by_text("How each number is defined").click()
    expect(page.locator('.definition[data-term="bootstrap"] dd')).to_contain_text(
        "An interval that rests on fewer than 10 keys is marked"
    )
