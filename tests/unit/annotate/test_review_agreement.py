"""The review queue's vectorised labels, disagreement and α (annotate.labels' array form)
agree with its scalar label derivation and with reports' Krippendorff α."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from annotate.labels import KIND_BITS, LABELS, agreement_from_grid, label_for_kinds, label_grid
from reports.stats.agreement import krippendorff_alpha_nominal


@pytest.mark.parametrize(
    "kinds",
    [
        kinds
        for n in range(4)
        for kinds in itertools.combinations_with_replacement(sorted(KIND_BITS), n)
    ],
)
def test_the_label_bits_are_label_for_kinds(kinds):
    grid = label_grid(
        n_annotations=1,
        width=1,
        rows=np.zeros(len(kinds), dtype=np.int64),
        ranks=np.ones(len(kinds), dtype=np.int64),
        kinds=list(kinds),
    )
    assert LABELS[grid[0, 0]] == label_for_kinds(kinds)


def test_alpha_and_disagreement_match_the_reports_per_key():
    rng = np.random.default_rng(7)
    groups = []
    for n_coders, n_units in [(2, 10), (3, 25), (4, 7), (2, 5), (5, 25)]:
        data = rng.integers(0, 4, size=(n_coders, n_units))
        data[:, : n_units // 2] = data[0, : n_units // 2]  # some agreement
        groups.append(data)
    width = max(g.shape[1] for g in groups)
    # Beyond a key's own ranks: values that must be ignored.
    grid = rng.integers(0, 4, size=(sum(g.shape[0] for g in groups), width)).astype(np.int8)
    starts, row = [], 0
    for g in groups:
        starts.append(row)
        grid[row : row + g.shape[0], : g.shape[1]] = g
        row += g.shape[0]
    disagreement, alpha = agreement_from_grid(
        grid, np.array(starts), np.array([g.shape[1] for g in groups])
    )
    for g, d, a in zip(groups, disagreement, alpha, strict=True):
        assert d == pytest.approx(np.mean(g.min(axis=0) != g.max(axis=0)))
        assert a == pytest.approx(krippendorff_alpha_nominal(g.astype(float)))


def test_alpha_is_undefined_for_one_coder_or_no_variation():
    grid = np.array([[1, 2, 3], [1, 1, 1], [1, 1, 1]], dtype=np.int8)
    disagreement, alpha = agreement_from_grid(grid, np.array([0, 1]), np.array([3, 3]))
    assert list(disagreement) == [0.0, 0.0]
    assert np.isnan(alpha).all()
