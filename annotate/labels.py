"""A key's annotation as labels: the one home of the label rule (docs/science.md, "Labels").

Every prefix of a key gets one label per annotation, derived from the kinds of the
patterns that cover it and never stored. The workspace, the review queue, the reports,
the exports and the import all derive it here, in one of two forms:

- scalar, over Python values: ``label_for_kinds``, ``prefix_labels``;
- arrays, with numpy: a pattern's kind is a bit (``KIND_BITS``), a prefix's label is
  ``LABEL_OF_BITS`` of the OR of the bits of the patterns that cover it, and a label's
  code is its position in ``LABELS``.

The scalar form is the array form read once, so the two cannot disagree. Per-key
agreement (the review queue's disagreement and Krippendorff's α) is computed over a grid
of those codes. Nothing of Django here: numpy only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np

# The kinds of a pattern (``annotate.models.Pattern.Kind`` takes its values from here).
KIND_SHALLOW = "shallow"
KIND_SEMANTIC = "semantic"
KIND_SHALLOW_SEMANTIC = "shallow+semantic"
KINDS = (KIND_SHALLOW, KIND_SEMANTIC, KIND_SHALLOW_SEMANTIC)

# The four labels, in the order of docs/science.md's table; a label's code is its position.
LABEL_SHALLOW = "shallow"
LABEL_SEMANTIC = "semantic"
LABEL_SHALLOW_SEMANTIC = "shallow+semantic"
LABEL_NOT_COVERED = "not-covered"
LABELS = (LABEL_SHALLOW, LABEL_SEMANTIC, LABEL_SHALLOW_SEMANTIC, LABEL_NOT_COVERED)
# The same labels as identifiers (the report's JSON fields).
LABEL_KEYS = ("shallow", "semantic", "shallow_semantic", "not_covered")
SHALLOW, SEMANTIC, SHALLOW_SEMANTIC, NOT_COVERED = range(len(LABELS))
N_LABELS = len(LABELS)

# A pattern's kind as a bit. A shallow+semantic pattern has a bit of its own, so that the
# OR of the bits keeps which kinds were there; ``LABEL_OF_BITS`` reads any OR that holds
# it, or both the shallow and the semantic bit, as shallow+semantic.
KIND_BITS = {KIND_SHALLOW: 1, KIND_SEMANTIC: 2, KIND_SHALLOW_SEMANTIC: 4}
LABEL_OF_BITS = np.array(
    [NOT_COVERED, SHALLOW, SEMANTIC, SHALLOW_SEMANTIC] + [SHALLOW_SEMANTIC] * 4, dtype=np.int8
)


def kind_bits(kinds: Sequence[str]) -> np.ndarray:
    """[P] uint8: the bit of each kind of ``kinds``."""
    return np.array([KIND_BITS[kind] for kind in kinds], dtype=np.uint8)


def kind_bit_sql(column: str) -> str:
    """A SQL expression giving ``column``'s kind as its bit (0 for no kind)."""
    whens = " ".join(f"WHEN '{kind}' THEN {bit}" for kind, bit in KIND_BITS.items())
    return f"CASE {column} {whens} ELSE 0 END"


# --- scalar form ------------------------------------------------------------------------


def label_for_kinds(kinds: Iterable[str]) -> str:
    """A prefix's label from the kinds of the patterns that cover it.

    Covered by a shallow+semantic pattern, or by both a shallow and a semantic pattern:
    shallow+semantic. Covered by none: not-covered.
    """
    bits = 0
    for kind in set(kinds):
        bits |= KIND_BITS[kind]
    return LABELS[LABEL_OF_BITS[bits]]


class CoveringPattern(Protocol):
    """What the label of a prefix needs of a pattern: its kind and the ranks it covers."""

    @property
    def kind(self) -> str: ...

    @property
    def prefix_ranks(self) -> Sequence[int]: ...


def prefix_labels(*, ranks: Sequence[int], patterns: Iterable[CoveringPattern]) -> list[str]:
    """The label of each rank in ``ranks``, from the patterns' kinds and covered ranks."""
    bits = dict.fromkeys(ranks, 0)
    for pattern in patterns:
        bit = KIND_BITS[pattern.kind]
        for rank in pattern.prefix_ranks:
            if rank in bits:
                bits[rank] |= bit
    return [LABELS[LABEL_OF_BITS[bits[rank]]] for rank in ranks]


# --- array form -------------------------------------------------------------------------


def label_grid(
    *, n_annotations: int, width: int, rows: np.ndarray, ranks: np.ndarray, kinds: Sequence[str]
) -> np.ndarray:
    """[annotations, ranks] int8 label codes: ``rows[i]`` (an annotation's row) covers
    rank ``ranks[i]`` (from 1) with a pattern of kind ``kinds[i]``; a cell nothing covers
    is not-covered."""
    bits = np.zeros((n_annotations, max(width, 1)), dtype=np.uint8)
    if len(kinds):
        np.bitwise_or.at(bits, (rows, ranks - 1), kind_bits(kinds))
    return LABEL_OF_BITS[bits]


def agreement_from_grid(
    grid: np.ndarray, group_starts: np.ndarray, n_prefixes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per key, the share of its prefixes whose labels differ and nominal Krippendorff's α
    (nan where undefined: one coder, or no variation), from ``grid`` of label codes whose
    rows are grouped by key (group ``g`` starts at row ``group_starts[g]``; every group
    has at least one row) and whose key ``g`` has ranks 1..``n_prefixes[g]``.

    Units are the key's prefixes, coders its annotators, values the label codes; every
    annotator labels every prefix, so each unit has m = (annotators of the key) values.
    """
    n_groups = len(group_starts)
    width = grid.shape[1]
    if n_groups == 0:
        return np.zeros(0), np.zeros(0)
    sizes = np.diff(np.append(group_starts, grid.shape[0]))
    valid = np.arange(width)[None, :] < n_prefixes[:, None]  # [keys, ranks]
    low = np.minimum.reduceat(grid, group_starts, axis=0)
    high = np.maximum.reduceat(grid, group_starts, axis=0)
    differs = (low != high) & valid
    n_units = np.maximum(n_prefixes, 1)
    disagreement = np.where(n_prefixes > 0, differs.sum(axis=1) / n_units, 0.0)

    one_hot = (grid[:, :, None] == np.arange(N_LABELS)[None, None, :]).astype(np.int32)
    counts = np.add.reduceat(one_hot, group_starts, axis=0) * valid[:, :, None]  # [K, R, V]
    m = sizes.astype(np.float64)[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        disagreeing = (counts * (m - counts) / (m - 1)).sum(axis=(1, 2))
        totals = counts.sum(axis=1).astype(np.float64)  # [K, V]: n_c
        n = totals.sum(axis=1)
        expected = (totals * (n[:, None] - totals)).sum(axis=1)
        alpha = 1.0 - (n - 1) * disagreeing / expected
    alpha = np.where((sizes >= 2) & (expected > 0), alpha, np.nan)
    return disagreement, alpha
