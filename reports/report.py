"""The report of a study (docs/annotation.md, "Reports"): its numbers as JSON-ready values, with the
definitions it used, and the same report as a long CSV table (one number a row)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from annotate.labels import LABEL_KEYS, LABELS
from annotate.models import Study

from . import stats
from .csv_cells import csv_cell, csv_writer
from .selectors.pattern_scores import pattern_score_arrays
from .selectors.report_filter import ReportFilter
from .selectors.study_arrays import study_arrays
from .stats.bootstrap import BOOTSTRAP_REPLICATES, BOOTSTRAP_SEED, MIN_BOOTSTRAP_KEYS
from .stats.composition import composition_csv_rows, composition_section, sparsity_section
from .stats.pattern_scores import GROUPS as SCORE_GROUPS
from .stats.pattern_scores import SCORES, pattern_scores
from .stats.perturbation import PERTURBATIONS
from .stats.value_agreement import READINGS, value_agreement_every_key

# Where a number's definition is a choice, the report says what it computed
# (``reports.stats``' docstring), in words for the researchers who read it: no field or
# column names. The keys are
# report.json's contract; the report page shows these texts (its English copy,
# report.definitionTexts in frontend/src/i18n/en.json, is kept equal by a test).
DEFINITIONS = {
    "rating": "One annotator's label for one trigger prefix of a key they annotated: "
    "shallow, semantic or shallow+semantic from the patterns that cover it, or "
    "not-covered when none of their patterns does.",
    "unit": "One trigger prefix of one key (a key and a prefix rank). The annotators "
    "who rated it are its coders; agreement compares their labels.",
    "figure2_pooled": "Every rating counts once: a prefix rated by three annotators counts "
    "three times. Each share is of all ratings in the layer.",
    "figure2_majority": "Every prefix rated by at least one annotator gives one vote, to "
    "the label most of its annotators chose. A tie is a prefix where two or more labels "
    "share the largest number of annotators, e.g. one annotator says shallow and the "
    "other semantic. A tie splits that prefix's vote equally between the tied labels "
    "(½ each for two, ⅓ each for three), so no prefix is dropped and no label is "
    "favoured. The number of tied prefixes is reported beside the figure.",
    "coverage": "The share of ratings whose prefix is covered by at least one pattern of "
    "its annotator. Patterns per key: the mean number of patterns in one annotator's "
    "work on one key, as in the paper's 3.6.",
    "raw_agreement": "Of all pairs of annotators who rated the same prefix, the share "
    "that gave it the same label, pooled over the prefixes rated by two or more "
    "annotators.",
    "fleiss_kappa": "Fleiss' κ over the prefixes rated by every selected annotator; "
    "prefixes that some of them did not rate are left out.",
    "cohen_kappa_mean": "Cohen's κ for each pair of annotators over the prefixes both "
    "rated, averaged over the pairs that share at least one prefix.",
    "krippendorff_alpha": "Krippendorff's α for nominal labels over every prefix rated by "
    "two or more annotators; a prefix an annotator did not rate counts as missing, not "
    "as a disagreement.",
    "bootstrap": "95% intervals: keys (not single prefixes) are drawn again with "
    "replacement within each layer, and the interval runs from the 2.5th to the 97.5th "
    "percentile of the statistic over these resamples. Only keys with a prefix rated by "
    "two or more annotators take part. An interval that rests on fewer than "
    f"{MIN_BOOTSTRAP_KEYS} keys is marked: so few keys give few distinct resamples and "
    "an interval narrower than the data warrant.",
    "pattern_jaccard": "For two annotators of the same key: each pattern is matched with "
    "the other annotator's most similar pattern (the Jaccard index of the prefixes they "
    "cover; 0 when the other wrote none), and the key's score is the mean over the "
    "patterns of both. Keys where neither wrote a pattern are left out.",
    "value_agreement_every_key": "§4 of the paper over every key of every layer, counted "
    "during mining as the paper's authors did (not only over the sampled keys). For each "
    "key, the most likely token of its value vector, argmax softmax(vᵢ·E) with E the "
    "output embedding, is compared with (a) the token that follows the key's top trigger "
    "prefix and (b) the last token of that prefix. Where the model has a final "
    "normalization layer, both are computed with and without it applied to vᵢ (the "
    "paper projects vᵢ without it). Every key of the layer counts in (b). In (a), a key "
    "whose top prefix was cut at the token limit is left out, since the next token is "
    "unknown, and the number left out is reported; a prefix that ends its sentence has "
    "no next token, so it counts and never matches. This does not apply to encoders, "
    "which see the whole sentence, and is not available for studies that were imported "
    "or mined before these counts were kept.",
    "value_agreement": "The same comparison over the sampled keys only (those whose value "
    "has a known top token and that have a top prefix). With n keys in a layer a rate "
    "moves in steps of 1/n (10 keys: steps of 10%); the table says how many keys this "
    "study has a layer. A key whose top prefix was cut at the token limit is left out of "
    "(a), and counted.",
    "check_annotations": "Check keys are keys with a curated (gold) annotation, served to "
    "annotators unannounced to measure them. An annotation made on a check key is left out "
    "of every figure above (Figure 2, coverage, agreement, pattern similarity) and counts "
    "only in the accuracy on checks.",
    "figure2_gold": "The curated (gold) annotations as a source of their own: every key "
    "whose gold annotation is submitted gives one rating per prefix, its label derived "
    "from the gold patterns as an annotator's is from theirs. Drafts of gold are left out. "
    "A layer without submitted gold has no shares.",
    "coverage_gold": "The same coverage over the submitted gold annotations: the share of "
    "the curated keys' prefixes covered by at least one gold pattern, and the mean number "
    "of gold patterns per curated key.",
    "value_agreement_gold": "The gold view of §4: the same comparison over the sampled keys "
    "that have a submitted gold annotation. §4 does not depend on labels, so this only "
    "restricts the keys; the count over every key stays the main figure.",
    "agreement_with_gold": "Each annotator against gold: Cohen's κ and the raw agreement "
    "on the four labels over the prefixes both rated, that is every prefix of the keys "
    "that the annotator submitted (check keys aside) and that have submitted gold.",
    "check_accuracy": "Each annotator's submitted annotations of check keys against the "
    "key's submitted gold: the share of prefixes given gold's label, Cohen's κ over those "
    "prefixes, and the number of checks compared.",
    "gold_as_coder": "Whether the curator counts as a coder. By default it does not: "
    "agreement is among the annotators only. When chosen, the gold annotation is one more "
    "coder, named (gold), in Krippendorff's α, Fleiss' κ, Cohen's κ and the raw agreement; "
    "the report says which choice it made. Figure 2, coverage and pattern similarity never "
    "count gold as an annotator.",
    "wilson_interval": "The 95% Wilson score interval of matches out of the keys counted "
    "(z = 1.96): unlike the normal approximation it stays within 0–100% and is not empty "
    "at 0 matches. The random baseline is 1/|V| for a vocabulary of |V| tokens.",
}


def report_build(
    *,
    study: Study,
    flt: ReportFilter | None = None,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """The whole report of a study (docs/annotation.md, "Reports") as JSON-ready values."""
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
        **stats.report(
            arrays,
            replicates=replicates,
            seed=seed,
            is_causal=study.is_causal,
            gold_as_coder=flt.gold_as_coder,
        ),
        "value_agreement_every_key": value_agreement_every_key(
            study.value_agreement, is_causal=study.is_causal, layers=flt.layers
        ),
        "pattern_scores": pattern_scores(
            pattern_score_arrays(study=study, flt=flt, layers=arrays.layers),
            replicates=replicates,
            seed=seed,
        ),
        "composition": composition_section(
            study.composition, is_causal=study.is_causal, layers=flt.layers
        ),
        "sparsity": sparsity_section(study.sparsity, layers=flt.layers),
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
    # Beside a bootstrap interval: the keys it resampled, and whether that is fewer than
    # MIN_BOOTSTRAP_KEYS (empty on rows without one).
    "interval_keys",
    "few_keys",
)


def _layer(value: int | None) -> str:
    return "all" if value is None else str(value)


def _rows_of(block: dict[str, Any]) -> list[dict[str, Any]]:
    return [*block["layers"], block["overall"]]


def report_csv_rows(report: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """The report as a long table: one number per row."""
    labels = dict(zip(LABEL_KEYS, LABELS, strict=True))
    fig = report["figure2"]
    views = [
        ("pooled", "", fig["pooled"]),
        ("majority", "", fig["majority"]),
        ("gold", "", fig["gold"]),
    ] + [("per_annotator", block["annotator"], block) for block in fig["per_annotator"]]
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
    coverage = [("", row) for row in _rows_of(report["coverage"])]
    coverage += [("gold", row) for row in _rows_of(report["coverage"]["gold"])]
    for cov_view, row in coverage:
        layer = _layer(row["layer"])
        yield (
            "coverage",
            cov_view,
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
            cov_view,
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
                has_interval = est["low"] is not None
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
                    est["n_keys"] if has_interval else None,
                    est["few_keys"] if has_interval else None,
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
    # Per annotator: gold agreement as kappa then raw, the checks as raw then kappa.
    for section, metrics in ANNOTATOR_CSV_METRICS:
        for row in report[section]:
            yield from _annotator_rows(section, row, metrics)
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
    yield from _pattern_scores_csv_rows(report)
    yield from composition_csv_rows(report)


def _pattern_scores_csv_rows(report: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """The held-out scores (section pattern_scores, view written / suggestion /
    shuffled): per layer and overall a row per score, its mean, its bootstrap interval
    and the group's n."""
    for row in _rows_of(report["pattern_scores"]):
        for group in SCORE_GROUPS:
            block = row[group]
            for metric in SCORES:
                est = block[metric]
                yield (
                    "pattern_scores",
                    group,
                    _layer(row.get("layer")),
                    "",
                    metric,
                    est["mean"],
                    est["low"],
                    est["high"],
                    block["n"],
                )


# The per-annotator sections of the CSV, each a row per (field, metric name, n field).
ANNOTATOR_CSV_METRICS: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...] = (
    (
        "agreement_with_gold",
        (("kappa", "cohen_kappa", "n_units"), ("raw_agreement", "raw_agreement", "n_units")),
    ),
    (
        "check_accuracy",
        (
            ("raw_agreement", "raw_agreement", "n_units"),
            ("kappa", "cohen_kappa", "n_units"),
            ("n_checks", "checks", "n_checks"),
        ),
    ),
)


def _annotator_rows(
    section: str, row: dict[str, Any], metrics: tuple[tuple[str, str, str], ...]
) -> Iterator[tuple[Any, ...]]:
    """One CSV row, over all layers, per ``(field, metric name, n field)`` of an
    annotator's row."""
    for field, name, n in metrics:
        yield (section, "", "all", row["annotator"], name, row[field], "", "", row[n])


def _rate_row(section: str, view: str, layer: str, rate: dict[str, Any]) -> tuple[Any, ...]:
    return (section, view, layer, "", "rate", rate["rate"], rate["low"], rate["high"], rate["n"])


def _value_agreement_csv_rows(report: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """§4 over every key (section value_agreement_every_key, view ``reading/variant``) and
    over the sampled keys (value_agreement, and value_agreement_gold over the curated ones;
    view ``reading``): per layer a rate row (low,
    high: the Wilson interval; n: the denominator) and a matches row per reading, and
    the keys left out or never matching. A section that does not apply says so in one
    row: metric ``applicable``, value 0, view the reason code."""
    for section, block in (
        ("value_agreement_every_key", report["value_agreement_every_key"]),
        ("value_agreement", report["value_agreement"]),
        ("value_agreement_gold", report["value_agreement_gold"]),
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
        # Rows end at ``n`` where the columns after it do not apply.
        cells = [csv_cell(v) for v in row] + [""] * (len(REPORT_CSV_COLUMNS) - len(row))
        cells[n_column] = _count(row[n_column])
        writer.writerow(cells)
    return out.getvalue()
