"""Per-token coefficients of every stored example equal a plain forward pass of its
sentence alone, hooked here directly on the down projection (docs/evidence.md)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from mining.core import finalize, mine_range, resolve_keys
from mining.core.finalize import KeyResult, TriggerExample

from .conftest import FAMILIES, random_sentences, tiny_loaded
from .test_miner import small_cfg


def every_example(result: KeyResult) -> list[TriggerExample]:
    return [*result.examples, *result.heldout, *result.samples, *result.heldout_random]


def plain_forward(loaded, ids: np.ndarray) -> list[np.ndarray]:
    """Per layer [tokens, d_ff]: the input of its down projection, one sentence alone."""
    seen: dict[int, torch.Tensor] = {}
    handles = []
    for layer, path in enumerate(loaded.down_paths):

        def keep(_module, args, layer=layer):
            seen[layer] = args[0].detach()

        handles.append(loaded.model.get_submodule(path).register_forward_pre_hook(keep))
    try:
        with torch.no_grad():
            loaded.model(input_ids=torch.from_numpy(ids.astype(np.int64))[None, :])
    finally:
        for handle in handles:
            handle.remove()
    return [seen[layer].float().reshape(ids.size, -1).numpy() for layer in sorted(seen)]


def check_examples(loaded, store, results, tol: float = 1e-5) -> int:
    checked = 0
    forwards: dict[int, list[np.ndarray]] = {}
    for result in results:
        for ex in every_example(result):
            s = ex.sentence_index
            ids = store.tokens(s)
            if s not in forwards:
                forwards[s] = plain_forward(loaded, ids)
            m = forwards[s][result.layer][:, result.index]
            real = ~store.special(s)
            if loaded.causal:
                real &= np.arange(ids.size) <= ex.position
            assert ex.tokens == [loaded.tokenizer.decode([int(t)]) for t in ids[real]]
            assert len(ex.token_coefficients) == len(ex.tokens)
            np.testing.assert_allclose(ex.token_coefficients, m[real], rtol=tol, atol=tol)
            # The example's own coefficient is its trigger's, the sentence's maximum.
            at = int(np.flatnonzero(real).tolist().index(ex.position))
            assert ex.token_coefficients[at] == pytest.approx(ex.coefficient, rel=tol, abs=tol)
            if loaded.causal:
                assert at == len(ex.tokens) - 1  # the prefix ends at the trigger
            checked += 1
    return checked


@pytest.mark.parametrize("family", FAMILIES)
def test_token_coefficients_equal_a_plain_forward(family, store_factory):
    loaded = tiny_loaded(family)
    store = store_factory(loaded, random_sentences(120, seed=5))
    cfg = small_cfg(keys_per_layer=2, top_k=4, keep_k=8)
    partial = mine_range(loaded, store, cfg, 0, len(store))
    keys = resolve_keys(cfg, loaded.n_layers, loaded.d_ff)
    results = finalize(loaded, store, partial, keys, cfg.top_k, batch_size=cfg.batch_size)
    for result in results:
        assert len(result.examples) == 4 and len(result.heldout) == 4
        assert [e.rank for e in result.heldout] == [5, 6, 7, 8]
        assert len(result.samples) > 25 and len(result.heldout_random) == 25
    # Every example of every kind of every sampled key carries its tokens.
    assert check_examples(loaded, store, results) == sum(len(every_example(r)) for r in results)


def test_bfloat16_runs_give_float32_token_coefficients(store_factory):
    bf16 = tiny_loaded("llama", seed=3)
    bf16.model.to(torch.bfloat16)
    fp32 = tiny_loaded("llama", seed=3)
    fp32.model.to(torch.bfloat16).float()  # the same bf16-rounded weights, in float32
    store = store_factory(fp32, random_sentences(80, seed=6))
    cfg = small_cfg(dtype="bfloat16", keys_per_layer=2, top_k=4, keep_k=8)
    partial = mine_range(bf16, store, cfg, 0, len(store))
    keys = resolve_keys(cfg, bf16.n_layers, bf16.d_ff)
    results = finalize(bf16, store, partial, keys, cfg.top_k, batch_size=cfg.batch_size)
    assert bf16.dtype == torch.bfloat16  # restored after the re-run
    assert check_examples(fp32, store, results) > 0
    values = [c for r in results for e in every_example(r) for c in e.token_coefficients]
    assert any(float(torch.tensor(v).bfloat16()) != v for v in values)  # not bf16 roundings


def test_keys_without_samples_carry_no_tokens(store_factory):
    loaded = tiny_loaded("gpt2")
    store = store_factory(loaded, random_sentences(40, seed=7))
    cfg = small_cfg(keys_per_layer=1, top_k=3, keep_k=8)
    partial = mine_range(loaded, store, cfg, 0, len(store), samples_on=False)
    (result,) = finalize(loaded, store, partial, [(0, 1)], cfg.top_k)
    assert result.samples == [] and result.heldout_random == [] and result.bands_exact == []
    assert len(result.heldout) == 3  # held-out ranks do not need the sketches
    assert all(e.tokens == [] for e in [*result.examples, *result.heldout])
