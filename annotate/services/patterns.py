"""Writes of an annotation's patterns, under the 3-prefix rule (docs/science.md, "Patterns
and the 3-prefix rule"), each a versioned write with its audit record."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from ..limits import MAX_PATTERNS_PER_ANNOTATION
from ..models import (
    PATTERN_DESCRIPTION_MAX_LENGTH,
    Annotation,
    AnnotationEvent,
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

# The 3-prefix rule (Geva et al. 2021, §3.1): a pattern must occur in at least 3 of the
# key's top trigger prefixes.
PATTERN_MIN_PREFIXES = 3


PATTERN_NEEDS_THREE_PREFIXES = "A pattern must cover at least 3 of the key's trigger prefixes."

PATTERN_PREFIX_OF_ANOTHER_KEY = "A pattern can only cover trigger prefixes of its own key."

PATTERN_DUPLICATE_PREFIXES = "A pattern cannot cover the same trigger prefix twice."

PATTERN_NEEDS_DESCRIPTION = "A pattern needs a description."

PATTERN_DESCRIPTION_TOO_LONG = "A pattern's description can be at most {n} characters."

PATTERN_KIND_UNKNOWN = "A pattern's kind must be shallow, semantic or shallow+semantic."


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
    guideline_version: GuidelineStamp = KEEP,
) -> PatternCreateResult:
    """Add a pattern. A retried create with the same ``client_id`` returns the pattern the
    first attempt made (``created=False``) instead of a duplicate or a 409.

    Six queries whatever the number of patterns and prefixes: lock, read the patterns
    (for the retry check, the order and the audit's before/after), insert the pattern,
    insert its prefix links in one statement, bump the version, insert the audit record.
    """
    annotation = annotation_lock(annotation)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    if client_id is not None and any(p.client_id == client_id for p in patterns):
        existing = Pattern.objects.get(annotation=annotation, client_id=client_id)
        return PatternCreateResult(
            annotation=annotation, pattern=existing, created=False, patterns=patterns
        )
    annotation_check_writable(annotation, version)
    validated_pattern_count(len(patterns))
    description = validated_description(description)
    kind = validated_kind(kind)
    prefixes = validated_prefixes(annotation.key_id, prefixes)
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
    annotation_bump(annotation, guideline_version=guideline_version)
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
    annotation_record(annotation, actor, AnnotationEvent.Action.PATTERN_CREATE, before, after)
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
    guideline_version: GuidelineStamp = KEEP,
) -> Annotation:
    """Change a pattern's description, kind and/or prefixes (``None``: leave as is)."""
    annotation = annotation_lock(pattern.annotation)
    annotation_check_writable(annotation, version)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    fields = []
    changes: dict[str, Any] = {}
    if description is not None:
        pattern.description = changes["description"] = validated_description(description)
        fields.append("description")
    if kind is not None:
        pattern.kind = changes["kind"] = validated_kind(kind)
        fields.append("kind")
    if prefixes is not None:
        valid = validated_prefixes(annotation.key_id, prefixes)
        pattern.prefixes.set(valid)
        changes["prefix_ranks"] = sorted(prefix.rank for prefix in valid)
    pattern.save(update_fields=[*fields, "updated_at"])
    annotation_bump(annotation, guideline_version=guideline_version)
    after = [replace(p, **changes) if p.id == pattern.pk else p for p in patterns]
    annotation_record(annotation, actor, AnnotationEvent.Action.PATTERN_UPDATE, before, after)
    return annotation


@transaction.atomic
def pattern_delete(
    *, pattern: Pattern, actor: User, version: int, guideline_version: GuidelineStamp = KEEP
) -> Annotation:
    annotation = annotation_lock(pattern.annotation)
    annotation_check_writable(annotation, version)
    patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    before = annotation_state(annotation=annotation, patterns=patterns)
    deleted_id = pattern.pk
    pattern.delete()
    annotation_bump(annotation, guideline_version=guideline_version)
    after = [p for p in patterns if p.id != deleted_id]
    annotation_record(annotation, actor, AnnotationEvent.Action.PATTERN_DELETE, before, after)
    return annotation
