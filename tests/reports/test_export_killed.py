"""A real worker process killed with -9 in the middle of writing an export:
no partial file is ever offered for download, the job ends failed with its reason once
its heartbeat is stale, and the task, which the broker never saw finish, runs again on
another worker and writes the whole file."""

from __future__ import annotations

import base64
import hashlib
import time

import pytest

from annotate.models import Study
from bench.reports import build_study
from config.celery import app
from reports import jobs
from reports.exports import export_jsonl
from reports.models import ExportJob
from tests.conftest import client_for

pytestmark = pytest.mark.integration

VISIBILITY_TIMEOUT_S = "3"  # Redis hands an unacknowledged task to another worker after it
# Big enough that writing it takes seconds after its first chunk is on disk: 256 keys a
# layer, 25 prefixes each, 2 annotators (bench/reports.py's builder).
N_KEYS = 4096


def _wait(condition, timeout: float, what: str, worker=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    log = worker.log.read_text()[-4000:] if worker else ""
    raise AssertionError(f"timed out waiting for {what}\n{log}")


def test_a_worker_killed_mid_export_never_offers_a_partial_file_and_the_rerun_completes(
    start_worker, settings, tmp_path, carol
):
    settings.DATA_DIR = tmp_path
    study_id, _ = build_study(N_KEYS, 2)
    study = Study.objects.get(pk=study_id)
    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge("celery")
    env = {"CELERY_VISIBILITY_TIMEOUT": VISIBILITY_TIMEOUT_S}
    first = start_worker(queues=["celery"], data_dir=tmp_path, env=env)
    client = client_for(carol)
    response = client.post(
        f"/api/admin/studies/{study_id}/exports/", {"format": "jsonl"}, format="json"
    )
    assert response.status_code == 201, response.content
    job_id = response.json()["id"]
    exports = tmp_path / "exports"
    final = exports / f"export-{job_id}-bench-reports.jsonl"
    download_url = f"/api/admin/exports/{job_id}/download"

    def partial_growing():
        return [p for p in exports.glob(f".{final.name}.*.part") if p.stat().st_size > 0]

    (partial,) = _wait(partial_growing, 120, "the export to start writing", first)
    first.kill()
    job = ExportJob.objects.get(pk=job_id)
    assert job.status == ExportJob.Status.RUNNING, "the export finished before the kill"
    written = partial.stat().st_size
    assert not final.exists()

    # Its heartbeat is still recent: the job is not finished, and nothing is served.
    download = client.get(download_url)
    assert (download.status_code, download.json()) == (
        409,
        {"detail": jobs.EXPORT_NOT_FINISHED, "code": "export_unavailable"},
    )

    # Time passes with no heartbeat (the limit drops to 0 instead): the job has failed,
    # says why, and its killed writer's partial file is removed, never renamed.
    settings.EXPORT_STALE_SECONDS = 0
    detail = client.get(f"/api/admin/exports/{job_id}/").json()
    assert (detail["status"], detail["download_url"]) == ("failed", None)
    assert detail["error"] == jobs.EXPORT_WORKER_LOST.format(seconds=0)
    download = client.get(download_url)
    assert download.status_code == 409
    assert download.json()["detail"].startswith("This export failed: The export stopped")
    assert not partial.exists() and not final.exists()

    # The broker redelivers the unacknowledged task: a new worker writes the whole file.
    second = start_worker(queues=["celery"], data_dir=tmp_path, env=env)
    _wait(
        lambda: ExportJob.objects.get(pk=job_id).status == ExportJob.Status.DONE,
        240,
        "the rerun to finish",
        second,
    )
    job = ExportJob.objects.get(pk=job_id)
    assert (job.attempts, job.keys_done, job.error) == (2, N_KEYS, "")
    download = client.get(download_url)
    assert download.status_code == 200
    body = b"".join(download.streaming_content)
    assert body == "".join(export_jsonl(study=study)).encode("utf-8")
    assert len(body) == job.file_size > written
    digest = base64.b64encode(hashlib.sha256(body).digest()).decode("ascii")
    assert download["Repr-Digest"] == f"sha-256=:{digest}:"
    assert list(exports.glob("*.part")) == [] and list(exports.glob(".*.part")) == []
