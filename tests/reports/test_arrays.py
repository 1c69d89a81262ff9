"""``study_arrays`` against the ORM read plainly, whichever way the patterns' ranks are
read (the folded words of dense keys, or the (pattern, rank) rows for the rest), and the
statistics' shortcuts (unit codes, float32 bootstrap products) against their plain
forms."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from annotate.labels import KIND_BITS
from annotate.models import Annotation, Key, Pattern, TriggerPrefix
from reports.selectors.report_filter import ReportFilter
from reports.selectors.study_arrays import study_arrays
from reports.stats import bootstrap
from reports.stats import labels as stats_labels
from reports.stats.agreement import key_stats, unit_stats
from reports.stats.arrays import StudyArrays
from reports.stats.bootstrap import bootstrap_sums, exact_dtype
from reports.stats.figure2 import majority_counts
from reports.stats.labels import n_words, unit_codes
from tests.factories import (
    AnnotationFactory,
    KeyFactory,
    PatternFactory,
    StudyFactory,
    TriggerPrefixFactory,
    UserFactory,
    annotate_key,
    key_with_prefixes,
)

pytestmark = pytest.mark.django_db


def _reference(study, flt: ReportFilter) -> dict[str, object]:
    """What ``study_arrays`` must give, read one object at a time."""
    keys = list(Key.objects.filter(study=study).order_by("id"))
    if flt.layers is not None:
        keys = [k for k in keys if k.layer in flt.layers]
    key_pos = {k.pk: i for i, k in enumerate(keys)}
    n_ranks = max((p.rank for k in keys for p in k.prefixes.all()), default=0)
    exists = np.zeros((len(keys), n_ranks), dtype=bool)
    top1 = np.full((len(keys), 2), -1)
    for i, key in enumerate(keys):
        for prefix in key.prefixes.all():
            exists[i, prefix.rank - 1] = True
            if prefix.rank == 1:
                top1[i] = (prefix.trigger_token_id, prefix.next_token_id)
    annotations = [
        a
        for a in Annotation.objects.filter(key__study=study).order_by("id")
        if a.key_id in key_pos and (not flt.submitted_only or a.status == "submitted")
    ]
    ann_pos = {a.pk: i for i, a in enumerate(annotations)}
    patterns = [p for p in Pattern.objects.order_by("id") if p.annotation_id in ann_pos]
    masks = np.zeros((len(patterns), n_words(n_ranks)), dtype=np.uint64)
    for i, pattern in enumerate(patterns):
        for prefix in pattern.prefixes.all():
            bit = prefix.rank - 1
            masks[i, bit // 64] |= np.uint64(1) << np.uint64(bit % 64)
    return {
        "key_layer": np.array([k.layer for k in keys]),
        "prefix_exists": exists,
        "top1_trigger_id": top1[:, 0],
        "top1_next_id": top1[:, 1],
        "ann_key": np.array([key_pos[a.key_id] for a in annotations], dtype=np.int64),
        "pat_ann": np.array([ann_pos[p.annotation_id] for p in patterns], dtype=np.int64),
        "pat_kind": np.array([KIND_BITS[p.kind] for p in patterns], dtype=np.uint8),
        "pat_mask": masks,
    }


def _assert_matches(study, flt: ReportFilter | None = None) -> StudyArrays:
    flt = flt or ReportFilter()
    arrays = study_arrays(study=study, flt=flt)
    for name, expected in _reference(study, flt).items():
        got = getattr(arrays, name)
        assert got.shape == expected.shape, name  # type: ignore[attr-defined]
        assert np.array_equal(got, expected), name  # type: ignore[arg-type]
    return arrays


def _prefix(key, rank: int) -> TriggerPrefix:
    return TriggerPrefixFactory(key=key, rank=rank, trigger_token_id=rank, next_token_id=rank)


def test_dense_keys_read_from_the_folded_words(hand_study):
    _assert_matches(hand_study)
    _assert_matches(hand_study, ReportFilter(submitted_only=False))
    _assert_matches(hand_study, ReportFilter(layers=(2,), submitted_only=False))


def test_keys_whose_prefix_ids_are_not_in_rank_order(alice, bob):
    study = StudyFactory()
    # Two keys whose prefixes were written interleaved, one of them in reverse rank order.
    first, second = KeyFactory(study=study, layer=1), KeyFactory(study=study, layer=2)
    for rank in range(1, 7):
        _prefix(first, rank)
        _prefix(second, 7 - rank)
    dense = key_with_prefixes(6, study=study, layer=1)
    for key in (first, second, dense):
        annotate_key(key, alice, [("shallow", [1, 2, 3]), ("semantic", [3, 5, 6])])
        annotate_key(key, bob, [("shallow+semantic", [2, 4, 6])])
    arrays = _assert_matches(study)
    assert arrays.pat_mask.shape == (9, 1)


def test_a_pattern_with_a_prefix_of_another_key_gets_that_prefixs_rank(alice):
    study = StudyFactory()
    one = key_with_prefixes(5, study=study, layer=1)
    other = key_with_prefixes(5, study=study, layer=1)
    annotation = AnnotationFactory(key=one, annotator=alice, status="submitted")
    PatternFactory(
        annotation=annotation,
        kind="shallow",
        prefixes=[*one.prefixes.filter(rank__in=[1, 2]), other.prefixes.get(rank=4)],
    )
    arrays = _assert_matches(study)
    assert int(arrays.pat_mask[0, 0]) == 0b1011


def test_ranks_with_a_gap_and_keys_without_prefixes(alice):
    study = StudyFactory()
    gapped = KeyFactory(study=study, layer=1)
    for rank in (1, 2, 4, 5):
        _prefix(gapped, rank)
    KeyFactory(study=study, layer=2)  # no prefixes at all
    annotate_key(gapped, alice, [("semantic", [1, 4, 5])])
    arrays = _assert_matches(study)
    assert arrays.prefix_exists[0].tolist() == [True, True, False, True, True]
    assert not arrays.prefix_exists[1].any()


def test_other_studies_patterns_in_the_id_range_are_left_out(alice, bob):
    ours, theirs = StudyFactory(), StudyFactory()
    for i in range(3):
        for study in (ours, theirs):
            key = key_with_prefixes(8, study=study, layer=1 + i % 2)
            annotate_key(key, alice, [("shallow", [1, 2, 3])])
            annotate_key(key, bob, [("semantic", [6, 7, 8]), ("shallow", [2, 3, 4])])
    assert len(_assert_matches(ours).pat_kind) == 9
    _assert_matches(theirs)


def test_prefix_ids_64_apart_in_one_pattern(alice):
    # 130 prefixes: some rank r and r + 64 fall on bits 62 and 63 of a word, which a
    # plain integer sum of the words would overflow on SQLite.
    study = StudyFactory(top_k=130)
    key = key_with_prefixes(130, study=study, layer=1)
    first_id = key.prefixes.get(rank=1).pk
    for bit in (62, 63):
        rank = 1 + (bit - first_id) % 64
        annotate_key(key, UserFactory(), [("shallow", [rank, rank + 64, 130])])
    annotate_key(key, alice, [("semantic", [1, 65, 129])])
    arrays = _assert_matches(study)
    assert arrays.pat_mask.shape == (3, 3)


def test_a_study_without_annotations_or_keys():
    empty = StudyFactory()
    arrays = _assert_matches(empty)
    assert arrays.n_keys == 0 and arrays.pat_mask.shape == (0, 1)
    unannotated = StudyFactory()
    key_with_prefixes(4, study=unannotated, layer=1)
    assert _assert_matches(unannotated).ann_key.size == 0


# --- the statistics' shortcuts ------------------------------------------------------------


def _random_grid(n_coders: int, n_values: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    grid = rng.integers(0, n_values, size=(n_coders, 60, 7)).astype(np.int8)
    grid[rng.random(grid.shape) < 0.25] = -1
    grid[:, :3] = -1  # keys nobody rated
    return grid


@pytest.mark.parametrize("n_coders", [1, 2, 3, 4])
@pytest.mark.parametrize("n_values", [2, 4])
def test_key_stats_by_unit_code_equal_the_unit_by_unit_sums(n_coders, n_values):
    grid = _random_grid(n_coders, n_values, seed=n_coders * 10 + n_values)
    assert unit_codes(grid, n_values) is not None
    by_code, layout = key_stats(grid, n_values)
    by_unit, same_layout = unit_stats(grid, n_values)
    assert layout == same_layout
    if n_coders <= 3:  # integers and halves: exact
        assert np.array_equal(by_code, by_unit)
    else:  # α's thirds are rounded
        assert by_code == pytest.approx(by_unit, rel=1e-12)


@pytest.mark.parametrize("n_coders", [1, 2, 3, 5])
def test_majority_counts_by_unit_code_equal_the_unit_by_unit_counts(n_coders, monkeypatch):
    grid = _random_grid(n_coders, 4, seed=n_coders)
    layer_pos = np.arange(grid.shape[1]) % 3
    by_code = majority_counts(grid, layer_pos, 3, 4)
    monkeypatch.setattr(stats_labels, "MAX_CODES", 0)
    assert unit_codes(grid, 4) is None
    by_unit = majority_counts(grid, layer_pos, 3, 4)
    for a, b in zip(by_code, by_unit, strict=True):
        assert np.array_equal(a, b)


def test_the_bootstrap_in_float32_equals_it_in_float64(monkeypatch):
    grid = _random_grid(3, 4, seed=7)
    stats, _ = key_stats(grid, 4)
    strata = np.arange(stats.shape[0]) % 4
    assert exact_dtype(stats, stats.shape[0]) is np.float32
    fast = bootstrap_sums(stats, strata, 4, 120, seed=3)
    monkeypatch.setattr(bootstrap, "exact_dtype", lambda rows, n: np.float64)
    assert np.array_equal(fast, bootstrap_sums(stats, strata, 4, 120, seed=3))


def test_float32_is_used_only_where_its_sums_are_exact():
    halves = np.array([[0.5, 3.0], [2.0, 1.5]])
    assert exact_dtype(halves, 2) is np.float32
    assert exact_dtype(halves, 2**23) is np.float64  # 2^23 draws × 3 in halves ≥ 2^24
    assert exact_dtype(np.array([[1 / 3]]), 2) is np.float64
    assert exact_dtype(np.array([[-1.0]]), 2) is np.float64


def test_the_bootstrap_runs_blas_on_one_thread_and_gives_the_threads_back():
    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    assert blas_threads(), "numpy's BLAS is not found"
    with threadpool_limits(limits=2, user_api="blas"):
        with bootstrap.one_blas_thread():
            assert set(blas_threads()) == {1}
        assert set(blas_threads()) == {2}
