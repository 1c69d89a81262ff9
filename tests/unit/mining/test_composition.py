"""§5 per layer (mining/core/composition.py) against a plain computation, prefix by
prefix: the model run on each prefix alone, the residual read with hooks, y from the
FFN's own output, E and the final norm from the model's modules."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from mining.core import MiningError
from mining.core.composition import STOP_WORDS, compose

from .conftest import random_sentences, tiny_loaded

LAYER = 1  # the second of the tiny models' two layers


def _modules(family, model, layer):
    """(the down projection, the module whose input is the residual before the FFN or
    None, the layer, the final norm) of ``layer``, by the family's own names."""
    if family == "gpt2":
        block = model.transformer.h[layer]
        return block.mlp.c_proj, block.ln_2, block, model.transformer.ln_f
    if family == "gpt_neox":  # parallel: the FFN reads the layer's input, not x + attention
        block = model.gpt_neox.layers[layer]
        return block.mlp.dense_4h_to_h, None, block, model.gpt_neox.final_layer_norm
    if family == "opt":
        block = model.model.decoder.layers[layer]
        return block.fc2, block.final_layer_norm, block, model.model.decoder.final_layer_norm
    block = model.model.layers[layer]
    return block.mlp.down_proj, block.post_attention_layernorm, block, model.model.norm


def _value_rows(down):
    # nn.Linear keeps [d_model, d_ff]; GPT-2's Conv1D keeps [d_ff, d_model], values as rows
    return down.weight.t() if isinstance(down, torch.nn.Linear) else down.weight


def prefixes_of(store):
    """Six prefixes: each sentence's last token, its middle one or its first real one."""
    out = []
    for s in range(6):
        real = np.flatnonzero(~store.special(s))
        out.append((s, int(real[[-1, real.size // 2, 0][s % 3]])))
    return out


def plain(family, loaded, store, layer):
    """The layer's figures, one prefix at a time, without and with the final norm."""
    model = loaded.model
    down, residual_module, block, final_norm = _modules(family, model, layer)
    emb = model.get_output_embeddings().weight.float()
    values = _value_rows(down).float()  # [d_ff, d_model]
    seen = {}
    handles = [
        down.register_forward_pre_hook(lambda _m, a: seen.__setitem__("m", a[0])),
        down.register_forward_hook(lambda _m, _a, out: seen.__setitem__("ffn", out)),
        block.register_forward_hook(
            lambda _m, _a, out: seen.__setitem__("out", out[0] if isinstance(out, tuple) else out)
        ),
    ]
    if residual_module is not None:
        handles.append(
            residual_module.register_forward_pre_hook(lambda _m, a: seen.__setitem__("r", a[0]))
        )
    rows = {norm: [] for norm in (False, True)}
    actives = []
    try:
        for s, p in prefixes_of(store):
            ids = torch.from_numpy(store.tokens(s)[: p + 1].astype(np.int64))[None, :]
            with torch.no_grad():
                logits = model(input_ids=ids).logits[0, -1]
                final = int(logits.argmax())
                m = seen["m"].reshape(1, -1, loaded.d_ff)[0, -1]
                ffn = seen["ffn"].reshape(1, -1, loaded.d_model)[0, -1]
                out = seen["out"][0, -1]
                bias = down.bias if down.bias is not None else torch.zeros(loaded.d_model)
                y = ffn - bias  # Σ m_i v_i: the FFN's output without its bias
                r = seen["r"].reshape(1, -1, loaded.d_model)[0, -1] if "r" in seen else out - ffn
                actives.append(float((m > 0).float().mean()))
                for norm in (False, True):
                    project = final_norm if norm else (lambda x: x)
                    top_v = (project(values) @ emb.t()).argmax(dim=1)
                    logits_r = project(r) @ emb.t()
                    top_r, top_y = int(logits_r.argmax()), int((project(y) @ emb.t()).argmax())
                    top_out = int((project(out) @ emb.t()).argmax())
                    agree = bool((top_v[m > 0] == top_y).any())
                    text = loaded.tokenizer.decode([top_y]).strip().lower()
                    rows[norm].append(
                        {
                            "final": final,
                            "top_r": top_r,
                            "top_y": top_y,
                            "top_out": top_out,
                            "agree": agree,
                            "stop": text in STOP_WORDS,
                            "prob": float(torch.softmax(logits_r, dim=0)[final]),
                        }
                    )
    finally:
        for handle in handles:
            handle.remove()
    return actives, rows


def _mean(xs):
    return sum(xs) / len(xs)


@pytest.mark.parametrize("family", ["gpt2", "gpt_neox", "opt", "llama"])
def test_each_figure_equals_a_plain_computation_prefix_by_prefix(family, store_factory):
    loaded = tiny_loaded(family)
    store = store_factory(loaded, random_sentences(8, seed=5))
    got = compose(loaded, store, prefixes_of(store), batch_size=4)  # batched, padded, sorted
    assert got["final_norm"] == [False, True]
    row = got["layers"][LAYER]
    assert row["layer"] == LAYER + 1
    actives, rows = plain(family, loaded, store, LAYER)
    q1, median, q3 = np.quantile(actives, [0.25, 0.5, 0.75])
    assert row["active_share"] == pytest.approx(
        {"mean": _mean(actives), "q1": q1, "median": median, "q3": q3}
    )
    for norm, name in ((False, "without_final_norm"), (True, "with_final_norm")):
        plain_rows = rows[norm]
        assert row["none_agree_share"][name] == _mean([not x["agree"] for x in plain_rows])
        agreed = [x["stop"] for x in plain_rows if x["agree"]]
        assert row["agree_stopword_share"][name] == (_mean(agreed) if agreed else None)
        assert row["residual_final_share"][name] == _mean(
            [x["top_r"] == x["final"] for x in plain_rows]
        )
        kept = [x["top_out"] == x["top_r"] for x in plain_rows]
        to_ffn = [x["top_out"] != x["top_r"] and x["top_out"] == x["top_y"] for x in plain_rows]
        assert row["change"][name] == pytest.approx(
            {
                "residual": _mean(kept),
                "ffn": _mean(to_ffn),
                "neither": 1 - _mean(kept) - _mean(to_ffn),
            }
        )
        assert row["final_prob_mean"][name] == pytest.approx(
            _mean([x["prob"] for x in plain_rows]), rel=1e-5
        )
    if family == "llama":  # SwiGLU: the second reading of "active" beside the first
        assert "active_share_tenth" in row
        assert 0 < row["active_share_tenth"]["mean"] <= 1
    assert math.isclose(sum(row["change"]["with_final_norm"].values()), 1.0)


def test_an_encoder_has_no_composition_reading(store_factory):
    loaded = tiny_loaded("bert")
    store = store_factory(loaded, random_sentences(4))
    with pytest.raises(MiningError, match=r"is an encoder: it predicts no next token.*sparsity"):
        compose(loaded, store, [(0, 1)])


def test_a_model_that_normalises_after_each_residual_is_refused(store_factory):
    loaded = tiny_loaded("opt-350m")
    store = store_factory(loaded, random_sentences(4))
    with pytest.raises(MiningError, match=r"do_layer_norm_before = false"):
        compose(loaded, store, [(0, 1)])


def test_a_prefix_outside_the_store_is_refused(store_factory):
    loaded = tiny_loaded("gpt2")
    store = store_factory(loaded, random_sentences(4))
    length = int(store.lengths[0])
    with pytest.raises(MiningError, match=rf"prefix \(sentence 0, position {length}\) is not"):
        compose(loaded, store, [(0, length)])
    with pytest.raises(MiningError, match=r"prefix \(sentence 9, position 0\) is not"):
        compose(loaded, store, [(9, 0)])
