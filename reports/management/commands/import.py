"""`manage.py import FILE.jsonl [--study-name NAME] [--live [--assign]]`: a JSONL export
into a new study, archived (read-only) unless --live."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.imports import ImportFileError
from reports.imports.load import study_import
from reports.imports.messages import STUDY_NAME_TAKEN

STUDY_NAME_TAKEN_CLI = STUDY_NAME_TAKEN.removesuffix(".") + " with --study-name NAME."
ASSIGN_NEEDS_LIVE_CLI = "--assign needs --live: an archived study gets no assignments."


class Command(BaseCommand):
    help = (
        "Import an ffkv.annotations/v1 JSONL file into a new study. Every line is checked "
        "first; any bad line means nothing is written. The study is archived (read-only: "
        "no annotator sees it) unless --live."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the .jsonl file")
        parser.add_argument("--study-name", default=None, help="default: the file's study.name")
        parser.add_argument(
            "--live",
            action="store_true",
            help="make a live study that batches and assignments can be added to",
        )
        parser.add_argument(
            "--assign",
            action="store_true",
            help="with --live: give each annotator the imported keys they annotated",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        if options["assign"] and not options["live"]:
            raise CommandError(ASSIGN_NEEDS_LIVE_CLI)
        try:
            with open(path, "rb") as file:
                result = study_import(
                    file=file,
                    study_name=options["study_name"],
                    live=options["live"],
                    assign=options["assign"],
                )
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc
        except ImportFileError as exc:
            errors = exc.errors
            if exc.code == "study_name_taken":
                errors = [STUDY_NAME_TAKEN_CLI.format(name=exc.name)]
            raise CommandError("nothing imported:\n" + "\n".join(errors)) from exc
        created = ", ".join(result.users_created) or "none"
        state = "live" if result.study.archived is False else "archived (read-only)"
        self.stdout.write(
            f"imported study {result.study.name!r} (id {result.study.pk}), {state}: "
            f"{result.keys} keys, {result.prefixes} prefixes, "
            f"{result.examples} held-out examples and samples, {result.annotations} annotations, "
            f"{result.patterns} patterns, {result.golds} gold annotations, {result.flags} flags; "
            f"new inactive accounts: {created}"
        )
