"""The curator's API: the review queue, every annotator's work on a key, and the gold
annotation (docs/annotation.md, "Review and gold"). Curators only (``IsCurator``: admins
and the ``curator`` group); an annotator is refused every endpoint here, and no annotator
endpoint shows gold.

Curators review any study, archived (imported) ones too. Every gold write names the
gold's version as read (0 while the key has none) and answers the gold, or 409
``{detail, code, current}`` with the current gold (null: none yet).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..api_errors import ErrorCode, error_response
from ..labels import LABELS
from ..limits import MAX_DESCRIPTION, MAX_LAYER, MAX_NOTE, MAX_RANK, MAX_RANKS, MAX_VERSION
from ..models import (
    GoldAnnotation,
    GoldPattern,
    Key,
    KeyFlag,
    Pattern,
    Suggestion,
    TriggerPrefix,
)
from ..permissions import IsCurator
from ..selectors.keys import prefix_list_for_key
from ..selectors.review import (
    QUEUE_STATUSES,
    GoldView,
    gold_pattern_get,
    gold_view,
    key_get_for_review,
    review_batches,
    review_detail,
    review_layers,
    review_queue,
    source_pattern_for_key,
    study_get_for_review,
    study_list_for_review,
)
from ..services.gold import (
    GoldConflict,
    gold_pattern_create,
    gold_pattern_delete,
    gold_pattern_update,
    gold_reopen,
    gold_submit,
    gold_update,
)
from ..services.patterns import KEEP_RULE
from .common import (
    NOT_FOUND,
    PATTERN_SOURCES,
    ApiErrorsMixin,
    ErrorSerializer,
    RuleSerializer,
    ScoresSerializer,
    ValidationErrorSerializer,
    error_code_field,
    rule_field,
    scores_data,
    version_query_parameter,
)

QUEUE_PAGE_SIZE = 50
QUEUE_PAGE_MAX = 500
MAX_OFFSET = 2**31 - 1
MAX_ID = 2**63 - 1
KINDS = [choice for choice, _ in Pattern.Kind.choices]
BATCH_OF_ANOTHER_STUDY = "This study has no batch {batch}."
SOURCE_PATTERN_UNKNOWN = "This key's annotations have no pattern {id}."
PREFIX_RANKS_UNKNOWN = "This key has no trigger prefix of rank {ranks} (its ranks are 1 to {n})."

_DATETIME = serializers.DateTimeField()


class ReviewApi(ApiErrorsMixin, APIView):
    permission_classes = [IsCurator]

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, GoldConflict):
            current = None if exc.gold is None else gold_data(gold_view(gold=exc.gold))
            return error_response(
                exc.message, ErrorCode(exc.code), status.HTTP_409_CONFLICT, current=current
            )
        return super().handle_exception(exc)


def _me(request: Request) -> User:
    return cast(User, request.user)


def _key_or_404(key_id: int) -> Key:
    key = key_get_for_review(key_id=key_id)
    if key is None:
        raise exceptions.NotFound(NOT_FOUND)
    return key


# --- output -----------------------------------------------------------------------------


@extend_schema_serializer(component_name="ReviewStudy")
class ReviewStudySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    archived = serializers.BooleanField()
    keys = serializers.IntegerField(source="n_keys")
    ready = serializers.IntegerField(source="n_ready", help_text="Keys in the review queue.")
    curated = serializers.IntegerField(source="n_curated", help_text="Keys with submitted gold.")
    flagged = serializers.IntegerField(source="n_flagged", help_text="Keys with ≥1 flag.")
    check_rate = serializers.FloatField()


@extend_schema_serializer(component_name="ReviewFlag")
class FlagSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    reason = serializers.ChoiceField(choices=KeyFlag.Reason.choices)
    note = serializers.CharField(allow_blank=True)


@extend_schema_serializer(component_name="ReviewKeyFlag")
class DatedFlagSerializer(FlagSerializer):
    created_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="ReviewQueueItem")
class QueueItemSerializer(serializers.Serializer):
    key_id = serializers.IntegerField()
    layer = serializers.IntegerField()
    index = serializers.IntegerField()
    annotators = serializers.ListField(child=serializers.CharField())
    disagreement = serializers.FloatField(
        help_text="Share of the key's prefixes whose labels differ between annotators."
    )
    alpha = serializers.FloatField(
        allow_null=True, help_text="Krippendorff's α (nominal); null where undefined."
    )
    gold_status = serializers.ChoiceField(choices=["draft", "submitted"], allow_null=True)
    is_check = serializers.BooleanField()
    flags = FlagSerializer(many=True)
    ready = serializers.BooleanField(
        help_text="Every annotator of the key has submitted (a flagged key may not have)."
    )


@extend_schema_serializer(component_name="ReviewBatch")
class BatchRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


@extend_schema_serializer(component_name="ReviewQueue")
class QueueSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    offset = serializers.IntegerField()
    limit = serializers.IntegerField()
    results = QueueItemSerializer(many=True)
    layers = serializers.ListField(child=serializers.IntegerField())
    batches = BatchRefSerializer(many=True)


@extend_schema_serializer(component_name="ReviewPattern")
class ReviewPatternSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    description = serializers.CharField()
    kind = serializers.ChoiceField(choices=KINDS)
    prefix_ranks = serializers.ListField(child=serializers.IntegerField())
    # Shadows Field.source for mypy only: the metaclass turns it into a declared field.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=PATTERN_SOURCES, help_text="`written`, or `suggestion` (accepted)."
    )
    rule = RuleSerializer(allow_null=True)
    scores = ScoresSerializer(help_text="Held-out scores; each null until computed.")


@extend_schema_serializer(component_name="GoldPattern")
class GoldPatternSerializer(ReviewPatternSerializer):
    source = serializers.ChoiceField(choices=GoldPattern.Source.values)  # written or adopted
    source_annotator = serializers.CharField(allow_null=True)
    source_pattern_id = serializers.IntegerField(allow_null=True)
    client_id = serializers.UUIDField(
        allow_null=True, help_text="The id the client created it with (matches its pending create)."
    )


def _labels() -> serializers.ListField:
    return serializers.ListField(
        child=serializers.ChoiceField(choices=LABELS), help_text="One per prefix, in rank order."
    )


@extend_schema_serializer(component_name="Gold")
class GoldSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=GoldAnnotation.Status.values)
    version = serializers.IntegerField()
    note = serializers.CharField(allow_blank=True)
    is_check = serializers.BooleanField()
    curator = serializers.CharField(allow_null=True, help_text="Who last wrote it.")
    updated_at = serializers.DateTimeField()
    patterns = GoldPatternSerializer(many=True)
    labels = _labels()


@extend_schema_serializer(component_name="GoldConflict")
class GoldConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = error_code_field()
    current = GoldSerializer(allow_null=True, help_text="Null: the key has no gold yet.")


def gold_data(view: GoldView) -> dict[str, Any]:
    """``GoldSerializer``'s JSON, built as plain data."""
    return {
        "status": view.status,
        "version": view.version,
        "note": view.note,
        "is_check": view.is_check,
        "curator": view.curator,
        "updated_at": _DATETIME.to_representation(view.updated_at),
        "patterns": [
            {
                "id": p.id,
                "description": p.description,
                "kind": p.kind,
                "prefix_ranks": list(p.prefix_ranks),
                "source": p.source,
                "source_annotator": p.source_annotator,
                "source_pattern_id": p.source_pattern_id,
                "client_id": None if p.client_id is None else str(p.client_id),
                "rule": p.rule,
                "scores": scores_data(p.scores),
            }
            for p in view.patterns
        ],
        "labels": list(view.labels),
    }


@extend_schema_serializer(component_name="ReviewAnnotation")
class ReviewAnnotationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    annotator = serializers.CharField()
    status = serializers.ChoiceField(choices=["draft", "submitted"])
    note = serializers.CharField(allow_blank=True)
    submitted_at = serializers.DateTimeField(allow_null=True)
    active_seconds = serializers.FloatField()
    patterns = ReviewPatternSerializer(many=True)
    labels = _labels()


@extend_schema_serializer(component_name="ReviewStudyRef")
class StudyRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    archived = serializers.BooleanField()
    is_causal = serializers.BooleanField()


@extend_schema_serializer(component_name="ReviewValueToken")
class ValueTokenSerializer(serializers.Serializer):
    token = serializers.CharField()
    probability = serializers.FloatField()


@extend_schema_serializer(component_name="ReviewKey")
class ReviewKeySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    layer = serializers.IntegerField()
    index = serializers.IntegerField()
    study = StudyRefSerializer()
    density = serializers.FloatField()
    max_coefficient = serializers.FloatField()
    value_top_tokens = ValueTokenSerializer(many=True)


@extend_schema_serializer(component_name="ReviewPrefix")
class ReviewPrefixSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    coefficient = serializers.FloatField()
    text = serializers.CharField(allow_blank=True)
    trigger_token = serializers.CharField(allow_blank=True)
    next_token = serializers.CharField(allow_null=True, allow_blank=True)
    suffix = serializers.CharField(allow_blank=True)
    sentence = serializers.CharField(allow_blank=True)
    sentence_index = serializers.IntegerField()
    position = serializers.IntegerField()
    trigger_start = serializers.IntegerField(allow_null=True)
    trigger_end = serializers.IntegerField(allow_null=True)
    trigger_token_bytes = serializers.CharField(allow_blank=True)
    next_token_bytes = serializers.CharField(allow_blank=True)


@extend_schema_serializer(component_name="ReviewPrefixEvidence")
class ReviewPrefixEvidenceSerializer(ReviewPrefixSerializer):
    tokens = serializers.ListField(
        child=serializers.CharField(allow_blank=True, trim_whitespace=False),
        help_text="The token strings, decoded one by one (docs/evidence.md).",
    )
    token_coefficients = serializers.ListField(child=serializers.FloatField())


@extend_schema_serializer(component_name="ReviewHeldOut")
class ReviewHeldOutSerializer(ReviewPrefixEvidenceSerializer):
    rank = serializers.IntegerField(
        allow_null=True, help_text="heldout: top_k+1 … 2·top_k; null for heldout_random."
    )


@extend_schema_serializer(component_name="ReviewSample")
class ReviewSampleSerializer(ReviewPrefixEvidenceSerializer):
    rank = None  # type: ignore[assignment]
    kind = serializers.ChoiceField(choices=["band", "random"])
    band = serializers.IntegerField(allow_null=True, help_text="1 = lowest; null for random.")
    band_low = serializers.FloatField(allow_null=True)
    band_high = serializers.FloatField(allow_null=True)


@extend_schema_serializer(component_name="ReviewSuggestionDecision")
class ReviewSuggestionDecisionSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    decision = serializers.ChoiceField(choices=["accepted", "dismissed"])
    pattern_id = serializers.IntegerField(
        allow_null=True, help_text="The annotator's pattern made from it (null: none)."
    )
    at = serializers.DateTimeField()


@extend_schema_serializer(component_name="ReviewSuggestion")
class ReviewSuggestionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    method = serializers.ChoiceField(choices=Suggestion.Method.values)
    kind = serializers.ChoiceField(choices=KINDS)
    description = serializers.CharField(allow_blank=True)
    rule = RuleSerializer(allow_null=True)
    prefix_ranks = serializers.ListField(child=serializers.IntegerField())
    scores = ScoresSerializer()
    decisions = ReviewSuggestionDecisionSerializer(many=True)


@extend_schema_serializer(component_name="ReviewNeighbours")
class NeighboursSerializer(serializers.Serializer):
    previous_key_id = serializers.IntegerField(allow_null=True)
    next_key_id = serializers.IntegerField(allow_null=True)


@extend_schema_serializer(component_name="ReviewKeyDetail")
class ReviewKeyDetailSerializer(serializers.Serializer):
    key = ReviewKeySerializer()
    prefixes = ReviewPrefixEvidenceSerializer(many=True)
    samples = ReviewSampleSerializer(
        many=True, help_text="What annotators see below the top: bands 1 … 5, then random."
    )
    heldout = ReviewHeldOutSerializer(
        many=True, help_text="Ranks top_k+1 … 2·top_k, never shown to annotators."
    )
    heldout_random = ReviewHeldOutSerializer(
        many=True, help_text="Uniform negatives of the scores, never shown to annotators."
    )
    annotations = ReviewAnnotationSerializer(many=True)
    suggestions = ReviewSuggestionSerializer(
        many=True, help_text="The machine's suggestions: rules, clusters, then the LLM's."
    )
    gold = GoldSerializer(allow_null=True)
    flags = DatedFlagSerializer(many=True)
    awaiting = serializers.ListField(
        child=serializers.CharField(),
        help_text="Annotators the key waits for: assigned and not submitted, or with a draft. "
        "Empty once the key is ready for review.",
    )
    neighbours = NeighboursSerializer()


_READ_ERRORS = {403: ErrorSerializer, 404: ErrorSerializer}
_WRITE_RESPONSES = {
    200: GoldSerializer,
    400: ValidationErrorSerializer,
    403: ErrorSerializer,
    404: ErrorSerializer,
    409: GoldConflictSerializer,
}


# --- reads ------------------------------------------------------------------------------


class ReviewStudyListApi(ReviewApi):
    @extend_schema(responses={200: ReviewStudySerializer(many=True), 403: ErrorSerializer})
    def get(self, request: Request) -> Response:
        return Response(ReviewStudySerializer(study_list_for_review(), many=True).data)


class ReviewQueueApi(ReviewApi):
    class FilterSerializer(serializers.Serializer):
        layer = serializers.IntegerField(min_value=1, max_value=MAX_LAYER, required=False)
        batch = serializers.IntegerField(min_value=1, max_value=MAX_ID, required=False)
        status = serializers.ChoiceField(choices=QUEUE_STATUSES, default="unreviewed")
        offset = serializers.IntegerField(min_value=0, max_value=MAX_OFFSET, default=0)
        limit = serializers.IntegerField(
            min_value=1, max_value=QUEUE_PAGE_MAX, default=QUEUE_PAGE_SIZE
        )

    @extend_schema(
        parameters=[FilterSerializer],
        responses={200: QueueSerializer, 400: ValidationErrorSerializer, **_READ_ERRORS},
        description="The keys ready for review (status unreviewed, the default), curated "
        "(with submitted gold), flagged by an annotator (ready or not), or all of these; most "
        "disagreement first, then by layer and index.",
    )
    def get(self, request: Request, study_id: int) -> Response:
        study = study_get_for_review(study_id=study_id)
        if study is None:
            raise exceptions.NotFound(NOT_FOUND)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        layers = review_layers(study=study)
        batches = review_batches(study=study)
        layer = data.get("layer")
        if layer is not None and layer not in layers:
            raise exceptions.ValidationError({"layer": [f"This study has no layer {layer}."]})
        batch = None
        if data.get("batch") is not None:
            batch = next((b for b in batches if b["id"] == data["batch"]), None)
            if batch is None:
                message = BATCH_OF_ANOTHER_STUDY.format(batch=data["batch"])
                raise exceptions.ValidationError({"batch": [message]})
        page = review_queue(
            study=study,
            status=data["status"],
            layer=layer,
            batch_id=None if batch is None else batch["id"],
            offset=data["offset"],
            limit=data["limit"],
        )
        return Response(
            {
                "count": page.count,
                "offset": data["offset"],
                "limit": data["limit"],
                "results": [
                    {
                        "key_id": item.key_id,
                        "layer": item.layer,
                        "index": item.index,
                        "annotators": item.annotators,
                        "disagreement": item.disagreement,
                        "alpha": item.alpha,
                        "gold_status": item.gold_status,
                        "is_check": item.is_check,
                        "flags": item.flags,
                        "ready": item.ready,
                    }
                    for item in page.items
                ],
                "layers": layers,
                "batches": batches,
            }
        )


def _value_tokens(key: Key) -> list[dict[str, Any]]:
    return [
        {"token": str(pair[0]), "probability": float(pair[1])}
        for pair in key.value_top_tokens
        if isinstance(pair, list | tuple) and len(pair) == 2
    ]


class ReviewKeyDetailApi(ReviewApi):
    @extend_schema(
        responses={200: ReviewKeyDetailSerializer, **_READ_ERRORS},
        description="The key, its prefixes, every annotator's (non-check) work with its "
        "labels (drafts too, marked by their status), the gold annotation (null: none yet), "
        "the annotators' flags, who the key still waits for, and the keys before and after "
        "it in the unreviewed queue.",
    )
    def get(self, request: Request, key_id: int) -> Response:
        key = _key_or_404(key_id)
        detail = review_detail(key=key)
        study = key.study
        data = {
            "key": {
                "id": key.pk,
                "layer": key.layer,
                "index": key.index,
                "study": {
                    "id": study.pk,
                    "name": study.name,
                    "archived": study.archived,
                    "is_causal": study.is_causal,
                },
                "density": key.density,
                "max_coefficient": key.max_coefficient,
                "value_top_tokens": _value_tokens(key),
            },
            "prefixes": detail.prefixes,
            "samples": detail.samples,
            "heldout": detail.heldout,
            "heldout_random": detail.heldout_random,
            "annotations": [
                {
                    "id": a.id,
                    "annotator": a.annotator,
                    "status": a.status,
                    "note": a.note,
                    "submitted_at": _DATETIME.to_representation(a.submitted_at)
                    if a.submitted_at
                    else None,
                    "active_seconds": a.active_seconds,
                    "patterns": [
                        {
                            "id": p.id,
                            "description": p.description,
                            "kind": p.kind,
                            "prefix_ranks": list(p.prefix_ranks),
                            "source": p.source,
                            "rule": p.rule,
                            "scores": scores_data(p.scores),
                        }
                        for p in a.patterns
                    ],
                    "labels": a.labels,
                }
                for a in detail.annotations
            ],
            "suggestions": [
                {
                    "id": suggestion.pk,
                    "method": suggestion.method,
                    "kind": suggestion.kind,
                    "description": suggestion.description,
                    "rule": suggestion.rule,
                    "prefix_ranks": ranks,
                    "scores": scores_data(suggestion.scores),
                    "decisions": [
                        {
                            "annotator": d.annotator,
                            "decision": d.decision,
                            "pattern_id": d.pattern_id,
                            "at": _DATETIME.to_representation(d.at),
                        }
                        for d in decisions
                    ],
                }
                for suggestion, ranks, decisions in detail.suggestions
            ],
            "gold": None if detail.gold is None else gold_data(detail.gold),
            "flags": [
                {**flag, "created_at": _DATETIME.to_representation(flag["created_at"])}
                for flag in detail.flags
            ],
            "awaiting": detail.awaiting,
            "neighbours": {
                "previous_key_id": detail.previous_key_id,
                "next_key_id": detail.next_key_id,
            },
        }
        return Response(data)


# --- gold writes ------------------------------------------------------------------------


def _version_field() -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=0,
        max_value=MAX_VERSION,
        help_text="The gold's version as read; 0 while the key has no gold.",
    )


def _ranks_field(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_RANK),
        max_length=MAX_RANKS,
        **kwargs,
    )


@extend_schema_serializer(component_name="GoldVersionedAction")
class GoldVersionSerializer(serializers.Serializer):
    version = _version_field()


def _prefixes_by_rank(*, key: Key, ranks: Sequence[int]) -> list[TriggerPrefix]:
    by_rank = {prefix.rank: prefix for prefix in prefix_list_for_key(key=key)}
    unknown = sorted({rank for rank in ranks if rank not in by_rank})
    if unknown:
        message = PREFIX_RANKS_UNKNOWN.format(ranks=", ".join(map(str, unknown)), n=len(by_rank))
        raise exceptions.ValidationError({"prefix_ranks": [message]})
    return [by_rank[rank] for rank in ranks]


def _gold_answer(gold: GoldAnnotation, code: int = status.HTTP_200_OK) -> Response:
    return Response(gold_data(gold_view(gold=gold)), status=code)


class GoldApi(ReviewApi):
    @extend_schema_serializer(component_name="GoldUpdate")
    class InputSerializer(serializers.Serializer):
        version = _version_field()
        note = serializers.CharField(
            allow_blank=True, max_length=MAX_NOTE, trim_whitespace=False, required=False
        )
        is_check = serializers.BooleanField(
            required=False,
            help_text="A check key: once submitted, served unannounced to annotators.",
        )

    @extend_schema(request=InputSerializer, responses=_WRITE_RESPONSES)
    def patch(self, request: Request, key_id: int) -> Response:
        key = _key_or_404(key_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        gold = gold_update(key=key, actor=_me(request), **serializer.validated_data)
        return _gold_answer(gold)


class GoldPatternCreateApi(ReviewApi):
    @extend_schema_serializer(component_name="GoldPatternCreate")
    class InputSerializer(serializers.Serializer):
        version = _version_field()
        client_id = serializers.UUIDField(
            help_text="Made by the client; a retried create with the same id makes nothing new."
        )
        description = serializers.CharField(max_length=MAX_DESCRIPTION)
        kind = serializers.ChoiceField(choices=KINDS)
        prefix_ranks = _ranks_field()
        source_pattern_id = serializers.IntegerField(
            min_value=1,
            max_value=MAX_ID,
            required=False,
            allow_null=True,
            help_text="Adopt this pattern of an annotator of this key (its source is kept).",
        )
        rule = rule_field(required=False, default=None)

    @extend_schema(request=InputSerializer, responses={201: GoldSerializer, **_WRITE_RESPONSES})
    def post(self, request: Request, key_id: int) -> Response:
        key = _key_or_404(key_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        source = None
        if data.get("source_pattern_id") is not None:
            source = source_pattern_for_key(key=key, pattern_id=data["source_pattern_id"])
            if source is None:
                message = SOURCE_PATTERN_UNKNOWN.format(id=data["source_pattern_id"])
                raise exceptions.ValidationError({"source_pattern_id": [message]})
        result = gold_pattern_create(
            key=key,
            actor=_me(request),
            version=data["version"],
            description=data["description"],
            kind=data["kind"],
            prefixes=_prefixes_by_rank(key=key, ranks=data["prefix_ranks"]),
            client_id=data["client_id"],
            source_pattern=source,
            rule=data.get("rule"),
        )
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return _gold_answer(result.gold, code)


class GoldPatternDetailApi(ReviewApi):
    @extend_schema_serializer(component_name="GoldPatternUpdate")
    class InputSerializer(serializers.Serializer):
        version = _version_field()
        description = serializers.CharField(max_length=MAX_DESCRIPTION, required=False)
        kind = serializers.ChoiceField(choices=KINDS, required=False)
        prefix_ranks = _ranks_field(required=False)
        rule = rule_field(required=False, help_text="Absent: left as it is; null: removed.")

    def _pattern(self, key: Key, pattern_id: int) -> GoldPattern:
        pattern = gold_pattern_get(key=key, pattern_id=pattern_id)
        if pattern is None:
            raise exceptions.NotFound(NOT_FOUND)
        return pattern

    @extend_schema(request=InputSerializer, responses=_WRITE_RESPONSES)
    def patch(self, request: Request, key_id: int, pattern_id: int) -> Response:
        key = _key_or_404(key_id)
        pattern = self._pattern(key, pattern_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        ranks = data.get("prefix_ranks")
        gold = gold_pattern_update(
            pattern=pattern,
            actor=_me(request),
            version=data["version"],
            description=data.get("description"),
            kind=data.get("kind"),
            prefixes=None if ranks is None else _prefixes_by_rank(key=key, ranks=ranks),
            rule=data.get("rule", KEEP_RULE),
        )
        return _gold_answer(gold)

    @extend_schema(
        parameters=[version_query_parameter("The gold's version as read.")],
        responses=_WRITE_RESPONSES,
        description="Delete a gold pattern. The version travels in the query string, as "
        "for the annotator's delete.",
    )
    def delete(self, request: Request, key_id: int, pattern_id: int) -> Response:
        key = _key_or_404(key_id)
        pattern = self._pattern(key, pattern_id)
        serializer = GoldVersionSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        gold = gold_pattern_delete(
            pattern=pattern, actor=_me(request), version=serializer.validated_data["version"]
        )
        return _gold_answer(gold)


class GoldSubmitApi(ReviewApi):
    @extend_schema(
        request=GoldVersionSerializer,
        responses=_WRITE_RESPONSES,
        description="Save the gold annotation (submitted; zero patterns is allowed).",
    )
    def post(self, request: Request, key_id: int) -> Response:
        key = _key_or_404(key_id)
        serializer = GoldVersionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        gold = gold_submit(key=key, actor=_me(request), **serializer.validated_data)
        return _gold_answer(gold)


class GoldReopenApi(ReviewApi):
    @extend_schema(request=GoldVersionSerializer, responses=_WRITE_RESPONSES)
    def post(self, request: Request, key_id: int) -> Response:
        key = _key_or_404(key_id)
        serializer = GoldVersionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        gold = gold_reopen(key=key, actor=_me(request), **serializer.validated_data)
        return _gold_answer(gold)
