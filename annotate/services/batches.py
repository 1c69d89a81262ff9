"""Writes of batches and of their assignments: keys given to annotators, an overlap raised,
annotators added, an annotator deactivated and their unfinished keys handed over."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.db.models import Exists, OuterRef, Q

from ..models import (
    Annotation,
    AnnotationEvent,
    Assignment,
    AssignmentKey,
    Batch,
    Key,
    Study,
)
from ..permissions import ANNOTATOR_GROUP, user_is_annotator
from ..selectors.annotations import pattern_list_for_annotation
from . import ServiceError
from .accounts import account_check_manageable
from .annotations import annotation_record, annotation_state
from .check_keys import Grant, check_keys_give
from .studies import study_check_live

BATCH_NAME_TAKEN = "This study already has a batch with this name."
BATCH_NEEDS_KEYS = "A batch needs at least one key."
BATCH_KEY_OF_ANOTHER_STUDY = "Every key of a batch must belong to the batch's study."
BATCH_LAYERS_EMPTY = "The study has no keys in layer(s): {layers}."
BATCH_SAMPLE_TOO_LARGE = "Cannot sample {n} keys: only {available} keys are available."
BATCH_KEYS_UNKNOWN = "The study has no key(s): {keys}."
BATCH_KEYS_DUPLICATED = "The list names key(s) more than once: {keys}."
BATCH_ALREADY_ASSIGNED = (
    "This batch is already assigned: add annotators to it or raise its overlap instead."
)


BATCH_NOT_ASSIGNED = "This batch is not assigned yet: assign it first."
ASSIGNMENT_OVERLAP_OUT_OF_RANGE = (
    "The overlap ({overlap}) cannot be larger than the number of annotators ({n}): "
    "each key goes to {overlap} different annotators."
)


ASSIGNMENT_OVERLAP_LOWERED = (
    "The overlap can only be raised: every key of this batch already has at least {n} annotator(s)."
)


ASSIGNMENT_ALREADY_IN_BATCH = "{username} is already assigned to this batch."
ASSIGNMENT_NOTHING_TO_ADD = (
    "Nothing to add: every key already has {overlap} annotator(s). Raise the overlap to "
    "give keys to the new annotators."
)


ASSIGNMENT_ANNOTATORS_DUPLICATED = "Each annotator can be named only once."
NOT_AN_ACTIVE_ANNOTATOR = "{username} is not an active annotator."
REASSIGN_NEEDED = "{username} has {n} unfinished key(s): name the annotator who takes them over."
REASSIGN_TO_SAME_ANNOTATOR = (
    "Unfinished keys cannot be reassigned to the annotator being deactivated."
)


@transaction.atomic
def batch_create(
    *, study: Study, name: str, keys: Sequence[Key], created_by: User | None = None
) -> Batch:
    """A batch of the given keys of ``study``; the mode-specific services below choose them."""
    study_check_live(study.pk)
    if Batch.objects.filter(study=study, name=name).exists():
        raise ServiceError(BATCH_NAME_TAKEN)
    if any(key.study_id != study.pk for key in keys):
        raise ServiceError(BATCH_KEY_OF_ANOTHER_STUDY)
    batch = Batch.objects.create(study=study, name=name, created_by=created_by)
    batch.keys.add(*keys)
    return batch


@transaction.atomic
def batch_create_by_layers(
    *,
    study: Study,
    name: str,
    layers: Sequence[int],
    created_by: User | None = None,
) -> Batch:
    """Every key of the study in the given layers (numbered from 1)."""
    wanted = sorted(set(layers))
    keys = list(Key.objects.filter(study=study, layer__in=wanted).order_by("layer", "index"))
    empty = sorted(set(wanted) - {key.layer for key in keys})
    if not wanted:
        raise ServiceError(BATCH_NEEDS_KEYS)
    if empty:
        raise ServiceError(BATCH_LAYERS_EMPTY.format(layers=", ".join(map(str, empty))))
    return batch_create(study=study, name=name, keys=keys, created_by=created_by)


@transaction.atomic
def batch_create_by_random_sample(
    *,
    study: Study,
    name: str,
    n: int,
    seed: int,
    layers: Sequence[int] | None = None,
    created_by: User | None = None,
) -> Batch:
    """``n`` keys drawn without replacement with ``random.Random(seed)``.

    Reproducible: the candidates are listed in (layer, index) order before sampling, so
    the same study, layers, n and seed always give the same keys.
    """
    candidates = Key.objects.filter(study=study)
    if layers:
        candidates = candidates.filter(layer__in=set(layers))
    ids = list(candidates.order_by("layer", "index").values_list("id", flat=True))
    if n < 1:
        raise ServiceError(BATCH_NEEDS_KEYS)
    if n > len(ids):
        raise ServiceError(BATCH_SAMPLE_TOO_LARGE.format(n=n, available=len(ids)))
    chosen = set(random.Random(seed).sample(ids, n))
    keys = [key for key in Key.objects.filter(id__in=chosen).order_by("layer", "index")]
    return batch_create(study=study, name=name, keys=keys, created_by=created_by)


@transaction.atomic
def batch_create_from_list(
    *,
    study: Study,
    name: str,
    keys: Sequence[tuple[int, int]],
    created_by: User | None = None,
) -> Batch:
    """The keys named as (layer, index) pairs; an unknown or repeated pair is an error."""
    if not keys:
        raise ServiceError(BATCH_NEEDS_KEYS)
    wanted = [(int(layer), int(index)) for layer, index in keys]
    repeated = sorted(pair for pair, n in Counter(wanted).items() if n > 1)
    if repeated:
        raise ServiceError(BATCH_KEYS_DUPLICATED.format(keys=_pairs(repeated)))
    found = {
        (key.layer, key.index): key
        for key in Key.objects.filter(
            study=study,
            layer__in={layer for layer, _ in wanted},
            index__in={index for _, index in wanted},
        )
    }
    unknown = [pair for pair in wanted if pair not in found]
    if unknown:
        raise ServiceError(BATCH_KEYS_UNKNOWN.format(keys=_pairs(unknown)))
    return batch_create(
        study=study, name=name, keys=[found[pair] for pair in wanted], created_by=created_by
    )


def _pairs(pairs: Sequence[tuple[int, int]], limit: int = 10) -> str:
    shown = ", ".join(f"{layer}:{index}" for layer, index in pairs[:limit])
    return shown + (f" and {len(pairs) - limit} more" if len(pairs) > limit else "")


@transaction.atomic
def assignment_create(*, batch: Batch, annotator: User) -> Assignment:
    """Give every key of ``batch`` to ``annotator``, and the check keys they draw
    (``annotate.services.check_keys``). Idempotent: a rerun adds nothing."""
    study_check_live(batch.study_id)
    assignment, _ = Assignment.objects.get_or_create(batch=batch, annotator=annotator)
    held = AssignmentKey.objects.filter(assignment=assignment).values("key_id")
    key_ids = list(
        batch.keys.exclude(id__in=held).order_by("layer", "index").values_list("id", flat=True)
    )
    AssignmentKey.objects.bulk_create(
        [AssignmentKey(assignment=assignment, key_id=key_id) for key_id in key_ids],
        ignore_conflicts=True,
    )
    check_keys_give(grants=[_grant(assignment, key_ids, study_id=batch.study_id)])
    return assignment


def _grant(assignment: Assignment, key_ids: Sequence[int], *, study_id: int) -> Grant:
    return Grant(
        assignment_id=assignment.pk,
        annotator_id=assignment.annotator_id,
        study_id=study_id,
        key_ids=key_ids,
    )


@transaction.atomic
def assignment_create_with_overlap(
    *, batch: Batch, annotators: Sequence[User], overlap: int
) -> list[Assignment]:
    """Give ``batch`` to M annotators so that every key is seen by exactly ``overlap`` of them.

    The model chosen: with M annotators and overlap N (1 ≤ N ≤ M), the batch's keys in
    (layer, index) order are dealt round-robin: key j goes to annotators
    (j·N + t) mod M for t = 0..N-1. Each key gets N distinct annotators and the load is
    balanced (every annotator gets ⌊K·N/M⌋ or ⌈K·N/M⌉ keys). N = M gives every annotator
    the whole batch, which is the paper's set-up for measuring agreement.

    A batch is assigned once: assigning an already assigned batch is refused, so that the
    overlap it was made with stays true. Annotators must be distinct active annotators.
    """
    study_check_live(batch.study_id)
    users = list(annotators)
    if len({user.pk for user in users}) != len(users):
        raise ServiceError(ASSIGNMENT_ANNOTATORS_DUPLICATED)
    _check_overlap(overlap, len(users))
    for user in users:
        if not user_is_annotator(user):
            raise ServiceError(NOT_AN_ACTIVE_ANNOTATOR.format(username=user.get_username()))
    # Lock the batch so that two admins assigning it at once cannot both pass the check.
    Batch.objects.select_for_update().filter(pk=batch.pk).first()
    if Assignment.objects.filter(batch=batch).exists():
        raise ServiceError(BATCH_ALREADY_ASSIGNED)
    if not batch.keys.exists():
        raise ServiceError(BATCH_NEEDS_KEYS)
    assignments = [Assignment.objects.create(batch=batch, annotator=user) for user in users]
    key_ids = list(batch.keys.order_by("layer", "index").values_list("id", flat=True))
    m = len(assignments)
    rows = [
        AssignmentKey(assignment=assignments[(j * overlap + t) % m], key_id=key_id)
        for j, key_id in enumerate(key_ids)
        for t in range(overlap)
    ]
    AssignmentKey.objects.bulk_create(rows)
    given: dict[int, list[int]] = {assignment.pk: [] for assignment in assignments}
    for row in rows:
        given[row.assignment.pk].append(row.key_id)
    check_keys_give(grants=[_grant(a, given[a.pk], study_id=batch.study_id) for a in assignments])
    return assignments


def _check_overlap(overlap: int, n: int) -> None:
    if overlap < 1 or overlap > n:
        raise ServiceError(ASSIGNMENT_OVERLAP_OUT_OF_RANGE.format(overlap=overlap, n=n))


@dataclass(frozen=True)
class AssignmentExtendResult:
    keys_added: int
    keys_short: int


@transaction.atomic
def assignment_extend(
    *, batch: Batch, annotators: Sequence[User], overlap: int
) -> AssignmentExtendResult:
    """Add ``annotators`` to an assigned batch and/or raise its overlap to ``overlap``.

    The model chosen: a key of the batch that has c annotators (everyone holding it in
    one of the batch's assignments, deactivated authors of submitted work included) gets
    ``overlap - c`` more. They are drawn from the batch's active annotators, old and
    new, who do not hold the key yet (in any batch) and have no annotation of it; of
    those, the ones holding the fewest of the batch's keys at that point go first (ties:
    the order they joined the batch, then the order given), walking the keys in (layer,
    index) order. So a third annotator added to a batch of two with overlap 2 → 3 gets
    every key, and two annotators added with 2 → 3 share the keys half and half.
    Existing keys never move: what was assigned (and perhaps annotated) stays.

    ``keys_short``: keys that could not reach ``overlap`` because too few annotators
    were free to take them (each of the others already holds the key elsewhere).
    Five queries whatever the number of keys, and one insert of the new rows.
    """
    new_users = list(annotators)
    if len({user.pk for user in new_users}) != len(new_users):
        raise ServiceError(ASSIGNMENT_ANNOTATORS_DUPLICATED)
    for user in new_users:
        if not user_is_annotator(user):
            raise ServiceError(NOT_AN_ACTIVE_ANNOTATOR.format(username=user.get_username()))
    Batch.objects.select_for_update().filter(pk=batch.pk).first()
    in_group = Group.objects.filter(name=ANNOTATOR_GROUP, user=OuterRef("annotator_id"))
    existing = list(
        Assignment.objects.filter(batch=batch)
        .annotate(annotator_active=Exists(in_group) & Q(annotator__is_active=True))
        .order_by("id")
    )
    if not existing:
        raise ServiceError(BATCH_NOT_ASSIGNED)
    present = {assignment.annotator_id for assignment in existing}
    for user in new_users:
        if user.pk in present:
            raise ServiceError(ASSIGNMENT_ALREADY_IN_BATCH.format(username=user.get_username()))
    active = [a for a in existing if a.annotator_active]
    _check_overlap(overlap, len(active) + len(new_users))

    key_ids = list(batch.keys.order_by("layer", "index").values_list("id", flat=True))
    # Check keys of the batch's assignments are not the batch's keys: they count neither
    # as holders nor in anyone's load.
    holders: dict[int, int] = Counter(
        AssignmentKey.objects.filter(assignment__batch=batch, is_check=False).values_list(
            "key_id", flat=True
        )
    )
    current = min((holders.get(key_id, 0) for key_id in key_ids), default=0)
    if overlap < current:
        raise ServiceError(ASSIGNMENT_OVERLAP_LOWERED.format(n=current))

    created = Assignment.objects.bulk_create(
        [Assignment(batch=batch, annotator=user) for user in new_users]
    )
    if not created or created[0].pk is None:  # backends that return no primary keys
        created = list(
            Assignment.objects.filter(batch=batch, annotator__in=new_users).order_by("id")
        )
    # Candidates in the order they joined; each with the batch's keys they hold now.
    candidates = [*active, *created]
    candidate_ids = [a.annotator_id for a in candidates]
    taken = set(
        AssignmentKey.objects.filter(
            assignment__annotator_id__in=candidate_ids, key__batches=batch
        ).values_list("assignment__annotator_id", "key_id")
    ) | set(
        Annotation.objects.filter(annotator_id__in=candidate_ids, key__batches=batch).values_list(
            "annotator_id", "key_id"
        )
    )
    load = Counter(
        AssignmentKey.objects.filter(assignment__in=active, is_check=False).values_list(
            "assignment_id", flat=True
        )
    )
    rank = {assignment.pk: i for i, assignment in enumerate(candidates)}
    rows: list[AssignmentKey] = []
    short = 0
    for key_id in key_ids:
        missing = overlap - holders.get(key_id, 0)
        if missing <= 0:
            continue
        free = [a for a in candidates if (a.annotator_id, key_id) not in taken]
        free.sort(key=lambda a: (load[a.pk], rank[a.pk]))
        for assignment in free[:missing]:
            rows.append(AssignmentKey(assignment=assignment, key_id=key_id))
            load[assignment.pk] += 1
        short += missing > len(free)
    if not rows and new_users:
        raise ServiceError(ASSIGNMENT_NOTHING_TO_ADD.format(overlap=overlap))
    AssignmentKey.objects.bulk_create(rows)
    given: dict[int, list[int]] = defaultdict(list)
    for row in rows:
        given[row.assignment.pk].append(row.key_id)
    check_keys_give(
        grants=[
            _grant(a, given[a.pk], study_id=batch.study_id) for a in candidates if a.pk in given
        ]
    )
    return AssignmentExtendResult(keys_added=len(rows), keys_short=short)


@dataclass(frozen=True)
class ReassignResult:
    keys_moved: int
    keys_skipped: int
    drafts_moved: int


@transaction.atomic
def annotator_deactivate_and_reassign(
    *,
    annotator: User,
    reassign_to: User | None,
    actor: User | None,
    transfer_drafts: bool = False,
) -> ReassignResult:
    """Deactivate ``annotator`` and hand their unfinished keys to ``reassign_to``.

    Unfinished = assigned and not submitted. Submitted work stays with its author and
    keeps counting. Each unfinished key moves into ``reassign_to``'s assignment of the
    same batch (created if needed); a key that ``reassign_to`` already has (or already
    annotated) is skipped, since one person cannot be two of a key's N annotators.

    By default the draft of a moved key stays with its author, for the record, and the new
    annotator starts blank: annotators are blind to each other's work, and
    handing a draft over by default showed the new person the old one's patterns.
    With ``transfer_drafts`` the draft goes along instead, so nothing
    is redone; its audit trail records the hand-over (action ``reassign``).

    ``reassign_to`` may be None only for an annotator with no unfinished key (one who
    never started, or finished everything): there is nothing to hand over.

    Check keys (``annotate.services.check_keys``) are the annotator's own: unfinished ones are
    withdrawn, never handed over, and count in neither figure of the result;
    ``reassign_to`` draws checks of their own for the keys they take.
    """
    account_check_manageable(actor=actor, account=annotator)
    if reassign_to is None:
        return _annotator_deactivate_alone(annotator=annotator)
    if annotator.pk == reassign_to.pk:
        raise ServiceError(REASSIGN_TO_SAME_ANNOTATOR)
    if not annotator.groups.filter(name=ANNOTATOR_GROUP).exists():
        raise ServiceError(NOT_AN_ACTIVE_ANNOTATOR.format(username=annotator.get_username()))
    if not user_is_annotator(reassign_to):
        raise ServiceError(NOT_AN_ACTIVE_ANNOTATOR.format(username=reassign_to.get_username()))

    annotator.is_active = False
    annotator.save(update_fields=["is_active"])

    submitted = Annotation.objects.filter(
        annotator=annotator, key_id=OuterRef("key_id"), status=Annotation.Status.SUBMITTED
    )
    unfinished = list(
        AssignmentKey.objects.filter(assignment__annotator=annotator)
        .exclude(Exists(submitted))
        .values_list(
            "id", "assignment__batch_id", "key_id", "is_check", "assignment__batch__study_id"
        )
        .order_by("id")
    )
    taken = set(
        AssignmentKey.objects.filter(assignment__annotator=reassign_to).values_list(
            "key_id", flat=True
        )
    ) | set(Annotation.objects.filter(annotator=reassign_to).values_list("key_id", flat=True))

    # Check keys are drawn per annotator: an unfinished one is withdrawn, not handed over,
    # and the new annotator draws their own for the regular keys they take.
    regular = [row for row in unfinished if not row[3]]
    targets: dict[int, Assignment] = {}
    studies: dict[int, int] = {}
    moved: list[AssignmentKey] = []
    moved_key_ids: set[int] = set()
    for _, batch_id, key_id, _, study_id in regular:
        if key_id in taken or key_id in moved_key_ids:
            continue
        if batch_id not in targets:
            targets[batch_id], _ = Assignment.objects.get_or_create(
                batch_id=batch_id, annotator=reassign_to
            )
            studies[batch_id] = study_id
        moved.append(AssignmentKey(assignment=targets[batch_id], key_id=key_id))
        moved_key_ids.add(key_id)
    AssignmentKey.objects.bulk_create(moved, ignore_conflicts=True)
    AssignmentKey.objects.filter(id__in=[row[0] for row in unfinished]).delete()
    given: dict[int, list[int]] = defaultdict(list)
    for row in moved:
        given[row.assignment.pk].append(row.key_id)
    check_keys_give(
        grants=[
            _grant(assignment, given[assignment.pk], study_id=studies[batch_id])
            for batch_id, assignment in targets.items()
        ]
    )

    drafts_moved = 0
    if transfer_drafts:
        drafts = Annotation.objects.select_for_update().filter(
            annotator=annotator, key_id__in=moved_key_ids, status=Annotation.Status.DRAFT
        )
        for draft in drafts:
            patterns = pattern_list_for_annotation(annotation_id=draft.pk)
            before = annotation_state(annotation=draft, patterns=patterns)
            draft.annotator = reassign_to
            draft.version += 1
            draft.save(update_fields=["annotator", "version", "updated_at"])
            annotation_record(draft, actor, AnnotationEvent.Action.REASSIGN, before, patterns)
            drafts_moved += 1
    return ReassignResult(
        keys_moved=len(moved),
        keys_skipped=len(regular) - len(moved),
        drafts_moved=drafts_moved,
    )


def _annotator_deactivate_alone(*, annotator: User) -> ReassignResult:
    if not annotator.groups.filter(name=ANNOTATOR_GROUP).exists():
        raise ServiceError(NOT_AN_ACTIVE_ANNOTATOR.format(username=annotator.get_username()))
    submitted = Annotation.objects.filter(
        annotator=annotator, key_id=OuterRef("key_id"), status=Annotation.Status.SUBMITTED
    )
    unfinished = AssignmentKey.objects.filter(assignment__annotator=annotator).exclude(
        Exists(submitted)
    )
    n = unfinished.filter(is_check=False).count()
    if n:
        raise ServiceError(REASSIGN_NEEDED.format(username=annotator.get_username(), n=n))
    annotator.is_active = False
    annotator.save(update_fields=["is_active"])
    # Unfinished check keys are withdrawn, as in a hand-over: nobody takes them over.
    unfinished.filter(is_check=True).delete()
    return ReassignResult(keys_moved=0, keys_skipped=0, drafts_moved=0)
