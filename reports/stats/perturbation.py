"""§3.2 / Figure 3: the mean relative change of a key's coefficient when one token of its
top trigger prefixes is removed, per layer."""

from __future__ import annotations

from typing import Any

import numpy as np

from .arrays import StudyArrays, layer_positions, num

PERTURBATIONS = ("first", "last", "random")


def perturbation(arrays: StudyArrays) -> dict[str, Any]:
    """§3.2 / Figure 3: the mean of the keys' stored relative changes, per layer; null
    where no key of the layer was measured."""
    layer_pos = layer_positions(arrays)
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
                name: num(sums[c] / counts[c]) if counts[c] else None
                for c, name in enumerate(PERTURBATIONS)
            },
        }

    return {
        "layers": [row(int(layer), layer_pos == s) for s, layer in enumerate(arrays.layers)],
        "overall": row(None, np.ones(arrays.n_keys, dtype=bool)),
    }
