"""Writes of a study's guidelines: a version published, a version acknowledged."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from ..models import (
    Guideline,
    GuidelineAcknowledgement,
    Study,
)
from . import ServiceError

GUIDELINES_CHANGED = "The guidelines have changed since that version: read the current one."


class GuidelinesChanged(ServiceError):
    """The version acknowledged is not the study's latest (API: 409 + the current)."""

    def __init__(self) -> None:
        super().__init__(GUIDELINES_CHANGED, code="guidelines_changed")


@transaction.atomic
def guideline_publish(*, study: Study, text: str, author: User) -> Guideline:
    """A new version of the study's guidelines (the next number, from 1). The study's row
    is locked so that two admins publishing at once get two versions, not an error."""
    Study.objects.select_for_update().filter(pk=study.pk).exists()
    latest = (
        Guideline.objects.filter(study=study)
        .order_by("-version")
        .values_list("version", flat=True)
        .first()
    )
    return Guideline.objects.create(
        study=study, version=(latest or 0) + 1, text=text, created_by=author
    )


def guideline_acknowledge(*, study: Study, user: User, version: int) -> Guideline:
    """Record that ``user`` read ``version`` of the study's guidelines; idempotent. Only
    the latest version can be acknowledged (``GuidelinesChanged`` otherwise)."""
    latest = Guideline.objects.filter(study=study).order_by("-version").first()
    if latest is None or latest.version != version:
        raise GuidelinesChanged
    GuidelineAcknowledgement.objects.get_or_create(guideline=latest, user=user)
    return latest
