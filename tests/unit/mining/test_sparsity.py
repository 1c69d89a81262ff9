"""Sparsity per layer (mining/core/sparsity.py) from the pass's counts, against the
coefficients of every position computed plainly."""

from __future__ import annotations

import numpy as np
import pytest

from mining.core import MineConfig, mine_range
from mining.core.sparsity import gini, sparsity

from .conftest import capture_all, every_fourth_position, random_sentences, tiny_loaded


def plain_gini(x):
    """Mean absolute difference over all pairs, over twice the mean."""
    x = np.asarray(x, dtype=np.float64)
    return np.abs(x[:, None] - x[None, :]).sum() / (2 * x.size**2 * x.mean())


def test_gini_is_the_mean_absolute_difference_over_twice_the_mean():
    rng = np.random.default_rng(0)
    x = rng.exponential(size=37)
    assert gini(x) == pytest.approx(plain_gini(x))
    assert gini(np.ones(5)) == pytest.approx(0.0)
    assert gini([0, 0, 0, 4]) == pytest.approx(0.75)  # one of four holds everything
    assert gini([0.0, 0.0]) is None  # no activation at all: undefined, not 0


@pytest.mark.parametrize("family", ["gpt2", "llama", "bert"])
def test_each_layers_sparsity_equals_a_plain_computation(family, store_factory, miner_path):
    loaded = tiny_loaded(family)
    store = store_factory(loaded, random_sentences(50, seed=4))
    cfg = MineConfig(keep_k=4, top_k=4, batch_size=8, sort_window=2)
    got = sparsity(mine_range(loaded, store, cfg, 0, len(store)))
    acts = capture_all(loaded, store, cfg)
    assert [row["layer"] for row in got["layers"]] == list(range(1, loaded.n_layers + 1))
    for layer, row in enumerate(got["layers"]):
        flat = np.concatenate([acts[layer][s][~store.special(s)] for s in range(len(store))])
        density = (flat > 0).mean(axis=0)  # [d_ff]
        q1, median, q3 = np.quantile(density, [0.25, 0.5, 0.75])
        assert row["density"] == pytest.approx(
            {"mean": density.mean(), "q1": q1, "median": median, "q3": q3}
        )
        assert row["gini"] == pytest.approx(plain_gini(np.abs(flat.mean(axis=0))), rel=1e-4)
        counted = every_fourth_position(acts[layer], store)
        peak = counted.max(axis=1, keepdims=True)
        above = counted > np.maximum(np.float32(0.1) * peak, 0)
        assert row["above_tenth_of_peak"] == pytest.approx(above.mean())
    assert got["n_positions"] == sum(int((~store.special(s)).sum()) for s in range(len(store)))
