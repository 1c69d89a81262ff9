"""Backup and restore (docs/operations.md, "Backup and restore"), both routes into an
empty database:

- a study exported (``manage.py export --format jsonl``) and imported
  (``manage.py import``) into an empty database gives the same report;
- the database dumped with ``pg_dump -Fc`` and restored with ``pg_restore`` into an empty
  database gives the same report.

The reports on the restored side are computed by ``manage.py report`` in a separate
process whose DATABASE_URL names the restored database (ffkv_faults_restore by default:
FFKV_RESTORE_DB chooses another name)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings as django_settings
from django.core.management import call_command

from annotate.models import Study
from tests.integration.conftest import ROOT, database_url_of_test_db

pytestmark = pytest.mark.integration

EXAMPLE = ROOT / "fixtures" / "example-study.jsonl"
# One per pytest process (make test runs two, which may run both tests at once).
RESTORE_DB = os.environ.get("FFKV_RESTORE_DB", "ffkv_faults_restore") + (
    f"_{django_settings.XDIST_WORKER}" if django_settings.XDIST_WORKER else ""
)
# What an import gives anew by design: database ids.
VOLATILE = {"id", "study_id"}


def _server_url() -> str:
    return database_url_of_test_db().rsplit("/", 1)[0]


def _empty_database() -> str:
    with psycopg.connect(_server_url() + "/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{RESTORE_DB}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{RESTORE_DB}"')
    return f"{_server_url()}/{RESTORE_DB}"


def _manage(database_url: str, data_dir: Path, *args: str) -> str:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "FFKV_DATA_DIR": str(data_dir),
    }
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _report_here(study: Study, out: Path) -> dict[str, Any]:
    call_command("report", "--study", study.name, "--out", str(out))
    return json.loads((out / "report.json").read_text())


def _report_there(database_url: str, name: str, out: Path) -> dict[str, Any]:
    _manage(database_url, out.parent, "report", "--study", name, "--out", str(out))
    return json.loads((out / "report.json").read_text())


def _without(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


@pytest.fixture
def study(postgres, settings, tmp_path) -> Study:
    settings.DATA_DIR = tmp_path / "data"
    call_command("import", str(EXAMPLE))
    return Study.objects.get()


def test_a_study_exported_and_imported_into_an_empty_database_gives_the_same_report(
    study, tmp_path
):
    before = _report_here(study, tmp_path / "before")
    export = tmp_path / "study.jsonl"
    call_command("export", "--study", study.name, "--format", "jsonl", "--out", str(export))

    restored = _empty_database()
    _manage(restored, tmp_path, "migrate", "--noinput")
    _manage(restored, tmp_path, "import", str(export))
    after = _report_there(restored, study.name, tmp_path / "after")

    assert before["study"]["id"] == study.pk  # the ids differ by design; the rest may not
    assert _without(after, VOLATILE) == _without(before, VOLATILE)
    assert after["coverage"]["overall"]["n_annotations"] > 0


def test_pg_dump_and_pg_restore_into_an_empty_database_give_the_same_report(study, tmp_path):
    for tool in ("pg_dump", "pg_restore"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed (apt-get install postgresql-client)")
    before = _report_here(study, tmp_path / "before")
    dump = tmp_path / "ffkv.dump"
    subprocess.run(
        ["pg_dump", "--format=custom", "--file", str(dump), database_url_of_test_db()],
        check=True,
        timeout=300,
    )

    restored = _empty_database()
    subprocess.run(
        ["pg_restore", "--no-owner", "--exit-on-error", "--dbname", restored, str(dump)],
        check=True,
        timeout=300,
    )
    after = _report_there(restored, study.name, tmp_path / "after")

    # A restore is the same database: the same ids too.
    assert after == before
    # And it is a working one: migrations are all applied, nothing to make.
    _manage(restored, tmp_path, "migrate", "--check", "--noinput")
