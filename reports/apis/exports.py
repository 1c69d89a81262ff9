"""Exports: a study streamed as JSONL, CSV or Parquet, or written by a background job whose
progress the browser follows and whose file it downloads once complete."""

from __future__ import annotations

import base64
import tempfile
from typing import cast

from django.http import FileResponse, HttpResponse, StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from annotate.api_errors import ErrorCode, error_response
from annotate.apis.common import (
    NOT_FOUND,
    ErrorSerializer,
)

from .. import exports, jobs
from ..contract.tables import TABLES
from ..models import ExportJob
from ..selectors.export_jobs import export_job_get
from .common import (
    _ERRORS,
    IgnoreFormatParameter,
    ReportsApi,
    _check_layers,
    _layers_field,
    _study_or_404,
)


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
                    "format=csv: "
                    + "; ".join(f"{t.name}.csv ({t.description})" for t in TABLES)
                    + "; format=parquet: the same tables, typed, as "
                    + ", ".join(f"{t.name}.parquet" for t in TABLES)
                    + "."
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
