"""The upload of a JSONL file into a new study (``reports.imports.load.study_import``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from annotate.api_errors import ErrorCode, error_response, printable
from annotate.apis.common import (
    ErrorSerializer,
    error_code_field,
)
from annotate.imports import ASSIGN_NEEDS_LIVE, ImportFileError

from ..imports.load import study_import
from .common import ReportsApi


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
