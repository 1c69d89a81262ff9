"""The selectors: derived labels, the next key, progress."""

from __future__ import annotations

import pytest

from annotate.labels import label_for_kinds
from annotate.models import Annotation
from annotate.selectors.annotations import annotation_view
from annotate.selectors.batches import batch_progress
from annotate.selectors.keys import key_next_for_annotator
from tests.factories import (
    AnnotationFactory,
    AssignmentFactory,
    BatchFactory,
    PatternFactory,
    StudyFactory,
    assigned_batch,
    key_with_prefixes,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("kinds", "label"),
    [
        (set(), "not-covered"),
        ({"shallow"}, "shallow"),
        ({"semantic"}, "semantic"),
        ({"shallow+semantic"}, "shallow+semantic"),
        ({"shallow", "semantic"}, "shallow+semantic"),
        ({"shallow", "shallow+semantic"}, "shallow+semantic"),
    ],
)
def test_label_for_the_kinds_covering_a_prefix(kinds, label):
    assert label_for_kinds(kinds) == label


def test_labels_are_derived_for_all_four_cases_including_shallow_and_semantic_together(alice):
    key = key_with_prefixes(8)
    by_rank = {p.rank: p for p in key.prefixes.all()}
    annotation = AnnotationFactory(key=key, annotator=alice)
    PatternFactory(annotation=annotation, kind="shallow", prefixes=[by_rank[r] for r in (1, 2, 3)])
    PatternFactory(annotation=annotation, kind="semantic", prefixes=[by_rank[r] for r in (3, 4, 5)])
    PatternFactory(
        annotation=annotation, kind="shallow+semantic", prefixes=[by_rank[r] for r in (6, 7, 5)]
    )

    view = annotation_view(annotation=annotation)

    assert [(lab.rank, lab.label) for lab in view.labels] == [
        (1, "shallow"),
        (2, "shallow"),
        (3, "shallow+semantic"),  # a shallow and a semantic pattern
        (4, "semantic"),
        (5, "shallow+semantic"),
        (6, "shallow+semantic"),  # a pattern tagged both
        (7, "shallow+semantic"),
        (8, "not-covered"),
    ]
    assert [p.prefix_ranks for p in view.patterns] == [[1, 2, 3], [3, 4, 5], [5, 6, 7]]


def test_next_key_skips_submitted_keys_in_a_deterministic_order(alice):
    study = StudyFactory()
    keys = [
        key_with_prefixes(3, study=study, layer=layer, index=i)
        for layer, i in [(2, 0), (1, 5), (1, 2)]
    ]
    batch = BatchFactory(study=study, keys=keys)
    assignment = AssignmentFactory(batch=batch, annotator=alice)
    first = key_next_for_annotator(user=alice)
    assert (first.key_id, first.assignment_id) == (keys[2].pk, assignment.pk)  # layer 1, index 2
    AnnotationFactory(key=keys[2], annotator=alice, status=Annotation.Status.SUBMITTED)
    AnnotationFactory(key=keys[1], annotator=alice, status=Annotation.Status.DRAFT)
    assert key_next_for_annotator(user=alice).key_id == keys[1].pk
    AnnotationFactory(key=keys[0], annotator=alice, status=Annotation.Status.SUBMITTED)
    Annotation.objects.filter(key=keys[1]).update(status=Annotation.Status.SUBMITTED)
    assert key_next_for_annotator(user=alice) is None


def test_next_key_ignores_other_annotators_work(alice, bob):
    _, (key,) = assigned_batch([alice, bob])
    AnnotationFactory(key=key, annotator=bob, status=Annotation.Status.SUBMITTED)
    assert key_next_for_annotator(user=alice).key_id == key.pk


def test_batch_progress_counts_per_annotator_and_per_layer(alice, bob):
    study = StudyFactory()
    keys = [key_with_prefixes(3, study=study, layer=layer) for layer in (1, 1, 2)]
    batch = BatchFactory(study=study, keys=keys)
    AssignmentFactory(batch=batch, annotator=alice)
    AssignmentFactory(batch=batch, annotator=bob, keys=keys[:2])
    AnnotationFactory(key=keys[0], annotator=alice, status=Annotation.Status.SUBMITTED)
    AnnotationFactory(key=keys[2], annotator=alice, status=Annotation.Status.DRAFT)
    AnnotationFactory(key=keys[1], annotator=bob, status=Annotation.Status.SUBMITTED)

    progress = batch_progress(batch=batch)

    assert progress["keys_total"] == 3
    assert (progress["annotators_per_key_min"], progress["annotators_per_key_max"]) == (1, 2)
    alice_row, bob_row = progress["per_annotator"]
    assert (alice_row["username"], alice_row["keys_assigned"]) == ("alice", 3)
    assert (alice_row["submitted"], alice_row["draft"], alice_row["new"]) == (1, 1, 1)
    assert (bob_row["keys_assigned"], bob_row["submitted"], bob_row["new"]) == (2, 1, 1)
    layers = {row["layer"]: row for row in progress["per_layer"]}
    assert (layers[1]["keys_assigned"], layers[1]["submitted"]) == (4, 2)
    assert (layers[2]["keys_assigned"], layers[2]["draft"]) == (1, 1)
    assert progress["total"] == {"keys_assigned": 5, "submitted": 2, "draft": 1, "new": 2}
