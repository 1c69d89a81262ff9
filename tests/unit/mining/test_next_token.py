"""The next token of a trigger example: a real token, the end of the sentence, or unknown
where the sentence was cut at ``max_tokens`` (null in the v1 contract)."""

from __future__ import annotations

from mining.core import (
    END_OF_SENTENCE,
    END_OF_SENTENCE_ID,
    NEXT_UNKNOWN_ID,
    MineConfig,
    finalize,
    mine_range,
)

from .conftest import tiny_loaded


def _examples_by_position(family, store_factory, sentences, max_tokens):
    loaded = tiny_loaded(family)
    store = store_factory(loaded, sentences, max_tokens=max_tokens)
    cfg = MineConfig(keep_k=8, top_k=8, max_tokens=max_tokens, batch_size=4)
    partial = mine_range(loaded, store, cfg, 0, len(store))
    keys = [(layer, i) for layer in range(loaded.n_layers) for i in range(loaded.d_ff)]
    results = finalize(loaded, store, partial, keys, 8)
    return loaded, store, [ex for r in results for ex in r.examples]


def test_the_last_kept_token_of_a_cut_sentence_has_an_unknown_next_token(store_factory):
    sentences = ["red cat dog fish tree rock river hill", "blue sun", "moon star cloud"]
    _, store, examples = _examples_by_position("gpt2", store_factory, sentences, 4)
    assert store.truncated(0) and not store.truncated(1)
    seen = set()
    for ex in examples:
        last = ex.position == store.lengths[ex.sentence_index] - 1
        if ex.sentence_index == 0 and last:
            assert (ex.next_token, ex.next_token_id) == (None, NEXT_UNKNOWN_ID)
            seen.add("unknown")
        elif last:
            assert (ex.next_token, ex.next_token_id) == (END_OF_SENTENCE, END_OF_SENTENCE_ID)
            seen.add("end")
        else:
            nxt = int(store.tokens(ex.sentence_index)[ex.position + 1])
            assert ex.next_token_id == nxt and ex.next_token is not None
            seen.add("token")
    assert seen == {"unknown", "end", "token"}  # every case was met by some key


def test_a_cut_sentence_keeps_its_closing_special_token_and_its_next_is_still_unknown(
    store_factory,
):
    sentences = ["red cat dog fish tree rock river hill", "blue sun"]
    _, store, examples = _examples_by_position("bert", store_factory, sentences, 5)
    assert store.truncated(0)
    cut = [ex for ex in examples if ex.sentence_index == 0 and ex.position == 3]
    assert cut, "no key chose the last kept real token of the cut sentence"
    assert all(ex.next_token is None and ex.next_token_id == NEXT_UNKNOWN_ID for ex in cut)
    end = [ex for ex in examples if ex.sentence_index == 1 and ex.position == 2]
    assert all(ex.next_token == END_OF_SENTENCE for ex in end)
