"""`manage.py import FILE.jsonl [--study-name NAME]`: a JSONL export into a new study."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports.imports import ImportFileError, study_import


class Command(BaseCommand):
    help = (
        "Import an ffkv.annotations/v1 JSONL file into a new study. Every line is checked "
        "first; any bad line means nothing is written."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the .jsonl file")
        parser.add_argument("--study-name", default=None, help="default: the file's study.name")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        try:
            with open(path, "rb") as file:
                result = study_import(file=file, study_name=options["study_name"])
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc
        except ImportFileError as exc:
            raise CommandError("nothing imported:\n" + "\n".join(exc.errors)) from exc
        created = ", ".join(result.users_created) or "none"
        self.stdout.write(
            f"imported study {result.study.name!r} (id {result.study.pk}): {result.keys} keys, "
            f"{result.prefixes} prefixes, {result.annotations} annotations, "
            f"{result.patterns} patterns; new inactive annotators: {created}"
        )
