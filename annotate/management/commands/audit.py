"""``manage.py audit --study ID --out FILE``: a study's audit trail as JSONL, one event a
line, oldest first: every write of its annotators' annotations and of its gold
(docs/annotation.md, "The audit trail")."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.serializers.json import DjangoJSONEncoder

from annotate.models import Study
from annotate.selectors.audit import audit_events

NO_STUDY = "no study with id or name {study!r}"
CANNOT_WRITE = "cannot write {out}: {error}"


def _study(ref: str) -> Study:
    study = Study.objects.filter(pk=int(ref)).first() if ref.isdigit() else None
    study = study or Study.objects.filter(name=ref).first()
    if study is None:
        raise CommandError(NO_STUDY.format(study=ref))
    return study


class Command(BaseCommand):
    help = "Write a study's audit trail (annotator and gold events) as JSONL."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="study id or name")
        parser.add_argument("--out", required=True, help="output file (JSONL)")

    def handle(self, *args: Any, **options: Any) -> None:
        study = _study(options["study"])
        out = Path(options["out"])
        # Written beside the file and renamed: a failed run leaves no half trail behind.
        partial = out.with_name(out.name + ".partial")
        n = 0
        try:
            with partial.open("w", encoding="utf-8") as file:
                for event in audit_events(study=study):
                    file.write(json.dumps(event, cls=DjangoJSONEncoder, ensure_ascii=False))
                    file.write("\n")
                    n += 1
            os.replace(partial, out)
        except OSError as exc:
            raise CommandError(CANNOT_WRITE.format(out=out, error=exc.strerror or exc)) from exc
        finally:
            # Whatever stopped the run (a full disk, a lost database connection, ^C).
            partial.unlink(missing_ok=True)
        self.stdout.write(f"wrote {n} events to {out}")
