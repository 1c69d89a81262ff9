"""`manage.py export --study S --format jsonl|csv|parquet --out FILE` (docs/data-format.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports.exports import FORMATS, export_to_file

from ._common import parse_layers, study_find


class Command(BaseCommand):
    help = "Export a study's keys, prefixes and annotations (JSONL is ffkv.annotations/v1)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="study name or id")
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument("--out", required=True, help="output file")
        parser.add_argument("--layers", default="", help="only these layers (from 1)")

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_find(options["study"])
        out = Path(options["out"])
        try:
            export_to_file(
                study=study,
                fmt=options["format"],
                path=out,
                layers=parse_layers(options["layers"]),
            )
        except OSError as exc:
            raise CommandError(f"cannot write {out}: {exc.strerror or exc}") from exc
        self.stdout.write(f"wrote {out}")
