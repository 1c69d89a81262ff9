"""The report's annotators' patterns with their held-out scores, as
``reports.stats.pattern_scores.PatternScoreArrays``: one query (two without the layers)."""

from __future__ import annotations

import numpy as np
from django.db.models import Case, FloatField, Q, Value, When
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from annotate.models import Pattern, Study

from ..stats.pattern_scores import PatternScoreArrays
from .report_filter import ReportFilter, _annotations, _keys

_FIELDS = ("detection", "embedding", "shuffled_detection", "shuffled_embedding")


def _score(name: str) -> Case:
    """A score read out of the JSON as a float, SQL NULL where it is JSON null or absent.
    (SQLite's key text of a JSON null is the string 'null', which casts to 0.0.)"""
    return Case(
        When(Q(**{f"scores__{name}": None}), then=Value(None, output_field=FloatField())),
        default=Cast(KT(f"scores__{name}"), FloatField()),
        output_field=FloatField(),
    )


def pattern_score_arrays(
    *, study: Study, flt: ReportFilter | None = None, layers: np.ndarray | None = None
) -> PatternScoreArrays:
    """The patterns of the report's annotations (never a check annotation), each score
    read out of the JSON in SQL (null, or not scored yet: NaN). ``layers``: the report's
    layers where the caller has them (``StudyArrays.layers``); read here otherwise."""
    flt = flt or ReportFilter()
    if layers is None:
        layers = np.asarray(
            sorted(set(_keys(study, flt.layers).values_list("layer", flat=True))), dtype=np.int64
        )
    annotations = _annotations(study, flt).filter(is_check=False)
    rows = list(
        Pattern.objects.filter(annotation__in=annotations)
        .order_by("id")
        .values_list(
            "annotation__key_id",
            "annotation__key__layer",
            "source",
            *(_score(name) for name in _FIELDS),
        )
    )
    scores = np.asarray(
        [[np.nan if v is None else v for v in row[3:]] for row in rows], dtype=np.float64
    ).reshape(-1, len(_FIELDS))
    return PatternScoreArrays(
        key=np.asarray([row[0] for row in rows], dtype=np.int64),
        layer=np.asarray([row[1] for row in rows], dtype=np.int64),
        suggestion=np.asarray([row[2] == Pattern.Source.SUGGESTION for row in rows], dtype=bool),
        scores=scores,
        layers=layers,
    )
