"""Writes of the gold annotations: a curator's annotation of a key
(docs/annotation.md, "Review and gold").

The same rules as an annotator's writes: a gold pattern is written through the same path
as an annotator's (``annotate.services.patterns``): it covers at least 3 distinct
prefixes of the key, has a description and a kind; every write names the
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
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from ..models import NOTE_MAX_LENGTH, GoldAnnotation, GoldPattern, Key, Pattern, TriggerPrefix
from ..selectors.annotations import PatternView
from ..selectors.review import GoldPatternView, gold_patterns
from . import ServiceError
from .annotations import NOTE_TOO_LONG
from .patterns import (
    PatternOwner,
    owned_pattern_create,
    owned_pattern_delete,
    owned_pattern_update,
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


class GoldPatterns(PatternOwner):
    """A key's gold annotation as the owner of its patterns, locked (``_gold_for_write``)."""

    model = GoldPattern
    owner_field = "gold"
    link_column = "goldpattern_id"
    row: GoldAnnotation

    def __init__(self, locked: _Locked, *, actor: User) -> None:
        gold = locked.gold
        super().__init__(gold, [] if locked.created else list(gold_patterns(gold_id=gold.pk)))
        self.locked = locked
        self.actor = actor

    @property
    def key_id(self) -> int:
        return self.row.key_id

    def check(self, version: int) -> None:
        if not self.locked.created:
            _check(self.row, version)

    def state(self, patterns: Sequence[PatternView]) -> dict[str, Any]:
        return {}

    def bump(self) -> None:
        _written(self.locked, self.actor)

    def record(
        self,
        action: str,
        before: dict[str, Any],
        after: Sequence[PatternView],
        *,
        source: dict[str, Any] | None = None,
    ) -> None:
        pass

    def view_of(self, pattern: Pattern | GoldPattern, ranks: list[int]) -> PatternView:
        assert isinstance(pattern, GoldPattern)
        return GoldPatternView(
            id=pattern.pk,
            description=pattern.description,
            kind=pattern.kind,
            prefix_ranks=ranks,
            order=pattern.order,
            client_id=pattern.client_id,
            source=pattern.source,
            source_annotator=None
            if pattern.source_annotator is None
            else pattern.source_annotator.get_username(),
            source_pattern_id=pattern.source_pattern_id,
        )


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
    if source_pattern is not None and source_pattern.annotation.key_id != key.pk:
        raise ServiceError(SOURCE_OF_ANOTHER_KEY)
    owner = GoldPatterns(_gold_for_write(key=key, actor=actor, version=version), actor=actor)
    pattern, created, _ = owned_pattern_create(
        owner,
        actor=actor,
        version=version,
        description=description,
        kind=kind,
        prefixes=prefixes,
        client_id=client_id,
        source=GoldPattern.Source.WRITTEN if source_pattern is None else GoldPattern.Source.ADOPTED,
        source_pattern=source_pattern,
        source_annotator=None if source_pattern is None else source_pattern.annotation.annotator,
    )
    assert isinstance(pattern, GoldPattern)
    return GoldPatternCreateResult(gold=owner.row, pattern=pattern, created=created)


def _locked_gold_of(pattern: GoldPattern) -> _Locked:
    gold = _lock(pattern.gold.key_id)
    assert gold is not None  # the pattern's gold exists: it is the pattern's
    return _Locked(gold, False)


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
    owner = GoldPatterns(_locked_gold_of(pattern), actor=actor)
    owned_pattern_update(
        owner,
        pattern,
        actor=actor,
        version=version,
        description=description,
        kind=kind,
        prefixes=prefixes,
    )
    return owner.row


@transaction.atomic
def gold_pattern_delete(*, pattern: GoldPattern, actor: User, version: int) -> GoldAnnotation:
    owner = GoldPatterns(_locked_gold_of(pattern), actor=actor)
    owned_pattern_delete(owner, pattern, actor=actor, version=version)
    return owner.row


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
