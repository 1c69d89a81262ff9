"""The annotator's view of the machine's suggestions for a key (docs/evidence.md,
"Suggestions"): list them, accept one (it becomes the caller's pattern) or dismiss one.

The key is found through the caller's own assignments, as every annotator view finds it:
a key that is not theirs answers the same 404 as one that does not exist, and so does a
suggestion that is not of that key or that they may not see yet (an LLM suggestion
before they submitted the key). A study with suggestions off lists nothing but
``{"enabled": false}`` and accepts nothing.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from ..limits import MAX_DESCRIPTION
from ..models import Annotation, Key, Pattern, Suggestion
from ..selectors.suggestions import (
    SuggestionItem,
    suggestion_get_for_annotator,
    suggestion_list_for_annotator,
)
from ..services.suggestions import (
    SuggestionAcceptResult,
    suggestion_accept,
    suggestion_dismiss,
)
from .annotator import (
    _WRITE_RESPONSES,
    AnnotatorApi,
    _key_or_404,
    _me,
    _read_state,
    _shows_scores,
    _stamp,
    _state,
    _version_field,
    _writable_key,
    _write,
)
from .common import (
    NOT_FOUND,
    AnnotationStateSerializer,
    ErrorSerializer,
    RuleSerializer,
    ScoresSerializer,
    ValidationErrorSerializer,
    scores_data,
)

METHODS = [choice for choice, _ in Suggestion.Method.choices]
KINDS = [choice for choice, _ in Pattern.Kind.choices]
DECISIONS = ["accepted", "dismissed"]


@extend_schema_serializer(component_name="Suggestion")
class SuggestionOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    method = serializers.ChoiceField(
        choices=METHODS,
        help_text="`rule`: a shared trigger token, final n-gram or word ending; `cluster`: "
        "a group of prefixes whose MiniLM embeddings cluster (no description); `llm`: an "
        "LLM's description, listed only once you have submitted the key.",
    )
    kind = serializers.ChoiceField(choices=KINDS)
    description = serializers.CharField(allow_blank=True)
    rule = RuleSerializer(allow_null=True)
    prefix_ranks = serializers.ListField(
        child=serializers.IntegerField(), help_text="The top-k prefixes it covers, by rank."
    )
    decision = serializers.ChoiceField(
        choices=DECISIONS, allow_null=True, help_text="Your own decision; null: none yet."
    )
    pattern_id = serializers.IntegerField(
        allow_null=True, help_text="Your pattern made from it (null: none, or deleted)."
    )
    scores = ScoresSerializer(
        required=False,
        help_text="Its held-out scores; only where the study shows annotators scores.",
    )


@extend_schema_serializer(component_name="SuggestionList")
class SuggestionListOutputSerializer(serializers.Serializer):
    enabled = serializers.BooleanField(
        help_text="False: the study offers no suggestions (and nothing else is sent)."
    )
    suggestions = SuggestionOutputSerializer(many=True, required=False)


def _item_data(item: SuggestionItem, *, show_scores: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": item.id,
        "method": item.method,
        "kind": item.kind,
        "description": item.description,
        "rule": item.rule,
        "prefix_ranks": item.prefix_ranks,
        "decision": item.decision,
        "pattern_id": item.pattern_id,
    }
    if show_scores:
        data["scores"] = scores_data(item.scores)
    return data


def _listed(*, key: Key, request: Request, suggestion_id: int) -> dict[str, Any]:
    listing = suggestion_list_for_annotator(key=key, user=request.user)
    item = next(item for item in listing.items if item.id == suggestion_id)
    return _item_data(item, show_scores=listing.show_scores)


def _suggestion_or_404(*, key: Key, request: Request, suggestion_id: int) -> Suggestion:
    suggestion = suggestion_get_for_annotator(
        key=key, suggestion_id=suggestion_id, user=request.user
    )
    if suggestion is None:
        raise exceptions.NotFound(NOT_FOUND)
    return suggestion


class SuggestionListApi(AnnotatorApi):
    @extend_schema(
        responses={200: SuggestionListOutputSerializer, 403: ErrorSerializer, 404: ErrorSerializer},
        description="The key's suggestions with your own decisions: rules, then clusters, "
        "then (once you have submitted the key) the LLM's.",
    )
    def get(self, request: Request, key_id: int) -> Response:
        key = _key_or_404(key_id=key_id, user=request.user)
        listing = suggestion_list_for_annotator(key=key, user=request.user)
        if not listing.enabled:
            return Response({"enabled": False})
        items = [_item_data(item, show_scores=listing.show_scores) for item in listing.items]
        return Response({"enabled": True, "suggestions": items})


class SuggestionAcceptApi(AnnotatorApi):
    @extend_schema_serializer(component_name="SuggestionAccept")
    class InputSerializer(serializers.Serializer):
        version = _version_field()
        description = serializers.CharField(
            required=False,
            max_length=MAX_DESCRIPTION,
            help_text="The pattern's description; by default the suggestion's. Needed for "
            "a cluster suggestion, which has none.",
        )
        client_id = serializers.UUIDField(
            required=False,
            allow_null=True,
            help_text="Made by the client; a retried accept with the same id makes nothing new.",
        )

    @extend_schema(
        request=InputSerializer,
        responses={201: AnnotationStateSerializer, **_WRITE_RESPONSES},
        description="Make the suggestion your pattern (source `suggestion`, its rule "
        "copied), under the same rules as creating a pattern. Accepting again while that "
        "pattern exists makes nothing new (200).",
    )
    def post(self, request: Request, key_id: int, suggestion_id: int) -> Response:
        key = _writable_key(key_id=key_id, user=request.user)
        suggestion = _suggestion_or_404(key=key, request=request, suggestion_id=suggestion_id)
        key.show_scores = suggestion.key.study.show_scores  # type: ignore[attr-defined]
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data

        def accept(annotation: Annotation) -> SuggestionAcceptResult:
            return suggestion_accept(
                suggestion=suggestion,
                annotation=annotation,
                actor=_me(request),
                version=data["version"],
                description=data.get("description"),
                client_id=data.get("client_id"),
                guideline_version=_stamp(key),
            )

        def annotation_of(result: SuggestionAcceptResult) -> Annotation:
            if result.result is not None:
                return result.result.annotation
            return result.pattern.annotation

        result = _write(key=key, request=request, write=accept, annotation_of=annotation_of)
        if result is None or result.result is None:  # accepted before: nothing written now
            return Response(_read_state(key=key, request=request))
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        state = _state(
            annotation=result.result.annotation,
            patterns=result.result.patterns,
            show_scores=_shows_scores(key),
        )
        return Response(state, status=code)


class SuggestionDismissApi(AnnotatorApi):
    @extend_schema(
        request=None,
        responses={
            200: SuggestionOutputSerializer,
            400: ValidationErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
        },
        description="Dismiss the suggestion (again: nothing changes). A pattern you made "
        "from it stays yours.",
    )
    def post(self, request: Request, key_id: int, suggestion_id: int) -> Response:
        key = _key_or_404(key_id=key_id, user=request.user)
        suggestion = _suggestion_or_404(key=key, request=request, suggestion_id=suggestion_id)
        suggestion_dismiss(suggestion=suggestion, annotator=_me(request))
        return Response(_listed(key=key, request=request, suggestion_id=suggestion.pk))
