"""Reads of studies for the admin's screens."""

from __future__ import annotations

from django.db.models import (
    Count,
    QuerySet,
)

from ..models import (
    Key,
    Study,
)


def study_list() -> QuerySet[Study]:
    return Study.objects.annotate(key_count=Count("keys")).order_by("-created_at", "-id")


def study_get(*, study_id: int) -> Study | None:
    return Study.objects.annotate(key_count=Count("keys")).filter(pk=study_id).first()


def study_layers(*, study: Study) -> list[dict[str, int]]:
    """Per layer (from 1): how many sampled keys the study has."""
    rows = (
        Key.objects.filter(study=study)
        .order_by()
        .values("layer")
        .annotate(key_count=Count("id"))
        .order_by("layer")
    )
    return [{"layer": row["layer"], "key_count": row["key_count"]} for row in rows]
