"""A study as arrays, and the helpers every section of the statistics shares.

Shapes: K keys, R the largest prefix rank, M coders (annotators), A annotations,
P patterns, W = ⌈R/64⌉ words of a rank bit set, L layers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np


@dataclass(frozen=True)
class AnnotationSet:
    """Annotations other than the report's own, on the same keys: the submitted gold
    (one coder, ``GOLD_CODER``) or the annotators' check annotations."""

    coders: tuple[str, ...]  # [M'] usernames, ascending (gold: one name)
    ann_key: np.ndarray  # [A'] int64, position of the annotation's key
    ann_coder: np.ndarray  # [A'] int64, position of the annotation's coder in ``coders``
    pat_ann: np.ndarray  # [P'] int64, position of the pattern's annotation
    pat_kind: np.ndarray  # [P'] uint8
    pat_mask: np.ndarray  # [P', W] uint64


# Gold's name where it is a coder: no username can hold parentheses.
GOLD_CODER = "(gold)"


def empty_set(n_words: int = 1, coders: tuple[str, ...] = ()) -> AnnotationSet:
    return AnnotationSet(
        coders=coders,
        ann_key=empty_int(),
        ann_coder=empty_int(),
        pat_ann=empty_int(),
        pat_kind=np.zeros(0, dtype=np.uint8),
        pat_mask=np.zeros((0, n_words), dtype=np.uint64),
    )


@dataclass(frozen=True)
class StudyArrays:
    """A study (after the report's filters) as arrays; positions, not database ids."""

    layers: np.ndarray  # [L] int64, the layers present (from 1), ascending
    key_layer: np.ndarray  # [K] int64, from 1
    key_index: np.ndarray  # [K] int64
    prefix_exists: np.ndarray  # [K, R] bool: key k has a prefix of rank r + 1
    coders: tuple[str, ...]  # [M] usernames, ascending
    ann_key: np.ndarray  # [A] int64, position of the annotation's key
    ann_coder: np.ndarray  # [A] int64, position of the annotation's coder
    pat_ann: np.ndarray  # [P] int64, position of the pattern's annotation
    pat_kind: np.ndarray  # [P] uint8, KIND_BITS of the pattern's kind
    pat_mask: np.ndarray  # [P, W] uint64: the covered ranks as bits (rank r → bit r-1)
    value_top_id: np.ndarray  # [K] int64, argmax token id of the value; -1 when absent
    top1_next_id: np.ndarray  # [K] int64, next token id of the rank-1 prefix; -1: none/EOS,
    # -2: unknown (the sentence was cut)
    top1_trigger_id: np.ndarray  # [K] int64, trigger token id of the rank-1 prefix; -1: none
    vocab_size: int
    perturbation: np.ndarray  # [K, 3] float64 (first, last, random); nan when absent
    gold: AnnotationSet | None = None  # the keys' submitted gold annotations
    checks: AnnotationSet | None = None  # the annotators' check annotations (submitted)

    @property
    def n_keys(self) -> int:
        return int(self.key_layer.shape[0])

    @property
    def n_ranks(self) -> int:
        return int(self.prefix_exists.shape[1])


def empty_int(n: int = 0) -> np.ndarray:
    return np.zeros(n, dtype=np.int64)


def coder_pairs(n_coders: int) -> tuple[tuple[int, int], ...]:
    return tuple((i, j) for i in range(n_coders) for j in range(i + 1, n_coders))


def layer_positions(arrays: StudyArrays) -> np.ndarray:
    return np.searchsorted(arrays.layers, arrays.key_layer)


def sum_by_layer(per_key: np.ndarray, key_layer_pos: np.ndarray, n_layers: int) -> np.ndarray:
    """Sum rows of ``per_key`` [K, ...] into [L, ...] (one bincount, in key order: exact
    where the values are integers or halves, as every count and statistic here is)."""
    # The width spelled out: reshape cannot infer -1 for a study with no keys (K = 0).
    width = int(np.prod(per_key.shape[1:], dtype=np.int64))
    flat = per_key.reshape(per_key.shape[0], width).astype(np.float64, copy=False)
    cells = (key_layer_pos[:, None] * width + np.arange(width)).ravel()
    sums = np.bincount(cells, weights=flat.ravel(), minlength=n_layers * width)
    return sums.reshape(n_layers, *per_key.shape[1:])


def num(x: Any) -> float | None:
    """A JSON number, or None for nan/inf."""
    x = float(x)
    return x if math.isfinite(x) else None


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1), np.nan)


def with_annotations(arrays: StudyArrays, other: AnnotationSet) -> StudyArrays:
    """The same keys with ``other``'s annotations in place of the report's own."""
    return replace(
        arrays,
        coders=other.coders,
        ann_key=other.ann_key,
        ann_coder=other.ann_coder,
        pat_ann=other.pat_ann,
        pat_kind=other.pat_kind,
        pat_mask=other.pat_mask,
    )


def gold_of(arrays: StudyArrays) -> AnnotationSet:
    return arrays.gold if arrays.gold is not None else empty_set(coders=(GOLD_CODER,))


def checks_of(arrays: StudyArrays) -> AnnotationSet:
    return arrays.checks if arrays.checks is not None else empty_set()


def with_gold_coder(arrays: StudyArrays) -> StudyArrays:
    """The report's annotations and the gold as one more coder, ``GOLD_CODER``, last."""
    gold = gold_of(arrays)
    n_ann = arrays.ann_key.shape[0]
    return replace(
        arrays,
        coders=(*arrays.coders, GOLD_CODER),
        ann_key=np.concatenate([arrays.ann_key, gold.ann_key]),
        ann_coder=np.concatenate([arrays.ann_coder, gold.ann_coder * 0 + len(arrays.coders)]),
        pat_ann=np.concatenate([arrays.pat_ann, gold.pat_ann + n_ann]),
        pat_kind=np.concatenate([arrays.pat_kind, gold.pat_kind]),
        pat_mask=np.concatenate(
            [arrays.pat_mask, gold.pat_mask.reshape(-1, arrays.pat_mask.shape[1])]
        ),
    )
