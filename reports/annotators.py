"""The annotator table of a study (for admins): per annotator, how much and how fast they
worked, how they agree with the others and with gold, how they did on checks, and the
quality flags that the numbers raise. Vectorised over the study's arrays
(``reports.selectors.study_arrays``): a fixed number of queries whatever the number of
annotators or keys."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from django.db.models import Count

from annotate.labels import LABELS, NOT_COVERED
from annotate.models import Annotation, KeyFlag, Study

from .csv_cells import csv_cell, csv_writer
from .selectors.study_arrays import study_arrays
from .stats.agreement import StatLayout, key_stats
from .stats.arrays import StudyArrays, num, safe_div
from .stats.gold import agreement_with_gold, check_accuracy
from .stats.labels import rating_grid

# Quality flags: thresholds (and the texts below say the same).
FAST_SHARE = 1 / 3  # median active time under this share of the study's median
LOW_GOLD_KAPPA = 0.4  # κ with gold under this
FEW_PATTERNS_SHARE = 0.5  # patterns per key under this share of the study's mean
LOW_CHECK_ACCURACY = 0.5  # check accuracy under this
# No flag on too little evidence (one gold key, a couple of keys): each flag needs at
# least this many of its evidence, a column of the row. A median or a mean of a few keys
# swings with one key, and a κ over one key's 25 prefixes is one key's verdict.
MIN_KEYS = 5  # submitted keys, for the median time and patterns per key
MIN_GOLD_KEYS = 3  # keys compared with gold
MIN_CHECKS = 3  # check annotations compared with gold
FLAG_EVIDENCE: dict[str, tuple[str, int]] = {
    "fast": ("keys_done", MIN_KEYS),
    "low_gold_agreement": ("gold_keys", MIN_GOLD_KEYS),
    "few_patterns": ("keys_done", MIN_KEYS),
    "low_check_accuracy": ("checks_n", MIN_CHECKS),
}
QUALITY_FLAGS = tuple(FLAG_EVIDENCE)

DEFINITIONS = {
    "keys_done": "Keys the annotator submitted, check keys aside.",
    "median_active_seconds": "The median, over those keys, of the time the annotator was "
    "active on the key (tab visible, input within the last minute).",
    "patterns_per_key": "Patterns per submitted key.",
    "coverage": "The share of the prefixes of their submitted keys that at least one of "
    "their patterns covers.",
    "alpha_with_others": "Krippendorff's α (nominal, four labels) of the annotator with "
    "each other annotator over the prefixes both rated, averaged over those annotators "
    "weighted by the number of prefixes shared.",
    "kappa_with_gold": "Cohen's κ of the annotator's labels with gold's on the four "
    "labels, over the prefixes of their submitted keys (check keys aside) that have "
    "submitted gold; raw agreement: the share of those prefixes with gold's label.",
    "check_accuracy": "The share of the prefixes of their submitted check annotations "
    "given the label of the key's submitted gold; checks: how many such annotations.",
    "flags": "Keys of this study the annotator flagged.",
    "fast": "Median active time under a third of the study's median active time per "
    f"submitted key, over at least {MIN_KEYS} submitted keys.",
    "low_gold_agreement": "Cohen's κ with gold under 0.4, over at least "
    f"{MIN_GOLD_KEYS} keys with gold.",
    "few_patterns": "Fewer than half the study's mean number of patterns per submitted key, "
    f"over at least {MIN_KEYS} submitted keys.",
    "low_check_accuracy": "Under half of the prefixes right on checks, over at least "
    f"{MIN_CHECKS} checks.",
}

CSV_COLUMNS = (
    "username",
    "keys_done",
    "median_active_seconds",
    "patterns_per_key",
    "coverage",
    "alpha_with_others",
    "alpha_units",
    "kappa_with_gold",
    "raw_agreement_with_gold",
    "gold_units",
    "gold_keys",
    "checks_n",
    "check_accuracy",
    "check_kappa",
    "flags",
    "quality_flags",
)


def pairwise_alpha(stats: np.ndarray, layout: StatLayout) -> tuple[np.ndarray, np.ndarray]:
    """Per coder pair of ``layout``: nominal α over the units both rated, and how many.
    From Cohen's sums: with two coders a unit is pairable when both rated it, and its
    off-diagonal coincidences are 2 where they disagree (Krippendorff 2011)."""
    alphas, units = [], []
    v = layout.n_values
    for p in range(len(layout.pairs)):
        c = stats[layout.cohen(p)]
        shared, agree = c[0], c[1]
        n_c = c[2 : 2 + v] + c[2 + v :]
        n = 2 * shared
        expected = n**2 - (n_c**2).sum()
        alphas.append(1.0 - safe_div((n - 1) * 2 * (shared - agree), expected))
        units.append(shared)
    return np.asarray(alphas, dtype=np.float64), np.asarray(units, dtype=np.float64)


def _medians(codes: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """[n] the median of ``values`` per code 0..n-1; nan where a code has none."""
    order = np.lexsort((values, codes))
    codes, values = codes[order], values[order]
    counts = np.bincount(codes, minlength=n)
    starts = np.cumsum(counts) - counts
    out = np.full(n, np.nan)
    has = counts > 0
    lo = starts[has] + (counts[has] - 1) // 2
    hi = starts[has] + counts[has] // 2
    out[has] = (values[lo] + values[hi]) / 2
    return out


def annotator_table(*, study: Study) -> dict[str, Any]:
    """The table: one row per annotator of the study (anyone with an annotation or a
    flag in it), by username. Every number counts submitted annotations only."""
    arrays = study_arrays(study=study)
    grid = rating_grid(arrays)
    times = list(
        Annotation.objects.filter(
            key__study=study, is_check=False, status=Annotation.Status.SUBMITTED
        ).values_list("annotator__username", "active_seconds")
    )
    flags = dict(
        KeyFlag.objects.filter(key__study=study)
        .order_by()
        .values("annotator__username")
        .annotate(n=Count("id"))
        .values_list("annotator__username", "n")
    )
    checks = check_accuracy(arrays)
    names = sorted(
        set(arrays.coders) | {r["annotator"] for r in checks} | set(flags) | {u for u, _ in times}
    )
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    coder_row = np.asarray([index[c] for c in arrays.coders], dtype=np.int64)

    per = _per_coder(arrays, grid)
    rows_of = {name: np.full(n, np.nan) for name in per}
    for name, values in per.items():
        rows_of[name][coder_row] = values
    keys_done = np.zeros(n, dtype=np.int64)
    keys_done[coder_row] = per["keys_done"].astype(np.int64)

    secs = np.asarray([t for _, t in times], dtype=np.float64)
    who = np.asarray([index[u] for u, _ in times], dtype=np.int64)
    medians = _medians(who, secs, n)
    study_median = float(np.median(secs)) if secs.size else None
    n_ann = arrays.ann_key.shape[0]
    study_ppk = arrays.pat_ann.shape[0] / n_ann if n_ann else None

    gold = {r["annotator"]: r for r in agreement_with_gold(arrays, grid)}
    check_by = {r["annotator"]: r for r in checks}
    rows = []
    for name in names:
        i = index[name]
        g = gold.get(name, {})
        c = check_by.get(name, {})
        row = {
            "username": name,
            "keys_done": int(keys_done[i]),
            "median_active_seconds": num(medians[i]),
            "patterns_per_key": num(rows_of["patterns_per_key"][i]),
            "coverage": num(rows_of["coverage"][i]),
            "alpha_with_others": num(rows_of["alpha_with_others"][i]),
            "alpha_units": int(np.nan_to_num(rows_of["alpha_units"][i])),
            "kappa_with_gold": g.get("kappa"),
            "raw_agreement_with_gold": g.get("raw_agreement"),
            "gold_units": int(g.get("n_units", 0)),
            "gold_keys": int(g.get("n_keys", 0)),
            "checks_n": int(c.get("n_checks", 0)),
            "check_accuracy": c.get("raw_agreement"),
            "check_kappa": c.get("kappa"),
            "flags": int(flags.get(name, 0)),
        }
        row["quality_flags"] = _quality_flags(row, study_median, study_ppk)
        rows.append(row)
    return {
        "study": {"id": study.pk, "name": study.name},
        "study_median_active_seconds": study_median,
        "study_patterns_per_key": num(study_ppk) if study_ppk is not None else None,
        "labels": list(LABELS),
        "definitions": DEFINITIONS,
        "annotators": rows,
    }


def _per_coder(arrays: StudyArrays, grid: np.ndarray) -> dict[str, np.ndarray]:
    """[M] per coder of the arrays: keys, patterns per key, coverage, α with the others."""
    n_coders = len(arrays.coders)
    keys = np.bincount(arrays.ann_coder, minlength=n_coders).astype(np.float64)
    patterns = np.bincount(arrays.ann_coder[arrays.pat_ann], minlength=n_coders)
    rated = (grid >= 0).sum(axis=(1, 2)).astype(np.float64)
    covered = ((grid >= 0) & (grid != NOT_COVERED)).sum(axis=(1, 2))
    stats, layout = key_stats(grid, len(LABELS))
    alphas, units = pairwise_alpha(stats.sum(axis=0), layout)
    # Per coder, over the pairs it is in: α weighted by the units shared (pairs whose α is
    # undefined, every shared label the same, left out), and the units shared in all.
    pairs = np.asarray(layout.pairs, dtype=np.int64).reshape(-1, 2)
    defined = ~np.isnan(alphas) & (units > 0)
    weighted = np.zeros(n_coders)
    weights = np.zeros(n_coders)
    shared = np.zeros(n_coders)
    for side in (0, 1):
        np.add.at(weighted, pairs[defined, side], (alphas * units)[defined])
        np.add.at(weights, pairs[defined, side], units[defined])
        np.add.at(shared, pairs[:, side], units)
    return {
        "keys_done": keys,
        "patterns_per_key": safe_div(patterns.astype(np.float64), keys),
        "coverage": safe_div(covered.astype(np.float64), rated),
        "alpha_with_others": safe_div(weighted, weights),
        "alpha_units": shared,
    }


def _quality_flags(
    row: dict[str, Any], study_median: float | None, study_ppk: float | None
) -> list[str]:
    """The flags the row's numbers raise, in ``QUALITY_FLAGS`` order, each only where the
    row has at least its minimum of evidence (``FLAG_EVIDENCE``)."""
    median, kappa = row["median_active_seconds"], row["kappa_with_gold"]
    ppk, accuracy = row["patterns_per_key"], row["check_accuracy"]
    study_median, study_ppk = study_median or 0.0, study_ppk or 0.0
    raised = {
        "fast": median is not None and median < FAST_SHARE * study_median,
        "low_gold_agreement": kappa is not None and kappa < LOW_GOLD_KAPPA,
        "few_patterns": ppk is not None and ppk < FEW_PATTERNS_SHARE * study_ppk,
        "low_check_accuracy": accuracy is not None and accuracy < LOW_CHECK_ACCURACY,
    }
    return [
        flag
        for flag, (evidence, minimum) in FLAG_EVIDENCE.items()
        if raised[flag] and row[evidence] >= minimum
    ]


def annotator_csv(table: dict[str, Any]) -> str:
    """The table as CSV (``CSV_COLUMNS``): quality flags joined by ``|``; text cells
    through ``csv_cell`` (a username may start like a formula)."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(CSV_COLUMNS)
    for row in table["annotators"]:
        cells = {**row, "quality_flags": "|".join(row["quality_flags"])}
        writer.writerow([csv_cell(cells[c]) for c in CSV_COLUMNS])
    return out.getvalue()
