"""The reports API: admins only, filters checked, exports streamed, export jobs with
progress, and the JSONL upload."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from unittest import mock

import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotate.imports import ASSIGN_NEEDS_LIVE
from annotate.models import (
    Annotation,
    AnnotationEvent,
    Assignment,
    AssignmentKey,
    Batch,
    Key,
    Study,
)
from config.celery import app as celery_app
from reports.exports import export_jsonl
from reports.models import ExportJob
from reports.tasks import export_study
from tests.conftest import client_for
from tests.errors import field_errors

pytestmark = pytest.mark.django_db


def urls(study_id: int) -> list[tuple[str, str]]:
    return [
        ("get", f"/api/admin/studies/{study_id}/report/"),
        ("get", f"/api/admin/studies/{study_id}/report.csv"),
        ("get", f"/api/studies/{study_id}/export?format=jsonl"),
        ("post", f"/api/admin/studies/{study_id}/exports/"),
        ("get", "/api/admin/exports/1/"),
        ("get", "/api/admin/exports/1/download"),
        ("post", "/api/admin/imports/"),
    ]


@pytest.mark.parametrize("persona", ["anonymous", "alice", "mallory"])
def test_only_admins_reach_the_reports(hand_study, persona, request, api_client):
    client = api_client if persona == "anonymous" else client_for(request.getfixturevalue(persona))
    for method, url in urls(hand_study.pk):
        response = getattr(client, method)(url)
        assert response.status_code == 403, (url, response.content)
        assert "detail" in response.json()


def test_carol_reads_the_report(hand_study, carol):
    response = client_for(carol).get(f"/api/admin/studies/{hand_study.pk}/report/")
    assert response.status_code == 200
    body = response.json()
    assert set(body) >= {
        "figure2",
        "coverage",
        "agreement",
        "pattern_jaccard",
        "value_agreement",
        "value_agreement_every_key",
        "perturbation",
    }
    assert body["figure2"]["pooled"]["layers"][0]["shares"]["shallow_semantic"] == 0.4
    assert body["value_agreement"]["overall"]["next_token"]["n"] == 2
    assert body["value_agreement_every_key"]["reason"] == "not_counted"
    assert body["filters"] == {"annotators": None, "layers": None, "submitted_only": True}


def test_the_report_api_flags_intervals_that_rest_on_few_keys(hand_study, carol):
    body = client_for(carol).get(f"/api/admin/studies/{hand_study.pk}/report/").json()
    agreement = body["agreement"]
    assert agreement["bootstrap_min_keys"] == 10
    # Layer 1 has one key that two annotators share: an interval on one key, flagged.
    alpha = agreement["labels"]["layers"][0]["krippendorff_alpha"]
    assert alpha["low"] is not None
    assert (alpha["n_keys"], alpha["few_keys"]) == (1, True)
    assert agreement["binary"]["overall"]["raw_agreement"]["few_keys"] is True


def test_the_report_api_serves_value_agreement_over_every_key(hand_study, carol):
    hand_study.value_agreement = {
        "format": "ffkv.value-agreement/v1",
        "vocab_size": 100,
        "variants": ["without_final_norm"],
        "final_norm": None,
        "layers": [
            {
                "layer": 1,
                "n_keys": 10,
                "next_end": 1,
                "next_unknown": 2,
                "next_token": {"without_final_norm": 5},
                "trigger_token": {"without_final_norm": 0},
            }
        ],
    }
    hand_study.save()
    body = client_for(carol).get(f"/api/admin/studies/{hand_study.pk}/report/").json()
    every = body["value_agreement_every_key"]
    assert every["applicable"] is True and every["variants"] == ["without_final_norm"]
    (row,) = every["layers"]
    # Only the variant the model has: no with_final_norm key at all.
    assert row["next_token"] == {
        "without_final_norm": {
            "matches": 5,
            "n": 8,
            "rate": 0.625,
            "low": pytest.approx(0.305742, abs=1e-6),
            "high": pytest.approx(0.863156, abs=1e-6),
        }
    }
    assert (row["next_end"], row["next_unknown"]) == (1, 2)
    assert every["random_baseline"] == 0.01
    hand_study.is_causal = False
    hand_study.save()
    body = client_for(carol).get(f"/api/admin/studies/{hand_study.pk}/report/").json()
    assert body["value_agreement_every_key"]["applicable"] is False
    assert body["value_agreement_every_key"]["reason"] == "encoder"
    assert body["value_agreement"]["overall"] is None


def test_report_filters_come_from_the_query_string(hand_study, carol):
    response = client_for(carol).get(
        f"/api/admin/studies/{hand_study.pk}/report/",
        {"annotators": "bob", "layers": "2", "submitted_only": "false"},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["filters"] == {"annotators": ["bob"], "layers": [2], "submitted_only": False}
    assert body["figure2"]["pooled"]["overall"]["shares"]["semantic"] == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"submitted_only": "perhaps"}, "submitted_only"),
        ({"layers": "one"}, "layers"),
        ({"layers": "0"}, "layers"),
        ({"layers": "1,,2"}, "layers"),
        ({"layers": "9"}, "layers"),
        ({"annotators": "nobody"}, "annotators"),
    ],
)
def test_bad_report_filters_are_400(hand_study, carol, query, field):
    client = client_for(carol)
    for suffix in ("report/", "report.csv"):
        response = client.get(f"/api/admin/studies/{hand_study.pk}/{suffix}", query)
        assert response.status_code == 400, (suffix, response.content)
        assert field in field_errors(response)


def test_an_unknown_study_is_404(carol):
    client = client_for(carol)
    assert client.get("/api/admin/studies/999/report/").status_code == 404
    assert client.get("/api/studies/999/export?format=csv").status_code == 404


def test_the_report_csv_downloads(hand_study, carol):
    response = client_for(carol).get(f"/api/admin/studies/{hand_study.pk}/report.csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "hand-study-report.csv" in response["Content-Disposition"]
    assert response.content.decode().startswith("section,view,layer,annotator,metric")


def test_the_report_csv_neutralises_formula_cells_and_keeps_numbers(formula_study, carol):
    start, study = formula_study
    response = client_for(carol).get(f"/api/admin/studies/{study.pk}/report.csv")
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    annotators = {r["annotator"] for r in rows} - {""}
    assert annotators == {f"'{start}eve", f"'{start}zed", f"'{start}eve|{start}zed"}
    # eve and zed disagree everywhere: negative numbers, written as numbers.
    negative = [r for r in rows if r["section"] == "agreement" and r["value"].startswith("-")]
    assert negative and all(float(r["value"]) < 0 for r in negative)
    for row in rows:
        for column in ("value", "low", "high", "n"):
            assert not row[column].startswith("'"), (column, row[column])


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_the_export_streams_each_format(hand_study, carol):
    client = client_for(carol)
    jsonl = client.get(f"/api/studies/{hand_study.pk}/export", {"format": "jsonl"})
    assert jsonl.status_code == 200 and jsonl.streaming
    assert jsonl["Content-Disposition"] == 'attachment; filename="hand-study.jsonl"'
    assert _body(jsonl).decode() == "".join(export_jsonl(study=hand_study))
    csv = client.get(f"/api/studies/{hand_study.pk}/export", {"format": "csv"})
    assert csv.streaming and csv["Content-Type"] == "application/zip"
    assert csv["Content-Disposition"] == 'attachment; filename="hand-study.csv.zip"'
    tables = _unzip(_body(csv))
    assert list(tables) == ["labels.csv", "patterns.csv", "flags.csv", "examples.csv"]
    assert tables["labels.csv"].decode().count("\n") == 1 + 20
    assert tables["patterns.csv"].decode().count("\n") == 1 + 5  # 4 patterns, 1 empty
    parquet = client.get(f"/api/studies/{hand_study.pk}/export", {"format": "parquet"})
    assert parquet.status_code == 200 and parquet["Content-Type"] == "application/zip"
    assert 'filename="hand-study.parquet.zip"' in parquet["Content-Disposition"]
    tables = _unzip(_body(parquet))
    assert pq.read_table(io.BytesIO(tables["labels.parquet"])).num_rows == 20
    assert pq.read_table(io.BytesIO(tables["patterns.parquet"])).num_rows == 5


def _unzip(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.mark.parametrize("query", [{}, {"format": "xml"}, {"format": "csv", "layers": "x"}])
def test_a_bad_export_format_is_400(hand_study, carol, query):
    response = client_for(carol).get(f"/api/studies/{hand_study.pk}/export", query)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"


def test_an_export_job_runs_and_its_file_downloads(
    hand_study, carol, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.DATA_DIR = tmp_path
    client = client_for(carol)
    with (
        mock.patch.object(celery_app, "send_task") as send,
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = client.post(
            f"/api/admin/studies/{hand_study.pk}/exports/", {"format": "jsonl"}, format="json"
        )
    assert response.status_code == 201, response.content
    job = response.json()
    assert (job["status"], job["progress"], job["download_url"]) == ("queued", 0.0, None)
    send.assert_called_once_with(export_study.name, args=[job["id"]])
    assert client.get(f"/api/admin/exports/{job['id']}/download").status_code == 409

    export_study(job["id"])  # what the worker runs, in this process

    done = client.get(f"/api/admin/exports/{job['id']}/").json()
    assert done["status"] == "done"
    assert (done["progress"], done["keys_done"], done["keys_total"]) == (1.0, 2, 2)
    assert done["download_url"] == f"/api/admin/exports/{job['id']}/download"
    download = client.get(done["download_url"])
    assert download.status_code == 200
    assert _body(download).decode() == "".join(export_jsonl(study=hand_study))
    assert 'filename="hand-study.jsonl"' in download["Content-Disposition"]


def test_an_export_job_that_fails_says_why(hand_study, carol, settings, tmp_path, monkeypatch):
    from reports import jobs

    settings.DATA_DIR = tmp_path
    job = ExportJob.objects.create(study=hand_study, format="csv")

    def broken(**kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(jobs, "export_to_file", broken)
    export_study(job.pk)
    job.refresh_from_db()
    assert (job.status, job.error) == ("failed", "disk full")
    download = client_for(carol).get(f"/api/admin/exports/{job.pk}/download")
    assert download.status_code == 409
    assert download.json() == {
        "detail": "This export failed: disk full",
        "code": "export_unavailable",
    }


def test_an_export_job_needs_a_known_format(hand_study, carol):
    response = client_for(carol).post(
        f"/api/admin/studies/{hand_study.pk}/exports/", {"format": "xlsx"}, format="json"
    )
    assert response.status_code == 400
    assert "format" in field_errors(response)


def _upload(text: str, name: str = "in.jsonl") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode("utf-8"), content_type="application/jsonl")


def test_carol_uploads_an_export_into_a_new_study(hand_study, carol):
    text = "".join(export_jsonl(study=hand_study))
    response = client_for(carol).post(
        "/api/admin/imports/", {"file": _upload(text), "study_name": "uploaded"}, format="multipart"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["study_name"] == "uploaded"
    assert (body["keys"], body["annotations"], body["users_created"]) == (2, 4, [])
    assert Study.objects.get(name="uploaded").created_by == carol


def test_a_bad_upload_is_400_with_every_error_and_writes_nothing(hand_study, carol):
    lines = "".join(export_jsonl(study=hand_study)).splitlines()
    text = "\n".join([lines[0].replace("hand study", "x"), "not json"]) + "\n"
    before = Study.objects.count()
    response = client_for(carol).post(
        "/api/admin/imports/", {"file": _upload(text)}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json() == {
        "detail": "line 2: not valid JSON",
        "code": "import_refused",
        "errors": ["line 2: not valid JSON"],
    }
    assert Study.objects.count() == before


def test_an_upload_without_a_file_is_400_with_its_error_listed(carol):
    response = client_for(carol).post("/api/admin/imports/", {}, format="multipart")
    assert response.status_code == 400
    # The documented ImportErrors, as for a bad line, so the form lists it.
    assert response.json() == {
        "detail": "file: No file was submitted.",
        "code": "import_refused",
        "errors": ["file: No file was submitted."],
    }
    as_json = client_for(carol).post(
        "/api/admin/imports/", json.dumps({"file": "x"}), content_type="application/json"
    )
    assert as_json.status_code == 415


def test_an_upload_that_is_no_readable_form_is_400_with_its_error_listed(carol):
    response = client_for(carol).generic(
        "POST", "/api/admin/imports/", b"garbage", content_type="multipart/form-data"
    )
    assert response.status_code == 400
    message = "Multipart form parse error - Invalid boundary in multipart: None"
    assert response.json() == {"detail": message, "code": "import_refused", "errors": [message]}


def test_an_upload_with_lone_surrogates_is_400_naming_each_and_writes_nothing(hand_study, carol):
    # JSON can escape a lone surrogate; no database column can store one, and an error
    # that echoed it made the answer itself unencodable (both were 500s).
    line = json.loads("".join(export_jsonl(study=hand_study)).splitlines()[0])
    line["prefixes"][0]["text"] = "x\ud800"
    line["key"]["c\udc00"] = 1
    before = Study.objects.count()
    response = client_for(carol).post(
        "/api/admin/imports/",
        {"file": _upload(json.dumps(line) + "\n"), "study_name": "s"},
        format="multipart",
    )
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == ["line 1: key.c\\udc00: unknown field"]
    del line["key"]["c\udc00"]
    response = client_for(carol).post(
        "/api/admin/imports/",
        {"file": _upload(json.dumps(line) + "\n"), "study_name": "s"},
        format="multipart",
    )
    assert response.status_code == 400, response.content
    assert response.json()["errors"] == [
        "line 1: prefixes[0].text: must not contain a lone surrogate (\\ud800-\\udfff)"
    ]
    assert Study.objects.count() == before


def test_an_export_job_with_a_lone_surrogate_for_format_is_a_400(hand_study, carol):
    response = client_for(carol).post(
        f"/api/admin/studies/{hand_study.pk}/exports/",
        data='{"format": "x\\ud800"}',
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert field_errors(response) == {"format": ['"x\\ud800" is not a valid choice.']}
    assert not ExportJob.objects.exists()


@pytest.mark.django_db(transaction=True)  # the request commits: its task is sent then
def test_an_export_job_with_the_queue_down_is_a_503_and_fails(hand_study, carol):
    from kombu.exceptions import OperationalError

    from reports.models import ExportJob

    with mock.patch.object(celery_app, "send_task", side_effect=OperationalError("down")):
        response = client_for(carol).post(
            f"/api/admin/studies/{hand_study.pk}/exports/", {"format": "csv"}, format="json"
        )
    assert response.status_code == 503
    assert "unavailable" in response.json()["detail"]
    assert ExportJob.objects.get().status == ExportJob.Status.FAILED


# --- an import is archived unless made live -------------------------------------------


def _import(carol, text: str, **fields):
    return client_for(carol).post(
        "/api/admin/imports/", {"file": _upload(text), **fields}, format="multipart"
    )


def _hand_copy(hand_study, name: str = "copy") -> str:
    return "".join(export_jsonl(study=hand_study)).replace('"hand study"', f'"{name}"')


def test_an_upload_makes_an_archived_study_that_annotators_never_see(hand_study, carol, alice):
    response = _import(carol, _hand_copy(hand_study))
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["archived"], body["assignments"]) == (True, 0)
    study = Study.objects.get(pk=body["study_id"])
    assert study.archived and not Assignment.objects.filter(batch__study=study).exists()
    listed = client_for(carol).get("/api/admin/studies/").json()
    assert [s["archived"] for s in listed if s["id"] == study.pk] == [True]

    # alice's imported work is in the copy; she sees none of it, even if an assignment
    # to it were made behind the services' back (the Django admin, a script).
    key = Key.objects.get(study=study, layer=1)
    assert Annotation.objects.filter(key=key, annotator=alice).exists()
    assignment = Assignment.objects.create(batch=Batch.objects.get(study=study), annotator=alice)
    AssignmentKey.objects.create(assignment=assignment, key=key)
    client = client_for(alice)
    assert client.get("/api/assignments/").json() == []
    assert client.get("/api/next-key/").status_code == 204
    assert client.get(f"/api/assignments/{assignment.pk}/keys/").status_code == 404
    assert client.get(f"/api/keys/{key.pk}/").status_code == 404
    assert client.get(f"/api/keys/{key.pk}/annotation/").status_code == 404
    version = Annotation.objects.get(key=key, annotator=alice).version
    writes = [
        ("put", f"/api/keys/{key.pk}/annotation/", {"note": "mine", "version": version}),
        (
            "post",
            f"/api/keys/{key.pk}/patterns/",
            {"description": "d", "kind": "shallow", "prefix_ranks": [1, 2, 3], "version": version},
        ),
        ("post", f"/api/keys/{key.pk}/reopen/", {"version": version}),
        ("post", f"/api/keys/{key.pk}/submit/", {"version": version}),
    ]
    before = list(AnnotationEvent.objects.values_list("id", flat=True))
    for method, url, data in writes:
        response = getattr(client, method)(url, data, format="json")
        assert response.status_code == 404, (url, response.content)
    assert list(AnnotationEvent.objects.values_list("id", flat=True)) == before

    # And the admin cannot add work to it: no batch, no assignment.
    made = client_for(carol).post(
        f"/api/admin/studies/{study.pk}/batches/",
        {"name": "more", "mode": "layer", "layers": [1]},
        format="json",
    )
    assert made.status_code == 400
    assert "archived" in json.dumps(made.json())
    given = client_for(carol).post(
        f"/api/admin/batches/{Batch.objects.get(study=study).pk}/assignments/",
        {"annotators": [alice.username], "overlap": 1},
        format="json",
    )
    assert given.status_code == 400
    assert "archived" in json.dumps(given.json())


def test_a_live_upload_gives_work_back_only_when_asked(hand_study, carol, alice):
    live = _import(carol, _hand_copy(hand_study, "live"), live="true").json()
    assert (live["archived"], live["assignments"]) == (False, 0)
    assert client_for(alice).get("/api/assignments/").json() == []

    assigned = _import(carol, _hand_copy(hand_study, "assigned"), live="true", assign="true")
    assert assigned.status_code == 201, assigned.content
    assert (assigned.json()["archived"], assigned.json()["assignments"]) == (False, 2)
    mine = client_for(alice).get("/api/assignments/").json()
    assert [(a["batch_name"], a["study_name"]) for a in mine] == [("imported", "assigned")]

    refused = _import(carol, _hand_copy(hand_study, "nope"), assign="true")
    assert refused.status_code == 400
    assert refused.json()["errors"] == [f"assign: {ASSIGN_NEEDS_LIVE}"]
    assert not Study.objects.filter(name="nope").exists()


def test_a_taken_name_is_refused_in_the_apis_own_words(hand_study, carol):
    response = _import(carol, "".join(export_jsonl(study=hand_study)))
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "study_name_taken"
    assert body["errors"] == ["A study named 'hand study' already exists; send another study_name."]
    assert "--study-name" not in json.dumps(body)


def test_a_csv_upload_is_one_error_saying_it_is_not_jsonl(hand_study, carol):
    from reports.exports import export_csv

    labels = _unzip(b"".join(export_csv(study=hand_study)))["labels.csv"].decode()
    response = _import(carol, labels, study_name="from csv")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "not_jsonl"
    assert len(body["errors"]) == 1
    assert body["detail"].startswith(
        "This is not a JSONL file: its first line is not a JSON object."
    )
