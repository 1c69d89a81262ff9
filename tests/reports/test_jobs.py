"""Export jobs: sent to the queue only once their row is committed (a worker that takes
the task at once must find the job); failed with their reason once their worker is lost;
served only whole."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from unittest import mock

import psycopg
import pytest
from django.db import connection, transaction
from django.utils import timezone

from config.celery import app as celery_app
from reports import jobs
from reports.exports import export_jsonl
from reports.models import ExportJob
from reports.tasks import export_study
from tests.conftest import client_for
from tests.integration.conftest import database_url_of_test_db


def test_an_export_job_is_sent_after_its_request_commits(
    hand_study, carol, django_capture_on_commit_callbacks
):
    sent: list[tuple[str, list[int]]] = []
    with mock.patch.object(
        celery_app, "send_task", side_effect=lambda name, args: sent.append((name, args))
    ):
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            response = client_for(carol).post(
                f"/api/admin/studies/{hand_study.pk}/exports/", {"format": "csv"}, format="json"
            )
            assert response.status_code == 201, response.content
            assert sent == [], "sent inside the transaction that creates its row"
        for callback in callbacks:
            callback()
    assert sent == [(export_study.name, [response.json()["id"]])]


@pytest.mark.integration
def test_the_job_row_is_visible_to_another_connection_when_the_task_is_sent(
    postgres, hand_study, carol
):
    seen: list[tuple[int, bool]] = []

    def send(name: str, args: list[int]) -> None:
        # What a worker would see at this instant: its own connection, not ours.
        with psycopg.connect(database_url_of_test_db(), autocommit=True) as other:
            row = other.execute("SELECT 1 FROM reports_exportjob WHERE id = %s", args)
            seen.append((args[0], row.fetchone() is not None))

    with (
        mock.patch.object(celery_app, "send_task", side_effect=send),
        transaction.atomic(),  # a caller's transaction, as a view or command may hold
    ):
        job = jobs.export_job_create(study=hand_study, fmt="jsonl", created_by=carol)
        assert connection.in_atomic_block
    assert seen == [(job.pk, True)]
    assert ExportJob.objects.get(pk=job.pk).status == ExportJob.Status.QUEUED


def _running_job(study, *, heartbeat_age_s: float) -> ExportJob:
    beat = timezone.now() - timedelta(seconds=heartbeat_age_s)
    return ExportJob.objects.create(
        study=study, format="jsonl", status="running", started_at=beat, heartbeat_at=beat
    )


def test_a_running_job_whose_heartbeat_stopped_is_failed_with_its_reason(
    hand_study, carol, settings
):
    settings.EXPORT_STALE_SECONDS = 60
    alive = _running_job(hand_study, heartbeat_age_s=59)
    lost = _running_job(hand_study, heartbeat_age_s=61)
    client = client_for(carol)

    assert client.get(f"/api/admin/exports/{alive.pk}/").json()["status"] == "running"
    download = client.get(f"/api/admin/exports/{alive.pk}/download")
    assert (download.status_code, download.json()) == (
        409,
        {"detail": jobs.EXPORT_NOT_FINISHED, "code": "export_unavailable"},
    )

    detail = client.get(f"/api/admin/exports/{lost.pk}/").json()
    assert (detail["status"], detail["error"]) == (
        "failed",
        jobs.EXPORT_WORKER_LOST.format(seconds=60),
    )
    assert detail["finished_at"] is not None
    download = client.get(f"/api/admin/exports/{lost.pk}/download")
    assert download.status_code == 409
    assert download.json()["detail"] == jobs.EXPORT_FAILED.format(error=detail["error"])


def test_a_lost_jobs_old_partial_file_is_removed_and_a_live_writers_is_kept(
    hand_study, carol, settings, tmp_path
):
    settings.DATA_DIR = tmp_path
    settings.EXPORT_STALE_SECONDS = 60
    lost = _running_job(hand_study, heartbeat_age_s=61)
    final = jobs.exports_dir() / jobs.export_job_filename(lost)
    final.parent.mkdir(parents=True)
    old, live = (final.with_name(f".{final.name}.{n}.part") for n in ("old", "live"))
    old.write_text("half")
    live.write_text("half")
    os.utime(old, (time.time() - 61, time.time() - 61))
    jobs.export_job_fail_if_stale(job=lost)
    assert (old.exists(), live.exists()) == (False, True)


def test_a_rerun_of_a_failed_job_writes_the_whole_file_and_counts_its_attempts(
    hand_study, carol, settings, tmp_path
):
    settings.DATA_DIR = tmp_path
    settings.EXPORT_STALE_SECONDS = 60
    job = _running_job(hand_study, heartbeat_age_s=61)
    jobs.export_job_fail_if_stale(job=job)
    export_study(job.pk)  # the broker delivers the task again
    job.refresh_from_db()
    assert (job.status, job.attempts, job.error) == ("done", 1, "")
    download = client_for(carol).get(f"/api/admin/exports/{job.pk}/download")
    assert b"".join(download.streaming_content) == "".join(export_jsonl(study=hand_study)).encode()


def test_a_done_jobs_file_that_changed_size_is_never_served(hand_study, carol, settings, tmp_path):
    settings.DATA_DIR = tmp_path
    job = ExportJob.objects.create(study=hand_study, format="csv")
    export_study(job.pk)
    job.refresh_from_db()
    path = jobs.export_job_path(job)
    assert path is not None and job.file_size == path.stat().st_size
    with path.open("r+b") as f:
        f.truncate(job.file_size // 2)
    download = client_for(carol).get(f"/api/admin/exports/{job.pk}/download")
    assert (download.status_code, download.json()) == (
        404,
        {"detail": jobs.EXPORT_FILE_CHANGED, "code": "not_found"},
    )
    path.unlink()
    download = client_for(carol).get(f"/api/admin/exports/{job.pk}/download")
    assert (download.status_code, download.json()) == (
        404,
        {"detail": jobs.EXPORT_FILE_MISSING, "code": "not_found"},
    )
