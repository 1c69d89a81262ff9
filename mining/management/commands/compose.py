"""`manage.py compose`: the §5 composition analysis of a study (docs/composition.md).

Runs in this process by default; ``--async`` queues it for a worker on queue ``gpu``, as
the report page does. The figures go to the study and its report (``manage.py report``).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mining.composition import (
    DEFAULT_PREFIXES,
    composition_job_create,
    composition_job_run,
)
from mining.core import MiningError
from mining.models import CompositionJob
from reports.management.commands._common import study_find


class Command(BaseCommand):
    help = "Compute the §5 composition figures of a study over a held-out slice of its corpus."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="study name or id")
        parser.add_argument(
            "--prefixes",
            type=int,
            default=DEFAULT_PREFIXES,
            help=f"the slice's size, one prefix a sentence (default {DEFAULT_PREFIXES})",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--async", dest="queue", action="store_true", help="queue it for a worker instead"
        )

    def handle(
        self, *args: Any, study: str, prefixes: int, seed: int, queue: bool, **_: Any
    ) -> None:
        found = study_find(study)
        try:
            job = composition_job_create(study=found, prefixes=prefixes, seed=seed, send=queue)
        except MiningError as exc:
            raise CommandError(str(exc)) from exc
        if queue:
            self.stdout.write(f"Composition job {job.pk} of {found.name!r} is queued.")
            return
        self.stdout.write(f"Composing {found.name!r} over {prefixes} prefixes…")
        composition_job_run(job_id=job.pk)
        job.refresh_from_db()
        if job.status != CompositionJob.Status.DONE:
            raise CommandError(f"the composition analysis failed: {job.error}")
        found.refresh_from_db()
        layers = found.composition["layers"]
        self.stdout.write(
            self.style.SUCCESS(
                f"Stored: {len(layers)} layers over {found.composition['n_prefixes']} prefixes "
                "(manage.py report writes them out)."
            )
        )
