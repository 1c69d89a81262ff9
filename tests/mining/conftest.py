"""Tiny models saved to disk, so that `load_model(path)` (and worker processes) load them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.mining.conftest import make_model, make_tokenizer, random_sentences


def save_tiny_model(family: str, path: Path) -> Path:
    make_model(family).save_pretrained(path)
    make_tokenizer(family).save_pretrained(path)
    return path


@pytest.fixture
def tiny_gpt2_dir(tmp_path: Path) -> Path:
    return save_tiny_model("gpt2", tmp_path / "tiny-gpt2")


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Path:
    """200 distinct sentences, one per line (use ``--sentences lines``)."""
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(random_sentences(200, seed=3)) + "\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _roots_in_tmp_path(settings, tmp_path: Path) -> None:
    """These tests mine tiny models and corpora written under ``tmp_path``: that folder
    is the corpus and model root (mining refuses local files outside the roots)."""
    settings.FFKV_CORPUS_ROOTS = [tmp_path]
    settings.FFKV_MODEL_ROOTS = [tmp_path]
