"""Reads of check keys (``annotate.services.check_keys``)."""

from __future__ import annotations

from ..models import (
    GoldAnnotation,
    Study,
)


def study_check_key_count(*, study: Study) -> int:
    """How many of the study's keys are served as checks: submitted gold marked a check."""
    return GoldAnnotation.objects.filter(
        key__study=study, status=GoldAnnotation.Status.SUBMITTED, is_check=True
    ).count()
