"""The machine's suggested patterns for a key (docs/evidence.md, "Suggestions"): pure
functions over its top-k prefixes, no Django.

- **Rules** (kind shallow): a trigger token, a final n-gram (1–3 tokens) or an ending of
  the trigger word shared by at least ``MIN_PREFIXES`` prefixes. Candidates come from the
  prefixes themselves; each candidate's group is exactly the prefixes that
  ``rules.rule_matches`` fires on, so a suggestion's rule and its prefixes always agree.
  Of candidates that cover the same prefixes only one is offered (a token rule before an
  n-gram, an n-gram before a suffix; within a type the longer value, which says more),
  and of the rest the ``MAX_RULES`` that cover most.
- **Clusters** (kind semantic): average-linkage agglomerative clustering of the prefixes'
  MiniLM embeddings under cosine similarity, stopped when no two clusters are on average
  at least ``CLUSTER_THRESHOLD`` alike; groups of at least ``MIN_PREFIXES`` are offered.
  It runs on every key of a chunk at once (``cluster_labels``): a Python loop over merge
  steps, never over keys.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..labels import KIND_SEMANTIC, KIND_SHALLOW
from .rules import RuleError, rule_matches, validate_rule

# The 3-prefix rule (Geva et al. 2021, §3.1): a pattern covers at least 3 prefixes.
MIN_PREFIXES = 3
MAX_RULES = 3  # per key
MAX_CLUSTERS = 3  # per key
MAX_NGRAM_TOKENS = 3
SUFFIX_MIN_CHARS = 2  # "-ed", "-'s" and longer; a one-letter ending says next to nothing
# Mean pairwise cosine under all-MiniLM-L6-v2 at or above which two groups of prefixes
# merge. Calibrated on the 16 mined keys of fixtures/example-study.jsonl against the same
# prefixes shuffled across keys (which share nothing but the corpus's topics): the mean
# number of a key's prefixes that fall in some group of >= 3, real vs shuffled, is
# 14.0 vs 11.1 at 0.17, 9.2 vs 5.9 at 0.25, 6.0 vs 2.9 at 0.30, 4.2 vs 1.6 at 0.35,
# 2.6 vs 0.9 at 0.40 and 1.0 vs 0.3 at 0.50. From 0.35 on, about two thirds of what is
# grouped is beyond what shuffled prefixes give; 0.35 keeps the most of it. On
# hand-picked prefixes of three topics (tests/unit/annotate/test_suggest_rules.py) those
# of one topic lie 0.22-0.77 apart, of different topics at most 0.24.
CLUSTER_THRESHOLD = 0.35

RULE_ORDER = {"token": 0, "ngram": 1, "suffix": 2}


@dataclass(frozen=True)
class PrefixText:
    """What a suggestion reads of one top-k prefix."""

    rank: int
    text: str
    trigger_token: str
    # The prefix's token strings, decoded one by one (empty where unknown: an import
    # without them); the n-grams then come from whitespace-separated words.
    tokens: Sequence[str] = field(default=())


@dataclass(frozen=True)
class Proposal:
    """A suggested pattern: ``ranks`` are the prefixes it covers, in rank order."""

    method: str  # "rule" | "cluster"
    kind: str  # "shallow" | "semantic"
    description: str
    rule: dict[str, str] | None
    ranks: tuple[int, ...]


def describe_rule(rule: dict[str, str]) -> str:
    """A short description of a rule, as a suggestion shows it."""
    value = rule["value"]
    if rule["type"] == "token":
        return f'trigger token "{value}"'
    if rule["type"] == "ngram":
        return f'prefix ends with "{value}"'
    return f'last word ends in "-{value}"'


def _candidates(prefix: PrefixText) -> set[tuple[str, str]]:
    """The (type, value) rules this prefix suggests, all-lowercase (so case-insensitive)."""
    found: set[tuple[str, str]] = set()
    token = prefix.trigger_token.strip()
    if token:
        found.add(("token", token.lower()))
    if prefix.tokens:
        pieces = list(prefix.tokens)
        ngrams = ["".join(pieces[-n:]) for n in range(1, MAX_NGRAM_TOKENS + 1) if n <= len(pieces)]
    else:
        words = prefix.text.split()
        ngrams = [" ".join(words[-n:]) for n in range(1, MAX_NGRAM_TOKENS + 1) if n <= len(words)]
    for ngram in ngrams:
        ngram = ngram.strip()
        if ngram:
            found.add(("ngram", ngram.lower()))
    words = prefix.text.split()
    if words:
        word = words[-1].lower()
        for n in range(SUFFIX_MIN_CHARS, len(word)):  # proper endings: the word is an n-gram
            found.add(("suffix", word[-n:]))
    return found


def _valid(kind: str, value: str) -> dict[str, str] | None:
    try:
        return validate_rule({"type": kind, "value": value})
    except RuleError:
        return None


def rule_proposals(prefixes: Sequence[PrefixText], *, limit: int = MAX_RULES) -> list[Proposal]:
    """The key's rule suggestions: each covers at least ``MIN_PREFIXES`` of ``prefixes``,
    no two cover the same ones, most covering first."""
    # A candidate that fewer than MIN_PREFIXES prefixes suggest is dropped before it is
    # matched against every prefix: matching is the expensive part.
    counts = Counter(candidate for prefix in prefixes for candidate in _candidates(prefix))
    best: dict[tuple[int, ...], tuple[tuple[int, int, str], dict[str, str]]] = {}
    for (kind, value), count in counts.items():
        if count < MIN_PREFIXES:
            continue
        rule = _valid(kind, value)
        if rule is None:
            continue
        ranks = tuple(
            sorted(p.rank for p in prefixes if rule_matches(rule, p.text, p.trigger_token))
        )
        if len(ranks) < MIN_PREFIXES:
            continue
        preference = (RULE_ORDER[kind], -len(value), value)
        held = best.get(ranks)
        if held is None or preference < held[0]:
            best[ranks] = (preference, rule)
    ordered = sorted(best.items(), key=lambda item: (-len(item[0]), item[1][0], item[0]))
    return [
        Proposal(
            method="rule",
            kind=KIND_SHALLOW,
            description=describe_rule(rule),
            rule=rule,
            ranks=ranks,
        )
        for ranks, (_, rule) in ordered[:limit]
    ]


def cluster_labels(
    vectors: np.ndarray, valid: np.ndarray, *, threshold: float = CLUSTER_THRESHOLD
) -> np.ndarray:
    """Average-linkage clusters of each key's prefixes, every key at once.

    ``vectors``: [keys, n, d] unit embeddings (a key with fewer than n prefixes padded);
    ``valid``: [keys, n] bool, False on padding. Returns [keys, n] int: each prefix's
    cluster, named by its lowest member's position (-1 on padding). Deterministic: of
    equally alike pairs the first in row-major order merges first.
    """
    n_keys, n, _ = vectors.shape
    labels = np.where(valid, np.arange(n)[None, :], -1)  # [keys, n]
    if n_keys == 0 or n < 2:
        return labels
    sims = np.einsum("knd,kmd->knm", vectors.astype(np.float64), vectors.astype(np.float64))
    pair_ok = valid[:, :, None] & valid[:, None, :]  # [keys, n, n]
    pair_ok &= ~np.eye(n, dtype=bool)[None]
    sims = np.where(pair_ok, sims, -np.inf)  # [keys, n, n]: cluster-to-cluster similarity
    sizes = valid.astype(np.float64)  # [keys, n]: members of the cluster at each position
    rows = np.arange(n_keys)
    for _ in range(n - 1):
        flat = sims.reshape(n_keys, n * n).argmax(axis=1)  # [keys]
        first, second = np.divmod(flat, n)
        best = sims[rows, first, second]
        merging = best >= threshold
        if not merging.any():
            break
        k = rows[merging]
        a = np.minimum(first, second)[merging]  # the cluster kept: the lower position
        b = np.maximum(first, second)[merging]
        size_a, size_b = sizes[k, a][:, None], sizes[k, b][:, None]
        # Lance–Williams for average linkage: the merged cluster's mean similarity to
        # each other cluster is the size-weighted mean of its two parts'.
        merged = (size_a * sims[k, a, :] + size_b * sims[k, b, :]) / (size_a + size_b)
        sims[k, a, :] = merged
        sims[k, :, a] = merged
        sims[k, a, a] = -np.inf
        sims[k, b, :] = -np.inf
        sims[k, :, b] = -np.inf
        sizes[k, a] += sizes[k, b]
        sizes[k, b] = 0.0
        moved = labels[k] == b[:, None]  # [merging keys, n]
        labels[k] = np.where(moved, a[:, None], labels[k])
    return labels


def cluster_proposals(
    ranks: Sequence[int], labels: np.ndarray, *, limit: int = MAX_CLUSTERS
) -> list[Proposal]:
    """One key's cluster suggestions from its row of ``cluster_labels`` (``ranks``: the
    rank at each position): groups of at least ``MIN_PREFIXES``, largest first."""
    groups: dict[int, list[int]] = {}
    for position, rank in enumerate(ranks):
        label = int(labels[position])
        if label >= 0:
            groups.setdefault(label, []).append(rank)
    found = sorted(
        (tuple(sorted(members)) for members in groups.values() if len(members) >= MIN_PREFIXES),
        key=lambda members: (-len(members), members),
    )
    return [
        Proposal(method="cluster", kind=KIND_SEMANTIC, description="", rule=None, ranks=members)
        for members in found[:limit]
    ]
