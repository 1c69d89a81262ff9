"""Figure 2 (the labels' shares per layer: pooled, per annotator, by majority) and the
coverage (docs/science.md, "Figure 2" and "Coverage")."""

from __future__ import annotations

from typing import Any

import numpy as np

from annotate.labels import LABEL_KEYS, LABELS, NOT_COVERED

from .arrays import StudyArrays, layer_positions, num, sum_by_layer
from .labels import unit_codes, value_counts


def _shares(counts: np.ndarray) -> np.ndarray:
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, counts / np.where(total > 0, total, 1), np.nan)


def _label_dict(values: np.ndarray) -> dict[str, float | None]:
    return {key: num(v) for key, v in zip(LABEL_KEYS, values, strict=True)}


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


def majority_counts(
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
    layer_pos = layer_positions(arrays)
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
    won, units = majority_counts(grid, layer_pos, n_layers, n_values)  # [L, W, V], [L, W]
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
    layer_pos = layer_positions(arrays)
    rated = (grid >= 0).sum(axis=(0, 2))  # [K]
    covered = ((grid >= 0) & (grid != NOT_COVERED)).sum(axis=(0, 2))
    ann_layer = layer_pos[arrays.ann_key]
    n_ann = np.bincount(ann_layer, minlength=n_layers)
    n_pat = np.bincount(ann_layer[arrays.pat_ann], minlength=n_layers)
    rated_l = sum_by_layer(rated.astype(np.float64), layer_pos, n_layers)
    covered_l = sum_by_layer(covered.astype(np.float64), layer_pos, n_layers)

    def row(layer: int | None, r: float, c: float, a: int, p: int) -> dict[str, Any]:
        return {
            "layer": layer,
            "n_prefixes": int(r),
            "covered": int(c),
            "share_covered": num(c / r) if r else None,
            "n_annotations": int(a),
            "n_patterns": int(p),
            "mean_patterns_per_key": num(p / a) if a else None,
        }

    return {
        "layers": [
            row(int(layer), rated_l[i], covered_l[i], n_ann[i], n_pat[i])
            for i, layer in enumerate(arrays.layers)
        ],
        "overall": row(None, rated_l.sum(), covered_l.sum(), n_ann.sum(), n_pat.sum()),
    }
