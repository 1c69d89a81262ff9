"""The held-out scores of a pattern (docs/evidence.md, "Scores"), over arrays.

Pure numpy and Python: no Django, no torch (the embeddings come in as unit vectors). A
*target* is one thing to score (an annotator's pattern, a gold pattern or a suggestion)
on one *evaluation key*: its own key, or its shuffled partner for the baseline. The
positives are the evaluation key's ``heldout`` examples, the negatives its
``heldout_random`` ones.

- ``detection``: the balanced accuracy of the target's rule, ½·(TPR + TNR), where TPR is
  the share of positives the rule fires on and TNR the share of negatives it does not
  fire on. Null without a rule, or when either set is empty.
- ``embedding``: the AUROC of the cosine similarity between the target's vector and each
  example's vector: over every (positive, negative) pair, 1 where the positive is more
  similar, ½ where both are equally similar, 0 otherwise, averaged. Null when either set
  is empty or the target has no vector.
- The shuffled partner of a key: per layer, the study's keys in index order, cyclically
  shifted by an offset in 1 … n−1 drawn from ``SeedSequence([seed, layer])``. Each key's
  partner is another key of its layer, and every key is the partner of exactly one key;
  none in a layer of one key.

Everything is vectorised over targets and examples except the rule matching, which is a
Python call per (target with a rule, example): a few dozen per target.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .rules import rule_matches

SCORE_FIELDS = ("detection", "embedding", "shuffled_detection", "shuffled_embedding")
# Targets per chunk of the pairwise comparison: chunk·n² booleans at a time.
_PAIR_BUDGET = 4_000_000


@dataclass(frozen=True)
class HeldOut:
    """The held-out examples of the evaluation keys, ``K`` keys and ``N`` examples."""

    key: np.ndarray  # [N] int64: the position (0 … K−1) of each example's key
    positive: np.ndarray  # [N] bool: heldout (True) or heldout_random (False)
    vectors: np.ndarray  # [N, D] float32, unit rows: each example's text embedded
    texts: Sequence[str]  # [N] the prefix texts (for the rules)
    triggers: Sequence[str]  # [N] the trigger tokens (for the rules)
    n_keys: int

    def grid(self) -> np.ndarray:
        """[K, n_max] int64: per key its examples' positions, padded with −1."""
        counts = np.bincount(self.key, minlength=self.n_keys)
        n_max = int(counts.max()) if counts.size else 0
        order = np.argsort(self.key, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        slot = np.arange(len(order)) - starts[self.key[order]]
        grid = np.full((self.n_keys, n_max), -1, dtype=np.int64)
        grid[self.key[order], slot] = order
        return grid


def shuffled_partners(layers: np.ndarray, indexes: np.ndarray, seed: int) -> np.ndarray:
    """[K] int64: per key (``layers``/``indexes`` [K]) the position of its shuffled
    partner, −1 where its layer has no other key (the module's docstring)."""
    partner = np.full(len(layers), -1, dtype=np.int64)
    for layer in np.unique(layers).tolist():  # a loop over layers, not keys
        members = np.flatnonzero(layers == layer)
        n = len(members)
        if n < 2:
            continue
        members = members[np.argsort(indexes[members], kind="stable")]
        rng = np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, int(layer)]))
        offset = 1 + int(rng.integers(n - 1))
        partner[members] = members[(np.arange(n) + offset) % n]
    return partner


def detection_scores(
    rules: Sequence[Mapping[str, str] | None], eval_key: np.ndarray, held: HeldOut
) -> np.ndarray:
    """[T] float64: the balanced accuracy of each target's rule on its evaluation key
    (``eval_key`` [T], −1 for none); NaN where it has none."""
    out = np.full(len(rules), np.nan)
    grid = held.grid()
    with_rule = [t for t, rule in enumerate(rules) if rule is not None and eval_key[t] >= 0]
    if not with_rule or grid.shape[1] == 0:
        return out
    targets = np.asarray(with_rule, dtype=np.int64)
    cells = grid[eval_key[targets]]  # [T', n_max]
    t_idx, slot = np.nonzero(cells >= 0)
    examples = cells[t_idx, slot]
    hits = np.fromiter(
        (
            rule_matches(rules[targets[t]], held.texts[e], held.triggers[e])
            for t, e in zip(t_idx.tolist(), examples.tolist(), strict=True)
        ),
        dtype=bool,
        count=len(examples),
    )
    pos = held.positive[examples]
    n = len(targets)
    n_pos = np.bincount(t_idx, weights=pos, minlength=n)
    n_neg = np.bincount(t_idx, weights=~pos, minlength=n)
    true_pos = np.bincount(t_idx, weights=hits & pos, minlength=n)
    false_pos = np.bincount(t_idx, weights=hits & ~pos, minlength=n)
    ok = (n_pos > 0) & (n_neg > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = 0.5 * (true_pos / n_pos + (n_neg - false_pos) / n_neg)
    out[targets[ok]] = score[ok]
    return out


def embedding_scores(queries: np.ndarray, eval_key: np.ndarray, held: HeldOut) -> np.ndarray:
    """[T] float64: the AUROC (ties ½) of cosine(query, example) for each target
    (``queries`` [T, D] unit rows, a zero row for none) on its evaluation key; NaN where
    undefined."""
    n_targets = len(eval_key)
    out = np.full(n_targets, np.nan)
    grid = held.grid()
    n_max = grid.shape[1]
    has_query = np.abs(queries).sum(axis=1) > 0 if n_targets else np.zeros(0, dtype=bool)
    todo = np.flatnonzero((eval_key >= 0) & has_query)
    if not len(todo) or n_max == 0:
        return out
    dim = held.vectors.shape[1] if held.vectors.ndim == 2 else 1
    chunk = max(1, min(_PAIR_BUDGET // (n_max * n_max), _PAIR_BUDGET // (n_max * dim)))
    for start in range(0, len(todo), chunk):
        t = todo[start : start + chunk]
        cells = grid[eval_key[t]]  # [c, n_max]
        valid = cells >= 0
        rows = np.where(valid, cells, 0)
        # A product and a sum over the contiguous last axis, the same reduction for every
        # cell: two examples of the same text get the very same similarity (an exact tie),
        # which a matrix product's blocked kernels do not promise.
        sims = (queries[t][:, None, :] * held.vectors[rows]).sum(axis=2)  # [c, n_max]
        pos = valid & held.positive[rows]
        neg = valid & ~held.positive[rows]
        pairs = pos[:, :, None] & neg[:, None, :]  # [c, n_max (pos), n_max (neg)]
        diff = sims[:, :, None] - sims[:, None, :]
        wins = ((diff > 0) & pairs).sum(axis=(1, 2)) + 0.5 * ((diff == 0) & pairs).sum(axis=(1, 2))
        n_pairs = pairs.sum(axis=(1, 2))
        ok = n_pairs > 0
        out[t[ok]] = wins[ok] / n_pairs[ok]
    return out


def score_dicts(
    rules: Sequence[Mapping[str, str] | None],
    queries: np.ndarray,
    own_key: np.ndarray,
    partner: np.ndarray,
    held: HeldOut,
) -> list[dict[str, float | None]]:
    """Per target (its ``rules``, ``queries`` [T, D] and key position ``own_key`` [T];
    ``partner`` [K] from ``shuffled_partners``): the four scores of ``SCORE_FIELDS``,
    null where undefined."""
    shuffled_key = np.where(own_key >= 0, partner[np.maximum(own_key, 0)], -1)
    both_keys = np.concatenate([own_key, shuffled_key])
    both_rules = [*rules, *rules]
    both_queries = np.concatenate([queries, queries]) if len(queries) else queries
    det = detection_scores(both_rules, both_keys, held)
    emb = embedding_scores(both_queries, both_keys, held)
    n = len(rules)
    columns = (det[:n], emb[:n], det[n:], emb[n:])
    return [
        {field: _num(column[t]) for field, column in zip(SCORE_FIELDS, columns, strict=True)}
        for t in range(n)
    ]


def _num(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def group_centroids(vectors: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """[n_groups, D]: per group the unit-length mean of its rows of ``vectors`` (``group``
    [N] its position per row), as ``embedding.centroid`` for each; a zero row for an
    empty group."""
    sums = np.zeros((n_groups, vectors.shape[1]), dtype=np.float64)
    np.add.at(sums, group, vectors)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return np.divide(sums, norms, out=np.zeros_like(sums), where=norms > 0).astype(np.float32)
