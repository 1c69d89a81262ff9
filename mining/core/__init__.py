"""ffkv's mining engine: pure torch/transformers, never imports Django.

Layers are 0-based throughout ``mining.core``; the interfaces show layer + 1.
"""

from .config import MineConfig
from .corpus import iter_sentences, split_sentences
from .errors import MiningError, MiningStopped
from .finalize import (
    END_OF_SENTENCE,
    END_OF_SENTENCE_ID,
    NEXT_UNKNOWN_ID,
    KeyResult,
    KeyStats,
    TriggerExample,
    ValueToken,
    finalize,
    value_top_tokens,
)
from .miner import (
    HIST_EDGES,
    Partial,
    all_keys,
    batch_plan,
    merge_partials,
    mine_range,
    partial_coefficient,
    resolve_keys,
    sample_keys,
    shard_ranges,
)
from .models import (
    ARCHITECTURES,
    COEFFICIENTS,
    LoadedModel,
    adapt,
    load_model,
    ranked_definition,
    ranked_definitions_markdown,
    supported_model_types,
)
from .perturb import KeyPerturbation, perturb, perturbation_by_layer
from .pipeline import MiningResult, build_corpus_store, mine, model_info
from .store import CorpusStore, build_store

__all__ = [
    "ARCHITECTURES",
    "COEFFICIENTS",
    "END_OF_SENTENCE",
    "END_OF_SENTENCE_ID",
    "HIST_EDGES",
    "NEXT_UNKNOWN_ID",
    "CorpusStore",
    "KeyPerturbation",
    "KeyResult",
    "KeyStats",
    "LoadedModel",
    "MineConfig",
    "MiningError",
    "MiningResult",
    "MiningStopped",
    "Partial",
    "TriggerExample",
    "ValueToken",
    "adapt",
    "all_keys",
    "batch_plan",
    "build_corpus_store",
    "build_store",
    "finalize",
    "iter_sentences",
    "load_model",
    "merge_partials",
    "mine",
    "mine_range",
    "model_info",
    "partial_coefficient",
    "perturb",
    "perturbation_by_layer",
    "ranked_definition",
    "ranked_definitions_markdown",
    "resolve_keys",
    "sample_keys",
    "shard_ranges",
    "split_sentences",
    "supported_model_types",
    "value_top_tokens",
]
