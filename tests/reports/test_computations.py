"""Agreement statistics against textbook values, and the vectorised pieces against
plain definitions."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from annotate.labels import (
    KIND_BITS,
    KINDS,
    LABEL_OF_BITS,
    LABELS,
    label_for_kinds,
)
from reports.stats.agreement import agreement, cohen_kappa, fleiss_kappa, krippendorff_alpha_nominal
from reports.stats.arrays import StudyArrays, empty_int
from reports.stats.figure2 import figure2
from reports.stats.labels import masks_from_ranks, rating_grid
from reports.stats.patterns import best_match_jaccard
from reports.stats.value_agreement import (
    value_agreement,
    value_agreement_every_key,
    wilson_interval,
)

nan = np.nan

AGREEMENT_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "agreement"


def textbook_table(name: str) -> tuple[np.ndarray, dict]:
    """A published table from fixtures/agreement/ (its source and the values it reports
    are written beside the data) as floats, a missing value (null) as NaN."""
    table = json.loads((AGREEMENT_FIXTURES / name).read_text(encoding="utf-8"))
    return np.array(table["data"], dtype=float), table["expected"]


def test_krippendorff_alpha_of_the_2011_nominal_example_is_0_743():
    # Observers A-D (rows), units 1-12 (columns), values 1-5, with missing data.
    data, expected = textbook_table("krippendorff-2011-nominal.json")
    assert data.shape == (4, 12)
    assert expected["krippendorff_alpha_nominal"] == 0.743
    assert round(krippendorff_alpha_nominal(data - 1), 3) == 0.743
    # The maintained package agrees on the same table.
    assert round(krippendorff.alpha(data, level_of_measurement="nominal"), 3) == 0.743


def test_fleiss_kappa_of_the_worked_example_is_0_210():
    # 10 subjects (rows), 5 categories (columns): how many of the 14 raters chose each.
    counts, expected = textbook_table("fleiss-kappa-worked-example.json")
    assert counts.shape == (10, 5)
    assert (counts.sum(axis=1) == 14).all()
    # The category shares the source prints: a mistyped cell shows here first.
    assert (counts.sum(axis=0) / counts.sum()).round(3).tolist() == expected["p_j"]
    assert expected["fleiss_kappa"] == 0.210
    assert round(fleiss_kappa(counts), 3) == 0.210


def test_cohen_kappa_of_a_hand_example():
    # 8 units: they agree on 6 (p_o = 0.75); each says 0 five times and 1 three times, so
    # p_e = (5/8)² + (3/8)² = 34/64 and κ = (0.75 - 34/64) / (1 - 34/64) = 7/15.
    a = [0, 0, 1, 1, 0, 1, 0, 0]
    b = [0, 1, 1, 1, 0, 0, 0, 0]
    assert cohen_kappa(a, b) == pytest.approx(7 / 15)


def test_cohen_kappa_of_identical_coders_is_one_and_of_constant_coders_undefined():
    assert cohen_kappa([0, 1, 2, 1], [0, 1, 2, 1]) == pytest.approx(1.0)
    assert np.isnan(cohen_kappa([1, 1, 1], [1, 1, 1], n_values=2))


@pytest.mark.parametrize("seed", range(5))
def test_alpha_from_sufficient_statistics_equals_the_krippendorff_package(seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 4, size=(5, 80)).astype(float)
    data[rng.random(data.shape) < 0.35] = nan
    ours = krippendorff_alpha_nominal(data)
    theirs = krippendorff.alpha(data, value_domain=[0, 1, 2, 3], level_of_measurement="nominal")
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_the_label_of_every_set_of_kinds_is_annotates_label():
    for n in range(4):
        for kinds in itertools.combinations(KINDS, n):
            bits = sum(KIND_BITS[k] for k in kinds)
            assert LABELS[LABEL_OF_BITS[bits]] == label_for_kinds(kinds)


def _arrays(**overrides):
    """Two coders on one key of 4 prefixes, no patterns unless given."""
    base = {
        "layers": np.array([1]),
        "key_layer": np.array([1]),
        "key_index": np.array([0]),
        "prefix_exists": np.ones((1, 4), dtype=bool),
        "coders": ("a", "b"),
        "ann_key": np.array([0, 0]),
        "ann_coder": np.array([0, 1]),
        "pat_ann": empty_int(),
        "pat_kind": np.zeros(0, dtype=np.uint8),
        "value_top_id": np.array([-1]),
        "top1_next_id": np.array([-1]),
        "top1_trigger_id": np.array([-1]),
        "vocab_size": 0,
        "perturbation": np.full((1, 3), nan),
    }
    cov_pat = overrides.pop("cov_pat", empty_int())
    cov_rank = overrides.pop("cov_rank", empty_int())
    base.update(overrides)
    n_ranks = base["prefix_exists"].shape[1]
    base["pat_mask"] = masks_from_ranks(len(base["pat_ann"]), cov_pat, cov_rank, n_ranks)
    return StudyArrays(**base)


def test_a_majority_tie_splits_the_units_vote_between_the_tied_labels():
    # a: shallow on ranks 1-3; b: semantic on ranks 2-4.
    arrays = _arrays(
        pat_ann=np.array([0, 1]),
        pat_kind=np.array([1, 2], dtype=np.uint8),
        cov_pat=np.array([0, 0, 0, 1, 1, 1]),
        cov_rank=np.array([1, 2, 3, 2, 3, 4]),
    )
    grid = rating_grid(arrays)
    assert grid[:, 0].tolist() == [[0, 0, 0, 3], [3, 1, 1, 1]]
    majority = figure2(arrays, grid)["majority"]["overall"]
    # Every unit ties: rank 1 shallow|nc, 2-3 shallow|semantic, 4 nc|semantic.
    assert majority["ties"] == 4
    assert majority["counts"] == {
        "shallow": 1.5,
        "semantic": 1.5,
        "shallow_semantic": 0.0,
        "not_covered": 1.0,
    }


def test_best_match_jaccard_is_symmetric_over_both_coders_patterns():
    # a: {1,2,3} and {2,3,4}; b: {1,2,3}. Best matches: 1, 2/4, and b's 1 → mean 5/6.
    arrays = _arrays(
        pat_ann=np.array([0, 0, 1]),
        pat_kind=np.array([1, 1, 2], dtype=np.uint8),
        cov_pat=np.array([0, 0, 0, 1, 1, 1, 2, 2, 2]),
        cov_rank=np.array([1, 2, 3, 2, 3, 4, 1, 2, 3]),
    )
    assert best_match_jaccard(arrays, 0, 1)[0] == pytest.approx(5 / 6)


def test_best_match_jaccard_is_zero_against_no_pattern_and_undefined_without_any():
    one_sided = _arrays(
        pat_ann=np.array([0]),
        pat_kind=np.array([1], dtype=np.uint8),
        cov_pat=np.array([0, 0, 0]),
        cov_rank=np.array([1, 2, 3]),
    )
    assert best_match_jaccard(one_sided, 0, 1)[0] == 0.0
    assert np.isnan(best_match_jaccard(_arrays(), 0, 1)[0])


def test_the_bootstrap_is_seeded_and_its_interval_holds_the_estimate():
    rng = np.random.default_rng(3)
    n_keys, n_ranks = 40, 5
    # Two coders who mostly agree.
    a = rng.integers(0, 4, size=(n_keys, n_ranks))
    b = np.where(rng.random((n_keys, n_ranks)) < 0.8, a, rng.integers(0, 4, size=(n_keys, n_ranks)))
    grid = np.stack([a, b]).astype(np.int8)
    arrays = _arrays(
        layers=np.array([1, 2]),
        key_layer=np.repeat([1, 2], n_keys // 2),
        key_index=np.arange(n_keys),
        prefix_exists=np.ones((n_keys, n_ranks), dtype=bool),
    )
    first = agreement(arrays, grid, replicates=200, seed=1)
    again = agreement(arrays, grid, replicates=200, seed=1)
    other = agreement(arrays, grid, replicates=200, seed=2)
    assert first == again
    assert first != other
    for row in [*first["labels"]["layers"], first["labels"]["overall"]]:
        for name in ("krippendorff_alpha", "fleiss_kappa", "cohen_kappa_mean", "raw_agreement"):
            est = row[name]
            assert est["low"] <= est["value"] <= est["high"], (name, est)
    # With two coders on every unit, Fleiss, Cohen and α are close and raw is p_o.
    overall = first["labels"]["overall"]
    assert overall["raw_agreement"]["value"] == pytest.approx((a == b).mean())
    assert overall["krippendorff_alpha"]["n_units"] == n_keys * n_ranks


def test_value_agreement_never_matches_an_end_of_sentence():
    arrays = _arrays(
        layers=np.array([1]),
        key_layer=np.array([1, 1, 1]),
        key_index=np.arange(3),
        prefix_exists=np.ones((3, 4), dtype=bool),
        ann_key=empty_int(),
        ann_coder=empty_int(),
        coders=(),
        value_top_id=np.array([-1, 7, 9]),
        top1_next_id=np.array([-1, -1, 9]),
        top1_trigger_id=np.array([-1, 7, 2]),
        vocab_size=50_000,
        perturbation=np.full((3, 3), nan),
    )
    va = value_agreement(arrays)
    # Key 0's value is unknown; key 1's next token is the end of the sentence (-1), so only
    # its trigger matches; key 2 matches on the next token.
    overall = va["overall"]
    assert (overall["n_keys"], overall["next_end"], overall["next_unknown"]) == (2, 1, 0)
    assert overall["next_token"]["matches"] == 1 and overall["next_token"]["n"] == 2
    assert overall["trigger_token"]["matches"] == 1 and overall["trigger_token"]["n"] == 2
    assert va["random_baseline"] == pytest.approx(1 / 50_000)


def test_sampled_value_agreement_leaves_a_cut_sentence_out_of_the_next_token_reading():
    arrays = _arrays(
        layers=np.array([1, 2]),
        key_layer=np.array([1, 1, 1, 2]),
        key_index=np.arange(4),
        prefix_exists=np.ones((4, 2), dtype=bool),
        ann_key=empty_int(),
        ann_coder=empty_int(),
        coders=(),
        value_top_id=np.array([5, 6, 7, 8]),
        # Key 0 matches its next token; keys 1 and 3 end a cut sentence (-2: unknown).
        top1_next_id=np.array([5, -2, 1, -2]),
        top1_trigger_id=np.array([0, 6, 0, 0]),
        vocab_size=10,
        perturbation=np.full((4, 3), nan),
    )
    va = value_agreement(arrays)
    layer1, layer2 = va["layers"]
    assert layer1["next_unknown"] == 1
    assert (layer1["next_token"]["matches"], layer1["next_token"]["n"]) == (1, 2)
    assert layer1["next_token"]["rate"] == 0.5
    # Reading (b) keeps every key.
    assert (layer1["trigger_token"]["matches"], layer1["trigger_token"]["n"]) == (1, 3)
    # Layer 2's only key has no known next token: no rate, no interval, but counted.
    assert layer2["next_token"] == {"matches": 0, "n": 0, "rate": None, "low": None, "high": None}
    assert layer2["next_unknown"] == 1
    overall = va["overall"]
    assert (overall["next_token"]["n"], overall["next_unknown"]) == (2, 2)
    assert overall["next_token"]["low"] == pytest.approx(0.094531, abs=1e-6)  # Wilson 1 of 2
    assert overall["next_token"]["high"] == pytest.approx(0.905469, abs=1e-6)


def test_an_encoder_has_no_sampled_value_agreement():
    arrays = _arrays(
        layers=np.array([1]),
        key_layer=np.array([1]),
        key_index=np.arange(1),
        prefix_exists=np.ones((1, 1), dtype=bool),
        ann_key=empty_int(),
        ann_coder=empty_int(),
        coders=(),
        value_top_id=np.array([5]),
        top1_next_id=np.array([5]),
        top1_trigger_id=np.array([0]),
        vocab_size=10,
        perturbation=np.full((1, 3), nan),
    )
    va = value_agreement(arrays, is_causal=False)
    assert (va["applicable"], va["reason"]) == (False, "encoder")
    assert va["layers"] == [] and va["overall"] is None


# Wilson 95% score intervals. 0/20, 1/29, 15/148 and 81/263 are Newcombe (1998),
# "Two-sided confidence intervals for the single proportion", Table I, method 3 (to 4
# places); the others were worked to 6 places by hand in decimal arithmetic.
WILSON_KNOWN = [
    (0, 10, 0.0, 0.277533, 6),
    (5, 10, 0.236593, 0.763407, 6),
    (10, 10, 0.722467, 1.0, 6),
    (1, 1536, 0.000115, 0.003679, 6),
    (0, 20, 0.0, 0.1611, 4),
    (1, 29, 0.0061, 0.1718, 4),
    (15, 148, 0.0624, 0.1605, 4),
    (81, 263, 0.2553, 0.3662, 4),
]


@pytest.mark.parametrize(("k", "n", "low", "high", "places"), WILSON_KNOWN)
def test_wilson_interval_matches_published_values(k, n, low, high, places):
    got_low, got_high = wilson_interval(k, n)
    assert round(float(got_low), places) == low
    assert round(float(got_high), places) == high


def test_wilson_interval_is_elementwise_exact_at_the_ends_and_empty_without_trials():
    low, high = wilson_interval(np.array([0, 5, 0, 3]), np.array([10, 10, 0, 3]))
    assert low[0] == 0.0 and high[3] == 1.0  # exactly, not 1e-17 away
    assert np.isnan(low[2]) and np.isnan(high[2])
    assert low[1] == pytest.approx(0.236593, abs=1e-6)


def _stored(**overrides):
    stored = {
        "format": "ffkv.value-agreement/v1",
        "vocab_size": 49152,
        "variants": ["without_final_norm", "with_final_norm"],
        "final_norm": "model.norm",
        "layers": [
            {
                "layer": 2,
                "n_keys": 1536,
                "next_end": 12,
                "next_unknown": 36,
                "next_token": {"without_final_norm": 0, "with_final_norm": 3},
                "trigger_token": {"without_final_norm": 1, "with_final_norm": 0},
            },
            {
                "layer": 1,
                "n_keys": 1536,
                "next_end": 4,
                "next_unknown": 0,
                "next_token": {"without_final_norm": 5, "with_final_norm": 7},
                "trigger_token": {"without_final_norm": 1, "with_final_norm": 1},
            },
        ],
    }
    stored.update(overrides)
    return stored


def test_value_agreement_over_every_key_per_layer_and_overall():
    va = value_agreement_every_key(_stored(), is_causal=True)
    assert va["applicable"] and va["reason"] is None
    assert va["variants"] == ["without_final_norm", "with_final_norm"]
    assert va["final_norm"] == "model.norm"
    assert va["random_baseline"] == pytest.approx(1 / 49152)
    layer1, layer2 = va["layers"]  # sorted by layer
    assert (layer1["layer"], layer2["layer"]) == (1, 2)
    # Reading (a) leaves the 36 keys of cut sentences out; reading (b) keeps all 1536.
    assert layer2["next_token"]["with_final_norm"]["n"] == 1500
    assert layer2["next_token"]["with_final_norm"]["rate"] == pytest.approx(3 / 1500)
    assert layer2["trigger_token"]["without_final_norm"]["n"] == 1536
    one_of_1536 = layer2["trigger_token"]["without_final_norm"]
    assert (one_of_1536["low"], one_of_1536["high"]) == (
        pytest.approx(0.000115, abs=1e-6),
        pytest.approx(0.003679, abs=1e-6),
    )
    zero = layer2["next_token"]["without_final_norm"]
    assert zero["rate"] == 0.0 and zero["low"] == 0.0 and zero["high"] > 0
    overall = va["overall"]
    assert (overall["n_keys"], overall["next_end"], overall["next_unknown"]) == (3072, 16, 36)
    assert overall["next_token"]["with_final_norm"] == {
        "matches": 10,
        "n": 3036,
        "rate": pytest.approx(10 / 3036),
        "low": pytest.approx(float(wilson_interval(10, 3036)[0])),
        "high": pytest.approx(float(wilson_interval(10, 3036)[1])),
    }
    only_two = value_agreement_every_key(_stored(), is_causal=True, layers=[2])
    assert [row["layer"] for row in only_two["layers"]] == [2]
    assert only_two["overall"]["n_keys"] == 1536


def test_value_agreement_over_every_key_without_a_final_norm_has_one_variant():
    stored = _stored(variants=["without_final_norm"], final_norm=None)
    for row in stored["layers"]:
        for reading in ("next_token", "trigger_token"):
            del row[reading]["with_final_norm"]
    va = value_agreement_every_key(stored, is_causal=True)
    assert list(va["overall"]["next_token"]) == ["without_final_norm"]
    assert va["final_norm"] is None


def test_value_agreement_over_every_key_says_why_it_has_no_rate():
    encoder = value_agreement_every_key({}, is_causal=False)
    assert (encoder["applicable"], encoder["reason"]) == (False, "encoder")
    assert encoder["overall"] is None and encoder["layers"] == []
    # An encoder has no next token even if counts were somehow stored.
    assert value_agreement_every_key(_stored(), is_causal=False)["reason"] == "encoder"
    imported = value_agreement_every_key({}, is_causal=True)
    assert (imported["applicable"], imported["reason"]) == (False, "not_counted")


@pytest.mark.parametrize(
    ("change", "detail"),
    [
        ({"format": "v0"}, "format must be"),
        ({"variants": ["with_norm"]}, "variants must be"),
        ({"layers": [{"layer": 1}]}, "layers[0].n_keys must be a non-negative integer"),
        ({"vocab_size": -1}, "vocab_size must be a non-negative integer"),
    ],
)
def test_value_agreement_over_every_key_names_what_is_wrong_with_the_counts(change, detail):
    va = value_agreement_every_key(_stored(**change), is_causal=True)
    assert (va["applicable"], va["reason"]) == (False, "counts_invalid")
    assert detail in va["detail"]


def test_value_agreement_over_every_key_refuses_more_matches_than_keys():
    stored = _stored()
    stored["layers"][0]["next_token"]["with_final_norm"] = 1537
    va = value_agreement_every_key(stored, is_causal=True)
    assert va["reason"] == "counts_invalid"
    assert "layers[0].next_token.with_final_norm exceeds its keys" in va["detail"]
