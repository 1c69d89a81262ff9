"""§5 per layer (mining/core/composition.py) against a plain computation, prefix by
prefix: the model run on each prefix alone, the residual read with hooks, y from the
FFN's own output, E and the final norm from the model's modules."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from mining.core import MiningError
from mining.core.composition import (
    STOP_WORDS,
    _top_and_prob,
    affine_final_norm,
    compose,
    memory_tops,
)
from mining.core.value_agreement import WITH_NORM, WITHOUT_NORM

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


def test_a_model_without_an_output_embedding_is_refused(store_factory):
    """A decoder loaded without its LM head, its input embedding not tied to one: there
    is no E to project on, and nothing is computed."""
    from transformers import GPT2Model

    from mining.core import adapt

    from .conftest import make_model, make_tokenizer

    lm = make_model("gpt2")
    body = GPT2Model(lm.config)
    body.load_state_dict(lm.transformer.state_dict())
    body.config.tie_word_embeddings = False
    loaded = adapt(body.eval(), make_tokenizer("gpt2"), "tiny-gpt2-body")
    store = store_factory(loaded, random_sentences(4))
    with pytest.raises(MiningError, match=r"has no output embedding \(no LM head"):
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


class _UnknownNorm(torch.nn.Module):
    """The same final norm behind a module kind composition does not know: its figures
    then come from the generic path (every row through ``value_logits``)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)


def _with_biases_and_gains(loaded):
    """The model with seeded random down-projection biases and final-norm gains and
    shifts: the tiny models start with zeros and ones there, which would hide a bias or a
    gain handled wrongly."""
    generator = torch.Generator().manual_seed(3)

    def noise(like, scale=0.5):
        return scale * torch.randn(like.shape, generator=generator)

    norm = loaded.model.get_submodule(loaded.final_norm_path)
    with torch.no_grad():
        for layer in range(loaded.n_layers):
            bias = loaded.down_module(layer).bias
            if bias is not None:
                bias.copy_(noise(bias))
        norm.weight.copy_(1 + noise(norm.weight))
        if getattr(norm, "bias", None) is not None:
            norm.bias.copy_(noise(norm.bias))
    return loaded


def _hide_final_norm(loaded, monkeypatch):
    parent_path, _, name = loaded.final_norm_path.rpartition(".")
    parent = loaded.model.get_submodule(parent_path)
    monkeypatch.setattr(parent, name, _UnknownNorm(getattr(parent, name)))


@pytest.mark.parametrize("family", ["gpt2", "gpt_neox", "opt", "llama"])
def test_the_final_norm_is_affine_once_each_rows_scale_is_known(family):
    loaded = _with_biases_and_gains(tiny_loaded(family))
    norm = affine_final_norm(loaded)
    assert norm is not None
    assert norm.centred == (family != "llama")  # LayerNorm, or Llama's RMSNorm
    emb = loaded.output_embeddings().detach().float()
    generator = torch.Generator().manual_seed(1)
    r, y = (3 * torch.randn(5, loaded.d_model, generator=generator) for _ in range(2))
    b = torch.randn(loaded.d_model, generator=generator)
    out = r + y + b
    shift = 0 if norm.shift is None else norm.shift @ emb.t()
    summed = (norm.weighted(r) + norm.weighted(y) + norm.weighted(b[None, :])) @ emb.t()
    assert torch.allclose(
        summed / norm.scale(out)[:, None] + shift,
        loaded.value_logits(out, final_norm=True),
        rtol=1e-4,
        atol=1e-4,
    )


@pytest.mark.parametrize("family", ["gpt2", "gpt_neox", "opt", "llama"])
def test_the_affine_path_gives_the_generic_paths_figures(family, store_factory, monkeypatch):
    loaded = _with_biases_and_gains(tiny_loaded(family))
    store = store_factory(loaded, random_sentences(8, seed=5))
    fast = compose(loaded, store, prefixes_of(store), batch_size=4)
    _hide_final_norm(loaded, monkeypatch)
    assert affine_final_norm(loaded) is None
    generic = compose(loaded, store, prefixes_of(store), batch_size=4)
    for a, b in zip(fast["layers"], generic["layers"], strict=True):
        assert a.pop("final_prob_mean") == pytest.approx(b.pop("final_prob_mean"), rel=1e-5)
        assert a == b
    assert fast["vocab_size"] == generic["vocab_size"]


@pytest.mark.parametrize("family", ["gpt2", "gpt_neox", "opt", "llama"])
def test_the_figures_equal_a_plain_computation_with_biases_and_gains(family, store_factory):
    loaded = _with_biases_and_gains(tiny_loaded(family))
    store = store_factory(loaded, random_sentences(8, seed=5))
    row = compose(loaded, store, prefixes_of(store), batch_size=4)["layers"][LAYER]
    _, rows = plain(family, loaded, store, LAYER)
    for norm, name in ((False, WITHOUT_NORM), (True, WITH_NORM)):
        plain_rows = rows[norm]
        assert row["none_agree_share"][name] == _mean([not x["agree"] for x in plain_rows])
        assert row["residual_final_share"][name] == _mean(
            [x["top_r"] == x["final"] for x in plain_rows]
        )
        kept = [x["top_out"] == x["top_r"] for x in plain_rows]
        to_ffn = [x["top_out"] != x["top_r"] and x["top_out"] == x["top_y"] for x in plain_rows]
        assert row["change"][name]["residual"] == pytest.approx(_mean(kept))
        assert row["change"][name]["ffn"] == pytest.approx(_mean(to_ffn))
        assert row["final_prob_mean"][name] == pytest.approx(
            _mean([x["prob"] for x in plain_rows]), rel=1e-5
        )


def test_a_product_per_layer_gives_the_figures_of_one_for_all_layers(store_factory, monkeypatch):
    loaded = _with_biases_and_gains(tiny_loaded("gpt2"))
    store = store_factory(loaded, random_sentences(8, seed=5))
    together = compose(loaded, store, prefixes_of(store), batch_size=4)  # one product a batch
    monkeypatch.setattr("mining.core.composition.PROJECT_ROWS", 1)  # a product a layer
    apart = compose(loaded, store, prefixes_of(store), batch_size=4)
    for a, b in zip(together["layers"], apart["layers"], strict=True):
        assert a.pop("final_prob_mean") == pytest.approx(b.pop("final_prob_mean"), rel=1e-5)
        assert a == b


def test_the_generic_path_equals_a_plain_computation(store_factory, monkeypatch):
    loaded = tiny_loaded("gpt2")
    store = store_factory(loaded, random_sentences(8, seed=5))
    _hide_final_norm(loaded, monkeypatch)
    row = compose(loaded, store, prefixes_of(store), batch_size=4)["layers"][LAYER]
    _, rows = plain("gpt2", loaded, store, LAYER)
    for norm, name in ((False, WITHOUT_NORM), (True, WITH_NORM)):
        assert row["residual_final_share"][name] == _mean(
            [x["top_r"] == x["final"] for x in rows[norm]]
        )
        assert row["change"][name]["residual"] == pytest.approx(
            _mean([x["top_out"] == x["top_r"] for x in rows[norm]])
        )


def test_the_memories_top_tokens_given_are_the_ones_counted(store_factory, monkeypatch):
    loaded = tiny_loaded("gpt2")
    store = store_factory(loaded, random_sentences(8, seed=5))
    tops = memory_tops(loaded)
    computed = compose(loaded, store, prefixes_of(store), batch_size=4)
    monkeypatch.setattr("mining.core.composition.memory_tops", None)  # not computed again
    assert compose(loaded, store, prefixes_of(store), batch_size=4, memory_tops=tops) == computed
    # Every memory predicting one token: a prefix agrees where y predicts that token too.
    _, rows = plain("gpt2", loaded, store, LAYER)
    token = rows[False][0]["top_y"]
    same = {v: np.full_like(t, token) for v, t in tops.items()}
    got = compose(loaded, store, prefixes_of(store), batch_size=4, memory_tops=same)
    assert got["layers"][LAYER]["none_agree_share"][WITHOUT_NORM] == _mean(
        [x["top_y"] != token for x in rows[False]]
    )
    assert got["layers"][LAYER]["none_agree_share"][WITHOUT_NORM] < 1


def test_memory_tops_of_another_shape_are_refused(store_factory):
    loaded = tiny_loaded("gpt2")
    store = store_factory(loaded, random_sentences(4))
    tops = memory_tops(loaded)
    with pytest.raises(MiningError, match=r"top tokens \(with_final_norm\) must be an array"):
        compose(loaded, store, [(0, 1)], memory_tops={WITHOUT_NORM: tops[WITHOUT_NORM]})
    cut = {v: t[:, :-1] for v, t in tops.items()}
    with pytest.raises(MiningError, match=r"must be an array of shape \[2, \d+\]"):
        compose(loaded, store, [(0, 1)], memory_tops=cut)
    vocab = loaded.output_embeddings().shape[0]
    beyond = {v: t + vocab for v, t in tops.items()}
    with pytest.raises(MiningError, match=rf"must be token ids below {vocab}"):
        compose(loaded, store, [(0, 1)], memory_tops=beyond)


def test_progress_is_told_after_each_batch(store_factory):
    loaded = tiny_loaded("llama")
    store = store_factory(loaded, random_sentences(8, seed=5))
    told = []
    compose(loaded, store, prefixes_of(store), batch_size=4, progress=lambda *a: told.append(a))
    assert told == [(4, 6), (6, 6)]


def test_the_probability_of_the_prediction_holds_for_logits_spread_over_hundreds():
    # A residual stream's logits without the final norm spread over hundreds: most of the
    # vocabulary lies where exp underflows, which _top_and_prob clamps before its exp.
    generator = torch.Generator().manual_seed(3)
    logits = 300 * torch.randn(2, 5, 4_000, generator=generator, dtype=torch.float64)
    logits[0, 1, 7] = logits[0, 1].max() + 0.5  # a second row close behind the best
    logits[0, 1, 9] = logits[0, 1, 7] + 0.25
    logits = logits.float()
    targets = torch.tensor([7, 7, 3, 9, 4])
    probs = torch.softmax(logits.double(), dim=-1)
    expected = probs.gather(-1, targets.expand(2, 5)[..., None])[..., 0]
    top, prob = _top_and_prob(logits.clone(), targets)
    assert torch.equal(top, logits.argmax(dim=-1))
    assert top[0, 1] == 9
    torch.testing.assert_close(prob.double(), expected, rtol=1e-5, atol=1e-30)
    assert 0.3 < prob[0, 1] < 0.5  # 7 just behind 9: a probability worth checking
