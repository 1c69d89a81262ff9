"""Admin API for mining runs: start one from the browser, follow it, cancel it."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from kombu.exceptions import OperationalError as KombuOperationalError
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api_errors import ErrorCode, error_response
from annotate.apis.common import ErrorSerializer, ValidationErrorSerializer
from annotate.permissions import IsAdmin
from mining.core import MineConfig, MiningError
from mining.core.errors import DatasetRefused

from . import services, sources
from .models import MiningRun
from .selectors import (
    mining_run_duration_seconds,
    mining_run_final_rate,
    mining_run_list,
    mining_run_progress,
)

QUEUE_UNAVAILABLE = "The task queue is unavailable; the run was not started. Retry later."


@extend_schema_serializer(component_name="MiningProgress")
class ProgressSerializer(serializers.Serializer):
    sentences_done = serializers.IntegerField()
    sentences_total = serializers.IntegerField()
    tokens_done = serializers.IntegerField()
    tokens_total = serializers.IntegerField()
    tokens_per_second = serializers.FloatField()
    eta_seconds = serializers.FloatField(allow_null=True)
    shards_done = serializers.IntegerField()
    shards_total = serializers.IntegerField()


@extend_schema_serializer(component_name="MiningRun")
class RunOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    work_id = serializers.CharField(
        help_text="Random id naming the run's work folder, DATA_DIR/mining/<work_id>."
    )
    study_name = serializers.CharField()
    study_id = serializers.IntegerField(allow_null=True)
    status = serializers.ChoiceField(choices=MiningRun.Status.choices)
    error = serializers.CharField()
    model = serializers.CharField(source="params.model")
    corpus = serializers.CharField(source="params.corpus")
    params = serializers.DictField()
    cancel_requested = serializers.BooleanField()
    sentences_truncated = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    progress = serializers.SerializerMethodField()
    duration_seconds = serializers.SerializerMethodField(
        help_text="From start to finish; for a run still going, so far. Null before it starts."
    )
    final_tokens_per_second = serializers.SerializerMethodField(
        help_text="Tokens mined / seconds of the mining phase (shards), once it is over; "
        "preparing and merging are not counted. Null before."
    )

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, run: MiningRun) -> dict[str, Any]:
        return mining_run_progress(run=run)

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_duration_seconds(self, run: MiningRun) -> float | None:
        return mining_run_duration_seconds(run=run)

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_final_tokens_per_second(self, run: MiningRun) -> float | None:
        return mining_run_final_rate(run=run)


def _check_stale_runs() -> None:
    """The pages the admin follows a run on also look for stale runs: a run left without
    any worker shows as failed, with the reason, instead of "mining" forever."""
    from .tasks import requeue_stale_runs

    requeue_stale_runs()


def _run_or_404(run_id: int) -> MiningRun:
    run = mining_run_list().filter(pk=run_id).first()
    if run is None:
        raise Http404
    return run


class MiningRunListCreateApi(APIView):
    permission_classes = [IsAdmin]

    @extend_schema_serializer(component_name="MiningRunCreate")
    class InputSerializer(serializers.Serializer):
        study_name = serializers.CharField(max_length=200)
        model = serializers.CharField(max_length=500)
        corpus = serializers.CharField(max_length=500)
        sentences = serializers.ChoiceField(choices=["split", "lines"], default="split")
        keys_per_layer = serializers.IntegerField(min_value=1, max_value=1_000_000, default=10)
        all_keys = serializers.BooleanField(default=False)
        top_k = serializers.IntegerField(min_value=1, max_value=64, default=25)
        seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)
        device = serializers.RegexField(r"^(cpu|cuda(:\d+)?)$", max_length=12, default="cpu")
        dtype = serializers.ChoiceField(choices=["float32", "bfloat16"], default="float32")
        max_sentences = serializers.IntegerField(
            min_value=1, max_value=100_000_000, required=False, allow_null=True, default=None
        )
        max_tokens = serializers.IntegerField(min_value=2, max_value=4096, default=128)
        shards = serializers.IntegerField(min_value=1, max_value=1024, default=1)
        perturb = serializers.BooleanField(default=False)

        # A local model folder or corpus file must lie inside the configured roots.
        def validate_model(self, value: str) -> str:
            try:
                sources.check_model(value)
            except MiningError as exc:
                raise serializers.ValidationError(str(exc)) from exc
            return value

        def validate_corpus(self, value: str) -> str:
            try:
                sources.check_corpus(value)
            except DatasetRefused as exc:  # an hf: name that is no Hub dataset nor folder
                raise serializers.ValidationError(str(exc), code=exc.code) from exc
            except MiningError as exc:
                raise serializers.ValidationError(str(exc)) from exc
            return value

    @extend_schema(responses={200: RunOutputSerializer(many=True), 403: ErrorSerializer})
    def get(self, request: Request) -> Response:
        _check_stale_runs()
        return Response(RunOutputSerializer(mining_run_list()[:200], many=True).data)

    @extend_schema(
        request=InputSerializer,
        responses={
            201: RunOutputSerializer,
            400: ValidationErrorSerializer,
            403: ErrorSerializer,
            503: ErrorSerializer,
        },
    )
    def post(self, request: Request) -> Response:
        from .tasks import prepare_run

        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        study_name, n_shards = data.pop("study_name"), data.pop("shards")
        perturb = data.pop("perturb")
        try:
            run = services.mining_run_create(
                study_name=study_name,
                config=MineConfig(**data),
                n_shards=n_shards,
                perturb=perturb,
                created_by=request.user,
            )
        except MiningError as exc:
            return error_response(str(exc), ErrorCode.MINING_REFUSED, status.HTTP_400_BAD_REQUEST)
        try:
            prepare_run.delay(run.pk)  # the run is committed: the worker will find it
        except KombuOperationalError:
            services.mining_run_fail(run=run, error=QUEUE_UNAVAILABLE)
            return error_response(
                QUEUE_UNAVAILABLE, ErrorCode.QUEUE_UNAVAILABLE, status.HTTP_503_SERVICE_UNAVAILABLE
            )
        return Response(
            RunOutputSerializer(_run_or_404(run.pk)).data, status=status.HTTP_201_CREATED
        )


class MiningRunDetailApi(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(responses={200: RunOutputSerializer, 403: ErrorSerializer, 404: ErrorSerializer})
    def get(self, request: Request, run_id: int) -> Response:
        _check_stale_runs()
        return Response(RunOutputSerializer(_run_or_404(run_id)).data)


class MiningRunCancelApi(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        request=None,
        responses={200: RunOutputSerializer, 403: ErrorSerializer, 404: ErrorSerializer},
    )
    def post(self, request: Request, run_id: int) -> Response:
        services.mining_run_cancel(run=_run_or_404(run_id), user=request.user)
        return Response(RunOutputSerializer(_run_or_404(run_id)).data)
