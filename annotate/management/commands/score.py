"""`manage.py score --study S`: compute the held-out scores that are missing
(docs/evidence.md, "Scores"), in this process."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotate.models import Study
from annotate.services.scores import scores_compute, scores_missing_count

NO_STUDY = "There is no study {ref!r} (give its name or id)."


def study_find(ref: str) -> Study:
    study = Study.objects.filter(name=ref).first()
    if study is None and ref.isdigit():
        study = Study.objects.filter(pk=int(ref)).first()
    if study is None:
        raise CommandError(NO_STUDY.format(ref=ref))
    return study


class Command(BaseCommand):
    help = (
        "Compute the held-out scores a study's patterns, gold patterns and suggestions "
        "are missing (--all: recompute every one)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="study name or id")
        parser.add_argument(
            "--all", action="store_true", help="recompute every score, not only missing ones"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        study = study_find(options["study"])
        before = scores_missing_count(study=study)
        from annotate.evidence.embedding import EmbeddingUnavailable

        try:
            written = scores_compute(study_id=study.pk, missing_only=not options["all"])
        except EmbeddingUnavailable as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"{study.name}: scored {written['patterns']} patterns, "
            f"{written['gold_patterns']} gold patterns and {written['suggestions']} "
            f"suggestions ({sum(before.values())} were missing)"
        )
