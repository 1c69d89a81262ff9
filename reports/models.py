"""Export jobs: a study written to a file by a Celery worker, followed from the browser."""

from __future__ import annotations

from django.db import models

from annotate.models import Study, StudyJob


class ExportJob(StudyJob):
    """One export of a study in one format. ``file_path`` is relative to
    ``settings.DATA_DIR / "exports"`` and set once the file is complete, with the
    ``file_size`` and ``file_sha256`` it was completed with. A running job's worker
    touches ``heartbeat_at`` after every chunk of keys: a job that stays running without
    it lost its worker (``reports.jobs.export_job_fail_if_stale``)."""

    class Format(models.TextChoices):
        JSONL = "jsonl", "jsonl"
        CSV = "csv", "csv"
        PARQUET = "parquet", "parquet"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="export_jobs")
    format = models.CharField(max_length=10, choices=Format.choices)
    progress = models.FloatField(default=0.0, help_text="0..1: keys written / keys to write.")
    keys_done = models.PositiveIntegerField(default=0)
    keys_total = models.PositiveIntegerField(default=0)
    file_path = models.CharField(max_length=500, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="Runs started (redeliveries).")
    file_size = models.BigIntegerField(null=True, blank=True)
    file_sha256 = models.CharField(max_length=64, blank=True)

    class Meta(StudyJob.Meta):
        constraints = [
            models.CheckConstraint(
                condition=models.Q(progress__gte=0.0) & models.Q(progress__lte=1.0),
                name="export_job_progress_in_0_1",
            ),
        ]

    def __str__(self) -> str:
        return f"export {self.pk} of {self.study_id} ({self.format}, {self.status})"
