"""A token that is part of a multi-byte character keeps its raw bytes.

A byte-level BPE (SmolLM2's own tokenizer, GPT-2 style) splits rare characters (an emoji,
some CJK) into several tokens, each of which decodes alone to U+FFFD; a SentencePiece
model with byte fallback writes such bytes as ``<0x..>`` pieces. The miner keeps the
raw bytes of those tokens so that the workspace can show ``⟨0xF0⟩`` instead of "�".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tokenizers import Tokenizer, decoders, models
from transformers import PreTrainedTokenizerFast

from mining.core import MineConfig, adapt, build_store, finalize, mine_range
from mining.core.tokens import REPLACEMENT, byte_level_alphabet, token_bytes

from .test_trigger_spans import _tiny_model, _tokenizer

# Characters that SmolLM2's tokenizer splits across tokens (checked below), in sentences.
SPLIT = ["She smiled 🦩 at the flamingo.", "The sign read 𝔉𝔯𝔞𝔨𝔱𝔲𝔯 in old letters."]


def decode(tokenizer, token_id: int) -> str:
    return tokenizer.decode([token_id], clean_up_tokenization_spaces=False)


def test_the_byte_level_alphabet_names_every_byte_once_with_no_blank_character():
    alphabet = byte_level_alphabet()
    assert sorted(alphabet.values()) == list(range(256))
    assert all(char.isprintable() and not char.isspace() for char in alphabet)
    assert alphabet["A"] == ord("A") and alphabet["Ġ"] == ord(" ")


def test_smollm2s_tokens_give_back_the_bytes_of_the_text():
    tokenizer = _tokenizer("byte-level-bpe")
    for text in SPLIT:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        broken = [i for i in ids if REPLACEMENT in decode(tokenizer, i)]
        assert broken, f"{text!r} has no token that is part of a character"
        rebuilt = b""
        for token_id in ids:
            text_alone = decode(tokenizer, token_id)
            raw = token_bytes(tokenizer, token_id, text_alone)
            if REPLACEMENT in text_alone:
                assert raw is not None and raw.decode("utf-8", errors="replace") == text_alone
            else:
                assert raw is None  # the text is all there is
                raw = text_alone.encode("utf-8")
            rebuilt += raw
        assert rebuilt == text.encode("utf-8")


def test_a_byte_fallback_piece_gives_its_byte_and_an_unknown_scheme_gives_none():
    vocab = {"<unk>": 0, "<0xF0>": 1, "<0x9F>": 2, "a": 3, "\ufffd": 4}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>", byte_fallback=True))
    tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>")
    assert decode(tokenizer, 1) == REPLACEMENT
    assert token_bytes(tokenizer, 1, REPLACEMENT) == b"\xf0"
    assert token_bytes(tokenizer, 3, "a") is None
    # A piece that is U+FFFD itself: neither byte-level nor byte fallback; not guessed.
    assert token_bytes(tokenizer, 4, REPLACEMENT) is None


def test_mined_trigger_and_next_tokens_carry_their_bytes_where_they_are_part_of_a_character(
    tmp_path: Path,
):
    """A tiny GPT-2 built from its config, with SmolLM2's byte-level tokenizer."""
    tokenizer = _tokenizer("byte-level-bpe")
    loaded = adapt(_tiny_model("byte-level-bpe", tokenizer), tokenizer, "tiny-byte-level")
    store = build_store(SPLIT, tokenizer, tmp_path / "s", max_tokens=48)
    cfg = MineConfig(keep_k=4, top_k=2, max_tokens=48, batch_size=4)
    partial = mine_range(loaded, store, cfg, 0, len(store))
    keys = [(layer, i) for layer in range(loaded.n_layers) for i in range(loaded.d_ff)]
    examples = [ex for r in finalize(loaded, store, partial, keys, 2) for ex in r.examples]
    seen = {"trigger": 0, "next": 0}
    for ex in examples:
        for name, token, raw in (
            ("trigger", ex.trigger_token, ex.trigger_token_bytes),
            ("next", ex.next_token, ex.next_token_bytes),
        ):
            if token is not None and REPLACEMENT in token:
                seen[name] += 1
                assert raw is not None and raw.decode("utf-8", errors="replace") == token
            else:
                assert raw is None
    if not (seen["trigger"] and seen["next"]):
        pytest.fail(f"the tiny model's winners hold no split character: {seen}")
