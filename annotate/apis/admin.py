"""The admin's API (Django staff): studies, batches, assignments, progress, annotators."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..limits import MAX_ANNOTATORS_PER_KEY, MAX_LAYER
from ..models import Batch, Study
from ..permissions import IsAdmin
from ..selectors.accounts import annotator_get, annotator_list, user_find
from ..selectors.annotations import KEY_WORK_STATUSES
from ..selectors.batches import (
    batch_get,
    batch_key_count,
    batch_key_page,
    batch_list_for_study,
    batch_progress,
)
from ..selectors.check_keys import study_check_key_count
from ..selectors.studies import study_get, study_layers, study_list
from ..services.accounts import PasswordLink, annotator_create, password_link_create
from ..services.batches import (
    annotator_deactivate_and_reassign,
    assignment_create_with_overlap,
    assignment_extend,
    batch_create_by_layers,
    batch_create_by_random_sample,
    batch_create_from_list,
)
from ..services.studies import study_update
from .common import NOT_FOUND, ApiErrorsMixin, ErrorSerializer, UserRefField

UNKNOWN_USER = "There is no user {ref!r}."
BATCH_MODE_NEEDS = {
    "layer": ("layers", "Give the layers (numbered from 1) to take every key of."),
    "random": ("n", "Give how many keys to sample."),
    "list": ("keys", "Give the keys as a list of {layer, index}."),
}
MAX_KEYS_IN_LIST = 100_000
BATCH_KEYS_PAGE_SIZE = 50
BATCH_KEYS_PAGE_MAX = 500

_ADMIN_ERRORS = {400: OpenApiTypes.OBJECT, 403: ErrorSerializer, 404: ErrorSerializer}


class AdminApi(ApiErrorsMixin, APIView):
    permission_classes = [IsAdmin]


def _study_or_404(study_id: int) -> Study:
    study = study_get(study_id=study_id)
    if study is None:
        raise exceptions.NotFound(NOT_FOUND)
    return study


def _batch_or_404(batch_id: int) -> Batch:
    batch = batch_get(batch_id=batch_id)
    if batch is None:
        raise exceptions.NotFound(NOT_FOUND)
    return batch


def _users(refs: Sequence[int | str], field: str, actor: Any) -> list[Any]:
    """The users named, among those ``actor`` may manage (a staff member who is not a
    superuser does not see an admin's or a superuser's account here)."""
    users = []
    for ref in refs:
        user = user_find(ref=ref, actor=actor)
        if user is None:
            raise exceptions.ValidationError({field: [UNKNOWN_USER.format(ref=ref)]})
        users.append(user)
    return users


@extend_schema_serializer(component_name="StudySummary")
class StudyOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    model_name = serializers.CharField()
    corpus = serializers.CharField()
    top_k = serializers.IntegerField()
    seed = serializers.IntegerField()
    n_layers = serializers.IntegerField()
    d_ff = serializers.IntegerField()
    is_causal = serializers.BooleanField()
    show_value_tokens = serializers.BooleanField()
    suggestions_enabled = serializers.BooleanField(
        help_text="Annotators are offered the machine's suggestions (off for a blind replication)."
    )
    show_scores = serializers.BooleanField(
        help_text="Annotators see the held-out scores of their own patterns (off by "
        "default: a pattern written after seeing its score is no longer a blind test)."
    )
    archived = serializers.BooleanField(
        help_text="Read-only (an import): no annotator sees it; no batch can be added."
    )
    key_count = serializers.IntegerField()
    check_rate = serializers.FloatField(
        help_text="Share of the regular keys given to an annotator that each bring a check "
        "key into their assignment (0: none); applies to keys given from then on."
    )
    created_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="StudyLayer")
class StudyLayerOutputSerializer(serializers.Serializer):
    layer = serializers.IntegerField()
    key_count = serializers.IntegerField()


@extend_schema_serializer(component_name="StudyDetail")
class StudyDetailOutputSerializer(StudyOutputSerializer):
    layers = StudyLayerOutputSerializer(many=True)
    check_keys = serializers.IntegerField(
        help_text="How many keys are served as checks: submitted gold a curator marked a check."
    )


def _study_detail(study: Study) -> dict[str, Any]:
    data = dict(StudyOutputSerializer(study).data)
    data["layers"] = study_layers(study=study)
    data["check_keys"] = study_check_key_count(study=study)
    return dict(StudyDetailOutputSerializer(data).data)


@extend_schema_serializer(component_name="BatchAnnotator")
class BatchAnnotatorOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="annotator_id")
    username = serializers.CharField(source="annotator.username")
    assignment_id = serializers.IntegerField(source="id")


@extend_schema_serializer(component_name="Batch")
class BatchOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    study_id = serializers.IntegerField()
    name = serializers.CharField()
    key_count = serializers.IntegerField()
    annotators = BatchAnnotatorOutputSerializer(source="assignments", many=True)
    created_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="AdminAnnotator")
class AnnotatorOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    is_active = serializers.BooleanField()
    keys_assigned = serializers.IntegerField()
    keys_submitted = serializers.IntegerField()


class StudyListApi(AdminApi):
    @extend_schema(responses={200: StudyOutputSerializer(many=True), 403: ErrorSerializer})
    def get(self, request: Request) -> Response:
        return Response(StudyOutputSerializer(study_list(), many=True).data)


class StudyDetailApi(AdminApi):
    @extend_schema_serializer(component_name="StudyUpdate")
    class InputSerializer(serializers.Serializer):
        show_value_tokens = serializers.BooleanField(required=False)
        suggestions_enabled = serializers.BooleanField(required=False)
        show_scores = serializers.BooleanField(required=False)
        check_rate = serializers.FloatField(
            required=False,
            min_value=0.0,
            max_value=1.0,
            help_text="Share of the regular keys given to an annotator that each bring a "
            "check key into their assignment (0: none). Applies to keys given from then on "
            "(an assignment made or extended, a hand-over), never to keys already given.",
        )

    @extend_schema(responses={200: StudyDetailOutputSerializer, **_ADMIN_ERRORS})
    def get(self, request: Request, study_id: int) -> Response:
        return Response(_study_detail(_study_or_404(study_id)))

    @extend_schema(
        request=InputSerializer, responses={200: StudyDetailOutputSerializer, **_ADMIN_ERRORS}
    )
    def patch(self, request: Request, study_id: int) -> Response:
        study = _study_or_404(study_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        study_update(study=study, **serializer.validated_data)
        return Response(_study_detail(_study_or_404(study_id)))


@extend_schema_serializer(component_name="KeyRef")
class KeyRefInputSerializer(serializers.Serializer):
    layer = serializers.IntegerField(min_value=1, max_value=MAX_LAYER)
    index = serializers.IntegerField(min_value=0, max_value=2**31 - 1)


class BatchListCreateApi(AdminApi):
    @extend_schema_serializer(component_name="BatchCreate")
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        mode = serializers.ChoiceField(
            choices=["layer", "random", "list"],
            help_text="layer: every key of `layers`; random: `n` keys drawn with `seed` "
            "(within `layers` if given); list: the `keys` named.",
        )
        layers = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=MAX_LAYER),
            max_length=MAX_LAYER,
            required=False,
        )
        n = serializers.IntegerField(min_value=1, max_value=10_000_000, required=False)
        seed = serializers.IntegerField(min_value=0, max_value=2**32 - 1, default=0)
        keys = serializers.ListField(
            child=KeyRefInputSerializer(), required=False, max_length=MAX_KEYS_IN_LIST
        )

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            field, message = BATCH_MODE_NEEDS[attrs["mode"]]
            if not attrs.get(field):
                raise serializers.ValidationError({field: [message]})
            return attrs

    @extend_schema(responses={200: BatchOutputSerializer(many=True), **_ADMIN_ERRORS})
    def get(self, request: Request, study_id: int) -> Response:
        batches = batch_list_for_study(study=_study_or_404(study_id))
        return Response(BatchOutputSerializer(batches, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: BatchOutputSerializer, **_ADMIN_ERRORS})
    def post(self, request: Request, study_id: int) -> Response:
        study = _study_or_404(study_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        common = {"study": study, "name": data["name"], "created_by": request.user}
        if data["mode"] == "layer":
            batch = batch_create_by_layers(layers=data["layers"], **common)
        elif data["mode"] == "random":
            batch = batch_create_by_random_sample(
                n=data["n"], seed=data["seed"], layers=data.get("layers"), **common
            )
        else:
            pairs = [(ref["layer"], ref["index"]) for ref in data["keys"]]
            batch = batch_create_from_list(keys=pairs, **common)
        created = batch_get(batch_id=batch.pk)
        return Response(BatchOutputSerializer(created).data, status=status.HTTP_201_CREATED)


class AssignmentCreateApi(AdminApi):
    @extend_schema_serializer(component_name="AssignmentCreate")
    class InputSerializer(serializers.Serializer):
        annotators = serializers.ListField(child=UserRefField(), min_length=1, max_length=1_000)
        overlap = serializers.IntegerField(
            min_value=1,
            max_value=MAX_ANNOTATORS_PER_KEY,
            help_text="How many of the annotators see each key (N); at most their number.",
        )

    @extend_schema(request=InputSerializer, responses={201: BatchOutputSerializer, **_ADMIN_ERRORS})
    def post(self, request: Request, batch_id: int) -> Response:
        batch = _batch_or_404(batch_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        annotators = _users(data["annotators"], "annotators", request.user)
        assignment_create_with_overlap(batch=batch, annotators=annotators, overlap=data["overlap"])
        return Response(
            BatchOutputSerializer(_batch_or_404(batch_id)).data, status=status.HTTP_201_CREATED
        )


class AssignmentExtendApi(AdminApi):
    """Add annotators to an assigned batch and/or raise its overlap. Keys already given
    stay where they are; each key that has fewer than ``overlap`` annotators gets more,
    drawn from the batch's active annotators (the new ones included) who hold the fewest
    of its keys (``annotate.services.assignment_extend``)."""

    @extend_schema_serializer(component_name="AssignmentExtend")
    class InputSerializer(serializers.Serializer):
        annotators = serializers.ListField(
            child=UserRefField(),
            max_length=1_000,
            default=list,
            help_text="Annotators to add (none: only raise the overlap).",
        )
        overlap = serializers.IntegerField(
            min_value=1,
            max_value=MAX_ANNOTATORS_PER_KEY,
            help_text="The new number of annotators per key: at least the current one, "
            "at most the batch's active annotators after the addition.",
        )

    @extend_schema_serializer(component_name="AssignmentExtended")
    class OutputSerializer(serializers.Serializer):
        batch = BatchOutputSerializer()
        keys_added = serializers.IntegerField(help_text="(annotator, key) pairs added.")
        keys_short = serializers.IntegerField(
            help_text="Keys left below the overlap: too few annotators were free to take them."
        )

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer, **_ADMIN_ERRORS})
    def post(self, request: Request, batch_id: int) -> Response:
        batch = _batch_or_404(batch_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        annotators = _users(data["annotators"], "annotators", request.user)
        result = assignment_extend(batch=batch, annotators=annotators, overlap=data["overlap"])
        out = {
            "batch": _batch_or_404(batch_id),
            "keys_added": result.keys_added,
            "keys_short": result.keys_short,
        }
        return Response(self.OutputSerializer(out).data)


@extend_schema_serializer(component_name="BatchKeyAnnotator")
class BatchKeyAnnotatorSerializer(serializers.Serializer):
    annotator_id = serializers.IntegerField()
    username = serializers.CharField()
    status = serializers.ChoiceField(
        choices=KEY_WORK_STATUSES, help_text="new: assigned and nothing written yet."
    )


@extend_schema_serializer(component_name="BatchKey")
class BatchKeySerializer(serializers.Serializer):
    key_id = serializers.IntegerField()
    layer = serializers.IntegerField()
    index = serializers.IntegerField()
    annotators = BatchKeyAnnotatorSerializer(many=True)


class BatchKeyListApi(AdminApi):
    """A page of the batch's keys in (layer, index) order, each with its annotators and
    their status; ``count`` is the number of keys of the whole batch."""

    class FilterSerializer(serializers.Serializer):
        limit = serializers.IntegerField(
            min_value=1,
            max_value=BATCH_KEYS_PAGE_MAX,
            default=BATCH_KEYS_PAGE_SIZE,
            help_text=f"Keys per page (at most {BATCH_KEYS_PAGE_MAX}).",
        )
        offset = serializers.IntegerField(
            min_value=0,
            max_value=MAX_KEYS_IN_LIST * 100,
            default=0,
            help_text="How many keys to skip, in (layer, index) order.",
        )

    @extend_schema_serializer(component_name="BatchKeyPage")
    class OutputSerializer(serializers.Serializer):
        count = serializers.IntegerField(help_text="Keys in the whole batch.")
        limit = serializers.IntegerField()
        offset = serializers.IntegerField()
        results = BatchKeySerializer(many=True)

    @extend_schema(
        parameters=[FilterSerializer], responses={200: OutputSerializer, **_ADMIN_ERRORS}
    )
    def get(self, request: Request, batch_id: int) -> Response:
        batch = _batch_or_404(batch_id)
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        limit, offset = filters.validated_data["limit"], filters.validated_data["offset"]
        page = {
            "count": batch_key_count(batch=batch),
            "limit": limit,
            "offset": offset,
            "results": batch_key_page(batch=batch, offset=offset, limit=limit),
        }
        return Response(self.OutputSerializer(page).data)


@extend_schema_serializer(component_name="ProgressCounts")
class ProgressCountsSerializer(serializers.Serializer):
    keys_assigned = serializers.IntegerField(help_text="(annotator, key) pairs assigned.")
    submitted = serializers.IntegerField()
    draft = serializers.IntegerField()
    new = serializers.IntegerField(help_text="Assigned and nothing written yet.")


@extend_schema_serializer(component_name="AnnotatorProgress")
class AnnotatorProgressSerializer(ProgressCountsSerializer):
    annotator_id = serializers.IntegerField()
    username = serializers.CharField()
    is_active = serializers.BooleanField()


@extend_schema_serializer(component_name="LayerProgress")
class LayerProgressSerializer(ProgressCountsSerializer):
    layer = serializers.IntegerField()


class BatchProgressApi(AdminApi):
    @extend_schema_serializer(component_name="BatchProgress")
    class OutputSerializer(serializers.Serializer):
        batch_id = serializers.IntegerField()
        keys_total = serializers.IntegerField()
        annotators_per_key_min = serializers.IntegerField()
        annotators_per_key_max = serializers.IntegerField()
        total = ProgressCountsSerializer()
        per_annotator = AnnotatorProgressSerializer(many=True)
        per_layer = LayerProgressSerializer(many=True)

    @extend_schema(responses={200: OutputSerializer, 403: ErrorSerializer, 404: ErrorSerializer})
    def get(self, request: Request, batch_id: int) -> Response:
        progress = batch_progress(batch=_batch_or_404(batch_id))
        return Response(self.OutputSerializer(progress).data)


@extend_schema_serializer(component_name="PasswordLink")
class PasswordLinkSerializer(serializers.Serializer):
    path = serializers.CharField(
        help_text="The link's path on this site, /set-password#<uid>/<token> (the token "
        "in the fragment, which browsers never send): it works once, until `expires_at`, "
        "and only until a newer link is made."
    )
    expires_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="AnnotatorWithLink")
class AnnotatorWithLinkSerializer(serializers.Serializer):
    annotator = AnnotatorOutputSerializer()
    link = PasswordLinkSerializer()


def _with_link(link: PasswordLink) -> dict[str, Any]:
    data = {
        "annotator": annotator_get(user_id=link.user.pk),
        "link": {"path": link.path, "expires_at": link.expires_at},
    }
    return dict(AnnotatorWithLinkSerializer(data).data)


class AnnotatorListApi(AdminApi):
    @extend_schema_serializer(component_name="AnnotatorCreate")
    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150, validators=[UnicodeUsernameValidator()])

    @extend_schema(responses={200: AnnotatorOutputSerializer(many=True), 403: ErrorSerializer})
    def get(self, request: Request) -> Response:
        """The annotators the admin may manage: every one for a superuser; for other
        staff, those who are neither admins nor superusers."""
        annotators = annotator_list(actor=request.user)
        return Response(AnnotatorOutputSerializer(annotators, many=True).data)

    @extend_schema(
        request=InputSerializer,
        responses={
            201: AnnotatorWithLinkSerializer,
            400: OpenApiTypes.OBJECT,
            403: ErrorSerializer,
        },
    )
    def post(self, request: Request) -> Response:
        """Create an annotator without a password, and the one-time link that invites
        them to choose one (the admin hands it over; nothing is e-mailed)."""
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        link = annotator_create(username=serializer.validated_data["username"])
        return Response(_with_link(link), status=status.HTTP_201_CREATED)


class AnnotatorPasswordLinkApi(AdminApi):
    """A new one-time link for the annotator to set their password (a reset, or an
    invitation sent again). Their current password, their sessions and every earlier
    link stop working now. Only a superuser makes one for an admin's or a superuser's
    account (404 for other staff, to whom such an account is not listed)."""

    @extend_schema(request=None, responses={200: AnnotatorWithLinkSerializer, **_ADMIN_ERRORS})
    def post(self, request: Request, user_id: int) -> Response:
        annotator = annotator_get(user_id=user_id, actor=request.user)
        if annotator is None:
            raise exceptions.NotFound(NOT_FOUND)
        return Response(_with_link(password_link_create(user=annotator, actor=request.user)))


class AnnotatorDeactivateApi(AdminApi):
    """Deactivate an annotator and hand their unfinished keys over. Only a superuser
    deactivates an admin's or a superuser's account, or hands keys to one (404 and an
    unknown user for other staff)."""

    @extend_schema_serializer(component_name="AnnotatorDeactivate")
    class InputSerializer(serializers.Serializer):
        reassign_to = UserRefField(
            required=False,
            allow_null=True,
            default=None,
            help_text="The annotator who takes the unfinished keys; may be left out only "
            "when there are none.",
        )
        transfer_drafts = serializers.BooleanField(
            default=False,
            help_text="False (the default): the new annotator starts each key blank and "
            "never sees the deactivated annotator's drafts, which stay with their author. "
            "True: the drafts move along and the new annotator sees and continues them.",
        )

    @extend_schema_serializer(component_name="AnnotatorDeactivated")
    class OutputSerializer(serializers.Serializer):
        annotator = AnnotatorOutputSerializer()
        keys_moved = serializers.IntegerField()
        keys_skipped = serializers.IntegerField(
            help_text="Unfinished keys that the new annotator already had."
        )
        drafts_moved = serializers.IntegerField()

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer, **_ADMIN_ERRORS})
    def post(self, request: Request, user_id: int) -> Response:
        annotator = annotator_get(user_id=user_id, actor=request.user)
        if annotator is None:
            raise exceptions.NotFound(NOT_FOUND)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        ref = serializer.validated_data["reassign_to"]
        reassign_to = None if ref is None else _users([ref], "reassign_to", request.user)[0]
        result = annotator_deactivate_and_reassign(
            annotator=annotator,
            reassign_to=reassign_to,
            actor=cast(User, request.user),
            transfer_drafts=serializer.validated_data["transfer_drafts"],
        )
        data = {
            "annotator": annotator_get(user_id=user_id),
            "keys_moved": result.keys_moved,
            "keys_skipped": result.keys_skipped,
            "drafts_moved": result.drafts_moved,
        }
        return Response(self.OutputSerializer(data).data)
