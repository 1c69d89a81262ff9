"""Reads of annotations as their author sees them: patterns, derived labels, the state."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, TypeVar

from ..labels import LABEL_NOT_COVERED, prefix_labels
from ..models import (
    Annotation,
    Key,
    Pattern,
    TriggerPrefix,
)
from ..permissions import User


@dataclass(frozen=True)
class PatternView:
    id: int
    description: str
    kind: str
    prefix_ranks: list[int]
    order: int
    client_id: Any
    # docs/evidence.md: where the pattern came from, its rule (null or {type, value}) and
    # its held-out scores ({} until scored). Keyword-only, so that a subclass may add
    # fields without defaults.
    _: KW_ONLY
    source: str = "written"
    rule: dict[str, str] | None = None
    scores: dict[str, Any] | None = None


@dataclass(frozen=True)
class PrefixLabel:
    rank: int
    label: str


@dataclass(frozen=True)
class AnnotationView:
    """One annotation as the API shows it to its author: patterns and derived labels.
    ``id`` None: not started (``ANNOTATION_NEW``), no row yet."""

    id: int | None
    key_id: int
    status: str
    note: str
    version: int
    submitted_at: Any
    updated_at: Any
    patterns: list[PatternView]
    labels: list[PrefixLabel]
    active_seconds: float = 0.0


PATTERN_VIEW_FIELDS = ("id", "description", "kind", "order", "client_id")
# The evidence columns of a pattern (``PatternView.source``, ``rule``, ``scores``), read as
# ``fold_pattern_rows``'s ``extra``.
PATTERN_EVIDENCE_FIELDS = ("source", "rule", "scores")
PatternViewT = TypeVar("PatternViewT", bound=PatternView)


def fold_pattern_rows(
    rows: Iterable[Sequence[Any]],
    view: Callable[..., PatternViewT] = PatternView,  # type: ignore[assignment]
    extra: Sequence[str] = (),
) -> list[PatternViewT]:
    """Fold pattern rows into views, one a pattern in the rows' order, each with its
    covered ranks sorted.

    A row is ``PATTERN_VIEW_FIELDS``, then one column for each name in ``extra`` (passed
    to ``view`` by that name), then the covered prefix's rank (None: covers none): the
    patterns LEFT JOINed to their prefixes, a row per (pattern, prefix).
    """
    patterns: dict[Any, PatternViewT] = {}
    for row in rows:
        pk = row[0]
        pattern = patterns.get(pk)
        if pattern is None:
            _, description, kind, order, client_id, *more, _rank = row
            pattern = patterns[pk] = view(
                id=pk,
                description=description,
                kind=kind,
                prefix_ranks=[],
                order=order,
                client_id=client_id,
                **dict(zip(extra, more, strict=True)),
            )
        rank = row[-1]
        if rank is not None:
            pattern.prefix_ranks.append(rank)
    for pattern in patterns.values():
        pattern.prefix_ranks.sort()
    return list(patterns.values())


def pattern_list_for_annotation(*, annotation_id: int) -> list[PatternView]:
    """The annotation's patterns in (order, id) order, each with its covered ranks sorted.

    One query: the patterns LEFT JOINed to their prefixes, a row per (pattern, prefix).
    The services build the audit trail's before/after from it, the API its answers.
    """
    rows = (
        Pattern.objects.filter(annotation_id=annotation_id)
        .order_by("order", "id")
        .values_list(*PATTERN_VIEW_FIELDS, *PATTERN_EVIDENCE_FIELDS, "prefixes__rank")
    )
    return fold_pattern_rows(rows, extra=PATTERN_EVIDENCE_FIELDS)


def annotation_view(
    *,
    annotation: Annotation,
    ranks: Sequence[int] | None = None,
    patterns: Sequence[PatternView] | None = None,
) -> AnnotationView:
    """The annotation with its patterns and the label of every prefix of its key.

    At most two queries (the patterns with their ranks unless ``patterns`` is given, the
    key's ranks unless ``ranks`` is given) whatever the number of patterns and prefixes.
    """
    if ranks is None:
        ranks = list(
            TriggerPrefix.objects.filter(key_id=annotation.key_id)
            .order_by("rank")
            .values_list("rank", flat=True)
        )
    if patterns is None:
        patterns = pattern_list_for_annotation(annotation_id=annotation.pk)
    labels = prefix_labels(ranks=ranks, patterns=patterns)
    return AnnotationView(
        id=annotation.pk,
        key_id=annotation.key_id,
        status=annotation.status,
        note=annotation.note,
        version=annotation.version,
        submitted_at=annotation.submitted_at,
        updated_at=annotation.updated_at,
        patterns=list(patterns),
        labels=[PrefixLabel(rank=r, label=label) for r, label in zip(ranks, labels, strict=True)],
        active_seconds=annotation.active_seconds,
    )


# The status of an annotation nobody has started: the key was opened, maybe, but nothing
# was written, so there is no row, and it counts as not started everywhere.
ANNOTATION_NEW = "new"


# Where an annotator stands on a key: nothing written yet, a draft, or submitted (the
# API's one enum for it, KeyWorkStatusEnum).
KEY_WORK_STATUSES = (ANNOTATION_NEW, "draft", "submitted")


def annotation_view_new(*, key_id: int, ranks: Sequence[int]) -> AnnotationView:
    """What a key's annotation is before its annotator's first write: no patterns, no
    note, every prefix not covered, and the version the first write names (the row's
    default, made by that write)."""
    return AnnotationView(
        id=None,
        key_id=key_id,
        status=ANNOTATION_NEW,
        note="",
        version=Annotation._meta.get_field("version").default,
        submitted_at=None,
        updated_at=None,
        patterns=[],
        labels=[PrefixLabel(rank=rank, label=LABEL_NOT_COVERED) for rank in ranks],
    )


def annotation_get_for_annotator(*, key: Key, user: User) -> Annotation | None:
    """The user's own annotation of ``key`` (never another annotator's). One query."""
    try:
        return Annotation.objects.get(key_id=key.pk, annotator_id=user.pk)
    except Annotation.DoesNotExist:
        return None


def pattern_get_for_annotator(*, key: Key, pattern_id: int, user: User) -> Pattern | None:
    """A pattern of the user's own annotation of ``key``; None for anyone else's."""
    return (
        Pattern.objects.filter(pk=pattern_id, annotation__key=key, annotation__annotator_id=user.pk)
        .select_related("annotation")
        .first()
    )
