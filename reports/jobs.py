"""Export jobs (docs/data-format.md, "Getting a study out and in"): a study written to a
file by a Celery worker, followed from the browser, and downloaded once complete.

The job's row is created in the caller's transaction and its task is sent only once that
transaction commits (``transaction.on_commit``), so that a worker that takes the task at
once finds the row. The task is sent by its name, ``EXPORT_TASK``: ``reports.tasks``
imports this module, never the reverse.

A worker killed mid-export (docs/reliability.md, "What is guaranteed") leaves the job
running with a heartbeat that no longer moves and, beside the exports, its temporary
``.part`` file, never a file under the final name (``exports.export_to_file``). Reading
such a job (its detail, its download) marks it failed once the heartbeat is older than
``settings.EXPORT_STALE_SECONDS``; the broker, which was never told the task finished
(late acknowledgement), delivers it again, and the rerun writes the whole file anew. A
download is served only for a done job whose file has the size it was completed with.
"""

from __future__ import annotations

import functools
import logging
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import F, Q
from django.utils import timezone
from kombu.exceptions import OperationalError as KombuOperationalError

from annotate.models import Study

from .exports import FORMATS, UNKNOWN_FORMAT, export_filename, export_to_file, partial_files
from .models import ExportJob
from .selectors.export_records import export_key_count

logger = logging.getLogger(__name__)

EXPORT_TASK = "reports.export_study"

EXPORT_NOT_FINISHED = "This export is not finished."
EXPORT_FAILED = "This export failed: {error}"
EXPORT_FILE_MISSING = "The file of this export is gone; start a new export."
EXPORT_FILE_CHANGED = (
    "The file of this export is not the one it completed (its size differs); start a new export."
)
EXPORT_WORKER_LOST = (
    "The export stopped: its worker sent no progress for {seconds} s (killed or lost). "
    "Start a new export."
)
QUEUE_UNAVAILABLE = "The task queue is unavailable; the export was not started."


class ExportUnavailable(Exception):
    """The job has no file to download: ``conflict`` (409) while it is not done or has
    failed, else (404) its file is gone or not the one it completed."""

    def __init__(self, message: str, *, conflict: bool) -> None:
        super().__init__(message)
        self.message = message
        self.conflict = conflict


def exports_dir() -> Path:
    return Path(settings.DATA_DIR) / "exports"


def export_job_filename(job: ExportJob) -> str:
    return f"export-{job.pk}-{export_filename(study=job.study, fmt=job.format)}"


def export_job_path(job: ExportJob) -> Path | None:
    return exports_dir() / job.file_path if job.file_path else None


def export_job_create(*, study: Study, fmt: str, created_by: Any = None) -> ExportJob:
    """Create the job; its task is sent once the caller's transaction commits (at once
    outside one). When the broker cannot be reached the job is marked failed (so it never
    waits forever) and the broker's error is raised from the commit."""
    if fmt not in FORMATS:
        raise ValueError(UNKNOWN_FORMAT)
    job = ExportJob.objects.create(
        study=study, format=fmt, created_by=created_by, keys_total=export_key_count(study=study)
    )
    transaction.on_commit(functools.partial(_send, job.pk))
    return job


def _send(job_id: int) -> None:
    try:
        current_app.send_task(EXPORT_TASK, args=[job_id])
    except KombuOperationalError:
        ExportJob.objects.filter(pk=job_id).update(
            status=ExportJob.Status.FAILED, error=QUEUE_UNAVAILABLE, finished_at=timezone.now()
        )
        raise


def _remove_stale_partials(job: ExportJob) -> None:
    """The ``.part`` files of this job's killed writers. A live writer writes after every
    chunk of keys, so a file untouched for ``EXPORT_STALE_SECONDS`` has no writer."""
    cutoff = time.time() - settings.EXPORT_STALE_SECONDS
    for partial in partial_files(exports_dir() / export_job_filename(job)):
        try:
            if partial.stat().st_mtime < cutoff:
                partial.unlink()
        except FileNotFoundError:
            pass


def export_job_run(*, job: ExportJob) -> ExportJob:
    """Write the job's file, recording progress and a heartbeat as keys are written. A
    rerun (the task delivered again after its worker died) writes the file again from
    the start: the result is the same."""
    if job.status == ExportJob.Status.DONE:
        return job
    _remove_stale_partials(job)
    total = export_key_count(study=job.study)
    now = timezone.now()
    ExportJob.objects.filter(pk=job.pk).update(
        status=ExportJob.Status.RUNNING,
        started_at=now,
        heartbeat_at=now,
        finished_at=None,
        attempts=F("attempts") + 1,
        keys_total=total,
        keys_done=0,
        progress=0.0,
        error="",
    )

    def progress(done: int) -> None:
        ExportJob.objects.filter(pk=job.pk).update(
            keys_done=done,
            progress=min(1.0, done / total) if total else 1.0,
            heartbeat_at=timezone.now(),
        )

    name = export_job_filename(job)
    try:
        written = export_to_file(
            study=job.study, fmt=job.format, path=exports_dir() / name, progress=progress
        )
    except DatabaseError:
        raise  # the task retries: the database may be back in a moment (docs/reliability.md)
    except Exception as exc:
        logger.exception("export job %s failed", job.pk)
        ExportJob.objects.filter(pk=job.pk).update(
            status=ExportJob.Status.FAILED, error=str(exc)[:2000], finished_at=timezone.now()
        )
        job.refresh_from_db()
        return job
    ExportJob.objects.filter(pk=job.pk).update(
        status=ExportJob.Status.DONE,
        progress=1.0,
        keys_done=total,
        file_path=name,
        file_size=written.size,
        file_sha256=written.sha256,
        error="",
        finished_at=timezone.now(),
    )
    job.refresh_from_db()
    return job


def export_job_fail_if_stale(*, job: ExportJob) -> ExportJob:
    """Mark a running job failed when its heartbeat is older than
    ``settings.EXPORT_STALE_SECONDS``: its worker was killed or lost. One conditional
    UPDATE, so a job that moved on meanwhile (a heartbeat, done) is left as it is."""
    if job.status != ExportJob.Status.RUNNING:
        return job
    seconds = settings.EXPORT_STALE_SECONDS
    cutoff = timezone.now() - timedelta(seconds=seconds)
    marked = (
        ExportJob.objects.filter(pk=job.pk, status=ExportJob.Status.RUNNING)
        .filter(Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True))
        .update(
            status=ExportJob.Status.FAILED,
            error=EXPORT_WORKER_LOST.format(seconds=seconds),
            finished_at=timezone.now(),
        )
    )
    if marked:
        logger.warning("export job %s lost its worker: marked failed", job.pk)
        _remove_stale_partials(job)
        job.refresh_from_db()
    return job


def export_job_file(*, job: ExportJob) -> Path:
    """The complete file of a done job, or ``ExportUnavailable`` saying why there is none.
    Never a partial file: a done job's file was renamed into place whole, and its size
    must still be the size it was completed with."""
    job = export_job_fail_if_stale(job=job)
    if job.status == ExportJob.Status.FAILED:
        raise ExportUnavailable(EXPORT_FAILED.format(error=job.error), conflict=True)
    if job.status != ExportJob.Status.DONE:
        raise ExportUnavailable(EXPORT_NOT_FINISHED, conflict=True)
    path = export_job_path(job)
    if path is None or not path.is_file():
        raise ExportUnavailable(EXPORT_FILE_MISSING, conflict=False)
    if job.file_size is not None and path.stat().st_size != job.file_size:
        raise ExportUnavailable(EXPORT_FILE_CHANGED, conflict=False)
    return path
