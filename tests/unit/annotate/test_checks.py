"""Check keys: the pure draw (no database) that decides which slots (one per regular key
given to an annotator) bring one."""

from __future__ import annotations

import math

from annotate.services.check_keys import check_key_order, slot_draws_check


def _draws(n: int, rate: float, annotator_id: int = 7, study_id: int = 3, seed: int = 0):
    return [
        slot_draws_check(
            study_id=study_id, study_seed=seed, annotator_id=annotator_id, slot=slot, rate=rate
        )
        for slot in range(n)
    ]


def test_the_same_inputs_draw_the_same_sequence():
    assert _draws(500, 0.2) == _draws(500, 0.2)
    assert check_key_order(annotator_id=4, key_ids=[9, 3, 12, 5]) == check_key_order(
        annotator_id=4, key_ids=[5, 12, 3, 9]
    )


def test_annotators_and_studies_draw_different_sequences():
    assert _draws(500, 0.2, annotator_id=1) != _draws(500, 0.2, annotator_id=2)
    assert _draws(500, 0.2, study_id=1) != _draws(500, 0.2, study_id=2)
    assert _draws(500, 0.2, seed=1) != _draws(500, 0.2, seed=2)


def test_the_rate_is_respected_within_a_binomial_tolerance():
    n = 2000
    for rate in (0.05, 0.1, 0.3):
        hits = sum(_draws(n, rate))
        sd = math.sqrt(n * rate * (1 - rate))
        assert abs(hits - n * rate) < 4 * sd, (rate, hits)


def test_rate_zero_never_draws_and_rate_one_always_does():
    assert not any(_draws(300, 0.0))
    assert all(_draws(300, 1.0))


def test_a_higher_rate_draws_every_slot_a_lower_rate_draws():
    low, high = _draws(1000, 0.1), _draws(1000, 0.2)
    assert all(h for lo, h in zip(low, high, strict=True) if lo)


def test_check_keys_come_in_an_order_of_their_own_per_annotator():
    keys = list(range(1, 40))
    first = check_key_order(annotator_id=1, key_ids=keys)
    assert sorted(first) == keys
    assert first != keys
    assert first != check_key_order(annotator_id=2, key_ids=keys)
