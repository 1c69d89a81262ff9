"""The report of the hand-built study (tests/reports/conftest.py), computed by hand."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.models import TriggerPrefix
from reports.report import DEFINITIONS, report_build, report_csv
from reports.selectors.report_filter import ReportFilter
from reports.stats.bootstrap import MIN_BOOTSTRAP_KEYS
from tests.conftest import client_for
from tests.factories import StudyFactory, UserFactory, annotate_key, key_with_prefixes

pytestmark = pytest.mark.django_db

S, M, SS, NC = "shallow", "semantic", "shallow_semantic", "not_covered"


def shares(row):
    return {k: pytest.approx(v) if v is not None else None for k, v in row["shares"].items()}


def test_figure2_pooled_shares_are_the_hand_counts(hand_study):
    fig = report_build(study=hand_study)["figure2"]
    layer1, layer2 = fig["pooled"]["layers"]
    # Layer 1: alice S S SS M M, bob SS SS SS NC NC → 2 S, 2 M, 4 SS, 2 NC of 10.
    assert layer1["layer"] == 1 and layer1["n"] == 10
    assert shares(layer1) == {S: 0.2, M: 0.2, SS: 0.4, NC: 0.2}
    # Layer 2: bob's draft is left out by default; alice covered nothing.
    assert layer2["layer"] == 2 and layer2["n"] == 5
    assert shares(layer2) == {S: 0.0, M: 0.0, SS: 0.0, NC: 1.0}
    assert fig["pooled"]["overall"]["n"] == 15
    assert shares(fig["pooled"]["overall"]) == {S: 2 / 15, M: 2 / 15, SS: 4 / 15, NC: 7 / 15}


def test_figure2_with_drafts_counts_bobs_draft(hand_study):
    fig = report_build(study=hand_study, flt=ReportFilter(submitted_only=False))["figure2"]
    layer2 = fig["pooled"]["layers"][1]
    assert layer2["n"] == 10
    assert shares(layer2) == {S: 0.0, M: 0.3, SS: 0.0, NC: 0.7}


def test_figure2_per_annotator_and_by_majority(hand_study):
    fig = report_build(study=hand_study)["figure2"]
    alice, bob = fig["per_annotator"]
    assert alice["annotator"] == "alice" and bob["annotator"] == "bob"
    assert shares(alice["layers"][0]) == {S: 0.4, M: 0.4, SS: 0.2, NC: 0.0}
    assert shares(bob["layers"][0]) == {S: 0.0, M: 0.0, SS: 0.6, NC: 0.4}
    assert bob["layers"][1]["n"] == 0  # only a draft in layer 2
    # Majority, layer 1: ranks 1-2 tie S|SS, rank 3 SS, ranks 4-5 tie M|NC.
    majority = fig["majority"]["layers"][0]
    assert majority["ties"] == 4
    assert majority["counts"] == {S: 1.0, M: 1.0, SS: 2.0, NC: 1.0}


def test_coverage_is_the_hand_count(hand_study):
    cov = report_build(study=hand_study)["coverage"]
    layer1, layer2 = cov["layers"]
    assert (layer1["covered"], layer1["n_prefixes"]) == (8, 10)
    assert layer1["share_covered"] == pytest.approx(0.8)
    assert layer1["mean_patterns_per_key"] == pytest.approx(1.5)  # 2 + 1 over 2 annotations
    assert layer2["share_covered"] == 0.0 and layer2["mean_patterns_per_key"] == 0.0
    overall = cov["overall"]
    assert overall["share_covered"] == pytest.approx(8 / 15)
    assert overall["mean_patterns_per_key"] == pytest.approx(1.0)  # 3 patterns, 3 annotations


def test_agreement_of_the_hand_study(hand_study):
    agreement = report_build(study=hand_study)["agreement"]
    assert agreement["coders"] == ["alice", "bob"]
    layer1 = agreement["labels"]["layers"][0]
    # 5 units rated by both; they agree on rank 3 only.
    assert layer1["raw_agreement"]["value"] == pytest.approx(0.2)
    assert layer1["raw_agreement"]["n_units"] == 5
    # Cohen: p_o = 0.2, p_e = 0.2 (alice SS) × 0.6 (bob SS) = 0.12.
    assert layer1["cohen_kappa_mean"]["value"] == pytest.approx((0.2 - 0.12) / 0.88)
    alice = ["shallow", "shallow", "ss", "semantic", "semantic"]
    bob = ["ss", "ss", "ss", "nc", "nc"]
    expected = krippendorff.alpha(
        np.array([alice, bob], dtype=object).astype(str), level_of_measurement="nominal"
    )
    assert layer1["krippendorff_alpha"]["value"] == pytest.approx(expected)
    # Layer 2 has a single submitted coder: no unit to agree on.
    layer2 = agreement["labels"]["layers"][1]
    assert layer2["krippendorff_alpha"] == {
        "value": None,
        "low": None,
        "high": None,
        "n_units": 0,
        "n_keys": 0,
        "few_keys": False,
    }
    # Binary: alice covers ranks 1-5, bob 1-3 → they agree on 3 of 5.
    binary = agreement["binary"]["layers"][0]
    assert binary["raw_agreement"]["value"] == pytest.approx(0.6)


def test_pattern_jaccard_of_the_hand_study(hand_study):
    jac = report_build(study=hand_study)["pattern_jaccard"]
    (pair,) = jac["pairs"]
    assert pair["annotators"] == ["alice", "bob"]
    # Key A: alice {1,2,3}→1, {3,4,5}→1/5; bob {1,2,3}→1: mean (1 + 0.2 + 1) / 3.
    assert pair["layers"][0] == {"layer": 1, "mean": pytest.approx(2.2 / 3), "n_keys": 1}
    assert pair["layers"][1]["n_keys"] == 0  # bob has only a draft on key B
    with_drafts = report_build(study=hand_study, flt=ReportFilter(submitted_only=False))
    # Key B with the draft: alice wrote nothing, so bob's pattern best-matches 0.
    assert with_drafts["pattern_jaccard"]["pairs"][0]["layers"][1]["mean"] == 0.0


def test_value_agreement_and_perturbation_of_the_hand_study(hand_study):
    report = report_build(study=hand_study)
    va = report["value_agreement"]
    # Key A's argmax 1001 is the next token of its rank-1 prefix; key B's argmax 1 is the
    # trigger token of its rank-1 prefix (tests/factories.key_with_prefixes).
    assert va["random_baseline"] == pytest.approx(0.01)
    layer1, layer2 = va["layers"]
    assert (layer1["next_token"]["rate"], layer1["trigger_token"]["rate"]) == (1.0, 0.0)
    assert (layer2["next_token"]["rate"], layer2["trigger_token"]["rate"]) == (0.0, 1.0)
    assert layer1["next_token"]["low"] == pytest.approx(0.206549, abs=1e-6)  # Wilson 1 of 1
    pert = report["perturbation"]
    assert pert["layers"][0] == {
        "layer": 1,
        "n_keys": 1,
        "first": 0.5,
        "last": 0.1,
        "random": 0.2,
    }
    assert pert["layers"][1] == {
        "layer": 2,
        "n_keys": 0,
        "first": None,
        "last": None,
        "random": None,
    }


def test_filters_select_annotators_and_layers(hand_study):
    report = report_build(study=hand_study, flt=ReportFilter(annotators=("alice",), layers=(1,)))
    assert [row["layer"] for row in report["figure2"]["pooled"]["layers"]] == [1]
    assert report["agreement"]["coders"] == ["alice"]
    assert shares(report["figure2"]["pooled"]["overall"]) == {S: 0.4, M: 0.4, SS: 0.2, NC: 0.0}
    assert report["pattern_jaccard"]["pairs"] == []


def test_the_report_csv_has_one_number_per_row(hand_study):
    text = report_csv(report_build(study=hand_study))
    lines = text.splitlines()
    assert lines[0] == "section,view,layer,annotator,metric,value,low,high,n,interval_keys,few_keys"
    assert "figure2,pooled,1,,shallow+semantic,0.4,,,4,," in lines
    assert "coverage,,all,,share_covered,0.5333333333333333,,,15,," in lines


def test_the_report_csv_writes_counts_as_integers(hand_study):
    rows = list(csv.DictReader(io.StringIO(report_csv(report_build(study=hand_study)))))
    counts = [row["n"] for row in rows if row["n"]]
    assert counts and not [n for n in counts if n.endswith(".0")]
    # A majority count may be a split vote: layer 1's ranks 1-2 tie shallow with
    # shallow+semantic, so each gets 0.5 + 0.5 = 1 there, and whole counts stay whole.
    majority = {
        row["metric"]: row["n"]
        for row in rows
        if (row["section"], row["view"], row["layer"]) == ("figure2", "majority", "1")
    }
    assert majority == {
        "shallow": "1",
        "semantic": "1",
        "shallow+semantic": "2",
        "not-covered": "1",
    }


EVERY_KEY = {
    "format": "ffkv.value-agreement/v1",
    "vocab_size": 100,
    "variants": ["without_final_norm", "with_final_norm"],
    "final_norm": "model.norm",
    "layers": [
        {
            "layer": layer,
            "n_keys": 40,
            "next_end": 2,
            "next_unknown": 10 * (layer - 1),
            "next_token": {"without_final_norm": layer, "with_final_norm": 2 * layer},
            "trigger_token": {"without_final_norm": 0, "with_final_norm": 1},
        }
        for layer in (1, 2)
    ],
}


def test_the_report_has_value_agreement_over_every_key_from_the_study(hand_study):
    hand_study.value_agreement = EVERY_KEY
    hand_study.save()
    every = report_build(study=hand_study)["value_agreement_every_key"]
    assert every["applicable"] and every["variants"] == ["without_final_norm", "with_final_norm"]
    layer1, layer2 = every["layers"]
    assert layer2["next_token"]["with_final_norm"] == {
        "matches": 4,
        "n": 30,  # 40 keys, 10 of them on a cut sentence
        "rate": pytest.approx(4 / 30),
        "low": pytest.approx(0.053097, abs=1e-6),
        "high": pytest.approx(0.296813, abs=1e-6),
    }
    assert layer1["trigger_token"]["with_final_norm"]["n"] == 40
    assert every["overall"]["next_token"]["without_final_norm"]["matches"] == 3
    assert every["overall"]["next_unknown"] == 10
    # The report's layer filter applies here too.
    only_one = report_build(study=hand_study, flt=ReportFilter(layers=(1,)))
    assert [row["layer"] for row in only_one["value_agreement_every_key"]["layers"]] == [1]

    lines = report_csv(report_build(study=hand_study)).splitlines()
    assert (
        "value_agreement_every_key,next_token/with_final_norm,2,,rate,"
        "0.13333333333333333,0.053096554840547455,0.296813266820363,30,," in lines
    )
    assert "value_agreement_every_key,next_token/with_final_norm,2,,matches,4,,,30,," in lines
    assert "value_agreement_every_key,,all,,next_unknown,10,,,80,," in lines
    assert "value_agreement_every_key,random_baseline,all,,rate,0.01,,,100,," in lines


def test_an_imported_study_has_no_counts_over_every_key_and_says_so(hand_study):
    report = report_build(study=hand_study)
    every = report["value_agreement_every_key"]
    assert (every["applicable"], every["reason"]) == (False, "not_counted")
    assert (
        "value_agreement_every_key,not_counted,all,,applicable,0,,,,,"
        in report_csv(report).splitlines()
    )


def test_value_agreement_does_not_apply_to_an_encoder(hand_study):
    hand_study.is_causal = False
    hand_study.save()
    report = report_build(study=hand_study)
    for section in ("value_agreement", "value_agreement_every_key"):
        assert (report[section]["applicable"], report[section]["reason"]) == (False, "encoder")
        assert report[section]["overall"] is None
    lines = report_csv(report).splitlines()
    assert "value_agreement_every_key,encoder,all,,applicable,0,,,,," in lines
    assert "value_agreement,encoder,all,,applicable,0,,,,," in lines


def test_a_cut_sentence_leaves_the_sampled_key_out_of_the_next_token_reading(hand_study):
    # Key A's rank-1 prefix now ends a cut sentence: its next token is unknown.
    TriggerPrefix.objects.filter(key__study=hand_study, key__layer=1, rank=1).update(
        next_token=None, next_token_id=-2
    )
    va = report_build(study=hand_study)["value_agreement"]
    layer1 = va["layers"][0]
    assert layer1["n_keys"] == 1 and layer1["next_unknown"] == 1
    assert layer1["next_token"]["n"] == 0 and layer1["next_token"]["rate"] is None
    assert layer1["trigger_token"]["n"] == 1
    assert va["overall"]["next_token"]["n"] == 1
    lines = report_csv(report_build(study=hand_study)).splitlines()
    assert "value_agreement,,1,,next_unknown,1,,,1,," in lines


def test_the_definitions_carry_the_mining_definitions_and_the_checkpoint_note(hand_study):
    definitions = report_build(study=hand_study)["definitions"]
    assert "every key" in definitions["value_agreement_every_key"]
    assert "Wilson" in definitions["wilson_interval"]
    assert "mining" not in definitions and "checkpoint" not in definitions
    hand_study.mining_definitions = {
        "family": "llama",
        "module": "model.layers.{i}.mlp.down_proj",
        "coefficient": "pre",
        "when": "input of down_proj",
        "bias": "none",
        "text": "Coefficients are act(gate·x)·(up·x), the input of down_proj.",
        "checkpoint_note": "The weights are dequantized from 4 bits: every figure "
        "describes this checkpoint.",
    }
    hand_study.save()
    definitions = report_build(study=hand_study)["definitions"]
    assert definitions["mining"].startswith("Coefficients are act(gate·x)")
    assert "dequantized from 4 bits" in definitions["checkpoint"]


def _study_with(n_keys: int):
    study = StudyFactory(vocab_size=10)
    people = [UserFactory(username=f"coder{i}") for i in range(3)]
    for k in range(n_keys):
        key = key_with_prefixes(6, study=study, layer=1 + k % 3, index=k)
        for person in people:
            annotate_key(key, person, [("shallow", [1, 2, 3]), ("semantic", [2, 4, 6])])
    return study


def test_the_report_costs_the_same_queries_for_more_keys(db):
    small, large = _study_with(2), _study_with(9)
    counts = []
    for study in (small, large):
        with CaptureQueriesContext(connection) as ctx:
            report_build(study=study, replicates=50)
        counts.append(len(ctx.captured_queries))
    assert counts[0] == counts[1] <= 8


def test_keys_with_more_than_64_prefixes_are_labelled_too(alice, bob):
    study = StudyFactory(top_k=70)
    key = key_with_prefixes(70, study=study, layer=1, index=0)
    annotate_key(key, alice, [("semantic", [1, 65, 70])])
    annotate_key(key, bob, [("semantic", [1, 64, 70]), ("shallow", [2, 3, 64])])
    report = report_build(study=study, replicates=20)
    assert report["coverage"]["overall"]["covered"] == 3 + 5
    assert report["figure2"]["per_annotator"][1]["overall"]["counts"]["shallow_semantic"] == 1
    (pair,) = report["pattern_jaccard"]["pairs"]
    # alice {1,65,70} ↔ bob {1,64,70}: 2/4; bob's {2,3,64} best-matches 0 against alice.
    assert pair["overall"]["mean"] == pytest.approx((0.5 + 0.5 + 0.0) / 3)


def test_the_definitions_are_written_for_researchers_not_in_internal_names(hand_study):
    definitions = report_build(study=hand_study)["definitions"]
    # The keys are report.json's contract and stay; the texts are for people.
    assert {"figure2_pooled", "figure2_majority", "value_agreement_every_key"} <= set(definitions)
    for key, text in definitions.items():
        assert "`" not in text, key
        assert not re.findall(r"\b[a-z0-9]+_[a-z0-9_]+\b", text), key
    # A majority tie is explained: what it is and how it is counted.
    majority = definitions["figure2_majority"]
    assert "tie" in majority and "split" in majority and "½" in majority


def test_the_report_page_shows_the_same_definitions_in_english_and_has_them_in_chinese():
    """The SPA translates the definitions (report.definitionTexts); its English is the
    report's own words, so that the page and report.json never say different things."""
    i18n = Path(__file__).resolve().parents[2] / "frontend" / "src" / "i18n"
    english = json.loads((i18n / "en.json").read_text(encoding="utf-8"))["report"]
    chinese = json.loads((i18n / "zh-CN.json").read_text(encoding="utf-8"))["report"]
    assert english["definitionTexts"] == DEFINITIONS
    assert set(chinese["definitionTexts"]) == set(DEFINITIONS)
    assert set(english["terms"]) >= set(DEFINITIONS) and set(chinese["terms"]) >= set(DEFINITIONS)


# --- intervals resting on few keys ------------------------------------------------------


def _shared_keys_study(alice, bob, n_layer1: int):
    """Layer 1: ``n_layer1`` keys that alice and bob both annotated (agreeing on some,
    not on others); layer 2: one such key."""
    study = StudyFactory(n_layers=2)
    for k in range(n_layer1 + 1):
        key = key_with_prefixes(6, study=study, layer=1 if k < n_layer1 else 2, index=k)
        annotate_key(key, alice, [("shallow", [1, 2, 3])])
        annotate_key(key, bob, [("shallow" if k % 2 else "semantic", [1, 2, 3])])
    return study


@pytest.mark.parametrize(
    ("n_layer1", "few"), [(MIN_BOOTSTRAP_KEYS, False), (MIN_BOOTSTRAP_KEYS - 1, True)]
)
def test_an_interval_resting_on_fewer_keys_than_the_minimum_is_flagged(alice, bob, n_layer1, few):
    report = report_build(study=_shared_keys_study(alice, bob, n_layer1), replicates=50)
    agreement = report["agreement"]
    assert agreement["bootstrap_min_keys"] == MIN_BOOTSTRAP_KEYS == 10
    for view in ("labels", "binary"):
        layer1, layer2 = agreement[view]["layers"]
        overall = agreement[view]["overall"]
        for metric in ("krippendorff_alpha", "fleiss_kappa", "cohen_kappa_mean", "raw_agreement"):
            assert layer1[metric]["low"] is not None, (view, metric)
            assert (layer1[metric]["n_keys"], layer1[metric]["few_keys"]) == (n_layer1, few)
            # One key: an interval (every resample is that key) flagged as resting on it.
            assert (layer2[metric]["n_keys"], layer2[metric]["few_keys"]) == (1, True)
            assert (overall[metric]["n_keys"], overall[metric]["few_keys"]) == (n_layer1 + 1, False)
    # report.json says it where it defines the intervals.
    assert "fewer than 10 keys" in report["definitions"]["bootstrap"]


def test_a_layer_without_an_interval_is_not_flagged(hand_study):
    layer2 = report_build(study=hand_study)["agreement"]["labels"]["layers"][1]
    # Layer 2 has one submitted coder: no key to resample, no interval, no warning.
    assert layer2["raw_agreement"] == {
        "value": None,
        "low": None,
        "high": None,
        "n_units": 0,
        "n_keys": 0,
        "few_keys": False,
    }


def test_the_report_csv_flags_an_interval_on_few_keys_beside_it(alice, bob):
    study = _shared_keys_study(alice, bob, MIN_BOOTSTRAP_KEYS)
    rows = list(csv.DictReader(io.StringIO(report_csv(report_build(study=study, replicates=50)))))
    alpha = {
        row["layer"]: row
        for row in rows
        if (row["section"], row["view"], row["metric"])
        == ("agreement", "labels", "krippendorff_alpha")
    }
    assert (alpha["1"]["interval_keys"], alpha["1"]["few_keys"]) == ("10", "False")
    assert (alpha["2"]["interval_keys"], alpha["2"]["few_keys"]) == ("1", "True")
    assert (alpha["all"]["interval_keys"], alpha["all"]["few_keys"]) == ("11", "False")
    # Rows without a bootstrap interval leave both cells empty.
    coverage = next(row for row in rows if row["section"] == "coverage")
    assert (coverage["interval_keys"], coverage["few_keys"]) == ("", "")


def test_a_study_without_keys_gets_a_report_of_nothing_not_an_error(carol):
    # reshape could not infer the width of a per-key array with no rows (a 500 before)
    empty = StudyFactory(name="no keys yet")
    report = report_build(study=empty, replicates=10)
    assert report["figure2"]["pooled"]["overall"]["n"] == 0
    assert report["coverage"]["layers"] == []
    response = client_for(carol).get(f"/api/admin/studies/{empty.pk}/report/")
    assert response.status_code == 200
