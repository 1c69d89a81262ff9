"""What every view of the API shares: error shapes and the mapping of service errors."""

from __future__ import annotations

from typing import Any

from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema_field, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from ..api_errors import ErrorCode, error_response
from ..evidence.rules import RULE_TYPES, RuleError, validate_rule
from ..labels import KINDS, LABELS
from ..models import Pattern, TriggerPrefix
from ..selectors.annotations import (
    KEY_WORK_STATUSES,
    AnnotationView,
    annotation_view,
    annotation_view_new,
)
from ..services import ServiceError
from ..services.annotations import AnnotationConflict, KeyNotAssigned

NOT_FOUND = "Not found."


def version_query_parameter(description: str) -> OpenApiParameter:
    """The required ``version`` of a DELETE, in the query string (some clients and proxies
    drop the body of a DELETE)."""
    return OpenApiParameter("version", OpenApiTypes.INT, required=True, description=description)


def error_code_field() -> serializers.ChoiceField:
    """The ``code`` of an error answer (annotate.api_errors.ErrorCode)."""
    return serializers.ChoiceField(
        choices=[(code.value, code.name) for code in ErrorCode],
        help_text="Stable name of the error, for clients to translate; `detail` is English.",
    )


@extend_schema_serializer(component_name="Error")
class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = error_code_field()


@extend_schema_serializer(component_name="FieldError")
class FieldErrorSerializer(serializers.Serializer):
    message = serializers.CharField()
    code = serializers.CharField(help_text='DRF\'s own: "required", "max_length", ...')


@extend_schema_serializer(component_name="ValidationError")
class ValidationErrorSerializer(serializers.Serializer):
    """A 400: a validation error (``code`` "invalid", with ``fields``) or a refused rule."""

    detail = serializers.CharField(help_text="The first message, after its field's name.")
    code = error_code_field()
    # Shadows Serializer.fields for mypy only: the metaclass turns it into a declared field.
    fields = serializers.DictField(  # type: ignore[assignment]
        required=False,
        help_text="Per field (nested as the input is): a list of `FieldError`.",
    )


@extend_schema_serializer(component_name="PatternRule")
class RuleSerializer(serializers.Serializer):
    """A shallow pattern's rule (docs/evidence.md, "Rules")."""

    type = serializers.ChoiceField(choices=list(RULE_TYPES))
    value = serializers.CharField()


class RuleField(serializers.JSONField):
    """A pattern's ``rule`` as written: null or ``{"type", "value"}``, checked by
    ``annotate.evidence.rules.validate_rule``, whose message names what is wrong."""

    def to_internal_value(self, data: Any) -> Any:
        try:
            return validate_rule(super().to_internal_value(data))
        except RuleError as error:
            raise serializers.ValidationError(str(error), code="invalid") from error


RULE_HELP = (
    'Null, or {"type": "token" | "ngram" | "suffix", "value": str} (docs/evidence.md, '
    '"Rules"); only on a shallow or shallow+semantic pattern.'
)


def rule_field(*, help_text: str = "", **kwargs: Any) -> RuleField:
    return RuleField(allow_null=True, help_text=f"{RULE_HELP} {help_text}".strip(), **kwargs)


# The four scores of a pattern (docs/evidence.md, "Scores"), each a float or null.
SCORE_NAMES = ("detection", "embedding", "shuffled_detection", "shuffled_embedding")


@extend_schema_serializer(component_name="PatternScores")
class ScoresSerializer(serializers.Serializer):
    detection = serializers.FloatField(
        allow_null=True, help_text="Balanced accuracy of the rule on held-out examples."
    )
    embedding = serializers.FloatField(
        allow_null=True, help_text="AUROC of the description's MiniLM similarity."
    )
    shuffled_detection = serializers.FloatField(allow_null=True)
    shuffled_embedding = serializers.FloatField(allow_null=True)


def scores_data(scores: dict[str, Any] | None) -> dict[str, float | None]:
    """A pattern's stored ``scores`` ({} until scored) as the API gives them: all four
    names, null where not computed."""
    scores = scores or {}
    return {name: None if scores.get(name) is None else float(scores[name]) for name in SCORE_NAMES}


PATTERN_SOURCES = [choice for choice, _ in Pattern.Source.choices]


@extend_schema_serializer(component_name="Pattern")
class PatternOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    description = serializers.CharField()
    kind = serializers.ChoiceField(choices=list(KINDS))
    prefix_ranks = serializers.ListField(child=serializers.IntegerField())
    order = serializers.IntegerField()
    client_id = serializers.UUIDField(allow_null=True)
    # Shadows Field.source for mypy only: the metaclass turns it into a declared field.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=PATTERN_SOURCES,
        help_text="`written`, or `suggestion`: accepted from the machine's suggestions "
        "(kept through edits).",
    )
    rule = RuleSerializer(allow_null=True)
    scores = ScoresSerializer(
        allow_null=True,
        help_text="The pattern's held-out scores; null unless the study shows annotators "
        "their scores (off by default: a pattern written after seeing its score is no "
        "longer a blind test).",
    )


@extend_schema_serializer(component_name="PrefixLabel")
class PrefixLabelOutputSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    # Shadows Field.label for mypy only: the metaclass turns it into a declared field.
    label = serializers.ChoiceField(choices=LABELS)  # type: ignore[assignment]


@extend_schema_serializer(component_name="AnnotationState")
class AnnotationStateSerializer(serializers.Serializer):
    """The annotator's own annotation: note, status, version, patterns, derived labels."""

    id = serializers.IntegerField(allow_null=True, help_text="Null until the first write.")
    key_id = serializers.IntegerField()
    status = serializers.ChoiceField(
        choices=KEY_WORK_STATUSES,
        help_text="`new`: nothing written yet (opening a key starts nothing); the first "
        "write makes it a draft.",
    )
    note = serializers.CharField(allow_blank=True)
    version = serializers.IntegerField()
    submitted_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)
    patterns = PatternOutputSerializer(many=True)
    labels = PrefixLabelOutputSerializer(many=True)
    active_seconds = serializers.FloatField(
        help_text="Seconds the annotator was active on the key, the largest total the "
        "workspace sent; it counts on from it."
    )


_DATETIME = serializers.DateTimeField()


def annotation_state_data(view: AnnotationView, *, show_scores: bool = False) -> dict[str, Any]:
    """What ``AnnotationStateSerializer(view).data`` is, built as plain data; each
    pattern's ``scores`` only where ``show_scores`` (the study's setting), null otherwise.

    Every annotator write answers with this state and the key screen shows it, so it is
    on the budgeted path (docs/benchmarks.md, "Latest figures"); DRF fields cost a
    millisecond or two of CPU for 25 labels and the patterns. The serializer stays the
    schema, and ``tests/api`` checks that both give the same JSON.
    """
    return {
        "id": view.id,
        "key_id": view.key_id,
        "status": str(view.status),
        "note": view.note,
        "version": view.version,
        "submitted_at": _DATETIME.to_representation(view.submitted_at),
        "updated_at": _DATETIME.to_representation(view.updated_at),
        "patterns": [
            {
                "id": pattern.id,
                "description": pattern.description,
                "kind": str(pattern.kind),
                "prefix_ranks": list(pattern.prefix_ranks),
                "order": pattern.order,
                "client_id": None if pattern.client_id is None else str(pattern.client_id),
                "source": pattern.source,
                "rule": pattern.rule,
                "scores": scores_data(pattern.scores) if show_scores else None,
            }
            for pattern in view.patterns
        ],
        "labels": [{"rank": label.rank, "label": label.label} for label in view.labels],
        "active_seconds": float(view.active_seconds),
    }


@extend_schema_serializer(component_name="Conflict")
class ConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = error_code_field()
    current = AnnotationStateSerializer()


MAX_USER_ID = 2**63 - 1
MAX_USERNAME = 150


@extend_schema_field(
    {
        "oneOf": [
            {"type": "integer", "minimum": 1, "maximum": MAX_USER_ID},
            {"type": "string", "minLength": 1, "maxLength": MAX_USERNAME},
        ]
    }
)
class UserRefField(serializers.Field):
    """A user named by id (a JSON integer) or by username (a JSON string)."""

    default_error_messages = {"invalid": "Name a user by id (integer) or username (string)."}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # As a CharField does: the lookup of a username with a NUL (PostgreSQL refuses
        # it) or a lone surrogate (UTF-8 cannot encode it) failed, a 503 or a 500.
        self.validators.append(ProhibitNullCharactersValidator())
        self.validators.append(ProhibitSurrogateCharactersValidator())

    def to_internal_value(self, data: Any) -> int | str:
        if isinstance(data, bool) or not isinstance(data, int | str):
            self.fail("invalid")
        if isinstance(data, str) and not 1 <= len(data) <= MAX_USERNAME:
            self.fail("invalid")
        if isinstance(data, int) and not 1 <= data <= MAX_USER_ID:
            self.fail("invalid")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class RuleViolation(exceptions.APIException):
    """A domain rule refused the request: 400 ``{"detail": message, "code": ...}``."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "rule_violation"


def _conflict_view(conflict: AnnotationConflict) -> AnnotationView:
    """The annotation a 409 shows; one without a row (a refused first write, whose draft
    was rolled back) is the key's not-started state."""
    annotation = conflict.annotation
    if annotation.pk is not None:
        return annotation_view(annotation=annotation)
    ranks = TriggerPrefix.objects.filter(key_id=annotation.key_id).order_by("rank")
    return annotation_view_new(
        key_id=annotation.key_id, ranks=list(ranks.values_list("rank", flat=True))
    )


class ApiErrorsMixin:
    """Turns service errors into API answers: a refused rule is 400 ``{detail, code}``, a
    key outside the user's assignments is 404 (as if it did not exist), and a conflict is
    409 ``{detail, code, current}`` with the annotation's current state."""

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, KeyNotAssigned):
            exc = exceptions.NotFound(NOT_FOUND)
        elif isinstance(exc, AnnotationConflict):
            current = annotation_state_data(_conflict_view(exc))
            return error_response(
                exc.message, ErrorCode(exc.code), status.HTTP_409_CONFLICT, current=current
            )
        elif isinstance(exc, ServiceError):
            exc = RuleViolation(exc.message, code=exc.code)
        return super().handle_exception(exc)  # type: ignore[misc]


def schema_doc_excludes() -> list[type]:
    """Classes whose docstrings are not an operation's description (drf-spectacular's
    ``GET_LIB_DOC_EXCLUDES``): its own list, and ``ApiErrorsMixin``, which documents
    itself and would otherwise describe every view that has no docstring of its own."""
    from drf_spectacular.plumbing import get_lib_doc_excludes

    return [*get_lib_doc_excludes(), ApiErrorsMixin]
