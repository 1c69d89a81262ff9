"""Model loading, adapters and the whole-run convenience ``mine``."""

from __future__ import annotations

import re

import huggingface_hub
import pytest
import torch
from transformers import T5Config, T5Model

from mining.core import END_OF_SENTENCE, MineConfig, MiningError, adapt, load_model, mine
from mining.core.models import ARCHITECTURES

from .conftest import WIKITEXT_VALID, make_model, make_tokenizer, random_sentences


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


@pytest.mark.parametrize("family", ["gpt2", "llama", "bert"])
def test_adapters_find_down_projections_and_values(family):
    model = make_model(family)
    loaded = adapt(model, make_tokenizer(family), family)
    assert loaded.n_layers == 2 and loaded.causal == (family != "bert")
    assert loaded.d_ff == {"gpt2": 48, "llama": 40, "bert": 44}[family]
    values = loaded.values(1)
    assert values.shape == (loaded.d_ff, 32)
    # A value row is what the down projection adds to the residual for a one-hot m.
    one_hot = torch.zeros(1, loaded.d_ff)
    one_hot[0, 5] = 1.0
    down = loaded.down_module(1)
    bias = getattr(down, "bias", None)
    out = down(one_hot) - (0 if bias is None else bias)
    torch.testing.assert_close(out[0], values[5])
    assert loaded.output_embeddings().shape[1] == 32


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
