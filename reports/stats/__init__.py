"""The numbers of a study's report (docs/science.md), computed over arrays.

Pure numpy: no Django, no database. ``reports.selectors.study_arrays`` loads a study into
a ``StudyArrays``; every function here is vectorised over keys, prefixes, annotations and
patterns (no Python loop per key or prefix; loops run over layers, coders, coder pairs,
labels or bootstrap replicates only). Per-key sums are counted in integers, so that a
sum of them over any keys in any order (a layer, a bootstrap replicate) is exact.

One module per section: ``labels`` (each prefix's label, the rating grid), ``figure2``
(Figure 2 and coverage), ``agreement`` (α, κ, raw agreement), ``bootstrap`` (the
intervals over keys), ``patterns`` (best-match Jaccard), ``value_agreement`` (§4) and
``perturbation`` (§3.2), over the ``StudyArrays`` of ``arrays``; ``report`` runs them
all. Shapes: K keys, R the largest prefix rank, M coders (annotators), A annotations,
P patterns, W = ⌈R/64⌉ words of a rank bit set, L layers.

Definitions that are choices (docs/science.md gives the same rules; the report's
``definitions`` repeats them):

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
  percentile of the replicates where the statistic is defined. An interval that rests
  on fewer than ``bootstrap.MIN_BOOTSTRAP_KEYS`` (10) keys is marked ``few_keys``.
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

from typing import Any

from . import agreement, figure2, gold, labels, patterns, perturbation, value_agreement
from .arrays import GOLD_CODER, StudyArrays, with_gold_coder
from .bootstrap import BOOTSTRAP_REPLICATES, BOOTSTRAP_SEED


def report(
    arrays: StudyArrays,
    *,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = BOOTSTRAP_SEED,
    is_causal: bool = True,
    gold_as_coder: bool = False,
) -> dict[str, Any]:
    """Every section of the report (docs/science.md) as JSON-ready values. Gold is a source of
    its own (``figure2.gold``, ``coverage.gold``, ``value_agreement_gold``) and the
    reference of ``agreement_with_gold`` and ``check_accuracy``; with ``gold_as_coder``
    it is also one more coder (``GOLD_CODER``) in the agreement."""
    grid = labels.rating_grid(arrays)
    on_gold = gold.gold_arrays(arrays)
    grid_gold = labels.rating_grid(on_gold)
    fig = figure2.figure2(arrays, grid)
    fig["gold"] = figure2.figure2(on_gold, grid_gold)["pooled"]
    cov = figure2.coverage(arrays, grid)
    cov["gold"] = figure2.coverage(on_gold, grid_gold)
    coders = with_gold_coder(arrays) if gold_as_coder else arrays
    agree = agreement.agreement(
        coders,
        labels.rating_grid(coders) if gold_as_coder else grid,
        replicates=replicates,
        seed=seed,
    )
    agree["gold_as_coder"] = gold_as_coder
    agree["gold_coder"] = GOLD_CODER
    curated = (grid_gold[0] >= 0).any(axis=1)
    return {
        "figure2": fig,
        "coverage": cov,
        "agreement": agree,
        "agreement_with_gold": gold.agreement_with_gold(arrays, grid),
        "check_accuracy": gold.check_accuracy(arrays),
        "pattern_jaccard": patterns.pattern_jaccard(arrays),
        "value_agreement": value_agreement.value_agreement(arrays, is_causal=is_causal),
        "value_agreement_gold": value_agreement.value_agreement(
            arrays, is_causal=is_causal, keys=curated
        ),
        "perturbation": perturbation.perturbation(arrays),
    }
