"""Writes of the annotation domain.

Every service is keyword-only, runs in one transaction, and every service that changes
an annotation or its patterns leaves an ``AnnotationEvent`` with the state before and
after (DESIGN §9: no annotation is ever lost, and every change can be traced).

Optimistic concurrency (DESIGN §4.2): every write names the annotation ``version`` it
read; a write made from a stale version raises ``StaleVersion`` (the API answers 409 with
the current state) and changes nothing. Each successful write bumps the version by one.
"""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group, User
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from .models import (
    NOTE_MAX_LENGTH,
    PATTERN_DESCRIPTION_MAX_LENGTH,
    Annotation,
    AnnotationEvent,
    Assignment,
    AssignmentKey,
    Batch,
    Key,
    Pattern,
    Study,
    TriggerPrefix,
)
from .permissions import ANNOTATOR_GROUP, user_is_annotator
from .selectors import PatternView, pattern_list_for_annotation

# The 3-prefix rule (Geva et al. 2021, §3.1): a pattern must occur in at least 3 of the
# key's top trigger prefixes.
PATTERN_MIN_PREFIXES = 3

PATTERN_NEEDS_THREE_PREFIXES = "A pattern must cover at least 3 of the key's trigger prefixes."
PATTERN_PREFIX_OF_ANOTHER_KEY = "A pattern can only cover trigger prefixes of its own key."
PATTERN_DUPLICATE_PREFIXES = "A pattern cannot cover the same trigger prefix twice."
PATTERN_NEEDS_DESCRIPTION = "A pattern needs a description."
PATTERN_DESCRIPTION_TOO_LONG = "A pattern's description can be at most {n} characters."
NOTE_TOO_LONG = "A note can be at most {n} characters."
PATTERN_KIND_UNKNOWN = "A pattern's kind must be shallow, semantic or shallow+semantic."
STALE_VERSION = (
    "This annotation was changed elsewhere (another tab or device) since you loaded it; "
    "here is its current state."
)
ANNOTATION_IS_SUBMITTED = "This annotation is submitted: reopen it before changing it."
KEY_NOT_ASSIGNED = "This key is not in any of your assignments."
BATCH_NAME_TAKEN = "This study already has a batch with this name."
BATCH_NEEDS_KEYS = "A batch needs at least one key."
BATCH_KEY_OF_ANOTHER_STUDY = "Every key of a batch must belong to the batch's study."
BATCH_LAYERS_EMPTY = "The study has no keys in layer(s): {layers}."
BATCH_SAMPLE_TOO_LARGE = "Cannot sample {n} keys: only {available} keys are available."
BATCH_KEYS_UNKNOWN = "The study has no key(s): {keys}."
BATCH_KEYS_DUPLICATED = "The list names key(s) more than once: {keys}."
BATCH_ALREADY_ASSIGNED = (
    "This batch is already assigned; create another batch to assign its keys again."
)
ASSIGNMENT_OVERLAP_OUT_OF_RANGE = (
    "The overlap must be between 1 and the number of annotators ({n})."
)
ASSIGNMENT_ANNOTATORS_DUPLICATED = "Each annotator can be named only once."
NOT_AN_ACTIVE_ANNOTATOR = "{username} is not an active annotator."
REASSIGN_TO_SAME_ANNOTATOR = (
    "Unfinished keys cannot be reassigned to the annotator being deactivated."
)


class ServiceError(Exception):
    """A domain rule refused the write. ``message`` is meant for people (API: 400);
    ``code`` names the rule for clients that translate it (annotate.api_errors)."""

    def __init__(self, message: str, *, code: str = "rule_violation") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class KeyNotAssigned(ServiceError):
    """The key is not in one of the annotator's assignments (API: 404, no leak)."""

    def __init__(self) -> None:
        super().__init__(KEY_NOT_ASSIGNED)


class AnnotationConflict(ServiceError):
    """The write does not apply to the annotation as it is now (API: 409 + current state)."""

    def __init__(self, message: str, *, code: str, annotation: Annotation) -> None:
        super().__init__(message, code=code)
        self.annotation = annotation


class StaleVersion(AnnotationConflict):
    def __init__(self, *, annotation: Annotation) -> None:
        super().__init__(STALE_VERSION, code="stale_version", annotation=annotation)


class AnnotationSubmitted(AnnotationConflict):
    def __init__(self, *, annotation: Annotation) -> None:
        super().__init__(
            ANNOTATION_IS_SUBMITTED, code="annotation_submitted", annotation=annotation
        )


# --- accounts ---------------------------------------------------------------------------


@transaction.atomic
def user_create_annotator(
    *, username: str, password: str | None, is_active: bool = True
) -> AbstractUser:
    """Create (or return) an annotator account; an existing user gains the role."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username, defaults={"is_active": is_active})
    if created:
        if password is None:
            user.set_unusable_password()
        else:
            user.set_password(password)
        user.save()
    group, _ = Group.objects.get_or_create(name=ANNOTATOR_GROUP)
    user.groups.add(group)
    return user


# --- studies --------------------------------------------------------------------------


@transaction.atomic
def study_update(*, study: Study, show_value_tokens: bool | None = None) -> Study:
    """The study's settings that an admin may change after mining (the rest is mined)."""
    if show_value_tokens is not None:
        study.show_value_tokens = show_value_tokens
        study.save(update_fields=["show_value_tokens"])
    return study


# --- batches ----------------------------------------------------------------------------


@transaction.atomic
def batch_create(
    *, study: Study, name: str, keys: Sequence[Key], created_by: User | None = None
) -> Batch:
    """A batch of the given keys of ``study``; the mode-specific services below choose them."""
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


# --- assignments ------------------------------------------------------------------------


@transaction.atomic
def assignment_create(*, batch: Batch, annotator: User) -> Assignment:
    """Give every key of ``batch`` to ``annotator``. Idempotent: a rerun adds nothing."""
    assignment, _ = Assignment.objects.get_or_create(batch=batch, annotator=annotator)
    key_ids = batch.keys.values_list("id", flat=True)
    AssignmentKey.objects.bulk_create(
        [AssignmentKey(assignment=assignment, key_id=key_id) for key_id in key_ids],
        ignore_conflicts=True,
    )
    return assignment


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
    users = list(annotators)
    if len({user.pk for user in users}) != len(users):
        raise ServiceError(ASSIGNMENT_ANNOTATORS_DUPLICATED)
    if not 1 <= overlap <= len(users):
        raise ServiceError(ASSIGNMENT_OVERLAP_OUT_OF_RANGE.format(n=len(users)))
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
    return assignments


@dataclass(frozen=True)
class ReassignResult:
    keys_moved: int
    keys_skipped: int
    drafts_moved: int


@transaction.atomic
def annotator_deactivate_and_reassign(
    *,
    annotator: User,
    reassign_to: User,
    actor: User | None,
    transfer_drafts: bool = False,
) -> ReassignResult:
    """Deactivate ``annotator`` and hand their unfinished keys to ``reassign_to``.

    Unfinished = assigned and not submitted. Submitted work stays with its author and
    keeps counting. Each unfinished key moves into ``reassign_to``'s assignment of the
    same batch (created if needed); a key that ``reassign_to`` already has (or already
    annotated) is skipped, since one person cannot be two of a key's N annotators.

    By default the draft of a moved key stays with its author, for the record, and the new
    annotator starts blank: annotators are blind to each other's work (DESIGN §4.1), and
    handing a draft over by default showed the new person the old one's patterns
    (issue 11, item 9). With ``transfer_drafts`` the draft goes along instead, so nothing
    is redone; its audit trail records the hand-over (action ``reassign``).
    """
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
        .values_list("id", "assignment__batch_id", "key_id")
        .order_by("id")
    )
    taken = set(
        AssignmentKey.objects.filter(assignment__annotator=reassign_to).values_list(
            "key_id", flat=True
        )
    ) | set(Annotation.objects.filter(annotator=reassign_to).values_list("key_id", flat=True))

    targets: dict[int, Assignment] = {}
    moved: list[AssignmentKey] = []
    moved_key_ids: set[int] = set()
    for _, batch_id, key_id in unfinished:
        if key_id in taken or key_id in moved_key_ids:
            continue
        if batch_id not in targets:
            targets[batch_id], _ = Assignment.objects.get_or_create(
                batch_id=batch_id, annotator=reassign_to
            )
        moved.append(AssignmentKey(assignment=targets[batch_id], key_id=key_id))
        moved_key_ids.add(key_id)
    AssignmentKey.objects.bulk_create(moved, ignore_conflicts=True)
    AssignmentKey.objects.filter(id__in=[row_id for row_id, _, _ in unfinished]).delete()

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
            _record(draft, actor, AnnotationEvent.Action.REASSIGN, before, patterns)
            drafts_moved += 1
    return ReassignResult(
        keys_moved=len(moved),
        keys_skipped=len(unfinished) - len(moved),
        drafts_moved=drafts_moved,
    )


# --- annotations ------------------------------------------------------------------------


def annotation_state(
    *, annotation: Annotation, patterns: Sequence[PatternView] | None = None
) -> dict[str, Any]:
    """The annotation as JSON, as the audit trail stores it (before/after).

    From ``patterns`` (as ``pattern_list_for_annotation`` reads them) when the caller
    already holds them, else one query. The writes below read the patterns once, under
    the row lock, and derive the state after from the state before and the change they
    made: the same JSON as reading it back (``tests/unit/annotate`` checks), without
    reading it back.
    """
    if patterns is None:
        patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    return {
        "annotator": annotation.annotator.get_username(),
        "status": annotation.status,
        "note": annotation.note,
        "version": annotation.version,
        "patterns": [
            {
                "id": pattern.id,
                "description": pattern.description,
                "kind": pattern.kind,
                "prefix_ranks": sorted(pattern.prefix_ranks),
                "client_id": str(pattern.client_id) if pattern.client_id else None,
            }
            for pattern in patterns
        ],
    }


def _record(
    annotation: Annotation,
    actor: User | None,
    action: str,
    before: dict[str, Any] | None,
    patterns: Sequence[PatternView] | None = None,
) -> None:
    """The audit record of a change; ``patterns``: the patterns after it, when known."""
    AnnotationEvent.objects.create(
        annotation=annotation,
        actor=actor,
        action=action,
        before=before,
        after=annotation_state(annotation=annotation, patterns=patterns),
    )


def _lock(annotation: Annotation) -> Annotation:
    # A row lock on PostgreSQL; SQLite runs write transactions one at a time (IMMEDIATE).
    # Only the annotation's row ("self"): the annotator's row is joined for the audit's
    # username, and locking it too would make a login (last_login) wait on a save.
    return (
        Annotation.objects.select_for_update(of=("self",))
        .select_related("annotator")
        .get(pk=annotation.pk)
    )


def _check_writable(annotation: Annotation, version: int) -> None:
    if annotation.version != version:
        raise StaleVersion(annotation=annotation)
    if annotation.status == Annotation.Status.SUBMITTED:
        raise AnnotationSubmitted(annotation=annotation)


def _bump(annotation: Annotation, *fields: str) -> None:
    annotation.version += 1
    annotation.save(update_fields=[*fields, "version", "updated_at"])


def _key_is_assigned(*, key: Key, annotator: User) -> bool:
    return AssignmentKey.objects.filter(key=key, assignment__annotator=annotator).exists()


def annotation_get_or_create_for(*, key: Key, annotator: User) -> Annotation:
    """The annotator's annotation of ``key``, created as an empty draft on first use.

    Only for a key in one of the annotator's assignments (``KeyNotAssigned`` otherwise).
    The reads need no transaction; the create and its audit record are one
    (``get_or_create`` inside ``atomic`` would add a savepoint and a second read).
    """
    if not _key_is_assigned(key=key, annotator=annotator):
        raise KeyNotAssigned
    annotation = Annotation.objects.filter(key=key, annotator=annotator).order_by().first()
    if annotation is not None:
        return annotation
    try:
        return _annotation_create(key=key, annotator=annotator)
    except IntegrityError:
        # Another request (a second tab) made it between the read and the create.
        return Annotation.objects.get(key=key, annotator=annotator)


@transaction.atomic
def _annotation_create(*, key: Key, annotator: User) -> Annotation:
    annotation = Annotation.objects.create(key=key, annotator=annotator)
    _record(annotation, annotator, AnnotationEvent.Action.CREATE, None, patterns=[])
    return annotation


@transaction.atomic
def annotation_save(*, annotation: Annotation, actor: User, note: str, version: int) -> Annotation:
    """Save the note (autosave). Saving the note it already has is a no-op, so a retried
    request that already went through answers with the current state instead of 409."""
    if len(note) > NOTE_MAX_LENGTH:
        raise ServiceError(NOTE_TOO_LONG.format(n=NOTE_MAX_LENGTH), code="note_too_long")
    annotation = _lock(annotation)
    if annotation.note == note:
        return annotation
    _check_writable(annotation, version)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    annotation.note = note
    _bump(annotation, "note")
    _record(annotation, actor, AnnotationEvent.Action.SAVE, before, patterns)
    return annotation


def _validated_prefixes(
    annotation: Annotation, prefixes: Sequence[TriggerPrefix]
) -> list[TriggerPrefix]:
    """The 3-prefix rule: ≥ 3 distinct prefixes, all of the annotation's own key."""
    if any(prefix.key_id != annotation.key_id for prefix in prefixes):
        raise ServiceError(PATTERN_PREFIX_OF_ANOTHER_KEY, code="pattern_prefix_of_another_key")
    if len({prefix.pk for prefix in prefixes}) != len(prefixes):
        raise ServiceError(PATTERN_DUPLICATE_PREFIXES, code="pattern_duplicate_prefixes")
    if len(prefixes) < PATTERN_MIN_PREFIXES:
        raise ServiceError(PATTERN_NEEDS_THREE_PREFIXES, code="pattern_needs_three_prefixes")
    return list(prefixes)


def _validated_description(description: str) -> str:
    description = description.strip()
    if not description:
        raise ServiceError(PATTERN_NEEDS_DESCRIPTION, code="pattern_needs_description")
    if len(description) > PATTERN_DESCRIPTION_MAX_LENGTH:
        raise ServiceError(
            PATTERN_DESCRIPTION_TOO_LONG.format(n=PATTERN_DESCRIPTION_MAX_LENGTH),
            code="pattern_description_too_long",
        )
    return description


def _validated_kind(kind: str) -> str:
    if kind not in Pattern.Kind.values:
        raise ServiceError(PATTERN_KIND_UNKNOWN, code="pattern_kind_unknown")
    return kind


@dataclass(frozen=True)
class PatternCreateResult:
    annotation: Annotation
    pattern: Pattern
    created: bool
    # The annotation's patterns after the create, as the audit and the API show them.
    patterns: list[PatternView]


@transaction.atomic
def pattern_create(
    *,
    annotation: Annotation,
    actor: User,
    description: str,
    kind: str,
    prefixes: Sequence[TriggerPrefix],
    version: int,
    client_id: uuid.UUID | None = None,
) -> PatternCreateResult:
    """Add a pattern. A retried create with the same ``client_id`` returns the pattern the
    first attempt made (``created=False``) instead of a duplicate or a 409.

    Six queries whatever the number of patterns and prefixes: lock, read the patterns
    (for the retry check, the order and the audit's before/after), insert the pattern,
    insert its prefix links in one statement, bump the version, insert the audit record.
    """
    annotation = _lock(annotation)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    if client_id is not None and any(p.client_id == client_id for p in patterns):
        existing = Pattern.objects.get(annotation=annotation, client_id=client_id)
        return PatternCreateResult(
            annotation=annotation, pattern=existing, created=False, patterns=patterns
        )
    _check_writable(annotation, version)
    description = _validated_description(description)
    kind = _validated_kind(kind)
    prefixes = _validated_prefixes(annotation, prefixes)
    before = annotation_state(annotation=annotation, patterns=patterns)
    pattern = Pattern.objects.create(
        annotation=annotation,
        description=description,
        kind=kind,
        order=max((p.order for p in patterns), default=-1) + 1,
        client_id=client_id,
    )
    # The pattern is new: nothing to diff against, so one INSERT of its links rather than
    # the SELECT + INSERT of ``pattern.prefixes.set()``. No m2m_changed receivers exist.
    links = Pattern.prefixes.through
    links.objects.bulk_create(
        [links(pattern_id=pattern.pk, triggerprefix_id=prefix.pk) for prefix in prefixes]
    )
    _bump(annotation)
    after = [
        *patterns,
        PatternView(
            id=pattern.pk,
            description=pattern.description,
            kind=pattern.kind,
            prefix_ranks=sorted(prefix.rank for prefix in prefixes),
            order=pattern.order,
            client_id=pattern.client_id,
        ),
    ]
    _record(annotation, actor, AnnotationEvent.Action.PATTERN_CREATE, before, after)
    return PatternCreateResult(annotation=annotation, pattern=pattern, created=True, patterns=after)


@transaction.atomic
def pattern_update(
    *,
    pattern: Pattern,
    actor: User,
    version: int,
    description: str | None = None,
    kind: str | None = None,
    prefixes: Sequence[TriggerPrefix] | None = None,
) -> Annotation:
    """Change a pattern's description, kind and/or prefixes (``None``: leave as is)."""
    annotation = _lock(pattern.annotation)
    _check_writable(annotation, version)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    fields = []
    changes: dict[str, Any] = {}
    if description is not None:
        pattern.description = changes["description"] = _validated_description(description)
        fields.append("description")
    if kind is not None:
        pattern.kind = changes["kind"] = _validated_kind(kind)
        fields.append("kind")
    if prefixes is not None:
        valid = _validated_prefixes(annotation, prefixes)
        pattern.prefixes.set(valid)
        changes["prefix_ranks"] = sorted(prefix.rank for prefix in valid)
    pattern.save(update_fields=[*fields, "updated_at"])
    _bump(annotation)
    after = [replace(p, **changes) if p.id == pattern.pk else p for p in patterns]
    _record(annotation, actor, AnnotationEvent.Action.PATTERN_UPDATE, before, after)
    return annotation


@transaction.atomic
def pattern_delete(*, pattern: Pattern, actor: User, version: int) -> Annotation:
    annotation = _lock(pattern.annotation)
    _check_writable(annotation, version)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    deleted_id = pattern.pk
    pattern.delete()
    _bump(annotation)
    after = [p for p in patterns if p.id != deleted_id]
    _record(annotation, actor, AnnotationEvent.Action.PATTERN_DELETE, before, after)
    return annotation


@transaction.atomic
def annotation_submit(*, annotation: Annotation, actor: User, version: int) -> Annotation:
    """Mark the annotation submitted.

    Zero patterns is allowed: a key whose prefixes share no pattern is a legitimate finding
    (all its prefixes count as not-covered in Figure 2). Submitting a submitted annotation
    is a no-op, so a retried submit is safe.
    """
    annotation = _lock(annotation)
    if annotation.status == Annotation.Status.SUBMITTED:
        return annotation
    _check_writable(annotation, version)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    annotation.status = Annotation.Status.SUBMITTED
    annotation.submitted_at = timezone.now()
    _bump(annotation, "status", "submitted_at")
    _record(annotation, actor, AnnotationEvent.Action.SUBMIT, before, patterns)
    return annotation


@transaction.atomic
def annotation_reopen(*, annotation: Annotation, actor: User, version: int) -> Annotation:
    """Back to draft so that it can be changed. Reopening a draft is a no-op (retries)."""
    annotation = _lock(annotation)
    if annotation.status == Annotation.Status.DRAFT:
        return annotation
    if annotation.version != version:
        raise StaleVersion(annotation=annotation)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    annotation.status = Annotation.Status.DRAFT
    annotation.submitted_at = None
    _bump(annotation, "status", "submitted_at")
    _record(annotation, actor, AnnotationEvent.Action.REOPEN, before, patterns)
    return annotation
