"""Reads of the curator's review: the studies, the queue of keys ready for review, a key
with every annotator's work and its gold annotation (docs/annotation.md, "Review and gold").

The queue's disagreement and Krippendorff's α are computed for every key of the queue at
once, with numpy over an [annotations, ranks] array of label codes
(``annotate.labels.label_grid`` and ``agreement_from_grid``): a fixed number of queries
per page, and no Python loop over keys × prefixes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.contrib.auth.models import User
from django.db.models import (
    Count,
    Exists,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from ..labels import agreement_from_grid, label_grid, prefix_labels
from ..models import (
    Annotation,
    AssignmentKey,
    Batch,
    GoldAnnotation,
    GoldPattern,
    Key,
    KeyExample,
    KeyFlag,
    Pattern,
    Study,
    TriggerPrefix,
)
from .annotations import (
    PATTERN_EVIDENCE_FIELDS,
    PATTERN_VIEW_FIELDS,
    PatternView,
    fold_pattern_rows,
)
from .keys import KEY_DETAIL_PREFIX_FIELDS, KEY_SAMPLE_FIELDS, sample_list_for_key
from .suggestions import suggestion_list_for_curator

# unreviewed: ready and without submitted gold; curated: with submitted gold; flagged:
# flagged by an annotator, ready or not (curators see a flag at once, not once every
# annotator has submitted); all: any of these.
QUEUE_STATUSES = ("unreviewed", "curated", "flagged", "all")


# --- readiness --------------------------------------------------------------------------


def _ready() -> Q:
    """A key is ready for review when it has a submitted (non-check) annotation, no
    (non-check) draft, and every annotator it is assigned to (not as a check) has
    submitted theirs."""
    work = Annotation.objects.filter(key_id=OuterRef("pk"), is_check=False)
    assigned_unsubmitted = AssignmentKey.objects.filter(
        key_id=OuterRef("pk"), is_check=False
    ).exclude(
        Exists(
            Annotation.objects.filter(
                key_id=OuterRef("key_id"),
                annotator_id=OuterRef("assignment__annotator_id"),
                status=Annotation.Status.SUBMITTED,
            )
        )
    )
    return (
        Q(Exists(work.filter(status=Annotation.Status.SUBMITTED)))
        & ~Q(Exists(work.filter(status=Annotation.Status.DRAFT)))
        & ~Q(Exists(assigned_unsubmitted))
    )


def _curated() -> Q:
    return Q(
        Exists(
            GoldAnnotation.objects.filter(
                key_id=OuterRef("pk"), status=GoldAnnotation.Status.SUBMITTED
            )
        )
    )


def _flagged() -> Q:
    """A key with at least one annotator's flag: the study list's count and the queue's
    "flagged" filter are this one condition."""
    return Q(Exists(KeyFlag.objects.filter(key_id=OuterRef("pk"))))


def _in_queue(status: str) -> Q:
    if status == "unreviewed":
        return _ready() & ~_curated()
    if status == "curated":
        return _curated()
    if status == "flagged":
        return _flagged()
    return _ready() | _curated() | _flagged()


def _count_keys(condition: Q) -> Coalesce:
    rows = (
        Key.objects.filter(condition, study_id=OuterRef("pk"))
        .order_by()
        .values("study_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(rows, output_field=IntegerField()), Value(0))


def study_list_for_review() -> QuerySet[Study]:
    """Every study (archived ones too) with its number of keys, keys in the review queue,
    curated keys and flagged keys (the queue's "flagged" filter holds as many). One query."""
    return Study.objects.annotate(
        n_keys=_count_keys(Q()),
        n_ready=_count_keys(_in_queue("unreviewed")),
        n_curated=_count_keys(_curated()),
        n_flagged=_count_keys(_in_queue("flagged")),
    ).order_by("-created_at", "-id")


def study_get_for_review(*, study_id: int) -> Study | None:
    return Study.objects.filter(pk=study_id).first()


# --- disagreement and α -----------------------------------------------------------------


@dataclass(frozen=True)
class KeyAgreement:
    """Per key (in the order of ``key_ids``): the annotators (usernames, sorted), the
    share of prefixes whose labels differ, and nominal α (nan where undefined)."""

    key_ids: np.ndarray
    annotators: list[list[str]]
    disagreement: np.ndarray
    alpha: np.ndarray


def key_agreement(keys: QuerySet[Key]) -> KeyAgreement:
    """Disagreement and α of every key of ``keys`` among its submitted, non-check
    annotations. Three queries, whatever the number of keys, annotators and prefixes."""
    key_ids_sql = keys.order_by().values("id")
    annotations = list(
        Annotation.objects.filter(
            key_id__in=key_ids_sql, is_check=False, status=Annotation.Status.SUBMITTED
        )
        .order_by("key_id", "annotator__username")
        .values_list("id", "key_id", "annotator__username")
    )
    widths = dict(
        TriggerPrefix.objects.filter(key_id__in=key_ids_sql)
        .order_by()
        .values("key_id")
        .annotate(n=Count("id"))
        .values_list("key_id", "n")
    )
    covered = list(
        Pattern.prefixes.through.objects.filter(
            pattern__annotation__key_id__in=key_ids_sql,
            pattern__annotation__is_check=False,
            pattern__annotation__status=Annotation.Status.SUBMITTED,
        ).values_list("pattern__annotation_id", "triggerprefix__rank", "pattern__kind")
    )
    row_of = {annotation_id: row for row, (annotation_id, _, _) in enumerate(annotations)}
    key_of_row = np.array([key_id for _, key_id, _ in annotations], dtype=np.int64)
    if not annotations:
        empty = np.zeros(0)
        return KeyAgreement(np.zeros(0, dtype=np.int64), [], empty, empty)
    starts = np.flatnonzero(np.r_[True, key_of_row[1:] != key_of_row[:-1]])
    key_ids = key_of_row[starts]
    n_prefixes = np.array([widths.get(int(k), 0) for k in key_ids], dtype=np.int64)
    rows = np.array([row_of[a] for a, _, _ in covered], dtype=np.int64)
    ranks = np.array([rank for _, rank, _ in covered], dtype=np.int64)
    width = int(max(n_prefixes.max(initial=0), ranks.max(initial=0)))
    grid = label_grid(
        n_annotations=len(annotations),
        width=width,
        rows=rows,
        ranks=ranks,
        kinds=[kind for _, _, kind in covered],
    )
    disagreement, alpha = agreement_from_grid(grid, starts, n_prefixes)
    names = [username for _, _, username in annotations]
    bounds = [*starts.tolist(), len(annotations)]
    annotators = [names[bounds[g] : bounds[g + 1]] for g in range(len(starts))]
    return KeyAgreement(key_ids, annotators, disagreement, alpha)


# --- the queue --------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueItem:
    key_id: int
    layer: int
    index: int
    annotators: list[str]
    disagreement: float
    alpha: float | None
    gold_status: str | None
    is_check: bool
    flags: list[dict[str, Any]]
    ready: bool  # every annotator of the key has submitted (see _ready)


def _queue_keys(
    *, study: Study, status: str, layer: int | None, batch_id: int | None, also: int | None = None
) -> QuerySet[Key]:
    condition = _in_queue(status)
    if also is not None:
        condition |= Q(pk=also)
    keys = Key.objects.filter(condition, study=study)
    if layer is not None:
        keys = keys.filter(layer=layer)
    if batch_id is not None:
        in_batch = Batch.keys.through.objects.filter(batch_id=batch_id, key_id=OuterRef("pk"))
        keys = keys.filter(Exists(in_batch))
    return keys


def _ordered(keys: QuerySet[Key]) -> tuple[list[tuple[int, int, int]], KeyAgreement, np.ndarray]:
    """The keys (id, layer, index) and their agreement, and the order of the queue:
    disagreement (highest first), then layer, then index."""
    rows = list(keys.order_by().values_list("id", "layer", "index"))
    agreement = key_agreement(keys)
    at = {int(k): g for g, k in enumerate(agreement.key_ids)}
    disagreement = np.array(
        [agreement.disagreement[at[k]] if k in at else 0.0 for k, _, _ in rows], dtype=np.float64
    )
    layers = np.array([layer for _, layer, _ in rows], dtype=np.int64)
    indexes = np.array([index for _, _, index in rows], dtype=np.int64)
    order = np.lexsort((indexes, layers, -disagreement))
    return rows, agreement, order


def _flags_by_key(key_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    flags: dict[int, list[dict[str, Any]]] = defaultdict(list)
    rows = (
        KeyFlag.objects.filter(key_id__in=key_ids)
        .order_by("created_at", "id")
        .values_list("key_id", "annotator__username", "reason", "note", "created_at")
    )
    for key_id, username, reason, note, created_at in rows:
        flags[key_id].append(
            {"annotator": username, "reason": reason, "note": note, "created_at": created_at}
        )
    return flags


@dataclass(frozen=True)
class QueuePage:
    count: int
    items: list[QueueItem]


def review_queue(
    *,
    study: Study,
    status: str = "unreviewed",
    layer: int | None = None,
    batch_id: int | None = None,
    offset: int = 0,
    limit: int = 50,
) -> QueuePage:
    """A page of the study's review queue (see the contract in the module docstring).
    Seven queries, whatever the size of the page or the queue."""
    keys = _queue_keys(study=study, status=status, layer=layer, batch_id=batch_id)
    rows, agreement, order = _ordered(keys)
    page = [rows[i] for i in order[offset : offset + limit]]
    page_ids = [key_id for key_id, _, _ in page]
    golds = {
        key_id: (gold_status, is_check)
        for key_id, gold_status, is_check in GoldAnnotation.objects.filter(
            key_id__in=page_ids
        ).values_list("key_id", "status", "is_check")
    }
    flags = _flags_by_key(page_ids)
    ready = set(Key.objects.filter(_ready(), pk__in=page_ids).values_list("id", flat=True))
    at = {int(k): g for g, k in enumerate(agreement.key_ids)}
    items = []
    for key_id, layer_, index in page:
        g = at.get(key_id)
        alpha = None if g is None else float(agreement.alpha[g])
        gold_status, is_check = golds.get(key_id, (None, False))
        items.append(
            QueueItem(
                key_id=key_id,
                layer=layer_,
                index=index,
                annotators=[] if g is None else agreement.annotators[g],
                disagreement=0.0 if g is None else float(agreement.disagreement[g]),
                alpha=None if alpha is None or np.isnan(alpha) else alpha,
                gold_status=gold_status,
                is_check=is_check,
                flags=[{k: v for k, v in f.items() if k != "created_at"} for f in flags[key_id]],
                ready=key_id in ready,
            )
        )
    return QueuePage(count=len(rows), items=items)


def review_neighbours(*, key: Key) -> tuple[int | None, int | None]:
    """The keys before and after ``key`` in its study's unreviewed queue (the queue's
    order; ``key`` itself placed where that order puts it, in the queue or not)."""
    keys = _queue_keys(study=key.study, status="unreviewed", layer=None, batch_id=None, also=key.pk)
    rows, _, order = _ordered(keys)
    ids = [rows[i][0] for i in order]
    at = ids.index(key.pk)
    return (ids[at - 1] if at > 0 else None, ids[at + 1] if at + 1 < len(ids) else None)


def review_layers(*, study: Study) -> list[int]:
    return list(
        Key.objects.filter(study=study).order_by("layer").values_list("layer", flat=True).distinct()
    )


def review_batches(*, study: Study) -> list[dict[str, Any]]:
    rows = Batch.objects.filter(study=study).order_by("name", "id").values_list("id", "name")
    return [{"id": pk, "name": name} for pk, name in rows]


# --- a key under review -----------------------------------------------------------------


@dataclass(frozen=True)
class GoldPatternView(PatternView):
    # ``source``: PatternView's, here "written" or "adopted". Defaults, as PatternView's
    # own fields after ``KW_ONLY`` have them.
    source_annotator: str | None = None
    source_pattern_id: int | None = None


# GoldPatternView's own fields (and the evidence ones) and the columns they are read from.
GOLD_PATTERN_EXTRA = ("source", "source_annotator", "source_pattern_id", "rule", "scores")
GOLD_PATTERN_EXTRA_FIELDS = (
    "source",
    "source_annotator__username",
    "source_pattern_id",
    "rule",
    "scores",
)


@dataclass(frozen=True)
class GoldView:
    status: str
    version: int
    note: str
    is_check: bool
    curator: str | None
    updated_at: Any
    patterns: list[GoldPatternView]
    labels: list[str]


def key_get_for_review(*, key_id: int) -> Key | None:
    """Any key of any study (curators review archived studies too). One query."""
    return Key.objects.filter(pk=key_id).select_related("study").first()


def _ranks(key_id: int) -> list[int]:
    return list(
        TriggerPrefix.objects.filter(key_id=key_id).order_by("rank").values_list("rank", flat=True)
    )


def gold_patterns(*, gold_id: int) -> list[GoldPatternView]:
    """The gold annotation's patterns in (order, id) order with their ranks. One query."""
    rows = (
        GoldPattern.objects.filter(gold_id=gold_id)
        .order_by("order", "id")
        .values_list(*PATTERN_VIEW_FIELDS, *GOLD_PATTERN_EXTRA_FIELDS, "prefixes__rank")
    )
    return fold_pattern_rows(rows, GoldPatternView, extra=GOLD_PATTERN_EXTRA)


def gold_view(*, gold: GoldAnnotation, ranks: Sequence[int] | None = None) -> GoldView:
    """The gold annotation as the curator sees it; at most three queries (the curator's
    name unless selected, the patterns, the key's ranks unless given)."""
    if ranks is None:
        ranks = _ranks(gold.key_id)
    patterns = gold_patterns(gold_id=gold.pk)
    return GoldView(
        status=gold.status,
        version=gold.version,
        note=gold.note,
        is_check=gold.is_check,
        curator=None if gold.curator is None else gold.curator.get_username(),
        updated_at=gold.updated_at,
        patterns=patterns,
        labels=prefix_labels(ranks=ranks, patterns=patterns),
    )


def gold_get_for_key(*, key_id: int) -> GoldAnnotation | None:
    return GoldAnnotation.objects.filter(key_id=key_id).select_related("curator").first()


@dataclass(frozen=True)
class ReviewAnnotation:
    id: int
    annotator: str
    status: str
    note: str
    submitted_at: Any
    active_seconds: float
    patterns: list[PatternView]
    labels: list[str]


@dataclass(frozen=True)
class ReviewDetail:
    key: Key
    prefixes: list[dict[str, Any]]
    # The key's other examples (docs/evidence.md): the visible samples (KEY_SAMPLE_FIELDS,
    # band 1 … 5, then random), and the held-out sets that only curators see, shaped like
    # the prefixes (KEY_DETAIL_PREFIX_FIELDS; ``rank`` null for heldout_random).
    samples: list[dict[str, Any]]
    heldout: list[dict[str, Any]]
    heldout_random: list[dict[str, Any]]
    annotations: list[ReviewAnnotation]
    # The machine's suggestions with their prefix ranks and every annotator's decision
    # (``suggestion_list_for_curator``).
    suggestions: list[tuple[Any, list[int], list[Any]]]
    gold: GoldView | None
    flags: list[dict[str, Any]]
    awaiting: list[str]
    previous_key_id: int | None
    next_key_id: int | None


def review_awaiting(*, key: Key) -> list[str]:
    """Who the key still waits for (usernames, sorted): the annotators it is assigned to
    who have not submitted, and those with a (non-check) draft of it. One query."""
    submitted = Annotation.objects.filter(
        key_id=key.pk, annotator_id=OuterRef("pk"), status=Annotation.Status.SUBMITTED
    )
    assigned = AssignmentKey.objects.filter(key_id=key.pk, assignment__annotator_id=OuterRef("pk"))
    drafted = Annotation.objects.filter(
        key_id=key.pk, annotator_id=OuterRef("pk"), is_check=False, status=Annotation.Status.DRAFT
    )
    return list(
        User.objects.filter((Q(Exists(assigned)) & ~Q(Exists(submitted))) | Q(Exists(drafted)))
        .order_by("username")
        .values_list("username", flat=True)
    )


def review_detail(*, key: Key) -> ReviewDetail:
    """The key with every annotator's (non-check) work, its gold and its flags. A fixed
    number of queries whatever the number of annotators and patterns."""
    prefixes = list(
        TriggerPrefix.objects.filter(key_id=key.pk)
        .order_by("rank")
        .values(*KEY_DETAIL_PREFIX_FIELDS)
    )
    ranks = [prefix["rank"] for prefix in prefixes]
    # One query for the four sets, split here.
    examples: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for example in sample_list_for_key(key_id=key.pk, kinds=KeyExample.Kind.values):
        kind = example["kind"]
        if kind in KeyExample.HELD_OUT_KINDS:
            example = {name: example[name] for name in KEY_DETAIL_PREFIX_FIELDS}
        else:
            example = {name: example[name] for name in KEY_SAMPLE_FIELDS}
        examples[kind].append(example)
    annotations = list(
        Annotation.objects.filter(key_id=key.pk, is_check=False)
        .select_related("annotator")
        .order_by("annotator__username")
    )
    rows = (
        Pattern.objects.filter(annotation__in=[a.pk for a in annotations])
        .order_by("order", "id")
        .values_list(
            "annotation_id", *PATTERN_VIEW_FIELDS, *PATTERN_EVIDENCE_FIELDS, "prefixes__rank"
        )
    )
    by_annotation: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    for annotation_id, *row in rows:
        by_annotation[annotation_id].append(tuple(row))
    work = []
    for annotation in annotations:
        patterns: list[PatternView] = fold_pattern_rows(
            by_annotation[annotation.pk], extra=PATTERN_EVIDENCE_FIELDS
        )
        work.append(
            ReviewAnnotation(
                id=annotation.pk,
                annotator=annotation.annotator.get_username(),
                status=annotation.status,
                note=annotation.note,
                submitted_at=annotation.submitted_at,
                active_seconds=annotation.active_seconds,
                patterns=patterns,
                labels=prefix_labels(ranks=ranks, patterns=patterns),
            )
        )
    gold = gold_get_for_key(key_id=key.pk)
    previous_key_id, next_key_id = review_neighbours(key=key)
    return ReviewDetail(
        key=key,
        prefixes=prefixes,
        samples=[*examples[KeyExample.Kind.BAND], *examples[KeyExample.Kind.RANDOM]],
        heldout=examples[KeyExample.Kind.HELDOUT],
        heldout_random=examples[KeyExample.Kind.HELDOUT_RANDOM],
        annotations=work,
        suggestions=suggestion_list_for_curator(key=key),
        gold=None if gold is None else gold_view(gold=gold, ranks=ranks),
        flags=_flags_by_key([key.pk])[key.pk],
        awaiting=review_awaiting(key=key),
        previous_key_id=previous_key_id,
        next_key_id=next_key_id,
    )


def source_pattern_for_key(*, key: Key, pattern_id: int) -> Pattern | None:
    """A pattern of a non-check annotation of ``key`` (what a gold pattern may adopt)."""
    return (
        Pattern.objects.filter(pk=pattern_id, annotation__key_id=key.pk, annotation__is_check=False)
        .select_related("annotation__annotator")
        .first()
    )


def gold_pattern_get(*, key: Key, pattern_id: int) -> GoldPattern | None:
    return (
        GoldPattern.objects.filter(pk=pattern_id, gold__key_id=key.pk)
        .select_related("gold")
        .first()
    )
