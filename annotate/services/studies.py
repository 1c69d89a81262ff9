"""Writes of a study's settings, and the rule that an archived study takes no new work."""

from __future__ import annotations

from django.db import transaction

from ..models import Study
from . import ServiceError

STUDY_ARCHIVED = (
    "This study is archived (read-only): batches and assignments cannot be added to it."
)


CHECK_RATE_OUT_OF_RANGE = "The check rate is a share: from 0 to 1."


@transaction.atomic
def study_update(
    *,
    study: Study,
    show_value_tokens: bool | None = None,
    check_rate: float | None = None,
    suggestions_enabled: bool | None = None,
    show_scores: bool | None = None,
) -> Study:
    """The study's settings that an admin may change after mining (the rest is mined)."""
    fields = []
    if show_value_tokens is not None:
        study.show_value_tokens = show_value_tokens
        fields.append("show_value_tokens")
    if suggestions_enabled is not None:
        study.suggestions_enabled = suggestions_enabled
        fields.append("suggestions_enabled")
    if show_scores is not None:
        study.show_scores = show_scores
        fields.append("show_scores")
    if check_rate is not None:
        if not 0.0 <= check_rate <= 1.0:
            raise ServiceError(CHECK_RATE_OUT_OF_RANGE)
        study.check_rate = check_rate
        fields.append("check_rate")
    if fields:
        study.save(update_fields=fields)
    return study


def study_check_live(study_id: int) -> None:
    """An archived study (an import, read-only) takes no batch and no assignment."""
    if Study.objects.filter(pk=study_id, archived=True).exists():
        raise ServiceError(STUDY_ARCHIVED)
