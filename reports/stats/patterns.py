"""Pattern level (docs/science.md, "Patterns and the 3-prefix rule"): per annotator pair
and key, the best-match Jaccard of the patterns' prefix sets."""

from __future__ import annotations

from typing import Any

import numpy as np

from .arrays import StudyArrays, coder_pairs, empty_int, layer_positions, num, safe_div


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
    jac = safe_div(inter.astype(np.float64), union.astype(np.float64))
    jac = np.nan_to_num(jac, nan=0.0)
    best_i = np.zeros(idx_i.size)
    best_j = np.zeros(idx_j.size)
    np.maximum.at(best_i, left, jac)
    np.maximum.at(best_j, right, jac)
    total = np.bincount(pat_key[idx_i], weights=best_i, minlength=n_keys) + np.bincount(
        pat_key[idx_j], weights=best_j, minlength=n_keys
    )
    n_pat = cnt_i + cnt_j
    return np.where(both & (n_pat > 0), safe_div(total, n_pat.astype(np.float64)), np.nan)


def pattern_jaccard(arrays: StudyArrays) -> dict[str, Any]:
    layer_pos = layer_positions(arrays)
    n_layers = len(arrays.layers)
    all_scores = []

    def row(layer: int | None, scores: np.ndarray) -> dict[str, Any]:
        ok = scores[~np.isnan(scores)]
        return {"layer": layer, "mean": num(ok.mean()) if ok.size else None, "n_keys": ok.size}

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
