"""§4 over every key of every layer, against a plain computation per key."""

from __future__ import annotations

import pytest
import torch

from mining.core import MineConfig, mine_range
from mining.core.value_agreement import WITH_NORM, WITHOUT_NORM, value_agreement

from .conftest import brute_force_topk, capture_all, random_sentences, tiny_loaded


def _plain_modules(family, model):
    """(value rows of layer l, final norm, E) read straight off the model's modules."""
    if family == "gpt2":
        blocks, norm = model.transformer.h, model.transformer.ln_f
        return (lambda i: blocks[i].mlp.c_proj.weight), norm, model.lm_head.weight
    blocks, norm = model.model.layers, model.model.norm
    return (lambda i: blocks[i].mlp.down_proj.weight.t()), norm, model.lm_head.weight


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_every_key_counts_as_a_plain_computation_does(family, store_factory, miner_path):
    loaded = tiny_loaded(family)
    # max_tokens 6: many sentences are cut, so some top-1 prefixes have no known next token
    store = store_factory(loaded, random_sentences(120, seed=3), max_tokens=6)
    cfg = MineConfig(keep_k=4, top_k=4, max_tokens=6, batch_size=8, sort_window=2)
    partial = mine_range(loaded, store, cfg, 0, len(store))
    got = value_agreement(loaded, store, partial)

    top = brute_force_topk(loaded, store, capture_all(loaded, store, cfg), keep_k=1)
    rows, norm, emb = _plain_modules(family, loaded.model)
    expected = []
    with torch.no_grad():
        for layer in range(loaded.n_layers):
            counts = {"n_keys": 0, "next_end": 0, "next_unknown": 0}
            # argmax of softmax(v_i·E) per key, without and with the final norm. The whole
            # layer in one product, as the miner does: a key-by-key vector product rounds
            # differently and can flip a near tie between two tokens.
            values = rows(layer).float()  # [d_ff, d_model]
            value_argmax = [
                torch.softmax(x @ emb.float().t(), dim=-1).argmax(dim=-1)
                for x in (values, norm(values))
            ]
            matches = {(r, v): 0 for r in ("next_token", "trigger_token") for v in (0, 1)}
            for key in range(loaded.d_ff):
                _, s, t = top[(layer, key)][0]
                ids, special = store.tokens(s), store.special(s)
                trigger = int(ids[t])
                if t + 1 < ids.size and not special[t + 1]:
                    nxt = int(ids[t + 1])
                elif store.truncated(s):
                    nxt = None
                else:
                    nxt = -1
                counts["n_keys"] += 1
                counts["next_end"] += nxt == -1
                counts["next_unknown"] += nxt is None
                for with_norm in (0, 1):
                    best = int(value_argmax[with_norm][key])
                    matches[("trigger_token", with_norm)] += best == trigger
                    matches[("next_token", with_norm)] += nxt is not None and best == nxt
            expected.append(
                {
                    "layer": layer + 1,
                    **counts,
                    "next_token": {
                        WITHOUT_NORM: matches[("next_token", 0)],
                        WITH_NORM: matches[("next_token", 1)],
                    },
                    "trigger_token": {
                        WITHOUT_NORM: matches[("trigger_token", 0)],
                        WITH_NORM: matches[("trigger_token", 1)],
                    },
                }
            )
    assert got["variants"] == [WITHOUT_NORM, WITH_NORM]
    assert got["vocab_size"] == emb.shape[0]
    assert got["layers"] == expected
    assert sum(row["next_unknown"] for row in expected) > 0  # the cut case was exercised


def test_encoders_have_no_next_token_and_get_no_counts(store_factory):
    loaded = tiny_loaded("bert")
    store = store_factory(loaded, random_sentences(20))
    partial = mine_range(loaded, store, MineConfig(keep_k=4, top_k=4), 0, len(store))
    assert value_agreement(loaded, store, partial) == {}
