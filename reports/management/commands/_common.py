"""What the reports' commands share: finding a study and parsing lists."""

from __future__ import annotations

from django.core.management.base import CommandError

from annotate.models import Study

NO_STUDY = "There is no study {ref!r} (give its name or id)."
BAD_LAYERS = "--layers takes layers (from 1) separated by commas, not {value!r}"


def study_find(ref: str) -> Study:
    study = Study.objects.filter(name=ref).first()
    if study is None and ref.isdigit():
        study = Study.objects.filter(pk=int(ref)).first()
    if study is None:
        raise CommandError(NO_STUDY.format(ref=ref))
    return study


def parse_layers(value: str | None) -> tuple[int, ...] | None:
    if not value:
        return None
    parts = [p.strip() for p in value.split(",")]
    if not all(p.isdigit() and int(p) >= 1 for p in parts):
        raise CommandError(BAD_LAYERS.format(value=value))
    return tuple(sorted({int(p) for p in parts}))
