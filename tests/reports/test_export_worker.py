"""An export job through a real Celery worker process (PostgreSQL + Redis)."""

from __future__ import annotations

import time

import pytest

from reports.exports import export_jsonl
from reports.models import ExportJob
from tests.conftest import client_for

pytestmark = pytest.mark.integration


def test_a_real_worker_runs_an_export_job(start_worker, hand_study, carol, settings, tmp_path):
    settings.DATA_DIR = tmp_path
    worker = start_worker(queues=["celery"], data_dir=tmp_path)
    client = client_for(carol)
    response = client.post(
        f"/api/admin/studies/{hand_study.pk}/exports/", {"format": "jsonl"}, format="json"
    )
    assert response.status_code == 201, response.content
    job_id = response.json()["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = ExportJob.objects.get(pk=job_id)
        if job.status in (ExportJob.Status.DONE, ExportJob.Status.FAILED):
            break
        time.sleep(0.2)
    assert job.status == ExportJob.Status.DONE, (job.error, worker.log.read_text()[-3000:])
    download = client.get(f"/api/admin/exports/{job_id}/download")
    assert b"".join(download.streaming_content).decode() == "".join(export_jsonl(study=hand_study))
