"""Labels: each annotation's label of each prefix, the rating grid, and the grid's units
by code (docs/science.md, "Labels"). The labels, their codes and the kinds' bits are
``annotate.labels``'s."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from annotate.labels import KIND_BITS, LABEL_OF_BITS, N_LABELS, NOT_COVERED

from .arrays import StudyArrays

MISSING = -1


def n_words(n_ranks: int) -> int:
    return max(1, -(-n_ranks // 64))


def masks_from_ranks(
    n_patterns: int, cov_pat: np.ndarray, cov_rank: np.ndarray, n_ranks: int
) -> np.ndarray:
    """[P, W] uint64 rank bit sets from (pattern position, rank from 1) coverage rows."""
    words = n_words(n_ranks)
    masks = np.zeros(n_patterns * words, dtype=np.uint64)
    if cov_pat.size:
        bit = cov_rank.astype(np.int64) - 1
        cell = cov_pat * words + bit // 64
        np.bitwise_or.at(masks, cell, np.left_shift(np.uint64(1), (bit % 64).astype(np.uint64)))
    return masks.reshape(n_patterns, words)


def _unpack(masks: np.ndarray, n_ranks: int) -> np.ndarray:
    """[N, R] bool from [N, W] uint64 rank bit sets: rank r + 1 ↔ bit r."""
    as_bytes = np.ascontiguousarray(masks, dtype="<u8").view(np.uint8)
    return np.unpackbits(as_bytes, axis=1, count=n_ranks, bitorder="little").view(bool)


def annotation_labels(arrays: StudyArrays) -> np.ndarray:
    """[A, R] int8: each annotation's label of each rank of its key; -1 where the key has
    no prefix of that rank."""
    n_ann, n_ranks = arrays.ann_key.shape[0], arrays.n_ranks
    bits = np.zeros((n_ann, n_ranks), dtype=np.uint8)
    if arrays.pat_ann.size:
        # Group the patterns by annotation; per kind bit, OR the masks of each group's
        # patterns of that kind in one reduceat, then spread the words into ranks.
        if np.all(arrays.pat_ann[1:] >= arrays.pat_ann[:-1]):
            order = np.arange(arrays.pat_ann.size)
        else:
            order = np.argsort(arrays.pat_ann, kind="stable")
        grouped = arrays.pat_ann[order]
        starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
        owners = grouped[starts]
        kinds = arrays.pat_kind[order]
        masks = arrays.pat_mask[order]
        for bit in KIND_BITS.values():
            of_kind = (kinds & bit) != 0
            if not of_kind.any():
                continue
            words = np.where(of_kind[:, None], masks, np.uint64(0))
            covered = _unpack(np.bitwise_or.reduceat(words, starts, axis=0), n_ranks)
            bits[owners] |= covered.astype(np.uint8) * np.uint8(bit)
    labels = LABEL_OF_BITS[bits]
    return np.where(arrays.prefix_exists[arrays.ann_key], labels, np.int8(MISSING))


def rating_grid(arrays: StudyArrays, labels: np.ndarray | None = None) -> np.ndarray:
    """[M, K, R] int8: the label coder m gave to unit (k, r); -1 where m gave none."""
    if labels is None:
        labels = annotation_labels(arrays)
    grid = np.full((len(arrays.coders), arrays.n_keys, arrays.n_ranks), MISSING, dtype=np.int8)
    grid[arrays.ann_coder, arrays.ann_key] = labels
    return grid


def value_counts(grid: np.ndarray, n_values: int = N_LABELS) -> np.ndarray:
    """[K, R, V] int16: how many coders gave value v to unit (k, r)."""
    return np.stack([(grid == v).sum(axis=0, dtype=np.int16) for v in range(n_values)], axis=-1)


def binary_grid(grid: np.ndarray) -> np.ndarray:
    """Covered (1) / not-covered (0), -1 kept for missing."""
    return np.where(grid < 0, grid, (grid != NOT_COVERED).astype(np.int8))


# Most studies have few coders: a unit's ratings, one digit per coder (base V + 1, 0 for
# missing), then take few distinct values (at most (V + 1)^M). Every per-unit quantity is
# a function of them, so it is computed once per distinct value and counted per key:
# much less work than computing it for 1.6M units.
MAX_CODES = 4096  # distinct values; more (many coders), and units are worked on directly
CHUNK_CELLS = 2**22  # keys × codes counted at a time


@dataclass(frozen=True)
class UnitCodes:
    """The units of a [M, K, R] grid by their ratings: ``code`` [K, R] indexes ``ratings``
    [M, C], the distinct rating columns (-1 missing)."""

    code: np.ndarray
    ratings: np.ndarray

    @property
    def n_codes(self) -> int:
        return int(self.ratings.shape[1])

    def key_chunks(self) -> Iterator[slice]:
        """Slices of keys small enough for ``per_key``."""
        n_keys = self.code.shape[0]
        step = max(1, CHUNK_CELLS // max(1, self.n_codes))
        return (slice(start, min(start + step, n_keys)) for start in range(0, n_keys, step))

    def per_key(self, keys: slice) -> np.ndarray:
        """[k, C] int64: how many units of each of these keys have each code."""
        code = self.code[keys]
        cells = (np.arange(code.shape[0])[:, None] * self.n_codes + code).ravel()
        counts = np.bincount(cells, minlength=code.shape[0] * self.n_codes)
        return counts.reshape(code.shape[0], self.n_codes)


def unit_codes(grid: np.ndarray, n_values: int) -> UnitCodes | None:
    """The grid's units by code, or None where there are too many distinct codes."""
    n_coders = grid.shape[0]
    base = n_values + 1
    if base**n_coders >= 2**62:
        return None
    raw = np.zeros(grid.shape[1:], dtype=np.int64)
    for m in range(n_coders - 1, -1, -1):  # coder m is digit m
        raw *= base
        raw += grid[m] + 1
    if base**n_coders <= 2**20:
        seen = np.bincount(raw.ravel(), minlength=base**n_coders)
        present = np.flatnonzero(seen)
        if len(present) > MAX_CODES:
            return None
        lookup = np.zeros(base**n_coders, dtype=np.int64)
        lookup[present] = np.arange(len(present))
        compact = lookup[raw]
    else:
        present, compact = np.unique(raw, return_inverse=True)
        if len(present) > MAX_CODES:
            return None
        compact = compact.reshape(raw.shape)
    digits = present[None, :] // base ** np.arange(n_coders)[:, None] % base
    return UnitCodes(code=compact, ratings=(digits - 1).astype(grid.dtype))
