"""`manage.py report --study S --out DIR`: Figure 2 (SVG, PNG), report.json, report.csv."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports.figures import figure2_image
from reports.selectors import ReportFilter, study_annotator_names
from reports.services import report_build, report_csv

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
        )
        out = Path(options["out"])
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"cannot create {out}: {exc.strerror}") from exc
        report = report_build(study=study, flt=flt)
        (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        (out / "report.csv").write_text(report_csv(report))
        for fmt in ("svg", "png"):
            (out / f"figure2.{fmt}").write_bytes(figure2_image(report, fmt))
        overall = report["coverage"]["overall"]
        alpha = report["agreement"]["labels"]["overall"]["krippendorff_alpha"]["value"]
        self.stdout.write(
            f"{study.name}: {overall['n_annotations']} annotations, "
            f"covered {_pct(overall['share_covered'])}, "
            f"{_num(overall['mean_patterns_per_key'])} patterns per key, α = {_num(alpha)}"
        )
        self.stdout.write(f"wrote figure2.svg, figure2.png, report.json, report.csv to {out}")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"
