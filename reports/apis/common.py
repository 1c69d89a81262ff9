"""What every reports API shares: admins only, JSON errors with a code, a study or a 404,
the report's filter (annotators, layers, drafts, gold as a coder) from the query string."""

from __future__ import annotations

from typing import Any

from django.db.models import Count
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import exceptions, serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.views import APIView

from annotate.apis.common import (
    NOT_FOUND,
    ApiErrorsMixin,
    ErrorSerializer,
    ValidationErrorSerializer,
)
from annotate.limits import MAX_LAYER, MAX_LIST
from annotate.models import Key, Study
from annotate.permissions import IsAdmin

from ..selectors.report_filter import ReportFilter, study_annotator_names

NOT_A_LIST = "Give a comma-separated list."
NOT_ANNOTATOR = "{names} annotated no key of this study."
LAYERS_EMPTY = "The study has no keys in layer(s): {layers}."
_ERRORS = {400: ValidationErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer}


class ReportsApi(ApiErrorsMixin, APIView):
    permission_classes = [IsAdmin]


class IgnoreFormatParameter(DefaultContentNegotiation):
    """``?format=`` names the export's file format here, not a DRF renderer: answer JSON
    (errors) whatever it says."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def _study_or_404(study_id: int) -> Study:
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        raise exceptions.NotFound(NOT_FOUND)
    return study


class CommaListField(serializers.CharField):
    """``a,b,c`` in a query string → ["a", "b", "c"]; items converted by ``item``."""

    def __init__(self, *, item: serializers.Field, **kwargs: Any) -> None:
        self.item = item
        kwargs.setdefault("max_length", 20_000)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> list[Any]:  # type: ignore[override]
        text = super().to_internal_value(data)
        parts = [part.strip() for part in text.split(",")]
        if not parts or any(not part for part in parts) or len(parts) > MAX_LIST:
            raise serializers.ValidationError(NOT_A_LIST)
        return [self.item.run_validation(part) for part in parts]


def _layers_field(help_text: str) -> CommaListField:
    return CommaListField(
        item=serializers.IntegerField(min_value=1, max_value=MAX_LAYER),
        required=False,
        help_text=help_text,
    )


def _check_layers(study: Study, layers: list[int] | None) -> None:
    if layers is None:
        return
    present = set(
        Key.objects.filter(study=study, layer__in=layers)
        .order_by()
        .values("layer")
        .annotate(n=Count("id"))
        .values_list("layer", flat=True)
    )
    missing = sorted(set(layers) - present)
    if missing:
        raise exceptions.ValidationError(
            {"layers": [LAYERS_EMPTY.format(layers=", ".join(map(str, missing)))]}
        )


@extend_schema_serializer(component_name="ReportFilterQuery")
class ReportQuerySerializer(serializers.Serializer):
    annotators = CommaListField(
        item=serializers.CharField(max_length=150),
        required=False,
        help_text="Usernames, comma-separated (default: every annotator of the study).",
    )
    layers = _layers_field("Layers (from 1), comma-separated (default: all).")
    submitted_only = serializers.BooleanField(
        default=True, help_text="Only submitted annotations (default), or drafts too."
    )
    gold_as_coder = serializers.BooleanField(
        default=False,
        help_text="Count the gold (curated) annotations as one more coder in the agreement "
        "(default: no, annotators only). The report names the choice.",
    )


def _report_filter(request: Request, study: Study) -> ReportFilter:
    query = ReportQuerySerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    data = query.validated_data
    annotators = data.get("annotators")
    if annotators is not None:
        unknown = sorted(set(annotators) - set(study_annotator_names(study=study)))
        if unknown:
            raise exceptions.ValidationError(
                {"annotators": [NOT_ANNOTATOR.format(names=", ".join(map(repr, unknown)))]}
            )
    layers = data.get("layers")
    _check_layers(study, layers)
    return ReportFilter(
        annotators=tuple(sorted(set(annotators))) if annotators is not None else None,
        layers=tuple(sorted(set(layers))) if layers is not None else None,
        submitted_only=data["submitted_only"],
        gold_as_coder=data["gold_as_coder"],
    )


def _num(help_text: str = "") -> serializers.FloatField:
    """A number that is null where the statistic is undefined."""
    return serializers.FloatField(allow_null=True, help_text=help_text or None)


@extend_schema_serializer(component_name="AnnotatorTableStudy")
class ReportStudyNameSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
