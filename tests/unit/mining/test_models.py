"""Model loading, adapters and the whole-run convenience ``mine``."""

from __future__ import annotations

import re

import huggingface_hub
import pytest
import torch
from transformers import T5Config, T5Model

from mining.core import (
    END_OF_SENTENCE,
    MineConfig,
    MiningError,
    adapt,
    load_model,
    mine,
    mine_range,
    ranked_definition,
    ranked_definitions_markdown,
    value_top_tokens,
)
from mining.core.models import ARCHITECTURES

from .conftest import (
    FAMILIES,
    NON_GATED,
    REPO_ROOT,
    WIKITEXT_VALID,
    make_model,
    make_tokenizer,
    model_fixture,
    random_sentences,
    tiny_loaded,
)


@pytest.fixture
def offline(monkeypatch):
    """No network here: make the hub fail fast instead of retrying for half a minute."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


@pytest.fixture
def tiny_gpt2_dir(tmp_path):
    path = tmp_path / "tiny-gpt2"
    make_model("gpt2").save_pretrained(path)
    make_tokenizer("gpt2").save_pretrained(path)
    return path


def test_unknown_hub_id_is_a_one_line_error_naming_it(offline):
    with pytest.raises(MiningError) as info:
        load_model("no-such-org/no-such-model")
    assert "cannot load model 'no-such-org/no-such-model'" in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_model_directory_is_named():
    with pytest.raises(
        MiningError, match=re.escape("model directory './no/such/dir' does not exist")
    ):
        load_model("./no/such/dir")


def test_unsupported_architecture_names_the_supported_ones(tmp_path):
    T5Config(num_layers=1, d_model=8, d_ff=16, num_heads=1, d_kv=8).save_pretrained(tmp_path)
    with pytest.raises(
        MiningError,
        match="unsupported architecture 't5'; supported model types: "
        "bert, electra, gpt2, gpt_neox, llama",
    ):
        load_model(str(tmp_path))
    model = T5Model(T5Config(num_layers=1, d_model=8, d_ff=16, num_heads=1, d_kv=8))
    with pytest.raises(MiningError, match="unsupported architecture 't5'"):
        adapt(model, make_tokenizer("bert"), "t5")


@pytest.mark.parametrize("family", FAMILIES)
def test_adapters_find_down_projections_and_values(family):
    model = make_model(family)
    loaded = adapt(model, make_tokenizer(family), family)
    config = model_fixture(family)["config"]
    assert loaded.n_layers == 2 and loaded.causal == (family != "bert")
    d_ff = next(config[k] for k in ("n_inner", "intermediate_size", "ffn_dim") if k in config)
    assert loaded.d_ff == d_ff
    values = loaded.values(1)
    assert values.shape == (loaded.d_ff, 32)
    # A value row is what the down projection adds to the residual for a one-hot m.
    one_hot = torch.zeros(1, loaded.d_ff)
    one_hot[0, 5] = 1.0
    down = loaded.down_module(1)
    bias = getattr(down, "bias", None)
    out = down(one_hot) - (0 if bias is None else bias)
    torch.testing.assert_close(out[0], values[5])
    embedding_dim = config.get("word_embed_proj_dim", 32)  # OPT-350m: 16
    assert loaded.output_embeddings().shape == (54, embedding_dim)


@pytest.mark.parametrize(
    ("family", "path"),
    [
        ("gpt2", "transformer.ln_f"),
        ("gpt_neox", "gpt_neox.final_layer_norm"),
        ("opt", "model.decoder.final_layer_norm"),
        ("opt-350m", None),  # do_layer_norm_before=False: no final norm
        ("llama", "model.norm"),
        ("bert", None),
    ],
)
def test_final_norm_path_names_the_norm_before_the_unembedding(family, path):
    assert tiny_loaded(family).final_norm_path == path


def _ids(loaded, batch=3, width=7):
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(6, 54, (batch, width), generator=gen)
    return ids, torch.ones_like(ids)


@pytest.mark.parametrize("family", ["opt", "opt-350m", "gpt2"])
@pytest.mark.parametrize("coefficient", ["post", "pre"])
def test_capture_hands_batch_pos_d_ff_even_where_opt_flattens(family, coefficient):
    loaded = tiny_loaded(family)
    ids, mask = _ids(loaded)
    shapes = []
    with (
        torch.inference_mode(),
        loaded.capture(
            lambda layer, m: shapes.append((layer, tuple(m.shape))), coefficient=coefficient
        ),
    ):
        loaded.forward(ids, mask)
    assert shapes == [(0, (3, 7, loaded.d_ff)), (1, (3, 7, loaded.d_ff))]


def test_an_unexpected_activation_shape_is_an_error_naming_model_layer_and_shape():
    loaded = tiny_loaded("opt")
    ids, mask = _ids(loaded)
    # Something upstream hands fc2 of layer 1 a [batch, pos*d_ff] tensor.
    mangle = loaded.down_module(1).register_forward_pre_hook(
        lambda _mod, args: (args[0].reshape(3, -1),)
    )
    try:
        with (
            pytest.raises(MiningError) as info,
            torch.inference_mode(),
            loaded.capture(lambda layer, m: None),
        ):
            loaded.forward(ids, mask)
    finally:
        mangle.remove()
    message = str(info.value)
    assert "'tiny-opt'" in message and "layer 1" in message and "[3, 364]" in message


def _plain_probs(v, *modules):
    x = v
    for module in modules:
        x = module(x)
    return torch.softmax(x, dim=-1)


def test_value_top_tokens_go_through_opt_350m_project_out():
    loaded = tiny_loaded("opt-350m")
    decoder, head = loaded.model.model.decoder, loaded.model.lm_head
    keys = [(0, 3), (1, 0), (1, 55)]
    got = value_top_tokens(loaded, keys, top_n=5)
    with torch.no_grad():
        for layer, index in keys:
            v = decoder.layers[layer].fc2.weight[:, index]  # v_i: column i of fc2
            probs = _plain_probs(v, decoder.project_out, head)  # softmax(lm_head(project_out))
            top = torch.topk(probs, 5)
            assert [t.token_id for t in got[(layer, index)]] == top.indices.tolist()
            assert [t.probability for t in got[(layer, index)]] == pytest.approx(
                top.values.tolist(), rel=1e-5
            )


@pytest.mark.parametrize(
    ("family", "norm"),
    [
        ("gpt2", lambda m: m.transformer.ln_f),
        ("llama", lambda m: m.model.norm),
        ("opt", lambda m: m.model.decoder.final_layer_norm),
    ],
)
def test_value_logits_with_the_final_norm_equal_the_plain_computation(family, norm):
    loaded = tiny_loaded(family)
    rows = loaded.values(1)[[0, 7, 11]]  # [3, d_model]
    with torch.no_grad():
        expected = loaded.model.lm_head(norm(loaded.model)(rows))
        plain = loaded.model.lm_head(rows)
    torch.testing.assert_close(loaded.value_logits(rows, final_norm=True), expected)
    torch.testing.assert_close(loaded.value_logits(rows), plain)
    assert not torch.allclose(expected, plain)  # the norm made a difference


@pytest.mark.parametrize("family", ["opt-350m", "bert"])
def test_value_logits_with_a_final_norm_the_model_lacks_is_an_error(family):
    loaded = tiny_loaded(family)
    with pytest.raises(MiningError, match="has no final norm"):
        loaded.value_logits(loaded.values(0)[:2], final_norm=True)


def test_value_logits_refuse_rows_of_the_wrong_width():
    loaded = tiny_loaded("opt-350m")
    with pytest.raises(MiningError, match=r"rows of shape \[n, 32\], not \[2, 16\]"):
        loaded.value_logits(torch.zeros(2, 16))


def test_value_logits_of_a_bfloat16_model_are_float32():
    fp32 = tiny_loaded("opt", seed=2)
    bf16 = tiny_loaded("opt", seed=2)
    bf16.model.to(torch.bfloat16)
    fp32.model.to(torch.bfloat16).float()  # the same (bf16-rounded) weights, in float32
    rows = fp32.values(0)[:4]
    with torch.inference_mode():
        got = bf16.value_logits(rows.bfloat16(), final_norm=True)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, fp32.value_logits(rows, final_norm=True))
    assert bf16.dtype == torch.bfloat16  # the model itself is untouched


ACTIVATIONS = {
    "gpt2": lambda m, i: m.transformer.h[i].mlp.act,
    "gpt_neox": lambda m, i: m.gpt_neox.layers[i].mlp.act,
    "opt": lambda m, i: m.model.decoder.layers[i].activation_fn,
    "opt-350m": lambda m, i: m.model.decoder.layers[i].activation_fn,
    "bert": lambda m, i: m.encoder.layer[i].intermediate.intermediate_act_fn,
}


@pytest.mark.parametrize("family", NON_GATED)
def test_pre_is_the_up_projection_with_bias_and_post_its_activation(family):
    loaded = tiny_loaded(family)
    ids, mask = _ids(loaded)
    inputs, pre, post = {}, {}, {}
    ups = [loaded.model.get_submodule(p) for p in loaded.up_paths]
    handles = [
        up.register_forward_pre_hook(lambda _m, args, i=i: inputs.__setitem__(i, args[0]))
        for i, up in enumerate(ups)
    ]
    try:
        with torch.inference_mode():
            with loaded.capture(lambda i, m: pre.__setitem__(i, m.clone()), coefficient="pre"):
                loaded.forward(ids, mask)
            with loaded.capture(lambda i, m: post.__setitem__(i, m.clone())):
                loaded.forward(ids, mask)
    finally:
        for handle in handles:
            handle.remove()
    for i, up in enumerate(ups):
        x = inputs[i]  # [batch, pos, d_model], or [batch*pos, d_model] in OPT
        weight = up.weight if isinstance(up, torch.nn.Linear) else up.weight.T  # Conv1D
        with torch.inference_mode():
            by_hand = (x @ weight.T + up.bias).reshape(3, 7, loaded.d_ff)
            activated = ACTIVATIONS[family](loaded.model, i)(pre[i])
        torch.testing.assert_close(pre[i], by_hand, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(post[i], activated)
        assert (pre[i] < 0).any()  # genuinely before the activation


@pytest.mark.parametrize("coefficient", ["pre", "POST", ""])
def test_gated_pre_and_unknown_modes_are_errors(coefficient, store_factory):
    loaded = tiny_loaded("llama")
    message = "gated" if coefficient == "pre" else "coefficient must be one of post, pre"
    with (
        pytest.raises(MiningError, match=message),
        loaded.capture(lambda i, m: None, coefficient=coefficient),
    ):
        pass
    store = store_factory(loaded, random_sentences(8, seed=0))
    cfg = MineConfig(model="tiny", corpus="tiny", coefficient=coefficient)
    with pytest.raises(MiningError, match=message):
        mine_range(loaded, store, cfg, 0, len(store))


@pytest.mark.parametrize("model_type", sorted(ARCHITECTURES))
def test_every_family_has_a_written_definition(model_type):
    arch = ARCHITECTURES[model_type]
    post = ranked_definition(model_type, "post")
    assert set(post) == {"family", "module", "coefficient", "when", "bias", "text"}
    assert post["family"] == arch.family and post["coefficient"] == "post"
    assert post["when"] == "after the activation"
    assert post["module"] == arch.down_template.format(i="{layer}") + " (input)"
    assert all(post.values())
    if arch.gated:
        for words in ("act(gate·x)·(up·x)", "strongly negative", "−v_i", "not mined"):
            assert words in post["text"]
        with pytest.raises(MiningError, match="gated"):
            ranked_definition(model_type, "pre")
    else:
        pre = ranked_definition(model_type, "pre")
        assert pre["when"] == "before the activation"
        assert pre["module"] == arch.up_template.format(i="{layer}") + " (output)"
        assert "bias included" in pre["bias"] and "density" in pre["text"]


def test_gpt2_definition_reads_as_documented():
    assert ranked_definition("gpt2", "post")["module"] == "h.{layer}.mlp.c_proj (input)"
    assert ranked_definition("gpt2", "pre")["bias"] == "mlp.c_fc bias included"


def test_the_docs_table_is_the_one_the_definitions_give():
    # docs/science.md, "What is ranked, per family".
    page = (REPO_ROOT / "docs" / "science.md").read_text(encoding="utf-8")
    start, end = "<!-- ranked-definitions:start -->\n", "<!-- ranked-definitions:end -->"
    assert start in page and end in page
    table = page.split(start, 1)[1].split(end, 1)[0]
    # Regenerate with: .venv/bin/python -c "from mining.core.models import
    # ranked_definitions_markdown as t; print(t(), end='')"
    assert table == ranked_definitions_markdown()


def test_every_listed_architecture_has_a_template():
    assert {"gpt2", "gpt_neox", "opt", "llama", "mistral", "qwen2", "bert"} <= set(ARCHITECTURES)


def test_mine_runs_a_whole_job_from_a_model_directory(tiny_gpt2_dir, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(random_sentences(90, seed=11)) + "\n")
    seen = []
    cfg = MineConfig(
        model=str(tiny_gpt2_dir),
        corpus=str(corpus),
        sentences="lines",
        keys_per_layer=3,
        top_k=4,
        keep_k=8,
        batch_size=8,
        seed=1,
    )
    result = mine(cfg, progress=lambda *args: seen.append(args))
    assert seen[-1] == (90, result.corpus["n_tokens"], 90, result.corpus["n_tokens"])
    assert result.model["n_layers"] == 2 and result.model["causal"]
    assert [(k.layer, k.index) for k in result.keys][:3] == [
        (0, i) for i in sorted(k.index for k in result.keys[:3])
    ]
    for key in result.keys:
        assert len(key.value_top_tokens) == 10
        probs = [v.probability for v in key.value_top_tokens]
        assert probs == sorted(probs, reverse=True) and 0 < probs[0] <= 1
        assert [ex.rank for ex in key.examples] == [1, 2, 3, 4]
        coefficients = [ex.coefficient for ex in key.examples]
        assert coefficients == sorted(coefficients, reverse=True)
        for ex in key.examples:
            assert ex.sentence.startswith(ex.prefix)
            assert ex.prefix.endswith(ex.trigger_token.strip())
            assert (ex.prefix + ex.suffix).strip() == ex.sentence
            if ex.next_token_id == -1:
                assert ex.next_token == END_OF_SENTENCE and ex.suffix == ""
            else:
                assert ex.suffix.lstrip().startswith(ex.next_token.strip())
        assert sum(key.stats.histogram) == 90
        assert 0 <= key.stats.density <= 1 and key.stats.max >= coefficients[0]


def test_mine_refuses_pre_on_a_gated_model_before_reading_the_corpus(tmp_path):
    path = tmp_path / "tiny-llama"
    make_model("llama").save_pretrained(path)
    make_tokenizer("llama").save_pretrained(path)
    with pytest.raises(MiningError, match="gated"):
        mine(MineConfig(model=str(path), corpus="/does/not/exist", coefficient="pre"))


def test_mine_on_an_empty_corpus_is_an_error(tiny_gpt2_dir, tmp_path):
    corpus = tmp_path / "empty.txt"
    corpus.write_text("\n\n  \n")
    with pytest.raises(MiningError, match="the corpus has no sentences"):
        mine(MineConfig(model=str(tiny_gpt2_dir), corpus=str(corpus)))


def test_mine_refuses_bad_keys_before_reading_the_corpus(tiny_gpt2_dir):
    with pytest.raises(MiningError, match=r"keys_per_layer \(49\) exceeds the 48 keys"):
        mine(MineConfig(model=str(tiny_gpt2_dir), corpus="/does/not/matter", keys_per_layer=49))
    with pytest.raises(MiningError, match="layer 2 out of range"):
        mine(MineConfig(model=str(tiny_gpt2_dir), corpus="/x", key_list=[(2, 0)]))


@pytest.mark.slow
def test_builtin_minilm_mines_wikitext_sentences():
    if not WIKITEXT_VALID.is_file():
        pytest.skip(f"shared corpus absent: {WIKITEXT_VALID}")
    cfg = MineConfig(
        model="builtin:minilm",
        corpus=str(WIKITEXT_VALID),
        max_sentences=200,
        keys_per_layer=2,
        top_k=5,
    )
    result = mine(cfg)
    assert result.model == {
        "name": "builtin:minilm",
        "model_type": "bert",
        "n_layers": 6,
        "d_ff": 1536,
        "d_model": 384,
        "causal": False,
        "vocab_size": 30522,
    }
    assert result.corpus["n_sentences"] == 200
    assert [k.layer for k in result.keys] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    for key in result.keys:
        assert len(key.examples) == 5
        assert len({ex.sentence_index for ex in key.examples}) == 5
        for ex in key.examples:
            assert ex.position >= 1  # [CLS] is position 0 and never a trigger
            assert ex.sentence.startswith(ex.prefix) and ex.trigger_token not in ("[CLS]", "[SEP]")
