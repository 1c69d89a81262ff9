"""Reads of export jobs."""

from __future__ import annotations

from ..models import ExportJob


def export_job_get(*, job_id: int) -> ExportJob | None:
    return ExportJob.objects.select_related("study").filter(pk=job_id).first()
