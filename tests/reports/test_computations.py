"""Agreement statistics against textbook values, and the vectorised pieces against
plain definitions."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from annotate.selectors import LABELS as ANNOTATE_LABELS
from annotate.selectors import label_for_kinds
from reports import computations as c

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
    assert round(c.krippendorff_alpha_nominal(data - 1), 3) == 0.743
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
    assert round(c.fleiss_kappa(counts), 3) == 0.210


def test_cohen_kappa_of_a_hand_example():
    # 8 units: they agree on 6 (p_o = 0.75); each says 0 five times and 1 three times, so
    # p_e = (5/8)² + (3/8)² = 34/64 and κ = (0.75 - 34/64) / (1 - 34/64) = 7/15.
    a = [0, 0, 1, 1, 0, 1, 0, 0]
    b = [0, 1, 1, 1, 0, 0, 0, 0]
    assert c.cohen_kappa(a, b) == pytest.approx(7 / 15)


def test_cohen_kappa_of_identical_coders_is_one_and_of_constant_coders_undefined():
    assert c.cohen_kappa([0, 1, 2, 1], [0, 1, 2, 1]) == pytest.approx(1.0)
    assert np.isnan(c.cohen_kappa([1, 1, 1], [1, 1, 1], n_values=2))


@pytest.mark.parametrize("seed", range(5))
def test_alpha_from_sufficient_statistics_equals_the_krippendorff_package(seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 4, size=(5, 80)).astype(float)
    data[rng.random(data.shape) < 0.35] = nan
    ours = c.krippendorff_alpha_nominal(data)
    theirs = krippendorff.alpha(data, value_domain=[0, 1, 2, 3], level_of_measurement="nominal")
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_the_label_of_every_set_of_kinds_is_annotates_label():
    assert c.LABELS == ANNOTATE_LABELS
    for n in range(4):
        for kinds in itertools.combinations(c.KINDS, n):
            bits = sum(c.KIND_BITS[k] for k in kinds)
            assert c.LABELS[c.LABEL_OF_BITS[bits]] == label_for_kinds(kinds)


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
        "pat_ann": c.empty_int(),
        "pat_kind": np.zeros(0, dtype=np.uint8),
        "value_top_id": np.array([-1]),
        "top1_next_id": np.array([-1]),
        "top1_trigger_id": np.array([-1]),
        "vocab_size": 0,
        "perturbation": np.full((1, 3), nan),
    }
    cov_pat = overrides.pop("cov_pat", c.empty_int())
    cov_rank = overrides.pop("cov_rank", c.empty_int())
    base.update(overrides)
    n_ranks = base["prefix_exists"].shape[1]
    base["pat_mask"] = c.masks_from_ranks(len(base["pat_ann"]), cov_pat, cov_rank, n_ranks)
    return c.StudyArrays(**base)


def test_a_majority_tie_splits_the_units_vote_between_the_tied_labels():
    # a: shallow on ranks 1-3; b: semantic on ranks 2-4.
    arrays = _arrays(
        pat_ann=np.array([0, 1]),
        pat_kind=np.array([1, 2], dtype=np.uint8),
        cov_pat=np.array([0, 0, 0, 1, 1, 1]),
        cov_rank=np.array([1, 2, 3, 2, 3, 4]),
    )
    grid = c.rating_grid(arrays)
    assert grid[:, 0].tolist() == [[0, 0, 0, 3], [3, 1, 1, 1]]
    majority = c.figure2(arrays, grid)["majority"]["overall"]
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
    assert c.best_match_jaccard(arrays, 0, 1)[0] == pytest.approx(5 / 6)


def test_best_match_jaccard_is_zero_against_no_pattern_and_undefined_without_any():
    one_sided = _arrays(
        pat_ann=np.array([0]),
        pat_kind=np.array([1], dtype=np.uint8),
        cov_pat=np.array([0, 0, 0]),
        cov_rank=np.array([1, 2, 3]),
    )
    assert c.best_match_jaccard(one_sided, 0, 1)[0] == 0.0
    assert np.isnan(c.best_match_jaccard(_arrays(), 0, 1)[0])


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
    first = c.agreement(arrays, grid, replicates=200, seed=1)
    again = c.agreement(arrays, grid, replicates=200, seed=1)
    other = c.agreement(arrays, grid, replicates=200, seed=2)
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
        ann_key=c.empty_int(),
        ann_coder=c.empty_int(),
        coders=(),
        value_top_id=np.array([-1, 7, 9]),
        top1_next_id=np.array([-1, -1, 9]),
        top1_trigger_id=np.array([-1, 7, 2]),
        vocab_size=50_000,
        perturbation=np.full((3, 3), nan),
    )
    va = c.value_agreement(arrays)
    # Key 0's value is unknown; key 1's next token is the end of the sentence (-1), so only
    # its trigger matches; key 2 matches on the next token.
    assert va["overall"]["n_keys"] == 2
    assert va["overall"]["next_token_matches"] == 1
    assert va["overall"]["trigger_token_matches"] == 1
    assert va["random_baseline"] == pytest.approx(1 / 50_000)
