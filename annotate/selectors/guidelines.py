"""Reads of a study's guidelines and of who acknowledged which version."""

from __future__ import annotations

from typing import cast

from django.db.models import (
    Count,
    QuerySet,
)

from ..models import (
    Guideline,
    GuidelineAcknowledgement,
    Study,
)
from ..permissions import User
from .keys import _assigned_to


def guideline_latest(*, study_id: int) -> Guideline | None:
    """The study's guidelines as they are now (their latest version); None: it has none."""
    return Guideline.objects.filter(study_id=study_id).order_by("-version").first()


def guideline_read_version(*, study_id: int, user: User) -> int | None:
    """The latest version of the study's guidelines that ``user`` acknowledged."""
    return (
        GuidelineAcknowledgement.objects.filter(
            user_id=cast(int, user.pk), guideline__study_id=study_id
        )
        .order_by("-guideline__version")
        .values_list("guideline__version", flat=True)
        .first()
    )


def guideline_list_for_study(*, study: Study) -> QuerySet[Guideline]:
    """Every version, newest first, with its author and how many acknowledged it. One
    query."""
    return (
        Guideline.objects.filter(study=study)
        .select_related("created_by")
        .annotate(acknowledged_by=Count("acknowledgements"))
        .order_by("-version")
    )


def study_visible_to_annotator(*, study_id: int, user: User) -> bool:
    """Whether ``user`` has a key of the (live) study in one of their assignments."""
    return _assigned_to(user).filter(key__study_id=study_id).exists()
