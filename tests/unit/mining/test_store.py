"""The tokenized corpus store."""

from __future__ import annotations

import numpy as np
import pytest

from mining.core import CorpusStore, MiningError, build_store

from .conftest import make_tokenizer


def test_each_sentence_is_tokenized_alone_with_special_tokens(tmp_path):
    tok = make_tokenizer("bert")
    store = build_store(
        ["red cat", "blue dog runs fast", "the"], tok, tmp_path / "s", tokenizer_name="tiny"
    )
    assert len(store) == 3 and store.n_tokens == 4 + 6 + 3
    ids = store.tokens(1)
    assert tok.convert_ids_to_tokens(ids.tolist()) == [
        "[CLS]",
        "blue",
        "dog",
        "[UNK]",
        "[UNK]",
        "[SEP]",
    ]
    assert store.special(1).tolist() == [True, False, False, False, False, True]  # UNK is real
    assert store.sentence(1) == "blue dog runs fast"
    reopened = CorpusStore.open(tmp_path / "s")
    assert reopened.meta["tokenizer"] == "tiny" and reopened.meta["n_truncated"] == 0
    assert reopened.sentence(2) == "the"


def test_long_sentences_are_cut_at_max_tokens_and_counted(tmp_path):
    tok = make_tokenizer("bert")
    sentences = ["red " * 10, "cat dog", "blue " * 4, "fish " * 3]
    store = build_store(sentences, tok, tmp_path / "s", max_tokens=5)
    assert store.lengths.tolist() == [5, 4, 5, 5]
    assert store.meta["n_truncated"] == 2
    assert store.special(0).tolist() == [True, False, False, False, True]  # [SEP] kept


def test_batches_are_right_padded_and_mark_real_tokens(tmp_path):
    tok = make_tokenizer("llama")
    store = build_store(["red cat dog", "blue"], tok, tmp_path / "s")
    ids, present, real = store.batch(np.array([1, 0]), pad_id=0)
    assert ids.shape == (2, 4)
    assert present.tolist() == [[True, True, False, False], [True, True, True, True]]
    assert real.tolist() == [[False, True, False, False], [False, True, True, True]]
    assert ids[0, 2:].tolist() == [0, 0]


def test_an_empty_corpus_is_an_error_and_leaves_nothing(tmp_path):
    with pytest.raises(MiningError, match="the corpus has no sentences"):
        build_store([], make_tokenizer("gpt2"), tmp_path / "s")
    assert not (tmp_path / "s").exists() and not (tmp_path / "s.partial").exists()


def test_sentences_without_a_real_token_are_dropped(tmp_path):
    store = build_store(["   ", "red"], make_tokenizer("bert"), tmp_path / "s")
    assert len(store) == 1 and store.meta["n_empty"] == 1


def test_opening_something_else_is_an_error(tmp_path):
    with pytest.raises(MiningError, match="is not a corpus store"):
        CorpusStore.open(tmp_path)


def test_the_store_remembers_which_sentences_were_cut(tmp_path):
    tok = make_tokenizer("gpt2")
    store = build_store(["red " * 10, "cat dog", "blue " * 5], tok, tmp_path / "s", max_tokens=5)
    assert store.lengths.tolist() == [5, 2, 5]
    # "blue " * 5 is exactly 5 tokens: it fits, it was not cut.
    assert [store.truncated(i) for i in range(len(store))] == [True, False, False]
    assert store.truncated_flags.tolist() == [True, False, False]
    assert CorpusStore.open(tmp_path / "s").truncated(0)
