"""The reports API, admins only (annotators never see reports: docs/annotation.md,
"Reports"): the report of a study (JSON and CSV), exports (streamed, or as a background
job with progress) and the upload of a JSONL file into a new study."""

from __future__ import annotations

import base64
import tempfile
from typing import Any, cast

from django.db.models import Count
from django.http import FileResponse, HttpResponse, StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api_errors import ErrorCode, error_response, printable
from annotate.apis.common import (
    NOT_FOUND,
    ApiErrorsMixin,
    ErrorSerializer,
    ValidationErrorSerializer,
    error_code_field,
)
from annotate.imports import ASSIGN_NEEDS_LIVE, ImportFileError
from annotate.limits import MAX_LAYER, MAX_LIST
from annotate.models import Key, Study
from annotate.permissions import IsAdmin

from . import exports, jobs
from .annotators import CSV_COLUMNS as ANNOTATOR_CSV_COLUMNS
from .annotators import FLAG_EVIDENCE, QUALITY_FLAGS, annotator_csv, annotator_table
from .imports.load import study_import
from .models import ExportJob
from .report import REPORT_CSV_COLUMNS, report_build, report_csv
from .selectors.export_jobs import export_job_get
from .selectors.report_filter import ReportFilter, study_annotator_names
from .stats.value_agreement import REASONS, VARIANTS

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


# --- the report -------------------------------------------------------------------------


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


@extend_schema_serializer(component_name="ReportLabelValues")
class LabelValuesSerializer(serializers.Serializer):
    shallow = _num()
    semantic = _num()
    shallow_semantic = _num("The label shallow+semantic.")
    not_covered = _num("The label not-covered.")


class LayerField(serializers.IntegerField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_null=True, help_text="From 1; null for all layers.", **kwargs)


@extend_schema_serializer(component_name="ReportFigure2Row")
class Figure2RowSerializer(serializers.Serializer):
    layer = LayerField()
    n = serializers.FloatField(help_text="Ratings (pooled, per annotator) or units (majority).")
    counts = LabelValuesSerializer()
    shares = LabelValuesSerializer()
    ties = serializers.IntegerField(help_text="Majority: units whose top labels tie.")


@extend_schema_serializer(component_name="ReportFigure2Block")
class Figure2BlockSerializer(serializers.Serializer):
    layers = Figure2RowSerializer(many=True)
    overall = Figure2RowSerializer()


@extend_schema_serializer(component_name="ReportFigure2Annotator")
class Figure2AnnotatorSerializer(Figure2BlockSerializer):
    annotator = serializers.CharField()


@extend_schema_serializer(component_name="ReportFigure2")
class Figure2Serializer(serializers.Serializer):
    pooled = Figure2BlockSerializer()
    per_annotator = Figure2AnnotatorSerializer(many=True)
    majority = Figure2BlockSerializer()
    gold = Figure2BlockSerializer(
        help_text="The submitted gold annotations, one rating per prefix of a curated key; "
        "a layer without gold has n 0 and null shares."
    )


@extend_schema_serializer(component_name="ReportCoverageRow")
class CoverageRowSerializer(serializers.Serializer):
    layer = LayerField()
    n_prefixes = serializers.IntegerField(help_text="Ratings: prefixes × annotations.")
    covered = serializers.IntegerField()
    share_covered = _num()
    n_annotations = serializers.IntegerField()
    n_patterns = serializers.IntegerField()
    mean_patterns_per_key = _num()


@extend_schema_serializer(component_name="ReportCoverageBlock")
class CoverageBlockSerializer(serializers.Serializer):
    layers = CoverageRowSerializer(many=True)
    overall = CoverageRowSerializer()


@extend_schema_serializer(component_name="ReportCoverage")
class CoverageSerializer(CoverageBlockSerializer):
    gold = CoverageBlockSerializer(
        help_text="Over the submitted gold annotations (n_annotations: curated keys)."
    )


@extend_schema_serializer(component_name="ReportEstimate")
class EstimateSerializer(serializers.Serializer):
    value = _num()
    low = _num("Bootstrap 95% interval over keys.")
    high = _num()
    n_units = serializers.IntegerField()
    n_keys = serializers.IntegerField(help_text="Keys the bootstrap resampled.")
    few_keys = serializers.BooleanField(
        help_text="There is an interval and it rests on fewer than bootstrap_min_keys keys."
    )


@extend_schema_serializer(component_name="ReportAgreementRow")
class AgreementRowSerializer(serializers.Serializer):
    layer = LayerField()
    krippendorff_alpha = EstimateSerializer()
    fleiss_kappa = EstimateSerializer()
    cohen_kappa_mean = EstimateSerializer()
    raw_agreement = EstimateSerializer()


@extend_schema_serializer(component_name="ReportCohenPair")
class CohenPairSerializer(serializers.Serializer):
    annotators = serializers.ListField(child=serializers.CharField())
    value = _num()
    n_units = serializers.IntegerField()


@extend_schema_serializer(component_name="ReportAgreementBlock")
class AgreementBlockSerializer(serializers.Serializer):
    layers = AgreementRowSerializer(many=True)
    overall = AgreementRowSerializer()
    cohen_kappa_pairs = CohenPairSerializer(many=True)


@extend_schema_serializer(component_name="ReportAgreement")
class AgreementSerializer(serializers.Serializer):
    coders = serializers.ListField(child=serializers.CharField())
    bootstrap_replicates = serializers.IntegerField()
    bootstrap_seed = serializers.IntegerField()
    bootstrap_min_keys = serializers.IntegerField(
        help_text="An interval over fewer keys than this is marked few_keys."
    )
    labels = AgreementBlockSerializer(help_text="On the four labels.")
    binary = AgreementBlockSerializer(help_text="On covered / not-covered.")
    gold_as_coder = serializers.BooleanField(
        help_text="Whether the gold counts as a coder here (the gold_as_coder option)."
    )
    gold_coder = serializers.CharField(help_text="Gold's name among the coders when it is one.")


@extend_schema_serializer(component_name="ReportAgreementWithGold")
class AgreementWithGoldSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    kappa = _num("Cohen's κ with gold on the four labels.")
    raw_agreement = _num()
    n_units = serializers.IntegerField(help_text="Prefixes rated by both.")
    n_keys = serializers.IntegerField(help_text="Keys rated by both.")


@extend_schema_serializer(component_name="ReportCheckAccuracy")
class CheckAccuracySerializer(serializers.Serializer):
    annotator = serializers.CharField()
    n_checks = serializers.IntegerField(help_text="Submitted check annotations with gold.")
    raw_agreement = _num("Share of their prefixes given gold's label.")
    kappa = _num("Cohen's κ with gold over those prefixes.")
    n_units = serializers.IntegerField()


@extend_schema_serializer(component_name="ReportJaccardRow")
class JaccardRowSerializer(serializers.Serializer):
    layer = LayerField()
    mean = _num()
    n_keys = serializers.IntegerField()


@extend_schema_serializer(component_name="ReportJaccardPair")
class JaccardPairSerializer(serializers.Serializer):
    annotators = serializers.ListField(child=serializers.CharField())
    layers = JaccardRowSerializer(many=True)
    overall = JaccardRowSerializer()


@extend_schema_serializer(component_name="ReportPatternJaccard")
class PatternJaccardSerializer(serializers.Serializer):
    pairs = JaccardPairSerializer(many=True)
    layers = JaccardRowSerializer(many=True, help_text="Pooled over pairs.")
    overall = JaccardRowSerializer()


@extend_schema_serializer(component_name="ReportRate")
class RateSerializer(serializers.Serializer):
    matches = serializers.IntegerField()
    n = serializers.IntegerField(help_text="The denominator.")
    rate = _num("matches / n; null where n is 0.")
    low = _num("Wilson 95% interval.")
    high = _num()


class _NotApplicable(serializers.Serializer):
    applicable = serializers.BooleanField(help_text="False where §4 gives no rate here.")
    reason = serializers.ChoiceField(
        choices=REASONS,
        allow_null=True,
        help_text="Why not applicable (null where applicable): encoder (encoders have no "
        "next token), not_counted (the mining pass did not count every key: an imported or "
        "older study), counts_invalid (the stored counts break their contract).",
    )
    vocab_size = serializers.IntegerField(allow_null=True, help_text="|V|.")
    random_baseline = _num("1/|V|.")


@extend_schema_serializer(component_name="ReportValueAgreementRow")
class ValueAgreementRowSerializer(serializers.Serializer):
    layer = LayerField()
    n_keys = serializers.IntegerField(help_text="Sampled keys with a value argmax and a prefix.")
    next_end = serializers.IntegerField(help_text="Rank-1 prefix ends the sentence.")
    next_unknown = serializers.IntegerField(
        help_text="Rank-1 prefix ends a cut sentence: left out of next_token's denominator."
    )
    next_token = RateSerializer(help_text="Reading (a).")
    trigger_token = RateSerializer(help_text="Reading (b).")


@extend_schema_serializer(component_name="ReportValueAgreement")
class ValueAgreementSerializer(_NotApplicable):
    """§4 over the sampled keys."""

    layers = ValueAgreementRowSerializer(many=True)
    overall = ValueAgreementRowSerializer(allow_null=True)


@extend_schema_serializer(component_name="ReportVariantRates")
class VariantRatesSerializer(serializers.Serializer):
    without_final_norm = RateSerializer(required=False, help_text="E·v_i.")
    with_final_norm = RateSerializer(
        required=False, help_text="E·norm(v_i); only where the model has a final norm."
    )


@extend_schema_serializer(component_name="ReportValueAgreementEveryKeyRow")
class ValueAgreementEveryKeyRowSerializer(serializers.Serializer):
    layer = LayerField()
    n_keys = serializers.IntegerField(help_text="Every key of the layer.")
    next_end = serializers.IntegerField(help_text="Rank-1 prefix ends the sentence.")
    next_unknown = serializers.IntegerField(
        help_text="Rank-1 prefix ends a cut sentence: left out of next_token's denominator."
    )
    next_token = VariantRatesSerializer(help_text="Reading (a), per variant.")
    trigger_token = VariantRatesSerializer(help_text="Reading (b), per variant.")


@extend_schema_serializer(component_name="ReportValueAgreementEveryKey")
class ValueAgreementEveryKeySerializer(_NotApplicable):
    """§4 over every key of every layer, from the mining pass's counts."""

    detail = serializers.CharField(
        allow_null=True, help_text="What is wrong with the stored counts (counts_invalid)."
    )
    format = serializers.CharField(allow_null=True)
    final_norm = serializers.CharField(allow_null=True, help_text="The final norm's module.")
    variants = serializers.ListField(
        child=serializers.ChoiceField(choices=VARIANTS),
        help_text="The variants counted, in order.",
    )
    layers = ValueAgreementEveryKeyRowSerializer(many=True)
    overall = ValueAgreementEveryKeyRowSerializer(allow_null=True)


@extend_schema_serializer(component_name="ReportPerturbationRow")
class PerturbationRowSerializer(serializers.Serializer):
    layer = LayerField()
    n_keys = serializers.IntegerField(help_text="Keys with a measurement.")
    first = _num()
    last = _num()
    random = _num()


@extend_schema_serializer(component_name="ReportPerturbation")
class PerturbationSerializer(serializers.Serializer):
    layers = PerturbationRowSerializer(many=True)
    overall = PerturbationRowSerializer()


@extend_schema_serializer(component_name="ReportStudy")
class ReportStudySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    model = serializers.CharField()
    corpus = serializers.CharField()
    top_k = serializers.IntegerField()


@extend_schema_serializer(component_name="AnnotatorTableStudy")
class ReportStudyNameSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


@extend_schema_serializer(component_name="ReportFilters")
class ReportFiltersSerializer(serializers.Serializer):
    annotators = serializers.ListField(child=serializers.CharField(), allow_null=True)
    layers = serializers.ListField(child=serializers.IntegerField(), allow_null=True)
    submitted_only = serializers.BooleanField()


class ReportApi(ReportsApi):
    @extend_schema_serializer(component_name="StudyReport")
    class OutputSerializer(serializers.Serializer):
        study = ReportStudySerializer()
        filters = ReportFiltersSerializer()
        labels = serializers.ListField(child=serializers.CharField())
        definitions = serializers.DictField(child=serializers.CharField())
        figure2 = Figure2Serializer()
        coverage = CoverageSerializer()
        agreement = AgreementSerializer()
        agreement_with_gold = AgreementWithGoldSerializer(many=True)
        check_accuracy = CheckAccuracySerializer(many=True)
        pattern_jaccard = PatternJaccardSerializer()
        value_agreement = ValueAgreementSerializer()
        value_agreement_gold = ValueAgreementSerializer(
            help_text="§4 over the sampled keys that have submitted gold."
        )
        value_agreement_every_key = ValueAgreementEveryKeySerializer()
        perturbation = PerturbationSerializer()

    @extend_schema(parameters=[ReportQuerySerializer], responses={200: OutputSerializer, **_ERRORS})
    def get(self, request: Request, study_id: int) -> Response:
        study = _study_or_404(study_id)
        report = report_build(study=study, flt=_report_filter(request, study))
        return Response(self.OutputSerializer(report).data)


class ReportCsvApi(ReportsApi):
    @extend_schema(
        parameters=[ReportQuerySerializer],
        responses={
            (200, "text/csv"): OpenApiResponse(
                response=OpenApiTypes.STR,
                description="One number per row: " + ",".join(REPORT_CSV_COLUMNS),
            ),
            **_ERRORS,
        },
    )
    def get(self, request: Request, study_id: int) -> HttpResponse:
        study = _study_or_404(study_id)
        report = report_build(study=study, flt=_report_filter(request, study))
        response = HttpResponse(report_csv(report), content_type="text/csv; charset=utf-8")
        name = exports.export_basename(study)
        response["Content-Disposition"] = f'attachment; filename="{name}-report.csv"'
        return response


# --- the annotator table ----------------------------------------------------------------


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


# --- exports ----------------------------------------------------------------------------


@extend_schema_serializer(component_name="StudyExportQuery")
class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=exports.FORMATS, help_text="The file format.")
    layers = _layers_field("Only these layers (from 1), comma-separated (default: all).")


class StudyExportApi(ReportsApi):
    content_negotiation_class = IgnoreFormatParameter

    @extend_schema(
        parameters=[ExportQuerySerializer],
        responses={
            (200, "application/jsonl"): OpenApiResponse(
                response=OpenApiTypes.BINARY, description="ffkv.annotations/v1, one key a line."
            ),
            (200, "application/zip"): OpenApiResponse(
                response=OpenApiTypes.BINARY,
                description=(
                    "format=csv: labels.csv (one row per prefix × annotator) and patterns.csv "
                    "(one row per key × annotator × pattern); format=parquet: the same two "
                    "tables, typed, as labels.parquet and patterns.parquet."
                ),
            ),
            **_ERRORS,
        },
    )
    def get(self, request: Request, study_id: int) -> HttpResponse:
        study = _study_or_404(study_id)
        query = ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        fmt = query.validated_data["format"]
        layers = query.validated_data.get("layers")
        _check_layers(study, layers)
        filename = exports.export_filename(study=study, fmt=fmt)
        response: HttpResponse | StreamingHttpResponse | FileResponse
        if fmt == "parquet":
            # Parquet's footer comes last: build the zip on disk chunk by chunk, then
            # stream it; the anonymous temporary file vanishes when the response closes.
            tmp = tempfile.TemporaryFile()  # noqa: SIM115 (FileResponse closes it)
            exports.export_parquet(study=study, sink=tmp, layers=layers)
            tmp.seek(0)
            response = FileResponse(tmp, content_type=exports.CONTENT_TYPES[fmt])
        elif fmt == "csv":
            response = StreamingHttpResponse(
                exports.export_csv(study=study, layers=layers),
                content_type=exports.CONTENT_TYPES[fmt],
            )
        else:
            response = StreamingHttpResponse(
                (text.encode("utf-8") for text in exports.export_jsonl(study=study, layers=layers)),
                content_type=exports.CONTENT_TYPES[fmt] + "; charset=utf-8",
            )
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return cast(HttpResponse, response)


@extend_schema_serializer(component_name="ExportJob")
class ExportJobOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    study_id = serializers.IntegerField()
    format = serializers.ChoiceField(choices=exports.FORMATS)
    status = serializers.ChoiceField(choices=ExportJob.Status.choices)
    progress = serializers.FloatField(help_text="0..1.")
    keys_done = serializers.IntegerField()
    keys_total = serializers.IntegerField()
    error = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    download_url = serializers.SerializerMethodField()

    def get_download_url(self, job: ExportJob) -> str | None:
        if job.status != ExportJob.Status.DONE:
            return None
        return reverse("admin-export-download", args=[job.pk])


def _job_or_404(job_id: int) -> ExportJob:
    job = export_job_get(job_id=job_id)
    if job is None:
        raise exceptions.NotFound(NOT_FOUND)
    return job


class ExportJobCreateApi(ReportsApi):
    @extend_schema_serializer(component_name="ExportJobCreate")
    class InputSerializer(serializers.Serializer):
        format = serializers.ChoiceField(choices=exports.FORMATS)

    @extend_schema(request=InputSerializer, responses={201: ExportJobOutputSerializer, **_ERRORS})
    def post(self, request: Request, study_id: int) -> Response:
        study = _study_or_404(study_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        job = jobs.export_job_create(
            study=study, fmt=serializer.validated_data["format"], created_by=request.user
        )
        return Response(ExportJobOutputSerializer(job).data, status=status.HTTP_201_CREATED)


class ExportJobDetailApi(ReportsApi):
    @extend_schema(
        responses={200: ExportJobOutputSerializer, 403: ErrorSerializer, 404: ErrorSerializer}
    )
    def get(self, request: Request, job_id: int) -> Response:
        job = jobs.export_job_fail_if_stale(job=_job_or_404(job_id))
        return Response(ExportJobOutputSerializer(job).data)


class ExportJobDownloadApi(ReportsApi):
    @extend_schema(
        responses={
            **{
                (200, exports.CONTENT_TYPES[fmt]): OpenApiResponse(
                    response=OpenApiTypes.BINARY, description="The export's file, in its format."
                )
                for fmt in exports.FORMATS
            },
            403: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
        }
    )
    def get(self, request: Request, job_id: int) -> HttpResponse:
        job = _job_or_404(job_id)
        try:
            path = jobs.export_job_file(job=job)
        except jobs.ExportUnavailable as exc:
            if not exc.conflict:
                raise exceptions.NotFound(exc.message) from exc
            return cast(
                HttpResponse,
                error_response(exc.message, ErrorCode.EXPORT_UNAVAILABLE, status.HTTP_409_CONFLICT),
            )
        response = FileResponse(
            path.open("rb"),
            as_attachment=True,
            filename=exports.export_filename(study=job.study, fmt=job.format),
            content_type=exports.CONTENT_TYPES[job.format],
        )
        if job.file_sha256:
            # RFC 9530: the client can check that it received the file the job completed.
            digest = base64.b64encode(bytes.fromhex(job.file_sha256)).decode("ascii")
            response["Repr-Digest"] = f"sha-256=:{digest}:"
        return cast(HttpResponse, response)


# --- import -----------------------------------------------------------------------------


@extend_schema_serializer(component_name="ImportErrors")
class ImportErrorsSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="The first error.")
    code = error_code_field()
    # Shadows Serializer.errors for mypy only: the metaclass turns it into a declared field.
    errors = serializers.ListField(  # type: ignore[assignment]
        child=serializers.CharField(),
        help_text="Every error found, each naming its line (or its form field).",
    )


STUDY_NAME_TAKEN_API = "A study named {name!r} already exists; send another study_name."


def _import_refused(errors: list[str], code: str = ErrorCode.IMPORT_REFUSED) -> Response:
    errors = printable(errors)
    return error_response(
        errors[0],
        ErrorCode(code),
        status.HTTP_400_BAD_REQUEST,
        errors=errors,
    )


class ImportApi(ReportsApi):
    parser_classes = [MultiPartParser]

    @extend_schema_serializer(component_name="StudyImport")
    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(help_text="A JSONL export (ffkv.annotations/v1).")
        study_name = serializers.CharField(
            max_length=200, required=False, help_text="Default: the file's study.name."
        )
        live = serializers.BooleanField(
            default=False,
            help_text=(
                "Make a live study (batches and assignments can be added). Default: an "
                "archived, read-only study that no annotator sees."
            ),
        )
        assign = serializers.BooleanField(
            default=False,
            help_text="With live: give each annotator the imported keys they annotated.",
        )

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if attrs.get("assign") and not attrs.get("live"):
                raise serializers.ValidationError({"assign": ASSIGN_NEEDS_LIVE})
            return attrs

    @extend_schema_serializer(component_name="StudyImported")
    class OutputSerializer(serializers.Serializer):
        study_id = serializers.IntegerField()
        study_name = serializers.CharField()
        archived = serializers.BooleanField(help_text="Read-only, out of annotators' sight.")
        assignments = serializers.IntegerField(help_text="Assignments made (assign only).")
        keys = serializers.IntegerField()
        prefixes = serializers.IntegerField()
        annotations = serializers.IntegerField()
        patterns = serializers.IntegerField()
        users_created = serializers.ListField(
            child=serializers.CharField(),
            help_text="New inactive accounts: annotators, and curators of gold annotations.",
        )

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, exceptions.ParseError):
            # A body that is no readable form: the documented 400 as well.
            return _import_refused([str(exc.detail)])
        return super().handle_exception(exc)

    @extend_schema(
        request={"multipart/form-data": InputSerializer},
        responses={
            201: OutputSerializer,
            400: ImportErrorsSerializer,
            403: ErrorSerializer,
            415: OpenApiResponse(
                ErrorSerializer, description="The body is not multipart/form-data."
            ),
        },
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        if not serializer.is_valid():
            # The documented 400 is ImportErrors, for a missing file as for a bad line.
            return _import_refused(
                [
                    f"{field}: {message}"
                    for field, messages in serializer.errors.items()
                    for message in messages
                ]
            )
        upload = serializer.validated_data["file"]
        try:
            result = study_import(
                file=upload,
                study_name=serializer.validated_data.get("study_name"),
                created_by=request.user,
                live=serializer.validated_data["live"],
                assign=serializer.validated_data["assign"],
            )
        except ImportFileError as exc:
            errors = exc.errors
            if exc.code == "study_name_taken":
                errors = [STUDY_NAME_TAKEN_API.format(name=exc.name)]
            return _import_refused(errors, exc.code)
        data = {
            "study_id": result.study.pk,
            "study_name": result.study.name,
            "archived": result.study.archived,
            "assignments": result.assignments,
            "keys": result.keys,
            "prefixes": result.prefixes,
            "annotations": result.annotations,
            "patterns": result.patterns,
            "users_created": result.users_created,
        }
        return Response(self.OutputSerializer(data).data, status=status.HTTP_201_CREATED)
