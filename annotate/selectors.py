"""Reads of the annotation domain."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from .models import Annotation, Assignment


def assignment_list_for_annotator(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Assignment]:
    """The user's assignments with their batch size and how many keys they submitted.

    One query whatever the number of assignments (two subqueries, no N+1).
    """
    submitted = (
        Annotation.objects.filter(
            annotator=OuterRef("annotator"),
            status=Annotation.Status.SUBMITTED,
            key__batches=OuterRef("batch"),
        )
        .order_by()
        .values("annotator")
        .annotate(n=Count("id"))
        .values("n")
    )
    return (
        Assignment.objects.filter(annotator_id=user.pk)
        .select_related("batch__study")
        .annotate(
            keys_total=Count("batch__keys", distinct=True),
            keys_submitted=Coalesce(Subquery(submitted), Value(0)),
        )
        .order_by("created_at", "id")
    )
