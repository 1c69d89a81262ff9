"""The annotator table of a study: per annotator, their work and its quality flags, as
JSON and CSV."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from annotate.apis.common import (
    ErrorSerializer,
)

from .. import exports
from ..annotators import CSV_COLUMNS as ANNOTATOR_CSV_COLUMNS
from ..annotators import FLAG_EVIDENCE, QUALITY_FLAGS, annotator_csv, annotator_table
from .common import ReportsApi, ReportStudyNameSerializer, _num, _study_or_404


@extend_schema_serializer(component_name="AnnotatorTableRow")
class AnnotatorRowSerializer(serializers.Serializer):
    username = serializers.CharField()
    keys_done = serializers.IntegerField()
    median_active_seconds = _num()
    patterns_per_key = _num()
    coverage = _num()
    alpha_with_others = _num()
    alpha_units = serializers.IntegerField(help_text="Prefixes shared with the others.")
    kappa_with_gold = _num()
    raw_agreement_with_gold = _num()
    gold_units = serializers.IntegerField(help_text="Prefixes rated by them and by gold.")
    gold_keys = serializers.IntegerField(help_text="Keys rated by them and by gold.")
    checks_n = serializers.IntegerField()
    check_accuracy = _num()
    check_kappa = _num()
    flags = serializers.IntegerField(help_text="Key flags they raised in the study.")
    quality_flags = serializers.ListField(
        child=serializers.ChoiceField(choices=QUALITY_FLAGS),
        help_text="Defined in definitions.",
    )


class AnnotatorTableApi(ReportsApi):
    @extend_schema_serializer(component_name="AnnotatorTable")
    class OutputSerializer(serializers.Serializer):
        study = ReportStudyNameSerializer()
        study_median_active_seconds = _num()
        study_patterns_per_key = _num()
        labels = serializers.ListField(child=serializers.CharField())
        definitions = serializers.DictField(child=serializers.CharField())
        annotators = AnnotatorRowSerializer(many=True)

    @extend_schema(responses={200: OutputSerializer, 403: ErrorSerializer, 404: ErrorSerializer})
    def get(self, request: Request, study_id: int) -> Response:
        table = annotator_table(study=_study_or_404(study_id))
        return Response(self.OutputSerializer(table).data)


class AnnotatorCsvApi(ReportsApi):
    @extend_schema(
        responses={
            (200, "text/csv"): OpenApiResponse(
                response=OpenApiTypes.STR,
                description="One row per annotator: "
                + ",".join(ANNOTATOR_CSV_COLUMNS)
                + ". Quality flags (joined by |) need a minimum of evidence: "
                + "; ".join(
                    f"{flag}: {column} ≥ {minimum}"
                    for flag, (column, minimum) in FLAG_EVIDENCE.items()
                )
                + ".",
            ),
            403: ErrorSerializer,
            404: ErrorSerializer,
        },
    )
    def get(self, request: Request, study_id: int) -> HttpResponse:
        study = _study_or_404(study_id)
        response = HttpResponse(
            annotator_csv(annotator_table(study=study)), content_type="text/csv; charset=utf-8"
        )
        name = exports.export_basename(study)
        response["Content-Disposition"] = f'attachment; filename="{name}-annotators.csv"'
        return response
