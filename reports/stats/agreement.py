"""Agreement (docs/science.md, "Agreement"): Krippendorff's α, Fleiss' κ, Cohen's κ and
raw agreement, on the four labels and on covered / not-covered, per layer and overall,
with bootstrap intervals over keys."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .arrays import StudyArrays, coder_pairs, layer_positions, num, safe_div, sum_by_layer
from .bootstrap import (
    BOOTSTRAP_REPLICATES,
    BOOTSTRAP_SEED,
    MIN_BOOTSTRAP_KEYS,
    bootstrap_sums,
    estimate,
    one_blas_thread,
)
from .labels import MISSING, binary_grid, unit_codes

# Sufficient statistics per key: every agreement statistic here is a function of sums
# over units, and a key's units add up: so each key gets a vector of sums (its *stats*),
# a bootstrap replicate is a weighted sum of key stats (weights = how often each key was
# drawn), and one matrix product gives a whole chunk of replicates.


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
    with one_blas_thread():
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


def alpha_from_stats(stats: np.ndarray, layout: StatLayout) -> np.ndarray:
    """Nominal α = 1 − (n − 1) Σ_u Σ_{c≠k} o_ck(u) / (n² − Σ_c n_c²) (Krippendorff 2011).

    nan when there are no pairable values or every pairable value is the same (the
    expected disagreement is 0 and α is undefined)."""
    n_c = stats[..., layout.alpha_n]
    n = n_c.sum(axis=-1)
    expected = n**2 - (n_c**2).sum(axis=-1)
    return 1.0 - safe_div((n - 1) * stats[..., layout.alpha_d], expected)


def raw_agreement_from_stats(stats: np.ndarray, layout: StatLayout) -> np.ndarray:
    raw = stats[..., layout.raw]
    return safe_div(raw[..., 0], raw[..., 1])


def fleiss_from_stats(stats: np.ndarray, layout: StatLayout, n_coders: int) -> np.ndarray:
    """Fleiss (1971) κ = (P̄ − P̄e) / (1 − P̄e) over units rated by all n coders."""
    f = stats[..., layout.fleiss]
    n_units = f[..., 0]
    p_bar = safe_div(f[..., 1], n_units * (n_coders * (n_coders - 1)))
    p_v = safe_div(f[..., 2:], (n_units * n_coders)[..., None])
    p_e = (p_v**2).sum(axis=-1)
    return safe_div(p_bar - p_e, 1.0 - p_e)


def cohen_pairs_from_stats(stats: np.ndarray, layout: StatLayout) -> np.ndarray:
    """[..., pairs] Cohen's κ of each coder pair over the units both rated."""
    out = []
    v = layout.n_values
    for p in range(len(layout.pairs)):
        c = stats[..., layout.cohen(p)]
        n = c[..., 0]
        p_o = safe_div(c[..., 1], n)
        p_e = (
            safe_div(c[..., 2 : 2 + v], n[..., None]) * safe_div(c[..., 2 + v :], n[..., None])
        ).sum(axis=-1)
        out.append(safe_div(p_o - p_e, 1.0 - p_e))
    if not out:
        return np.zeros((*stats.shape[:-1], 0))
    return np.stack(out, axis=-1)


def _nanmean_last(x: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(x)
    n = ok.sum(axis=-1)
    return safe_div(np.where(ok, x, 0.0).sum(axis=-1), n)


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


def _agreement_rows(
    arrays: StudyArrays,
    grid: np.ndarray,
    stats: np.ndarray,
    layout: StatLayout,
    boot_l: np.ndarray,
    resampled: np.ndarray,
) -> dict[str, Any]:
    """``resampled`` [K] bool: the keys the bootstrap draws from (their count per layer
    says how far each interval can be trusted)."""
    n_coders = len(arrays.coders)
    layer_pos = layer_positions(arrays)
    n_layers = len(arrays.layers)
    point_l = sum_by_layer(stats, layer_pos, n_layers)
    keys_l = np.bincount(layer_pos[resampled], minlength=n_layers)

    def row(
        layer: int | None,
        point: np.ndarray,
        boot: np.ndarray,
        units: dict[str, float],
        n_keys: int,
    ) -> dict[str, Any]:
        p = metrics_from_stats(point, layout, n_coders)
        b = metrics_from_stats(boot, layout, n_coders)
        return {
            "layer": layer,
            **{name: estimate(float(p[name]), b[name], units[name], n_keys) for name in p},
        }

    units_k = _unit_counts(grid, stats, layout)  # name -> [K]
    units_l = {name: sum_by_layer(v, layer_pos, n_layers) for name, v in units_k.items()}
    rows = [
        row(
            int(layer),
            point_l[i],
            boot_l[i],
            {name: float(v[i]) for name, v in units_l.items()},
            int(keys_l[i]),
        )
        for i, layer in enumerate(arrays.layers)
    ]
    overall = row(
        None,
        point_l.sum(axis=0),
        boot_l.sum(axis=0),
        {name: float(v.sum()) for name, v in units_l.items()},
        int(keys_l.sum()),
    )
    pairs = cohen_pairs_from_stats(stats.sum(axis=0), layout)
    return {
        "layers": rows,
        "overall": overall,
        "cohen_kappa_pairs": [
            {
                "annotators": [arrays.coders[i], arrays.coders[j]],
                "value": num(pairs[p]),
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
    layer_pos = layer_positions(arrays)
    informative = labels_stats[:, labels_layout.raw.start + 1] > 0  # a unit with 2+ coders
    boot = bootstrap_sums(
        both[informative], layer_pos[informative], len(arrays.layers), replicates, seed
    )
    split = labels_layout.width
    return {
        "coders": list(arrays.coders),
        "bootstrap_replicates": replicates,
        "bootstrap_seed": seed,
        "bootstrap_min_keys": MIN_BOOTSTRAP_KEYS,
        "labels": _agreement_rows(
            arrays, grid, labels_stats, labels_layout, boot[..., :split], informative
        ),
        "binary": _agreement_rows(
            arrays, binary, binary_stats, binary_layout, boot[..., split:], informative
        ),
    }
