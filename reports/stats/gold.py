"""Gold (the curated annotations) as a source: its labels, each annotator's agreement
with it, and the accuracy of the annotators' check annotations against it.

Gold's labels come from its patterns exactly as an annotator's do (``labels``); it is
one coder, rating the units of the keys whose gold annotation is submitted."""

from __future__ import annotations

from typing import Any

import numpy as np

from annotate.labels import LABELS

from .arrays import StudyArrays, checks_of, gold_of, num, with_annotations
from .labels import rating_grid


def gold_arrays(arrays: StudyArrays) -> StudyArrays:
    """The study with the submitted gold in place of the annotators (one coder)."""
    return with_annotations(arrays, gold_of(arrays))


def gold_grid(arrays: StudyArrays) -> np.ndarray:
    """[K, R] int8: gold's label of each unit; -1 where the key has no submitted gold."""
    return rating_grid(gold_arrays(arrays))[0]


def agreement_with(a: np.ndarray, b: np.ndarray, n_values: int = len(LABELS)) -> dict[str, Any]:
    """Cohen's κ and raw agreement of two codings of the same units (values 0..V-1; -1
    missing: a unit counts where both rated it)."""
    a, b = np.asarray(a).ravel(), np.asarray(b).ravel()
    both = (a >= 0) & (b >= 0)
    n = int(both.sum())
    if not n:
        return {"kappa": None, "raw_agreement": None, "n_units": 0}
    x, y = a[both].astype(np.int64), b[both].astype(np.int64)
    p_o = float((x == y).mean())
    p_e = float(
        (np.bincount(x, minlength=n_values) * np.bincount(y, minlength=n_values)).sum() / n**2
    )
    kappa = (p_o - p_e) / (1.0 - p_e) if p_e < 1.0 else float("nan")
    return {"kappa": num(kappa), "raw_agreement": p_o, "n_units": n}


def agreement_with_gold(arrays: StudyArrays, grid: np.ndarray) -> list[dict[str, Any]]:
    """Per annotator of the report: κ and raw agreement with gold over the units both
    rated (the annotator's report annotations, never a check, on keys with gold)."""
    gold = gold_grid(arrays)
    has_gold = (gold >= 0).any(axis=1)
    out = []
    for m, coder in enumerate(arrays.coders):
        found = agreement_with(grid[m], gold)
        n_keys = int(((grid[m] >= 0).any(axis=1) & has_gold).sum())
        out.append({"annotator": coder, **found, "n_keys": n_keys})
    return out


def check_accuracy(arrays: StudyArrays) -> list[dict[str, Any]]:
    """Per annotator with a submitted check annotation on a key with submitted gold: the
    raw agreement and κ of the check annotations' labels with gold's, over their
    prefixes, and how many checks."""
    checks = checks_of(arrays)
    gold = gold_grid(arrays)
    grid = rating_grid(with_annotations(arrays, checks))
    has_gold: np.ndarray = np.asarray((gold >= 0).any(axis=1))
    counted = has_gold[checks.ann_key]
    n_checks = np.bincount(checks.ann_coder[counted], minlength=len(checks.coders))
    return [
        {"annotator": coder, "n_checks": int(n_checks[m]), **agreement_with(grid[m], gold)}
        for m, coder in enumerate(checks.coders)
        if n_checks[m]
    ]
