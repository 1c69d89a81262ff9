"""The numbers of a study's report (DESIGN §5), computed over arrays.

Pure numpy: no Django, no database. ``reports.selectors.study_arrays`` loads a study into
a ``StudyArrays``; every function here is vectorised over keys, prefixes, annotations and
patterns (no Python loop per key or prefix; loops run over layers, coders, coder pairs,
labels or bootstrap replicates only). Per-key sums are counted in integers, so that a
sum of them over any keys in any order (a layer, a bootstrap replicate) is exact.

Shapes: K keys, R the largest prefix rank, M coders (annotators), A annotations,
P patterns, W = ⌈R/64⌉ words of a rank bit set, L layers.

Definitions where DESIGN is silent (the report's ``definitions`` repeats them):

- A *rating* is one annotation's label of one prefix of its key. A *unit* is a
  (key, prefix rank) cell; its *coders* are the annotators whose annotation (in the
  filter: submitted only by default) covers that key.
- Figure 2 *pooled*: shares over all ratings. *Per annotator*: over that annotator's
  ratings. *Majority*: one vote per unit rated by at least one coder; the label most
  coders gave wins, and a tie splits the unit's vote equally between the tied labels
  (2 coders saying shallow and semantic give 0.5 to each), so no unit is dropped and no
  label is favoured. The number of tied units is reported.
- Coverage: the share of ratings whose prefix is covered by at least one pattern; mean
  patterns per key: the mean number of patterns of an annotation (one annotator's work
  on one key), as in the paper's "3.6 patterns per key".
- Raw agreement: the share of agreeing pairs among all pairs of coders of a unit,
  pooled over units (units with 2+ coders).
- Fleiss' κ: over the units rated by every selected coder (M ≥ 2).
- Cohen's κ: per coder pair over the units both rated; the mean over pairs that share
  at least one unit.
- Krippendorff's α (nominal): over every unit with 2+ coders (missing data allowed).
- Bootstrap: keys (not prefixes) are resampled with replacement within each layer (a
  stratified bootstrap: each replicate keeps every layer's number of keys); the overall
  interval comes from the same replicates. Only keys with at least one unit rated by
  two or more coders are resampled. Seeded; the 95% interval is the 2.5th and 97.5th
  percentile of the replicates where the statistic is defined.
- Pattern-level best-match Jaccard, per coder pair and key: each pattern of either
  coder is matched to the other coder's pattern with the highest Jaccard index of the
  covered prefix ranks (0 when the other coder wrote none); the key's score is the
  mean of these best matches over the patterns of both coders (symmetric). Keys where
  neither coder wrote a pattern have no score; keys annotated by only one of the two
  are not compared.
- §4 value agreement: the value's argmax token against the next token (reading a) or
  the trigger token (reading b) of the key's rank-1 prefix. An end of sentence never
  matches and stays in reading (a)'s denominator; a sentence cut at max_tokens leaves
  the next token unknown: that key is left out of reading (a)'s denominator (and
  counted). Intervals are Wilson 95% score intervals. Over every key of every layer the
  counts come from the mining pass (``Study.value_agreement``); over the sampled keys
  they are counted here.
"""

from __future__ import annotations

import ctypes
import functools
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# The four labels, in DESIGN §1's order; the code of a label is its position here.
LABELS = ("shallow", "semantic", "shallow+semantic", "not-covered")
LABEL_KEYS = ("shallow", "semantic", "shallow_semantic", "not_covered")
SHALLOW, SEMANTIC, SHALLOW_SEMANTIC, NOT_COVERED = range(4)
KINDS = ("shallow", "semantic", "shallow+semantic")
# A pattern's kind as a bit; a prefix's label is a function of the OR of the bits of the
# patterns that cover it (annotate.selectors.label_for_kinds: a shallow+semantic pattern,
# or both a shallow and a semantic one, make shallow+semantic).
KIND_BITS = {"shallow": 1, "semantic": 2, "shallow+semantic": 4}
LABEL_OF_BITS = np.array(
    [NOT_COVERED, SHALLOW, SEMANTIC, SHALLOW_SEMANTIC] + [SHALLOW_SEMANTIC] * 4, dtype=np.int8
)
PERTURBATIONS = ("first", "last", "random")
MISSING = -1

BOOTSTRAP_REPLICATES = 1000
BOOTSTRAP_SEED = 0
BOOTSTRAP_CHUNK = 100


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

    @property
    def n_keys(self) -> int:
        return int(self.key_layer.shape[0])

    @property
    def n_ranks(self) -> int:
        return int(self.prefix_exists.shape[1])


def empty_int(n: int = 0) -> np.ndarray:
    return np.zeros(n, dtype=np.int64)


# --- labels -----------------------------------------------------------------------------


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
        for bit in (1, 2, 4):
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


def value_counts(grid: np.ndarray, n_values: int = 4) -> np.ndarray:
    """[K, R, V] int16: how many coders gave value v to unit (k, r)."""
    return np.stack([(grid == v).sum(axis=0, dtype=np.int16) for v in range(n_values)], axis=-1)


def binary_grid(grid: np.ndarray) -> np.ndarray:
    """Covered (1) / not-covered (0), -1 kept for missing."""
    return np.where(grid < 0, grid, (grid != NOT_COVERED).astype(np.int8))


# --- Figure 2 and coverage --------------------------------------------------------------


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


def _layer_positions(arrays: StudyArrays) -> np.ndarray:
    return np.searchsorted(arrays.layers, arrays.key_layer)


def _sum_by_layer(per_key: np.ndarray, key_layer_pos: np.ndarray, n_layers: int) -> np.ndarray:
    """Sum rows of ``per_key`` [K, ...] into [L, ...] (one bincount, in key order: exact
    where the values are integers or halves, as every count and statistic here is)."""
    flat = per_key.reshape(per_key.shape[0], -1).astype(np.float64, copy=False)
    width = flat.shape[1]
    cells = (key_layer_pos[:, None] * width + np.arange(width)).ravel()
    sums = np.bincount(cells, weights=flat.ravel(), minlength=n_layers * width)
    return sums.reshape(n_layers, *per_key.shape[1:])


def _shares(counts: np.ndarray) -> np.ndarray:
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, counts / np.where(total > 0, total, 1), np.nan)


def _num(x: Any) -> float | None:
    """A JSON number, or None for nan/inf."""
    x = float(x)
    return x if math.isfinite(x) else None


def _label_dict(values: np.ndarray) -> dict[str, float | None]:
    return {key: _num(v) for key, v in zip(LABEL_KEYS, values, strict=True)}


def _figure2_row(layer: int | None, counts: np.ndarray, ties: float = 0.0) -> dict[str, Any]:
    return {
        "layer": layer,
        "n": float(counts.sum()),
        "counts": _label_dict(counts),
        "shares": _label_dict(_shares(counts)),
        "ties": int(ties),
    }


def _figure2_block(
    layers: np.ndarray, per_layer: np.ndarray, ties: np.ndarray | None = None
) -> dict[str, Any]:
    ties = np.zeros(len(layers)) if ties is None else ties
    return {
        "layers": [
            _figure2_row(int(layer), per_layer[i], ties[i]) for i, layer in enumerate(layers)
        ],
        "overall": _figure2_row(None, per_layer.sum(axis=0), ties.sum()),
    }


def _winners(grid: np.ndarray, n_values: int) -> tuple[np.ndarray, np.ndarray]:
    """Per unit of a [M, K, R] grid: [K, R, V] whether each label has the most votes
    (none where nobody rated), and [K, R] how many labels tie for it."""
    counts = value_counts(grid, n_values)
    top = counts.max(axis=-1, keepdims=True)
    winners = (counts == top) & (top > 0)
    return winners, winners.sum(axis=-1, dtype=np.int64)


def _majority_counts(
    grid: np.ndarray, layer_pos: np.ndarray, n_layers: int, n_values: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per layer: [L, V + 1, V] units won by each label among w tied winners, and
    [L, V + 1] units with w tied winners (w = 0: nobody rated)."""
    codes = unit_codes(grid, n_values)
    if codes is None:
        winners, n_winners = _winners(grid, n_values)
        group = layer_pos[:, None] * (n_values + 1) + n_winners  # (layer, w) per unit
        size = n_layers * (n_values + 1)
        won = np.stack(
            [np.bincount(group[winners[..., v]], minlength=size) for v in range(n_values)],
            axis=-1,
        )
        units = np.bincount(group.ravel(), minlength=size)
        return won.reshape(n_layers, n_values + 1, n_values), units.reshape(n_layers, -1)
    # Per code: its winners; per layer: how many units have each code.
    code_winners, code_n = _winners(codes.ratings[:, :, None], n_values)
    code_winners, code_n = code_winners[:, 0], code_n[:, 0]  # [C, V], [C]
    cells = (layer_pos[:, None] * codes.n_codes + codes.code).ravel()
    per_layer = np.bincount(cells, minlength=n_layers * codes.n_codes)
    per_layer = per_layer.reshape(n_layers, codes.n_codes)
    tie_size = (code_n[:, None] == np.arange(n_values + 1)).astype(np.int64)  # [C, V + 1]
    units = per_layer @ tie_size
    won = np.einsum("lc,cw,cv->lwv", per_layer, tie_size, code_winners.astype(np.int64))
    return won, units


def figure2(arrays: StudyArrays, grid: np.ndarray) -> dict[str, Any]:
    """Figure 2: per layer, counts and shares of the four labels, three ways."""
    n_layers = len(arrays.layers)
    n_values = len(LABELS)
    layer_pos = _layer_positions(arrays)
    # [M, L, V] ratings per coder, layer and label: one bincount per coder over
    # (layer, label + 1), the missing ratings (-1) landing in column 0.
    cell = layer_pos[:, None] * (n_values + 1) + 1
    per_coder_layer = np.zeros((len(arrays.coders), n_layers, n_values))
    for m in range(len(arrays.coders)):
        found = np.bincount((cell + grid[m]).ravel(), minlength=n_layers * (n_values + 1)).reshape(
            n_layers, n_values + 1
        )
        per_coder_layer[m] = found[:, 1:]
    pooled = per_coder_layer.sum(axis=0) if arrays.coders else np.zeros((n_layers, n_values))

    # Majority: a unit won by w tied labels gives each 1/w. Count per layer, tie size w
    # and label the units won (integers), then divide: exact whatever the order.
    won, units = _majority_counts(grid, layer_pos, n_layers, n_values)  # [L, W, V], [L, W]
    majority = np.zeros((n_layers, n_values))
    for w in range(1, n_values + 1):
        majority += won[:, w] / w
    ties = units[:, 2:].sum(axis=1).astype(np.float64)

    return {
        "pooled": _figure2_block(arrays.layers, pooled),
        "per_annotator": [
            {"annotator": coder, **_figure2_block(arrays.layers, per_coder_layer[m])}
            for m, coder in enumerate(arrays.coders)
        ],
        "majority": _figure2_block(arrays.layers, majority, ties),
    }


def coverage(arrays: StudyArrays, grid: np.ndarray) -> dict[str, Any]:
    """Share of ratings covered by ≥ 1 pattern; mean patterns per annotated key."""
    n_layers = len(arrays.layers)
    layer_pos = _layer_positions(arrays)
    rated = (grid >= 0).sum(axis=(0, 2))  # [K]
    covered = ((grid >= 0) & (grid != NOT_COVERED)).sum(axis=(0, 2))
    ann_layer = layer_pos[arrays.ann_key]
    n_ann = np.bincount(ann_layer, minlength=n_layers)
    n_pat = np.bincount(ann_layer[arrays.pat_ann], minlength=n_layers)
    rated_l = _sum_by_layer(rated.astype(np.float64), layer_pos, n_layers)
    covered_l = _sum_by_layer(covered.astype(np.float64), layer_pos, n_layers)

    def row(layer: int | None, r: float, c: float, a: int, p: int) -> dict[str, Any]:
        return {
            "layer": layer,
            "n_prefixes": int(r),
            "covered": int(c),
            "share_covered": _num(c / r) if r else None,
            "n_annotations": int(a),
            "n_patterns": int(p),
            "mean_patterns_per_key": _num(p / a) if a else None,
        }

    return {
        "layers": [
            row(int(layer), rated_l[i], covered_l[i], n_ann[i], n_pat[i])
            for i, layer in enumerate(arrays.layers)
        ],
        "overall": row(None, rated_l.sum(), covered_l.sum(), n_ann.sum(), n_pat.sum()),
    }


# --- agreement: sufficient statistics per key -------------------------------------------
#
# Every agreement statistic here is a function of sums over units, and a key's units
# add up: so each key gets a vector of sums (its *stats*), a bootstrap replicate is a
# weighted sum of key stats (weights = how often each key was drawn), and one matrix
# product gives a whole chunk of replicates.


@dataclass(frozen=True)
class StatLayout:
    """Column offsets of the per-key stats for V values and coder pairs."""

    n_values: int
    pairs: tuple[tuple[int, int], ...]

    @property
    def alpha_d(self) -> int:
        return 0

    @property
    def alpha_n(self) -> slice:  # pairable values per value
        return slice(1, 1 + self.n_values)

    @property
    def raw(self) -> slice:  # agreeing pairs, pairs
        start = 1 + self.n_values
        return slice(start, start + 2)

    @property
    def fleiss(self) -> slice:  # units rated by all, Σ_u Σ_v n_v(n_v − 1), counts per value
        start = 3 + self.n_values
        return slice(start, start + 2 + self.n_values)

    def cohen(self, p: int) -> slice:  # shared units, agreements, marginals of i, of j
        start = 5 + 2 * self.n_values + p * (2 + 2 * self.n_values)
        return slice(start, start + 2 + 2 * self.n_values)

    @property
    def width(self) -> int:
        return 5 + 2 * self.n_values + len(self.pairs) * (2 + 2 * self.n_values)


def coder_pairs(n_coders: int) -> tuple[tuple[int, int], ...]:
    return tuple((i, j) for i in range(n_coders) for j in range(i + 1, n_coders))


def key_stats(grid: np.ndarray, n_values: int) -> tuple[np.ndarray, StatLayout]:
    """[K, S] float64 per-key sums behind α, raw agreement, Fleiss' κ and Cohen's κ.

    Every column is a sum of integers (α's column: of integers over m − 1 per unit, so
    halves with 3 coders), counted in small integers: a sum of them over any keys, in
    any order, is exact (the bootstrap and the layers add them up). Computed per
    distinct unit code and counted per key where the codes are few (``unit_codes``)."""
    codes = unit_codes(grid, n_values)
    if codes is None:
        return unit_stats(grid, n_values)
    per_code, layout = unit_stats(codes.ratings[:, :, None], n_values)  # [C, S]
    stats = np.empty((grid.shape[1], layout.width))
    with _one_blas_thread():
        for keys in codes.key_chunks():
            stats[keys] = codes.per_key(keys).astype(np.float64) @ per_code
    return stats, layout


def unit_stats(grid: np.ndarray, n_values: int) -> tuple[np.ndarray, StatLayout]:
    """``key_stats`` computed over every unit of the grid."""
    n_coders, n_keys, n_ranks = grid.shape
    layout = StatLayout(n_values=n_values, pairs=coder_pairs(n_coders))
    stats = np.zeros((n_keys, layout.width), dtype=np.float64)
    valid = grid >= 0
    m = valid.sum(axis=0, dtype=np.int32)  # [K, R] coders per unit
    pairable = m >= 2
    full = (m == n_coders) & (n_coders >= 2)
    # Agreeing coder pairs per unit: Σ_v n_v(n_v − 1) / 2, one coder pair at a time (the
    # pairs also give Cohen's κ its sums).
    same = np.zeros((n_keys, n_ranks), dtype=np.int32)
    for p, (i, j) in enumerate(layout.pairs):
        a, b = grid[i], grid[j]
        both = valid[i] & valid[j]
        agree = both & (a == b)
        same += agree
        c = layout.cohen(p).start
        stats[:, c] = both.sum(axis=1)
        stats[:, c + 1] = agree.sum(axis=1)
        for v in range(n_values):
            stats[:, c + 2 + v] = (both & (a == v)).sum(axis=1)
            stats[:, c + 2 + n_values + v] = (both & (b == v)).sum(axis=1)
    for v in range(n_values):
        n_v = (grid == v).sum(axis=0, dtype=np.int32)  # [K, R] coders saying v
        stats[:, layout.alpha_n.start + v] = np.where(pairable, n_v, 0).sum(axis=1)
        stats[:, layout.fleiss.start + 2 + v] = np.where(full, n_v, 0).sum(axis=1)
    # Krippendorff (2011): the unit's off-diagonal coincidences, Σ_{c≠k} o_ck =
    # (m² − Σ n_v²) / (m − 1) = (m(m − 1) − 2·same) / (m − 1), per unit size m.
    off = m * (m - 1) - 2 * same
    d = np.zeros(n_keys)
    for size in range(2, n_coders + 1):
        d += np.where(m == size, off, 0).sum(axis=1) / (size - 1)
    stats[:, layout.alpha_d] = d
    stats[:, layout.raw.start] = same.sum(axis=1)
    stats[:, layout.raw.start + 1] = (m * (m - 1) // 2).sum(axis=1)
    # Fleiss: over the units rated by all, Σ_v n_v(n_v − 1) = 2·same (P_u is that over
    # n(n − 1)).
    stats[:, layout.fleiss.start] = full.sum(axis=1)
    stats[:, layout.fleiss.start + 1] = 2 * np.where(full, same, 0).sum(axis=1)
    return stats, layout


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1), np.nan)


def alpha_from_stats(stats: np.ndarray, layout: StatLayout) -> np.ndarray:
    """Nominal α = 1 − (n − 1) Σ_u Σ_{c≠k} o_ck(u) / (n² − Σ_c n_c²) (Krippendorff 2011).

    nan when there are no pairable values or every pairable value is the same (the
    expected disagreement is 0 and α is undefined)."""
    n_c = stats[..., layout.alpha_n]
    n = n_c.sum(axis=-1)
    expected = n**2 - (n_c**2).sum(axis=-1)
    return 1.0 - _safe_div((n - 1) * stats[..., layout.alpha_d], expected)


def raw_agreement_from_stats(stats: np.ndarray, layout: StatLayout) -> np.ndarray:
    raw = stats[..., layout.raw]
    return _safe_div(raw[..., 0], raw[..., 1])


def fleiss_from_stats(stats: np.ndarray, layout: StatLayout, n_coders: int) -> np.ndarray:
    """Fleiss (1971) κ = (P̄ − P̄e) / (1 − P̄e) over units rated by all n coders."""
    f = stats[..., layout.fleiss]
    n_units = f[..., 0]
    p_bar = _safe_div(f[..., 1], n_units * (n_coders * (n_coders - 1)))
    p_v = _safe_div(f[..., 2:], (n_units * n_coders)[..., None])
    p_e = (p_v**2).sum(axis=-1)
    return _safe_div(p_bar - p_e, 1.0 - p_e)


def cohen_pairs_from_stats(stats: np.ndarray, layout: StatLayout) -> np.ndarray:
    """[..., pairs] Cohen's κ of each coder pair over the units both rated."""
    out = []
    v = layout.n_values
    for p in range(len(layout.pairs)):
        c = stats[..., layout.cohen(p)]
        n = c[..., 0]
        p_o = _safe_div(c[..., 1], n)
        p_e = (
            _safe_div(c[..., 2 : 2 + v], n[..., None]) * _safe_div(c[..., 2 + v :], n[..., None])
        ).sum(axis=-1)
        out.append(_safe_div(p_o - p_e, 1.0 - p_e))
    if not out:
        return np.zeros((*stats.shape[:-1], 0))
    return np.stack(out, axis=-1)


def _nanmean_last(x: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(x)
    n = ok.sum(axis=-1)
    return _safe_div(np.where(ok, x, 0.0).sum(axis=-1), n)


def metrics_from_stats(
    stats: np.ndarray, layout: StatLayout, n_coders: int
) -> dict[str, np.ndarray]:
    return {
        "krippendorff_alpha": alpha_from_stats(stats, layout),
        "fleiss_kappa": fleiss_from_stats(stats, layout, n_coders),
        "cohen_kappa_mean": _nanmean_last(cohen_pairs_from_stats(stats, layout)),
        "raw_agreement": raw_agreement_from_stats(stats, layout),
    }


# Thin wrappers over the same statistics, for textbook checks and small uses.


def krippendorff_alpha_nominal(reliability: np.ndarray) -> float:
    """Nominal α of a [coders, units] matrix of values 0..V-1 with -1 (or nan) missing."""
    data = np.where(np.isnan(reliability), MISSING, reliability).astype(np.int64)
    grid = data[:, None, :]
    stats, layout = key_stats(grid, int(data.max()) + 1)
    return float(alpha_from_stats(stats.sum(axis=0), layout))


def fleiss_kappa(table: np.ndarray) -> float:
    """Fleiss' κ of a [subjects, categories] table of counts (each row sums to n raters)."""
    table = np.asarray(table, dtype=np.float64)
    n_raters = int(table[0].sum())
    n_values = table.shape[1]
    layout = StatLayout(n_values=n_values, pairs=())
    stats = np.zeros(layout.width)
    sq = (table**2).sum(axis=1)
    f = np.zeros(2 + n_values)
    f[0] = table.shape[0]
    f[1] = (sq - n_raters).sum()
    f[2:] = table.sum(axis=0)
    stats[layout.fleiss] = f
    return float(fleiss_from_stats(stats, layout, n_raters))


def cohen_kappa(a: Sequence[int], b: Sequence[int], n_values: int | None = None) -> float:
    """Cohen's κ of two coders' values 0..V-1 over the same units."""
    grid = np.array([a, b], dtype=np.int64)[:, None, :]
    n_values = n_values or int(grid.max()) + 1
    stats, layout = key_stats(grid, n_values)
    return float(cohen_pairs_from_stats(stats.sum(axis=0), layout)[0])


# --- agreement with bootstrap intervals -------------------------------------------------


def _exact_dtype(rows: np.ndarray, n_draws: int) -> type[np.floating[Any]]:
    """float32 where every replicate sum of ``rows`` (``n_draws`` rows drawn) is exact in
    it, as in float64: non-negative integers or halves whose largest possible sum stays
    under 2^24 (counted in halves). The product then costs half as much. float64
    otherwise."""
    if rows.size == 0 or rows.min() < 0:
        return np.float64
    halves = rows * 2
    if not np.array_equal(halves, np.round(halves)):
        return np.float64
    scale = 1 if np.array_equal(rows, np.round(rows)) else 2
    exact = n_draws < 2**24 and scale * n_draws * float(rows.max()) < 2**24
    return np.float32 if exact else np.float64


@functools.cache
def _openblas_threads() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """Get and set the thread count of the OpenBLAS that numpy's wheels bundle; None for
    another BLAS (then nothing is changed)."""
    here = Path(np.__file__).resolve().parent
    bundled = [*(here.parent / "numpy.libs").glob("*openblas*"), *here.glob(".dylibs/*openblas*")]
    for path in sorted(bundled):
        try:
            lib = ctypes.CDLL(str(path))  # the copy numpy has loaded already
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("scipy_openblas", ""), ("openblas", "")):
            get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
            put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
            if get is not None and put is not None:
                get.restype = ctypes.c_int
                put.argtypes = [ctypes.c_int]
                return get, put
    return None


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run numpy's matrix products on the calling thread only. OpenBLAS's other threads
    spin after each product, waiting for the next: on a busy machine they take the cores
    that the bootstrap's draws and counts need between products (measured on 2 busy
    cores: the bootstrap took 4.3 s with them, 1.6 s without)."""
    threads = _openblas_threads()
    if threads is None:
        yield
        return
    get, put = threads
    before = get()
    put(1)
    try:
        yield
    finally:
        put(before)


def _bootstrap_sums(
    stats: np.ndarray, strata: np.ndarray, n_strata: int, replicates: int, seed: int
) -> np.ndarray:
    """[n_strata, B, S]: per stratum, B replicate sums of keys drawn with replacement
    within the stratum. One matrix product per stratum and chunk of replicates."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n_strata, replicates, stats.shape[1]))
    with _one_blas_thread():
        for s in range(n_strata):
            _replicate_sums(out[s], stats[strata == s], rng, replicates)
    return out


def _replicate_sums(
    out: np.ndarray, rows: np.ndarray, rng: np.random.Generator, replicates: int
) -> None:
    """``out`` [B, S] ← B sums of ``rows`` drawn with replacement, B = ``replicates``."""
    n = rows.shape[0]
    if n:
        dtype = _exact_dtype(rows, n)
        rows = rows.astype(dtype)
        weights = np.empty((BOOTSTRAP_CHUNK, n), dtype=dtype)
        for start in range(0, replicates, BOOTSTRAP_CHUNK):
            b = min(BOOTSTRAP_CHUNK, replicates - start)
            draws = rng.integers(0, n, size=(b, n))
            # Weights: how often each key was drawn in each replicate. One count per
            # replicate: its n counters stay in cache (one count over all b·n is ~4×
            # slower).
            for r in range(b):
                weights[r] = np.bincount(draws[r], minlength=n)
            out[start : start + b] = weights[:b] @ rows


def _estimate(point: float, replicates: np.ndarray, n_units: float) -> dict[str, Any]:
    ok = replicates[~np.isnan(replicates)]
    low = high = None
    if ok.size and math.isfinite(point):
        low, high = (float(x) for x in np.percentile(ok, [2.5, 97.5]))
    return {"value": _num(point), "low": low, "high": high, "n_units": int(n_units)}


def _agreement_rows(
    arrays: StudyArrays,
    grid: np.ndarray,
    stats: np.ndarray,
    layout: StatLayout,
    boot_l: np.ndarray,
) -> dict[str, Any]:
    n_coders = len(arrays.coders)
    layer_pos = _layer_positions(arrays)
    n_layers = len(arrays.layers)
    point_l = _sum_by_layer(stats, layer_pos, n_layers)

    def row(layer: int | None, point: np.ndarray, boot: np.ndarray, units: dict[str, float]):
        p = metrics_from_stats(point, layout, n_coders)
        b = metrics_from_stats(boot, layout, n_coders)
        return {
            "layer": layer,
            **{name: _estimate(float(p[name]), b[name], units[name]) for name in p},
        }

    units_k = _unit_counts(grid, stats, layout)  # name -> [K]
    units_l = {name: _sum_by_layer(v, layer_pos, n_layers) for name, v in units_k.items()}
    rows = [
        row(
            int(layer),
            point_l[i],
            boot_l[i],
            {name: float(v[i]) for name, v in units_l.items()},
        )
        for i, layer in enumerate(arrays.layers)
    ]
    overall = row(
        None,
        point_l.sum(axis=0),
        boot_l.sum(axis=0),
        {name: float(v.sum()) for name, v in units_l.items()},
    )
    pairs = cohen_pairs_from_stats(stats.sum(axis=0), layout)
    return {
        "layers": rows,
        "overall": overall,
        "cohen_kappa_pairs": [
            {
                "annotators": [arrays.coders[i], arrays.coders[j]],
                "value": _num(pairs[p]),
                "n_units": int(stats[:, layout.cohen(p)][:, 0].sum()),
            }
            for p, (i, j) in enumerate(layout.pairs)
        ],
    }


def _unit_counts(grid: np.ndarray, stats: np.ndarray, layout: StatLayout) -> dict[str, np.ndarray]:
    """Per key: how many units each statistic is computed over (α, Cohen's κ and raw
    agreement: units with 2+ coders; Fleiss' κ: units rated by every coder)."""
    n_pairable = ((grid >= 0).sum(axis=0) >= 2).sum(axis=1).astype(np.float64)
    return {
        "krippendorff_alpha": n_pairable,
        "fleiss_kappa": stats[:, layout.fleiss.start],
        "cohen_kappa_mean": n_pairable,
        "raw_agreement": n_pairable,
    }


def agreement(
    arrays: StudyArrays,
    grid: np.ndarray,
    *,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """Agreement on the four labels and on covered / not-covered, per layer and overall.

    Both share one set of bootstrap replicates (the same keys drawn), so the two
    intervals are paired and the draws are paid once."""
    binary = binary_grid(grid)
    labels_stats, labels_layout = key_stats(grid, 4)
    binary_stats, binary_layout = key_stats(binary, 2)
    both = np.concatenate([labels_stats, binary_stats], axis=1)
    layer_pos = _layer_positions(arrays)
    informative = labels_stats[:, labels_layout.raw.start + 1] > 0  # a unit with 2+ coders
    boot = _bootstrap_sums(
        both[informative], layer_pos[informative], len(arrays.layers), replicates, seed
    )
    split = labels_layout.width
    return {
        "coders": list(arrays.coders),
        "bootstrap_replicates": replicates,
        "bootstrap_seed": seed,
        "labels": _agreement_rows(arrays, grid, labels_stats, labels_layout, boot[..., :split]),
        "binary": _agreement_rows(arrays, binary, binary_stats, binary_layout, boot[..., split:]),
    }


# --- pattern level ----------------------------------------------------------------------


def _segment_arange(lengths: np.ndarray) -> np.ndarray:
    """[0..l0-1, 0..l1-1, ...] without a Python loop."""
    total = int(lengths.sum())
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.arange(total) - starts


def best_match_jaccard(arrays: StudyArrays, i: int, j: int) -> np.ndarray:
    """[K] the best-match Jaccard of coders i and j per key (nan: not compared)."""
    n_keys = arrays.n_keys
    masks = arrays.pat_mask
    has = np.zeros((2, n_keys), dtype=bool)
    for side, coder in enumerate((i, j)):
        has[side, arrays.ann_key[arrays.ann_coder == coder]] = True
    both = has[0] & has[1]
    pat_key = arrays.ann_key[arrays.pat_ann]
    pat_coder = arrays.ann_coder[arrays.pat_ann]
    sides = []
    for coder in (i, j):
        idx = np.flatnonzero((pat_coder == coder) & both[pat_key])
        idx = idx[np.argsort(pat_key[idx], kind="stable")]
        count = np.bincount(pat_key[idx], minlength=n_keys)
        sides.append((idx, count, np.cumsum(count) - count))
    (idx_i, cnt_i, _), (idx_j, cnt_j, start_j) = sides
    # Every (pattern of i, pattern of j) pair of the same key.
    reps = cnt_j[pat_key[idx_i]]
    left = np.repeat(np.arange(idx_i.size), reps)
    right = np.repeat(start_j[pat_key[idx_i]], reps) + _segment_arange(reps)
    a, b = masks[idx_i[left]], masks[idx_j[right]]
    inter = np.bitwise_count(a & b).sum(axis=1)
    union = np.bitwise_count(a | b).sum(axis=1)
    jac = _safe_div(inter.astype(np.float64), union.astype(np.float64))
    jac = np.nan_to_num(jac, nan=0.0)
    best_i = np.zeros(idx_i.size)
    best_j = np.zeros(idx_j.size)
    np.maximum.at(best_i, left, jac)
    np.maximum.at(best_j, right, jac)
    total = np.bincount(pat_key[idx_i], weights=best_i, minlength=n_keys) + np.bincount(
        pat_key[idx_j], weights=best_j, minlength=n_keys
    )
    n_pat = cnt_i + cnt_j
    return np.where(both & (n_pat > 0), _safe_div(total, n_pat.astype(np.float64)), np.nan)


def pattern_jaccard(arrays: StudyArrays) -> dict[str, Any]:
    layer_pos = _layer_positions(arrays)
    n_layers = len(arrays.layers)
    all_scores = []

    def row(layer: int | None, scores: np.ndarray) -> dict[str, Any]:
        ok = scores[~np.isnan(scores)]
        return {"layer": layer, "mean": _num(ok.mean()) if ok.size else None, "n_keys": ok.size}

    pairs = []
    for i, j in coder_pairs(len(arrays.coders)):
        scores = best_match_jaccard(arrays, i, j)
        all_scores.append(scores)
        pairs.append(
            {
                "annotators": [arrays.coders[i], arrays.coders[j]],
                "layers": [
                    row(int(arrays.layers[s]), scores[layer_pos == s]) for s in range(n_layers)
                ],
                "overall": row(None, scores),
            }
        )
    pooled = np.concatenate(all_scores) if all_scores else np.zeros(0)
    pooled_layer = np.concatenate([layer_pos] * len(all_scores)) if all_scores else empty_int()
    return {
        "pairs": pairs,
        "layers": [row(int(arrays.layers[s]), pooled[pooled_layer == s]) for s in range(n_layers)],
        "overall": row(None, pooled),
    }


# --- §4 and §3.2 ------------------------------------------------------------------------


# The 97.5th percentile of the standard normal: Wilson 95% intervals.
Z95 = 1.959963984540054


def wilson_interval(
    successes: np.ndarray | int, n: np.ndarray | int, z: float = Z95
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a binomial proportion (Wilson 1927; Newcombe 1998's
    method 3): unlike the normal approximation it stays inside [0, 1] and is not empty
    at 0 successes, which is what §4's rates near 0 need. Elementwise; nan where n = 0."""
    k = np.asarray(successes, dtype=np.float64)
    total = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / total
        z2n = z * z / total
        centre = (p + z2n / 2) / (1 + z2n)
        half = z / (1 + z2n) * np.sqrt(p * (1 - p) / total + z2n / (4 * total))
        low = np.where(k <= 0, 0.0, np.clip(centre - half, 0.0, 1.0))
        high = np.where(k >= total, 1.0, np.clip(centre + half, 0.0, 1.0))
    empty = total <= 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def rate_block(matches: int, n: int) -> dict[str, Any]:
    """A §4 rate: matches of n, the rate and its Wilson 95% interval (null where n = 0)."""
    low, high = wilson_interval(matches, n)
    return {
        "matches": int(matches),
        "n": int(n),
        "rate": _num(matches / n) if n else None,
        "low": _num(low),
        "high": _num(high),
    }


# Why §4 has no rate for a study; the UI translates the code.
NOT_APPLICABLE_ENCODER = "encoder"  # no next token: the model sees the whole sentence
NOT_COUNTED = "not_counted"  # imported, or mined before the pass counted every key
COUNTS_INVALID = "counts_invalid"  # the stored counts do not follow their contract
REASONS = (NOT_APPLICABLE_ENCODER, NOT_COUNTED, COUNTS_INVALID)
VALUE_AGREEMENT_FORMAT = "ffkv.value-agreement/v1"
READINGS = ("next_token", "trigger_token")
VARIANTS = ("without_final_norm", "with_final_norm")
NEXT_TOKEN_END = -1  # the trigger is the sentence's last token
NEXT_TOKEN_UNKNOWN = -2  # the sentence was cut at max_tokens: the next token is unknown


def value_agreement(arrays: StudyArrays, *, is_causal: bool = True) -> dict[str, Any]:
    """§4 over the sampled keys: how often the value's argmax token is the next token (a)
    or the trigger token (b) of the key's rank-1 trigger prefix. An end of sentence (-1)
    never matches and stays in the denominator; an unknown next token (-2, a cut
    sentence) is left out of reading (a)'s denominator and counted in ``next_unknown``."""
    layer_pos = _layer_positions(arrays)
    n_layers = len(arrays.layers)
    known = (arrays.value_top_id >= 0) & arrays.prefix_exists[:, :1].any(axis=1)
    end = known & (arrays.top1_next_id == NEXT_TOKEN_END)
    unknown = known & (arrays.top1_next_id == NEXT_TOKEN_UNKNOWN)
    nxt = known & (arrays.top1_next_id >= 0) & (arrays.value_top_id == arrays.top1_next_id)
    trg = known & (arrays.top1_trigger_id >= 0) & (arrays.value_top_id == arrays.top1_trigger_id)
    counts = np.stack(
        [
            np.bincount(layer_pos[mask], minlength=n_layers)
            for mask in (known, end, unknown, nxt, trg)
        ],
        axis=1,
    )  # [L, 5]: keys, end of sentence, unknown next token, next- and trigger-token matches

    def row(layer: int | None, c: np.ndarray) -> dict[str, Any]:
        k, e, u, a, b = (int(x) for x in c)
        return {
            "layer": layer,
            "n_keys": k,
            "next_end": e,
            "next_unknown": u,
            "next_token": rate_block(a, k - u),
            "trigger_token": rate_block(b, k),
        }

    return {
        "applicable": is_causal,
        "reason": None if is_causal else NOT_APPLICABLE_ENCODER,
        "vocab_size": arrays.vocab_size,
        "random_baseline": 1.0 / arrays.vocab_size if arrays.vocab_size else None,
        "layers": (
            [row(int(layer), counts[s]) for s, layer in enumerate(arrays.layers)]
            if is_causal
            else []
        ),
        "overall": row(None, counts.sum(axis=0)) if is_causal else None,
    }


class CountsInvalid(ValueError):
    """The stored §4 counts break ``Study.value_agreement``'s contract."""


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CountsInvalid(f"{where} must be a non-negative integer")
    return value


def _parse_every_key(stored: Any) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The stored counts as (variants, layers [L], counts [L, 3 + 2·V]): n_keys,
    next_end, next_unknown, then next-token matches per variant, trigger-token matches
    per variant. Raises ``CountsInvalid`` naming the first thing wrong."""
    if not isinstance(stored, dict) or stored.get("format") != VALUE_AGREEMENT_FORMAT:
        raise CountsInvalid(f"format must be {VALUE_AGREEMENT_FORMAT!r}")
    variants = stored.get("variants")
    if (
        not isinstance(variants, list)
        or not variants
        or any(v not in VARIANTS for v in variants)
        or len(set(variants)) != len(variants)
    ):
        raise CountsInvalid(f"variants must be a list of {', '.join(VARIANTS)}")
    rows = stored.get("layers")
    if not isinstance(rows, list):
        raise CountsInvalid("layers must be a list")
    layers, counts = [], []
    for i, row in enumerate(rows):
        where = f"layers[{i}]"
        if not isinstance(row, dict):
            raise CountsInvalid(f"{where} must be an object")
        layer = _count(row.get("layer"), f"{where}.layer")
        n, end, unknown = (
            _count(row.get(name), f"{where}.{name}")
            for name in ("n_keys", "next_end", "next_unknown")
        )
        if layer < 1 or layer in layers:
            raise CountsInvalid(f"{where}.layer must be a new layer, from 1")
        if end + unknown > n:
            raise CountsInvalid(f"{where}: next_end + next_unknown exceed n_keys")
        matches = []
        for reading, denominator in (("next_token", n - unknown - end), ("trigger_token", n)):
            by_variant = row.get(reading)
            if not isinstance(by_variant, dict):
                raise CountsInvalid(f"{where}.{reading} must be an object")
            for variant in variants:
                m = _count(by_variant.get(variant), f"{where}.{reading}.{variant}")
                if m > denominator:
                    raise CountsInvalid(f"{where}.{reading}.{variant} exceeds its keys")
                matches.append(m)
        layers.append(layer)
        counts.append([n, end, unknown, *matches])
    order = np.argsort(layers, kind="stable")
    table = np.asarray(counts, dtype=np.int64).reshape(len(rows), 3 + 2 * len(variants))
    return list(variants), np.asarray(layers, dtype=np.int64)[order], table[order]


def value_agreement_every_key(
    stored: Any, *, is_causal: bool, layers: Sequence[int] | None = None
) -> dict[str, Any]:
    """§4 over every key of every layer, from the counts the mining pass stored
    (``Study.value_agreement``): per layer and overall, per reading and variant, the
    matches, the denominator, the rate and its Wilson 95% interval. Reading (a)'s
    denominator leaves out the keys whose next token is unknown (a cut sentence);
    reading (b)'s is every key. ``layers`` (from 1) restricts it to the report's layers."""
    base: dict[str, Any] = {
        "applicable": False,
        "reason": None,
        "detail": None,
        "format": None,
        "vocab_size": None,
        "random_baseline": None,
        "final_norm": None,
        "variants": [],
        "layers": [],
        "overall": None,
    }
    if not is_causal:
        return {**base, "reason": NOT_APPLICABLE_ENCODER}
    if not stored:
        return {**base, "reason": NOT_COUNTED}
    try:
        variants, present, counts = _parse_every_key(stored)
        vocab = _count(stored.get("vocab_size"), "vocab_size")
        final_norm = stored.get("final_norm")
        if final_norm is not None and not isinstance(final_norm, str):
            raise CountsInvalid("final_norm must be a module path or null")
    except CountsInvalid as exc:
        return {**base, "reason": COUNTS_INVALID, "detail": str(exc)}
    if layers is not None:
        keep = np.isin(present, np.asarray(list(layers), dtype=np.int64))
        present, counts = present[keep], counts[keep]
    n_var = len(variants)

    def row(layer: int | None, c: np.ndarray) -> dict[str, Any]:
        n, end, unknown = (int(x) for x in c[:3])
        next_n = n - unknown
        return {
            "layer": layer,
            "n_keys": n,
            "next_end": end,
            "next_unknown": unknown,
            "next_token": {v: rate_block(int(c[3 + i]), next_n) for i, v in enumerate(variants)},
            "trigger_token": {
                v: rate_block(int(c[3 + n_var + i]), n) for i, v in enumerate(variants)
            },
        }

    return {
        **base,
        "applicable": True,
        "format": VALUE_AGREEMENT_FORMAT,
        "vocab_size": vocab,
        "random_baseline": 1.0 / vocab if vocab else None,
        "final_norm": final_norm,
        "variants": variants,
        "layers": [row(int(layer), counts[s]) for s, layer in enumerate(present)],
        "overall": row(None, counts.sum(axis=0)),
    }


def perturbation(arrays: StudyArrays) -> dict[str, Any]:
    """§3.2 / Figure 3: the mean of the keys' stored relative changes, per layer; null
    where no key of the layer was measured."""
    layer_pos = _layer_positions(arrays)
    values = arrays.perturbation
    ok = ~np.isnan(values)

    def row(layer: int | None, mask: np.ndarray) -> dict[str, Any]:
        sel_ok = ok[mask]
        sums = np.where(sel_ok, values[mask], 0.0).sum(axis=0)
        counts = sel_ok.sum(axis=0)
        return {
            "layer": layer,
            "n_keys": int(sel_ok.any(axis=1).sum()),
            **{
                name: _num(sums[c] / counts[c]) if counts[c] else None
                for c, name in enumerate(PERTURBATIONS)
            },
        }

    return {
        "layers": [row(int(layer), layer_pos == s) for s, layer in enumerate(arrays.layers)],
        "overall": row(None, np.ones(arrays.n_keys, dtype=bool)),
    }


def report(
    arrays: StudyArrays,
    *,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = BOOTSTRAP_SEED,
    is_causal: bool = True,
) -> dict[str, Any]:
    """Every section of the report (DESIGN §5) as JSON-ready values."""
    grid = rating_grid(arrays)
    return {
        "figure2": figure2(arrays, grid),
        "coverage": coverage(arrays, grid),
        "agreement": agreement(arrays, grid, replicates=replicates, seed=seed),
        "pattern_jaccard": pattern_jaccard(arrays),
        "value_agreement": value_agreement(arrays, is_causal=is_causal),
        "perturbation": perturbation(arrays),
    }
