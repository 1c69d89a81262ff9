"""The folders a mining run may read local files from: the settings ``FFKV_CORPUS_ROOTS``
and ``FFKV_MODEL_ROOTS`` handed to ``mining.core.sources`` (light: no torch)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from mining.core.config import MineConfig
from mining.core.sources import check_corpus_source, check_model_source


def corpus_roots() -> list[Path]:
    return [Path(root) for root in settings.FFKV_CORPUS_ROOTS]


def model_roots() -> list[Path]:
    return [Path(root) for root in settings.FFKV_MODEL_ROOTS]


def check_model(name: str) -> None:
    """A MiningError naming the model roots unless ``name`` may be loaded."""
    check_model_source(name, model_roots())


def check_corpus(spec: str) -> None:
    """A MiningError naming the corpus roots unless ``spec`` may be read."""
    check_corpus_source(spec, corpus_roots())


def check_sources(config: MineConfig) -> None:
    check_model(config.model)
    check_corpus(config.corpus)
