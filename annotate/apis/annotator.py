"""The annotator's API: their assignments, keys and own annotations (docs/annotation.md,
"The workspace").

Every view is for annotators (``IsAnnotator``) and checks the object itself: a key is
found only through the user's own assignments, so another annotator's key, or an
unassigned one, answers 404 exactly like a key that does not exist. Prefixes are named
by rank (from 1). Every write names the annotation version it read and answers the new
annotation state, or 409 ``{detail, current}``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from django.contrib.auth.models import User
from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..limits import MAX_DESCRIPTION, MAX_NOTE, MAX_RANK, MAX_RANKS, MAX_VERSION
from ..models import Annotation, Key, KeyFlag, Pattern, TriggerPrefix
from ..permissions import IsAnnotator
from ..selectors.annotations import (
    PatternView,
    annotation_get_for_annotator,
    annotation_view,
    annotation_view_new,
    pattern_get_for_annotator,
)
from ..selectors.keys import (
    assignment_get_for_annotator,
    assignment_list_for_annotator,
    key_count_for_assignment,
    key_detail_for_annotator,
    key_get_for_annotator,
    key_get_for_write,
    key_list_for_assignment,
    key_next_for_annotator,
    prefix_list_for_key,
)
from ..services.annotations import (
    MAX_ACTIVE_SECONDS,
    AnnotationConflict,
    annotation_get_or_create_for,
    annotation_reopen,
    annotation_save,
    annotation_submit,
)
from ..services.flags import key_flag_delete, key_flag_set
from ..services.patterns import (
    KEEP_RULE,
    PatternCreateResult,
    pattern_create,
    pattern_delete,
    pattern_update,
)
from .common import (
    NOT_FOUND,
    AnnotationStateSerializer,
    ApiErrorsMixin,
    ConflictSerializer,
    ErrorSerializer,
    ValidationErrorSerializer,
    annotation_state_data,
    rule_field,
    version_query_parameter,
)

KEYS_PAGE_SIZE = 100
KEYS_PAGE_MAX = 1_000
MAX_OFFSET = 2**31 - 1
PREFIX_RANKS_UNKNOWN = "This key has no trigger prefix of rank {ranks} (its ranks are 1 to {n})."

KINDS = [choice for choice, _ in Pattern.Kind.choices]


class AnnotatorApi(ApiErrorsMixin, APIView):
    permission_classes = [IsAnnotator]


def _me(request: Request) -> User:
    # IsAnnotator has let only active, signed-in annotators this far.
    return cast(User, request.user)


def _key_or_404(*, key_id: int, user: Any) -> Key:
    key = key_get_for_annotator(key_id=key_id, user=user)
    if key is None:
        raise exceptions.NotFound(NOT_FOUND)
    return key


GUIDELINES_NOT_ACKNOWLEDGED = (
    "Read and acknowledge this study's guidelines before annotating its keys."
)


def _writable_key(*, key_id: int, user: Any) -> Key:
    """The key of a write, with ``guideline_latest`` (the version every write records).

    While the annotator has acknowledged no version of the study's guidelines, their writes
    are refused (403 ``guidelines_not_acknowledged``; the SPA shows the guidelines first).
    A version published after one they acknowledged does not block them: the SPA asks them
    to read it, and work in flight (a queue of writes) is never lost to a new version.
    """
    key = key_get_for_write(key_id=key_id, user=user)
    if key is None:
        raise exceptions.NotFound(NOT_FOUND)
    if key.guideline_latest is not None and key.guideline_read is None:  # type: ignore[attr-defined]
        raise exceptions.PermissionDenied(
            GUIDELINES_NOT_ACKNOWLEDGED, code="guidelines_not_acknowledged"
        )
    return key


def _stamp(key: Key) -> int | None:
    """The study's latest guideline version, as ``_writable_key`` read it."""
    return key.guideline_latest  # type: ignore[attr-defined]


def _ranks(prefixes: Sequence[TriggerPrefix]) -> list[int]:
    return [prefix.rank for prefix in prefixes]


class _NothingWritten(Exception):
    """The first write to a key changed nothing: the draft made for it is rolled back."""


Written = TypeVar("Written")


def _write(
    *,
    key: Key,
    request: Request,
    write: Callable[[Annotation], Written],
    annotation_of: Callable[[Any], Annotation] = lambda written: cast(Annotation, written),
) -> Written | None:
    """Run ``write`` (a service) on the user's own annotation of ``key``, a key found
    through the user's assignments; ``annotation_of``: the annotation in what it answers.

    At the user's first write to the key there is no annotation yet: the draft (and its
    audit record) is made in the same transaction as the write, so a write that is
    refused (400, 403, 404, 409) leaves no draft behind, nor one that changes nothing
    (None: nothing written, answer the state as it is). Once the annotation exists, the
    write is the service's own transaction, as counted in ``tests/api``.
    """
    annotation = annotation_get_for_annotator(key=key, user=request.user)
    if annotation is not None:
        return write(annotation)
    try:
        with transaction.atomic():
            annotation = annotation_get_or_create_for(
                key=key, annotator=_me(request), guideline_version=_stamp(key)
            )
            made = annotation.version
            written = write(annotation)
            if annotation_of(written).version == made:
                raise _NothingWritten
            return written
    except _NothingWritten:
        return None
    except AnnotationConflict as conflict:
        # The draft is rolled back: the 409 shows the annotation as it is now (none yet,
        # unless another tab made one meanwhile).
        current = annotation_get_for_annotator(key=key, user=request.user)
        conflict.annotation = current or Annotation(key_id=key.pk)
        raise


def _shows_scores(key: Key) -> bool:
    """Whether the key's study shows annotators their own patterns' scores: the key as
    the selectors found it carries ``show_scores`` (off by default: docs/evidence.md)."""
    return bool(getattr(key, "show_scores", False))


def _read_state(*, key: Key, request: Request, ranks: list[int] | None = None) -> dict[str, Any]:
    """The user's annotation of ``key`` for a read: reading makes nothing, so a key only
    opened is still not started (``new``) in every count."""
    annotation = annotation_get_for_annotator(key=key, user=request.user)
    if annotation is not None:
        return _state(annotation=annotation, ranks=ranks, show_scores=_shows_scores(key))
    if ranks is None:
        ranks = _ranks(prefix_list_for_key(key=key))
    return annotation_state_data(annotation_view_new(key_id=key.pk, ranks=ranks))


def _state(
    *,
    annotation: Annotation,
    show_scores: bool,
    ranks: list[int] | None = None,
    patterns: list[PatternView] | None = None,
) -> dict[str, Any]:
    """The ``AnnotationState`` answer. ``ranks``: the key's, if the view has them;
    ``patterns``: as a write left them, if it says; each one a query less.
    ``show_scores``: the study's setting (``_shows_scores``)."""
    return annotation_state_data(
        annotation_view(annotation=annotation, ranks=ranks, patterns=patterns),
        show_scores=show_scores,
    )


def _prefixes_by_rank(
    *, prefixes: Sequence[TriggerPrefix], ranks: Sequence[int]
) -> list[TriggerPrefix]:
    """The key's prefixes named by ``ranks``, in order and with any repeats (the service
    refuses repeats with its own message). An unknown rank is a 400 on ``prefix_ranks``."""
    by_rank = {prefix.rank: prefix for prefix in prefixes}
    unknown = sorted({rank for rank in ranks if rank not in by_rank})
    if unknown:
        message = PREFIX_RANKS_UNKNOWN.format(ranks=", ".join(map(str, unknown)), n=len(by_rank))
        raise exceptions.ValidationError({"prefix_ranks": [message]})
    return [by_rank[rank] for rank in ranks]


_WRITE_RESPONSES = {
    200: AnnotationStateSerializer,
    400: ValidationErrorSerializer,
    403: ErrorSerializer,
    404: ErrorSerializer,
    409: ConflictSerializer,
}


def _version_field() -> serializers.IntegerField:
    return serializers.IntegerField(min_value=0, max_value=MAX_VERSION)


@extend_schema_serializer(component_name="VersionedAction")
class VersionInputSerializer(serializers.Serializer):
    version = _version_field()


class StrictFloatField(serializers.FloatField):
    """A JSON number, and only that: ``true`` and ``"12"`` are refused, not read as 1 and
    12 (DRF's ``FloatField`` takes any value ``float()`` takes)."""

    default_error_messages = {"invalid": "A number is required (not a string or a boolean)."}

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return cast(float, super().to_internal_value(data))


def _active_seconds_field() -> serializers.FloatField:
    return StrictFloatField(
        required=False,
        min_value=0.0,
        max_value=MAX_ACTIVE_SECONDS,
        help_text="The workspace's running total of active seconds on the key (tab "
        "visible, input within the last 60 s), at most 2,592,000 (30 days). Recorded only "
        "with the write that carries it, when that write is made (in its version and audit "
        "record; never with a refused one); the server keeps the largest total it is "
        "sent. A submitted annotation's time is final.",
    )


@extend_schema_serializer(component_name="AnnotationSubmit")
class SubmitInputSerializer(VersionInputSerializer):
    active_seconds = _active_seconds_field()


class AssignmentListApi(AnnotatorApi):
    @extend_schema_serializer(component_name="Assignment")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        batch_name = serializers.CharField(source="batch.name")
        study_id = serializers.IntegerField(source="batch.study_id")
        study_name = serializers.CharField(source="batch.study.name")
        keys_total = serializers.IntegerField()
        keys_submitted = serializers.IntegerField()
        created_at = serializers.DateTimeField()

    @extend_schema(responses={200: OutputSerializer(many=True), 403: ErrorSerializer})
    def get(self, request: Request) -> Response:
        assignments = assignment_list_for_annotator(user=request.user)
        return Response(self.OutputSerializer(assignments, many=True).data)


@extend_schema_serializer(component_name="AssignmentKey")
class AssignmentKeyOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    layer = serializers.IntegerField()
    index = serializers.IntegerField()
    status = serializers.ChoiceField(
        choices=["draft", "submitted"],
        allow_null=True,
        source="my_status",
        help_text="The user's own annotation status; null: not started (nothing written yet).",
    )
    version = serializers.IntegerField(source="my_version", allow_null=True)
    pattern_count = serializers.IntegerField(source="my_patterns")


@extend_schema_serializer(component_name="AssignmentKeyPage")
class AssignmentKeyPageSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Keys in the whole assignment.")
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
    results = AssignmentKeyOutputSerializer(many=True)


class AssignmentKeyListApi(AnnotatorApi):
    """A page of the assignment's keys in (layer, index) order, each with the user's own
    status; ``count`` is the number of keys of the whole assignment."""

    # Paged: the whole list of a 100,000-key assignment was 8.4 MB on every call.

    class FilterSerializer(serializers.Serializer):
        limit = serializers.IntegerField(
            min_value=1,
            max_value=KEYS_PAGE_MAX,
            default=KEYS_PAGE_SIZE,
            help_text=f"Keys per page (at most {KEYS_PAGE_MAX}).",
        )
        offset = serializers.IntegerField(
            min_value=0,
            max_value=MAX_OFFSET,
            default=0,
            help_text="How many keys to skip, in (layer, index) order.",
        )

    @extend_schema(
        parameters=[FilterSerializer],
        responses={
            200: AssignmentKeyPageSerializer,
            400: ValidationErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
        },
    )
    def get(self, request: Request, assignment_id: int) -> Response:
        assignment = assignment_get_for_annotator(assignment_id=assignment_id, user=request.user)
        if assignment is None:
            raise exceptions.NotFound(NOT_FOUND)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        limit, offset = filters.validated_data["limit"], filters.validated_data["offset"]
        keys = key_list_for_assignment(assignment=assignment)[offset : offset + limit]
        page = {
            "count": key_count_for_assignment(assignment=assignment),
            "limit": limit,
            "offset": offset,
            "results": AssignmentKeyOutputSerializer(keys, many=True).data,
        }
        return Response(page)


class NextKeyApi(AnnotatorApi):
    class FilterSerializer(serializers.Serializer):
        assignment = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1)

    @extend_schema_serializer(component_name="NextKey")
    class OutputSerializer(serializers.Serializer):
        key_id = serializers.IntegerField()
        assignment_id = serializers.IntegerField()

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "assignment",
                OpenApiTypes.INT,
                description="Only keys of this assignment (one of the user's).",
            )
        ],
        responses={
            200: OutputSerializer,
            204: None,
            400: ValidationErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
        },
        description="The user's next unfinished key; 204 when every key is submitted; "
        "404 when `assignment` is not one of the user's.",
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        assignment_id = filters.validated_data.get("assignment")
        # Someone else's assignment (a shared link) is 404, not "nothing left": the
        # client then falls back to the user's own.
        if assignment_id is not None and (
            assignment_get_for_annotator(assignment_id=assignment_id, user=request.user) is None
        ):
            raise exceptions.NotFound(NOT_FOUND)
        # Check keys (annotate.services.check_keys) are keys of their assignment: served in
        # its order.
        next_key = key_next_for_annotator(user=request.user, assignment_id=assignment_id)
        if next_key is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(self.OutputSerializer(next_key).data)


@extend_schema_serializer(component_name="TriggerPrefix")
class TriggerPrefixOutputSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    coefficient = serializers.FloatField()
    text = serializers.CharField()
    trigger_token = serializers.CharField()
    next_token = serializers.CharField(
        allow_null=True, help_text="Null where the sentence was cut after the prefix."
    )
    suffix = serializers.CharField()
    sentence = serializers.CharField()
    sentence_index = serializers.IntegerField()
    position = serializers.IntegerField()
    trigger_start = serializers.IntegerField(
        allow_null=True,
        help_text=(
            "The trigger token's character span [trigger_start, trigger_end) in text, as "
            "written (Unicode code points). Null where unknown: match trigger_token instead."
        ),
    )
    trigger_end = serializers.IntegerField(allow_null=True)
    trigger_token_bytes = serializers.CharField(
        allow_blank=True,
        help_text=(
            "The trigger token's raw bytes in hex where, decoded alone, it is U+FFFD (a "
            "byte-level piece of a multi-byte character); empty where its text is all "
            "there is, or where the bytes are unknown."
        ),
    )
    next_token_bytes = serializers.CharField(
        allow_blank=True, help_text="The same for the next token."
    )
    tokens = serializers.ListField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False),
        help_text="The token strings, decoded one by one: a causal model's prefix, an "
        "encoder's whole sentence. Empty where unknown.",
    )
    token_coefficients = serializers.ListField(
        child=serializers.FloatField(),
        help_text="The key's coefficient at each of `tokens` (signed), as many.",
    )


SAMPLE_KINDS = ["band", "random"]


@extend_schema_serializer(component_name="KeySample")
class KeySampleOutputSerializer(TriggerPrefixOutputSerializer):
    """A sample below the top (docs/evidence.md): shaped like a prefix without ``rank``;
    its ``coefficient`` is its sentence's largest, where its prefix ends."""

    rank = None  # type: ignore[assignment]
    kind = serializers.ChoiceField(
        choices=SAMPLE_KINDS,
        help_text="`band`: drawn within one of 5 equal-width bands; `random`: uniform over "
        "the corpus.",
    )
    band = serializers.IntegerField(allow_null=True, help_text="1 = lowest; null for random.")
    band_low = serializers.FloatField(allow_null=True)
    band_high = serializers.FloatField(allow_null=True)


@extend_schema_serializer(component_name="KeyHistogram")
class HistogramOutputSerializer(serializers.Serializer):
    edges = serializers.ListField(child=serializers.FloatField())
    counts = serializers.ListField(child=serializers.IntegerField())


@extend_schema_serializer(component_name="ValueToken")
class ValueTokenOutputSerializer(serializers.Serializer):
    token = serializers.CharField()
    probability = serializers.FloatField()


@extend_schema_serializer(component_name="KeyStudy")
class KeyStudySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    guideline_version = serializers.IntegerField(
        allow_null=True, help_text="The latest version of the study's guidelines; null: none."
    )
    guidelines_acknowledged = serializers.BooleanField(
        help_text="Whether the user acknowledged that latest version."
    )
    suggestions_enabled = serializers.BooleanField(
        help_text="Whether the study offers annotators the machine's suggestions."
    )
    show_scores = serializers.BooleanField(
        help_text="Whether the user's patterns show their held-out scores (off by default)."
    )


FLAG_REASONS = [choice for choice, _ in KeyFlag.Reason.choices]


@extend_schema_serializer(component_name="KeyFlag")
class KeyFlagSerializer(serializers.Serializer):
    reason = serializers.ChoiceField(choices=FLAG_REASONS)
    note = serializers.CharField(
        allow_blank=True,
        required=False,
        default="",
        max_length=MAX_NOTE,
        help_text="Needed when the reason is `other`.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["reason"] == KeyFlag.Reason.OTHER and not attrs.get("note", "").strip():
            raise serializers.ValidationError(
                {"note": ["Say what is wrong when the reason is other."]}
            )
        return attrs


class KeyFlagApi(AnnotatorApi):
    """The user's own flag on a key of theirs: set (or replace) it, or remove it. Nobody
    else's flag is ever shown to an annotator."""

    @extend_schema(
        request=KeyFlagSerializer,
        responses={
            200: KeyFlagSerializer,
            400: ValidationErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
        },
    )
    def put(self, request: Request, key_id: int) -> Response:
        key = _key_or_404(key_id=key_id, user=request.user)
        serializer = KeyFlagSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        flag = key_flag_set(key=key, annotator=_me(request), **serializer.validated_data)
        return Response({"reason": flag.reason, "note": flag.note})

    @extend_schema(responses={204: None, 403: ErrorSerializer, 404: ErrorSerializer})
    def delete(self, request: Request, key_id: int) -> Response:
        key = _key_or_404(key_id=key_id, user=request.user)
        key_flag_delete(key=key, annotator=_me(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


def _histogram(histogram: Any) -> dict[str, list[Any]] | None:
    """The key's stored histogram as ``{"edges", "counts"}``; null where mining left none
    (a study imported without it)."""
    if not isinstance(histogram, dict) or "edges" not in histogram or "counts" not in histogram:
        return None
    return {
        "edges": [float(edge) for edge in histogram["edges"]],
        "counts": [int(count) for count in histogram["counts"]],
    }


class KeyDetailApi(AnnotatorApi):
    class FilterSerializer(serializers.Serializer):
        assignment = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1)

    @extend_schema_serializer(component_name="KeyDetail")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        study_id = serializers.IntegerField()
        study_name = serializers.CharField()
        is_causal = serializers.BooleanField()
        layer = serializers.IntegerField()
        index = serializers.IntegerField()
        value_top_tokens = ValueTokenOutputSerializer(
            many=True,
            allow_null=True,
            help_text="Null unless the study shows value tokens (off by default: bias).",
        )
        prefixes = TriggerPrefixOutputSerializer(many=True)
        max_coefficient = serializers.FloatField(
            help_text="The key's largest per-sentence coefficient over the corpus: the "
            "scale of the token shading."
        )
        density = serializers.FloatField(help_text="Share of real positions with m > 0.")
        histogram = HistogramOutputSerializer(
            allow_null=True,
            help_text="The key's coefficients over the corpus from mining; null where unknown.",
        )
        samples = KeySampleOutputSerializer(
            many=True, help_text="Samples below the top: bands 1 … 5, then random."
        )
        annotation = AnnotationStateSerializer()
        study = KeyStudySerializer()
        flag = KeyFlagSerializer(
            allow_null=True, help_text="The user's own flag on the key (null: none)."
        )
        assignment_id = serializers.IntegerField(
            allow_null=True,
            help_text="The user's own assignment this key is worked in: `assignment` where "
            "it is one of theirs holding the key, else the first of theirs that does; "
            "null where none. Never someone else's.",
        )

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "assignment",
                OpenApiTypes.INT,
                description="The assignment the key was opened from (a link may carry "
                "someone else's: it is then not used).",
            )
        ],
        responses={
            200: OutputSerializer,
            400: ValidationErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
        },
        description="The key, its trigger prefixes and the user's own annotation "
        "(`new` until the user's first write to it: opening a key starts nothing).",
    )
    def get(self, request: Request, key_id: int) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        detail = key_detail_for_annotator(
            key_id=key_id, user=request.user, assignment_id=filters.validated_data.get("assignment")
        )
        if detail is None:
            raise exceptions.NotFound(NOT_FOUND)
        key, study = detail.key, detail.key.study
        key.show_scores = study.show_scores  # type: ignore[attr-defined]  # _shows_scores
        tokens = None
        if study.show_value_tokens:
            tokens = [
                {"token": str(pair[0]), "probability": float(pair[1])}
                for pair in key.value_top_tokens
                if isinstance(pair, list | tuple) and len(pair) == 2
            ]
        # The OutputSerializer's shape, built directly from plain data (see
        # key_detail_for_annotator); tests/api checks that the serializer agrees.
        ranks = [prefix["rank"] for prefix in detail.prefixes]
        data = {
            "id": key.pk,
            "study_id": study.pk,
            "study_name": study.name,
            "is_causal": study.is_causal,
            "layer": key.layer,
            "index": key.index,
            "value_top_tokens": tokens,
            "prefixes": detail.prefixes,
            "max_coefficient": key.max_coefficient,
            "density": key.density,
            "histogram": _histogram(key.histogram),
            "samples": detail.samples,
            "annotation": _read_state(key=key, request=request, ranks=ranks),
            "study": {
                "id": study.pk,
                "guideline_version": key.guideline_latest,  # type: ignore[attr-defined]
                "guidelines_acknowledged": key.guideline_latest is not None  # type: ignore[attr-defined]
                and key.guideline_read == key.guideline_latest,  # type: ignore[attr-defined]
                "suggestions_enabled": study.suggestions_enabled,
                "show_scores": study.show_scores,
            },
            "flag": detail.flag,
            "assignment_id": key.my_assignment_id,  # type: ignore[attr-defined]
        }
        return Response(data)


class AnnotationApi(AnnotatorApi):
    @extend_schema_serializer(component_name="AnnotationSave")
    class InputSerializer(serializers.Serializer):
        note = serializers.CharField(allow_blank=True, max_length=MAX_NOTE, trim_whitespace=False)
        version = _version_field()
        active_seconds = _active_seconds_field()

    @extend_schema(
        responses={200: AnnotationStateSerializer, 403: ErrorSerializer, 404: ErrorSerializer}
    )
    def get(self, request: Request, key_id: int) -> Response:
        key = _key_or_404(key_id=key_id, user=request.user)
        return Response(_read_state(key=key, request=request))

    @extend_schema(request=InputSerializer, responses=_WRITE_RESPONSES)
    def put(self, request: Request, key_id: int) -> Response:
        key = _writable_key(key_id=key_id, user=request.user)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        annotation = _write(
            key=key,
            request=request,
            write=lambda annotation: annotation_save(
                annotation=annotation,
                actor=_me(request),
                note=data["note"],
                version=data["version"],
                active_seconds=data.get("active_seconds"),
                guideline_version=_stamp(key),
            ),
        )
        if annotation is None:
            return Response(_read_state(key=key, request=request))
        return Response(_state(annotation=annotation, show_scores=_shows_scores(key)))


class PatternCreateApi(AnnotatorApi):
    @extend_schema_serializer(component_name="PatternCreate")
    class InputSerializer(serializers.Serializer):
        description = serializers.CharField(max_length=MAX_DESCRIPTION)
        kind = serializers.ChoiceField(choices=KINDS)
        prefix_ranks = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=MAX_RANK),
            max_length=MAX_RANKS,
        )
        version = _version_field()
        client_id = serializers.UUIDField(
            required=False,
            allow_null=True,
            help_text="Made by the client; a retried create with the same id makes nothing new.",
        )
        rule = rule_field(required=False, default=None)

    @extend_schema(
        request=InputSerializer,
        responses={201: AnnotationStateSerializer, **_WRITE_RESPONSES},
    )
    def post(self, request: Request, key_id: int) -> Response:
        key = _writable_key(key_id=key_id, user=request.user)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        prefixes = prefix_list_for_key(key=key)
        named = _prefixes_by_rank(prefixes=prefixes, ranks=data["prefix_ranks"])

        def create(annotation: Annotation) -> PatternCreateResult:
            return pattern_create(
                annotation=annotation,
                actor=_me(request),
                description=data["description"],
                kind=data["kind"],
                prefixes=named,
                version=data["version"],
                client_id=data.get("client_id"),
                rule=data.get("rule"),
                guideline_version=_stamp(key),
            )

        result = _write(
            key=key, request=request, write=create, annotation_of=lambda r: r.annotation
        )
        if result is None:  # a retried create that another tab's write already made
            return Response(_read_state(key=key, request=request, ranks=_ranks(prefixes)))
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        state = _state(
            annotation=result.annotation,
            ranks=_ranks(prefixes),
            patterns=result.patterns,
            show_scores=_shows_scores(key),
        )
        return Response(state, status=code)


class PatternDetailApi(AnnotatorApi):
    @extend_schema_serializer(component_name="PatternUpdate")
    class InputSerializer(serializers.Serializer):
        description = serializers.CharField(max_length=MAX_DESCRIPTION, required=False)
        kind = serializers.ChoiceField(choices=KINDS, required=False)
        prefix_ranks = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=MAX_RANK),
            max_length=MAX_RANKS,
            required=False,
        )
        rule = rule_field(required=False, help_text="Absent: left as it is; null: removed.")
        version = _version_field()

    def _pattern(self, request: Request, key: Key, pattern_id: int) -> Pattern:
        pattern = pattern_get_for_annotator(key=key, pattern_id=pattern_id, user=request.user)
        if pattern is None:
            raise exceptions.NotFound(NOT_FOUND)
        return pattern

    @extend_schema(request=InputSerializer, responses=_WRITE_RESPONSES)
    def patch(self, request: Request, key_id: int, pattern_id: int) -> Response:
        key = _writable_key(key_id=key_id, user=request.user)
        pattern = self._pattern(request, key, pattern_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        ranks = data.get("prefix_ranks")
        prefixes = prefix_list_for_key(key=key)
        annotation = pattern_update(
            pattern=pattern,
            actor=_me(request),
            version=data["version"],
            description=data.get("description"),
            kind=data.get("kind"),
            prefixes=None if ranks is None else _prefixes_by_rank(prefixes=prefixes, ranks=ranks),
            rule=data.get("rule", KEEP_RULE),
            guideline_version=_stamp(key),
        )
        return Response(
            _state(annotation=annotation, ranks=_ranks(prefixes), show_scores=_shows_scores(key))
        )

    @extend_schema(
        parameters=[version_query_parameter("The annotation version the client read.")],
        responses=_WRITE_RESPONSES,
        description="Delete a pattern. The version travels in the query string, since "
        "some clients and proxies drop the body of a DELETE.",
    )
    def delete(self, request: Request, key_id: int, pattern_id: int) -> Response:
        key = _writable_key(key_id=key_id, user=request.user)
        pattern = self._pattern(request, key, pattern_id)
        serializer = VersionInputSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        annotation = pattern_delete(
            pattern=pattern,
            actor=_me(request),
            version=serializer.validated_data["version"],
            guideline_version=_stamp(key),
        )
        return Response(_state(annotation=annotation, show_scores=_shows_scores(key)))


class AnnotationSubmitApi(AnnotatorApi):
    @extend_schema(
        request=SubmitInputSerializer,
        responses=_WRITE_RESPONSES,
        description="Submit the annotation (zero patterns is allowed: a finding too).",
    )
    def post(self, request: Request, key_id: int) -> Response:
        key = _writable_key(key_id=key_id, user=request.user)
        serializer = SubmitInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        annotation = _write(
            key=key,
            request=request,
            write=lambda annotation: annotation_submit(
                annotation=annotation,
                actor=_me(request),
                version=data["version"],
                active_seconds=data.get("active_seconds"),
                guideline_version=_stamp(key),
            ),
        )
        if annotation is None:  # submitted meanwhile by another tab: a retried submit
            return Response(_read_state(key=key, request=request))
        return Response(_state(annotation=annotation, show_scores=_shows_scores(key)))


class AnnotationReopenApi(AnnotatorApi):
    @extend_schema(request=VersionInputSerializer, responses=_WRITE_RESPONSES)
    def post(self, request: Request, key_id: int) -> Response:
        key = _writable_key(key_id=key_id, user=request.user)
        serializer = VersionInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        annotation = annotation_get_for_annotator(key=key, user=request.user)
        if annotation is None:
            # Nothing written yet, so nothing to reopen: reopening makes no draft either.
            return Response(_read_state(key=key, request=request))
        annotation = annotation_reopen(
            annotation=annotation,
            actor=_me(request),
            version=serializer.validated_data["version"],
            guideline_version=_stamp(key),
        )
        return Response(_state(annotation=annotation, show_scores=_shows_scores(key)))
