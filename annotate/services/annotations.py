"""Writes of an annotator's annotation of a key: made on first use, its note and active
time saved, submitted, reopened. Its patterns are ``annotate.services.patterns``'s.

Every service is keyword-only, runs in one transaction, and every service that changes
an annotation or its patterns leaves an ``AnnotationEvent`` with the state before and
after: no annotation is ever lost, and every change can be traced (docs/reliability.md,
"What is guaranteed").

Optimistic concurrency: every write names the annotation ``version`` it
read; a write made from a stale version raises ``StaleVersion`` (the API answers 409 with
the current state) and changes nothing. Each successful write bumps the version by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any, Literal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from ..models import (
    NOTE_MAX_LENGTH,
    Annotation,
    AnnotationEvent,
    AssignmentKey,
    Key,
)
from ..selectors.annotations import PatternView, pattern_list_for_annotation
from . import ServiceError
from .versions import bump, check_writable

NOTE_TOO_LONG = "A note can be at most {n} characters."
STALE_VERSION = (
    "This annotation was changed elsewhere (another tab or device) since you loaded it; "
    "here is its current state."
)


ANNOTATION_IS_SUBMITTED = "This annotation is submitted: reopen it before changing it."
KEY_NOT_ASSIGNED = "This key is not in any of your assignments."


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


class _Keep(Enum):
    KEEP = "keep"


# For a write's ``guideline_version``: leave the annotation's as it is (a write that is
# not an annotator's through the API, a test, a seed).
KEEP = _Keep.KEEP
GuidelineStamp = int | None | Literal[_Keep.KEEP]


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
        "active_seconds": annotation.active_seconds,
        "patterns": [
            {
                "id": pattern.id,
                "description": pattern.description,
                "kind": pattern.kind,
                "prefix_ranks": sorted(pattern.prefix_ranks),
                "client_id": str(pattern.client_id) if pattern.client_id else None,
                "source": pattern.source,
                "rule": pattern.rule,
            }
            for pattern in patterns
        ],
    }


def annotation_record(
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


def annotation_lock(annotation: Annotation) -> Annotation:
    # A row lock on PostgreSQL; SQLite runs write transactions one at a time (IMMEDIATE).
    # Only the annotation's row ("self"): the annotator's row is joined for the audit's
    # username, and locking it too would make a login (last_login) wait on a save.
    return (
        Annotation.objects.select_for_update(of=("self",))
        .select_related("annotator")
        .get(pk=annotation.pk)
    )


def annotation_check_writable(annotation: Annotation, version: int) -> None:
    check_writable(
        annotation,
        version,
        stale=lambda: StaleVersion(annotation=annotation),
        submitted=lambda: AnnotationSubmitted(annotation=annotation),
    )


def annotation_bump(
    annotation: Annotation, *fields: str, guideline_version: GuidelineStamp = KEEP
) -> None:
    """Save ``fields`` with the next version; and the study's guideline version in force
    when the write names one (every annotator write through the API does)."""
    if guideline_version is not KEEP:
        annotation.guideline_version = guideline_version
        fields = (*fields, "guideline_version")
    bump(annotation, *fields)


def _key_holdings(*, key: Key, annotator: User) -> list[bool]:
    """Whether each of the annotator's rows of ``key`` (in live studies) is a check."""
    return list(
        AssignmentKey.objects.filter(
            key=key, assignment__annotator=annotator, key__study__archived=False
        ).values_list("is_check", flat=True)
    )


def annotation_get_or_create_for(
    *, key: Key, annotator: User, guideline_version: GuidelineStamp = KEEP
) -> Annotation:
    """The annotator's annotation of ``key``, created as an empty draft on first use.

    Only for a key in one of the annotator's assignments, and ``KeyNotAssigned``
    otherwise; the annotation of a key they hold only as a check key
    (``annotate.services.check_keys``) is made with ``is_check``. The reads need no transaction; the
    create and its audit record are one (``get_or_create`` inside ``atomic`` would add a
    savepoint and a second read).
    """
    annotation = Annotation.objects.filter(key=key, annotator=annotator).order_by().first()
    holdings = _key_holdings(key=key, annotator=annotator)
    if not holdings:
        raise KeyNotAssigned
    is_check = all(holdings)
    if annotation is not None:
        return annotation
    try:
        return _annotation_create(
            key=key,
            annotator=annotator,
            is_check=is_check,
            guideline_version=None if guideline_version is KEEP else guideline_version,
        )
    except IntegrityError:
        # Another request (a second tab) made it between the read and the create.
        return Annotation.objects.get(key=key, annotator=annotator)


@transaction.atomic
def _annotation_create(
    *, key: Key, annotator: User, guideline_version: int | None, is_check: bool = False
) -> Annotation:
    annotation = Annotation.objects.create(
        key=key, annotator=annotator, guideline_version=guideline_version, is_check=is_check
    )
    annotation_record(annotation, annotator, AnnotationEvent.Action.CREATE, None, patterns=[])
    return annotation


# The most active time one annotation can record (30 days, 2,592,000 s): a client's total
# above it is refused (400), not stored.
MAX_ACTIVE_SECONDS = 30 * 24 * 3600.0
ACTIVE_SECONDS_OUT_OF_RANGE = f"Active time must be 0 to {MAX_ACTIVE_SECONDS:.0f} seconds."


def _active_total(annotation: Annotation, seconds: float | None) -> float:
    """The annotation's active time once a write that carries ``seconds`` (the
    workspace's running total; None: none sent) is made: the largest total it has been
    sent, so that a retried or reordered write cannot lower it or count twice."""
    if seconds is None:
        return annotation.active_seconds
    if not 0.0 <= seconds <= MAX_ACTIVE_SECONDS:
        raise ServiceError(ACTIVE_SECONDS_OUT_OF_RANGE)
    return max(annotation.active_seconds, seconds)


@transaction.atomic
def annotation_save(
    *,
    annotation: Annotation,
    actor: User,
    note: str,
    version: int,
    active_seconds: float | None = None,
    guideline_version: GuidelineStamp = KEEP,
) -> Annotation:
    """Save the note (autosave) and the active time it carries, as one versioned write
    with its audit record.

    A save that changes nothing (the note it has, no more active time than recorded) is
    a no-op, so a retried request that already went through answers with the current
    state instead of 409. A save of the same note with more active time is a write like
    any (the workspace sends one when the annotator leaves a draft). A submitted
    annotation's active time is final: a save that would change only that is a no-op
    too, and one that changes its note is refused (409) as before.
    """
    if len(note) > NOTE_MAX_LENGTH:
        raise ServiceError(NOTE_TOO_LONG.format(n=NOTE_MAX_LENGTH), code="note_too_long")
    annotation = annotation_lock(annotation)
    seconds = _active_total(annotation, active_seconds)
    if annotation.note == note and (
        seconds == annotation.active_seconds or annotation.status == Annotation.Status.SUBMITTED
    ):
        return annotation
    annotation_check_writable(annotation, version)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    annotation.note = note
    annotation.active_seconds = seconds
    annotation_bump(annotation, "note", "active_seconds", guideline_version=guideline_version)
    annotation_record(annotation, actor, AnnotationEvent.Action.SAVE, before, patterns)
    return annotation


@transaction.atomic
def annotation_submit(
    *,
    annotation: Annotation,
    actor: User,
    version: int,
    active_seconds: float | None = None,
    guideline_version: GuidelineStamp = KEEP,
) -> Annotation:
    """Mark the annotation submitted, with the final active time it carries (kept as in
    ``annotation_save``), in one versioned write and its audit record.

    Zero patterns is allowed: a key whose prefixes share no pattern is a legitimate finding
    (all its prefixes count as not-covered in Figure 2). Submitting a submitted annotation
    is a no-op, so a retried submit is safe; a stale one (409) records nothing, its active
    time included.
    """
    annotation = annotation_lock(annotation)
    seconds = _active_total(annotation, active_seconds)
    if annotation.status == Annotation.Status.SUBMITTED:
        return annotation
    annotation_check_writable(annotation, version)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    annotation.status = Annotation.Status.SUBMITTED
    annotation.submitted_at = timezone.now()
    annotation.active_seconds = seconds
    annotation_bump(
        annotation,
        "status",
        "submitted_at",
        "active_seconds",
        guideline_version=guideline_version,
    )
    annotation_record(annotation, actor, AnnotationEvent.Action.SUBMIT, before, patterns)
    return annotation


@transaction.atomic
def annotation_reopen(
    *, annotation: Annotation, actor: User, version: int, guideline_version: GuidelineStamp = KEEP
) -> Annotation:
    """Back to draft so that it can be changed. Reopening a draft is a no-op (retries)."""
    annotation = annotation_lock(annotation)
    if annotation.status == Annotation.Status.DRAFT:
        return annotation
    if annotation.version != version:
        raise StaleVersion(annotation=annotation)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    annotation.status = Annotation.Status.DRAFT
    annotation.submitted_at = None
    annotation_bump(annotation, "status", "submitted_at", guideline_version=guideline_version)
    annotation_record(annotation, actor, AnnotationEvent.Action.REOPEN, before, patterns)
    return annotation
