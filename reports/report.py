"""The report of a study (DESIGN §5): its numbers as JSON-ready values, with the
definitions it used, and the same report as a long CSV table (one number a row)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from annotate.models import Study

from . import stats
from .csv_cells import csv_cell, csv_writer
from .selectors import ReportFilter, study_arrays
from .stats.bootstrap import BOOTSTRAP_REPLICATES, BOOTSTRAP_SEED
from .stats.labels import LABEL_KEYS, LABELS
from .stats.perturbation import PERTURBATIONS
from .stats.value_agreement import READINGS, value_agreement_every_key

# Where DESIGN is silent, the report says what it computed (``reports.stats``' docstring).
DEFINITIONS = {
    "rating": "one annotation's label of one prefix of its key",
    "unit": "a (key, prefix rank) cell; its coders are the annotators of that key",
    "figure2_pooled": "shares over all ratings",
    "figure2_majority": "one vote per rated unit; ties split the vote equally between the "
    "tied labels; `ties` counts the tied units",
    "coverage": "share of ratings covered by at least one pattern; mean patterns per "
    "annotation (one annotator's work on one key)",
    "raw_agreement": "agreeing pairs / all pairs of coders, pooled over units with 2+ coders",
    "fleiss_kappa": "over units rated by every selected coder",
    "cohen_kappa_mean": "mean over coder pairs of Cohen's kappa on the units both rated",
    "krippendorff_alpha": "nominal, over units with 2+ coders (missing data allowed)",
    "bootstrap": "keys resampled with replacement within each layer; 95% percentile "
    "interval; only keys with a unit rated by 2+ coders are resampled",
    "pattern_jaccard": "per coder pair and key: each pattern's best Jaccard (covered ranks) "
    "against the other coder's patterns (0 if none), averaged over both coders' patterns; "
    "keys where neither wrote a pattern are left out",
    "value_agreement_every_key": "§4 over every key of every layer, as the paper's authors "
    "computed it (counted by the mining pass, not over the sampled keys): for each key, "
    "the argmax of its value's vocabulary distribution softmax(v_i·E) is compared with "
    "the token after the key's rank-1 trigger prefix (reading a, next token) and with the "
    "prefix's last token (reading b, trigger token). Where the model has a final norm "
    "(e.g. model.norm) both are computed with E applied to v_i directly and to "
    "norm(v_i); the paper projects v_i without it. Denominators: reading (b) every key of "
    "the layer; reading (a) every key except those whose rank-1 prefix ends where the "
    "sentence was cut at the token limit (next_unknown: the next token is unknown, so the "
    "key cannot count either way). A prefix that ends the sentence has no next token: it "
    "stays in the denominator and never matches (next_end). Not defined for encoders, "
    "which see the whole sentence; not available for studies that were imported or "
    "mined before these counts were kept",
    "value_agreement": "the same comparison over the sampled keys only (those with a "
    "known value argmax and a rank-1 prefix); with ~10 keys a layer a rate moves in "
    "steps of 10%. A rank-1 prefix whose next token is unknown (cut sentence) is left out "
    "of reading (a)'s denominator and counted in next_unknown",
    "wilson_interval": "95% Wilson score interval of matches/denominator (z = 1.96): "
    "it stays inside [0, 1] and is not empty at 0 matches, unlike the normal "
    "approximation; the random baseline is 1/|V| for a vocabulary of |V| tokens",
}


def report_build(
    *,
    study: Study,
    flt: ReportFilter | None = None,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """The whole report of a study (DESIGN §5) as JSON-ready values."""
    flt = flt or ReportFilter()
    arrays = study_arrays(study=study, flt=flt)
    return {
        "study": {
            "id": study.pk,
            "name": study.name,
            "model": study.model_name,
            "corpus": study.corpus,
            "top_k": study.top_k,
        },
        "filters": {
            "annotators": list(flt.annotators) if flt.annotators is not None else None,
            "layers": list(flt.layers) if flt.layers is not None else None,
            "submitted_only": flt.submitted_only,
        },
        "labels": list(LABELS),
        "definitions": report_definitions(study=study),
        **stats.report(arrays, replicates=replicates, seed=seed, is_causal=study.is_causal),
        "value_agreement_every_key": value_agreement_every_key(
            study.value_agreement, is_causal=study.is_causal, layers=flt.layers
        ),
    }


def report_definitions(*, study: Study) -> dict[str, str]:
    """``DEFINITIONS``, with what the mining run of this study ranked and how, and any
    note on its checkpoint (``Study.mining_definitions``), where the study has them."""
    definitions = dict(DEFINITIONS)
    mining = study.mining_definitions if isinstance(study.mining_definitions, dict) else {}
    text, note = mining.get("text"), mining.get("checkpoint_note")
    if isinstance(text, str) and text.strip():
        definitions["mining"] = text.strip()
    if isinstance(note, str) and note.strip():
        definitions["checkpoint"] = note.strip()
    return definitions


REPORT_CSV_COLUMNS = (
    "section",
    "view",
    "layer",
    "annotator",
    "metric",
    "value",
    "low",
    "high",
    "n",
)


def _layer(value: int | None) -> str:
    return "all" if value is None else str(value)


def _rows_of(block: dict[str, Any]) -> list[dict[str, Any]]:
    return [*block["layers"], block["overall"]]


def report_csv_rows(report: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """The report as a long table: one number per row."""
    labels = dict(zip(LABEL_KEYS, LABELS, strict=True))
    fig = report["figure2"]
    views = [("pooled", "", fig["pooled"]), ("majority", "", fig["majority"])] + [
        ("per_annotator", block["annotator"], block) for block in fig["per_annotator"]
    ]
    for view, annotator, block in views:
        for row in _rows_of(block):
            for key, label in labels.items():
                yield (
                    "figure2",
                    view,
                    _layer(row["layer"]),
                    annotator,
                    label,
                    row["shares"][key],
                    "",
                    "",
                    row["counts"][key],
                )
    for row in _rows_of(report["coverage"]):
        layer = _layer(row["layer"])
        yield (
            "coverage",
            "",
            layer,
            "",
            "share_covered",
            row["share_covered"],
            "",
            "",
            row["n_prefixes"],
        )
        yield (
            "coverage",
            "",
            layer,
            "",
            "mean_patterns_per_key",
            row["mean_patterns_per_key"],
            "",
            "",
            row["n_annotations"],
        )
    for view in ("labels", "binary"):
        for row in _rows_of(report["agreement"][view]):
            for metric in (
                "krippendorff_alpha",
                "fleiss_kappa",
                "cohen_kappa_mean",
                "raw_agreement",
            ):
                est = row[metric]
                yield (
                    "agreement",
                    view,
                    _layer(row["layer"]),
                    "",
                    metric,
                    est["value"],
                    est["low"],
                    est["high"],
                    est["n_units"],
                )
        for pair in report["agreement"][view]["cohen_kappa_pairs"]:
            yield (
                "agreement",
                view,
                "all",
                "|".join(pair["annotators"]),
                "cohen_kappa",
                pair["value"],
                "",
                "",
                pair["n_units"],
            )
    jac = report["pattern_jaccard"]
    for name, block in [("|".join(p["annotators"]), p) for p in jac["pairs"]] + [("", jac)]:
        for row in _rows_of(block):
            yield (
                "pattern_jaccard",
                "",
                _layer(row["layer"]),
                name,
                "best_match_jaccard",
                row["mean"],
                "",
                "",
                row["n_keys"],
            )
    yield from _value_agreement_csv_rows(report)
    for row in _rows_of(report["perturbation"]):
        for metric in PERTURBATIONS:
            yield (
                "perturbation",
                "",
                _layer(row["layer"]),
                "",
                metric,
                row[metric],
                "",
                "",
                row["n_keys"],
            )


def _rate_row(section: str, view: str, layer: str, rate: dict[str, Any]) -> tuple[Any, ...]:
    return (section, view, layer, "", "rate", rate["rate"], rate["low"], rate["high"], rate["n"])


def _value_agreement_csv_rows(report: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """§4 over every key (section value_agreement_every_key, view ``reading/variant``) and
    over the sampled keys (value_agreement, view ``reading``): per layer a rate row (low,
    high: the Wilson interval; n: the denominator) and a matches row per reading, and
    the keys left out or never matching. A section that does not apply says so in one
    row: metric ``applicable``, value 0, view the reason code."""
    for section, block in (
        ("value_agreement_every_key", report["value_agreement_every_key"]),
        ("value_agreement", report["value_agreement"]),
    ):
        if not block["applicable"]:
            yield (section, block["reason"], "all", "", "applicable", 0, "", "", "")
            continue
        every_key = section == "value_agreement_every_key"
        for row in _rows_of(block):
            layer = _layer(row["layer"])
            for reading in READINGS:
                cells = row[reading].items() if every_key else [("", row[reading])]
                for variant, rate in cells:
                    view = f"{reading}/{variant}" if variant else reading
                    yield _rate_row(section, view, layer, rate)
                    yield (section, view, layer, "", "matches", rate["matches"], "", "", rate["n"])
            for metric in ("next_end", "next_unknown"):
                yield (section, "", layer, "", metric, row[metric], "", "", row["n_keys"])
        yield (
            section,
            "random_baseline",
            "all",
            "",
            "rate",
            block["random_baseline"],
            "",
            "",
            block["vocab_size"],
        )


def _count(value: Any) -> Any:
    """A count as a CSV cell: whole counts as integers (``12``, not ``12.0``). Figure 2's
    counts are floats in the JSON because a majority vote split by a tie gives each
    tied label a fraction of a unit (0.5, 1/3); those fractions stay as they are."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return csv_cell(value)


def report_csv(report: dict[str, Any]) -> str:
    """The report as CSV (columns: ``REPORT_CSV_COLUMNS``); text cells pass through
    ``csv_cell``, counts through ``_count``."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(REPORT_CSV_COLUMNS)
    n_column = REPORT_CSV_COLUMNS.index("n")
    for row in report_csv_rows(report):
        cells = [csv_cell(v) for v in row]
        cells[n_column] = _count(row[n_column])
        writer.writerow(cells)
    return out.getvalue()
