"""Writes of patterns, an annotator's and the gold's, through one versioned path.

A pattern belongs to an owning row: an annotator's ``Annotation`` or a key's
``GoldAnnotation``. Every pattern write, whoever owns it, goes through
``owned_pattern_create`` / ``owned_pattern_update`` / ``owned_pattern_delete`` here, with
a ``PatternOwner`` that knows its row: the version check (a stale write changes
nothing), the rules (``validated_prefixes``: the 3-prefix rule, docs/science.md,
"Patterns and the 3-prefix rule"; ``validated_description``, ``validated_kind``,
``validated_pattern_count``), the insert of the pattern and of its prefix links in one
statement, the version bump, and the audit record with the state before and after.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from django.contrib.auth.models import User
from django.db import transaction

from ..evidence.rules import RuleError, validate_rule
from ..labels import KIND_SHALLOW, KIND_SHALLOW_SEMANTIC
from ..limits import MAX_PATTERNS_PER_ANNOTATION
from ..models import (
    PATTERN_DESCRIPTION_MAX_LENGTH,
    Annotation,
    AnnotationEvent,
    GoldAnnotation,
    GoldPattern,
    Pattern,
    TriggerPrefix,
)
from ..selectors.annotations import PatternView, pattern_list_for_annotation
from . import ServiceError
from .annotations import (
    KEEP,
    GuidelineStamp,
    annotation_bump,
    annotation_check_writable,
    annotation_lock,
    annotation_record,
    annotation_state,
)
from .scores import scores_clear_and_queue, scores_cleared

# The 3-prefix rule (Geva et al. 2021, §3.1): a pattern must occur in at least 3 of the
# key's top trigger prefixes.
PATTERN_MIN_PREFIXES = 3
PATTERN_NEEDS_THREE_PREFIXES = "A pattern must cover at least 3 of the key's trigger prefixes."
PATTERN_PREFIX_OF_ANOTHER_KEY = "A pattern can only cover trigger prefixes of its own key."
PATTERN_DUPLICATE_PREFIXES = "A pattern cannot cover the same trigger prefix twice."
PATTERN_NEEDS_DESCRIPTION = "A pattern needs a description."
PATTERN_DESCRIPTION_TOO_LONG = "A pattern's description can be at most {n} characters."
PATTERN_KIND_UNKNOWN = "A pattern's kind must be shallow, semantic or shallow+semantic."
# docs/evidence.md, "Rules": a rule describes the surface of the prefixes, so only a
# pattern with a shallow side may carry one.
PATTERN_RULE_NEEDS_SHALLOW = (
    "Only a shallow or shallow+semantic pattern can have a rule: remove the rule (rule: "
    "null) or keep a shallow kind."
)
RULE_KINDS = (KIND_SHALLOW, KIND_SHALLOW_SEMANTIC)


# As many as an import takes (``annotate.limits``), so that every export imports again.
TOO_MANY_PATTERNS = "An annotation can have at most {n} patterns."


def validated_prefixes(key_id: int, prefixes: Sequence[TriggerPrefix]) -> list[TriggerPrefix]:
    """The 3-prefix rule: ≥ 3 distinct prefixes, all of the key ``key_id`` (the key of the
    annotation, or of the gold annotation, that the pattern belongs to)."""
    if any(prefix.key_id != key_id for prefix in prefixes):
        raise ServiceError(PATTERN_PREFIX_OF_ANOTHER_KEY, code="pattern_prefix_of_another_key")
    if len({prefix.pk for prefix in prefixes}) != len(prefixes):
        raise ServiceError(PATTERN_DUPLICATE_PREFIXES, code="pattern_duplicate_prefixes")
    if len(prefixes) < PATTERN_MIN_PREFIXES:
        raise ServiceError(PATTERN_NEEDS_THREE_PREFIXES, code="pattern_needs_three_prefixes")
    return list(prefixes)


def validated_description(description: str) -> str:
    description = description.strip()
    if not description:
        raise ServiceError(PATTERN_NEEDS_DESCRIPTION, code="pattern_needs_description")
    if len(description) > PATTERN_DESCRIPTION_MAX_LENGTH:
        raise ServiceError(
            PATTERN_DESCRIPTION_TOO_LONG.format(n=PATTERN_DESCRIPTION_MAX_LENGTH),
            code="pattern_description_too_long",
        )
    return description


def validated_pattern_count(n_patterns: int) -> None:
    """Room for one more pattern beside the ``n_patterns`` an annotation (or a gold) has."""
    if n_patterns >= MAX_PATTERNS_PER_ANNOTATION:
        raise ServiceError(
            TOO_MANY_PATTERNS.format(n=MAX_PATTERNS_PER_ANNOTATION), code="too_many_patterns"
        )


def validated_kind(kind: str) -> str:
    if kind not in Pattern.Kind.values:
        raise ServiceError(PATTERN_KIND_UNKNOWN, code="pattern_kind_unknown")
    return kind


def validated_rule(rule: Any, kind: str) -> dict[str, str] | None:
    """The rule as stored (None: none), refused when malformed (its message names the
    problem) or on a pattern of ``kind`` without a shallow side."""
    try:
        valid = validate_rule(rule)
    except RuleError as error:
        raise ServiceError(f"This rule is not valid: {error}.") from error
    if valid is not None and kind not in RULE_KINDS:
        raise ServiceError(PATTERN_RULE_NEEDS_SHALLOW)
    return valid


class _Keep:
    """``rule=KEEP_RULE``: leave the pattern's rule as it is (None clears it)."""


KEEP_RULE: Any = _Keep()


# --- one path for every owner -----------------------------------------------------------


class PatternOwner(ABC):
    """The locked row that owns the patterns of one write, with the patterns it had when
    locked (read once: for a retry, the order, the count and the audit)."""

    model: ClassVar[type[Pattern] | type[GoldPattern]]
    # The pattern's column naming its owner, and the link table's naming the pattern.
    owner_field: ClassVar[str]
    link_column: ClassVar[str]

    def __init__(self, row: Annotation | GoldAnnotation, patterns: list[PatternView]) -> None:
        self.row = row
        self.patterns = patterns

    @property
    @abstractmethod
    def key_id(self) -> int: ...

    @abstractmethod
    def check(self, version: int) -> None:
        """Refuse a write made from a stale version, or to a submitted row."""

    @abstractmethod
    def state(self, patterns: Sequence[PatternView]) -> dict[str, Any]:
        """The row as the audit trail stores it, with these patterns."""

    @abstractmethod
    def bump(self) -> None:
        """Save the row's next version (and whatever the owner records with it)."""

    @abstractmethod
    def record(
        self,
        action: str,
        before: dict[str, Any],
        after: Sequence[PatternView],
        *,
        source: dict[str, Any] | None = None,
    ) -> None:
        """The audit record of the write: the state before, and after with ``after``."""

    def view_of(self, pattern: Pattern | GoldPattern, ranks: list[int]) -> PatternView:
        """A new pattern as ``patterns`` holds them."""
        return PatternView(
            id=pattern.pk,
            description=pattern.description,
            kind=pattern.kind,
            prefix_ranks=ranks,
            order=pattern.order,
            client_id=pattern.client_id,
            source=pattern.source,
            rule=pattern.rule,
            scores=pattern.scores,
        )


def owned_pattern_create(
    owner: PatternOwner,
    *,
    actor: User,
    version: int,
    description: str,
    kind: str,
    prefixes: Sequence[TriggerPrefix],
    client_id: uuid.UUID | None = None,
    rule: Any = None,
    action: str = "pattern_create",
    audit_source: dict[str, Any] | None = None,
    **fields: Any,
) -> tuple[Pattern | GoldPattern, bool, list[PatternView]]:
    """Add a pattern to ``owner``'s row: (the pattern, whether this call made it, the
    owner's patterns after). A retried create with the same ``client_id`` returns the
    pattern the first attempt made (not made now) instead of a duplicate or a 409.
    ``fields``: the owner's own columns of the pattern (a gold pattern's source);
    ``action`` and ``audit_source``: what the audit record says of the write.

    Four queries after the owner's lock and read, whatever the number of patterns and
    prefixes: insert the pattern, insert its prefix links in one statement, bump the
    version, insert the audit record.
    """
    patterns = owner.patterns
    if client_id is not None and any(p.client_id == client_id for p in patterns):
        existing = owner.model.objects.get(**{owner.owner_field: owner.row, "client_id": client_id})
        return existing, False, patterns
    owner.check(version)
    validated_pattern_count(len(patterns))
    description = validated_description(description)
    kind = validated_kind(kind)
    rule = validated_rule(rule, kind)
    prefixes = validated_prefixes(owner.key_id, prefixes)
    before = owner.state(patterns)
    pattern = owner.model.objects.create(
        **{owner.owner_field: owner.row},
        description=description,
        kind=kind,
        order=max((p.order for p in patterns), default=-1) + 1,
        client_id=client_id,
        rule=rule,
        **fields,
    )
    # The pattern is new: nothing to diff against, so one INSERT of its links rather than
    # the SELECT + INSERT of ``pattern.prefixes.set()``. No m2m_changed receivers exist.
    links: Any = owner.model.prefixes.through
    links.objects.bulk_create(
        [links(**{owner.link_column: pattern.pk, "triggerprefix_id": p.pk}) for p in prefixes]
    )
    owner.bump()
    after = [*patterns, owner.view_of(pattern, sorted(prefix.rank for prefix in prefixes))]
    owner.record(action, before, after, source=audit_source)
    scores_clear_and_queue(pattern)  # its held-out scores, once this commits
    return pattern, True, after


def owned_pattern_update(
    owner: PatternOwner,
    pattern: Pattern | GoldPattern,
    *,
    actor: User,
    version: int,
    description: str | None = None,
    kind: str | None = None,
    prefixes: Sequence[TriggerPrefix] | None = None,
    rule: Any = KEEP_RULE,
) -> list[PatternView]:
    """Change a pattern of ``owner``'s row (``None``: leave as is; for ``rule``,
    ``KEEP_RULE`` leaves it and None removes it); the patterns after."""
    owner.check(version)
    before = owner.state(owner.patterns)
    fields = []
    changes: dict[str, Any] = {}
    if description is not None:
        pattern.description = changes["description"] = validated_description(description)
        fields.append("description")
    if kind is not None:
        pattern.kind = changes["kind"] = validated_kind(kind)
        fields.append("kind")
    if rule is not KEEP_RULE:
        pattern.rule = changes["rule"] = validated_rule(rule, pattern.kind)
        fields.append("rule")
    elif kind is not None:
        validated_rule(pattern.rule, pattern.kind)  # a kind that its rule no longer fits
    if prefixes is not None:
        valid = validated_prefixes(owner.key_id, prefixes)
        pattern.prefixes.set(valid)
        changes["prefix_ranks"] = sorted(prefix.rank for prefix in valid)
    # Any change may change its held-out scores: cleared now, recomputed once this commits.
    changes["scores"] = {}
    fields += scores_cleared(pattern)
    pattern.save(update_fields=[*fields, "updated_at"])
    scores_clear_and_queue(pattern)
    owner.bump()
    after = [replace(p, **changes) if p.id == pattern.pk else p for p in owner.patterns]
    owner.record("pattern_update", before, after)
    return after


def owned_pattern_delete(
    owner: PatternOwner, pattern: Pattern | GoldPattern, *, actor: User, version: int
) -> list[PatternView]:
    """Delete a pattern of ``owner``'s row; the patterns after."""
    owner.check(version)
    before = owner.state(owner.patterns)
    deleted_id = pattern.pk
    pattern.delete()
    owner.bump()
    after = [p for p in owner.patterns if p.id != deleted_id]
    owner.record("pattern_delete", before, after)
    return after


# --- an annotator's patterns ------------------------------------------------------------


class AnnotationPatterns(PatternOwner):
    """An annotator's annotation as the owner of its patterns, locked."""

    model = Pattern
    owner_field = "annotation"
    link_column = "pattern_id"
    row: Annotation

    def __init__(
        self, annotation: Annotation, *, actor: User, guideline_version: GuidelineStamp = KEEP
    ) -> None:
        annotation = annotation_lock(annotation)
        super().__init__(annotation, pattern_list_for_annotation(annotation_id=annotation.pk))
        self.actor = actor
        self.guideline_version = guideline_version

    @property
    def key_id(self) -> int:
        return self.row.key_id

    def check(self, version: int) -> None:
        annotation_check_writable(self.row, version)

    def state(self, patterns: Sequence[PatternView]) -> dict[str, Any]:
        return annotation_state(annotation=self.row, patterns=patterns)

    def bump(self) -> None:
        annotation_bump(self.row, guideline_version=self.guideline_version)

    def record(
        self,
        action: str,
        before: dict[str, Any],
        after: Sequence[PatternView],
        *,
        source: dict[str, Any] | None = None,
    ) -> None:
        annotation_record(self.row, self.actor, action, before, after)


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
    rule: Any = None,
    guideline_version: GuidelineStamp = KEEP,
    **fields: Any,
) -> PatternCreateResult:
    """Add a pattern to an annotator's annotation (``owned_pattern_create``), with its
    ``rule`` (``validated_rule``); ``fields``: more of the pattern's columns (an accepted
    suggestion's ``source`` and ``suggestion``). Six queries whatever the number of
    patterns and prefixes: lock, read the patterns, and the create's four."""
    owner = AnnotationPatterns(annotation, actor=actor, guideline_version=guideline_version)
    pattern, created, after = owned_pattern_create(
        owner,
        actor=actor,
        version=version,
        description=description,
        kind=kind,
        prefixes=prefixes,
        client_id=client_id,
        rule=rule,
        action=AnnotationEvent.Action.PATTERN_CREATE,
        **fields,
    )
    assert isinstance(pattern, Pattern)
    return PatternCreateResult(
        annotation=owner.row, pattern=pattern, created=created, patterns=after
    )


@transaction.atomic
def pattern_update(
    *,
    pattern: Pattern,
    actor: User,
    version: int,
    description: str | None = None,
    kind: str | None = None,
    prefixes: Sequence[TriggerPrefix] | None = None,
    rule: Any = KEEP_RULE,
    guideline_version: GuidelineStamp = KEEP,
) -> Annotation:
    """Change a pattern's description, kind, prefixes and/or rule (``None``: leave as
    is; ``rule``: ``KEEP_RULE`` leaves it, None removes it). Its ``source`` is kept: an
    accepted suggestion stays one through edits."""
    owner = AnnotationPatterns(pattern.annotation, actor=actor, guideline_version=guideline_version)
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
def pattern_delete(
    *, pattern: Pattern, actor: User, version: int, guideline_version: GuidelineStamp = KEEP
) -> Annotation:
    owner = AnnotationPatterns(pattern.annotation, actor=actor, guideline_version=guideline_version)
    owned_pattern_delete(owner, pattern, actor=actor, version=version)
    return owner.row
