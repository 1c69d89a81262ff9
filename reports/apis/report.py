"""The report of a study as JSON (every section's serializer) and as a long CSV table."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from .. import exports
from ..report import REPORT_CSV_COLUMNS, report_build, report_csv
from ..stats.value_agreement import REASONS, VARIANTS
from .common import _ERRORS, ReportQuerySerializer, ReportsApi, _num, _report_filter, _study_or_404


@extend_schema_serializer(component_name="ReportLabelValues")
class LabelValuesSerializer(serializers.Serializer):
    shallow = _num()
    semantic = _num()
    shallow_semantic = _num("The label shallow+semantic.")
    not_covered = _num("The label not-covered.")


class LayerField(serializers.IntegerField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_null=True, help_text="From 1; null for all layers.", **kwargs)


@extend_schema_serializer(component_name="ReportFigure2Row")
class Figure2RowSerializer(serializers.Serializer):
    layer = LayerField()
    n = serializers.FloatField(help_text="Ratings (pooled, per annotator) or units (majority).")
    counts = LabelValuesSerializer()
    shares = LabelValuesSerializer()
    ties = serializers.IntegerField(help_text="Majority: units whose top labels tie.")


@extend_schema_serializer(component_name="ReportFigure2Block")
class Figure2BlockSerializer(serializers.Serializer):
    layers = Figure2RowSerializer(many=True)
    overall = Figure2RowSerializer()


@extend_schema_serializer(component_name="ReportFigure2Annotator")
class Figure2AnnotatorSerializer(Figure2BlockSerializer):
    annotator = serializers.CharField()


@extend_schema_serializer(component_name="ReportFigure2")
class Figure2Serializer(serializers.Serializer):
    pooled = Figure2BlockSerializer()
    per_annotator = Figure2AnnotatorSerializer(many=True)
    majority = Figure2BlockSerializer()
    gold = Figure2BlockSerializer(
        help_text="The submitted gold annotations, one rating per prefix of a curated key; "
        "a layer without gold has n 0 and null shares."
    )


@extend_schema_serializer(component_name="ReportCoverageRow")
class CoverageRowSerializer(serializers.Serializer):
    layer = LayerField()
    n_prefixes = serializers.IntegerField(help_text="Ratings: prefixes × annotations.")
    covered = serializers.IntegerField()
    share_covered = _num()
    n_annotations = serializers.IntegerField()
    n_patterns = serializers.IntegerField()
    mean_patterns_per_key = _num()


@extend_schema_serializer(component_name="ReportCoverageBlock")
class CoverageBlockSerializer(serializers.Serializer):
    layers = CoverageRowSerializer(many=True)
    overall = CoverageRowSerializer()


@extend_schema_serializer(component_name="ReportCoverage")
class CoverageSerializer(CoverageBlockSerializer):
    gold = CoverageBlockSerializer(
        help_text="Over the submitted gold annotations (n_annotations: curated keys)."
    )


@extend_schema_serializer(component_name="ReportEstimate")
class EstimateSerializer(serializers.Serializer):
    value = _num()
    low = _num("Bootstrap 95% interval over keys.")
    high = _num()
    n_units = serializers.IntegerField()
    n_keys = serializers.IntegerField(help_text="Keys the bootstrap resampled.")
    few_keys = serializers.BooleanField(
        help_text="There is an interval and it rests on fewer than bootstrap_min_keys keys."
    )


@extend_schema_serializer(component_name="ReportAgreementRow")
class AgreementRowSerializer(serializers.Serializer):
    layer = LayerField()
    krippendorff_alpha = EstimateSerializer()
    fleiss_kappa = EstimateSerializer()
    cohen_kappa_mean = EstimateSerializer()
    raw_agreement = EstimateSerializer()


@extend_schema_serializer(component_name="ReportCohenPair")
class CohenPairSerializer(serializers.Serializer):
    annotators = serializers.ListField(child=serializers.CharField())
    value = _num()
    n_units = serializers.IntegerField()


@extend_schema_serializer(component_name="ReportAgreementBlock")
class AgreementBlockSerializer(serializers.Serializer):
    layers = AgreementRowSerializer(many=True)
    overall = AgreementRowSerializer()
    cohen_kappa_pairs = CohenPairSerializer(many=True)


@extend_schema_serializer(component_name="ReportAgreement")
class AgreementSerializer(serializers.Serializer):
    coders = serializers.ListField(child=serializers.CharField())
    bootstrap_replicates = serializers.IntegerField()
    bootstrap_seed = serializers.IntegerField()
    bootstrap_min_keys = serializers.IntegerField(
        help_text="An interval over fewer keys than this is marked few_keys."
    )
    labels = AgreementBlockSerializer(help_text="On the four labels.")
    binary = AgreementBlockSerializer(help_text="On covered / not-covered.")
    gold_as_coder = serializers.BooleanField(
        help_text="Whether the gold counts as a coder here (the gold_as_coder option)."
    )
    gold_coder = serializers.CharField(help_text="Gold's name among the coders when it is one.")


@extend_schema_serializer(component_name="ReportAgreementWithGold")
class AgreementWithGoldSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    kappa = _num("Cohen's κ with gold on the four labels.")
    raw_agreement = _num()
    n_units = serializers.IntegerField(help_text="Prefixes rated by both.")
    n_keys = serializers.IntegerField(help_text="Keys rated by both.")


@extend_schema_serializer(component_name="ReportCheckAccuracy")
class CheckAccuracySerializer(serializers.Serializer):
    annotator = serializers.CharField()
    n_checks = serializers.IntegerField(help_text="Submitted check annotations with gold.")
    raw_agreement = _num("Share of their prefixes given gold's label.")
    kappa = _num("Cohen's κ with gold over those prefixes.")
    n_units = serializers.IntegerField()


@extend_schema_serializer(component_name="ReportJaccardRow")
class JaccardRowSerializer(serializers.Serializer):
    layer = LayerField()
    mean = _num()
    n_keys = serializers.IntegerField()


@extend_schema_serializer(component_name="ReportJaccardPair")
class JaccardPairSerializer(serializers.Serializer):
    annotators = serializers.ListField(child=serializers.CharField())
    layers = JaccardRowSerializer(many=True)
    overall = JaccardRowSerializer()


@extend_schema_serializer(component_name="ReportPatternJaccard")
class PatternJaccardSerializer(serializers.Serializer):
    pairs = JaccardPairSerializer(many=True)
    layers = JaccardRowSerializer(many=True, help_text="Pooled over pairs.")
    overall = JaccardRowSerializer()


@extend_schema_serializer(component_name="ReportRate")
class RateSerializer(serializers.Serializer):
    matches = serializers.IntegerField()
    n = serializers.IntegerField(help_text="The denominator.")
    rate = _num("matches / n; null where n is 0.")
    low = _num("Wilson 95% interval.")
    high = _num()


class _NotApplicable(serializers.Serializer):
    applicable = serializers.BooleanField(help_text="False where §4 gives no rate here.")
    reason = serializers.ChoiceField(
        choices=REASONS,
        allow_null=True,
        help_text="Why not applicable (null where applicable): encoder (encoders have no "
        "next token), not_counted (the mining pass did not count every key: an imported or "
        "older study), counts_invalid (the stored counts break their contract).",
    )
    vocab_size = serializers.IntegerField(allow_null=True, help_text="|V|.")
    random_baseline = _num("1/|V|.")


@extend_schema_serializer(component_name="ReportValueAgreementRow")
class ValueAgreementRowSerializer(serializers.Serializer):
    layer = LayerField()
    n_keys = serializers.IntegerField(help_text="Sampled keys with a value argmax and a prefix.")
    next_end = serializers.IntegerField(help_text="Rank-1 prefix ends the sentence.")
    next_unknown = serializers.IntegerField(
        help_text="Rank-1 prefix ends a cut sentence: left out of next_token's denominator."
    )
    next_token = RateSerializer(help_text="Reading (a).")
    trigger_token = RateSerializer(help_text="Reading (b).")


@extend_schema_serializer(component_name="ReportValueAgreement")
class ValueAgreementSerializer(_NotApplicable):
    """§4 over the sampled keys."""

    layers = ValueAgreementRowSerializer(many=True)
    overall = ValueAgreementRowSerializer(allow_null=True)


@extend_schema_serializer(component_name="ReportVariantRates")
class VariantRatesSerializer(serializers.Serializer):
    without_final_norm = RateSerializer(required=False, help_text="E·v_i.")
    with_final_norm = RateSerializer(
        required=False, help_text="E·norm(v_i); only where the model has a final norm."
    )


@extend_schema_serializer(component_name="ReportValueAgreementEveryKeyRow")
class ValueAgreementEveryKeyRowSerializer(serializers.Serializer):
    layer = LayerField()
    n_keys = serializers.IntegerField(help_text="Every key of the layer.")
    next_end = serializers.IntegerField(help_text="Rank-1 prefix ends the sentence.")
    next_unknown = serializers.IntegerField(
        help_text="Rank-1 prefix ends a cut sentence: left out of next_token's denominator."
    )
    next_token = VariantRatesSerializer(help_text="Reading (a), per variant.")
    trigger_token = VariantRatesSerializer(help_text="Reading (b), per variant.")


@extend_schema_serializer(component_name="ReportValueAgreementEveryKey")
class ValueAgreementEveryKeySerializer(_NotApplicable):
    """§4 over every key of every layer, from the mining pass's counts."""

    detail = serializers.CharField(
        allow_null=True, help_text="What is wrong with the stored counts (counts_invalid)."
    )
    format = serializers.CharField(allow_null=True)
    final_norm = serializers.CharField(allow_null=True, help_text="The final norm's module.")
    variants = serializers.ListField(
        child=serializers.ChoiceField(choices=VARIANTS),
        help_text="The variants counted, in order.",
    )
    layers = ValueAgreementEveryKeyRowSerializer(many=True)
    overall = ValueAgreementEveryKeyRowSerializer(allow_null=True)


@extend_schema_serializer(component_name="ReportPerturbationRow")
class PerturbationRowSerializer(serializers.Serializer):
    layer = LayerField()
    n_keys = serializers.IntegerField(help_text="Keys with a measurement.")
    first = _num()
    last = _num()
    random = _num()


@extend_schema_serializer(component_name="ReportPerturbation")
class PerturbationSerializer(serializers.Serializer):
    layers = PerturbationRowSerializer(many=True)
    overall = PerturbationRowSerializer()


@extend_schema_serializer(component_name="ReportStudy")
class ReportStudySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    model = serializers.CharField()
    corpus = serializers.CharField()
    top_k = serializers.IntegerField()


@extend_schema_serializer(component_name="ReportScoreEstimate")
class ScoreEstimateSerializer(serializers.Serializer):
    mean = _num("The mean over patterns; null where none has this score.")
    low = _num("The bootstrap 95% interval over keys.")
    high = _num()


@extend_schema_serializer(component_name="ReportScoreGroup")
class ScoreGroupSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="Patterns with a score in this group.")
    detection = ScoreEstimateSerializer()
    embedding = ScoreEstimateSerializer()


@extend_schema_serializer(component_name="ReportPatternScoresRow")
class PatternScoresRowSerializer(serializers.Serializer):
    written = ScoreGroupSerializer()
    suggestion = ScoreGroupSerializer()
    shuffled = ScoreGroupSerializer()


@extend_schema_serializer(component_name="ReportPatternScoresLayer")
class PatternScoresLayerSerializer(PatternScoresRowSerializer):
    layer = serializers.IntegerField(help_text="From 1.")


@extend_schema_serializer(component_name="ReportPatternScores")
class PatternScoresSerializer(serializers.Serializer):
    definition = serializers.CharField()
    layers = PatternScoresLayerSerializer(many=True)
    overall = PatternScoresRowSerializer()


_READING_SCHEMA = {
    "oneOf": [
        {"type": "number"},
        {
            "type": "object",
            "properties": {
                "without_final_norm": {"type": "number", "nullable": True},
                "with_final_norm": {"type": "number", "nullable": True},
            },
            "required": ["without_final_norm", "with_final_norm"],
        },
    ],
    "nullable": True,
}


@extend_schema_field(_READING_SCHEMA)
class ReadingField(serializers.JSONField):
    """A figure that involves the unembedding: a number, or where the model has a final
    norm {"without_final_norm": x, "with_final_norm": y}."""


_CHANGE_SCHEMA = {
    "type": "object",
    "properties": {name: {"type": "number"} for name in ("residual", "ffn", "neither")},
    "required": ["residual", "ffn", "neither"],
}


@extend_schema_field(
    {
        "oneOf": [
            _CHANGE_SCHEMA,
            {
                "type": "object",
                "properties": {
                    "without_final_norm": _CHANGE_SCHEMA,
                    "with_final_norm": _CHANGE_SCHEMA,
                },
                "required": ["without_final_norm", "with_final_norm"],
            },
        ]
    }
)
class ChangeField(serializers.JSONField):
    """Where the layer's output puts the residual's top token: kept (residual), the FFN's
    own (ffn), a third (neither); per reading where the model has a final norm."""


@extend_schema_serializer(component_name="ReportQuartiles")
class QuartilesSerializer(serializers.Serializer):
    mean = serializers.FloatField()
    q1 = serializers.FloatField()
    median = serializers.FloatField()
    q3 = serializers.FloatField()


@extend_schema_serializer(component_name="ReportCompositionLayer")
class CompositionLayerSerializer(serializers.Serializer):
    layer = serializers.IntegerField(help_text="From 1.")
    active_share = QuartilesSerializer(help_text="Share of the layer's keys with m_i > 0.")
    active_share_tenth = QuartilesSerializer(
        required=False,
        help_text="Gated (SwiGLU) layers only: share of keys with |m_i| above a tenth of the "
        "position's largest.",
    )
    none_agree_share = ReadingField()
    agree_stopword_share = ReadingField()
    residual_final_share = ReadingField()
    change = ChangeField()
    final_prob_mean = ReadingField()


@extend_schema_serializer(component_name="ReportCompositionSlice")
class CompositionSliceSerializer(serializers.Serializer):
    prefixes = serializers.IntegerField()
    held_out = serializers.IntegerField(help_text="Prefixes of sentences mining did not read.")
    from_mined = serializers.IntegerField(help_text="Prefixes of a seeded sample of mined ones.")
    seed = serializers.IntegerField()
    note = serializers.CharField(allow_null=True)


@extend_schema_serializer(component_name="ReportPrefix")
class PrefixRefSerializer(serializers.Serializer):
    sentence = serializers.CharField()
    position = serializers.IntegerField(help_text="The prefix is tokens 0..position.")


@extend_schema_serializer(component_name="ReportComposition")
class CompositionSerializer(serializers.Serializer):
    applies = serializers.BooleanField(help_text="False for an encoder (no next token).")
    reason = serializers.CharField(
        allow_null=True, help_text="Why there are no figures (an encoder, not computed yet)."
    )
    paper = serializers.DictField(
        child=serializers.CharField(), help_text="What the paper measured, figure by figure."
    )
    layers = CompositionLayerSerializer(many=True)
    n_prefixes = serializers.IntegerField(required=False)
    final_norm = serializers.ListField(child=serializers.BooleanField(), required=False)
    final_norm_path = serializers.CharField(required=False, allow_null=True)
    gated = serializers.BooleanField(required=False)
    vocab_size = serializers.IntegerField(required=False)
    slice = CompositionSliceSerializer(required=False)
    prefix_set = PrefixRefSerializer(many=True, required=False)
    job = serializers.IntegerField(required=False, help_text="The job that computed them.")
    computed_at = serializers.DateTimeField(required=False)


@extend_schema_serializer(component_name="ReportSparsityLayer")
class SparsityLayerSerializer(serializers.Serializer):
    layer = serializers.IntegerField(help_text="From 1.")
    density = QuartilesSerializer(help_text="Over keys: the share of positions with m_i > 0.")
    gini = serializers.FloatField(
        allow_null=True, help_text="Gini coefficient of the keys' mean |m_i|."
    )
    above_tenth_of_peak = serializers.FloatField(
        help_text="Share of keys above a tenth of the position's largest m_j, per position."
    )


@extend_schema_serializer(component_name="ReportSparsity")
class SparsitySerializer(serializers.Serializer):
    paper = serializers.CharField()
    n_positions = serializers.IntegerField(required=False)
    layers = SparsityLayerSerializer(many=True)


@extend_schema_serializer(component_name="ReportFilters")
class ReportFiltersSerializer(serializers.Serializer):
    annotators = serializers.ListField(child=serializers.CharField(), allow_null=True)
    layers = serializers.ListField(child=serializers.IntegerField(), allow_null=True)
    submitted_only = serializers.BooleanField()


class ReportApi(ReportsApi):
    @extend_schema_serializer(component_name="StudyReport")
    class OutputSerializer(serializers.Serializer):
        study = ReportStudySerializer()
        filters = ReportFiltersSerializer()
        labels = serializers.ListField(child=serializers.CharField())
        definitions = serializers.DictField(child=serializers.CharField())
        figure2 = Figure2Serializer()
        coverage = CoverageSerializer()
        agreement = AgreementSerializer()
        agreement_with_gold = AgreementWithGoldSerializer(many=True)
        check_accuracy = CheckAccuracySerializer(many=True)
        pattern_jaccard = PatternJaccardSerializer()
        value_agreement = ValueAgreementSerializer()
        value_agreement_gold = ValueAgreementSerializer(
            help_text="§4 over the sampled keys that have submitted gold."
        )
        value_agreement_every_key = ValueAgreementEveryKeySerializer()
        perturbation = PerturbationSerializer()
        pattern_scores = PatternScoresSerializer(
            help_text="Held-out scores of written, accepted-suggestion and shuffled patterns."
        )
        composition = CompositionSerializer(help_text="§5 of the paper, per layer.")
        sparsity = SparsitySerializer(help_text="Sparsity per layer, from the mining pass.")

    @extend_schema(parameters=[ReportQuerySerializer], responses={200: OutputSerializer, **_ERRORS})
    def get(self, request: Request, study_id: int) -> Response:
        study = _study_or_404(study_id)
        report = report_build(study=study, flt=_report_filter(request, study))
        return Response(self.OutputSerializer(report).data)


class ReportCsvApi(ReportsApi):
    @extend_schema(
        parameters=[ReportQuerySerializer],
        responses={
            (200, "text/csv"): OpenApiResponse(
                response=OpenApiTypes.STR,
                description="One number per row: " + ",".join(REPORT_CSV_COLUMNS),
            ),
            **_ERRORS,
        },
    )
    def get(self, request: Request, study_id: int) -> HttpResponse:
        study = _study_or_404(study_id)
        report = report_build(study=study, flt=_report_filter(request, study))
        response = HttpResponse(report_csv(report), content_type="text/csv; charset=utf-8")
        name = exports.export_basename(study)
        response["Content-Disposition"] = f'attachment; filename="{name}-report.csv"'
        return response
