"""A study's guidelines (Markdown, versioned): admins publish versions; annotators of the
study, curators and admins read the latest; annotators acknowledge it
(docs/annotation.md, "Guidelines").

The text is Markdown that the SPA renders without any raw HTML; the API stores and
answers it as written.
"""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..api_errors import ErrorCode, error_response
from ..limits import MAX_VERSION
from ..models import GUIDELINE_MAX_LENGTH, Study
from ..permissions import IsAdmin, IsAnnotator, IsCurator, user_is_curator
from ..selectors.guidelines import (
    guideline_latest,
    guideline_list_for_study,
    guideline_read_version,
    study_visible_to_annotator,
)
from ..selectors.studies import study_get
from ..services.guidelines import GuidelinesChanged, guideline_acknowledge, guideline_publish
from .common import (
    NOT_FOUND,
    ApiErrorsMixin,
    ErrorSerializer,
    ValidationErrorSerializer,
    error_code_field,
)

GUIDELINES_BLANK = "The guidelines cannot be empty."

_DATETIME = serializers.DateTimeField()

# The errors of every endpoint here: a reader's, and a writer's (who may send bad input).
_READ_ERRORS = {403: ErrorSerializer, 404: ErrorSerializer}
_WRITE_ERRORS = {400: ValidationErrorSerializer, **_READ_ERRORS}


@extend_schema_serializer(component_name="GuidelineVersion")
class GuidelineVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    text = serializers.CharField(help_text="Markdown; rendered without raw HTML.")
    created_by = serializers.CharField(allow_null=True, source="created_by.username")
    created_at = serializers.DateTimeField()
    acknowledged_by = serializers.IntegerField(help_text="How many users acknowledged it.")


@extend_schema_serializer(component_name="StudyGuidelines")
class StudyGuidelinesSerializer(serializers.Serializer):
    version = serializers.IntegerField(allow_null=True, help_text="The latest; null: none yet.")
    text = serializers.CharField(allow_blank=True, help_text="Markdown; empty when none.")
    created_at = serializers.DateTimeField(allow_null=True)
    acknowledged = serializers.BooleanField(
        help_text="Whether the user acknowledged this (the latest) version."
    )
    acknowledged_version = serializers.IntegerField(
        allow_null=True, help_text="The latest version the user acknowledged; null: none."
    )


@extend_schema_serializer(component_name="GuidelinesConflict")
class GuidelinesConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = error_code_field()
    current = StudyGuidelinesSerializer()


def _guidelines_data(*, study_id: int, user: Any) -> dict[str, Any]:
    """The study's latest guidelines as ``user`` sees them. Two queries."""
    latest = guideline_latest(study_id=study_id)
    read = guideline_read_version(study_id=study_id, user=user)
    return {
        "version": None if latest is None else latest.version,
        "text": "" if latest is None else latest.text,
        "created_at": None if latest is None else _DATETIME.to_representation(latest.created_at),
        "acknowledged": latest is not None and read == latest.version,
        "acknowledged_version": read,
    }


class StudyGuidelinesAdminApi(ApiErrorsMixin, APIView):
    permission_classes = [IsAdmin]

    @extend_schema_serializer(component_name="GuidelinePublish")
    class InputSerializer(serializers.Serializer):
        text = serializers.CharField(
            max_length=GUIDELINE_MAX_LENGTH,
            trim_whitespace=False,
            help_text="Markdown (no raw HTML is rendered).",
        )

        def validate_text(self, value: str) -> str:
            if not value.strip():
                raise exceptions.ValidationError(GUIDELINES_BLANK, code="blank")
            return value

    def _study(self, study_id: int) -> Study:
        study = study_get(study_id=study_id)
        if study is None:
            raise exceptions.NotFound(NOT_FOUND)
        return study

    @extend_schema(
        responses={200: GuidelineVersionSerializer(many=True), **_READ_ERRORS},
        description="Every version of the study's guidelines, newest first.",
    )
    def get(self, request: Request, study_id: int) -> Response:
        study = self._study(study_id)
        versions = guideline_list_for_study(study=study)
        return Response(GuidelineVersionSerializer(versions, many=True).data)

    @extend_schema(
        request=InputSerializer,
        responses={201: GuidelineVersionSerializer, **_WRITE_ERRORS},
        description="Publish a new version (the next number). Annotators who acknowledged "
        "an earlier one can go on writing; the workspace asks them to read the new one.",
    )
    def post(self, request: Request, study_id: int) -> Response:
        study = self._study(study_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        guideline = guideline_publish(
            study=study, text=serializer.validated_data["text"], author=cast(User, request.user)
        )
        guideline.acknowledged_by = 0  # type: ignore[attr-defined]
        return Response(GuidelineVersionSerializer(guideline).data, status=status.HTTP_201_CREATED)


def _study_for_reader(*, study_id: int, user: Any) -> Study:
    """The study, for a curator or admin; for an annotator, only a (live) study with a key
    in one of their assignments: any other is 404, as if it did not exist."""
    study = study_get(study_id=study_id)
    if study is None:
        raise exceptions.NotFound(NOT_FOUND)
    if not user_is_curator(user) and not study_visible_to_annotator(study_id=study_id, user=user):
        raise exceptions.NotFound(NOT_FOUND)
    return study


class StudyGuidelinesApi(ApiErrorsMixin, APIView):
    permission_classes = [IsAnnotator | IsCurator]

    @extend_schema(
        responses={200: StudyGuidelinesSerializer, **_READ_ERRORS},
        description="The study's guidelines as they are now, and whether the user "
        "acknowledged them. For annotators of the study, curators and admins.",
    )
    def get(self, request: Request, study_id: int) -> Response:
        study = _study_for_reader(study_id=study_id, user=request.user)
        return Response(_guidelines_data(study_id=study.pk, user=request.user))


class StudyGuidelinesAcknowledgeApi(ApiErrorsMixin, APIView):
    permission_classes = [IsAnnotator | IsCurator]

    @extend_schema_serializer(component_name="GuidelineAcknowledge")
    class InputSerializer(serializers.Serializer):
        version = serializers.IntegerField(
            min_value=1, max_value=MAX_VERSION, help_text="The version the user read."
        )

    @extend_schema(
        request=InputSerializer,
        responses={
            200: StudyGuidelinesSerializer,
            **_WRITE_ERRORS,
            409: GuidelinesConflictSerializer,
        },
        description="Record that the user read this version (idempotent). A version that "
        "is not the latest is 409 `guidelines_changed` with the current guidelines.",
    )
    def post(self, request: Request, study_id: int) -> Response:
        study = _study_for_reader(study_id=study_id, user=request.user)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            guideline_acknowledge(
                study=study,
                user=cast(User, request.user),
                version=serializer.validated_data["version"],
            )
        except GuidelinesChanged as exc:
            current = _guidelines_data(study_id=study.pk, user=request.user)
            return error_response(
                exc.message, ErrorCode(exc.code), status.HTTP_409_CONFLICT, current=current
            )
        return Response(_guidelines_data(study_id=study.pk, user=request.user))
