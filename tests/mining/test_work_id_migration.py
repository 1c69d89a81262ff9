"""Runs recorded before work ids existed each get their own random one."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("mining", "0001_initial")]
AFTER = [("mining", "0004_miningrun_work_id_unique")]


@pytest.mark.django_db(transaction=True)
def test_existing_runs_get_distinct_random_work_ids():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old_run = executor.loader.project_state(BEFORE).apps.get_model("mining", "MiningRun")
    for name in ("a", "b", "c"):
        old_run.objects.create(study_name=name, params={"model": "m", "corpus": "c"})

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(AFTER)

    new_run = executor.loader.project_state(AFTER).apps.get_model("mining", "MiningRun")
    work_ids = list(new_run.objects.values_list("work_id", flat=True))
    assert len(work_ids) == 3
    assert len(set(work_ids)) == 3
    assert all(re.fullmatch(r"[0-9a-f]{32}", work_id) for work_id in work_ids)
