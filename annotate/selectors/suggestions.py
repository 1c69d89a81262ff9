"""Reads of the machine's suggestions (docs/evidence.md, "Suggestions").

An annotator sees a key's suggestions with their own decision only: another annotator's
decisions, and the patterns they made, never reach them. An LLM suggestion is listed
only once they have submitted the key (at least once); scores only where the study shows
annotators their scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery

from ..models import AnnotationEvent, Key, Study, Suggestion, SuggestionDecision
from ..permissions import User

METHOD_ORDER: dict[str, int] = {
    Suggestion.Method.RULE: 0,
    Suggestion.Method.CLUSTER: 1,
    Suggestion.Method.LLM: 2,
}


@dataclass(frozen=True)
class SuggestionItem:
    id: int
    method: str
    kind: str
    description: str
    rule: dict[str, str] | None
    prefix_ranks: list[int]
    decision: str | None  # the caller's own: None, "accepted", "dismissed"
    pattern_id: int | None  # the caller's pattern made from it (None: none, or deleted)
    scores: dict[str, Any]


@dataclass(frozen=True)
class SuggestionListing:
    enabled: bool
    show_scores: bool
    items: list[SuggestionItem]


def study_suggestion_settings(*, study_id: int) -> tuple[bool, bool]:
    """(suggestions_enabled, show_scores) of the study. One query."""
    row = Study.objects.filter(pk=study_id).values_list("suggestions_enabled", "show_scores")
    enabled, show = row.get()
    return bool(enabled), bool(show)


def _ever_submitted(*, key: Key, user: User) -> Exists:
    return Exists(
        AnnotationEvent.objects.filter(
            annotation__key_id=key.pk,
            annotation__annotator_id=user.pk,
            action=AnnotationEvent.Action.SUBMIT,
        )
    )


def _visible_to(*, key: Key, user: User) -> QuerySet[Suggestion]:
    """The key's suggestions the user may see: every rule and cluster one; the LLM one only
    once the user submitted the key."""
    return (
        Suggestion.objects.filter(key_id=key.pk)
        .alias(submitted=_ever_submitted(key=key, user=user))
        .filter(~Q(method=Suggestion.Method.LLM) | Q(submitted=True))
    )


def suggestion_list_for_annotator(*, key: Key, user: User) -> SuggestionListing:
    """The key's suggestions as ``user`` (assigned the key) sees them. Three queries: the
    study's settings, the suggestions with the user's decisions, their prefix ranks."""
    enabled, show_scores = study_suggestion_settings(study_id=key.study_id)
    if not enabled:
        return SuggestionListing(enabled=False, show_scores=show_scores, items=[])
    mine = SuggestionDecision.objects.filter(suggestion=OuterRef("pk"), annotator_id=user.pk)
    rows = list(
        _visible_to(key=key, user=user)
        .annotate(
            my_decision=Subquery(mine.values("decision")[:1]),
            my_pattern=Subquery(mine.values("pattern_id")[:1]),
        )
        .values_list(
            "id",
            "method",
            "kind",
            "description",
            "rule",
            "scores",
            "my_decision",
            "my_pattern",
            "order",
        )
    )
    # Rules first (the shallow ones), then clusters, then the LLM's.
    rows.sort(key=lambda row: (METHOD_ORDER.get(row[1], len(METHOD_ORDER)), row[8], row[0]))
    ranks: dict[int, list[int]] = {row[0]: [] for row in rows}
    links = Suggestion.prefixes.through.objects.filter(suggestion_id__in=list(ranks))
    for suggestion_id, rank in links.values_list("suggestion_id", "triggerprefix__rank"):
        ranks[suggestion_id].append(rank)
    items = [
        SuggestionItem(
            id=pk,
            method=method,
            kind=kind,
            description=description,
            rule=rule,
            prefix_ranks=sorted(ranks[pk]),
            decision=decision,
            pattern_id=pattern_id,
            scores=scores or {},
        )
        for pk, method, kind, description, rule, scores, decision, pattern_id, _ in rows
    ]
    return SuggestionListing(enabled=True, show_scores=show_scores, items=items)


def suggestion_get_for_annotator(*, key: Key, suggestion_id: int, user: User) -> Suggestion | None:
    """One suggestion of the key that the user may see (None otherwise, as if it did not
    exist), with its key's study. One query."""
    return (
        _visible_to(key=key, user=user)
        .filter(pk=suggestion_id)
        .select_related("key__study")
        .first()
    )


@dataclass(frozen=True)
class SuggestionDecisionItem:
    annotator: str
    decision: str
    pattern_id: int | None
    at: Any


def suggestion_list_for_curator(*, key: Key) -> list[tuple[Suggestion, list[int], list[Any]]]:
    """Every suggestion of the key with its prefix ranks and every annotator's decision
    (a curator's review). Three queries."""
    suggestions = sorted(
        Suggestion.objects.filter(key_id=key.pk),
        key=lambda s: (METHOD_ORDER.get(s.method, len(METHOD_ORDER)), s.order, s.pk),
    )
    ids = [s.pk for s in suggestions]
    ranks: dict[int, list[int]] = {pk: [] for pk in ids}
    links = Suggestion.prefixes.through.objects.filter(suggestion_id__in=ids)
    for suggestion_id, rank in links.values_list("suggestion_id", "triggerprefix__rank"):
        ranks[suggestion_id].append(rank)
    decisions: dict[int, list[Any]] = {pk: [] for pk in ids}
    for row in (
        SuggestionDecision.objects.filter(suggestion_id__in=ids)
        .order_by("suggestion_id", "annotator__username")
        .values_list("suggestion_id", "annotator__username", "decision", "pattern_id", "at")
    ):
        decisions[row[0]].append(SuggestionDecisionItem(*row[1:]))
    return [(s, sorted(ranks[s.pk]), decisions[s.pk]) for s in suggestions]
