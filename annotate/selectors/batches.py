"""Reads of batches: their keys and progress."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from django.db.models import (
    Count,
    OuterRef,
    Prefetch,
    QuerySet,
    Subquery,
)

from ..models import (
    Annotation,
    Assignment,
    AssignmentKey,
    Batch,
    Key,
    Study,
)


def _batches() -> QuerySet[Batch]:
    return Batch.objects.annotate(key_count=Count("keys", distinct=True)).prefetch_related(
        Prefetch(
            "assignments", queryset=Assignment.objects.select_related("annotator").order_by("id")
        )
    )


def batch_list_for_study(*, study: Study) -> QuerySet[Batch]:
    """The study's batches with their key count and annotators. Two queries."""
    return _batches().filter(study=study).order_by("created_at", "id")


def batch_get(*, batch_id: int) -> Batch | None:
    return _batches().filter(pk=batch_id).select_related("study").first()


def _status_counts(statuses: Iterable[str | None]) -> dict[str, int]:
    counts = Counter(statuses)
    return {
        "submitted": counts[Annotation.Status.SUBMITTED],
        "draft": counts[Annotation.Status.DRAFT],
        "new": counts[None],
    }


def batch_progress(*, batch: Batch) -> dict[str, Any]:
    """Progress of a batch per annotator and per layer. Three queries.

    A unit of work is one (annotator, key) pair of the batch's assignments; each is new
    (not opened), draft or submitted. Check keys of its assignments
    (``annotate.services.check_keys``) are not the batch's keys and count in none of its
    figures.
    """
    pairs = list(
        AssignmentKey.objects.filter(assignment__batch=batch, is_check=False).values_list(
            "assignment__annotator_id", "key_id", "key__layer"
        )
    )
    status = {
        (annotator_id, key_id): s
        for annotator_id, key_id, s in Annotation.objects.filter(
            key__batches=batch, annotator_id__in={a for a, _, _ in pairs}
        ).values_list("annotator_id", "key_id", "status")
    }
    users = {
        row["annotator_id"]: row
        for row in Assignment.objects.filter(batch=batch).values(
            "annotator_id", "annotator__username", "annotator__is_active"
        )
    }
    by_annotator: dict[int, list[str | None]] = defaultdict(list)
    by_layer: dict[int, list[str | None]] = defaultdict(list)
    per_key: Counter[int] = Counter()
    every: list[str | None] = []
    for annotator_id, key_id, layer in pairs:
        s = status.get((annotator_id, key_id))
        every.append(s)
        by_annotator[annotator_id].append(s)
        by_layer[layer].append(s)
        per_key[key_id] += 1
    per_annotator = [
        {
            "annotator_id": annotator_id,
            "username": row["annotator__username"],
            "is_active": row["annotator__is_active"],
            "keys_assigned": len(by_annotator[annotator_id]),
            **_status_counts(by_annotator[annotator_id]),
        }
        for annotator_id, row in sorted(users.items(), key=lambda kv: kv[1]["annotator__username"])
    ]
    per_layer = [
        {"layer": layer, "keys_assigned": len(rows), **_status_counts(rows)}
        for layer, rows in sorted(by_layer.items())
    ]
    return {
        "batch_id": batch.pk,
        "keys_total": batch.keys.count(),
        "annotators_per_key_min": min(per_key.values(), default=0),
        "annotators_per_key_max": max(per_key.values(), default=0),
        "total": {"keys_assigned": len(pairs), **_status_counts(every)},
        "per_annotator": per_annotator,
        "per_layer": per_layer,
    }


def batch_key_count(*, batch: Batch) -> int:
    return Key.objects.filter(batches=batch).count()


def batch_key_page(*, batch: Batch, offset: int, limit: int) -> list[dict[str, Any]]:
    """A page of the batch's keys in (layer, index) order, each with its annotators and
    their status (new: not opened; draft; submitted). Two queries per page, whatever its
    size and the number of annotators: the page's keys, then every (annotator, key) pair
    of the batch's assignments on those keys with the annotation's status beside it. A
    check key given in one of its assignments is not one of the batch's annotators of that
    key, even where the key is also a batch key (``annotate.services.check_keys``)."""
    keys = list(
        Key.objects.filter(batches=batch)
        .order_by("layer", "index")
        .values("id", "layer", "index")[offset : offset + limit]
    )
    status = Annotation.objects.filter(
        key_id=OuterRef("key_id"), annotator_id=OuterRef("assignment__annotator_id")
    ).values("status")[:1]
    pairs = (
        AssignmentKey.objects.filter(
            assignment__batch=batch, key_id__in=[k["id"] for k in keys], is_check=False
        )
        .annotate(status=Subquery(status))
        .order_by("assignment__annotator__username", "assignment_id")
        .values_list(
            "key_id", "assignment__annotator_id", "assignment__annotator__username", "status"
        )
    )
    by_key: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for key_id, annotator_id, username, s in pairs:
        by_key[key_id].append(
            {"annotator_id": annotator_id, "username": username, "status": s or "new"}
        )
    return [
        {"key_id": k["id"], "layer": k["layer"], "index": k["index"], "annotators": by_key[k["id"]]}
        for k in keys
    ]
