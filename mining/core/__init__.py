"""ffkv's mining engine: pure torch/transformers, never imports Django.

Layers are 0-based throughout ``mining.core``; the interfaces show layer + 1.

Importing the package is light: each name below comes from its module on first use
(PEP 562), so ``from mining.core import MineConfig, MiningError`` loads neither torch
nor numba. Web processes import the configuration and the errors only; the engine
(models, miner, finalize, ...) is loaded by the workers that run it.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import COEFFICIENTS, MineConfig
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
        LoadedModel,
        adapt,
        load_model,
        ranked_definition,
        ranked_definitions_markdown,
        supported_model_types,
    )
    from .perturb import KeyPerturbation, perturb, perturbation_by_layer
    from .pipeline import MiningResult, build_corpus_store, mine, model_info
    from .sources import Roots, check_corpus_source, check_model_source, parse_roots
    from .store import CorpusStore, build_store

# Where each public name lives. The light modules (config, corpus, errors, sources)
# import no torch; every other one does.
_MODULE_OF = {
    "config": ("COEFFICIENTS", "MineConfig"),
    "corpus": ("iter_sentences", "split_sentences"),
    "errors": ("MiningError", "MiningStopped"),
    "finalize": (
        "END_OF_SENTENCE",
        "END_OF_SENTENCE_ID",
        "NEXT_UNKNOWN_ID",
        "KeyResult",
        "KeyStats",
        "TriggerExample",
        "ValueToken",
        "finalize",
        "value_top_tokens",
    ),
    "miner": (
        "HIST_EDGES",
        "Partial",
        "all_keys",
        "batch_plan",
        "merge_partials",
        "mine_range",
        "partial_coefficient",
        "resolve_keys",
        "sample_keys",
        "shard_ranges",
    ),
    "models": (
        "ARCHITECTURES",
        "LoadedModel",
        "adapt",
        "load_model",
        "ranked_definition",
        "ranked_definitions_markdown",
        "supported_model_types",
    ),
    "perturb": ("KeyPerturbation", "perturb", "perturbation_by_layer"),
    "pipeline": ("MiningResult", "build_corpus_store", "mine", "model_info"),
    "sources": ("Roots", "check_corpus_source", "check_model_source", "parse_roots"),
    "store": ("CorpusStore", "build_store"),
}
_WHERE = {name: module for module, names in _MODULE_OF.items() for name in names}

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
    "Roots",
    "TriggerExample",
    "ValueToken",
    "adapt",
    "all_keys",
    "batch_plan",
    "build_corpus_store",
    "build_store",
    "check_corpus_source",
    "check_model_source",
    "finalize",
    "iter_sentences",
    "load_model",
    "merge_partials",
    "mine",
    "mine_range",
    "model_info",
    "parse_roots",
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


# Two functions share their module's name. Importing a submodule makes it an attribute
# of its package; the package keeps the function under that name, as it always did.
_SHADOWED = frozenset(name for name in _WHERE if name in _MODULE_OF)


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SHADOWED and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next lookup is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
