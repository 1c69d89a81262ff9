"""The annotator table's quality flags: each needs a minimum of evidence before it fires
(submitted keys, keys compared with gold, checks), tested at that minimum and one below."""

from __future__ import annotations

import csv
import io

import pytest

from annotate.models import Annotation, GoldAnnotation, GoldPattern
from reports.annotators import (
    DEFINITIONS,
    FLAG_EVIDENCE,
    MIN_CHECKS,
    MIN_GOLD_KEYS,
    MIN_KEYS,
    annotator_csv,
    annotator_table,
)
from tests.factories import StudyFactory, annotate_key, key_with_prefixes

pytestmark = pytest.mark.django_db


def rows_of(study) -> dict[str, dict]:
    return {row["username"]: row for row in annotator_table(study=study)["annotators"]}


def add_gold(key, ranks=(1, 2, 3), is_check: bool = False) -> None:
    gold = GoldAnnotation.objects.create(key=key, status="submitted", is_check=is_check)
    pattern = GoldPattern.objects.create(gold=gold, kind="shallow", order=0, description="g")
    pattern.prefixes.set(list(key.prefixes.filter(rank__in=ranks)))


def test_every_quality_flag_has_a_minimum_of_evidence_and_says_it():
    assert set(FLAG_EVIDENCE) == {
        "fast",
        "low_gold_agreement",
        "few_patterns",
        "low_check_accuracy",
    }
    assert FLAG_EVIDENCE["fast"] == ("keys_done", MIN_KEYS)
    assert FLAG_EVIDENCE["few_patterns"] == ("keys_done", MIN_KEYS)
    assert FLAG_EVIDENCE["low_gold_agreement"] == ("gold_keys", MIN_GOLD_KEYS)
    assert FLAG_EVIDENCE["low_check_accuracy"] == ("checks_n", MIN_CHECKS)
    assert (MIN_KEYS, MIN_GOLD_KEYS, MIN_CHECKS) == (5, 3, 3)
    assert "at least 5 submitted keys" in DEFINITIONS["fast"]
    assert "at least 5 submitted keys" in DEFINITIONS["few_patterns"]
    assert "at least 3 keys with gold" in DEFINITIONS["low_gold_agreement"]
    assert "at least 3 checks" in DEFINITIONS["low_check_accuracy"]


@pytest.mark.parametrize(("n_keys", "flagged"), [(MIN_KEYS, True), (MIN_KEYS - 1, False)])
def test_fast_and_few_patterns_need_enough_submitted_keys(alice, bob, n_keys, flagged):
    """alice: 5 keys, 100 s and 4 patterns each; bob: ``n_keys`` keys, 10 s and one
    pattern each. Far under a third of the study's median time and under half its
    patterns per key, bob is flagged only from MIN_KEYS keys on."""
    study = StudyFactory()
    for k in range(5):
        key = key_with_prefixes(12, study=study, layer=1, index=k)
        annotate_key(key, alice, [("shallow", [r, r + 1, r + 2]) for r in (1, 4, 7, 10)])
    for k in range(n_keys):
        key = key_with_prefixes(12, study=study, layer=1, index=100 + k)
        annotate_key(key, bob, [("semantic", [1, 2, 3])])
    Annotation.objects.filter(annotator=alice).update(active_seconds=100)
    Annotation.objects.filter(annotator=bob).update(active_seconds=10)
    rows = rows_of(study)
    assert rows["bob"]["keys_done"] == n_keys
    assert rows["bob"]["quality_flags"] == (["fast", "few_patterns"] if flagged else [])
    assert rows["alice"]["quality_flags"] == []


@pytest.mark.parametrize(("n_gold", "flagged"), [(MIN_GOLD_KEYS, True), (MIN_GOLD_KEYS - 1, False)])
def test_low_gold_agreement_needs_enough_keys_with_gold(alice, bob, n_gold, flagged):
    """Gold says shallow on ranks 1-3 of ``n_gold`` keys; bob says semantic on 4-6 (κ
    under 0), alice as gold (κ 1). bob's κ with gold is flagged from MIN_GOLD_KEYS keys."""
    study = StudyFactory()
    for k in range(n_gold):
        key = key_with_prefixes(6, study=study, layer=1, index=k)
        add_gold(key)
        annotate_key(key, alice, [("shallow", [1, 2, 3])])
        annotate_key(key, bob, [("semantic", [4, 5, 6])])
    rows = rows_of(study)
    assert rows["bob"]["gold_keys"] == n_gold
    assert rows["bob"]["kappa_with_gold"] < 0.4
    assert rows["bob"]["quality_flags"] == (["low_gold_agreement"] if flagged else [])
    assert rows["alice"]["quality_flags"] == []


@pytest.mark.parametrize(("n_checks", "flagged"), [(MIN_CHECKS, True), (MIN_CHECKS - 1, False)])
def test_low_check_accuracy_needs_enough_checks(bob, n_checks, flagged):
    study = StudyFactory()
    for k in range(n_checks):
        key = key_with_prefixes(6, study=study, layer=1, index=k)
        add_gold(key, is_check=True)
        check = annotate_key(key, bob, [("semantic", [4, 5, 6])])
        check.is_check = True
        check.save()
    row = rows_of(study)["bob"]
    assert (row["checks_n"], row["check_accuracy"]) == (n_checks, 0.0)
    assert row["quality_flags"] == (["low_check_accuracy"] if flagged else [])


def test_the_csv_carries_the_evidence_of_every_flag(alice, bob):
    study = StudyFactory()
    for k in range(MIN_GOLD_KEYS):
        key = key_with_prefixes(6, study=study, layer=1, index=k)
        add_gold(key)
        annotate_key(key, bob, [("semantic", [4, 5, 6])])
    rows = list(csv.DictReader(io.StringIO(annotator_csv(annotator_table(study=study)))))
    (bob_row,) = rows
    assert bob_row["quality_flags"] == "low_gold_agreement"
    for evidence, _ in FLAG_EVIDENCE.values():
        assert evidence in bob_row
    assert bob_row["gold_keys"] == str(MIN_GOLD_KEYS)
