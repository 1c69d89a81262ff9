"""`manage.py report --study S --out DIR`: Figure 2 (SVG, PNG), report.json, report.csv."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports.figures import figure2_image
from reports.report import report_build, report_csv
from reports.selectors.report_filter import ReportFilter, study_annotator_names

from ._common import parse_layers, study_find

UNKNOWN_ANNOTATORS = "{names} annotated no key of this study."


class Command(BaseCommand):
    help = "Write a study's report: figure2.svg, figure2.png, report.json and report.csv."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="study name or id")
        parser.add_argument("--out", required=True, help="output directory (created)")
        parser.add_argument("--annotators", default="", help="usernames, comma-separated")
        parser.add_argument("--layers", default="", help="layers (from 1), comma-separated")
        parser.add_argument(
            "--include-drafts", action="store_true", help="count draft annotations too"
        )
        parser.add_argument(
            "--gold-as-coder",
            action="store_true",
            help="count the gold (curated) annotations as one more coder in the agreement",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_find(options["study"])
        annotators = None
        if options["annotators"]:
            annotators = tuple(sorted({a.strip() for a in options["annotators"].split(",")}))
            unknown = sorted(set(annotators) - set(study_annotator_names(study=study)))
            if unknown:
                raise CommandError(UNKNOWN_ANNOTATORS.format(names=", ".join(map(repr, unknown))))
        flt = ReportFilter(
            annotators=annotators,
            layers=parse_layers(options["layers"]),
            submitted_only=not options["include_drafts"],
            gold_as_coder=options["gold_as_coder"],
        )
        out = Path(options["out"])
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"cannot create {out}: {exc.strerror}") from exc
        report = report_build(study=study, flt=flt)
        (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        (out / "report.csv").write_text(report_csv(report), encoding="utf-8", newline="")
        for fmt in ("svg", "png"):
            (out / f"figure2.{fmt}").write_bytes(figure2_image(report, fmt))
        overall = report["coverage"]["overall"]
        alpha = report["agreement"]["labels"]["overall"]["krippendorff_alpha"]["value"]
        self.stdout.write(
            f"{study.name}: {overall['n_annotations']} annotations, "
            f"covered {_pct(overall['share_covered'])}, "
            f"{_num(overall['mean_patterns_per_key'])} patterns per key, α = {_num(alpha)}"
        )
        for line in value_agreement_lines(report):
            self.stdout.write(line)
        for line in pattern_scores_lines(report):
            self.stdout.write(line)
        for line in composition_lines(report):
            self.stdout.write(line)
        self.stdout.write(f"wrote figure2.svg, figure2.png, report.json, report.csv to {out}")


REASONS = {
    "encoder": "does not apply (encoders have no next token)",
    "not_counted": "not available (the mining pass did not count every key: the study was "
    "imported or mined before these counts were kept)",
    "counts_invalid": "not available (the stored counts are unreadable: {detail})",
}


def _rate(rate: dict[str, Any]) -> str:
    if rate["rate"] is None:
        return f"n/a (0 of {rate['n']})"
    return (
        f"{_pct(rate['rate'], 2)} [{_pct(rate['low'], 2)}, {_pct(rate['high'], 2)}] "
        f"({rate['matches']}/{rate['n']})"
    )


def value_agreement_lines(report: dict[str, Any]) -> list[str]:
    """§4 in words: over every key (overall per reading and variant), then the sampled
    keys; or why it has no rate."""
    lines = []
    every = report["value_agreement_every_key"]
    if not every["applicable"]:
        reason = REASONS[every["reason"]].format(detail=every["detail"])
        lines.append(f"§4 over every key: {reason}")
    else:
        overall = every["overall"]
        lines.append(
            f"§4 over every key ({overall['n_keys']} keys, {overall['next_unknown']} with an "
            f"unknown next token left out of (a), {overall['next_end']} ending a sentence; "
            f"random 1/|V| = {_small(every['random_baseline'])}):"
        )
        for reading, name in (("next_token", "(a) next token"), ("trigger_token", "(b) trigger")):
            for variant, rate in overall[reading].items():
                lines.append(f"  {name}, {variant.replace('_', ' ')}: {_rate(rate)}")
    sampled = report["value_agreement"]
    if sampled["applicable"]:
        overall = sampled["overall"]
        lines.append(
            f"§4 over the sampled keys ({overall['n_keys']} keys, "
            f"{overall['next_unknown']} unknown next): (a) {_rate(overall['next_token'])}, "
            f"(b) {_rate(overall['trigger_token'])}"
        )
    return lines


def _estimate(est: dict[str, Any]) -> str:
    if est["mean"] is None:
        return "n/a"
    if est["low"] is None:
        return _num(est["mean"])
    return f"{_num(est['mean'])} [{_num(est['low'])}, {_num(est['high'])}]"


def pattern_scores_lines(report: dict[str, Any]) -> list[str]:
    """The held-out scores over all layers: per group its n, detection and embedding."""
    overall = report["pattern_scores"]["overall"]
    lines = ["Held-out pattern scores (mean [95% over keys]):"]
    for group in ("written", "suggestion", "shuffled"):
        block = overall[group]
        lines.append(
            f"  {group}: n = {block['n']}, detection {_estimate(block['detection'])}, "
            f"embedding {_estimate(block['embedding'])}"
        )
    return lines


def _small(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2g}%"


def _pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{100 * x:.{digits}f}%"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _reading(value: Any) -> Any:
    """The figure through the final norm where the model has one (as the page shows it
    first); report.json and report.csv have both readings."""
    return value.get("with_final_norm") if isinstance(value, dict) else value


def composition_lines(report: dict[str, Any]) -> list[str]:
    """§5 per layer (docs/composition.md), or why there is none; then sparsity."""
    composition, lines = report["composition"], []
    if not composition["layers"]:
        lines.append(f"§5 composition: {composition['reason']}")
    else:
        norm = composition.get("final_norm") == [False, True]
        lines.append(
            f"§5 composition over {composition['n_prefixes']} prefixes"
            f"{' (through the final norm; report.csv has both readings)' if norm else ''}. "
            f"{composition['paper']['model']}."
        )
        lines.append("  layer  active  none agree  residual=final  kept/ffn/neither  p(final)")
        for row in composition["layers"]:
            change = _reading(row["change"])
            lines.append(
                f"  {row['layer']:>5}  {_pct(row['active_share']['mean']):>6}  "
                f"{_pct(_reading(row['none_agree_share'])):>10}  "
                f"{_pct(_reading(row['residual_final_share'])):>14}  "
                f"{_pct(change['residual'])}/{_pct(change['ffn'])}/{_pct(change['neither'])}  "
                f"{_num(_reading(row['final_prob_mean']))}"
            )
    sparsity = report["sparsity"]
    if sparsity["layers"]:
        lines.append("Sparsity (mining pass): layer, median key density, Gini, above 1/10 peak")
        for row in sparsity["layers"]:
            lines.append(
                f"  {row['layer']:>5}  {_pct(row['density']['median'])}  {_num(row['gini'])}  "
                f"{_pct(row['above_tenth_of_peak'])}"
            )
    return lines
