"""Export jobs are sent to the queue only once their row is committed (a worker that
takes the task at once must find the job)."""

from __future__ import annotations

from unittest import mock

import psycopg
import pytest
from django.db import connection, transaction

from config.celery import app as celery_app
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
    from reports import jobs

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
