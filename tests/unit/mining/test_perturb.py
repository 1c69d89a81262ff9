"""Prefix perturbation (paper §3.2, Figure 3)."""

from __future__ import annotations

import pytest

from mining.core import MiningError, mine_range
from mining.core.perturb import KINDS, perturb, perturbation_by_layer

from .conftest import capture_all, random_sentences, tiny_loaded
from .test_miner import entries, small_cfg


def test_removing_the_last_prefix_token_of_a_causal_model_reads_the_previous_position(
    store_factory,
):
    loaded = tiny_loaded("gpt2")
    store = store_factory(loaded, random_sentences(60, seed=12))
    cfg = small_cfg(keep_k=8)
    partial = mine_range(loaded, store, cfg, 0, len(store))
    acts = capture_all(loaded, store, cfg)
    keys = [(0, 1), (1, 7)]
    results = perturb(loaded, store, partial, keys, top_n=8, seed=0)
    assert [(r.layer, r.index) for r in results] == keys
    for result in results:
        examples = [e for e in entries(partial, result.layer, result.index) if e[2] >= 1]
        assert len(result.changes["last"]) == len(examples) > 0
        for change, (value, s, t) in zip(result.changes["last"], examples, strict=True):
            before, after = value, float(acts[result.layer][s][t - 1, result.index])
            assert change == pytest.approx((after - before) / abs(before), rel=1e-4, abs=1e-5)
        for kind in KINDS:
            assert len(result.changes[kind]) == len(examples)


def test_encoders_keep_their_special_tokens_and_summary_is_per_layer(store_factory):
    loaded = tiny_loaded("bert")
    store = store_factory(loaded, random_sentences(40, seed=13))
    partial = mine_range(loaded, store, small_cfg(keep_k=8), 0, len(store))
    results = perturb(loaded, store, partial, [(0, 0), (1, 3)], top_n=5)
    summary = perturbation_by_layer(results)
    assert set(summary) == {0, 1} and set(summary[0]) == set(KINDS)
    assert all(isinstance(v, float) for layer in summary.values() for v in layer.values())


def test_top_n_above_keep_k_is_an_error(store_factory):
    loaded = tiny_loaded("bert")
    store = store_factory(loaded, random_sentences(20, seed=13))
    partial = mine_range(loaded, store, small_cfg(keep_k=8), 0, len(store))
    with pytest.raises(MiningError, match=r"top_n \(50\) exceeds the 8 trigger examples"):
        perturb(loaded, store, partial, [(0, 0)])


def test_a_pre_activation_run_is_perturbed_on_the_pre_activation_value(store_factory):
    loaded = tiny_loaded("opt")
    store = store_factory(loaded, random_sentences(60, seed=12))
    cfg = small_cfg(keep_k=8, coefficient="pre")
    partial = mine_range(loaded, store, cfg, 0, len(store))
    acts = capture_all(loaded, store, cfg)  # pre-activation values
    (result,) = perturb(loaded, store, partial, [(1, 4)], top_n=8, seed=0)
    examples = [e for e in entries(partial, 1, 4) if e[2] >= 2]  # </s> is position 0
    assert len(result.changes["last"]) == len(examples) > 0
    for change, (value, s, t) in zip(result.changes["last"], examples, strict=True):
        after = float(acts[1][s][t - 1, 4])
        assert change == pytest.approx((after - value) / abs(value), rel=1e-4, abs=1e-5)
