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

Every write that changes the gold leaves a ``GoldEvent``, as an annotator's leaves an
``AnnotationEvent``: who, when, the action, the gold's state before and after
(``gold_state``), and for an adoption the annotator's annotation and pattern it came
from (docs/annotation.md, "The audit trail").
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from ..models import (
    NOTE_MAX_LENGTH,
    GoldAnnotation,
    GoldEvent,
    GoldPattern,
    Key,
    Pattern,
    TriggerPrefix,
)
from ..selectors.annotations import PatternView
from ..selectors.review import GoldPatternView, gold_patterns
from . import ServiceError
from .annotations import NOTE_TOO_LONG
from .patterns import (
    KEEP_RULE,
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


def gold_state(*, gold: GoldAnnotation, patterns: Sequence[PatternView]) -> dict[str, Any]:
    """The gold as JSON, as its audit trail stores it (before/after), with ``patterns``
    (as ``gold_patterns`` reads them)."""
    return {
        "curator": None if gold.curator is None else gold.curator.get_username(),
        "status": gold.status,
        "note": gold.note,
        "is_check": gold.is_check,
        "version": gold.version,
        "patterns": [
            {
                "id": pattern.id,
                "description": pattern.description,
                "kind": pattern.kind,
                "prefix_ranks": sorted(pattern.prefix_ranks),
                "client_id": str(pattern.client_id) if pattern.client_id else None,
                "source": getattr(pattern, "source", None),
                "source_annotator": getattr(pattern, "source_annotator", None),
                "source_pattern_id": getattr(pattern, "source_pattern_id", None),
                "rule": pattern.rule,
            }
            for pattern in patterns
        ],
    }


def _record(
    gold: GoldAnnotation,
    actor: User,
    action: str,
    before: dict[str, Any] | None,
    patterns: Sequence[PatternView],
    *,
    source: dict[str, Any] | None = None,
) -> None:
    """The audit record of a gold write; ``patterns``: the gold's patterns after it."""
    GoldEvent.objects.create(
        gold=gold,
        actor=actor,
        action=action,
        before=before,
        after=gold_state(gold=gold, patterns=patterns),
        source=source,
    )


def _patterns(locked: _Locked) -> list[PatternView]:
    """The locked gold's patterns: none when this write made it."""
    return [] if locked.created else list(gold_patterns(gold_id=locked.gold.pk))


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
                gold = GoldAnnotation.objects.create(key=key, curator=actor)
                _record(gold, actor, GoldEvent.Action.CREATE, None, [])
                return _Locked(gold, True)
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
    patterns = _patterns(locked)
    before = gold_state(gold=gold, patterns=patterns)
    fields = []
    if note is not None:
        gold.note = note
        fields.append("note")
    if is_check is not None:
        gold.is_check = is_check
        fields.append("is_check")
    _written(locked, actor, *fields)
    _record(gold, actor, GoldEvent.Action.SAVE, before, patterns)
    return gold


class GoldPatterns(PatternOwner):
    """A key's gold annotation as the owner of its patterns, locked (``_gold_for_write``)."""

    model = GoldPattern
    owner_field = "gold"
    link_column = "goldpattern_id"
    row: GoldAnnotation

    def __init__(self, locked: _Locked, *, actor: User) -> None:
        gold = locked.gold
        super().__init__(gold, _patterns(locked))
        self.locked = locked
        self.actor = actor

    @property
    def key_id(self) -> int:
        return self.row.key_id

    def check(self, version: int) -> None:
        if not self.locked.created:
            _check(self.row, version)

    def state(self, patterns: Sequence[PatternView]) -> dict[str, Any]:
        return gold_state(gold=self.row, patterns=patterns)

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
        _record(self.row, self.actor, action, before, after, source=source)

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
            rule=pattern.rule,
            scores=pattern.scores,
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
    rule: Any = None,
) -> GoldPatternCreateResult:
    """Add a pattern to the key's gold: written by the curator, or adopted from an
    annotator's ``source_pattern`` (a pattern of this key; its annotator is remembered).
    A retried create with the same ``client_id`` returns the pattern the first attempt
    made (``created=False``). ``rule``: as an annotator's (``validated_rule``)."""
    if source_pattern is not None and source_pattern.annotation.key_id != key.pk:
        raise ServiceError(SOURCE_OF_ANOTHER_KEY)
    owner = GoldPatterns(_gold_for_write(key=key, actor=actor, version=version), actor=actor)
    adopted = source_pattern is not None
    pattern, created, _ = owned_pattern_create(
        owner,
        actor=actor,
        version=version,
        description=description,
        kind=kind,
        prefixes=prefixes,
        client_id=client_id,
        rule=rule,
        action=GoldEvent.Action.ADOPT if adopted else GoldEvent.Action.PATTERN_CREATE,
        audit_source=None if source_pattern is None else _source(source_pattern),
        source=GoldPattern.Source.WRITTEN if source_pattern is None else GoldPattern.Source.ADOPTED,
        source_pattern=source_pattern,
        source_annotator=None if source_pattern is None else source_pattern.annotation.annotator,
    )
    assert isinstance(pattern, GoldPattern)
    return GoldPatternCreateResult(gold=owner.row, pattern=pattern, created=created)


def _source(pattern: Pattern) -> dict[str, Any]:
    """What an adoption took: the annotator's annotation (at the version adopted from) and
    pattern, as the audit trail records them."""
    annotation = pattern.annotation
    return {
        "annotation_id": annotation.pk,
        "annotator": annotation.annotator.get_username(),
        "annotation_version": annotation.version,
        "pattern_id": pattern.pk,
    }


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
    rule: Any = KEEP_RULE,
) -> GoldAnnotation:
    """Change a gold pattern (``None``: leave as is; ``rule`` as in ``pattern_update``).
    An adopted pattern stays adopted, with its source: the curator edited what they
    adopted."""
    owner = GoldPatterns(_locked_gold_of(pattern), actor=actor)
    owned_pattern_update(
        owner,
        pattern,
        actor=actor,
        version=version,
        description=description,
        kind=kind,
        prefixes=prefixes,
        rule=rule,
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
    patterns = _patterns(locked)
    before = gold_state(gold=gold, patterns=patterns)
    gold.status = GoldAnnotation.Status.SUBMITTED
    gold.submitted_at = timezone.now()
    _written(locked, actor, "status", "submitted_at")
    _record(gold, actor, GoldEvent.Action.SUBMIT, before, patterns)
    return gold


@transaction.atomic
def gold_reopen(*, key: Key, actor: User, version: int) -> GoldAnnotation:
    """Back to draft. Reopening a draft is a no-op (retries)."""
    locked = _gold_for_write(key=key, actor=actor, version=version)
    gold = locked.gold
    if gold.status == GoldAnnotation.Status.DRAFT:
        return gold
    if gold.version != version:
        raise GoldStaleVersion(gold=gold)
    patterns = _patterns(locked)
    before = gold_state(gold=gold, patterns=patterns)
    gold.status = GoldAnnotation.Status.DRAFT
    gold.submitted_at = None
    _written(locked, actor, "status", "submitted_at")
    _record(gold, actor, GoldEvent.Action.REOPEN, before, patterns)
    return gold
