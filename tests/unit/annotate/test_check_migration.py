"""Check keys served before they were drawn with the keys (a ``CheckServing`` row and no
``AssignmentKey``) become check keys of their assignment when the schema is migrated."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("annotate", "0010_review_gold_guidelines_checks_flags")]
AFTER = [("annotate", "0012_fold_served_checks_into_assignments")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_served_checks_become_check_keys_of_their_assignment():
    old = _migrate(BEFORE)
    User = old.get_model("auth", "User")
    Study, Key, Batch = (old.get_model("annotate", n) for n in ("Study", "Key", "Batch"))
    Assignment, AssignmentKey = (
        old.get_model("annotate", n) for n in ("Assignment", "AssignmentKey")
    )
    Annotation, CheckServing = (
        old.get_model("annotate", n) for n in ("Annotation", "CheckServing")
    )
    alice = User.objects.create(username="alice")
    bob = User.objects.create(username="bob")
    study = Study.objects.create(name="s", model_name="m", corpus="c")
    regular, served, submitted, orphan, held = (
        Key.objects.create(study=study, layer=1, index=i) for i in range(5)
    )
    batch = Batch.objects.create(study=study, name="b")
    alices = Assignment.objects.create(batch=batch, annotator=alice)
    bobs = Assignment.objects.create(batch=batch, annotator=bob)
    AssignmentKey.objects.create(assignment=alices, key=regular)
    AssignmentKey.objects.create(assignment=bobs, key=held)
    CheckServing.objects.create(annotator=alice, key=served, assignment=alices, slot=0)
    CheckServing.objects.create(annotator=alice, key=submitted, assignment=alices, slot=1)
    Annotation.objects.create(key=submitted, annotator=alice, status="submitted", is_check=True)
    CheckServing.objects.create(annotator=bob, key=orphan, assignment=None, slot=0)
    CheckServing.objects.create(annotator=bob, key=held, assignment=bobs, slot=1)

    new = _migrate(AFTER)
    rows = new.get_model("annotate", "AssignmentKey").objects
    checks = set(rows.filter(is_check=True).values_list("assignment_id", "key_id"))
    # Unsubmitted and submitted checks are folded in; one whose assignment is gone goes
    # to the annotator's assignment of the study; a key already held stays as it is.
    assert checks == {(alices.pk, served.pk), (alices.pk, submitted.pk), (bobs.pk, orphan.pk)}
    assert rows.filter(is_check=False).count() == 2
    servings = new.get_model("annotate", "CheckServing").objects
    assert servings.get(key_id=orphan.pk).assignment_id == bobs.pk
    assert servings.count() == 4

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
