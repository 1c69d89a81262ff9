"""The report's ``pattern_scores`` (docs/evidence.md, "In the report"): per layer and
overall, the mean held-out scores of the annotators' written patterns, of their accepted
suggestions, and of the shuffled baseline of both, with bootstrap 95% intervals over keys.

Pure numpy. A group's ``n`` counts its patterns that have at least one of its two scores
(a pattern not scored yet, or whose key has no held-out examples, is not counted); each
score's mean is over the patterns that have it (detection: those with a rule). The
bootstrap resamples the keys that have a pattern of any group, within each layer
(``bootstrap.bootstrap_sums``, as the agreement's intervals); the overall interval comes
from the same replicates, summed over layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .bootstrap import bootstrap_sums

GROUPS = ("written", "suggestion", "shuffled")
SCORES = ("detection", "embedding")

DEFINITION = (
    "Each pattern is tested on examples its annotator never saw: the key's held-out "
    "trigger prefixes (ranks 26–50) as positives and 25 random sentences as negatives. "
    "Detection: the balanced accuracy of the pattern's rule at telling them apart (only "
    "patterns with a rule). Embedding: the AUROC of the MiniLM cosine similarity between "
    "the pattern's description and each example (ties count one half); 0.5 is chance. "
    "Written: the annotators' own patterns; suggestion: the machine's suggestions they "
    "accepted; shuffled: the same patterns scored on another key of the same layer, "
    "chosen with the study's seed, the baseline of a pattern that says nothing about its "
    "key. n: the patterns with a score; the mean is over patterns, and the 95% interval "
    "resamples keys with replacement within each layer."
)


@dataclass(frozen=True)
class PatternScoreArrays:
    """One row per annotator's pattern in the report, P patterns."""

    key: np.ndarray  # [P] int64: its key's id
    layer: np.ndarray  # [P] int64
    suggestion: np.ndarray  # [P] bool: source "suggestion" (else "written")
    scores: np.ndarray  # [P, 4] float64: detection, embedding, shuffled_… (NaN: null)
    layers: np.ndarray  # [L] the report's layers, ascending


def _num(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


def _block(
    sums: np.ndarray, counts: np.ndarray, rep_sums: np.ndarray, rep_counts: np.ndarray
) -> dict[str, Any]:
    """Each group's S but ``n``, from sums/counts [3 groups, 2 scores] and their
    replicates [B, 3, 2]."""
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = rep_sums / rep_counts
    out: dict[str, Any] = {}
    for g, group in enumerate(GROUPS):
        s: dict[str, Any] = {}
        for c, score in enumerate(SCORES):
            if counts[g, c] == 0:
                s[score] = {"mean": None, "low": None, "high": None}
                continue
            reps = ratio[:, g, c]
            reps = reps[np.isfinite(reps)]
            low, high = (
                (float(x) for x in np.percentile(reps, [2.5, 97.5])) if reps.size else (None, None)
            )
            s[score] = {"mean": _num(sums[g, c] / counts[g, c]), "low": low, "high": high}
        out[group] = s
    return out


def pattern_scores(arrays: PatternScoreArrays, *, replicates: int, seed: int) -> dict[str, Any]:
    """``pattern_scores`` as JSON-ready values (the module's docstring)."""
    P = len(arrays.key)
    # Per pattern and group: its two scores (NaN where it has none or is not in the group).
    values = np.full((P, 3, 2), np.nan)
    written = ~arrays.suggestion
    values[written, 0] = arrays.scores[written, 0:2]
    values[arrays.suggestion, 1] = arrays.scores[arrays.suggestion, 0:2]
    values[:, 2] = arrays.scores[:, 2:4]
    has = ~np.isnan(values)
    counted = has.any(axis=2)  # [P, 3]: counts in the group's n

    key_ids, key_pos = np.unique(arrays.key, return_inverse=True)
    n_keys = len(key_ids)
    key_layer = np.zeros(n_keys, dtype=np.int64)
    key_layer[key_pos] = arrays.layer
    stratum = np.searchsorted(arrays.layers, key_layer)
    # Per key: [sum, count] per group and score, and the group's n: 3·2·2 + 3 columns.
    per_key = np.zeros((n_keys, 15))
    flat = np.where(has, values, 0.0).reshape(P, 6)
    np.add.at(per_key[:, 0:6], key_pos, flat)
    np.add.at(per_key[:, 6:12], key_pos, has.reshape(P, 6).astype(np.float64))
    np.add.at(per_key[:, 12:15], key_pos, counted.astype(np.float64))
    n_layers = len(arrays.layers)
    reps = bootstrap_sums(per_key[:, :12], stratum, n_layers, replicates, seed)  # [L, B, 12]

    def block(rows: np.ndarray, rep: np.ndarray) -> dict[str, Any]:
        total = rows.sum(axis=0)
        sums, counts = total[0:6].reshape(3, 2), total[6:12].reshape(3, 2)
        out = _block(sums, counts, rep[:, 0:6].reshape(-1, 3, 2), rep[:, 6:12].reshape(-1, 3, 2))
        for g, group in enumerate(GROUPS):
            out[group] = {"n": int(total[12 + g]), **out[group]}
        return out

    layers = [
        {"layer": int(layer), **block(per_key[stratum == i], reps[i])}
        for i, layer in enumerate(arrays.layers.tolist())
    ]
    overall = block(per_key, reps.sum(axis=0) if n_layers else np.zeros((replicates, 12)))
    return {"definition": DEFINITION, "layers": layers, "overall": overall}
