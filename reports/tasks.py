"""Celery tasks: an interface over reports.jobs (ids in, explicit names)."""

from __future__ import annotations

from celery import shared_task
from django.db import DatabaseError

from . import jobs
from .models import ExportJob

RETRY_DELAY_S = 10


@shared_task(name=jobs.EXPORT_TASK, bind=True, max_retries=5)
def export_study(self, job_id: int) -> None:
    job = ExportJob.objects.select_related("study").filter(pk=job_id).first()
    if job is None:
        return
    try:
        jobs.export_job_run(job=job)
    except DatabaseError as exc:
        raise self.retry(exc=exc, countdown=RETRY_DELAY_S) from exc
