"""Importing an export from the studies screen (docs/data-format.md, "Import"): the new
study is archived, out of every annotator's sight, unless carol makes it live; a taken
name and a file that is no JSONL export are said in the form's words."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotate.models import Key, Study
from reports.exports import export_csv, export_jsonl
from tests.e2e.conftest import log_in
from tests.e2e.helpers import patient_expect  # noqa: F401 (an autouse fixture)
from tests.factories import PASSWORD, StudyFactory, annotate_key, assigned_batch

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def field_study(alice):
    """alice's own batch "field work" of a study she annotated one key of."""
    study = StudyFactory(name="field study", d_ff=1_000_000)  # factory indexes grow
    _, keys = assigned_batch([alice], n_keys=2, n_prefixes=5, study=study, name="field work")
    annotate_key(keys[0], alice, [("shallow", [1, 2, 3])])
    return study


def _jsonl(study, tmp_path):
    path = tmp_path / "field-study.jsonl"
    path.write_text("".join(export_jsonl(study=study)), encoding="utf-8")
    return path


def _import(page, path, name: str = "") -> None:
    form = page.get_by_test_id("import-form")
    form.get_by_label("JSONL file").set_input_files(str(path))
    form.get_by_label("Name of the new study (optional)").fill(name)
    form.get_by_role("button", name="Import").click()


def test_carol_imports_from_the_studies_screen_and_alice_never_sees_the_copy(
    page, browser, live_server, carol, alice, field_study, tmp_path
):
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))
    _import(page, _jsonl(field_study, tmp_path), "field copy")
    result = page.get_by_test_id("import-result")
    expect(result).to_contain_text("Imported field copy: 2 keys, 1 annotations")
    expect(result).to_contain_text("It is archived: read-only, and no annotator sees it.")
    row = page.get_by_test_id("studies").get_by_role("row", name=re.compile("field copy"))
    expect(row).to_contain_text("archived (read-only)")
    # The study's page says so, and offers no batch form.
    result.get_by_role("link", name="Open the study").click()
    expect(page.get_by_test_id("archived-notice")).to_be_visible()
    expect(page.get_by_role("heading", name="New batch")).to_have_count(0)

    copy = Study.objects.get(name="field copy")
    imported_key = Key.objects.filter(study=copy).order_by("index").first()
    context = browser.new_context(base_url=live_server.url, locale="en-US")
    try:
        alice_page = context.new_page()
        alice_page.set_default_timeout(15_000)
        log_in(alice_page, "alice", PASSWORD)
        expect(alice_page.get_by_role("heading", name="My assignments")).to_be_visible()
        # Her own batch is there; nothing of the import is.
        expect(alice_page.get_by_text("field work")).to_be_visible()
        expect(alice_page.get_by_text("imported")).to_have_count(0)
        expect(alice_page.get_by_text("field copy")).to_have_count(0)
        # Nor can she open an imported key by its address.
        alice_page.goto(f"/keys/{imported_key.pk}")
        expect(alice_page.get_by_role("alert")).to_be_visible()
        expect(alice_page.get_by_role("button", name=re.compile("Submit"))).to_have_count(0)
    finally:
        context.close()


def test_a_taken_name_and_a_csv_are_said_in_the_forms_words(page, carol, field_study, tmp_path):
    log_in(page, "carol", PASSWORD)
    expect(page).to_have_url(re.compile(r"/manage$"))
    jsonl = _jsonl(field_study, tmp_path)

    # The file's own study name is taken: the form asks for another, in its words.
    _import(page, jsonl)
    taken = page.get_by_role("alert")
    expect(taken).to_have_text(
        "A study with the file's name already exists. Type another name above and import again."
    )
    name = page.get_by_label("Name of the new study (optional)")
    expect(name).to_be_focused()
    # A name that is taken too: named in the message.
    _import(page, jsonl, "field study")
    expect(page.get_by_role("alert")).to_have_text(
        "A study named “field study” already exists. Type another name above and import again."
    )
    expect(page.get_by_text("--study-name")).to_have_count(0)
    _import(page, jsonl, "field study 2")
    expect(page.get_by_test_id("import-result")).to_contain_text("Imported field study 2")

    # A CSV export (a zip of two tables), and a bare CSV table: one clear message each.
    zipped = tmp_path / "field-study.csv.zip"
    zipped.write_bytes(b"".join(export_csv(study=field_study)))
    bare = tmp_path / "labels.csv"
    bare.write_text("study,layer,index,rank\r\n" + "field study,1,0,1\r\n" * 30)
    for path in (zipped, bare):
        _import(page, path, "from csv")
        alert = page.get_by_role("alert")
        expect(alert).to_have_text(
            "This is not a JSONL file. Import takes a JSONL export (one JSON object per "
            "line); CSV and Parquet exports cannot be imported."
        )
        expect(page.get_by_text("not valid JSON")).to_have_count(0)
        expect(page.get_by_test_id("import-errors")).to_have_count(0)
    assert not Study.objects.filter(name="from csv").exists()


def test_an_import_from_the_command_line_never_reaches_alices_queue(
    page, alice, field_study, tmp_path
):
    # `manage.py import` without --live: alice's own work is in the file, and before
    # this issue she found an "imported" batch of editable copies in her queue.
    from django.core.management import call_command

    call_command("import", str(_jsonl(field_study, tmp_path)), "--study-name", "field copy")
    log_in(page, "alice", PASSWORD)
    expect(page.get_by_role("heading", name="My assignments")).to_be_visible()
    expect(page.get_by_text("field work")).to_be_visible()
    expect(page.get_by_text("imported")).to_have_count(0)
    expect(page.get_by_text("field copy")).to_have_count(0)
