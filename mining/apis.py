"""Admin API for mining runs: start one from the browser, follow it, cancel it."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.http import Http404
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from kombu.exceptions import OperationalError as KombuOperationalError
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api_errors import ErrorCode, error_response
from annotate.apis.common import ErrorSerializer, ValidationErrorSerializer
from annotate.models import Pattern, Study
from annotate.permissions import IsAdmin, IsAnnotator
from mining.core import MineConfig, MiningError
from mining.core.errors import DatasetRefused

from . import services, sources
from .causal import LABEL_SOURCES, causal_job_create
from .causal import MAX_KEYS as MAX_GROUP_KEYS
from .composition import DEFAULT_PREFIXES, MAX_PREFIXES, composition_job_create
from .models import CausalJob, CompositionJob, MiningRun
from .selectors import (
    mining_run_duration_seconds,
    mining_run_final_rate,
    mining_run_list,
    mining_run_list_preparing_for,
    mining_run_progress,
)

QUEUE_UNAVAILABLE = "The task queue is unavailable; the run was not started. Retry later."
UNKNOWN_USERNAMES = "No account named {names}."


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
        top_k = serializers.IntegerField(min_value=1, max_value=MineConfig().max_top_k, default=25)
        seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)
        device = serializers.RegexField(r"^(cpu|cuda(:\d+)?)$", max_length=12, default="cpu")
        dtype = serializers.ChoiceField(choices=["float32", "bfloat16"], default="float32")
        max_sentences = serializers.IntegerField(
            min_value=1, max_value=100_000_000, required=False, allow_null=True, default=None
        )
        max_tokens = serializers.IntegerField(min_value=2, max_value=4096, default=128)
        shards = serializers.IntegerField(min_value=1, max_value=1024, default=1)
        perturb = serializers.BooleanField(default=False)
        assign_to = serializers.ListField(
            child=serializers.CharField(max_length=150),
            max_length=1000,
            default=list,
            help_text="Usernames of active annotators who get every key of the study once "
            "it is loaded (one batch, overlap = their number), and may follow the run "
            "meanwhile.",
        )

        def validate_assign_to(self, value: list[str]) -> list[Any]:
            names = list(dict.fromkeys(value))
            users = {u.username: u for u in get_user_model().objects.filter(username__in=names)}
            missing = [name for name in names if name not in users]
            if missing:
                raise serializers.ValidationError(
                    UNKNOWN_USERNAMES.format(names=", ".join(map(repr, missing[:10])))
                )
            return [users[name] for name in names]

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
        perturb, assign_to = data.pop("perturb"), data.pop("assign_to")
        try:
            run = services.mining_run_create(
                study_name=study_name,
                config=MineConfig(**data),
                n_shards=n_shards,
                perturb=perturb,
                created_by=request.user,
                assign_to=assign_to,
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


PREPARING_PROGRESS = (
    "sentences_done",
    "sentences_total",
    "tokens_done",
    "tokens_total",
    "eta_seconds",
)


@extend_schema_serializer(component_name="PreparingProgress")
class PreparingProgressSerializer(serializers.Serializer):
    sentences_done = serializers.IntegerField()
    sentences_total = serializers.IntegerField()
    tokens_done = serializers.IntegerField()
    tokens_total = serializers.IntegerField()
    eta_seconds = serializers.FloatField(allow_null=True)


@extend_schema_serializer(component_name="PreparingStudy")
class PreparingOutputSerializer(serializers.Serializer):
    """A study being mined for the annotator: its name and how far along, nothing of the
    run's set-up (model, corpus, parameters, who else will work on it)."""

    id = serializers.IntegerField(help_text="The mining run's id.")
    study_name = serializers.CharField()
    status = serializers.ChoiceField(choices=MiningRun.Status.choices)
    progress = serializers.SerializerMethodField()

    @extend_schema_field(PreparingProgressSerializer)
    def get_progress(self, run: MiningRun) -> dict[str, Any]:
        progress = mining_run_progress(run=run)
        return {name: progress[name] for name in PREPARING_PROGRESS}


class PreparingListApi(APIView):
    """The studies being mined that will be given to the signed-in annotator once they
    are loaded (a mining run's ``assign_to``); empty when none."""

    permission_classes = [IsAnnotator]

    @extend_schema(responses={200: PreparingOutputSerializer(many=True), 403: ErrorSerializer})
    def get(self, request: Request) -> Response:
        runs = mining_run_list_preparing_for(user=request.user)
        return Response(PreparingOutputSerializer(runs, many=True).data)


@extend_schema_serializer(component_name="CompositionJob")
class CompositionJobSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    study_id = serializers.IntegerField()
    prefixes = serializers.IntegerField(help_text="The slice's size: one prefix a sentence.")
    seed = serializers.IntegerField()
    status = serializers.ChoiceField(choices=CompositionJob.Status.choices)
    error = serializers.CharField(help_text="Why it failed; empty otherwise.")
    created_by = serializers.CharField(source="created_by.username", allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


@extend_schema_serializer(component_name="CompositionStatus")
class CompositionStatusSerializer(serializers.Serializer):
    job = CompositionJobSerializer(allow_null=True, help_text="The study's latest job.")
    default_prefixes = serializers.IntegerField()
    max_prefixes = serializers.IntegerField()


def _study_or_404(study_id: int) -> Study:
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        raise Http404
    return study


def _composition_status(study: Study) -> dict[str, Any]:
    job = CompositionJob.objects.filter(study=study).select_related("created_by").first()
    return {"job": job, "default_prefixes": DEFAULT_PREFIXES, "max_prefixes": MAX_PREFIXES}


class CompositionApi(APIView):
    """The §5 composition analysis of a study (docs/composition.md): its latest job, and
    a new one over a slice of another size. The figures are in the study's report."""

    permission_classes = [IsAdmin]

    @extend_schema_serializer(component_name="CompositionCreate")
    class InputSerializer(serializers.Serializer):
        prefixes = serializers.IntegerField(
            min_value=1, max_value=MAX_PREFIXES, default=DEFAULT_PREFIXES
        )
        seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)

    @extend_schema(
        responses={200: CompositionStatusSerializer, 403: ErrorSerializer, 404: ErrorSerializer}
    )
    def get(self, request: Request, study_id: int) -> Response:
        study = _study_or_404(study_id)
        return Response(CompositionStatusSerializer(_composition_status(study)).data)

    @extend_schema(
        request=InputSerializer,
        responses={
            202: CompositionStatusSerializer,
            400: ValidationErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
        },
    )
    def post(self, request: Request, study_id: int) -> Response:
        study = _study_or_404(study_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            composition_job_create(
                study=study, created_by=request.user, **serializer.validated_data
            )
        except MiningError as exc:
            return error_response(
                str(exc), ErrorCode.COMPOSITION_REFUSED, status.HTTP_400_BAD_REQUEST
            )
        return Response(
            CompositionStatusSerializer(_composition_status(study)).data,
            status=status.HTTP_202_ACCEPTED,
        )


# --- causal probes (docs/causal.md) ------------------------------------------------------


class _KeyPairField(serializers.ListField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            child=serializers.IntegerField(min_value=0, max_value=1_000_000),
            min_length=2,
            max_length=2,
            help_text="[layer (from 1), index]",
            **kwargs,
        )


@extend_schema_serializer(component_name="CausalKeyGroup")
class KeyGroupSerializer(serializers.Serializer):
    """A group of keys: listed (``by`` "keys"), or every key carrying a pattern of one of
    ``kinds`` (``by`` "label") in submitted annotations (all annotators' or one's) or in
    submitted gold, optionally only in some layers."""

    by = serializers.ChoiceField(choices=["keys", "label"])
    keys = serializers.ListField(child=_KeyPairField(), max_length=MAX_GROUP_KEYS, required=False)
    kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=Pattern.Kind.values),
        min_length=1,
        max_length=3,
        required=False,
    )
    # Shadows Field.source for mypy only: the metaclass turns it into a declared field.
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=LABEL_SOURCES, default="annotations"
    )
    annotator = serializers.CharField(max_length=150, required=False, allow_blank=True)
    layers = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=100_000),
        max_length=1000,
        required=False,
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data["by"] == "keys" and not data.get("keys"):
            raise serializers.ValidationError({"keys": "List at least one [layer, index]."})
        if data["by"] == "label" and not data.get("kinds"):
            raise serializers.ValidationError({"kinds": "Name at least one pattern kind."})
        return data


@extend_schema_serializer(component_name="CausalPrefixSet")
class PrefixSetSerializer(serializers.Serializer):
    """A prefix set: a group's own trigger prefixes (``by`` "own", ``group`` "a" or "b"),
    or an uploaded text, one sentence a line (every next token in it is scored)."""

    by = serializers.ChoiceField(choices=["own", "text"])
    group = serializers.ChoiceField(choices=["a", "b"], required=False)
    text = serializers.CharField(max_length=100_000, required=False, trim_whitespace=False)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data["by"] == "own" and not data.get("group"):
            raise serializers.ValidationError({"group": "Name the group: a or b."})
        if data["by"] == "text" and not (data.get("text") or "").strip():
            raise serializers.ValidationError({"text": "Give at least one sentence."})
        return data


@extend_schema_serializer(component_name="CausalJobCreate")
class CausalCreateSerializer(serializers.Serializer):
    """One probe: ``kind`` and the fields it reads (the others are ignored). ablation:
    ``group``, ``scale`` (0: zeroed), ``random_prefixes``; dissociation: ``group_a``,
    ``group_b``, ``set_p``, ``set_q``, ``scale``; tracing: ``prompt``, ``subject``,
    ``answer``, ``noise``, ``samples``, ``window``; attribution: ``prompts``, ``answer``,
    ``steps``, ``threshold``, ``share``, ``layers``. Every probe: ``seed``."""

    kind = serializers.ChoiceField(choices=CausalJob.Kind.choices)
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)
    scale = serializers.FloatField(
        min_value=-10.0, max_value=10.0, default=0.0, help_text="0: zeroed; 2: doubled."
    )
    group = KeyGroupSerializer(required=False)
    random_prefixes = serializers.IntegerField(min_value=1, max_value=5000, default=500)
    group_a = KeyGroupSerializer(required=False)
    group_b = KeyGroupSerializer(required=False)
    set_p = PrefixSetSerializer(required=False)
    set_q = PrefixSetSerializer(required=False)
    prompt = serializers.CharField(max_length=2000, required=False)
    subject = serializers.CharField(max_length=500, required=False)
    answer = serializers.CharField(max_length=200, required=False, trim_whitespace=False)
    noise = serializers.FloatField(min_value=0.0, max_value=100.0, default=3.0)
    samples = serializers.IntegerField(min_value=1, max_value=100, default=10)
    window = serializers.IntegerField(min_value=1, max_value=1000, default=10)
    prompts = serializers.ListField(
        child=serializers.CharField(max_length=2000), min_length=1, max_length=20, required=False
    )
    steps = serializers.IntegerField(min_value=1, max_value=200, default=20)
    threshold = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.2)
    share = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.7)
    layers = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=100_000),
        max_length=1000,
        required=False,
    )

    NEEDS = {
        "ablation": ("group",),
        "dissociation": ("group_a", "group_b", "set_p", "set_q"),
        "tracing": ("prompt", "subject", "answer"),
        "attribution": ("prompts", "answer"),
    }
    READS = {
        "ablation": ("seed", "scale", "group", "random_prefixes"),
        "dissociation": ("seed", "scale", "group_a", "group_b", "set_p", "set_q"),
        "tracing": ("seed", "prompt", "subject", "answer", "noise", "samples", "window"),
        "attribution": ("seed", "prompts", "answer", "steps", "threshold", "share", "layers"),
    }

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        kind = data["kind"]
        missing = {
            name: "Required for this probe." for name in self.NEEDS[kind] if name not in data
        }
        if missing:
            raise serializers.ValidationError(missing)
        return {"kind": kind, **{name: data[name] for name in self.READS[kind] if name in data}}


@extend_schema_serializer(component_name="CausalJob")
class CausalJobSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    study_id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=CausalJob.Kind.choices)
    params = serializers.DictField(help_text="As asked, each key group with its `resolved` keys.")
    status = serializers.ChoiceField(choices=CausalJob.Status.choices)
    error = serializers.CharField()
    created_by = serializers.CharField(source="created_by.username", allow_null=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


@extend_schema_serializer(component_name="CausalJobDetail")
class CausalJobDetailSerializer(CausalJobSerializer):
    result = serializers.DictField(
        help_text="The probe's figures (docs/causal.md), {} until done; `key_ids` maps "
        '"layer:index" to the study\'s key id of each mined key it names.'
    )


class CausalJobListCreateApi(APIView):
    """A study's causal probes (docs/causal.md): the latest 100, and a new one."""

    permission_classes = [IsAdmin]

    @extend_schema(
        responses={200: CausalJobSerializer(many=True), 403: ErrorSerializer, 404: ErrorSerializer}
    )
    def get(self, request: Request, study_id: int) -> Response:
        study = _study_or_404(study_id)
        jobs = CausalJob.objects.filter(study=study).select_related("created_by")[:100]
        return Response(CausalJobSerializer(jobs, many=True).data)

    @extend_schema(
        request=CausalCreateSerializer,
        responses={
            202: CausalJobSerializer,
            400: ValidationErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
        },
    )
    def post(self, request: Request, study_id: int) -> Response:
        study = _study_or_404(study_id)
        serializer = CausalCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        params = dict(serializer.validated_data)
        kind = params.pop("kind")
        try:
            job = causal_job_create(
                study=study, kind=kind, params=_plain(params), created_by=request.user
            )
        except MiningError as exc:
            return error_response(str(exc), ErrorCode.CAUSAL_REFUSED, status.HTTP_400_BAD_REQUEST)
        return Response(CausalJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


def _plain(value: Any) -> Any:
    """Validated data (OrderedDicts, lists) as plain JSON values."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _causal_job_or_404(job_id: int) -> CausalJob:
    job = CausalJob.objects.select_related("created_by").filter(pk=job_id).first()
    if job is None:
        raise Http404
    return job


class CausalJobDetailApi(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        responses={200: CausalJobDetailSerializer, 403: ErrorSerializer, 404: ErrorSerializer}
    )
    def get(self, request: Request, job_id: int) -> Response:
        return Response(CausalJobDetailSerializer(_causal_job_or_404(job_id)).data)
