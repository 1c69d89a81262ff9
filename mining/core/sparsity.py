"""Sparsity per layer, from the mining pass's own counts (no new pass; docs/composition.md).

Per layer, over every key (not only the sampled ones):

- ``density``: the distribution over keys of a key's density, the share of real
  positions with m_i > 0 (quartiles and mean);
- ``gini``: the Gini coefficient of the keys' mean |activation|, 0 when every key is as
  active on average, towards 1 when a few keys carry the layer. The magnitude, because a
  GELU's or a SwiGLU's mean can be negative, and a Gini of signed values has no meaning;
- ``above_tenth_of_peak``: the share of the layer's keys whose m_i is above a tenth of
  the largest m_j at the same position, averaged over positions (per token: how many
  memories take part in what the layer writes there).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .miner import Partial

FORMAT = "ffkv.sparsity/v1"


def gini(values: np.ndarray) -> float | None:
    """The Gini coefficient of non-negative ``values``; None if they sum to 0."""
    x = np.sort(np.asarray(values, dtype=np.float64))
    total = x.sum()
    if x.size == 0 or total <= 0:
        return None
    ranks = np.arange(1, x.size + 1)
    return float((2 * (ranks * x).sum()) / (x.size * total) - (x.size + 1) / x.size)


def quartiles(values: np.ndarray) -> dict[str, float]:
    """A distribution as the figures give it: mean, first quartile, median, third."""
    q1, median, q3 = np.quantile(values, [0.25, 0.5, 0.75])
    return {"mean": float(values.mean()), "q1": float(q1), "median": float(median), "q3": float(q3)}


def sparsity(partial: Partial) -> dict[str, Any]:
    """The sparsity figures of every layer, as ``report.json``'s ``sparsity`` holds them."""
    density = partial.density().numpy()  # [layers, d_ff]
    mean = np.abs(partial.mean().numpy())
    above = partial.above_tenth().numpy()  # [layers]
    layers = []
    for layer in range(density.shape[0]):
        layers.append(
            {
                "layer": layer + 1,
                "density": quartiles(density[layer]),
                "gini": gini(mean[layer]),
                "above_tenth_of_peak": float(above[layer]),
            }
        )
    return {"format": FORMAT, "n_positions": int(partial.n_positions), "layers": layers}
