"""Writes of the gold annotations: a curator's annotation of a key
(docs/annotation.md, "Review and gold").

The same rules as an annotator's writes (``annotate.services``): a pattern covers at least
3 distinct prefixes of the key, has a description and a kind; every write names the
version it read (0 while the key has no gold: the first write makes it, at version 1),
a stale one raises ``GoldStaleVersion`` and a write to a submitted gold other than its
reopening raises ``GoldSubmitted`` (the API answers 409 with the current gold); each
write bumps the version and records the curator who made it. Each service is one
transaction, under a row lock on the gold annotation.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count, Max
from django.utils import timezone

from ..models import NOTE_MAX_LENGTH, GoldAnnotation, GoldPattern, Key, Pattern, TriggerPrefix
from . import ServiceError
from .annotations import NOTE_TOO_LONG
from .patterns import (
    validated_description,
    validated_kind,
    validated_pattern_count,
    validated_prefixes,
)
from .versions import bump, check_writable

GOLD_STALE_VERSION = (
    "This gold annotation was changed elsewhere (another curator, tab or device) since you "
    "loaded it; here is its current state."
)
GOLD_IS_SUBMITTED = "This gold annotation is submitted: reopen it before changing it."
SOURCE_OF_ANOTHER_KEY = "An adopted pattern must be a pattern of an annotation of this key."


class GoldConflict(ServiceError):
    """The write does not apply to the gold as it is now (API: 409 + the current gold;
    ``gold`` None: the key has no gold yet)."""

    def __init__(self, message: str, *, code: str, gold: GoldAnnotation | None) -> None:
        super().__init__(message, code=code)
        self.gold = gold


class GoldStaleVersion(GoldConflict):
    def __init__(self, *, gold: GoldAnnotation | None) -> None:
        super().__init__(GOLD_STALE_VERSION, code="stale_version", gold=gold)


class GoldSubmitted(GoldConflict):
    def __init__(self, *, gold: GoldAnnotation) -> None:
        super().__init__(GOLD_IS_SUBMITTED, code="gold_submitted", gold=gold)


def _lock(key_id: int) -> GoldAnnotation | None:
    # As annotate.services.annotations.annotation_lock: only the gold's own row.
    return (
        GoldAnnotation.objects.select_for_update(of=("self",))
        .select_related("curator")
        .filter(key_id=key_id)
        .first()
    )


@dataclass(frozen=True)
class _Locked:
    gold: GoldAnnotation
    created: bool  # made by this write, at version 1: nothing to check, nothing to bump


def _gold_for_write(*, key: Key, actor: User, version: int) -> _Locked:
    """The key's gold, locked; made (version 1) when the key has none and the write names
    version 0."""
    gold = _lock(key.pk)
    if gold is None:
        if version != 0:
            raise GoldStaleVersion(gold=None)
        try:
            with transaction.atomic():
                return _Locked(GoldAnnotation.objects.create(key=key, curator=actor), True)
        except IntegrityError:
            # Another request made it between the read and the create.
            gold = _lock(key.pk)
            assert gold is not None
    return _Locked(gold, False)


def _check(gold: GoldAnnotation, version: int) -> None:
    check_writable(
        gold,
        version,
        stale=lambda: GoldStaleVersion(gold=gold),
        submitted=lambda: GoldSubmitted(gold=gold),
    )


def _written(locked: _Locked, actor: User, *fields: str) -> GoldAnnotation:
    """Save ``fields`` and who wrote them; a bump unless this write made the gold."""
    gold = locked.gold
    gold.curator = actor
    if locked.created:
        gold.save(update_fields=[*fields, "curator", "updated_at"])
    else:
        bump(gold, *fields, "curator")
    return gold


@transaction.atomic
def gold_update(
    *, key: Key, actor: User, version: int, note: str | None = None, is_check: bool | None = None
) -> GoldAnnotation:
    """Change the gold's note and/or whether it is a check key (``None``: leave as is)."""
    if note is not None and len(note) > NOTE_MAX_LENGTH:
        raise ServiceError(NOTE_TOO_LONG.format(n=NOTE_MAX_LENGTH), code="note_too_long")
    locked = _gold_for_write(key=key, actor=actor, version=version)
    gold = locked.gold
    if not locked.created:
        _check(gold, version)
    fields = []
    if note is not None:
        gold.note = note
        fields.append("note")
    if is_check is not None:
        gold.is_check = is_check
        fields.append("is_check")
    return _written(locked, actor, *fields)


@dataclass(frozen=True)
class GoldPatternCreateResult:
    gold: GoldAnnotation
    pattern: GoldPattern
    created: bool


@transaction.atomic
def gold_pattern_create(
    *,
    key: Key,
    actor: User,
    version: int,
    description: str,
    kind: str,
    prefixes: Sequence[TriggerPrefix],
    client_id: uuid.UUID | None = None,
    source_pattern: Pattern | None = None,
) -> GoldPatternCreateResult:
    """Add a pattern to the key's gold: written by the curator, or adopted from an
    annotator's ``source_pattern`` (a pattern of this key; its annotator is remembered).
    A retried create with the same ``client_id`` returns the pattern the first attempt
    made (``created=False``)."""
    locked = _gold_for_write(key=key, actor=actor, version=version)
    gold = locked.gold
    if client_id is not None and not locked.created:
        existing = GoldPattern.objects.filter(gold=gold, client_id=client_id).first()
        if existing is not None:
            return GoldPatternCreateResult(gold=gold, pattern=existing, created=False)
    if not locked.created:
        _check(gold, version)
    description = validated_description(description)
    kind = validated_kind(kind)
    prefixes = validated_prefixes(key.pk, prefixes)
    if source_pattern is not None and source_pattern.annotation.key_id != key.pk:
        raise ServiceError(SOURCE_OF_ANOTHER_KEY)
    counted = GoldPattern.objects.filter(gold=gold).aggregate(n=Count("id"), last=Max("order"))
    validated_pattern_count(counted["n"])
    pattern = GoldPattern.objects.create(
        gold=gold,
        description=description,
        kind=kind,
        order=(counted["last"] or 0) + 1,
        client_id=client_id,
        source=GoldPattern.Source.WRITTEN if source_pattern is None else GoldPattern.Source.ADOPTED,
        source_pattern=source_pattern,
        source_annotator_id=None
        if source_pattern is None
        else source_pattern.annotation.annotator_id,
    )
    links = GoldPattern.prefixes.through
    links.objects.bulk_create(
        [links(goldpattern_id=pattern.pk, triggerprefix_id=prefix.pk) for prefix in prefixes]
    )
    return GoldPatternCreateResult(gold=_written(locked, actor), pattern=pattern, created=True)


@transaction.atomic
def gold_pattern_update(
    *,
    pattern: GoldPattern,
    actor: User,
    version: int,
    description: str | None = None,
    kind: str | None = None,
    prefixes: Sequence[TriggerPrefix] | None = None,
) -> GoldAnnotation:
    """Change a gold pattern (``None``: leave as is). An adopted pattern stays adopted,
    with its source: the curator edited what they adopted."""
    gold = _lock(pattern.gold.key_id)
    assert gold is not None  # the pattern's gold exists: it is the pattern's
    _check(gold, version)
    fields = []
    if description is not None:
        pattern.description = validated_description(description)
        fields.append("description")
    if kind is not None:
        pattern.kind = validated_kind(kind)
        fields.append("kind")
    if prefixes is not None:
        pattern.prefixes.set(validated_prefixes(gold.key_id, prefixes))
    pattern.save(update_fields=[*fields, "updated_at"])
    return _written(_Locked(gold, False), actor)


@transaction.atomic
def gold_pattern_delete(*, pattern: GoldPattern, actor: User, version: int) -> GoldAnnotation:
    gold = _lock(pattern.gold.key_id)
    assert gold is not None
    _check(gold, version)
    pattern.delete()
    return _written(_Locked(gold, False), actor)


@transaction.atomic
def gold_submit(*, key: Key, actor: User, version: int) -> GoldAnnotation:
    """Save the gold annotation as submitted (zero patterns is allowed, as for an
    annotator). Submitting a submitted gold is a no-op, so a retried submit is safe."""
    locked = _gold_for_write(key=key, actor=actor, version=version)
    gold = locked.gold
    if gold.status == GoldAnnotation.Status.SUBMITTED:
        return gold
    if not locked.created:
        _check(gold, version)
    gold.status = GoldAnnotation.Status.SUBMITTED
    gold.submitted_at = timezone.now()
    return _written(locked, actor, "status", "submitted_at")


@transaction.atomic
def gold_reopen(*, key: Key, actor: User, version: int) -> GoldAnnotation:
    """Back to draft. Reopening a draft is a no-op (retries)."""
    locked = _gold_for_write(key=key, actor=actor, version=version)
    gold = locked.gold
    if gold.status == GoldAnnotation.Status.DRAFT:
        return gold
    if gold.version != version:
        raise GoldStaleVersion(gold=gold)
    gold.status = GoldAnnotation.Status.DRAFT
    gold.submitted_at = None
    return _written(locked, actor, "status", "submitted_at")
