"""The services: the 3-prefix rule, versions, submit/reopen, audit, batches, overlap."""

from __future__ import annotations

import itertools
import uuid

import pytest

from annotate.models import Annotation, AnnotationEvent, Assignment, AssignmentKey, Pattern
from annotate.services import ServiceError
from annotate.services.annotations import (
    ANNOTATION_IS_SUBMITTED,
    AnnotationSubmitted,
    KeyNotAssigned,
    StaleVersion,
    annotation_get_or_create_for,
    annotation_reopen,
    annotation_save,
    annotation_state,
    annotation_submit,
)
from annotate.services.batches import (
    ASSIGNMENT_ANNOTATORS_DUPLICATED,
    ASSIGNMENT_OVERLAP_OUT_OF_RANGE,
    BATCH_ALREADY_ASSIGNED,
    BATCH_KEYS_DUPLICATED,
    BATCH_KEYS_UNKNOWN,
    BATCH_LAYERS_EMPTY,
    BATCH_NAME_TAKEN,
    BATCH_SAMPLE_TOO_LARGE,
    NOT_AN_ACTIVE_ANNOTATOR,
    REASSIGN_TO_SAME_ANNOTATOR,
    annotator_deactivate_and_reassign,
    assignment_create,
    assignment_create_with_overlap,
    batch_create_by_layers,
    batch_create_by_random_sample,
    batch_create_from_list,
)
from annotate.services.patterns import (
    PATTERN_DUPLICATE_PREFIXES,
    PATTERN_NEEDS_DESCRIPTION,
    PATTERN_NEEDS_THREE_PREFIXES,
    PATTERN_PREFIX_OF_ANOTHER_KEY,
    pattern_create,
    pattern_delete,
    pattern_update,
)
from tests.factories import (
    BatchFactory,
    KeyFactory,
    StudyFactory,
    UserFactory,
    assigned_batch,
    key_with_prefixes,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(alice):
    """alice's fresh draft of a key with 25 prefixes."""
    _, (key,) = assigned_batch([alice])
    annotation = annotation_get_or_create_for(key=key, annotator=alice)
    return key, annotation


def _prefixes(key, *ranks):
    by_rank = {p.rank: p for p in key.prefixes.all()}
    return [by_rank[r] for r in ranks]


def _add(annotation, key, user, ranks, kind="shallow", description="a pattern", **fields):
    annotation.refresh_from_db()
    return pattern_create(
        annotation=annotation,
        actor=user,
        description=description,
        kind=kind,
        prefixes=_prefixes(key, *ranks),
        version=annotation.version,
        **fields,
    )


def test_pattern_needs_three_prefixes(work, alice):
    key, annotation = work
    with pytest.raises(ServiceError) as error:
        _add(annotation, key, alice, [1, 2])
    assert error.value.message == PATTERN_NEEDS_THREE_PREFIXES
    assert not Pattern.objects.exists()


def test_pattern_with_three_prefixes_is_created_and_bumps_the_version(work, alice):
    key, annotation = work
    result = _add(annotation, key, alice, [1, 2, 3])
    assert result.created
    assert sorted(p.rank for p in result.pattern.prefixes.all()) == [1, 2, 3]
    assert result.annotation.version == annotation.version + 1


def test_pattern_cannot_cover_a_prefix_of_another_key(work, alice):
    key, annotation = work
    other = key_with_prefixes(5)
    with pytest.raises(ServiceError) as error:
        pattern_create(
            annotation=annotation,
            actor=alice,
            description="x",
            kind="shallow",
            prefixes=[*_prefixes(key, 1, 2), *_prefixes(other, 3)],
            version=annotation.version,
        )
    assert error.value.message == PATTERN_PREFIX_OF_ANOTHER_KEY


def test_pattern_cannot_count_one_prefix_twice_towards_the_three(work, alice):
    key, annotation = work
    with pytest.raises(ServiceError) as error:
        _add(annotation, key, alice, [1, 1, 2])
    assert error.value.message == PATTERN_DUPLICATE_PREFIXES


def test_pattern_needs_a_description(work, alice):
    key, annotation = work
    with pytest.raises(ServiceError) as error:
        _add(annotation, key, alice, [1, 2, 3], description="   ")
    assert error.value.message == PATTERN_NEEDS_DESCRIPTION


def test_a_stale_version_is_refused_and_carries_the_current_state(work, alice):
    _key, annotation = work
    annotation_save(annotation=annotation, actor=alice, note="first", version=annotation.version)
    with pytest.raises(StaleVersion) as error:
        annotation_save(annotation=annotation, actor=alice, note="second", version=1)
    assert error.value.annotation.note == "first"
    assert error.value.annotation.version == 2
    annotation.refresh_from_db()
    assert annotation.note == "first"


def test_saving_the_note_it_already_has_is_a_no_op_not_a_conflict(work, alice):
    _key, annotation = work
    saved = annotation_save(annotation=annotation, actor=alice, note="same", version=1)
    again = annotation_save(annotation=annotation, actor=alice, note="same", version=1)
    assert saved.version == again.version == 2


def test_a_retried_pattern_create_with_the_same_client_id_makes_one_pattern(work, alice):
    key, annotation = work
    client_id = uuid.uuid4()
    kwargs = dict(
        annotation=annotation,
        actor=alice,
        description="d",
        kind="semantic",
        prefixes=_prefixes(key, 1, 2, 3),
        version=1,
        client_id=client_id,
    )
    first = pattern_create(**kwargs)
    second = pattern_create(**kwargs)
    assert first.created and not second.created
    assert second.pattern.pk == first.pattern.pk
    assert Pattern.objects.count() == 1


def test_pattern_update_and_delete_check_the_version_and_the_rule(work, alice):
    key, annotation = work
    pattern = _add(annotation, key, alice, [1, 2, 3]).pattern
    with pytest.raises(StaleVersion):
        pattern_update(pattern=pattern, actor=alice, version=1, kind="semantic")
    with pytest.raises(ServiceError) as error:
        pattern_update(pattern=pattern, actor=alice, version=2, prefixes=_prefixes(key, 4, 5))
    assert error.value.message == PATTERN_NEEDS_THREE_PREFIXES
    updated = pattern_update(
        pattern=pattern, actor=alice, version=2, kind="semantic", prefixes=_prefixes(key, 4, 5, 6)
    )
    pattern.refresh_from_db()
    assert pattern.kind == "semantic"
    assert sorted(p.rank for p in pattern.prefixes.all()) == [4, 5, 6]
    deleted = pattern_delete(pattern=pattern, actor=alice, version=updated.version)
    assert deleted.version == 4
    assert not Pattern.objects.exists()


def test_submit_allows_zero_patterns_and_reopen_makes_it_a_draft_again(work, alice):
    _key, annotation = work
    submitted = annotation_submit(annotation=annotation, actor=alice, version=1)
    assert submitted.status == Annotation.Status.SUBMITTED
    assert submitted.submitted_at is not None
    # A retried submit is a no-op.
    assert annotation_submit(annotation=annotation, actor=alice, version=1).version == 2
    reopened = annotation_reopen(annotation=annotation, actor=alice, version=2)
    assert reopened.status == Annotation.Status.DRAFT
    assert reopened.submitted_at is None
    assert reopened.version == 3


def test_a_submitted_annotation_cannot_be_changed_until_reopened(work, alice):
    key, annotation = work
    annotation_submit(annotation=annotation, actor=alice, version=1)
    with pytest.raises(AnnotationSubmitted) as error:
        _add(annotation, key, alice, [1, 2, 3])
    assert error.value.message == ANNOTATION_IS_SUBMITTED
    with pytest.raises(AnnotationSubmitted):
        annotation_save(annotation=annotation, actor=alice, note="late", version=2)


def test_every_change_leaves_an_audit_record_with_before_and_after(work, alice):
    key, annotation = work
    annotation_save(annotation=annotation, actor=alice, note="hello", version=1)
    pattern = _add(annotation, key, alice, [1, 2, 3], description="numbers").pattern
    pattern_update(pattern=pattern, actor=alice, version=3, description="digits")
    pattern_delete(pattern=pattern, actor=alice, version=4)
    annotation_submit(annotation=annotation, actor=alice, version=5)
    annotation_reopen(annotation=annotation, actor=alice, version=6)

    events = list(AnnotationEvent.objects.filter(annotation=annotation))
    assert [e.action for e in events] == [
        "create",
        "save",
        "pattern_create",
        "pattern_update",
        "pattern_delete",
        "submit",
        "reopen",
    ]
    assert all(e.actor == alice and e.at is not None for e in events)
    assert events[0].before is None
    assert events[1].before["note"] == "" and events[1].after["note"] == "hello"
    assert events[2].before["patterns"] == []
    assert events[2].after["patterns"][0]["prefix_ranks"] == [1, 2, 3]
    assert events[3].before["patterns"][0]["description"] == "numbers"
    assert events[3].after["patterns"][0]["description"] == "digits"
    assert events[4].after["patterns"] == []
    assert (events[5].before["status"], events[5].after["status"]) == ("draft", "submitted")
    assert [e.after["version"] for e in events] == [1, 2, 3, 4, 5, 6, 7]


def test_the_audit_trail_holds_what_the_database_holds_after_every_change(work, alice, bob):
    # The writes derive the state after from the state before and their change, without
    # reading it back: check it against a read, and that the records chain up.
    key, annotation = work

    def assert_recorded() -> None:
        last = AnnotationEvent.objects.filter(annotation=annotation).last()
        fresh = Annotation.objects.select_related("annotator").get(pk=annotation.pk)
        assert last.after == annotation_state(annotation=fresh)

    assert_recorded()
    annotation_save(annotation=annotation, actor=alice, note="hello", version=1)
    assert_recorded()
    first = _add(annotation, key, alice, [9, 2, 5], description="  numbers ").pattern
    assert_recorded()
    annotation.refresh_from_db()
    second = pattern_create(
        annotation=annotation,
        actor=alice,
        description="dates",
        kind="semantic",
        prefixes=_prefixes(key, 4, 5, 6),
        version=annotation.version,
        client_id=uuid.uuid4(),
    ).pattern
    assert_recorded()
    pattern_update(
        pattern=first,
        actor=alice,
        version=4,
        kind="shallow+semantic",
        prefixes=_prefixes(key, 7, 1, 8),
    )
    assert_recorded()
    pattern_update(pattern=second, actor=alice, version=5, description="years")
    assert_recorded()
    pattern_delete(pattern=first, actor=alice, version=6)
    assert_recorded()
    annotation_submit(annotation=annotation, actor=alice, version=7)
    assert_recorded()
    annotation_reopen(annotation=annotation, actor=alice, version=8)
    assert_recorded()
    annotator_deactivate_and_reassign(
        annotator=alice, reassign_to=bob, actor=None, transfer_drafts=True
    )
    assert_recorded()

    events = list(AnnotationEvent.objects.filter(annotation=annotation))
    assert len(events) == 10
    assert all(e.before == previous.after for previous, e in itertools.pairwise(events))
    assert events[2].after["patterns"][0]["description"] == "numbers"
    assert events[2].after["patterns"][0]["prefix_ranks"] == [2, 5, 9]
    assert [p["description"] for p in events[-1].after["patterns"]] == ["years"]
    assert events[-1].after["annotator"] == "bob"


def test_the_audit_trail_records_a_patterns_rule_and_source(work, alice):
    # A rule is part of what the annotator claimed (docs/evidence.md): its changes are in
    # the trail like the description's, and so is where the pattern came from.
    key, annotation = work
    rule = {"type": "token", "value": " the"}
    pattern = _add(annotation, key, alice, [1, 2, 3], description="the", rule=rule).pattern
    pattern_update(pattern=pattern, actor=alice, version=2, rule={"type": "suffix", "value": "he"})
    pattern_update(pattern=pattern, actor=alice, version=3, rule=None)
    events = list(AnnotationEvent.objects.filter(annotation=annotation))
    rules = [[p["rule"] for p in e.after["patterns"]] for e in events]
    assert rules == [[], [rule], [{"type": "suffix", "value": "he"}], [None]]
    assert [p["source"] for p in events[-1].after["patterns"]] == ["written"]
    fresh = Annotation.objects.select_related("annotator").get(pk=annotation.pk)
    assert events[-1].after == annotation_state(annotation=fresh)


def test_a_refused_write_leaves_no_audit_record(work, alice):
    key, annotation = work
    with pytest.raises(ServiceError):
        _add(annotation, key, alice, [1, 2])
    assert AnnotationEvent.objects.filter(annotation=annotation).count() == 1  # create


def test_an_annotation_is_only_made_for_an_assigned_key(alice, bob):
    _, (key,) = assigned_batch([bob])
    with pytest.raises(KeyNotAssigned):
        annotation_get_or_create_for(key=key, annotator=alice)
    assert not Annotation.objects.exists()


# --- batches ----------------------------------------------------------------------------


def _study_with_layers(layers=(1, 2, 3), per_layer=4):
    study = StudyFactory(n_layers=len(layers))
    for layer in layers:
        for index in range(per_layer):
            KeyFactory(study=study, layer=layer, index=index * 10)
    return study


def test_a_batch_by_layers_takes_every_key_of_those_layers(carol):
    study = _study_with_layers()
    batch = batch_create_by_layers(study=study, name="low", layers=[1, 2], created_by=carol)
    assert sorted({k.layer for k in batch.keys.all()}) == [1, 2]
    assert batch.keys.count() == 8


def test_a_batch_by_an_empty_layer_is_refused(carol):
    study = _study_with_layers()
    with pytest.raises(ServiceError) as error:
        batch_create_by_layers(study=study, name="x", layers=[2, 7])
    assert error.value.message == BATCH_LAYERS_EMPTY.format(layers="7")


def test_a_random_batch_is_reproducible_from_its_seed():
    study = _study_with_layers()
    first = batch_create_by_random_sample(study=study, name="a", n=5, seed=7)
    again = batch_create_by_random_sample(study=study, name="b", n=5, seed=7)
    other = batch_create_by_random_sample(study=study, name="c", n=5, seed=8)
    ids = {b.name: sorted(b.keys.values_list("id", flat=True)) for b in (first, again, other)}
    assert ids["a"] == ids["b"]
    assert ids["a"] != ids["c"]
    assert len(ids["a"]) == 5


def test_a_random_batch_cannot_ask_for_more_keys_than_there_are():
    study = _study_with_layers()
    with pytest.raises(ServiceError) as error:
        batch_create_by_random_sample(study=study, name="a", n=5, seed=0, layers=[1])
    assert error.value.message == BATCH_SAMPLE_TOO_LARGE.format(n=5, available=4)


def test_a_batch_from_a_list_names_keys_by_layer_and_index():
    study = _study_with_layers()
    batch = batch_create_from_list(study=study, name="picked", keys=[(1, 0), (3, 30)])
    assert sorted(batch.keys.values_list("layer", "index")) == [(1, 0), (3, 30)]


def test_a_batch_from_a_list_refuses_unknown_and_repeated_keys():
    study = _study_with_layers()
    with pytest.raises(ServiceError) as unknown:
        batch_create_from_list(study=study, name="x", keys=[(1, 0), (9, 9)])
    assert unknown.value.message == BATCH_KEYS_UNKNOWN.format(keys="9:9")
    with pytest.raises(ServiceError) as repeated:
        batch_create_from_list(study=study, name="x", keys=[(1, 0), (1, 0)])
    assert repeated.value.message == BATCH_KEYS_DUPLICATED.format(keys="1:0")


def test_batch_names_are_unique_within_a_study():
    study = _study_with_layers()
    batch_create_by_layers(study=study, name="same", layers=[1])
    with pytest.raises(ServiceError) as error:
        batch_create_by_layers(study=study, name="same", layers=[2])
    assert error.value.message == BATCH_NAME_TAKEN


# --- assignments ------------------------------------------------------------------------


def _annotators(n):
    from django.contrib.auth.models import Group

    group, _ = Group.objects.get_or_create(name="annotator")
    users = [UserFactory(username=f"ann{i}") for i in range(n)]
    for user in users:
        user.groups.add(group)
    return users


@pytest.mark.parametrize(("m", "overlap"), [(2, 2), (3, 2), (4, 1), (5, 3)])
def test_overlap_gives_every_key_to_exactly_n_distinct_annotators_balanced(m, overlap):
    study = _study_with_layers(per_layer=7)  # 21 keys
    batch = BatchFactory(study=study, keys=list(study.keys.all()))
    annotators = _annotators(m)
    assignment_create_with_overlap(batch=batch, annotators=annotators, overlap=overlap)

    rows = list(
        AssignmentKey.objects.filter(assignment__batch=batch).values_list(
            "key_id", "assignment__annotator_id"
        )
    )
    per_key: dict[int, set[int]] = {}
    for key_id, annotator_id in rows:
        per_key.setdefault(key_id, set()).add(annotator_id)
    assert len(rows) == 21 * overlap
    assert all(len(users) == overlap for users in per_key.values())
    loads = [sum(1 for _, a in rows if a == user.pk) for user in annotators]
    assert max(loads) - min(loads) <= 1


def test_overlap_is_refused_when_out_of_range_or_with_repeated_annotators(alice, bob):
    batch = BatchFactory(keys=KeyFactory.create_batch(2))
    with pytest.raises(ServiceError) as too_many:
        assignment_create_with_overlap(batch=batch, annotators=[alice, bob], overlap=3)
    assert too_many.value.message == ASSIGNMENT_OVERLAP_OUT_OF_RANGE.format(overlap=3, n=2)
    with pytest.raises(ServiceError) as repeated:
        assignment_create_with_overlap(batch=batch, annotators=[alice, alice], overlap=1)
    assert repeated.value.message == ASSIGNMENT_ANNOTATORS_DUPLICATED


def test_only_active_annotators_can_be_assigned(alice, mallory):
    batch = BatchFactory(keys=KeyFactory.create_batch(2))
    with pytest.raises(ServiceError) as error:
        assignment_create_with_overlap(batch=batch, annotators=[alice, mallory], overlap=2)
    assert error.value.message == NOT_AN_ACTIVE_ANNOTATOR.format(username="mallory")
    assert not Assignment.objects.exists()


def test_a_batch_is_assigned_once(alice, bob):
    batch = BatchFactory(keys=KeyFactory.create_batch(2))
    assignment_create_with_overlap(batch=batch, annotators=[alice], overlap=1)
    with pytest.raises(ServiceError) as error:
        assignment_create_with_overlap(batch=batch, annotators=[bob], overlap=1)
    assert error.value.message == BATCH_ALREADY_ASSIGNED


def test_assignment_create_gives_the_whole_batch_and_is_idempotent(alice):
    batch = BatchFactory(keys=KeyFactory.create_batch(3))
    first = assignment_create(batch=batch, annotator=alice)
    again = assignment_create(batch=batch, annotator=alice)
    assert first.pk == again.pk
    assert again.keys.count() == 3


# --- deactivation -----------------------------------------------------------------------


def test_deactivation_moves_the_unfinished_keys_and_the_drafts_when_asked(alice, bob, carol):
    batch, keys = assigned_batch([alice], n_keys=3)
    done = annotation_get_or_create_for(key=keys[0], annotator=alice)
    annotation_submit(annotation=done, actor=alice, version=done.version)
    draft = annotation_get_or_create_for(key=keys[1], annotator=alice)
    annotation_save(annotation=draft, actor=alice, note="half way", version=draft.version)

    result = annotator_deactivate_and_reassign(
        annotator=alice, reassign_to=bob, actor=carol, transfer_drafts=True
    )

    alice.refresh_from_db()
    assert not alice.is_active
    assert (result.keys_moved, result.keys_skipped, result.drafts_moved) == (2, 0, 1)
    assert set(Assignment.objects.get(annotator=alice).keys.all()) == {keys[0]}
    assert set(Assignment.objects.get(annotator=bob, batch=batch).keys.all()) == {keys[1], keys[2]}
    draft.refresh_from_db()
    assert draft.annotator == bob and draft.note == "half way"
    event = AnnotationEvent.objects.filter(annotation=draft).last()
    assert event.action == "reassign" and event.actor == carol
    assert (event.before["annotator"], event.after["annotator"]) == ("alice", "bob")
    done.refresh_from_db()
    assert done.annotator == alice


def test_deactivation_leaves_the_drafts_with_their_author_by_default(alice, bob, carol):
    _, keys = assigned_batch([alice], n_keys=1)
    draft = annotation_get_or_create_for(key=keys[0], annotator=alice)
    annotation_save(annotation=draft, actor=alice, note="half way", version=draft.version)

    result = annotator_deactivate_and_reassign(annotator=alice, reassign_to=bob, actor=carol)

    assert (result.keys_moved, result.drafts_moved) == (1, 0)
    draft.refresh_from_db()
    assert draft.annotator == alice and draft.note == "half way"
    assert not Annotation.objects.filter(annotator=bob).exists()
    assert not AnnotationEvent.objects.filter(action="reassign").exists()


def test_deactivation_skips_keys_the_new_annotator_already_has(alice, bob, carol):
    _, _keys = assigned_batch([alice, bob], n_keys=2)
    result = annotator_deactivate_and_reassign(
        annotator=alice, reassign_to=bob, actor=carol, transfer_drafts=False
    )
    assert (result.keys_moved, result.keys_skipped) == (0, 2)
    assert AssignmentKey.objects.filter(assignment__annotator=bob).count() == 2


def test_deactivation_refuses_to_reassign_to_the_same_or_a_non_annotator(alice, mallory, carol):
    with pytest.raises(ServiceError) as same:
        annotator_deactivate_and_reassign(annotator=alice, reassign_to=alice, actor=carol)
    assert same.value.message == REASSIGN_TO_SAME_ANNOTATOR
    with pytest.raises(ServiceError) as nobody:
        annotator_deactivate_and_reassign(annotator=alice, reassign_to=mallory, actor=carol)
    assert nobody.value.message == NOT_AN_ACTIVE_ANNOTATOR.format(username="mallory")
    alice.refresh_from_db()
    assert alice.is_active
