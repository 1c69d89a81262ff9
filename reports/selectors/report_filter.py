"""Which part of a study a report covers (``ReportFilter``): its keys by layer, its
annotations by annotator and status, and the study's annotators' names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import (
    Q,
    QuerySet,
)

from annotate.models import (
    Annotation,
    Key,
    Study,
)


@dataclass(frozen=True)
class ReportFilter:
    """Which part of a study a report covers. ``None``: every annotator / layer."""

    annotators: tuple[str, ...] | None = None
    layers: tuple[int, ...] | None = None
    submitted_only: bool = True
    # Not a filter: the report's choice to count the gold as one more coder in agreement.
    gold_as_coder: bool = False


def _keys(study: Study, layers: Sequence[int] | None) -> QuerySet[Key]:
    keys = Key.objects.filter(study=study)
    if layers is not None:
        keys = keys.filter(layer__in=list(layers))
    return keys


def _annotations(study: Study, flt: ReportFilter) -> QuerySet[Annotation]:
    """The report's annotations (never a check annotation), and the check annotations of
    the same annotators and layers (submitted ones only, whatever the filter says)."""
    rows = Annotation.objects.filter(key__study=study)
    if flt.layers is not None:
        rows = rows.filter(key__layer__in=list(flt.layers))
    if flt.annotators is not None:
        rows = rows.filter(annotator__username__in=list(flt.annotators))
    own = Q(is_check=False)
    if flt.submitted_only:
        own &= Q(status=Annotation.Status.SUBMITTED)
    return rows.filter(own | Q(is_check=True, status=Annotation.Status.SUBMITTED))


def study_annotator_names(*, study: Study) -> list[str]:
    """Usernames of everyone who annotated a key of the study."""
    return list(
        get_user_model()
        .objects.filter(annotations__key__study=study)
        .distinct()
        .order_by("username")
        .values_list("username", flat=True)
    )
